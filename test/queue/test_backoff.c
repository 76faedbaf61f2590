/*
 * test_backoff.c - backoffQ and the unschedulable pods with an injected clock: backoff
 * durations, the one-second backoff flush, the unschedulable leftover flush after the
 * maximum duration (default and configured), the move-request-cycle rule, and a pod group's
 * members (longer maximum; a leftover of a group that succeeded retried at once).
 */
#include "queue_helpers.h"

/* Fail @qp with an error (no rejecting plugin): it goes to backoff. */
static void fail_error(struct ks_queue *q, struct ks_queued_pod *qp)
{
    cr_assert_eq(ks_queue_add_unschedulable(q, qp, ks_queue_cycle(q), 0), 0);
}

Test(queue_backoff, durations_double_from_initial_up_to_max)
{
    struct ks_queue *q = qt_queue(NULL);
    struct ks_pod *p = qt_pod("p", 0, NULL);
    cr_assert_eq(ks_queue_add(q, p, qt_now), 0);
    /* podInitialBackoffSeconds 1 x 2^(attempts-1), capped at podMaxBackoffSeconds 10 */
    static const int64_t want[] = {1, 2, 4, 8, 10, 10, 10};
    for (int i = 0; i < 7; i++) {
        struct ks_queued_pod *qp = qt_pop(q, "p");
        cr_assert_eq(qp->attempts, (uint32_t)i + 1);
        fail_error(q, qp);
        struct ks_queue_pod_info info;
        cr_assert(ks_queue_pod_info(q, p, &info));
        cr_expect_eq(info.where, KS_WHERE_BACKOFF);
        cr_expect_eq(info.backoff_expiry_ns - info.pod.timestamp_ns, want[i] * SEC,
                     "attempt %d: backoff %lld ns, want %lld s", i + 1,
                     (long long)(info.backoff_expiry_ns - info.pod.timestamp_ns), (long long)want[i]);
        qt_now = info.backoff_expiry_ns;
        ks_queue_flush_backoff(q);
        qt_expect_where(q, p, KS_WHERE_ACTIVE);
        qt_check(q);
    }
    ks_queue_destroy(q);
}

/* A member of a pod group of 4 tried together: the maximum is 10 s x sqrt(4) (calculateBackoffDuration). */
Test(queue_backoff, a_pod_groups_members_back_off_up_to_max_times_sqrt_size)
{
    struct ks_queue *q = qt_queue(NULL);
    struct ks_pod *p = qt_pod("p", 0, NULL);
    cr_assert_eq(ks_queue_add(q, p, qt_now), 0);
    static const int64_t want[] = {1, 2, 4, 8, 16, 20, 20};
    for (int i = 0; i < 7; i++) {
        struct ks_queued_pod *qp = qt_pop(q, "p");
        qp->group_size = 4;
        fail_error(q, qp);
        struct ks_queue_pod_info info;
        cr_assert(ks_queue_pod_info(q, p, &info));
        cr_expect_eq(info.backoff_expiry_ns - info.pod.timestamp_ns, want[i] * SEC, "attempt %d", i + 1);
        qt_now = info.backoff_expiry_ns;
        ks_queue_flush_backoff(q);
    }
    ks_queue_destroy(q);
}

/*
 * A member left over when its pod group succeeded: its attempts so far no longer count
 * (upstream requeues the group entity without backoff, its counters reset), so it goes
 * straight to activeQ, and its next failure backs off from the start again.
 */
