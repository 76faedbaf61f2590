/*
 * lock.h - ksched's mutexes: the one lock order, its check, and the adaptive and polling
 * mutexes shared by the scheduling thread and the binders.
 *
 * The lock order. Every mutex of ksched is a struct ks_mutex, given its rank below
 * (KS_LOCK_RANKS, outermost first) when it is initialised, and taken and released only
 * through ks_mutex_lock(), ks_mutex_trylock(), ks_mutex_lock_polling(), ks_mutex_unlock()
 * and the ks_cond_wait() pair. A thread that holds a lock
 * may take only locks of a greater rank: taking a rank lower than or equal to one it holds
 * is a bug, even when the two are different objects (two queues' locks, say: one rank is
 * never nested within itself, except CURL_SHARE below). pthread_cond_wait() on a ranked
 * mutex keeps its rank held. The comment on each rank says which lock it is and what its
 * holders take inside it today; the order allows more than that, never less.
 *
 * The check. With KS_LOCK_CHECK defined (CMake defines it for Debug builds, for the
 * ASan and TSan builds, KS_SANITIZE, and for the fuzz targets, KS_FUZZ), each thread
 * keeps the set of ranks it holds, and taking a lock out of order aborts with both locks
 * named, before blocking on it: the deadlock such an order makes possible shows as an
 * abort on the first run that takes the two locks in the wrong order, however unlucky its
 * timing would have to be to hang.
 * Each mutex also records the thread that holds it, so releasing a mutex the thread does
 * not hold aborts, and ks_mutex_assert_held() states a "the caller holds ..." contract as
 * a check (the kernel's lockdep_assert_held()). Without KS_LOCK_CHECK the wrappers are the
 * plain pthread calls.
 *
 * Adaptive and polling mutexes. The cache, the queue and the binders' FIFO are each taken
 * by the scheduling thread and by a binder within microseconds of each other. With a
 * plain mutex the loser sleeps in the kernel at once, and the winner's unlock becomes a
 * futex wake-up (5-10 us on these machines, paid by the scheduling thread). An adaptive
 * mutex spins a little first, and the critical sections are shorter than that spin, so
 * the loser usually gets the lock without sleeping and nobody is woken.
 *
 * Context: any thread; no allocation. Mirrors jemalloc's witness ranks (witness.h) and the
 * locking-order comment of kube-scheduler's cache.
 */
#ifndef KSCHED_LOCK_H
#define KSCHED_LOCK_H

#include <pthread.h>
#include <stdint.h>

#include "ksched/base/spin.h"

/*
 * The ranks, outermost first: X(NAME, "the lock"). The enum is KS_LOCK_<NAME>; the
 * string names the lock's file and field in the checker's messages.
 */
