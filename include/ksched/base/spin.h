/*
 * spin.h - polling before sleeping, for the threads of the scheduling loop (the worker
 * pool's idle threads, adaptive locks).
 *
 * A futex wake-up costs the waker a system call and, in a VM, an inter-processor
 * interrupt: more than a scheduling cycle's share of it (docs/perf.md, "Design
 * constants"), so a thread
 * that expects work within microseconds polls a flag for a while first. ks__spin_step()
 * is one poll's pause: every 8th call yields the core (a thread or process waiting for
 * it goes first: the polling thread must never starve the one that makes its work), every
 * 256th reads the clock, and it returns false once @limit_ns have passed since the first
 * clock read (the 256th poll: the limit starts after that many polls, not at the first).
 *
 * The yield period matters on a two-core machine, where the worker pool's idle thread
 * polls on the core the scheduling thread does not use, which it shares with the binders
 * and the RCU reclaimer: a thread that wakes there with work waits for the poller's
 * yield, so a long period (64 polls) delays it, and a short one (2) spends the core in
 * system calls; 8 is between the two (paired SchedulingBasic runs).
 *
 * Context: any thread; no allocation, no locks.
 */
#ifndef KSCHED_SPIN_H
#define KSCHED_SPIN_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

static inline void ks__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static inline int64_t ks__mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct ks_spin {
    uint32_t spins;
    int64_t deadline; /* 0 until the first clock read */
};

static inline bool ks__spin_step(struct ks_spin *sp, int64_t limit_ns)
{
    uint32_t n = sp->spins++;
    ks__cpu_relax();
    if ((n & 7) == 7)
        sched_yield();
    if ((n & 255) != 255)
        return true;
    int64_t t = ks__mono_ns();
    if (!sp->deadline) {
        sp->deadline = t + limit_ns;
        return true;
    }
    return t <= sp->deadline;
}

#endif
