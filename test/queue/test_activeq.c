/*
 * test_activeq.c - the lock-free active queue on its own: QueueSort order through many
 * restructures, keys frozen at push, removal through handles, single- and multi-consumer
 * pops, entries released exactly once, a sleeping consumer woken by a push and by close.
 */
#include "queue_helpers.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

enum { N = 5000 };

static struct ks_pod pods[N];
static struct ks_queued_pod qps[N];
static atomic_int released[N];

static void on_release(void *ctx, struct ks_queued_pod *qp)
{
    (void)ctx;
    atomic_fetch_add(&released[qp - qps], 1);
}

static struct ks_activeq *make(void)
{
    qt_rcu();
    struct ks_activeq *aq;
    cr_assert_eq(ks_activeq_create(qt_less, NULL, on_release, NULL, &aq), 0);
    for (int i = 0; i < N; i++) {
        pods[i] = (struct ks_pod){.priority = (int32_t)((i * 7919) % 97)};
        qps[i] = (struct ks_queued_pod){.pod = &pods[i], .timestamp_ns = i};
        atomic_store(&released[i], 0);
    }
    return aq;
}

static void expect_sorted(struct ks_queued_pod *const *got, int n)
{
    for (int i = 1; i < n; i++)
        cr_assert_not(qt_less(NULL, got[i], got[i - 1]),
                      "pop %d (prio %d ts %lld) before pop %d (prio %d ts %lld)", i, got[i]->pod->priority,
                      (long long)got[i]->timestamp_ns, i - 1, got[i - 1]->pod->priority,
                      (long long)got[i - 1]->timestamp_ns);
}

Test(queue_activeq, pops_every_entry_once_in_order)
{
    struct ks_activeq *aq = make();
    static struct ks_queued_pod *got[N];
    for (int i = 0; i < N; i++)
        cr_assert_eq(ks_activeq_push_mp(aq, &qps[i], NULL), 0);
    cr_expect_eq(ks_activeq_walk(aq, NULL, NULL), (uint32_t)N);
    /* interleave: pop half, push nothing, then the rest */
    for (int i = 0; i < N; i++) {
        got[i] = ks_activeq_pop_sc(aq, false);
        cr_assert_not_null(got[i], "pop %d of %d", i, N);
    }
    cr_expect_null(ks_activeq_pop_sc(aq, false));
    cr_expect(ks_activeq_empty(aq));
    expect_sorted(got, N);
    static bool seen[N];
    for (int i = 0; i < N; i++) {
        cr_assert_not(seen[got[i] - qps], "entry %ld popped twice", (long)(got[i] - qps));
        seen[got[i] - qps] = true;
    }
    ks_activeq_destroy(aq);
    for (int i = 0; i < N; i++)
        cr_assert_eq(atomic_load(&released[i]), 1, "entry %d released %d times", i,
                     atomic_load(&released[i]));
}

/*
 * A queue popped dry unlinks what it deleted: pushes after it walk no deleted prefix (the
 * periodic restructure alone left up to restructure_every - 1 deleted nodes linked, which
 * every later push walked at each level).
 */
Test(queue_activeq, a_queue_popped_dry_keeps_no_deleted_prefix)
{
    struct ks_activeq *aq = make();
    enum { SOME = 100 }; /* fewer than the 128 pops between periodic restructures */
    for (int i = 0; i < SOME; i++)
        cr_assert_eq(ks_activeq_push_mp(aq, &qps[i], NULL), 0);
    for (int i = 0; i < SOME; i++)
        cr_assert_not_null(ks_activeq_pop_sc(aq, false));
    cr_expect_eq(ks__activeq_linked(aq, 0), SOME,
                 "the deleted nodes stay linked until the queue is found empty");
    cr_expect_null(ks_activeq_pop_sc(aq, false));
    /* the last deleted node stays as the head's marker */
    cr_expect_leq(ks__activeq_linked(aq, 0), 1, "%u nodes still linked", ks__activeq_linked(aq, 0));
    cr_assert_eq(ks_activeq_push_mp(aq, &qps[SOME], NULL), 0);
    cr_expect_eq(ks_activeq_pop_sc(aq, false), &qps[SOME]);
    ks_activeq_destroy(aq);
}

/*
 * Entries that sort before the last deleted one, pushed after a drain, still get their
 * towers: the deleted node the head keeps is not left at the front of the upper levels,
 * where every insert before it would stop building (and then walk level 0 from the head:
 * quadratic in a burst). Eight rounds, so some round's last deleted node is tall.
 */
Test(queue_activeq, entries_pushed_after_a_drain_get_their_towers)
{
    struct ks_activeq *aq = make();
    enum { HALF = 1000 };
    for (int round = 0; round < 8; round++) {
        for (int i = 0; i < HALF; i++) {
            pods[i] = (struct ks_pod){.priority = 0};
            qps[i] = (struct ks_queued_pod){.pod = &pods[i], .timestamp_ns = i};
            cr_assert_eq(ks_activeq_push_mp(aq, &qps[i], NULL), 0);
        }
        while (ks_activeq_pop_sc(aq, false))
            ;
        for (int i = HALF; i < 2 * HALF; i++) {
            pods[i] = (struct ks_pod){.priority = 10};
            qps[i] = (struct ks_queued_pod){.pod = &pods[i], .timestamp_ns = i};
            cr_assert_eq(ks_activeq_push_mp(aq, &qps[i], NULL), 0);
        }
        /* about half of the entries reach level 1 */
        cr_expect_gt(ks__activeq_linked(aq, 1), HALF / 4, "round %d: %u of %d entries at level 1", round,
                     ks__activeq_linked(aq, 1), HALF);
        while (ks_activeq_pop_sc(aq, false))
            ;
    }
    ks_activeq_destroy(aq);
}

