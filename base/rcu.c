/*
 * rcu.c - out-of-line parts of include/ksched/base/rcu.h: deferred reclamation on ksched's own
 * reclaimer thread, with the TSan grace-period acquire before each callback.
 *
 * Why not liburcu's call_rcu thread: after every batch it sleeps 10 ms (a constant of
 * liburcu 0.13), so a scheduler that retires a snapshot version per cycle, a hundred
 * thousand a second, holds a thousand or more retired versions (chunks, records and queue
 * nodes) out of reuse at any time: fresh pages on the hot path, and pooled chunks that
 * come back cold. The reclaimer here bounds the calls waiting rather than the time: after
 * a batch it pauses KS_RCU_PAUSE_NS (4 ms), then more pauses of the same until
 * KS_RCU_BATCH calls wait, KS_RCU_MAX_PAUSE_NS passed or a ks_rcu_barrier() waits; an idle
 * reclaimer (asleep, not pausing) takes a call at once. Each batch costs one grace period
 * (urcu_memb_synchronize_rcu: membarrier system calls, which interrupt the cores running
 * ksched's threads, and a wait for the read sections in progress): so at most 250 a
 * second when versions retire fast, 20 when they retire slowly, and none while nothing is
 * retired. Paired runs chose the pause (docs/perf.md, "Design constants").
 *
 * Protocol: ks_rcu_call() pushes the head on a lock-free stack (a compare-exchange loop: a
 * failure is another push that succeeded, or the weak form failing spuriously, and is
 * retried) and wakes the reclaimer only if it sleeps
 * (Dekker: the pusher stores the stack then loads `sleeping`, the reclaimer stores
 * `sleeping` then loads the stack, both sequentially consistent, so a push is never
 * missed). The reclaimer takes the whole stack, restores the order of the calls, waits for
 * a grace period and runs the callbacks in that order.
 *
 * ks_rcu_barrier() is ours rather than urcu_memb_barrier(): an atomic count of pending
 * callbacks gives the guarantee ("every callback queued before the call has run") in terms
 * TSan understands; the callback that brings it to zero takes the barrier's mutex to wake
 * a waiter. If the reclaimer thread cannot be started, callbacks go through liburcu's
 * call_rcu thread instead (same guarantees, longer delay).
 */
#include "ksched/base/rcu.h"

#include "ksched/base/futex.h"
#include "ksched/base/lock.h"
#include "ksched/base/spin.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The reclaimer's pause after a batch (each batch is one grace period): see above. */
#define KS_RCU_PAUSE_NS     (4 * 1000 * 1000)
#define KS_RCU_MAX_PAUSE_NS (50 * 1000 * 1000)
#define KS_RCU_BATCH        512

#ifdef KS_TSAN
char ks_rcu_grace_token;
#endif

static struct ks_mutex barrier_lock = KS_MUTEX_INITIALIZER(KS_LOCK_RCU_BARRIER);
static pthread_cond_t barrier_done = PTHREAD_COND_INITIALIZER;
static atomic_ulong pending;      /* callbacks queued and not yet run */
static atomic_uint barrier_waits; /* ks_rcu_barrier() callers waiting */

#ifdef KS_LOCK_CHECK
static _Thread_local bool in_callback; /* this thread runs an RCU callback */
#endif

static pthread_once_t reclaimer_once = PTHREAD_ONCE_INIT;
static bool reclaimer_running;               /* written once under reclaimer_once */
static _Atomic(struct ks_rcu_head *) pushed; /* the calls not yet taken, newest first */
static _Atomic uint32_t sleeping;            /* futex word: 1 while the reclaimer waits */

/* The grace period has elapsed for @h: run its callback and count it done. */
static void run_callback(struct ks_rcu_head *h)
{
    /* pairs with the release in ks_rcu_call(): h->fn was written by the retiring thread */
    KS_TSAN_ACQUIRE(h);
    /* every read section that could see the object ended */
    KS_TSAN_ACQUIRE(&ks_rcu_grace_token);
#ifdef KS_LOCK_CHECK
    in_callback = true;
    h->fn(h);
    in_callback = false;
#else
    h->fn(h);
#endif
    /* release: what fn did happens before the barrier's caller returns (its acquire load) */
    if (atomic_fetch_sub_explicit(&pending, 1, memory_order_release) == 1) {
        /* under the lock: a barrier between its check and its wait cannot miss the broadcast */
        ks_mutex_lock(&barrier_lock);
        pthread_cond_broadcast(&barrier_done);
        ks_mutex_unlock(&barrier_lock);
    }
}

