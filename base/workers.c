/*
 * workers.c - the parallel-for pool of include/ksched/base/workers.h.
 *
 * A scheduling cycle hands the pool two short jobs (Filter, then Score: tens of
 * microseconds each), thousands of times a second. Waking a thread through a condition
 * variable costs a futex system call on each side and a context switch, more than the
 * work it would share (docs/perf.md, "Design constants"). So threads between jobs spin on the
 * job number for a while (KS_WORKERS_SPIN_NS), yielding the core every few dozen polls so
 * that a thread waiting for it (a binder) runs now rather than preempt a block later, and
 * only then sleep on the condition variable; the submitter signals it only when some
 * thread sleeps. A busy scheduler thus hands a job over with a few cache-line transfers,
 * an idle one costs no CPU.
 *
 * Protocol (all atomics below are sequentially consistent where a comment says "Dekker":
 * each side stores one variable then loads the other, so at least one sees the other's
 * store):
 *   - submit: write the job fields, store open = seq + 1 and then seq = seq + 1 (both
 *     after the fields, release); wake sleepers if `sleepers` > 0 (Dekker with a sleeper's
 *     sleepers++ / seq load); drain blocks itself; then close: open = 0, and wait until
 *     `inside` is 0 (Dekker with a worker's inside++ / open load).
 *   - worker: see seq move to s; inside++; if open == s (acquire: the job fields are
 *     visible) drain blocks; inside-- (release: its writes happen-before the submitter
 *     returns). A worker that sees open != s arrived after the close and touches nothing:
 *     the job's context may already be gone.
 * Blocks are claimed with a relaxed fetch-add on `next`, in increasing order, and a claimed
 * block is always finished, so the processed indices are a prefix even when stopped.
 *
 * The threads pay only when they have a core to themselves. When they do not (more
 * runnable threads than cores: binders, other processes; or a virtual CPU the host gives
 * to another guest), a thread joins late, or is preempted in the middle of a block and the
 * submitter then waits a whole time slice for it. So after each parallel job the submitter
 * weighs what the threads saved it (the blocks they ran, at its own pace per block in this
 * job) against how long it then waited for them to leave; a job that lost (or waited
 * KS_WORKERS_STALL_SPINS spins) makes the next `backoff` jobs run on the submitter alone.
 * The backoff doubles with each loss (up to KS_WORKERS_BACKOFF_MAX jobs) and halves with
 * each job that paid. A pool whose threads do not pay thus degrades to the serial loop, not
 * below it (as it did while only long stalls counted as losses: docs/perf.md, "Design
 * constants").
 */
#include "ksched/base/workers.h"

#include "ksched/base/rcu.h"

#include "ksched/base/lock.h"
#include "ksched/base/spin.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

/* How long an idle thread keeps polling for the next job before it sleeps. */
#define KS_WORKERS_SPIN_NS (200 * 1000)
/* Spins of a submitter waiting for a thread inside its job before it yields and calls the job stalled. */
#define KS_WORKERS_STALL_SPINS 1024
#define KS_WORKERS_BACKOFF_MIN 16
#define KS_WORKERS_BACKOFF_MAX 4096

struct ks_workers {
    /* the current job: written by the submitter before `open` and `seq` move, read-only during the job */
    ks_job_fn fn;
    void *ctx;
    uint32_t n, block;

    _Alignas(64) atomic_uint next; /* first unclaimed index */
    atomic_bool stopped;           /* ks_workers_stop() was called */
    atomic_uint done_end;          /* end of the processed prefix */

    _Alignas(64) atomic_uint seq; /* job number: moves once per job that uses the threads */
    atomic_uint open;             /* seq of the job threads may still join, 0 once closed */
    atomic_uint inside;           /* threads that joined the current job and have not left */
    atomic_uint helped;           /* blocks the threads ran in the current job */

    _Alignas(64) struct ks_mutex lock; /* guards sleeping and quit */
    pthread_cond_t wake;               /* sleeping threads wait here for seq to move or quit */
    atomic_uint sleepers;              /* threads asleep or about to sleep on wake */
    atomic_bool quit;

    uint32_t nthreads;
    pthread_t *threads;

    /* submitter only */
    uint32_t serial_jobs; /* jobs still to run on the submitter alone after a stall */
    uint32_t backoff;     /* serial_jobs after the next stall */
};

struct worker_arg {
    struct ks_workers *w;
    uint32_t id;
};

/* Claim and run blocks until none is left or the job is stopped; records the prefix end. The blocks run. */
static uint32_t drain(struct ks_workers *w, uint32_t id)
{
    for (uint32_t blocks = 0;; blocks++) {
        if (atomic_load_explicit(&w->stopped, memory_order_relaxed))
            return blocks;
        uint32_t begin = atomic_fetch_add_explicit(&w->next, w->block, memory_order_relaxed);
        if (begin >= w->n)
            return blocks;
        uint32_t end = begin + w->block < w->n ? begin + w->block : w->n;
        w->fn(w->ctx, begin, end, id);
        /* blocks are claimed in order and finished, so the prefix ends at the highest end */
        uint32_t cur = atomic_load_explicit(&w->done_end, memory_order_relaxed);
        while (cur < end && !atomic_compare_exchange_weak_explicit(
                                &w->done_end, &cur, end, memory_order_relaxed, memory_order_relaxed))
            ;
    }
}

