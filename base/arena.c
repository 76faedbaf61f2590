/*
 * arena.c - chained bump allocator (see include/ksched/base/arena.h).
 *
 * Blocks grow geometrically from 1 KiB to 64 KiB; a request larger than a block gets a
 * block of its own. Invariant: head->data[0..used) is handed out, [used..cap) is free.
 */
#include "ksched/base/arena.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct ks_arena_block {
    struct ks_arena_block *next;
    size_t pad; /* keeps data 16-byte aligned */
    _Alignas(16) unsigned char data[];
};

enum { KS_ARENA_MIN_BLOCK = 1024, KS_ARENA_MAX_BLOCK = 64 * 1024 };

static size_t align16(size_t n)
{
    return (n + 15) & ~(size_t)15;
}

void *ks_arena_alloc(struct ks_arena *a, size_t size)
{
    size = align16(size ? size : 1);
    if (!a->head || a->cap - a->used < size) {
        size_t cap = a->cap ? a->cap * 2 : KS_ARENA_MIN_BLOCK;
        if (cap > KS_ARENA_MAX_BLOCK)
            cap = KS_ARENA_MAX_BLOCK;
        if (cap < size)
            cap = size;
        if (cap > SIZE_MAX - sizeof(struct ks_arena_block))
            return NULL;
        struct ks_arena_block *b = malloc(sizeof(*b) + cap);
        if (!b)
            return NULL;
        b->next = a->head;
        a->head = b;
        a->cap = cap;
        a->used = 0;
        a->total += sizeof(*b) + cap;
    }
    void *p = a->head->data + a->used;
    a->used += size;
    memset(p, 0, size);
    return p;
}

void *ks_arena_calloc(struct ks_arena *a, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    return ks_arena_alloc(a, n * size);
}

char *ks_arena_strndup(struct ks_arena *a, const char *s, size_t len)
{
    if (len == SIZE_MAX)
        return NULL;
    char *p = ks_arena_alloc(a, len + 1);
    if (p) {
        memcpy(p, s, len);
        p[len] = '\0';
    }
    return p;
}

char *ks_arena_strdup(struct ks_arena *a, const char *s)
{
    return s ? ks_arena_strndup(a, s, strlen(s)) : NULL;
}

void ks_arena_reset(struct ks_arena *a)
{
    if (!a->head)
        return;
    struct ks_arena_block *keep = a->head, *b = keep->next;
    while (b) {
        struct ks_arena_block *next = b->next;
        free(b);
        b = next;
    }
    keep->next = NULL;
    a->used = 0;
    a->total = sizeof(*keep) + a->cap;
}

void ks_arena_destroy(struct ks_arena *a)
{
    if (!a)
        return;
    struct ks_arena_block *b = a->head;
    while (b) {
        struct ks_arena_block *next = b->next;
        free(b);
        b = next;
    }
    memset(a, 0, sizeof(*a));
}

int ks_reserve(void **items, uint32_t *cap, uint64_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    if (need > UINT32_MAX / 2)
        return -ENOMEM;
    uint64_t ncap = *cap ? (uint64_t)*cap * 2 : 4;
    while (ncap < need)
        ncap *= 2;
    void *p = realloc(*items, (size_t)ncap * size);
    if (!p)
        return -ENOMEM;
    *items = p;
    *cap = (uint32_t)ncap;
    return 0;
}
