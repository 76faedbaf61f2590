/*
 * pod_labels.c - the cache's pods by label: (namespace, key, value) -> the pod entries with
 * that label.
 *
 * Tracking a selector (ks_cache_selector_track, cache.c) must find the pods it already
 * matches. Walking every pod for each new selector costs the cluster's pod count per
 * workload; a selector filed under one of its labels (selector_counts.c) need only try the
 * pods that carry that label. The index is built when the first selector is tracked and
 * kept from then on, so a cache that never tracks one pays nothing for it.
 *
 * Each entry remembers its place in the list of each of its labels (label_pos, in the
 * order of the pod's labels), so removal is a swap-remove. Lists left empty stay until
 * ks__label_index_sweep() (an attach reserved in them may follow the removal that empties
 * them).
 *
 * Context: under the cache lock.
 */
#include "cache_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t label_hash(uint32_t ns, uint32_t key, uint32_t value)
{
    uint64_t h = ((uint64_t)ns << 32 | key) * 0x9e3779b97f4a7c15ull;
    h ^= (uint64_t)value * 0xd6e8feb86659fd93ull;
    return h ^ (h >> 29);
}

struct label_list *ks__label_index_find(const struct label_index *x, uint32_t ns, uint32_t key,
                                        uint32_t value)
{
    if (!x->buckets)
        return NULL;
    uint64_t h = label_hash(ns, key, value);
    for (struct label_list *l = x->buckets[h & x->mask]; l; l = l->hnext) {
        if (l->hash == h && l->ns == ns && l->key == key && l->value == value)
            return l;
    }
    return NULL;
}

static int grow_buckets(struct label_index *x)
{
    if (x->buckets && x->n < x->mask + 1)
        return 0;
    uint32_t cap = x->buckets ? (x->mask + 1) * 2 : 256;
    struct label_list **nb = calloc(cap, sizeof(*nb));
    if (!nb)
        return -ENOMEM;
    for (uint32_t i = 0; x->buckets && i <= x->mask; i++) {
        for (struct label_list *l = x->buckets[i], *next; l; l = next) {
            next = l->hnext;
            l->hnext = nb[l->hash & (cap - 1)];
            nb[l->hash & (cap - 1)] = l;
        }
    }
    free(x->buckets);
    x->buckets = nb;
    x->mask = cap - 1;
    return 0;
}

/* The list of (@ns, @key, @value) with room for one more pod, created when missing. */
static struct label_list *list_reserve(struct label_index *x, uint32_t ns, uint32_t key, uint32_t value)
{
    struct label_list *l = ks__label_index_find(x, ns, key, value);
    if (!l) {
        if (grow_buckets(x) < 0 || !(l = calloc(1, sizeof(*l))))
            return NULL;
        *l = (struct label_list){.hash = label_hash(ns, key, value), .ns = ns, .key = key, .value = value};
        struct label_list **head = &x->buckets[l->hash & x->mask];
        l->hnext = *head;
        *head = l;
        x->n++;
        x->nempty++;
    }
    return KS_RESERVE(l->pods, l->cap, (uint64_t)l->n + 1) ? NULL : l;
}

int ks__label_index_reserve(struct label_index *x, const struct pod_entry *e)
{
    const struct ks_pod *pod = e->pod;
    for (uint32_t i = 0; x->on && i < pod->meta.labels.n; i++) {
        const struct ks_label *lb = &pod->meta.labels.items[i];
        if (!list_reserve(x, pod->meta.namespace_id, lb->key, lb->value))
            return -ENOMEM;
    }
    return 0;
}

void ks__label_index_add(struct label_index *x, struct pod_entry *e)
{
    const struct ks_pod *pod = e->pod;
    for (uint32_t i = 0; x->on && i < pod->meta.labels.n; i++) {
        const struct ks_label *lb = &pod->meta.labels.items[i];
        struct label_list *l = ks__label_index_find(x, pod->meta.namespace_id, lb->key, lb->value);
        x->nempty -= l->n == 0;
        e->label_pos[i] = l->n;
        l->pods[l->n++] = e;
    }
}

/* The index of @key among @pod's labels (it has it). */
static uint32_t label_slot(const struct ks_pod *pod, uint32_t key)
{
    uint32_t i = 0;
    while (pod->meta.labels.items[i].key != key)
        i++;
    return i;
}

void ks__label_index_remove(struct label_index *x, struct pod_entry *e)
{
    const struct ks_pod *pod = e->pod;
    for (uint32_t i = 0; x->on && i < pod->meta.labels.n; i++) {
        const struct ks_label *lb = &pod->meta.labels.items[i];
        struct label_list *l = ks__label_index_find(x, pod->meta.namespace_id, lb->key, lb->value);
        struct pod_entry *last = l->pods[--l->n];
        uint32_t pos = e->label_pos[i];
        l->pods[pos] = last;
        last->label_pos[label_slot(last->pod, lb->key)] = pos;
        x->nempty += l->n == 0;
    }
}

int ks__label_index_build(struct label_index *x, const struct pod_table *pods)
{
    x->on = true;
    for (uint32_t b = 0; b <= pods->mask; b++) {
        for (struct pod_entry *e = pods->buckets[b]; e; e = e->hnext) {
            if (ks__label_index_reserve(x, e) < 0)
                goto nomem;
            ks__label_index_add(x, e);
        }
    }
    return 0;
nomem:
    ks__label_index_destroy(x);
    return -ENOMEM;
}

void ks__label_index_sweep(struct label_index *x)
{
    if (!x->buckets || x->nempty < 256 || x->nempty < x->n / 2)
        return;
    for (uint32_t i = 0; i <= x->mask; i++) {
        for (struct label_list **p = &x->buckets[i]; *p;) {
            struct label_list *l = *p;
            if (l->n) {
                p = &l->hnext;
                continue;
            }
            *p = l->hnext;
            free(l->pods);
            free(l);
            x->n--;
        }
    }
    x->nempty = 0;
}

size_t ks__label_index_bytes(const struct label_index *x)
{
    size_t b = x->buckets ? (size_t)(x->mask + 1) * sizeof(*x->buckets) : 0;
    for (uint32_t i = 0; x->buckets && i <= x->mask; i++) {
        for (const struct label_list *l = x->buckets[i]; l; l = l->hnext)
            b += sizeof(*l) + (size_t)l->cap * sizeof(*l->pods);
    }
    return b;
}

void ks__label_index_destroy(struct label_index *x)
{
    for (uint32_t i = 0; x->buckets && i <= x->mask; i++) {
        for (struct label_list *l = x->buckets[i], *next; l; l = next) {
            next = l->hnext;
            free(l->pods);
            free(l);
        }
    }
    free(x->buckets);
    memset(x, 0, sizeof(*x));
}
