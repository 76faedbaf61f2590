/*
 * queue_table.c - the scheduling queue's lookup by namespace/name: STRIPES chained hash
 * tables, one per stripe of the key's hash, each under its stripe's lock
 * (KS_LOCK_QUEUE_POD), so that threads queueing different pods do not wait for each other.
 */
#include "queue_internal.h"

#include "ksched/api.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint64_t ks__queue_key_hash(const struct ks_pod *pod)
{
    if (!pod->meta.name)
        return ((uint64_t)(uintptr_t)pod * 0x9E3779B97F4A7C15ull) >> STRIPE_BITS;
    uint64_t h = 1469598103934665603ull ^ pod->meta.namespace_id;
    for (const char *s = pod->meta.name; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static bool same_key(const struct ks_pod *a, const struct ks_pod *b)
{
    if (a == b)
        return true;
    if (!a->meta.name || !b->meta.name)
        return false;
    return a->meta.namespace_id == b->meta.namespace_id && strcmp(a->meta.name, b->meta.name) == 0;
}

struct qpod *ks__queue_table_find(const struct stripe *s, uint64_t hash, const struct ks_pod *pod)
{
    ks_mutex_assert_held(&s->lock);
    if (!s->cap)
        return NULL;
    for (struct qpod *qp = s->table[hash & (s->cap - 1)]; qp; qp = qp->hnext) {
        if (qp->hash == hash && same_key(qp->pub.pod, pod))
            return qp;
    }
    return NULL;
}

int ks__queue_table_insert(struct stripe *s, struct qpod *qp)
{
    ks_mutex_assert_held(&s->lock);
    if (s->n + 1 > s->cap) {
        uint32_t cap = s->cap ? s->cap * 2 : 16;
        struct qpod **t = calloc(cap, sizeof(*t));
        if (!t)
            return -ENOMEM;
        for (uint32_t i = 0; i < s->cap; i++) {
            for (struct qpod *x = s->table[i], *next; x; x = next) {
                next = x->hnext;
                x->hnext = t[x->hash & (cap - 1)];
                t[x->hash & (cap - 1)] = x;
            }
        }
        free(s->table);
        s->table = t;
        s->cap = cap;
    }
    struct qpod **head = &s->table[qp->hash & (s->cap - 1)];
    qp->hnext = *head;
    *head = qp;
    qp->in_table = true;
    s->n++;
    return 0;
}

void ks__queue_table_remove(struct stripe *s, struct qpod *qp)
{
    ks_mutex_assert_held(&s->lock);
    if (!qp->in_table)
        return;
    struct qpod **pp = &s->table[qp->hash & (s->cap - 1)];
    while (*pp != qp)
        pp = &(*pp)->hnext;
    *pp = qp->hnext;
    qp->hnext = NULL;
    qp->in_table = false;
    s->n--;
}