static void urcu_trampoline(struct rcu_head *head)
{
    run_callback(caa_container_of(head, struct ks_rcu_head, head));
}

/* Wait until something is pushed. */
static void reclaimer_sleep(void)
{
    atomic_store_explicit(&sleeping, 1, memory_order_seq_cst); /* Dekker with ks_rcu_call */
    while (!atomic_load_explicit(&pushed, memory_order_seq_cst) &&
           atomic_load_explicit(&sleeping, memory_order_seq_cst))
        ks__futex_wait(&sleeping, 1);
    atomic_store_explicit(&sleeping, 0, memory_order_relaxed);
}

/* After a batch: see the top of the file. */
static void pause_between_batches(void)
{
    int64_t start = ks__mono_ns();
    do {
        struct timespec pause = {0, KS_RCU_PAUSE_NS};
        nanosleep(&pause, NULL);
    } while (atomic_load_explicit(&pending, memory_order_relaxed) < KS_RCU_BATCH &&
             !atomic_load_explicit(&barrier_waits, memory_order_relaxed) &&
             ks__mono_ns() - start < KS_RCU_MAX_PAUSE_NS);
}

static void *reclaimer_main(void *arg)
{
    (void)arg;
    ks_rcu_register_thread(); /* callbacks may read RCU-protected data */
    for (;;) {
        /* acquire: pairs with the pushes' release, the heads and what they retire are visible */
        struct ks_rcu_head *h = atomic_exchange_explicit(&pushed, NULL, memory_order_acquire), *fifo = NULL;
        if (!h) {
            reclaimer_sleep();
            continue;
        }
        while (h) { /* newest first: reverse into the order of the calls */
            struct ks_rcu_head *next = h->next;
            h->next = fifo;
            fifo = h;
            h = next;
        }
        ks_rcu_synchronize();
        while (fifo) {
            struct ks_rcu_head *next = fifo->next;
            run_callback(fifo); /* may free fifo */
            fifo = next;
        }
        pause_between_batches();
    }
    return NULL;
}

static void reclaimer_start(void)
{
    pthread_t t;
    pthread_attr_t attr;
    if (pthread_attr_init(&attr))
        return;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    reclaimer_running = pthread_create(&t, &attr, reclaimer_main, NULL) == 0;
    pthread_attr_destroy(&attr);
}

void ks_rcu_call(struct ks_rcu_head *head, void (*fn)(struct ks_rcu_head *))
{
    head->fn = fn;
    KS_TSAN_RELEASE(head);
    /* relaxed: the callback's decrement follows this increment through the stack */
    atomic_fetch_add_explicit(&pending, 1, memory_order_relaxed);
    pthread_once(&reclaimer_once, reclaimer_start);
    if (!reclaimer_running) {
        urcu_memb_call_rcu(&head->head, urcu_trampoline);
        return;
    }
    struct ks_rcu_head *top = atomic_load_explicit(&pushed, memory_order_relaxed);
    do
        head->next = top;
    /* seq_cst: Dekker with reclaimer_sleep; release: the head is written before it is seen */
    while (!atomic_compare_exchange_weak_explicit(&pushed, &top, head, memory_order_seq_cst,
                                                  memory_order_relaxed));
    if (atomic_load_explicit(&sleeping, memory_order_seq_cst) &&
        atomic_exchange_explicit(&sleeping, 0, memory_order_seq_cst))
        ks__futex_wake(&sleeping, 1);
}

#ifdef KS_LOCK_CHECK
void ks__rcu_assert_fail(const char *what)
{
    fprintf(stderr, "ksched: RCU rule broken: %s\n", what);
    abort();
}
#endif

void ks_rcu_barrier(void)
{
    ks_rcu_assert_not_reading();
#ifdef KS_LOCK_CHECK
    if (in_callback)
        ks__rcu_assert_fail("ks_rcu_barrier() from an RCU callback");
#endif
    atomic_fetch_add_explicit(&barrier_waits, 1, memory_order_relaxed); /* cuts the reclaimer's pause */
    ks_mutex_lock(&barrier_lock);
    /* acquire: pairs with the callbacks' release decrements */
    while (atomic_load_explicit(&pending, memory_order_acquire))
        ks_cond_wait(&barrier_done, &barrier_lock);
    ks_mutex_unlock(&barrier_lock);
    atomic_fetch_sub_explicit(&barrier_waits, 1, memory_order_relaxed);
}
