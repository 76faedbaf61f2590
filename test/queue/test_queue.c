/*
 * test_queue.c - the scheduling queue's places and bookkeeping: QueueSort order, attempts
 * and cycles, one struct per pod, update in place, delete from wherever the pod is, pods
 * updated or deleted while in flight, and the invariant checker.
 */
#include "queue_helpers.h"

#include <errno.h>

Test(queue, pops_in_queue_sort_order_counting_attempts_and_cycles)
{
    struct ks_queue *q = qt_queue(NULL);
    /* {name, priority, timestamp}: higher priority first, then the earlier timestamp */
    static const struct {
        const char *name;
        int32_t prio;
        int64_t ts;
    } pods[] = {{"low", 1, 5}, {"high-late", 9, 7}, {"high-early", 9, 3}, {"zero", 0, 1}, {"mid", 5, 9}};
    for (size_t i = 0; i < 5; i++)
        cr_assert_eq(ks_queue_add(q, qt_pod(pods[i].name, pods[i].prio, NULL), pods[i].ts), 0);
    qt_check(q);
    static const char *const want[] = {"high-early", "high-late", "mid", "low", "zero"};
    for (uint64_t i = 0; i < 5; i++) {
        struct ks_queued_pod *qp = qt_pop(q, want[i]);
        cr_expect_eq(qp->attempts, 1u);
        cr_expect_eq(ks_queue_cycle(q), i + 1, "cycle %llu after %llu pops",
                     (unsigned long long)ks_queue_cycle(q), (unsigned long long)i + 1);
        cr_expect_eq(qp->initial_attempt_ns, qt_now, "the first activeQ entry stamps the initial attempt");
        qt_expect_where(q, qp->pod, KS_WHERE_IN_FLIGHT);
        ks_queue_done(q, qp);
    }
    cr_expect_null(ks_queue_pop(q, false));
    qt_check(q);
    ks_queue_destroy(q);
}

Test(queue, a_pod_is_queued_once)
{
    struct ks_queue *q = qt_queue(NULL);
    struct ks_pod *a = qt_pod("a", 0, NULL);
    struct ks_pod *again = qt_pod("a", 3, NULL);
    cr_assert_eq(ks_queue_add(q, a, 1), 0);
    cr_expect_eq(ks_queue_add(q, again, 2), -EEXIST, "the same namespace/name is refused");
    ks_pod_destroy(again);
    struct ks_queue_counts c;
    ks_queue_count(q, &c);
    cr_expect_eq(c.active, 1u);
    cr_expect_eq(ks_queue_active(q), 1u, "the lock-free count agrees");
    qt_check(q);
    ks_queue_destroy(q);
}

Test(queue, update_in_active_queue_re_sorts)
{
    struct ks_queue *q = qt_queue(NULL);
    struct ks_pod *a = qt_pod("a", 1, NULL), *b = qt_pod("b", 5, NULL);
    cr_assert_eq(ks_queue_add(q, a, 1), 0);
    cr_assert_eq(ks_queue_add(q, b, 2), 0);
    struct ks_pod *a2 = qt_pod("a", 7, NULL); /* a new version with a higher priority */
    cr_assert_eq(ks_queue_update(q, a, a2), 0);
    qt_check(q);
    struct ks_queued_pod *qp = qt_pop(q, "a");
    cr_expect_eq(qp->pod, a2, "the popped pod is the latest version");
    cr_expect_eq(qp->timestamp_ns, 1, "an update keeps the queue timestamp");
    ks_queue_done(q, qp);
    ks_queue_done(q, qt_pop(q, "b"));
    qt_check(q);
    ks_queue_destroy(q);
}

Test(queue, update_of_an_unknown_pod_adds_it)
{
    struct ks_queue *q = qt_queue(NULL);
    struct ks_pod *a = qt_pod("a", 0, NULL);
    cr_assert_eq(ks_queue_update(q, NULL, a), 0);
    qt_expect_where(q, a, KS_WHERE_ACTIVE);
    qt_check(q);
    ks_queue_destroy(q);
}