Test(queue_activeq, mixed_pushes_and_pops_keep_order)
{
    struct ks_activeq *aq = make();
    /* push in waves, popping a few between: every pop returns the current minimum */
    int next = 0, popped = 0;
    while (popped < N) {
        for (int k = 0; k < 50 && next < N; k++)
            cr_assert_eq(ks_activeq_push_mp(aq, &qps[next++], NULL), 0);
        for (int k = 0; k < 30 && popped < next; k++) {
            struct ks_queued_pod *min = NULL;
            for (int i = 0; i < next; i++) {
                if (!atomic_load(&released[i]) && qps[i].attempts == 0 &&
                    (!min || qt_less(NULL, &qps[i], min)))
                    min = &qps[i];
            }
            struct ks_queued_pod *qp = ks_activeq_pop_sc(aq, false);
            cr_assert_eq(qp, min, "pop %d: got %ld, want %ld", popped, (long)(qp - qps), (long)(min - qps));
            qp->attempts = 1; /* marks it popped (the queue keeps its own copy of the key) */
            popped++;
        }
    }
    ks_activeq_destroy(aq);
}

Test(queue_activeq, handles_remove_entries_not_yet_popped)
{
    struct ks_activeq *aq = make();
    static struct ks_activeq_handle h[3];
    for (int i = 0; i < 3; i++)
        cr_assert_eq(ks_activeq_push_mp(aq, &qps[i], &h[i]), 0);
    cr_expect_not_null(h[1].entry);
    cr_expect(ks_activeq_remove(aq, &h[1]));
    cr_expect_null(h[1].entry);
    cr_expect_not(ks_activeq_remove(aq, &h[1]), "removed once");
    cr_expect_eq(ks_activeq_walk(aq, NULL, NULL), 2u);
    struct ks_queued_pod *a = ks_activeq_pop_sc(aq, false), *b = ks_activeq_pop_sc(aq, false);
    cr_assert(a && b);
    cr_expect(a != &qps[1] && b != &qps[1], "the removed entry is skipped");
    cr_expect_null(ks_activeq_pop_sc(aq, false));
    cr_expect_not(ks_activeq_remove(aq, &h[0]), "a popped entry cannot be removed");
    cr_expect_null(h[0].entry);
    ks_activeq_destroy(aq);
    for (int i = 0; i < 3; i++)
        cr_expect_eq(atomic_load(&released[i]), 1);
}

Test(queue_activeq, keys_are_frozen_at_push)
{
    struct ks_activeq *aq = make();
    pods[0].priority = pods[1].priority = 5;
    qps[0].timestamp_ns = 1;
    qps[1].timestamp_ns = 2;
    cr_assert_eq(ks_activeq_push_mp(aq, &qps[0], NULL), 0);
    cr_assert_eq(ks_activeq_push_mp(aq, &qps[1], NULL), 0);
    qps[0].timestamp_ns = 100; /* a requeue refreshes the live struct: the entry keeps its place */
    cr_expect_eq(ks_activeq_pop_sc(aq, false), &qps[0]);
    cr_expect_eq(ks_activeq_pop_sc(aq, false), &qps[1]);
    ks_activeq_destroy(aq);
}

Test(queue_activeq, multi_consumer_pop_is_the_papers_delete_min)
{
    struct ks_activeq *aq = make();
    static struct ks_queued_pod *got[N];
    for (int i = 0; i < N; i++)
        cr_assert_eq(ks_activeq_push_mp(aq, &qps[i], NULL), 0);
    for (int i = 0; i < N; i++)
        cr_assert_not_null(got[i] = ks_activeq_pop_mc(aq));
    cr_expect_null(ks_activeq_pop_mc(aq));
    expect_sorted(got, N);
    ks_activeq_destroy(aq);
}

struct waker {
    struct ks_activeq *aq;
    bool close;
};

static void *push_later(void *arg)
{
    struct waker *w = arg;
    ks_rcu_register_thread();
    usleep(20000);
    if (w->close)
        ks_activeq_close(w->aq);
    else
        ks_activeq_push_mp(w->aq, &qps[7], NULL);
    ks_rcu_unregister_thread();
    return NULL;
}

Test(queue_activeq, a_sleeping_consumer_wakes_on_push_and_on_close)
{
    struct ks_activeq *aq = make();
    pthread_t t;
    struct waker w = {aq, false};
    cr_assert_eq(pthread_create(&t, NULL, push_later, &w), 0);
    cr_expect_eq(ks_activeq_pop_sc(aq, true), &qps[7]);
    pthread_join(t, NULL);
    w.close = true;
    cr_assert_eq(pthread_create(&t, NULL, push_later, &w), 0);
    cr_expect_null(ks_activeq_pop_sc(aq, true));
    pthread_join(t, NULL);
    ks_activeq_destroy(aq);
}
