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

#endif
