/*
 * nominator.c - the nominated-pods table of include/ksched/internal/nominator.h.
 *
 * Every nomination is one entry on three lists: all nominations in nomination order (a
 * doubly linked list), its node's nominations in nomination order (doubly linked, from a
 * per-node head), and a hash chain by pod (namespace, name). A preemption burst leaves
 * thousands of preemptors nominated while their victims leave, and each scheduling cycle
 * asks for the pods of many nodes: every operation is O(1) expected, or O(the answer),
 * instead of a scan of the table. Each node head also carries the clock value of its last
 * change (ks_nominator_node_version); heads without nominations are freed.
 *
 * The count is published with relaxed atomics for the lock-free emptiness check.
 */
#include "ksched/internal/nominator.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/lock.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct node_noms;

enum { NOM_LOG = 4096 }; /* node changes a reader of ks_nominator_changed can catch up from */

struct nomination {
    const struct ks_pod *pod;
    struct node_noms *node;
    struct nomination *prev, *next;   /* every nomination, in nomination order */
    struct nomination *nprev, *nnext; /* the node's, in nomination order */
    struct nomination *hnext;         /* pod hash chain */
    uint64_t hash;
};

struct node_noms {
    uint32_t node;
    uint32_t count;
    uint64_t version; /* the clock at its last change */
    struct nomination *head, *tail;
    struct node_noms *hnext;
};

struct ks_nominator {
    struct ks_mutex lock;
    /* guarded by lock */
    struct nomination *head, *tail;
    struct nomination **pods; /* pod hash: pmask + 1 chains */
    uint32_t pmask;
    struct node_noms **nodes; /* node hash: nmask + 1 chains */
    uint32_t nmask, nnodes;
    uint64_t clock;
    uint64_t log_head;     /* changes logged so far */
    uint32_t log[NOM_LOG]; /* log[seq % NOM_LOG]: the node of change seq */
    atomic_uint n;         /* written under lock */
};

enum { INITIAL_BUCKETS = 64 };

int ks_nominator_create(struct ks_nominator **out)
{
    struct ks_nominator *n = calloc(1, sizeof(*n));
    *out = n;
    if (!n)
        return -ENOMEM;
    n->pods = calloc(INITIAL_BUCKETS, sizeof(*n->pods));
    n->nodes = calloc(INITIAL_BUCKETS, sizeof(*n->nodes));
    if (!n->pods || !n->nodes) {
        free(n->pods);
        free(n->nodes);
        free(n);
        *out = NULL;
        return -ENOMEM;
    }
    n->pmask = n->nmask = INITIAL_BUCKETS - 1;
    ks_mutex_init(&n->lock, KS_LOCK_NOMINATOR);
    return 0;
}

void ks_nominator_destroy(struct ks_nominator *n)
{
    if (!n)
        return;
    for (struct nomination *e = n->head, *next; e; e = next) {
        next = e->next;
        ks_pod_put(e->pod);
        free(e);
    }
    for (uint32_t b = 0; b <= n->nmask; b++) {
        for (struct node_noms *h = n->nodes[b], *next; h; h = next) {
            next = h->hnext;
            free(h);
        }
    }
    free(n->pods);
    free(n->nodes);
    ks_mutex_destroy(&n->lock);
    free(n);
}

/* @pod's nomination, or NULL. Called with lock held. */
static struct nomination *find(const struct ks_nominator *n, const struct ks_pod *pod, uint64_t h)
{
    ks_mutex_assert_held(&n->lock);
    for (struct nomination *e = n->pods[h & n->pmask]; e; e = e->hnext) {
        if (e->hash == h && ks_pod_same_name(e->pod, pod))
            return e;
    }
    return NULL;
}

/* The head of @node's nominations, or NULL. Called with lock held. */
static struct node_noms *node_find(const struct ks_nominator *n, uint32_t node)
{
    ks_mutex_assert_held(&n->lock);
    for (struct node_noms *h = n->nodes[node & n->nmask]; h; h = h->hnext) {
        if (h->node == node)
            return h;
    }
    return NULL;
}

/* Double the pod hash (grow_pods) or the node hash (grow_nodes); false when out of memory. */
static bool grow_pods(struct ks_nominator *n)
{
    uint32_t mask = n->pmask * 2 + 1;
    struct nomination **v = calloc((size_t)mask + 1, sizeof(*v));
    if (!v)
        return false;
    for (struct nomination *e = n->head; e; e = e->next) {
        e->hnext = v[e->hash & mask];
        v[e->hash & mask] = e;
    }
    free(n->pods);
    n->pods = v;
    n->pmask = mask;
    return true;
}

static bool grow_nodes(struct ks_nominator *n)
{
    uint32_t mask = n->nmask * 2 + 1;
    struct node_noms **v = calloc((size_t)mask + 1, sizeof(*v));
    if (!v)
        return false;
    for (uint32_t b = 0; b <= n->nmask; b++) {
        for (struct node_noms *h = n->nodes[b], *next; h; h = next) {
            next = h->hnext;
            h->hnext = v[h->node & mask];
            v[h->node & mask] = h;
        }
    }
    free(n->nodes);
    n->nodes = v;
    n->nmask = mask;
    return true;
}

