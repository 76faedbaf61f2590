/*
 * intern.h - process-wide string interning.
 *
 * Strings that plugins compare (label keys and values, taint keys and values, topology
 * keys, node names, namespaces, resource names, image names) are interned once when an
 * object is loaded; the scheduling hot path then compares 32-bit ids. Id 0 is the empty
 * string. Interned strings live until ks_intern_reset() (process exit in practice).
 *
 * Context: ks_intern*() may be called from any thread (a mutex guards insertion);
 * ks_intern_str() is lock-free and may be called from any thread for an id obtained from
 * ks_intern*(), including inside RCU read sections.
 */
#ifndef KSCHED_INTERN_H
#define KSCHED_INTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KS_ID_EMPTY 0u         /* the interned empty string "" */
#define KS_ID_NONE  UINT32_MAX /* "no string": an absent optional field */

/* ks_intern_n - id of the @len bytes at @s, interning them if new; KS_ID_NONE when out of memory. */
uint32_t ks_intern_n(const char *s, size_t len);

/* ks_intern - id of the NUL-terminated @s (see ks_intern_n). */
uint32_t ks_intern(const char *s);

/* ks_intern_find - id of @s if already interned, else KS_ID_NONE; never inserts. */
uint32_t ks_intern_find(const char *s, size_t len);

/*
 * ks_intern_ns_name - id of "NAMESPACE/@name" for the interned namespace @ns (the key of a
 * namespaced object, such as the PersistentVolumeClaims the cache and the volume plugins
 * look up), or of @name alone when @ns is KS_ID_NONE (a cluster-scoped object); interns it
 * if new. KS_ID_NONE when out of memory.
 */
uint32_t ks_intern_ns_name(uint32_t ns, const char *name);

/*
 * ks_intern_find_ns_name - the id ks_intern_ns_name() would give, if that string is already
 * interned, else KS_ID_NONE (so no object has that key); never inserts. Both take the
 * intern lock, as ks_intern_find() does: not for the per-node loop.
 */
uint32_t ks_intern_find_ns_name(uint32_t ns, const char *name);

/* ks_intern_str - the NUL-terminated string of @id ("" for KS_ID_NONE). */
const char *ks_intern_str(uint32_t id);

/* ks_ids_contain - whether @id is among the @n ids of @ids, sorted ascending. Any thread. */
/*
 * ks_id_hash - a hash of interned id @id for tables that index by its low bits. Ids of
 * strings interned one after another (node names) are near-consecutive integers, whose
 * plain multiplicative hash leaves most buckets of a power-of-two table empty: both
 * halves of the product are folded and mixed again.
 */
static inline uint32_t ks_id_hash(uint32_t id)
{
    uint64_t h = (uint64_t)id * 0x9e3779b97f4a7c15ull;
    h ^= h >> 32;
    h *= 0xd6e8feb86659fd93ull;
    return (uint32_t)(h ^ (h >> 32));
}

static inline bool ks_ids_contain(const uint32_t *ids, uint32_t n, uint32_t id)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ids[mid] == id)
            return true;
        if (ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* ks_intern_count - number of interned strings (memory accounting and tests). */
uint32_t ks_intern_count(void);

/* ks_intern_reset - forget every string (tests and process exit only: no reader may hold an id). */
void ks_intern_reset(void);

/* ks_sorted_ids_have - whether the @n interned ids at @ids, sorted, include @id. */
static inline bool ks_sorted_ids_have(const uint32_t *ids, uint32_t n, uint32_t id)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && ids[lo] == id;
}

#endif
