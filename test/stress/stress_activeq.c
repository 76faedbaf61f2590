/*
 * stress_activeq.c - the lock-free activeQ under ThreadSanitizer: 3 producers push, remove
 * some entries through their handles, and consumers pop, all at once: one with
 * ks_activeq_pop_sc (no argument), or N with ks_activeq_pop_mc (argument N). A second
 * argument sets how many pops each consumer makes between two unlinkings of the deleted
 * prefix (ks__activeq_set_restructure_every): 1 makes the consumers' restructures race.
 *
 * Checked: every entry is popped exactly once or removed exactly once, never both and
 * never neither; at each quiescent point (producers done for the round) the entries left
 * come out in QueueSort order; release runs once per entry; a consumer sleeping on the
 * futex is woken by pushes and by close. About 1M operations in a normal build, scaled
 * down under TSan (ten times slower) to stay within the test budget.
 */
#include "ksched/base/rcu.h"
#include "ksched/internal/queue.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef KS_TSAN
enum { PER_ROUND = 15000, ROUNDS = 6 };
#else
enum { PER_ROUND = 50000, ROUNDS = 6 };
#endif
enum { PRODUCERS = 3, TOTAL = PRODUCERS * PER_ROUND * ROUNDS, REMOVE_EVERY = 7, EXTRA = 64 };

static struct ks_pod *pods;
static struct ks_queued_pod *items;
static struct ks_activeq_handle *handles;
static atomic_uchar *popped, *removed, *released;
static struct ks_activeq *aq;
static pthread_barrier_t round_start, round_end;
static atomic_int producers_done; /* producers finished with the current round */
static int consumers = 1;
static atomic_uint failures;

static void fail(const char *what, long i)
{
    if (atomic_fetch_add(&failures, 1) < 10)
        fprintf(stderr, "stress_activeq: %s (entry %ld)\n", what, i);
}

static bool less(const void *ctx, const struct ks_queued_pod *a, const struct ks_queued_pod *b)
{
    (void)ctx;
    if (a->pod->priority != b->pod->priority)
        return a->pod->priority > b->pod->priority;
    return a->timestamp_ns < b->timestamp_ns;
}

static void on_release(void *ctx, struct ks_queued_pod *qp)
{
    (void)ctx;
    if (atomic_fetch_add(&released[qp - items], 1) != 0)
        fail("released twice", qp - items);
}

static void take(struct ks_queued_pod *qp)
{
    long i = qp - items;
    if (atomic_exchange(&popped[i], 1))
        fail("popped twice", i);
    if (atomic_load(&removed[i]))
        fail("popped after it was removed", i);
}

struct producer {
    int id;
    uint64_t rng;
};

static void *produce(void *arg)
{
    struct producer *p = arg;
    ks_rcu_register_thread();
    for (int r = 0; r < ROUNDS; r++) {
        pthread_barrier_wait(&round_start);
        long base = ((long)r * PRODUCERS + p->id) * PER_ROUND;
        for (long k = 0; k < PER_ROUND; k++) {
            long i = base + k;
            if (ks_activeq_push_mp(aq, &items[i], &handles[i]) < 0)
                fail("push failed", i);
            /* remove an earlier entry of ours: it races with the consumer for it */
            if (k >= REMOVE_EVERY && k % REMOVE_EVERY == 0) {
                long victim = i - REMOVE_EVERY / 2;
                if (ks_activeq_remove(aq, &handles[victim]) && atomic_exchange(&removed[victim], 1))
                    fail("removed twice", victim);
            }
        }
        atomic_fetch_add(&producers_done, 1);
        pthread_barrier_wait(&round_end);
    }
    ks_rcu_unregister_thread();
    return NULL;
}

/* Drain what is left after a round, in order. Quiescent: no producer runs. */
static void drain_sorted(void)
{
    struct ks_queued_pod *prev = NULL, *qp;
    while ((qp = ks_activeq_pop_sc(aq, false))) {
        take(qp);
        if (prev && less(NULL, qp, prev))
            fail("out of order at a quiescent point", qp - items);
        prev = qp;
    }
}

/* Consumer @arg (an int): pops during each round; the first also drains after it. */
static void *consume(void *arg)
{
    const int id = *(const int *)arg;
    ks_rcu_register_thread();
    for (int r = 0; r < ROUNDS; r++) {
        pthread_barrier_wait(&round_start);
        /* pop concurrently with the producers (and the other consumers) until they are done */
        while (atomic_load(&producers_done) < PRODUCERS) {
            struct ks_queued_pod *qp = consumers == 1 ? ks_activeq_pop_sc(aq, false) : ks_activeq_pop_mc(aq);
            if (qp)
                take(qp);
        }
        pthread_barrier_wait(&round_end);
        if (id == 0)
            drain_sorted();
    }
    ks_rcu_unregister_thread();
    return NULL;
}