Test(queue_backoff, a_leftover_of_a_group_that_succeeded_is_retried_at_once)
{
    struct ks_queue *q = qt_queue(NULL);
    struct ks_pod *p = qt_pod("p", 0, NULL);
    cr_assert_eq(ks_queue_add(q, p, qt_now), 0);
    for (int i = 0; i < 3; i++) {
        struct ks_queued_pod *qp = qt_pop(q, "p");
        qp->group_size = 4;
        fail_error(q, qp);
        struct ks_queue_pod_info info;
        cr_assert(ks_queue_pod_info(q, p, &info));
        qt_now = info.backoff_expiry_ns;
        ks_queue_flush_backoff(q);
    }
    struct ks_queued_pod *qp = qt_pop(q, "p");
    cr_assert_eq(qp->attempts, 4u);
    qp->group_size = 4;
    qp->backoff_base = qp->attempts; /* the group succeeded without it */
    fail_error(q, qp);
    qt_expect_where(q, p, KS_WHERE_ACTIVE);
    qp = qt_pop(q, "p");
    fail_error(q, qp);
    struct ks_queue_pod_info info;
    cr_assert(ks_queue_pod_info(q, p, &info));
    cr_expect_eq(info.where, KS_WHERE_BACKOFF);
    cr_expect_eq(info.backoff_expiry_ns - info.pod.timestamp_ns, 1 * SEC, "one attempt since the success");
    qt_check(q);
    ks_queue_destroy(q);
}

Test(queue_backoff, flush_moves_only_completed_backoffs_in_expiry_order)
{
    struct ks_queue *q = qt_queue(NULL);
    struct ks_pod *a = qt_pod("a", 0, NULL), *b = qt_pod("b", 0, NULL);
    cr_assert_eq(ks_queue_add(q, a, 1), 0);
    cr_assert_eq(ks_queue_add(q, b, 2), 0);
    int64_t t0 = qt_now;
    fail_error(q, qt_pop(q, "a"));
    qt_now += SEC / 2;
    fail_error(q, qt_pop(q, "b"));
    int64_t first, last;
    cr_assert(ks_queue_backoff_bounds(q, &first, &last));
    cr_expect_eq(first, t0 + SEC);
    cr_expect_eq(last, t0 + SEC + SEC / 2);

    qt_now = t0 + SEC - 1;
    ks_queue_flush_backoff(q);
    qt_expect_where(q, a, KS_WHERE_BACKOFF);
    qt_now = t0 + SEC; /* an expiry equal to now is complete */
    ks_queue_flush_backoff(q);
    qt_expect_where(q, a, KS_WHERE_ACTIVE);
    qt_expect_where(q, b, KS_WHERE_BACKOFF);
    qt_now = t0 + 2 * SEC;
    ks_queue_flush_backoff(q);
    qt_expect_where(q, b, KS_WHERE_ACTIVE);
    cr_expect_not(ks_queue_backoff_bounds(q, &first, &last));
    qt_check(q);
    ks_queue_destroy(q);
}

Test(queue_backoff, flush_intervals_are_upstreams)
{
    cr_expect_eq(KS_QUEUE_BACKOFF_FLUSH_NS, 1 * SEC);
    cr_expect_eq(KS_QUEUE_UNSCHEDULABLE_FLUSH_NS, 30 * SEC);
    cr_expect_eq(KS_QUEUE_MAX_UNSCHEDULABLE_NS, 300 * SEC);
}

Test(queue_backoff, unschedulable_leftovers_retried_after_the_maximum_duration)
{
    struct ks_queue *q = qt_queue(NULL);
    struct ks_pod *p = qt_pod("p", 0, NULL);
    cr_assert_eq(ks_queue_add(q, p, qt_now), 0);
    int64_t failed = qt_now;
    qt_reject(q, qt_pop(q, "p"), BIT(2), KS_EVENT_NODE_ADD);
    qt_expect_where(q, p, KS_WHERE_UNSCHEDULABLE);

    qt_now = failed + KS_QUEUE_MAX_UNSCHEDULABLE_NS;
    ks_queue_flush_unschedulable(q);
    qt_expect_where(q, p, KS_WHERE_UNSCHEDULABLE); /* only strictly longer than the maximum */
    qt_now += 1;
    ks_queue_flush_unschedulable(q);
    qt_expect_where(q, p, KS_WHERE_ACTIVE); /* its 1 s backoff is long over */
    qt_check(q);
    ks_queue_destroy(q);
}

