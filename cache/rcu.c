/*
 * rcu.c - out-of-line parts of include/ksched/rcu.h: deferred reclamation through
 * liburcu's call_rcu thread, with the TSan grace-period acquire before each callback.
 *
 * ks_rcu_barrier() is ours rather than urcu_memb_barrier(): liburcu's barrier hands
 * memory between threads through its own uninstrumented queues, which ThreadSanitizer
 * reports as races inside the library. An atomic count of pending callbacks gives the
 * same guarantee ("every callback queued before the call has run") in terms TSan
 * understands. ks_rcu_call() only increments it (it never blocks: liburcu's enqueue is
 * wait-free); the callback that brings it to zero takes the barrier's mutex to wake a
 * waiter, on liburcu's call_rcu thread.
 */
#include "ksched/rcu.h"

#include "ksched/lock.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#ifdef KS_TSAN
char ks_rcu_grace_token;
#endif

static pthread_mutex_t barrier_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t barrier_done = PTHREAD_COND_INITIALIZER;
static atomic_ulong pending; /* callbacks queued and not yet run */

static void trampoline(struct rcu_head *head)
{
    struct ks_rcu_head *h = caa_container_of(head, struct ks_rcu_head, head);
    /* pairs with the release in ks_rcu_call(): h->fn was written by the retiring thread */
    KS_TSAN_ACQUIRE(h);
    /* the grace period has elapsed: every read section that could see the object ended */
    KS_TSAN_ACQUIRE(&ks_rcu_grace_token);
    h->fn(h);
    /* release: what fn did happens before the barrier's caller returns (its acquire load) */
    if (atomic_fetch_sub_explicit(&pending, 1, memory_order_release) == 1) {
        /* under the lock: a barrier between its check and its wait cannot miss the broadcast */
        ks_mutex_lock(&barrier_lock, KS_LOCK_RCU_BARRIER);
        pthread_cond_broadcast(&barrier_done);
        ks_mutex_unlock(&barrier_lock, KS_LOCK_RCU_BARRIER);
    }
}

void ks_rcu_call(struct ks_rcu_head *head, void (*fn)(struct ks_rcu_head *))
{
    head->fn = fn;
    KS_TSAN_RELEASE(head);
    /* relaxed: the callback's decrement follows this increment through liburcu's queue */
    atomic_fetch_add_explicit(&pending, 1, memory_order_relaxed);
    urcu_memb_call_rcu(&head->head, trampoline);
}

void ks_rcu_barrier(void)
{
    ks_mutex_lock(&barrier_lock, KS_LOCK_RCU_BARRIER);
    /* acquire: pairs with the callbacks' release decrements */
    while (atomic_load_explicit(&pending, memory_order_acquire))
        pthread_cond_wait(&barrier_done, &barrier_lock);
    ks_mutex_unlock(&barrier_lock, KS_LOCK_RCU_BARRIER);
}
