/*
 * arena.h - bump allocation owned by one object.
 *
 * Each loaded Kubernetes object (a pod, a node, a configuration) owns one arena that
 * holds all of its arrays and strings, so the object is freed in one call and nothing
 * inside it has a separate owner. Not thread-safe: an arena belongs to the thread that
 * builds its object; once built the object is read-only.
 */
#ifndef KSCHED_ARENA_H
#define KSCHED_ARENA_H

#include <stddef.h>
#include <stdint.h>

struct ks_arena_block;

struct ks_arena {
    struct ks_arena_block *head; /* newest block first */
    size_t used;                 /* bytes used in head */
    size_t cap;                  /* capacity of head */
    size_t total;                /* bytes obtained from malloc, for accounting */
};

/* A zeroed struct ks_arena is a valid empty arena. */
#define KS_ARENA_INIT                                                                                        \
    {                                                                                                        \
        0                                                                                                    \
    }

/* ks_arena_alloc - @size zeroed bytes aligned to 16, or NULL when out of memory. */
void *ks_arena_alloc(struct ks_arena *a, size_t size);

/* ks_arena_calloc - @n * @size zeroed bytes, NULL on overflow or out of memory. */
void *ks_arena_calloc(struct ks_arena *a, size_t n, size_t size);

/* ks_arena_strndup - copy of @len bytes of @s plus a NUL, or NULL when out of memory. */
char *ks_arena_strndup(struct ks_arena *a, const char *s, size_t len);

/* ks_arena_strdup - copy of the NUL-terminated @s (NULL stays NULL). */
char *ks_arena_strdup(struct ks_arena *a, const char *s);

/*
 * ks_arena_reset - forget every allocation but keep the newest block for reuse, so an
 * arena reset once per scheduling cycle stops calling malloc once it has grown enough.
 */
void ks_arena_reset(struct ks_arena *a);

/* ks_arena_destroy - free every block; the arena is empty again afterwards. Accepts NULL. */
void ks_arena_destroy(struct ks_arena *a);

/*
 * ks_reserve - make room for @need elements of @size bytes in the heap array *@items (capacity
 * *@cap, doubled as it grows). Returns 0 or -ENOMEM (the array is unchanged then). Never shrinks.
 */
int ks_reserve(void **items, uint32_t *cap, uint64_t need, size_t size);

#define KS_RESERVE(arr, cap, need) ks_reserve((void **)&(arr), &(cap), (need), sizeof(*(arr)))

#endif