Test(queue_backoff, maximum_unschedulable_duration_is_a_setting)
{
    cr_assert_eq(ks_api_init(), 0);
    qt_rcu();
    struct ks_queue_opts o = {
        .less = qt_less,
        .initial_backoff_ns = 1 * SEC,
        .max_backoff_ns = 10 * SEC,
        .max_unschedulable_ns = 60 * SEC,
        .clock = {.now = qt_clock},
    };
    struct ks_queue *q;
    cr_assert_eq(ks_queue_create_opts(&o, &q), 0);
    struct ks_pod *p = qt_pod("p", 0, NULL);
    cr_assert_eq(ks_queue_add(q, p, qt_now), 0);
    int64_t failed = qt_now;
    qt_reject(q, qt_pop(q, "p"), BIT(2), KS_EVENT_NODE_ADD);
    qt_now = failed + 30 * SEC;
    ks_queue_flush_unschedulable(q);
    qt_expect_where(q, p, KS_WHERE_UNSCHEDULABLE);
    qt_now = failed + 61 * SEC;
    ks_queue_flush_unschedulable(q);
    qt_expect_where(q, p, KS_WHERE_ACTIVE);
    ks_queue_destroy(q);
}

Test(queue_backoff, a_move_request_during_the_cycle_sends_the_pod_to_backoff)
{
    struct ks_queue *q = qt_queue(NULL);
    struct ks_pod *a = qt_pod("a", 0, NULL), *b = qt_pod("b", 0, NULL);
    cr_assert_eq(ks_queue_add(q, a, 1), 0);
    cr_assert_eq(ks_queue_add(q, b, 2), 0);

    /* no move request since its pop: unschedulable */
    qt_reject(q, qt_pop(q, "a"), BIT(2), KS_EVENT_NODE_ADD);
    qt_expect_where(q, a, KS_WHERE_UNSCHEDULABLE);

    /* a move request while b is being scheduled: it may have missed the event, retry it */
    struct ks_queued_pod *qb = qt_pop(q, "b");
    uint64_t cycle = ks_queue_cycle(q);
    ks_queue_move(q, KS_EVENT_ASSIGNED_POD_DELETE);
    cr_assert_eq(
        (qb->unschedulable_plugins = BIT(2), ks_queue_add_unschedulable(q, qb, cycle, KS_EVENT_NODE_ADD)), 0);
    qt_expect_where(q, b, KS_WHERE_BACKOFF);
    qt_expect_where(q, a, KS_WHERE_UNSCHEDULABLE); /* the event did not concern what a waits for */

    /* a move request from before the cycle does not count */
    qt_now += 2 * SEC;
    ks_queue_flush_backoff(q);
    struct ks_queued_pod *again = qt_pop(q, "b");
    qt_reject(q, again, BIT(2), KS_EVENT_NODE_ADD);
    qt_expect_where(q, b, KS_WHERE_UNSCHEDULABLE);
    qt_check(q);
    ks_queue_destroy(q);
}

Test(queue_backoff, an_event_sends_a_pod_to_backoff_or_straight_to_active)
{
    struct ks_queue *q = qt_queue(NULL);
    struct ks_pod *p = qt_pod("p", 0, NULL);
    cr_assert_eq(ks_queue_add(q, p, qt_now), 0);
    qt_reject(q, qt_pop(q, "p"), BIT(2), KS_EVENT_NODE_ADD);
    ks_queue_move(q, KS_EVENT_NODE_ADD);
    qt_expect_where(q, p, KS_WHERE_BACKOFF); /* still within its 1 s */
    qt_now += SEC;
    ks_queue_flush_backoff(q);
    qt_reject(q, qt_pop(q, "p"), BIT(2), KS_EVENT_NODE_ADD);
    qt_now += 5 * SEC; /* its 2 s backoff is over by the time the event comes */
    ks_queue_move(q, KS_EVENT_NODE_ADD);
    qt_expect_where(q, p, KS_WHERE_ACTIVE);
    qt_check(q);
    ks_queue_destroy(q);
}
