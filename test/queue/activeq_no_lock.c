/*
 * activeq_no_lock.c - ks_activeq_push_mp and ks_activeq_pop_sc take no lock and allocate
 * nothing once the node pools hold as many nodes as the queue needs.
 *
 * This program defines the pthread mutex calls and the allocator entry points itself, so
 * every call of them in the process comes here first (the activeQ's own through static
 * linking, the shared libraries' through the dynamic symbol table: the executable is
 * linked with its symbols exported), counts the calls made on the measuring thread while
 * it watches, and forwards to glibc. It fills the pools first (30,000 entries pushed,
 * 20,000 popped, a grace period), then pops and pushes 100,000 entries around a queue of
 * 10,000 while watching, in rounds of 10,000 with a grace period (unwatched) between them
 * so that the pools never run dry. Exit 0 when nothing was counted; 1 with the counts.
 *
 * Release builds only: the sanitizers define the same entry points.
 */
#include "ksched/base/rcu.h"
#include "ksched/internal/queue.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
void *__libc_memalign(size_t align, size_t size);

enum { HELD = 10000, SPARE = 20000, ROUND = 10000, ROUNDS = 10 };

static _Thread_local bool watching;
static atomic_long locks, allocs;

static inline void count(atomic_long *c)
{
    if (watching)
        atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

typedef int mutex_fn(pthread_mutex_t *);

/* glibc's @name (dlsym takes no lock through these definitions: glibc's own calls are internal). */
static mutex_fn *next_mutex_fn(mutex_fn *_Atomic *cache, const char *name)
{
    mutex_fn *f = atomic_load_explicit(cache, memory_order_acquire);
    if (!f) {
        f = (mutex_fn *)dlsym(RTLD_NEXT, name);
        atomic_store_explicit(cache, f, memory_order_release);
    }
    return f;
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
    static mutex_fn *_Atomic next;
    count(&locks);
    return next_mutex_fn(&next, "pthread_mutex_lock")(m);
}

int pthread_mutex_trylock(pthread_mutex_t *m)
{
    static mutex_fn *_Atomic next;
    count(&locks);
    return next_mutex_fn(&next, "pthread_mutex_trylock")(m);
}

void *malloc(size_t size)
{
    count(&allocs);
    return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
    count(&allocs);
    return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
    count(&allocs);
    return __libc_realloc(p, size);
}

void *aligned_alloc(size_t align, size_t size)
{
    count(&allocs);
    return __libc_memalign(align, size);
}

int posix_memalign(void **out, size_t align, size_t size)
{
    count(&allocs);
    *out = __libc_memalign(align, size);
    return *out ? 0 : 12 /* ENOMEM */;
}

static bool less(const void *ctx, const struct ks_queued_pod *a, const struct ks_queued_pod *b)
{
    (void)ctx;
    if (a->pod->priority != b->pod->priority)
        return a->pod->priority > b->pod->priority;
    return a->timestamp_ns < b->timestamp_ns;
}

/* Pop one entry and push it back as a new arrival, @n times. */
static int cycle(struct ks_activeq *aq, long n, int64_t *clock)
{
    for (long i = 0; i < n; i++) {
        struct ks_queued_pod *qp = ks_activeq_pop_sc(aq, false);
        if (!qp)
            return -1;
        qp->timestamp_ns = ++*clock;
        if (ks_activeq_push_mp(aq, qp, NULL) < 0)
            return -1;
    }
    return 0;
}

int main(void)
{
    static struct ks_pod pods[4];
    struct ks_queued_pod *items = calloc(HELD + SPARE, sizeof(*items));
    struct ks_activeq *aq;
    int64_t clock = 0;
    if (!items)
        return 1;
    for (int i = 0; i < 4; i++)
        pods[i].priority = i * 1000;
    ks_rcu_register_thread();

    /* the counters see this thread's calls, from this program and from liburcu */
    watching = true;
    void *volatile p = malloc(16);
    ks_rcu_synchronize(); /* liburcu locks its grace-period mutex */
    watching = false;
    free(p);
    long seen_locks = atomic_exchange(&locks, 0), seen_allocs = atomic_exchange(&allocs, 0);
    if (!seen_locks || !seen_allocs) {
        fprintf(stderr, "activeq_no_lock: calls not seen: %ld lock calls, %ld allocations\n", seen_locks,
                seen_allocs);
        return 1;
    }

    if (ks_activeq_create(less, NULL, NULL, NULL, &aq) < 0)
        return 1;
    for (long i = 0; i < HELD + SPARE; i++) {
        items[i] = (struct ks_queued_pod){.pod = &pods[i % 7 == 0 ? 1 + i % 3 : 0], .timestamp_ns = ++clock};
        if (ks_activeq_push_mp(aq, &items[i], NULL) < 0)
            return 1;
    }
    for (long i = 0; i < SPARE; i++) {
        if (!ks_activeq_pop_sc(aq, false))
            return 1;
    }
    int rc = 0;
    for (int r = 0; r < ROUNDS && rc == 0; r++) {
        /* every node retired so far is back in its pool */
        ks_rcu_barrier();
        watching = true;
        rc = cycle(aq, ROUND, &clock);
        watching = false;
    }

    long nlocks = atomic_load(&locks), nallocs = atomic_load(&allocs);
    printf("activeq_no_lock: %d pops and pushes around %d entries: %ld lock calls, %ld allocations\n",
           ROUND * ROUNDS, HELD, nlocks, nallocs);
    ks_activeq_destroy(aq);
    ks_rcu_unregister_thread();
    free(items);
    return rc == 0 && nlocks == 0 && nallocs == 0 ? 0 : 1;
}
