/*
 * test_rejections.c - the queue's counts of the plugins that rejected or gate the queued
 * pods (ks_queue_rejections, read for scheduler_unschedulable_pods): a pod counts from when
 * it is given back rejected, or gated, until it is popped or deleted; an update keeps it.
 */
#include "queue_helpers.h"

static uint32_t rejected_by(struct ks_queue *q, uint32_t slot)
{
    uint32_t counts[64];
    ks_queue_rejections(q, 0, counts);
    return counts[slot];
}

Test(queue_rejections, counted_while_queued_until_popped_or_deleted)
{
    struct ks_event_map *map = qt_map();
    const struct ks_event_map *maps[] = {map};
    struct ks_queue *q = qt_queue(maps);
    struct ks_pod *a = qt_pod("a", 0, NULL), *b = qt_pod("b", 0, NULL);
    cr_assert_eq(ks_queue_add(q, a, 1), 0);
    cr_assert_eq(ks_queue_add(q, b, 2), 0);

    qt_reject(q, qt_pop(q, "a"), BIT(QT_FIT) | BIT(QT_TAINT), KS_EVENT_ALL);
    qt_reject(q, qt_pop(q, "b"), BIT(QT_FIT), KS_EVENT_ALL);
    cr_expect_eq(rejected_by(q, QT_FIT), 2);
    cr_expect_eq(rejected_by(q, QT_TAINT), 1);
    cr_expect_eq(rejected_by(q, QT_PORTS), 0);

    struct ks_pod *a2 = qt_pod("a", 3, NULL); /* a new version: the same pod, still rejected */
    cr_assert_eq(ks_queue_update(q, a, a2), 0);
    cr_expect_eq(rejected_by(q, QT_FIT), 2);

    ks_queue_move(q, KS_EVENT_ALL); /* both back in activeQ (no backoff yet): still counted */
    qt_now += 20 * SEC;
    ks_queue_flush_backoff(q);
    cr_expect_eq(rejected_by(q, QT_FIT), 2);

    struct ks_queued_pod *qp = qt_pop(q, "a");
    cr_expect_eq(rejected_by(q, QT_FIT), 1, "a popped pod starts a new attempt");
    cr_expect_eq(rejected_by(q, QT_TAINT), 0);
    ks_queue_done(q, qp);
    cr_expect(ks_queue_delete(q, b));
    cr_expect_eq(rejected_by(q, QT_FIT), 0, "a deleted pod no longer waits");

    struct ks_pod *g = qt_pod("gated", 0, NULL);
    qt_gates(g, "example.com/wait");
    cr_assert_eq(ks_queue_add(q, g, 3), 0);
    cr_expect_eq(rejected_by(q, QT_SCHEDULING_GATES), 1, "a gate counts as a rejection");
    ks_queue_move(q, KS_EVENT_ALL); /* still gated: counted once */
    cr_expect_eq(rejected_by(q, QT_SCHEDULING_GATES), 1);
    qt_check(q);
    ks_queue_destroy(q);
    ks_event_map_destroy(map);
}