#define KS_LOCK_RANKS(X)                                                                                     \
    /* one HTTP answer at a time; held around ks_metrics_write() (METRICS_COLLECT and below) */              \
    X(SERVE_HTTP, "serve/serve_run.c http_lock")                                                             \
    /* the registry's collectors; held while they run (SERVE_METRICS, SCHED_METRICS and below) */            \
    X(METRICS_COLLECT, "base/metrics.c collect_lock")                                                        \
    /* serialises the scheduler's on_event callbacks, which run under it (SERVE_METRICS, */                  \
    /* SERVE_WRITER, SERVE_EVENTS, METRICS_REGISTRY, EXPLAIN_TABLE, SOAK_EVENTS) */                          \
    X(SCHED_EVENT, "engine/scheduler_internal.h event_lock")                                                 \
    /* serve's attempt starts and attached scheduler; its collector takes QUEUE inside */                    \
    X(SERVE_METRICS, "serve/serve_metrics.c lock")                                                           \
    /* the engine's attached scheduler; its collector takes CACHE and METRICS_REGISTRY inside */             \
    X(SCHED_METRICS, "engine/framework_metrics.h struct ks_sched_metrics lock")                              \
    /* `ksched schedule -o table`'s sections; a leaf, taken inside SCHED_EVENT */                            \
    X(EXPLAIN_TABLE, "cmd/explain_table.c lock")                                                             \
    /* the soak's scheduling thread control (pause, quit); a leaf */                                         \
    X(SOAK_CONTROL, "bench/harness/soak_run.c ctl_lock")                                                     \
    /* the soak's recorded scheduler events; a leaf, taken inside SCHED_EVENT */                             \
    X(SOAK_EVENTS, "bench/harness/soak_run.c ev_lock")                                                       \
    /* the soak's simulated API server; a leaf */                                                            \
    X(SOAK_API, "bench/harness/soak_run.c api_lock")                                                         \
    /* serve's informer-to-intake FIFO and the start-up flags; a leaf */                                     \
    X(SERVE_FIFO, "serve/serve_run.c lock")                                                                  \
    /* serve's object changes pending for the scheduling thread; a leaf */                                   \
    X(SERVE_INTAKE, "serve/serve_intake.c lock")                                                             \
    /* serve's PV and PVC objects and volume waits; checks run inside (RCU reads, INTERN) */                 \
    X(SERVE_VOLUMES, "serve/serve_volumes.c lock")                                                           \
    /* serve's API write FIFO and sent-condition memory; a leaf */                                           \
    X(SERVE_WRITER, "serve/serve_writer.c lock")                                                             \
    /* serve's Event series; a leaf */                                                                       \
    X(SERVE_EVENTS, "serve/serve_events.c lock")                                                             \
    /* the HTTP server's job lists; a leaf */                                                                \
    X(SERVE_HTTP_JOBS, "serve/serve_http.c lock")                                                            \
    /* cached TokenReview and SubjectAccessReview answers; a leaf */                                         \
    X(SERVE_AUTH_CACHE, "serve/serve_auth_cache.c lock")                                                     \
    /* the leader-election thread's quit flag; a leaf */                                                     \
    X(LEASE, "kube/lease.c lock")                                                                            \
    /* the API client's idle handles; a leaf */                                                              \
    X(KUBE_POOL, "kube/client.c pool_lock")                                                                  \
    /* the API client's bearer token; a leaf */                                                              \
    X(KUBE_TOKEN, "kube/client.c token_lock")                                                                \
    /* the API client's write rate limiter; a leaf */                                                        \
    X(KUBE_RATE, "kube/client.c rate_lock")                                                                  \
    /* the scheduler's flusher thread's quit flag; a leaf */                                                 \
    X(FLUSH, "engine/scheduler_internal.h flush_lock")                                                       \
    /* the binders' FIFO, job states and free jobs; a deterministic run's settling counts */                 \
    /* the pods waiting on Permit inside (PERMIT_WAIT) */                                                    \
    X(BIND, "engine/scheduler_internal.h bind_lock")                                                         \
    /* the worker pool's sleepers; a leaf */                                                                 \
    X(WORKERS, "base/workers.c lock")                                                                        \
    /* a framework's pods waiting on Permit; messages are interned inside (INTERN) */                        \
    X(PERMIT_WAIT, "engine/framework_internal.h wait_lock")                                                  \
    /* VolumeBinding's binding state; messages are interned inside (INTERN) */                               \
    X(VOLUME_BINDING, "plugins/volume_binding.c lock")                                                       \
    /* the nominated pods; a leaf */                                                                         \
    X(NOMINATOR, "queue/nominator.c lock")                                                                   \
    /* the scheduler cache; a leaf (interning and ks_rcu_call happen outside it) */                          \
    X(CACHE, "cache/cache_internal.h lock")                                                                  \
    /* a stripe of the scheduling queue's pods by name (QUEUE inside); PreEnqueue plugins */                 \
    /* run inside (INTERN) */                                                                                \
    X(QUEUE_POD, "queue/queue.c struct stripe lock")                                                         \
    /* the scheduling queue's backoffQ and unschedulable pods; PreEnqueue plugins and */                     \
    /* QueueingHints run inside (INTERN) */                                                                  \
    X(QUEUE, "queue/queue.c slow")                                                                           \
    /* DynamicResources' claim tracker; PreEnqueue and QueueingHints take it inside QUEUE (INTERN) */        \
    X(DYNAMIC_RESOURCES, "plugins/helpers/helper_dra_claims.c lock")                                         \
    /* the scheduler's pod groups (workload/pod_groups.c); a leaf, PreEnqueue takes it inside QUEUE */       \
    X(POD_GROUPS, "workload/pod_groups.c lock")                                                              \
    /* the preemptors whose victims' API calls are under way; a leaf, PreEnqueue takes it inside QUEUE */    \
    X(PREEMPTING, "engine/preemption_async.c lock")                                                          \
    /* the bench's record of DRA API writes, taken by binders; strings are looked up inside (INTERN) */      \
    X(BENCH_DRA, "bench/harness/bench_dra.c lock")                                                           \
    /* the metrics registry's families and series; a leaf */                                                 \
    X(METRICS_REGISTRY, "base/metrics.c lock")                                                               \
    /* the out-of-tree plugins added to the registry; a leaf */                                              \
    X(PLUGIN_REGISTRY, "plugins/registry.c add_lock")                                                        \
    /* the string table's insertions; a leaf */                                                              \
    X(INTERN, "base/intern.c lock")                                                                          \
    /* ks_rcu_barrier()'s wake-up of a waiter; a leaf */                                                     \
    X(RCU_BARRIER, "base/rcu.c barrier_lock")                                                                \
    /* libcurl's share locks, taken by libcurl inside curl calls only; libcurl holds two at */               \
    /* once in its own order, so this rank, alone, may nest within itself */                                 \
    X(CURL_SHARE, "kube/client.c share_locks")

