/*
 * lock.c - the lock-order checker's per-thread state and messages (include/ksched/base/lock.h).
 *
 * Compiled in every build: translation units built with KS_LOCK_CHECK (Debug, sanitizer
 * and fuzz builds, and the checker's own unit test in any build) record the ranks each thread
 * holds in ks__lock_held and each mutex's holder; the others never touch them.
 *
 * Context: any thread; the failures write one line to stderr and abort.
 */
#include "ksched/base/lock.h"

#include <stdio.h>
#include <stdlib.h>

_Thread_local struct ks_lock_held ks__lock_held;

static const char *const rank_names[KS_LOCK_RANK_COUNT] = {
#define KS_LOCK_NAME_(name, what) "KS_LOCK_" #name " (" what ")",
    KS_LOCK_RANKS(KS_LOCK_NAME_)
#undef KS_LOCK_NAME_
};

const char *ks_lock_rank_name(enum ks_lock_rank r)
{
    return (unsigned)r < KS_LOCK_RANK_COUNT ? rank_names[r] : "?";
}

void ks__lock_order_fail(enum ks_lock_rank r)
{
    uint64_t conflict = ks__lock_conflicts(r);
    /* the innermost lock held: the one whose holder is taking @r */
    enum ks_lock_rank held = conflict ? (enum ks_lock_rank)(63 - __builtin_clzll(conflict)) : r;
    fprintf(stderr, "ksched: lock order violated: taking %s while holding %s (include/ksched/base/lock.h)\n",
            ks_lock_rank_name(r), ks_lock_rank_name(held));
    abort();
}

void ks__lock_release_fail(enum ks_lock_rank r)
{
    fprintf(stderr, "ksched: lock order violated: releasing %s, which this thread does not hold\n",
            ks_lock_rank_name(r));
    abort();
}

void ks__lock_not_held_fail(const struct ks_mutex *m, const char *what)
{
    fprintf(stderr, "ksched: lock misuse: %s %s, which this thread does not hold\n", what,
            ks_lock_rank_name(m->rank));
    abort();
}