/* Wait until seq differs from @seen or quit is set: spin first, then sleep. Returns the new seq. */
static unsigned wait_job(struct ks_workers *w, unsigned seen)
{
    unsigned s;
    struct ks_spin sp = {0};
    for (;;) {
        /* acquire: pairs with the submitter's release store of seq */
        if ((s = atomic_load_explicit(&w->seq, memory_order_acquire)) != seen ||
            atomic_load_explicit(&w->quit, memory_order_relaxed))
            return s;
        if (!ks__spin_step(&sp, KS_WORKERS_SPIN_NS))
            break;
    }
    ks_mutex_lock(&w->lock);
    /* Dekker with ks_workers_run: sleepers++ then load seq; the submitter stores seq then loads sleepers */
    atomic_fetch_add_explicit(&w->sleepers, 1, memory_order_seq_cst);
    while ((s = atomic_load_explicit(&w->seq, memory_order_seq_cst)) == seen &&
           !atomic_load_explicit(&w->quit, memory_order_relaxed))
        ks_cond_wait(&w->wake, &w->lock);
    atomic_fetch_sub_explicit(&w->sleepers, 1, memory_order_relaxed);
    ks_mutex_unlock(&w->lock);
    return s;
}

static void *worker_main(void *p)
{
    struct worker_arg *a = p;
    struct ks_workers *w = a->w;
    uint32_t id = a->id;
    unsigned seen = 0;

    free(a);
    ks_rcu_register_thread();
    for (;;) {
        unsigned s = wait_job(w, seen);
        if (atomic_load_explicit(&w->quit, memory_order_relaxed))
            break;
        seen = s;
        /* Dekker with the close in ks_workers_run: inside++ then load open */
        atomic_fetch_add_explicit(&w->inside, 1, memory_order_seq_cst);
        if (atomic_load_explicit(&w->open, memory_order_seq_cst) == s)
            atomic_fetch_add_explicit(&w->helped, drain(w, id), memory_order_relaxed);
        /* release: every write of the blocks run here happens-before the submitter sees inside drop */
        atomic_fetch_sub_explicit(&w->inside, 1, memory_order_release);
    }
    ks_rcu_unregister_thread();
    return NULL;
}

int ks_workers_create(uint32_t threads, struct ks_workers **out)
{
    struct ks_workers *w = aligned_alloc(64, (sizeof(*w) + 63) / 64 * 64);
    int rc = -ENOMEM;

    *out = NULL;
    if (!w)
        return -ENOMEM;
    *w = (struct ks_workers){.backoff = KS_WORKERS_BACKOFF_MIN};
    ks_mutex_init(&w->lock, KS_LOCK_WORKERS);
    pthread_cond_init(&w->wake, NULL);
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
    pthread_cond_destroy(&w->wake);
    ks_mutex_destroy(&w->lock);
    free(w);
    return rc;
}

void ks_workers_destroy(struct ks_workers *w)
{
    if (!w)
        return;
    ks_mutex_lock(&w->lock);
    atomic_store_explicit(&w->quit, true, memory_order_relaxed);
    pthread_cond_broadcast(&w->wake);
    ks_mutex_unlock(&w->lock);
    for (uint32_t i = 0; i < w->nthreads; i++)
        pthread_join(w->threads[i], NULL);
    free(w->threads);
    pthread_cond_destroy(&w->wake);
    ks_mutex_destroy(&w->lock);
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
    if (n <= block || w->nthreads == 0 || w->serial_jobs) {
        if (n > block && w->serial_jobs)
            w->serial_jobs--;
        drain(w, 0);
        return atomic_load_explicit(&w->done_end, memory_order_relaxed);
    }
    atomic_store_explicit(&w->helped, 0, memory_order_relaxed);
    int64_t t0 = ks__mono_ns();
    unsigned s = atomic_load_explicit(&w->seq, memory_order_relaxed) + 1;
    if (s == 0)
        s = 1; /* 0 means "closed" in open */
    /* release: a thread that reads this open or seq sees the job fields written above */
    atomic_store_explicit(&w->open, s, memory_order_release);
    /* Dekker with a sleeping thread: store seq then load sleepers */
    atomic_store_explicit(&w->seq, s, memory_order_seq_cst);
    if (atomic_load_explicit(&w->sleepers, memory_order_seq_cst)) {
        ks_mutex_lock(&w->lock);
        pthread_cond_broadcast(&w->wake);
        ks_mutex_unlock(&w->lock);
    }
    uint32_t own = drain(w, 0);
    int64_t t1 = ks__mono_ns();
    /*
     * close: a thread that has not joined yet stays out; wait for those inside (Dekker:
     * store open, load inside). The load that reads 0 acquires every thread's release
     * decrement (one release sequence of RMWs), so the blocks' writes are visible.
     */
    atomic_store_explicit(&w->open, 0, memory_order_seq_cst);
    uint32_t spins = 0;
    for (; atomic_load_explicit(&w->inside, memory_order_seq_cst); spins++) {
        if (spins < KS_WORKERS_STALL_SPINS)
            ks__cpu_relax();
        else
            sched_yield(); /* a joined thread was preempted mid-block: give it the CPU */
    }
    /* relaxed: each thread counted before its release decrement of inside, acquired above */
    uint32_t helped = atomic_load_explicit(&w->helped, memory_order_relaxed);
    int64_t waited = ks__mono_ns() - t1;
    /* what the threads saved the submitter (their blocks at its pace) against its wait for them */
    int64_t saved = own ? (t1 - t0) / own * helped : 0;
    if (spins >= KS_WORKERS_STALL_SPINS || waited > saved) {
        w->serial_jobs = w->backoff;
        w->backoff = w->backoff < KS_WORKERS_BACKOFF_MAX ? w->backoff * 2 : KS_WORKERS_BACKOFF_MAX;
    } else if (w->backoff > KS_WORKERS_BACKOFF_MIN) {
        w->backoff /= 2;
    }
    return atomic_load_explicit(&w->done_end, memory_order_relaxed);
}

void ks_workers_stop(struct ks_workers *w)
{
    atomic_store_explicit(&w->stopped, true, memory_order_relaxed);
}