enum ks_lock_rank {
#define KS_LOCK_ENUM_(name, what) KS_LOCK_##name,
    KS_LOCK_RANKS(KS_LOCK_ENUM_)
#undef KS_LOCK_ENUM_
        KS_LOCK_RANK_COUNT
};

/* The ranks that may be taken while the thread holds one of the same rank (a bit per rank). */
#define KS_LOCK_NESTING_RANKS (UINT64_C(1) << KS_LOCK_CURL_SHARE)

#ifdef __cplusplus
static_assert(KS_LOCK_RANK_COUNT <= 64, "the checker keeps the held ranks in a 64-bit mask");
#else
_Static_assert(KS_LOCK_RANK_COUNT <= 64, "the checker keeps the held ranks in a 64-bit mask");
#endif

/* ks_lock_rank_name - "KS_LOCK_QUEUE (queue/queue.c slow)"; "?" for a value that is no rank. */
const char *ks_lock_rank_name(enum ks_lock_rank r);

/* The checker's per-thread state (base/lock.c): the ranks held, and how many of each. */
struct ks_lock_held {
    uint64_t mask;
    uint8_t depth[KS_LOCK_RANK_COUNT];
};
#ifdef __cplusplus
extern thread_local struct ks_lock_held ks__lock_held;
#else
extern _Thread_local struct ks_lock_held ks__lock_held;
#endif

/* Write "taking @r while holding <the innermost held rank not below it>" to stderr and abort. */
__attribute__((noreturn, cold)) void ks__lock_order_fail(enum ks_lock_rank r);
/* Write "releasing @r, which this thread does not hold" to stderr and abort. */
__attribute__((noreturn, cold)) void ks__lock_release_fail(enum ks_lock_rank r);

/* The ranks the thread holds that forbid taking rank @r: those >= @r, less @r itself if it nests. */
static inline uint64_t ks__lock_conflicts(enum ks_lock_rank r)
{
    uint64_t bit = UINT64_C(1) << r;
    uint64_t conflict = ks__lock_held.mask & ~(bit - 1);
    return KS_LOCK_NESTING_RANKS & bit ? conflict & ~bit : conflict;
}

