/*
 * serve_map.c - the string-keyed hash map of serve/serve.h: chained, FNV-1a, doubled when
 * it holds as many entries as buckets. Used off the hot path only (informer events, the
 * writer's bookkeeping, Event series).
 */
#include "serve.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct ks_smap_entry {
    struct ks_smap_entry *next;
    uint64_t hash;
    void *value;
    char key[];
};

uint64_t ks_smap_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static struct ks_smap_entry **slot(const struct ks_smap *m, const char *key, uint64_t h)
{
    struct ks_smap_entry **e = &m->buckets[h & (m->nbuckets - 1)];
    while (*e && ((*e)->hash != h || strcmp((*e)->key, key) != 0))
        e = &(*e)->next;
    return e;
}

void *ks_smap_get(const struct ks_smap *m, const char *key)
{
    if (!m->nbuckets)
        return NULL;
    struct ks_smap_entry *e = *slot(m, key, ks_smap_hash(key));
    return e ? e->value : NULL;
}

static int grow(struct ks_smap *m)
{
    uint32_t n = m->nbuckets ? m->nbuckets * 2 : 64;
    struct ks_smap_entry **b = calloc(n, sizeof(*b));
    if (!b)
        return -ENOMEM;
    for (uint32_t i = 0; i < m->nbuckets; i++) {
        while (m->buckets[i]) {
            struct ks_smap_entry *e = m->buckets[i];
            m->buckets[i] = e->next;
            e->next = b[e->hash & (n - 1)];
            b[e->hash & (n - 1)] = e;
        }
    }
    free(m->buckets);
    m->buckets = b;
    m->nbuckets = n;
    return 0;
}

int ks_smap_put(struct ks_smap *m, const char *key, void *value, void **old)
{
    if (old)
        *old = NULL;
    if (m->n >= m->nbuckets && grow(m) < 0 && !m->nbuckets)
        return -ENOMEM;
    uint64_t h = ks_smap_hash(key);
    struct ks_smap_entry **s = slot(m, key, h);
    if (*s) {
        if (old)
            *old = (*s)->value;
        (*s)->value = value;
        return 0;
    }
    size_t len = strlen(key);
    struct ks_smap_entry *e = malloc(sizeof(*e) + len + 1);
    if (!e)
        return -ENOMEM;
    e->next = NULL;
    e->hash = h;
    e->value = value;
    memcpy(e->key, key, len + 1);
    *s = e;
    m->n++;
    return 0;
}

void *ks_smap_del(struct ks_smap *m, const char *key)
{
    if (!m->nbuckets)
        return NULL;
    struct ks_smap_entry **s = slot(m, key, ks_smap_hash(key));
    struct ks_smap_entry *e = *s;
    if (!e)
        return NULL;
    void *v = e->value;
    *s = e->next;
    free(e);
    m->n--;
    return v;
}

void ks_smap_each(const struct ks_smap *m, void (*fn)(void *ctx, const char *key, void *value), void *ctx)
{
    for (uint32_t i = 0; i < m->nbuckets; i++) {
        for (struct ks_smap_entry *e = m->buckets[i]; e; e = e->next)
            fn(ctx, e->key, e->value);
    }
}

void ks_smap_sweep(struct ks_smap *m, bool (*fn)(void *ctx, const char *key, void *value), void *ctx)
{
    for (uint32_t i = 0; i < m->nbuckets; i++) {
        struct ks_smap_entry **pp = &m->buckets[i];
        while (*pp) {
            struct ks_smap_entry *e = *pp;
            if (!fn(ctx, e->key, e->value)) {
                pp = &e->next;
                continue;
            }
            *pp = e->next;
            free(e);
            m->n--;
        }
    }
}

void ks_smap_clear(struct ks_smap *m, void (*fn)(void *value))
{
    for (uint32_t i = 0; i < m->nbuckets; i++) {
        while (m->buckets[i]) {
            struct ks_smap_entry *e = m->buckets[i];
            m->buckets[i] = e->next;
            if (fn)
                fn(e->value);
            free(e);
        }
    }
    free(m->buckets);
    m->buckets = NULL;
    m->nbuckets = m->n = 0;
}
