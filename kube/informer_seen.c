/*
 * informer_seen.c - the keys an informer has delivered, per kind (see kube_internal.h).
 *
 * A chained hash table of (namespace, name) with the resourceVersion and uid last
 * delivered: enough to turn a relist into ADDED/MODIFIED/DELETED and to drop a watch
 * event that repeats what was delivered, without keeping the objects (the handler owns
 * them). Doubles at load factor 1. Informer thread only.
 */
#include "kube_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t key_hash(const char *ns, const char *name)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *p = ns; *p; p++)
        h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
    h = (h ^ 0xff) * 0x100000001b3ull; /* separator: ("a", "bc") and ("ab", "c") differ */
    for (const char *p = name; *p; p++)
        h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
    return h ^ (h >> 31);
}

static struct ks__seen_entry **find_slot(const struct ks__seen *s, uint64_t h, const char *ns,
                                         const char *name)
{
    struct ks__seen_entry **pp = &s->buckets[h & (s->nbuckets - 1)];
    for (; *pp; pp = &(*pp)->next) {
        struct ks__seen_entry *e = *pp;
        if (e->hash == h && strcmp(e->key, ns) == 0 && strcmp(e->name, name) == 0)
            break;
    }
    return pp;
}

struct ks__seen_entry *ks__seen_get(const struct ks__seen *s, const char *ns, const char *name)
{
    if (!s->nbuckets)
        return NULL;
    return *find_slot(s, key_hash(ns, name), ns, name);
}

static int grow(struct ks__seen *s)
{
    size_t nb = s->nbuckets ? s->nbuckets * 2 : 256;
    struct ks__seen_entry **b = calloc(nb, sizeof(*b));
    if (!b)
        return -ENOMEM;
    for (size_t i = 0; i < s->nbuckets; i++) {
        for (struct ks__seen_entry *e = s->buckets[i], *next; e; e = next) {
            next = e->next;
            e->next = b[e->hash & (nb - 1)];
            b[e->hash & (nb - 1)] = e;
        }
    }
    free(s->buckets);
    s->buckets = b;
    s->nbuckets = nb;
    return 0;
}

int ks__set_str(char **dst, const char *src)
{
    char *c = src ? strdup(src) : NULL;
    if (src && !c)
        return -ENOMEM;
    free(*dst);
    *dst = c;
    return 0;
}

int ks__seen_put(struct ks__seen *s, const char *ns, const char *name, const char *rv, const char *uid,
                 uint32_t gen)
{
    if (s->n >= s->nbuckets && grow(s))
        return -ENOMEM;
    uint64_t h = key_hash(ns, name);
    struct ks__seen_entry **pp = find_slot(s, h, ns, name), *e = *pp;
    if (!e) {
        size_t nl = strlen(ns), ml = strlen(name);
        if (!(e = calloc(1, sizeof(*e) + nl + ml + 2)))
            return -ENOMEM;
        memcpy(e->key, ns, nl + 1);
        memcpy(e->key + nl + 1, name, ml + 1);
        e->name = e->key + nl + 1;
        e->hash = h;
        if (ks__set_str(&e->rv, rv ? rv : "") || ks__set_str(&e->uid, uid ? uid : "")) {
            free(e->rv);
            free(e);
            return -ENOMEM;
        }
        *pp = e;
        s->n++;
    } else if (ks__set_str(&e->rv, rv ? rv : "") || ks__set_str(&e->uid, uid ? uid : "")) {
        return -ENOMEM;
    }
    e->gen = gen;
    return 0;
}

static void entry_free(struct ks__seen_entry *e)
{
    free(e->rv);
    free(e->uid);
    free(e);
}

void ks__seen_del(struct ks__seen *s, const char *ns, const char *name)
{
    if (!s->nbuckets)
        return;
    struct ks__seen_entry **pp = find_slot(s, key_hash(ns, name), ns, name), *e = *pp;
    if (e) {
        *pp = e->next;
        entry_free(e);
        s->n--;
    }
}

static int entry_cmp(const void *a, const void *b)
{
    const struct ks__seen_entry *x = *(struct ks__seen_entry *const *)a,
                                *y = *(struct ks__seen_entry *const *)b;
    int c = strcmp(x->key, y->key);
    return c ? c : strcmp(x->name, y->name);
}

void ks__seen_sweep(struct ks__seen *s, uint32_t gen, void (*fn)(void *ctx, const struct ks__seen_entry *e),
                    void *ctx)
{
    struct ks__seen_entry **gone = NULL;
    size_t n = 0, cap = 0;

    /* unlink the stale entries, then report them sorted by (namespace, name): a stable order */
    for (size_t i = 0; i < s->nbuckets; i++) {
        struct ks__seen_entry **pp = &s->buckets[i];
        while (*pp) {
            struct ks__seen_entry *e = *pp;
            if (e->gen == gen) {
                pp = &e->next;
                continue;
            }
            if (n == cap) {
                size_t ncap = cap ? cap * 2 : 64;
                struct ks__seen_entry **g = realloc(gone, ncap * sizeof(*g));
                if (!g)
                    break; /* out of memory: report the rest at the next sweep */
                gone = g;
                cap = ncap;
            }
            *pp = e->next;
            gone[n++] = e;
            s->n--;
        }
    }
    if (n > 1)
        qsort(gone, n, sizeof(*gone), entry_cmp);
    for (size_t i = 0; i < n; i++) {
        if (fn)
            fn(ctx, gone[i]);
        entry_free(gone[i]);
    }
    free(gone);
}

void ks__seen_free(struct ks__seen *s)
{
    for (size_t i = 0; i < s->nbuckets; i++) {
        for (struct ks__seen_entry *e = s->buckets[i], *next; e; e = next) {
            next = e->next;
            entry_free(e);
        }
    }
    free(s->buckets);
    memset(s, 0, sizeof(*s));
}
