/*
 * nominator.c - the nominated-pods table of include/ksched/nominator.h.
 *
 * An array of (pod, node) in nomination order under a mutex: nominations are rare (one
 * per preemption) and short-lived, so linear scans beat the bookkeeping of per-node maps.
 * The count is published with relaxed atomics for the lock-free emptiness check.
 */
#include "ksched/nominator.h"

#include "ksched/api.h"
#include "ksched/intern.h"
#include "ksched/lock.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct nomination {
    const struct ks_pod *pod;
    uint32_t node;
};

struct ks_nominator {
    pthread_mutex_t lock;
    struct nomination *items; /* guarded by lock */
    uint32_t cap;
    atomic_uint n; /* written under lock */
};

int ks_nominator_create(struct ks_nominator **out)
{
    struct ks_nominator *n = calloc(1, sizeof(*n));
    *out = n;
    if (!n)
        return -ENOMEM;
    pthread_mutex_init(&n->lock, NULL);
    return 0;
}

void ks_nominator_destroy(struct ks_nominator *n)
{
    if (!n)
        return;
    for (uint32_t i = 0; i < atomic_load_explicit(&n->n, memory_order_relaxed); i++)
        ks_pod_put(n->items[i].pod);
    free(n->items);
    pthread_mutex_destroy(&n->lock);
    free(n);
}

static bool same_pod(const struct ks_pod *a, const struct ks_pod *b)
{
    return a == b ||
           (a->meta.namespace_id == b->meta.namespace_id && strcmp(a->meta.name, b->meta.name) == 0);
}

/* Index of @pod's nomination, or n. Called with lock held. */
static uint32_t find(const struct ks_nominator *n, const struct ks_pod *pod, uint32_t count)
{
    uint32_t i = 0;
    while (i < count && !same_pod(n->items[i].pod, pod))
        i++;
    return i;
}

/* Remove entry @i keeping nomination order. Called with lock held. */
static void drop(struct ks_nominator *n, uint32_t i, uint32_t count)
{
    ks_pod_put(n->items[i].pod);
    memmove(&n->items[i], &n->items[i + 1], (size_t)(count - i - 1) * sizeof(*n->items));
    atomic_store_explicit(&n->n, count - 1, memory_order_relaxed);
}

int ks_nominator_add(struct ks_nominator *n, const struct ks_pod *pod, uint32_t node)
{
    int rc = 0;
    ks_mutex_lock(&n->lock, KS_LOCK_NOMINATOR);
    uint32_t count = atomic_load_explicit(&n->n, memory_order_relaxed);
    uint32_t i = find(n, pod, count);
    if (i < count) {
        drop(n, i, count);
        count--;
    }
    if (count == n->cap) {
        uint32_t cap = n->cap ? n->cap * 2 : 16;
        struct nomination *items = realloc(n->items, cap * sizeof(*items));
        if (!items) {
            rc = -ENOMEM;
            goto out;
        }
        n->items = items;
        n->cap = cap;
    }
    n->items[count] = (struct nomination){ks_pod_get(pod), node};
    atomic_store_explicit(&n->n, count + 1, memory_order_relaxed);
out:
    ks_mutex_unlock(&n->lock, KS_LOCK_NOMINATOR);
    return rc;
}

void ks_nominator_remove(struct ks_nominator *n, const struct ks_pod *pod)
{
    ks_mutex_lock(&n->lock, KS_LOCK_NOMINATOR);
    uint32_t count = atomic_load_explicit(&n->n, memory_order_relaxed);
    uint32_t i = find(n, pod, count);
    if (i < count)
        drop(n, i, count);
    ks_mutex_unlock(&n->lock, KS_LOCK_NOMINATOR);
}

uint32_t ks_nominator_node(struct ks_nominator *n, const struct ks_pod *pod)
{
    ks_mutex_lock(&n->lock, KS_LOCK_NOMINATOR);
    uint32_t count = atomic_load_explicit(&n->n, memory_order_relaxed);
    uint32_t i = find(n, pod, count);
    uint32_t node = i < count ? n->items[i].node : KS_ID_EMPTY;
    ks_mutex_unlock(&n->lock, KS_LOCK_NOMINATOR);
    return node;
}

uint32_t ks_nominator_pods(struct ks_nominator *n, uint32_t node, const struct ks_pod **out, uint32_t max)
{
    uint32_t found = 0;
    ks_mutex_lock(&n->lock, KS_LOCK_NOMINATOR);
    uint32_t count = atomic_load_explicit(&n->n, memory_order_relaxed);
    for (uint32_t i = 0; i < count; i++) {
        if (n->items[i].node != node)
            continue;
        if (found < max)
            out[found] = ks_pod_get(n->items[i].pod);
        found++;
    }
    ks_mutex_unlock(&n->lock, KS_LOCK_NOMINATOR);
    return found;
}

uint32_t ks_nominator_list(struct ks_nominator *n, const struct ks_pod **pods, uint32_t *nodes, uint32_t max)
{
    ks_mutex_lock(&n->lock, KS_LOCK_NOMINATOR);
    uint32_t count = atomic_load_explicit(&n->n, memory_order_relaxed);
    for (uint32_t i = 0; i < count && i < max; i++) {
        pods[i] = ks_pod_get(n->items[i].pod);
        nodes[i] = n->items[i].node;
    }
    ks_mutex_unlock(&n->lock, KS_LOCK_NOMINATOR);
    return count;
}

uint32_t ks_nominator_count(const struct ks_nominator *n)
{
    return atomic_load_explicit(&((struct ks_nominator *)n)->n, memory_order_relaxed);
}
