/*
 * workers.c - the parallel-for pool of include/ksched/workers.h.
 *
 * A job is published under the pool mutex with a new sequence number and the workers
 * are woken by a condition variable; each then claims blocks from `next` with a relaxed
 * fetch-add (indices are independent, the claim order is all that matters) until the
 * range is exhausted or `stopped` is set. Completion is counted in `active` under the
 * mutex; the submitter waits for it, so every write a block made happens-before the
 * submitter returns (mutex release/acquire).
 */
#include "ksched/workers.h"

#include "ksched/rcu.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

struct ks_workers {
    pthread_mutex_t lock;
    pthread_cond_t wake; /* workers wait here for a new job */
    pthread_cond_t idle; /* the submitter waits here for the job's end */
    uint64_t seq;        /* job number; guarded by lock */
    uint32_t active;     /* workers still inside the current job; guarded by lock */
    bool quit;           /* guarded by lock */

    /* the current job: written under lock before seq moves, read-only during the job */
    ks_job_fn fn;
    void *ctx;
    uint32_t n, block;
    atomic_uint next;     /* first unclaimed index */
    atomic_bool stopped;  /* ks_workers_stop() was called */
    atomic_uint done_end; /* end of the processed prefix */

    uint32_t nthreads;
    pthread_t *threads;
};

struct worker_arg {
    struct ks_workers *w;
    uint32_t id;
};

/* Claim and run blocks until none is left; returns nothing, records the prefix end. */
static void drain(struct ks_workers *w, uint32_t id)
{
    for (;;) {
        if (atomic_load_explicit(&w->stopped, memory_order_relaxed))
            return;
        uint32_t begin = atomic_fetch_add_explicit(&w->next, w->block, memory_order_relaxed);
        if (begin >= w->n)
            return;
        uint32_t end = begin + w->block < w->n ? begin + w->block : w->n;
        w->fn(w->ctx, begin, end, id);
        /* blocks are claimed in order and finished, so the prefix ends at the highest end */
        uint32_t cur = atomic_load_explicit(&w->done_end, memory_order_relaxed);
        while (cur < end && !atomic_compare_exchange_weak_explicit(
                                &w->done_end, &cur, end, memory_order_relaxed, memory_order_relaxed))
            ;
    }
}

static void *worker_main(void *p)
{
    struct worker_arg *a = p;
    struct ks_workers *w = a->w;
    uint32_t id = a->id;
    uint64_t seen = 0;

    free(a);
    ks_rcu_register_thread();
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->quit && w->seq == seen)
            pthread_cond_wait(&w->wake, &w->lock);
        if (w->quit)
            break;
        seen = w->seq;
        pthread_mutex_unlock(&w->lock);
        drain(w, id);
        pthread_mutex_lock(&w->lock);
        if (--w->active == 0)
            pthread_cond_signal(&w->idle);
    }
    pthread_mutex_unlock(&w->lock);
    ks_rcu_unregister_thread();
    return NULL;
}

int ks_workers_create(uint32_t threads, struct ks_workers **out)
{
    struct ks_workers *w = calloc(1, sizeof(*w));
    int rc = -ENOMEM;

    *out = NULL;
    if (!w)
        return -ENOMEM;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    pthread_cond_init(&w->idle, NULL);
    if (threads && !(w->threads = calloc(threads, sizeof(*w->threads))))
        goto err_threads;
    for (uint32_t i = 0; i < threads; i++) {
        struct worker_arg *a = malloc(sizeof(*a));
        if (!a)
            goto err_start;
        *a = (struct worker_arg){w, i + 1};
        if ((rc = -pthread_create(&w->threads[i], NULL, worker_main, a))) {
            free(a);
            goto err_start;
        }
        w->nthreads++;
    }
    *out = w;
    return 0;

err_start:
    ks_workers_destroy(w);
    return rc ? rc : -ENOMEM;
err_threads:
    pthread_cond_destroy(&w->idle);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    free(w);
    return rc;
}

void ks_workers_destroy(struct ks_workers *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    w->quit = true;
    pthread_cond_broadcast(&w->wake);
    pthread_mutex_unlock(&w->lock);
    for (uint32_t i = 0; i < w->nthreads; i++)
        pthread_join(w->threads[i], NULL);
    free(w->threads);
    pthread_cond_destroy(&w->idle);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

uint32_t ks_workers_count(const struct ks_workers *w)
{
    return w->nthreads + 1;
}

uint32_t ks_workers_run(struct ks_workers *w, uint32_t n, uint32_t block, ks_job_fn fn, void *ctx)
{
    if (block == 0)
        block = 1;
    w->fn = fn;
    w->ctx = ctx;
    w->n = n;
    w->block = block;
    atomic_store_explicit(&w->next, 0, memory_order_relaxed);
    atomic_store_explicit(&w->stopped, false, memory_order_relaxed);
    atomic_store_explicit(&w->done_end, 0, memory_order_relaxed);
    if (n <= block || w->nthreads == 0) {
        drain(w, 0);
        return atomic_load_explicit(&w->done_end, memory_order_relaxed);
    }
    pthread_mutex_lock(&w->lock);
    w->seq++;
    w->active = w->nthreads;
    pthread_cond_broadcast(&w->wake);
    pthread_mutex_unlock(&w->lock);
    drain(w, 0);
    pthread_mutex_lock(&w->lock);
    while (w->active)
        pthread_cond_wait(&w->idle, &w->lock);
    pthread_mutex_unlock(&w->lock);
    return atomic_load_explicit(&w->done_end, memory_order_relaxed);
}

void ks_workers_stop(struct ks_workers *w)
{
    atomic_store_explicit(&w->stopped, true, memory_order_relaxed);
}
