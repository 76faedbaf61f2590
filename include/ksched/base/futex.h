/*
 * futex.h - sleeping on a 32-bit word until another thread changes it (Linux futexes,
 * process-private). The callers keep their own protocol on the word; these are the two
 * system calls, nothing more. Wake-ups may be spurious: a waiter re-checks its condition.
 *
 * Context: any thread; no allocation, no locks (C only: the word is a C11 atomic).
 */
#ifndef KSCHED_FUTEX_H
#define KSCHED_FUTEX_H

#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ks__futex_wait - sleep while *@word is @expect (returns at once if it is not). */
static inline void ks__futex_wait(_Atomic uint32_t *word, uint32_t expect)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expect, NULL, NULL, 0);
}

/* ks__futex_wake - wake up to @n threads sleeping on @word. */
static inline void ks__futex_wake(_Atomic uint32_t *word, int n)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

#endif
