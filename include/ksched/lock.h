/*
 * lock.h - mutexes shared by the scheduling thread and the binders.
 *
 * The cache, the queue and the binders' FIFO are each taken by the scheduling thread and
 * by a binder within microseconds of each other. With a plain mutex the loser sleeps in
 * the kernel at once, and the winner's unlock becomes a futex wake-up (5-10 us on these
 * machines, paid by the scheduling thread). An adaptive mutex spins a little first, and
 * the critical sections are shorter than that spin, so the loser usually gets the lock
 * without sleeping and nobody is woken.
 */
#ifndef KSCHED_LOCK_H
#define KSCHED_LOCK_H

#include <pthread.h>

#include "ksched/spin.h"

/* ks_mutex_init_adaptive - pthread_mutex_init() of an adaptive mutex where glibc has one. */
static inline int ks_mutex_init_adaptive(pthread_mutex_t *m)
{
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
    pthread_mutexattr_t attr;
    int rc = pthread_mutexattr_init(&attr);
    if (rc)
        return rc;
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
    rc = pthread_mutex_init(m, &attr);
    pthread_mutexattr_destroy(&attr);
    return rc;
#else
    return pthread_mutex_init(m, NULL);
#endif
}

/*
 * ks_mutex_lock_polling - lock @m, polling it (spin.h) for up to @limit_ns before sleeping
 * on it. For a lock whose holder may keep it longer than an adaptive mutex spins (the
 * cache's, while the scheduling thread publishes a snapshot): a binder that slept on it
 * would make that thread's unlock a futex wake-up.
 */
static inline void ks_mutex_lock_polling(pthread_mutex_t *m, int64_t limit_ns)
{
    struct ks_spin sp = {0};
    while (pthread_mutex_trylock(m)) {
        if (!ks__spin_step(&sp, limit_ns)) {
            pthread_mutex_lock(m);
            return;
        }
    }
}

#endif