/* Abort unless the thread may take a lock of rank @r now. */
static inline void ks__lock_check(enum ks_lock_rank r)
{
    if (__builtin_expect(ks__lock_conflicts(r) != 0, 0))
        ks__lock_order_fail(r);
}

static inline void ks__lock_acquired(enum ks_lock_rank r)
{
    ks__lock_held.depth[r]++;
    ks__lock_held.mask |= UINT64_C(1) << r;
}

static inline void ks__lock_released(enum ks_lock_rank r)
{
    if (__builtin_expect(ks__lock_held.depth[r] == 0, 0))
        ks__lock_release_fail(r);
    if (--ks__lock_held.depth[r] == 0)
        ks__lock_held.mask &= ~(UINT64_C(1) << r);
}

/*
 * struct ks_mutex - a pthread mutex bound to its rank at init. @owner is the holding
 * thread's token while it holds it (kept with KS_LOCK_CHECK, 0 otherwise); it is in every
 * build so that the layout does not depend on the flag.
 */
struct ks_mutex {
    pthread_mutex_t m;
    enum ks_lock_rank rank;
    uintptr_t owner;
};

/* A static mutex of rank @r. */
#define KS_MUTEX_INITIALIZER(r)                                                                              \
    {                                                                                                        \
        PTHREAD_MUTEX_INITIALIZER, (r), 0                                                                    \
    }

/* The calling thread's token for struct ks_mutex's owner: its checker state's address. */
static inline uintptr_t ks__lock_self(void)
{
    return (uintptr_t)&ks__lock_held;
}

/* Write "@what @m's rank, which this thread does not hold" to stderr and abort. */
__attribute__((noreturn, cold)) void ks__lock_not_held_fail(const struct ks_mutex *m, const char *what);

/* ks_mutex_init - a default mutex of rank @r: pthread_mutex_init()'s result. */
static inline int ks_mutex_init(struct ks_mutex *m, enum ks_lock_rank r)
{
    m->rank = r;
    m->owner = 0;
    return pthread_mutex_init(&m->m, NULL);
}

/* ks_mutex_init_adaptive - ks_mutex_init() of an adaptive mutex where glibc has one. */
static inline int ks_mutex_init_adaptive(struct ks_mutex *m, enum ks_lock_rank r)
{
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
    pthread_mutexattr_t attr;
    int rc = pthread_mutexattr_init(&attr);
    if (rc)
        return rc;
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
    m->rank = r;
    m->owner = 0;
    rc = pthread_mutex_init(&m->m, &attr);
    pthread_mutexattr_destroy(&attr);
    return rc;
#else
    return ks_mutex_init(m, r);
#endif
}

/* ks_mutex_destroy - pthread_mutex_destroy() of a mutex nobody holds. */
static inline void ks_mutex_destroy(struct ks_mutex *m)
{
    pthread_mutex_destroy(&m->m);
}

/* Records that this thread now holds @m (with KS_LOCK_CHECK). */
static inline void ks__mutex_acquired(struct ks_mutex *m)
{
#ifdef KS_LOCK_CHECK
    ks__lock_acquired(m->rank);
    __atomic_store_n(&m->owner, ks__lock_self(), __ATOMIC_RELAXED);
#else
    (void)m;
#endif
}

/* ks_mutex_lock - take @m (its rank checked with KS_LOCK_CHECK, before blocking). */
static inline void ks_mutex_lock(struct ks_mutex *m)
{
#ifdef KS_LOCK_CHECK
    ks__lock_check(m->rank);
#endif
    pthread_mutex_lock(&m->m);
    ks__mutex_acquired(m);
}

