/*
 * test_gates.c - PreEnqueue and the SchedulingGates plugin: a gated pod waits among the
 * unschedulable pods with upstream's message, no cluster event or timeout moves it, and
 * only an update that removes every gate lets it into the active queue.
 */
#include "queue_helpers.h"

Test(queue_gates, scheduling_gates_plugin_message)
{
    cr_assert_eq(ks_api_init(), 0);
    const struct ks_plugin *pl = ks_registry_find("SchedulingGates");
    cr_assert_not_null(pl);
    cr_assert_not_null(pl->pre_enqueue);
    struct ks_pod *p = qt_pod("p", 0, NULL);
    struct ks_status st = {0};
    cr_expect_eq(pl->pre_enqueue(NULL, p, &st), KS_SUCCESS);
    qt_gates(p, "example.com/a,example.com/b");
    cr_expect_eq(pl->pre_enqueue(NULL, p, &st), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_eq(st.nreasons, 1);
    cr_expect_str_eq(ks_intern_str(st.reasons[0]),
                     "waiting for scheduling gates: [example.com/a example.com/b]");
    ks_pod_destroy(p);
}

Test(queue_gates, gated_pods_wait_until_every_gate_is_removed)
{
    struct ks_event_map *m = qt_map();
    struct ks_queue *q = qt_queue((const struct ks_event_map *const *)&m);
    struct ks_pod *p = qt_pod("p", 0, "cpu=1");
    qt_gates(p, "a,b");
    cr_assert_eq(ks_queue_add(q, p, qt_now), 0);

    struct ks_queue_pod_info info;
    cr_assert(ks_queue_pod_info(q, p, &info));
    cr_expect_eq(info.where, KS_WHERE_UNSCHEDULABLE);
    cr_expect(info.gated);
    cr_expect_eq(info.gating_plugin, QT_SCHEDULING_GATES);
    cr_expect_str_eq(ks_intern_str(info.gated_message), "waiting for scheduling gates: [a b]");
    cr_expect_eq(info.pod.attempts, 0u, "gating is not an attempt");
    cr_expect_null(ks_queue_pop(q, false));
    struct ks_queue_counts c;
    ks_queue_count(q, &c);
    cr_expect_eq(c.gated, 1u);

    /* no cluster event and no timeout lets it through */
    struct ks_node *n = ks_fake_node("n1", "");
    ks_fake_node_allocatable(n, "cpu=8,pods=110");
    struct ks_cluster_event add = {KS_ER_NODE, KS_ACT_ADD};
    ks_queue_move_event(q, &add, NULL, n);
    ks_queue_move(q, KS_EVENT_ALL);
    qt_now += 3600 * SEC;
    ks_queue_flush_unschedulable(q);
    qt_expect_where(q, p, KS_WHERE_UNSCHEDULABLE);

    /* removing one gate keeps it gated */
    struct ks_pod *p2 = qt_pod("p", 0, "cpu=1");
    qt_gates(p2, "b");
    cr_assert_eq(ks_queue_update(q, p, p2), 0);
    cr_assert(ks_queue_pod_info(q, p2, &info));
    cr_expect_eq(info.where, KS_WHERE_UNSCHEDULABLE);
    cr_expect(info.gated);
    cr_expect_eq(info.pod.pod, p2);
    qt_check(q);

    /* an unrelated update neither */
    struct ks_pod *p3 = qt_pod("p", 0, "cpu=1");
    qt_gates(p3, "b");
    ks_fake_pod_labels(p3, "app=x");
    cr_assert_eq(ks_queue_update(q, p2, p3), 0);
    qt_expect_where(q, p3, KS_WHERE_UNSCHEDULABLE);

    /* the last gate gone: PreEnqueue passes and the pod is active (it has no backoff to serve) */
    struct ks_pod *p4 = qt_pod("p", 0, "cpu=1");
    ks_fake_pod_labels(p4, "app=x");
    cr_assert_eq(ks_queue_update(q, p3, p4), 0);
    cr_assert(ks_queue_pod_info(q, p4, &info));
    cr_expect_eq(info.where, KS_WHERE_ACTIVE);
    cr_expect_not(info.gated);
    ks_queue_count(q, &c);
    cr_expect_eq(c.gated, 0u);
    struct ks_queued_pod *qp = qt_pop(q, "p");
    cr_expect_eq(qp->pod, p4);
    cr_expect_eq(qp->attempts, 1u);
    ks_queue_done(q, qp);
    qt_check(q);
    ks_queue_destroy(q);
    ks_event_map_destroy(m);
    ks_node_destroy(n);
}

Test(queue_gates, a_gated_pod_can_be_deleted)
{
    struct ks_event_map *m = qt_map();
    struct ks_queue *q = qt_queue((const struct ks_event_map *const *)&m);
    struct ks_pod *p = qt_pod("p", 0, NULL);
    qt_gates(p, "a");
    cr_assert_eq(ks_queue_add(q, p, qt_now), 0);
    cr_expect(ks_queue_delete(q, p));
    struct ks_queue_counts c;
    ks_queue_count(q, &c);
    cr_expect_eq(c.gated + c.unschedulable, 0u);
    qt_check(q);
    ks_queue_destroy(q);
    ks_event_map_destroy(m);
}

/*
 * Activate: a pod waiting as unschedulable or in backoffQ goes to activeQ; with gated_only,
 * only one PreEnqueue holds back (which it runs again: a pod still gated stays), so a pod
 * waiting for cluster events is left to them.
 */
Test(queue_gates, activate_moves_waiting_pods_and_gated_only_the_gated)
{
    struct ks_event_map *m = qt_map();
    struct ks_queue *q = qt_queue((const struct ks_event_map *const *)&m);
    struct ks_pod *a = qt_pod("a", 0, "cpu=1"), *g = qt_pod("g", 0, NULL);
    cr_assert_eq(ks_queue_add(q, a, qt_now), 0);
    struct ks_queued_pod *qp = qt_pop(q, "a");
    qt_reject(q, qp, BIT(QT_FIT), KS_EVENT_ALL);
    qt_expect_where(q, a, KS_WHERE_UNSCHEDULABLE);
    ks_queue_activate(q, a, true);
    qt_expect_where(q, a, KS_WHERE_UNSCHEDULABLE); /* not gated: events decide */
    ks_queue_activate(q, a, false);
    qt_expect_where(q, a, KS_WHERE_ACTIVE);
    ks_queue_activate(q, a, false); /* already active: stays */
    qt_expect_where(q, a, KS_WHERE_ACTIVE);

    qt_gates(g, "x");
    cr_assert_eq(ks_queue_add(q, g, qt_now), 0);
    ks_queue_activate(q, g, true); /* PreEnqueue still says no */
    struct ks_queue_pod_info info;
    cr_assert(ks_queue_pod_info(q, g, &info));
    cr_expect_eq(info.where, KS_WHERE_UNSCHEDULABLE);
    cr_expect(info.gated);
    qt_check(q);
    ks_queue_destroy(q);
    ks_event_map_destroy(m);
}
