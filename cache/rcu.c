/*
 * rcu.c - out-of-line parts of include/ksched/rcu.h: deferred reclamation through
 * liburcu's call_rcu thread, with the TSan grace-period acquire before each callback.
 *
 * ks_rcu_barrier() is ours rather than urcu_memb_barrier(): liburcu's barrier hands
 * memory between threads through its own uninstrumented queues, which ThreadSanitizer
 * reports as races inside the library. A count of pending callbacks under a mutex gives
 * the same guarantee ("every callback queued before the call has run") in terms TSan
 * understands, at the cost of one uncontended lock per retired object.
 */
#include "ksched/rcu.h"

#include <pthread.h>
#include <stddef.h>

#ifdef KS_TSAN
char ks_rcu_grace_token;
#endif

static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pending_done = PTHREAD_COND_INITIALIZER;
static unsigned long pending; /* callbacks queued and not yet run; guarded by pending_lock */

static void trampoline(struct rcu_head *head)
{
    struct ks_rcu_head *h = caa_container_of(head, struct ks_rcu_head, head);
    /* pairs with the release in ks_rcu_call(): h->fn was written by the retiring thread */
    KS_TSAN_ACQUIRE(h);
    /* the grace period has elapsed: every read section that could see the object ended */
    KS_TSAN_ACQUIRE(&ks_rcu_grace_token);
    h->fn(h);
    pthread_mutex_lock(&pending_lock);
    if (--pending == 0)
        pthread_cond_broadcast(&pending_done);
    pthread_mutex_unlock(&pending_lock);
}

void ks_rcu_call(struct ks_rcu_head *head, void (*fn)(struct ks_rcu_head *))
{
    head->fn = fn;
    KS_TSAN_RELEASE(head);
    pthread_mutex_lock(&pending_lock);
    pending++;
    pthread_mutex_unlock(&pending_lock);
    urcu_memb_call_rcu(&head->head, trampoline);
}

void ks_rcu_barrier(void)
{
    pthread_mutex_lock(&pending_lock);
    while (pending)
        pthread_cond_wait(&pending_done, &pending_lock);
    pthread_mutex_unlock(&pending_lock);
}