/* Unlink and free @e; its node head goes when it was the last one there. Called with lock held. */
static void drop(struct ks_nominator *n, struct nomination *e)
{
    ks_mutex_assert_held(&n->lock);
    struct nomination **p = &n->pods[e->hash & n->pmask];
    while (*p != e)
        p = &(*p)->hnext;
    *p = e->hnext;
    *(e->prev ? &e->prev->next : &n->head) = e->next;
    *(e->next ? &e->next->prev : &n->tail) = e->prev;
    struct node_noms *h = e->node;
    *(e->nprev ? &e->nprev->nnext : &h->head) = e->nnext;
    *(e->nnext ? &e->nnext->nprev : &h->tail) = e->nprev;
    h->version = ++n->clock;
    n->log[n->log_head++ % NOM_LOG] = h->node;
    if (--h->count == 0) {
        struct node_noms **q = &n->nodes[h->node & n->nmask];
        while (*q != h)
            q = &(*q)->hnext;
        *q = h->hnext;
        free(h);
        n->nnodes--;
    }
    ks_pod_put(e->pod);
    free(e);
    atomic_store_explicit(&n->n, atomic_load_explicit(&n->n, memory_order_relaxed) - 1, memory_order_relaxed);
}

int ks_nominator_add(struct ks_nominator *n, const struct ks_pod *pod, uint32_t node)
{
    int rc = -ENOMEM;
    uint64_t h = ks_pod_name_hash(pod);
    ks_mutex_lock(&n->lock);
    struct nomination *old = find(n, pod, h);
    if (old)
        drop(n, old);
    uint32_t count = atomic_load_explicit(&n->n, memory_order_relaxed);
    if (count >= n->pmask && !grow_pods(n))
        goto out;
    struct node_noms *head = node_find(n, node);
    if (!head) {
        if (n->nnodes >= n->nmask && !grow_nodes(n))
            goto out;
        if (!(head = calloc(1, sizeof(*head))))
            goto out;
        head->node = node;
        head->hnext = n->nodes[node & n->nmask];
        n->nodes[node & n->nmask] = head;
        n->nnodes++;
    }
    struct nomination *e = calloc(1, sizeof(*e));
    if (!e) {
        if (!head->count) { /* just made: unlink it again */
            n->nodes[node & n->nmask] = head->hnext;
            free(head);
            n->nnodes--;
        }
        goto out;
    }
    *e = (struct nomination){
        .pod = ks_pod_get(pod), .node = head, .prev = n->tail, .nprev = head->tail, .hash = h};
    *(n->tail ? &n->tail->next : &n->head) = e;
    n->tail = e;
    *(head->tail ? &head->tail->nnext : &head->head) = e;
    head->tail = e;
    head->count++;
    head->version = ++n->clock;
    n->log[n->log_head++ % NOM_LOG] = node;
    e->hnext = n->pods[h & n->pmask];
    n->pods[h & n->pmask] = e;
    atomic_store_explicit(&n->n, count + 1, memory_order_relaxed);
    rc = 0;
out:
    ks_mutex_unlock(&n->lock);
    return rc;
}

void ks_nominator_remove(struct ks_nominator *n, const struct ks_pod *pod)
{
    uint64_t h = ks_pod_name_hash(pod);
    ks_mutex_lock(&n->lock);
    struct nomination *e = find(n, pod, h);
    if (e)
        drop(n, e);
    ks_mutex_unlock(&n->lock);
}

uint32_t ks_nominator_node(struct ks_nominator *n, const struct ks_pod *pod)
{
    uint64_t h = ks_pod_name_hash(pod);
    ks_mutex_lock(&n->lock);
    struct nomination *e = find(n, pod, h);
    uint32_t node = e ? e->node->node : KS_ID_EMPTY;
    ks_mutex_unlock(&n->lock);
    return node;
}

uint32_t ks_nominator_pods(struct ks_nominator *n, uint32_t node, const struct ks_pod **out, uint32_t max)
{
    uint32_t found = 0;
    ks_mutex_lock(&n->lock);
    struct node_noms *h = node_find(n, node);
    for (struct nomination *e = h ? h->head : NULL; e; e = e->nnext) {
        if (found < max)
            out[found] = ks_pod_get(e->pod);
        found++;
    }
    ks_mutex_unlock(&n->lock);
    return found;
}

uint64_t ks_nominator_node_version(struct ks_nominator *n, uint32_t node)
{
    uint64_t v;
    ks_nominator_node_versions(n, &node, 1, &v);
    return v;
}

void ks_nominator_node_versions(struct ks_nominator *n, const uint32_t *nodes, uint32_t k, uint64_t *out)
{
    if (!atomic_load_explicit(&n->n, memory_order_relaxed)) {
        memset(out, 0, k * sizeof(*out)); /* nothing nominated: every version is 0 */
        return;
    }
    ks_mutex_lock(&n->lock);
    for (uint32_t i = 0; i < k; i++) {
        struct node_noms *h = node_find(n, nodes[i]);
        out[i] = h ? h->version : 0;
    }
    ks_mutex_unlock(&n->lock);
}

uint32_t ks_nominator_list(struct ks_nominator *n, const struct ks_pod **pods, uint32_t *nodes, uint32_t max)
{
    ks_mutex_lock(&n->lock);
    uint32_t count = atomic_load_explicit(&n->n, memory_order_relaxed), i = 0;
    for (struct nomination *e = n->head; e && i < max; e = e->next, i++) {
        pods[i] = ks_pod_get(e->pod);
        nodes[i] = e->node->node;
    }
    ks_mutex_unlock(&n->lock);
    return count;
}

int64_t ks_nominator_changed(struct ks_nominator *n, uint64_t *cursor, uint32_t *out, uint32_t max)
{
    int64_t got = 0;
    ks_mutex_lock(&n->lock);
    if (n->log_head - *cursor > NOM_LOG) {
        *cursor = n->log_head;
        got = -1;
    } else {
        while (*cursor != n->log_head && (uint64_t)got < max)
            out[got++] = n->log[(*cursor)++ % NOM_LOG];
    }
    ks_mutex_unlock(&n->lock);
    return got;
}

uint32_t ks_nominator_count(const struct ks_nominator *n)
{
    return atomic_load_explicit(&((struct ks_nominator *)n)->n, memory_order_relaxed);
}
