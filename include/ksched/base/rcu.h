/*
 * rcu.h - ksched's use of liburcu (memb flavour), with ThreadSanitizer annotations.
 *
 * Readers: ks_rcu_read_lock() / ks_rcu_read_unlock() around ks_rcu_deref(). Read sections
 * nest, and may allocate and take ksched's mutexes (memb read sections are preemptible);
 * what one must never do is wait for a grace period (ks_rcu_synchronize, ks_rcu_barrier:
 * a deadlock, checked under KS_LOCK_CHECK). While a section lasts, nothing retired after it
 * began is reclaimed, so a long one costs memory, not correctness: the scheduling cycle's
 * section spans the cycle, PostFilter and its allocations included. Writers:
 * ks_rcu_publish() a fully built object, then retire the old one with ks_rcu_call() (or
 * ks_rcu_synchronize() and free). Every thread that reads registers once with
 * ks_rcu_register_thread().
 *
 * TSan cannot see liburcu 0.13's inline-asm barriers. Under KS_TSAN the pointer itself is
 * accessed with C11-style release/acquire builtins (which TSan models), and two
 * annotations give the grace period its meaning: every read-side unlock releases a token
 * that the reclaimer acquires after the grace period, so "every reader that could see the
 * old version finished before it is freed" is visible to TSan. Outside TSan the plain
 * liburcu primitives are used, inlined (_LGPL_SOURCE).
 */
#ifndef KSCHED_RCU_H
#define KSCHED_RCU_H

#if !defined(KS_TSAN) && !defined(_LGPL_SOURCE)
#define _LGPL_SOURCE
#endif
/* order matters: the flavour header maps call_rcu and friends to urcu_memb_* */
#include <urcu/urcu-memb.h>
// clang-format off
#include <urcu/call-rcu.h>
#include <urcu/pointer.h>
// clang-format on

#ifdef KS_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
extern char ks_rcu_grace_token;
#define KS_TSAN_ACQUIRE(addr) __tsan_acquire((void *)(addr))
#define KS_TSAN_RELEASE(addr) __tsan_release((void *)(addr))
/* ks_rcu_publish - make @ptr (fully initialised) visible at @slot. */
#define ks_rcu_publish(slot, ptr) __atomic_store_n(&(slot), (ptr), __ATOMIC_RELEASE)
/* ks_rcu_deref - load @slot inside a read section. */
#define ks_rcu_deref(slot) __atomic_load_n(&(slot), __ATOMIC_ACQUIRE)
#else
#define KS_TSAN_ACQUIRE(addr)     ((void)0)
#define KS_TSAN_RELEASE(addr)     ((void)0)
#define ks_rcu_publish(slot, ptr) rcu_assign_pointer((slot), (ptr))
#define ks_rcu_deref(slot)        rcu_dereference(slot)
#endif

/* An object retired through ks_rcu_call() embeds one of these. */
struct ks_rcu_head {
    struct rcu_head head; /* for liburcu's call_rcu thread, when the reclaimer could not start */
    struct ks_rcu_head *next;
    void (*fn)(struct ks_rcu_head *);
};

static inline void ks_rcu_register_thread(void)
{
    urcu_memb_register_thread();
}

static inline void ks_rcu_unregister_thread(void)
{
    urcu_memb_unregister_thread();
}

static inline void ks_rcu_read_lock(void)
{
    urcu_memb_read_lock();
}

static inline void ks_rcu_read_unlock(void)
{
    KS_TSAN_RELEASE(&ks_rcu_grace_token);
    urcu_memb_read_unlock();
}

/*
 * ks_rcu_assert_reading / ks_rcu_assert_not_reading - with KS_LOCK_CHECK (debug and
 * sanitizer builds), abort unless the calling thread is (is not) inside a read section;
 * otherwise nothing. For functions whose contract is to run inside one (they dereference
 * published pointers), or that may block (ks_rcu_synchronize, ks_rcu_barrier).
 */
#ifdef KS_LOCK_CHECK
void ks__rcu_assert_fail(const char *what);
#define ks_rcu_assert_reading()                                                                              \
    ((void)(urcu_memb_read_ongoing() || (ks__rcu_assert_fail("outside an RCU read section"), 0)))
#define ks_rcu_assert_not_reading()                                                                          \
    ((void)(!urcu_memb_read_ongoing() || (ks__rcu_assert_fail("inside an RCU read section"), 0)))
#else
#define ks_rcu_assert_reading()     ((void)0)
#define ks_rcu_assert_not_reading() ((void)0)
#endif

/* ks_rcu_synchronize - wait until every pre-existing read section has ended. Blocks; not inside one. */
static inline void ks_rcu_synchronize(void)
{
    ks_rcu_assert_not_reading();
    urcu_memb_synchronize_rcu();
    KS_TSAN_ACQUIRE(&ks_rcu_grace_token);
}

/*
 * ks_rcu_call - run @fn(@head) after a grace period, on the reclaimer thread (base/rcu.c):
 * at once when the reclaimer is idle, else when its pause after the last batch ends (4 ms,
 * prolonged up to 50 ms while fewer than 512 calls wait; cut short by ks_rcu_barrier()).
 * Callbacks run one at a time, in the order of the calls. The process's first call starts
 * the reclaimer thread; after that a call takes no lock and never waits (waking a sleeping
 * reclaimer is one system call). Any thread, inside a read section or not.
 */
void ks_rcu_call(struct ks_rcu_head *head, void (*fn)(struct ks_rcu_head *));

/*
 * ks_rcu_barrier - wait until every callback queued by ks_rcu_call() has run. Blocks. Not
 * inside a read section (the grace period the callbacks wait for would wait for the
 * caller) nor from a callback (it would wait for itself): builds with KS_LOCK_CHECK abort
 * on either.
 */
void ks_rcu_barrier(void);

#endif