/* ks_mutex_trylock - pthread_mutex_trylock() of @m: 0 when taken. Checked as ks_mutex_lock(). */
static inline int ks_mutex_trylock(struct ks_mutex *m)
{
#ifdef KS_LOCK_CHECK
    ks__lock_check(m->rank);
#endif
    int rc = pthread_mutex_trylock(&m->m);
    if (rc == 0)
        ks__mutex_acquired(m);
    return rc;
}

/*
 * ks_mutex_assert_held - with KS_LOCK_CHECK, abort unless the calling thread holds @m
 * itself (not merely a lock of its rank); nothing otherwise. For the functions whose
 * contract is "the caller holds ...".
 */
static inline void ks_mutex_assert_held(const struct ks_mutex *m)
{
#ifdef KS_LOCK_CHECK
    if (__builtin_expect(__atomic_load_n(&m->owner, __ATOMIC_RELAXED) != ks__lock_self(), 0))
        ks__lock_not_held_fail(m, "expected to hold");
#else
    (void)m;
#endif
}

/* Records that this thread no longer holds @m (with KS_LOCK_CHECK, which aborts if it did not). */
static inline void ks__mutex_releasing(struct ks_mutex *m)
{
#ifdef KS_LOCK_CHECK
    if (__builtin_expect(__atomic_load_n(&m->owner, __ATOMIC_RELAXED) != ks__lock_self(), 0))
        ks__lock_not_held_fail(m, "releasing");
    __atomic_store_n(&m->owner, 0, __ATOMIC_RELAXED);
    ks__lock_released(m->rank);
#else
    (void)m;
#endif
}

/* ks_mutex_unlock - release @m, which the calling thread holds. */
static inline void ks_mutex_unlock(struct ks_mutex *m)
{
    ks__mutex_releasing(m);
    pthread_mutex_unlock(&m->m);
}

/*
 * ks_cond_wait - pthread_cond_wait(@c) on @m, which the caller holds. Its rank stays in the
 * thread's held set while it waits (the thread takes nothing else meanwhile); @m's owner is
 * whoever takes it in between, and the caller again on return.
 */
static inline void ks_cond_wait(pthread_cond_t *c, struct ks_mutex *m)
{
#ifdef KS_LOCK_CHECK
    ks_mutex_assert_held(m);
    __atomic_store_n(&m->owner, 0, __ATOMIC_RELAXED);
#endif
    pthread_cond_wait(c, &m->m);
#ifdef KS_LOCK_CHECK
    __atomic_store_n(&m->owner, ks__lock_self(), __ATOMIC_RELAXED);
#endif
}

/* ks_cond_timedwait - pthread_cond_timedwait(@c, @abstime) on @m, as ks_cond_wait(): its result. */
static inline int ks_cond_timedwait(pthread_cond_t *c, struct ks_mutex *m, const struct timespec *abstime)
{
#ifdef KS_LOCK_CHECK
    ks_mutex_assert_held(m);
    __atomic_store_n(&m->owner, 0, __ATOMIC_RELAXED);
#endif
    int rc = pthread_cond_timedwait(c, &m->m, abstime);
#ifdef KS_LOCK_CHECK
    __atomic_store_n(&m->owner, ks__lock_self(), __ATOMIC_RELAXED);
#endif
    return rc;
}

/*
 * ks_mutex_lock_polling - take @m, polling it (spin.h) for up to @limit_ns before sleeping
 * on it. For a lock whose holder may keep it longer than an adaptive mutex spins (the
 * cache's, while the scheduling thread publishes a snapshot): a binder that slept on it
 * would make that thread's unlock a futex wake-up.
 */
static inline void ks_mutex_lock_polling(struct ks_mutex *m, int64_t limit_ns)
{
    struct ks_spin sp = {0, 0};
#ifdef KS_LOCK_CHECK
    ks__lock_check(m->rank);
#endif
    while (pthread_mutex_trylock(&m->m)) {
        if (!ks__spin_step(&sp, limit_ns)) {
            pthread_mutex_lock(&m->m);
            break;
        }
    }
    ks__mutex_acquired(m);
}

#endif