/* A consumer asleep on an empty queue, woken by each push and finally by close. */
static void *sleeper(void *arg)
{
    atomic_uint *got = arg;
    ks_rcu_register_thread();
    struct ks_queued_pod *qp;
    while ((qp = ks_activeq_pop_sc(aq, true)))
        atomic_fetch_add(got, 1);
    ks_rcu_unregister_thread();
    return NULL;
}

int main(int argc, char **argv)
{
    int every = argc > 2 ? atoi(argv[2]) : 0;
    if ((argc > 1 && ((consumers = atoi(argv[1])) < 1 || consumers > 8)) || every < 0) {
        fprintf(stderr, "usage: stress_activeq [CONSUMERS (1-8) [RESTRUCTURE_EVERY]]\n");
        return 2;
    }
    long all = TOTAL + EXTRA;
    pods = calloc(all, sizeof(*pods));
    items = calloc(all, sizeof(*items));
    handles = calloc(all, sizeof(*handles));
    popped = calloc(all, sizeof(*popped));
    removed = calloc(all, sizeof(*removed));
    released = calloc(all, sizeof(*released));
    if (!pods || !items || !handles || !popped || !removed || !released)
        return 1;
    uint64_t s = 88172645463325252ull;
    for (long i = 0; i < all; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        pods[i].priority = (int32_t)(s % 1000);
        items[i] = (struct ks_queued_pod){.pod = &pods[i], .timestamp_ns = i};
    }
    ks_rcu_register_thread();
    if (ks_activeq_create(less, NULL, on_release, NULL, &aq) < 0)
        return 1;
    if (every)
        ks__activeq_set_restructure_every(aq, (uint32_t)every);
    pthread_barrier_init(&round_start, NULL, PRODUCERS + consumers + 1);
    pthread_barrier_init(&round_end, NULL, PRODUCERS + consumers + 1);

    pthread_t prod[PRODUCERS], cons[8];
    struct producer args[PRODUCERS];
    int ids[8];
    for (int i = 0; i < PRODUCERS; i++) {
        args[i] = (struct producer){.id = i};
        pthread_create(&prod[i], NULL, produce, &args[i]);
    }
    for (int i = 0; i < consumers; i++) {
        ids[i] = i;
        pthread_create(&cons[i], NULL, consume, &ids[i]);
    }
    for (int r = 0; r < ROUNDS; r++) {
        atomic_store(&producers_done, 0); /* before anyone passes round_start */
        pthread_barrier_wait(&round_start);
        pthread_barrier_wait(&round_end);
    }
    for (int i = 0; i < PRODUCERS; i++)
        pthread_join(prod[i], NULL);
    for (int i = 0; i < consumers; i++)
        pthread_join(cons[i], NULL);

    long npopped = 0, nremoved = 0;
    for (long i = 0; i < TOTAL; i++) {
        int p = atomic_load(&popped[i]), r = atomic_load(&removed[i]);
        if (p == r)
            fail(p ? "both popped and removed" : "lost: neither popped nor removed", i);
        npopped += p;
        nremoved += r;
    }

    /* a sleeping consumer: woken by each push, then by close */
    atomic_uint got = 0;
    pthread_t sl;
    pthread_create(&sl, NULL, sleeper, &got);
    for (long i = TOTAL; i < all; i++) {
        ks_activeq_push_mp(aq, &items[i], NULL);
        if (i % 8 == 0)
            sched_yield(); /* let it fall asleep between some of them */
    }
    while (atomic_load(&got) < EXTRA)
        sched_yield();
    ks_activeq_close(aq);
    pthread_join(sl, NULL);

    /* destroy waits for the retired batches: every pushed entry is released exactly once */
    ks_activeq_destroy(aq);
    for (long i = 0; i < all; i++) {
        if (atomic_load(&released[i]) != 1)
            fail("not released exactly once", i);
    }
    printf("stress_activeq: %d producers, %d consumer(s), %ld operations: %ld popped, %ld removed, %u "
           "failures\n",
           PRODUCERS, consumers, (long)TOTAL + npopped + nremoved, npopped, nremoved, atomic_load(&failures));
    ks_rcu_unregister_thread();
    return atomic_load(&failures) ? 1 : 0;
}