Test(queue, delete_removes_the_pod_wherever_it_is)
{
    struct ks_queue *q = qt_queue(NULL);
    struct ks_pod *act = qt_pod("act", 0, NULL), *back = qt_pod("back", 9, NULL), *un = qt_pod("un", 8, NULL);
    cr_assert_eq(ks_queue_add(q, back, 1), 0);
    cr_assert_eq(ks_queue_add(q, un, 2), 0);
    cr_assert_eq(ks_queue_add(q, act, 3), 0);
    cr_assert_eq(ks_queue_add_unschedulable(q, qt_pop(q, "back"), ks_queue_cycle(q), 0), 0);
    qt_reject(q, qt_pop(q, "un"), BIT(1), KS_EVENT_NODE_ADD);
    qt_expect_where(q, act, KS_WHERE_ACTIVE);
    qt_expect_where(q, back, KS_WHERE_BACKOFF);
    qt_expect_where(q, un, KS_WHERE_UNSCHEDULABLE);
    qt_check(q);

    struct ks_pod *keep = ks_pod_get(act);
    cr_expect(ks_queue_delete(q, act));
    cr_expect(ks_queue_delete(q, back));
    cr_expect(ks_queue_delete(q, un));
    cr_expect_not(ks_queue_delete(q, act), "deleting twice finds nothing");
    qt_check(q);
    struct ks_queue_counts c;
    ks_queue_count(q, &c);
    cr_expect_eq(c.active + c.backoff + c.unschedulable + c.in_flight, 0u);
    cr_expect_null(ks_queue_pop(q, false), "a deleted activeQ entry is skipped");
    qt_check(q);
    ks_queue_destroy(q);
    cr_expect_eq(keep->refs, 1u, "the queue dropped its reference");
    ks_pod_put(keep);
}

Test(queue, pods_deleted_or_updated_in_flight)
{
    struct ks_queue *q = qt_queue(NULL);
    struct ks_pod *a = qt_pod("a", 0, NULL), *b = qt_pod("b", 0, NULL);
    cr_assert_eq(ks_queue_add(q, a, 1), 0);
    cr_assert_eq(ks_queue_add(q, b, 2), 0);

    struct ks_queued_pod *qa = qt_pop(q, "a");
    cr_expect(ks_queue_delete(q, a));
    cr_expect_eq(qt_where(q, a), KS_WHERE_NONE, "a deleted pod is no longer found");
    qt_reject(q, qa, BIT(1), KS_EVENT_ALL); /* comes back: dropped */
    qt_check(q);

    struct ks_queued_pod *qb = qt_pop(q, "b");
    struct ks_pod *b2 = qt_pod("b", 4, NULL);
    cr_assert_eq(ks_queue_update(q, b, b2), 0);
    qt_expect_where(q, b, KS_WHERE_IN_FLIGHT);
    qt_reject(q, qb, BIT(1), KS_EVENT_ALL);
    /* it comes back as the new version, retried (after its backoff) rather than parked */
    struct ks_queue_pod_info info;
    cr_assert(ks_queue_pod_info(q, b2, &info));
    cr_expect_eq(info.pod.pod, b2);
    cr_expect_eq(info.where, KS_WHERE_BACKOFF);
    qt_check(q);
    ks_queue_destroy(q);
}

Test(queue, blocking_pop_wakes_on_add_and_close)
{
    struct ks_queue *q = qt_queue(NULL);
    cr_assert_eq(ks_queue_add(q, qt_pod("a", 0, NULL), 1), 0);
    struct ks_queued_pod *qp = ks_queue_pop(q, true);
    cr_assert_not_null(qp);
    ks_queue_done(q, qp);
    ks_queue_close(q);
    cr_expect_null(ks_queue_pop(q, true), "a closed, empty queue does not block");
    ks_queue_destroy(q);
}

Test(queue, checker_accepts_every_place)
{
    struct ks_queue *q = qt_queue(NULL);
    char msg[128];
    cr_assert_eq(ks_queue_add(q, qt_pod("a", 0, NULL), 1), 0);
    cr_expect_eq(ks_queue_check(q, msg, sizeof(msg)), 0, "%s", msg);
    /* a struct popped and given back without the queue knowing breaks the counters */
    struct ks_queued_pod *qp = qt_pop(q, "a");
    cr_expect_eq(ks_queue_check(q, msg, sizeof(msg)), 0, "in flight is a place: %s", msg);
    ks_queue_done(q, qp);
    cr_expect_eq(ks_queue_check(q, msg, sizeof(msg)), 0, "%s", msg);
    ks_queue_destroy(q);
}
