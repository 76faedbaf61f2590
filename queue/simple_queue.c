/*
 * simple_queue.c - an ordered scheduling queue behind include/ksched/queue.h.
 *
 * The active queue is a binary heap ordered by the QueueSort comparison, under one
 * mutex; unschedulable pods wait in a list with the events that could help them. This is
 * the interim implementation the scheduling-queue work replaces with a lock-free activeQ,
 * backoff and timed flushes behind the same interface. The move-request rule is upstream's:
 * a pod whose failed cycle overlaps a move request is retried at once.
 */
#include "ksched/queue.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

struct unsched {
    struct ks_queued_pod *qp;
    unsigned events;
};

struct ks_queue {
    pthread_mutex_t lock;
    pthread_cond_t nonempty;
    ks_queue_less_fn less;
    const void *less_ctx;
    struct ks_queued_pod **heap; /* guarded by lock */
    uint32_t n, cap;
    struct unsched *unsched;
    uint32_t nunsched, capunsched;
    uint64_t cycle;              /* pops so far */
    uint64_t move_request_cycle; /* cycle of the last move request */
    bool closed;
};

int ks_queue_create(ks_queue_less_fn less, const void *less_ctx, struct ks_queue **out)
{
    struct ks_queue *q = calloc(1, sizeof(*q));
    *out = NULL;
    if (!q)
        return -ENOMEM;
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->nonempty, NULL);
    q->less = less;
    q->less_ctx = less_ctx;
    *out = q;
    return 0;
}

void ks_queued_pod_free(struct ks_queued_pod *qp)
{
    free(qp);
}

void ks_queue_destroy(struct ks_queue *q)
{
    if (!q)
        return;
    for (uint32_t i = 0; i < q->n; i++)
        ks_queued_pod_free(q->heap[i]);
    for (uint32_t i = 0; i < q->nunsched; i++)
        ks_queued_pod_free(q->unsched[i].qp);
    free(q->heap);
    free(q->unsched);
    pthread_cond_destroy(&q->nonempty);
    pthread_mutex_destroy(&q->lock);
    free(q);
}

static bool before(const struct ks_queue *q, uint32_t i, uint32_t j)
{
    return q->less(q->less_ctx, q->heap[i], q->heap[j]);
}

static void swap(struct ks_queue *q, uint32_t i, uint32_t j)
{
    struct ks_queued_pod *t = q->heap[i];
    q->heap[i] = q->heap[j];
    q->heap[j] = t;
}

/* Called with lock held. */
static int heap_push(struct ks_queue *q, struct ks_queued_pod *qp)
{
    if (q->n == q->cap) {
        uint32_t cap = q->cap ? q->cap * 2 : 64;
        struct ks_queued_pod **h = realloc(q->heap, cap * sizeof(*h));
        if (!h)
            return -ENOMEM;
        q->heap = h;
        q->cap = cap;
    }
    uint32_t i = q->n++;
    q->heap[i] = qp;
    while (i > 0 && before(q, i, (i - 1) / 2)) {
        swap(q, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
    pthread_cond_signal(&q->nonempty);
    return 0;
}

/* Called with lock held and n > 0. */
static struct ks_queued_pod *heap_pop(struct ks_queue *q)
{
    struct ks_queued_pod *top = q->heap[0];
    q->heap[0] = q->heap[--q->n];
    for (uint32_t i = 0;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < q->n && before(q, l, m))
            m = l;
        if (r < q->n && before(q, r, m))
            m = r;
        if (m == i)
            break;
        swap(q, i, m);
        i = m;
    }
    return top;
}

int ks_queue_add(struct ks_queue *q, const struct ks_pod *pod, int64_t now_ns)
{
    struct ks_queued_pod *qp = calloc(1, sizeof(*qp));
    if (!qp)
        return -ENOMEM;
    qp->pod = pod;
    qp->timestamp_ns = now_ns;
    qp->initial_attempt_ns = KS_TIME_NONE;
    pthread_mutex_lock(&q->lock);
    int rc = heap_push(q, qp);
    pthread_mutex_unlock(&q->lock);
    if (rc)
        free(qp);
    return rc;
}

struct ks_queued_pod *ks_queue_pop(struct ks_queue *q, bool block)
{
    struct ks_queued_pod *qp = NULL;
    pthread_mutex_lock(&q->lock);
    while (block && q->n == 0 && !q->closed)
        pthread_cond_wait(&q->nonempty, &q->lock);
    if (q->n) {
        qp = heap_pop(q);
        qp->attempts++;
        q->cycle++;
    }
    pthread_mutex_unlock(&q->lock);
    return qp;
}

uint64_t ks_queue_cycle(struct ks_queue *q)
{
    pthread_mutex_lock(&q->lock);
    uint64_t c = q->cycle;
    pthread_mutex_unlock(&q->lock);
    return c;
}

int ks_queue_add_unschedulable(struct ks_queue *q, struct ks_queued_pod *qp, uint64_t cycle, unsigned events)
{
    int rc = 0;
    pthread_mutex_lock(&q->lock);
    if (q->move_request_cycle >= cycle) {
        rc = heap_push(q, qp);
    } else {
        if (q->nunsched == q->capunsched) {
            uint32_t cap = q->capunsched ? q->capunsched * 2 : 64;
            struct unsched *u = realloc(q->unsched, cap * sizeof(*u));
            if (!u) {
                rc = -ENOMEM;
                goto out;
            }
            q->unsched = u;
            q->capunsched = cap;
        }
        q->unsched[q->nunsched++] = (struct unsched){qp, events};
    }
out:
    pthread_mutex_unlock(&q->lock);
    return rc;
}

void ks_queue_move(struct ks_queue *q, unsigned events, int64_t now_ns)
{
    pthread_mutex_lock(&q->lock);
    q->move_request_cycle = q->cycle;
    uint32_t keep = 0;
    for (uint32_t i = 0; i < q->nunsched; i++) {
        struct unsched u = q->unsched[i];
        if (u.events & events) {
            int64_t was = u.qp->timestamp_ns;
            u.qp->timestamp_ns = now_ns; /* before the push: the heap orders by it */
            if (heap_push(q, u.qp) == 0)
                continue;
            u.qp->timestamp_ns = was;
        }
        q->unsched[keep++] = u;
    }
    q->nunsched = keep;
    pthread_mutex_unlock(&q->lock);
}

void ks_queue_counts(struct ks_queue *q, uint32_t *active, uint32_t *unschedulable)
{
    pthread_mutex_lock(&q->lock);
    *active = q->n;
    *unschedulable = q->nunsched;
    pthread_mutex_unlock(&q->lock);
}

void ks_queue_close(struct ks_queue *q)
{
    pthread_mutex_lock(&q->lock);
    q->closed = true;
    pthread_cond_broadcast(&q->nonempty);
    pthread_mutex_unlock(&q->lock);
}

struct ks_queued_pod *ks_queue_take_unschedulable(struct ks_queue *q)
{
    struct ks_queued_pod *qp = NULL;
    pthread_mutex_lock(&q->lock);
    if (q->nunsched)
        qp = q->unsched[--q->nunsched].qp;
    pthread_mutex_unlock(&q->lock);
    return qp;
}
