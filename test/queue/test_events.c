/*
 * test_events.c - cluster events move unschedulable pods by the plugins that rejected
 * them: event matching, which update kinds a node or pod change makes, the in-tree
 * registrations and QueueingHints, out-of-tree registrations, and move requests only for
 * events some plugin registers.
 */
#include "queue_helpers.h"

static const struct ks_cluster_event node_add = {KS_ER_NODE, KS_ACT_ADD};

static struct ks_node *node(const char *name, const char *labels, const char *alloc)
{
    struct ks_node *n = ks_fake_node(name, labels);
    ks_fake_node_allocatable(n, alloc);
    return n;
}

static void move(struct ks_queue *q, enum ks_event_resource r, uint32_t actions, const void *o, const void *n)
{
    struct ks_cluster_event ev = {r, actions};
    ks_queue_move_event(q, &ev, o, n);
}

/* A queue with the test map, and pod @name rejected by @rejector, waiting. */
static struct ks_queue *rejected_pod(struct ks_event_map **m, struct ks_pod *p, int rejector)
{
    *m = qt_map();
    struct ks_queue *q = qt_queue((const struct ks_event_map *const *)m);
    cr_assert_eq(ks_queue_add(q, p, qt_now), 0);
    struct ks_queued_pod *qp = qt_pop(q, p->meta.name);
    qt_reject(q, qp, BIT(rejector), ks_event_map_kinds(*m, BIT(rejector)));
    qt_expect_where(q, p, KS_WHERE_UNSCHEDULABLE);
    qt_now += 60 * SEC; /* backoff long over: a pod an event moves goes straight to activeQ */
    return q;
}

Test(queue_events, matching_follows_framework_match_cluster_events)
{
    struct ks_cluster_event reg_label = {KS_ER_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL};
    struct ks_cluster_event reg_update = {KS_ER_NODE, KS_ACT_UPDATE};
    struct ks_cluster_event reg_pod = {KS_ER_POD, KS_ACT_DELETE};
    struct ks_cluster_event label = {KS_ER_NODE, KS_ACT_UPDATE_NODE_LABEL};
    struct ks_cluster_event taint = {KS_ER_NODE, KS_ACT_UPDATE_NODE_TAINT};
    struct ks_cluster_event any_update = {KS_ER_NODE, KS_ACT_UPDATE};
    struct ks_cluster_event assigned_delete = {KS_ER_ASSIGNED_POD, KS_ACT_DELETE};
    struct ks_cluster_event wildcard = {KS_ER_WILDCARD, KS_ACT_ALL};

    cr_expect(ks_event_match(&reg_label, &label));
    cr_expect(ks_event_match(&reg_label, &node_add));
    cr_expect_not(ks_event_match(&reg_label, &taint));
    cr_expect_not(ks_event_match(&reg_label, &any_update), "a plain update is not a label update");
    cr_expect(ks_event_match(&reg_update, &label), "Update covers every specific update");
    cr_expect(ks_event_match(&reg_pod, &assigned_delete), "Pod covers assigned pods");
    cr_expect_not(ks_event_match(&reg_pod, &node_add));
    cr_expect(ks_event_match(&wildcard, &taint));
    cr_expect_not(ks_event_match(&reg_label, &wildcard), "only a wildcard registration matches a wildcard");
    char buf[96];
    cr_expect_str_eq(ks_event_name(&reg_label, buf, sizeof(buf)), "Node/Add|UpdateNodeLabel");
}

Test(queue_events, node_update_kinds)
{
    struct ks_node *a = node("n", "zone=a", "cpu=4,memory=8Gi,pods=110");
    struct ks_node *same = node("n", "zone=a", "cpu=4,memory=8Gi,pods=110");
    struct ks_node *labels = node("n", "zone=b", "cpu=4,memory=8Gi,pods=110");
    struct ks_node *grown = node("n", "zone=a", "cpu=8,memory=8Gi,pods=110");
    struct ks_node *tainted = node("n", "zone=a", "cpu=4,memory=8Gi,pods=110");
    ks_fake_node_taints(tainted, "dedicated=x:NoSchedule");
    struct ks_node *cordoned = node("n", "zone=a", "cpu=4,memory=8Gi,pods=110");
    cordoned->unschedulable = true;

    cr_expect_eq(ks_node_update_actions(a, same), 0u);
    cr_expect_eq(ks_node_update_actions(a, labels), (uint32_t)KS_ACT_UPDATE_NODE_LABEL);
    cr_expect_eq(ks_node_update_actions(a, grown), (uint32_t)KS_ACT_UPDATE_NODE_ALLOCATABLE);
    cr_expect_eq(ks_node_update_actions(a, tainted), (uint32_t)KS_ACT_UPDATE_NODE_TAINT);
    cr_expect_eq(ks_node_update_actions(a, cordoned), 0u, "becoming unschedulable helps no pod");
    cr_expect_eq(ks_node_update_actions(cordoned, a), (uint32_t)KS_ACT_UPDATE_NODE_TAINT,
                 "becoming schedulable reads as a taint change");
    ks_node_destroy(a), ks_node_destroy(same), ks_node_destroy(labels), ks_node_destroy(grown);
    ks_node_destroy(tainted), ks_node_destroy(cordoned);
}

Test(queue_events, pod_update_kinds)
{
    struct ks_pod *a = qt_pod("p", 0, "cpu=2");
    struct ks_pod *relabelled = qt_pod("p", 0, "cpu=2");
    ks_fake_pod_labels(relabelled, "app=x");
    struct ks_pod *smaller = qt_pod("p", 0, "cpu=1");
    struct ks_pod *tolerant = qt_pod("p", 0, "cpu=2");
    ks_fake_pod_toleration(tolerant, ks_fake_toleration("k", "Exists", "", ""));
    struct ks_pod *gated = qt_pod("p", 0, "cpu=2");
    qt_gates(gated, "g");
    struct ks_cluster_event ev[KS_ACTION_COUNT];

    cr_expect_eq(ks_pod_update_events(a, relabelled, KS_ER_UNSCHEDULED_POD, ev), 1u);
    cr_expect_eq(ev[0].actions, (uint32_t)KS_ACT_UPDATE_POD_LABEL);
    cr_expect_eq(ev[0].resource, KS_ER_UNSCHEDULED_POD);
    cr_expect_eq(ks_pod_update_events(a, smaller, KS_ER_ASSIGNED_POD, ev), 1u);
    cr_expect_eq(ev[0].actions, (uint32_t)KS_ACT_UPDATE_POD_SCALE_DOWN);
    cr_expect_eq(ks_pod_update_events(a, tolerant, KS_ER_UNSCHEDULED_POD, ev), 1u);
    cr_expect_eq(ev[0].actions, (uint32_t)KS_ACT_UPDATE_POD_TOLERATION);
    cr_expect_eq(ks_pod_update_events(gated, a, KS_ER_UNSCHEDULED_POD, ev), 1u);
    cr_expect_eq(ev[0].actions, (uint32_t)KS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED);
    cr_expect_eq(ks_pod_update_events(a, a, KS_ER_UNSCHEDULED_POD, ev), 1u);
    cr_expect_eq(ev[0].actions, (uint32_t)KS_ACT_UPDATE, "no specific change: a plain update");
    ks_pod_destroy(a), ks_pod_destroy(relabelled), ks_pod_destroy(smaller);
    ks_pod_destroy(tolerant), ks_pod_destroy(gated);
}

Test(queue_events, resources_fit_rejection_ignores_label_updates)
{
    struct ks_event_map *m;
    struct ks_pod *p = qt_pod("p", 0, "cpu=3");
    struct ks_queue *q = rejected_pod(&m, p, QT_FIT);
    struct ks_node *small = node("n1", "zone=a", "cpu=2,memory=8Gi,pods=110");
    struct ks_node *relabelled = node("n1", "zone=b", "cpu=2,memory=8Gi,pods=110");
    struct ks_node *grown = node("n1", "zone=b", "cpu=4,memory=8Gi,pods=110");
    struct ks_node *big = node("n2", "zone=a", "cpu=4,memory=8Gi,pods=110");

    move(q, KS_ER_NODE, KS_ACT_UPDATE_NODE_LABEL, small, relabelled);
    qt_expect_where(q, p, KS_WHERE_UNSCHEDULABLE); /* NodeResourcesFit does not register label updates */
    move(q, KS_ER_NODE, KS_ACT_ADD, NULL, small);
    qt_expect_where(q, p, KS_WHERE_UNSCHEDULABLE); /* its hint: the new node cannot hold 3 cpu */
    move(q, KS_ER_NODE, KS_ACT_UPDATE_NODE_ALLOCATABLE, relabelled, grown);
    qt_expect_where(q, p, KS_WHERE_ACTIVE); /* allocatable grew to fit */
    qt_check(q);

    /* again, moved by a new node that fits */
    qt_reject(q, qt_pop(q, "p"), BIT(QT_FIT), ks_event_map_kinds(m, BIT(QT_FIT)));
    qt_now += 60 * SEC;
    move(q, KS_ER_NODE, KS_ACT_ADD, NULL, big);
    qt_expect_where(q, p, KS_WHERE_ACTIVE);
    ks_queue_destroy(q);
    ks_event_map_destroy(m);
    ks_node_destroy(small), ks_node_destroy(relabelled), ks_node_destroy(grown), ks_node_destroy(big);
}

Test(queue_events, resources_fit_rejection_and_pod_deletions)
{
    struct ks_event_map *m;
    struct ks_pod *p = qt_pod("p", 0, "cpu=3");
    struct ks_queue *q = rejected_pod(&m, p, QT_FIT);
    struct ks_pod *pending = qt_pod("other", 0, "cpu=1");
    struct ks_pod *bound = qt_pod("bound", 0, "cpu=1");
    bound->node_name = ks_intern("n1");

    move(q, KS_ER_UNSCHEDULED_POD, KS_ACT_DELETE, pending, NULL);
    qt_expect_where(q, p, KS_WHERE_UNSCHEDULABLE); /* a pending pod held nothing */
    move(q, KS_ER_ASSIGNED_POD, KS_ACT_ADD, NULL, bound);
    qt_expect_where(q, p, KS_WHERE_UNSCHEDULABLE); /* NodeResourcesFit does not register pod adds */
    move(q, KS_ER_ASSIGNED_POD, KS_ACT_DELETE, bound, NULL);
    qt_expect_where(q, p, KS_WHERE_ACTIVE);
    ks_queue_destroy(q);
    ks_event_map_destroy(m);
    ks_pod_destroy(pending), ks_pod_destroy(bound);
}

Test(queue_events, node_affinity_taint_and_unschedulable_hints)
{
    struct ks_event_map *m;
    struct ks_pod *p = qt_pod("p", 0, "cpu=1");
    p->node_selector = ks_fake_labels(&p->arena, "disk=ssd");
    struct ks_queue *q = rejected_pod(&m, p, QT_NODE_AFFINITY);
    struct ks_node *plain = node("n1", "zone=a", "cpu=4,pods=110");
    struct ks_node *other = node("n1", "zone=b", "cpu=4,pods=110");
    struct ks_node *ssd = node("n1", "zone=a,disk=ssd", "cpu=4,pods=110");
    move(q, KS_ER_NODE, KS_ACT_UPDATE_NODE_LABEL, plain, other);
    qt_expect_where(q, p, KS_WHERE_UNSCHEDULABLE);
    move(q, KS_ER_NODE, KS_ACT_UPDATE_NODE_LABEL, plain, ssd);
    qt_expect_where(q, p, KS_WHERE_ACTIVE);
    ks_queue_destroy(q);
    ks_event_map_destroy(m);

    struct ks_pod *t = qt_pod("t", 0, "cpu=1");
    q = rejected_pod(&m, t, QT_TAINT);
    struct ks_node *tainted = node("n1", "zone=a", "cpu=4,pods=110");
    ks_fake_node_taints(tainted, "dedicated=x:NoSchedule");
    struct ks_node *soft = node("n1", "zone=a", "cpu=4,pods=110");
    ks_fake_node_taints(soft, "dedicated=x:PreferNoSchedule");
    move(q, KS_ER_NODE, KS_ACT_UPDATE_NODE_LABEL, tainted, tainted);
    qt_expect_where(q, t, KS_WHERE_UNSCHEDULABLE);
    move(q, KS_ER_NODE, KS_ACT_UPDATE_NODE_TAINT, tainted, soft);
    qt_expect_where(q, t, KS_WHERE_ACTIVE);
    ks_queue_destroy(q);
    ks_event_map_destroy(m);

    struct ks_pod *u = qt_pod("u", 0, "cpu=1");
    q = rejected_pod(&m, u, QT_UNSCHEDULABLE);
    struct ks_node *cordoned = node("n1", "zone=a", "cpu=4,pods=110");
    cordoned->unschedulable = true;
    move(q, KS_ER_NODE, KS_ACT_ADD, NULL, cordoned);
    qt_expect_where(q, u, KS_WHERE_UNSCHEDULABLE);
    move(q, KS_ER_NODE, ks_node_update_actions(cordoned, plain), cordoned, plain);
    qt_expect_where(q, u, KS_WHERE_ACTIVE);
    ks_queue_destroy(q);
    ks_event_map_destroy(m);
    ks_node_destroy(plain), ks_node_destroy(other), ks_node_destroy(ssd), ks_node_destroy(tainted);
    ks_node_destroy(soft), ks_node_destroy(cordoned);
}

Test(queue_events, host_port_hint)
{
    struct ks_event_map *m;
    struct ks_pod *p = qt_pod("p", 0, NULL);
    struct ks_container *c = ks_fake_container(p, "cpu=1");
    c->ports = ks_arena_calloc(&p->arena, 1, sizeof(*c->ports));
    c->ports[0] = (struct ks_container_port){.container_port = 80, .host_port = 8080};
    c->nports = 1;
    struct ks_queue *q = rejected_pod(&m, p, QT_PORTS);
    struct ks_pod *no_ports = qt_pod("np", 0, "cpu=1");
    no_ports->node_name = ks_intern("n1");
    struct ks_pod *holder = qt_pod("h", 0, NULL);
    struct ks_container *hc = ks_fake_container(holder, "cpu=1");
    hc->ports = ks_arena_calloc(&holder->arena, 1, sizeof(*hc->ports));
    hc->ports[0] = (struct ks_container_port){.container_port = 8080, .host_port = 8080};
    hc->nports = 1;
    holder->node_name = ks_intern("n1");
    move(q, KS_ER_ASSIGNED_POD, KS_ACT_DELETE, no_ports, NULL);
    qt_expect_where(q, p, KS_WHERE_UNSCHEDULABLE);
    move(q, KS_ER_ASSIGNED_POD, KS_ACT_DELETE, holder, NULL);
    qt_expect_where(q, p, KS_WHERE_ACTIVE);
    ks_queue_destroy(q);
    ks_event_map_destroy(m);
    ks_pod_destroy(no_ports), ks_pod_destroy(holder);
}

Test(queue_events, events_no_plugin_registers_are_not_move_requests)
{
    struct ks_event_map *m = qt_map();
    struct ks_queue *q = qt_queue((const struct ks_event_map *const *)&m);
    struct ks_pod *p = qt_pod("p", 0, "cpu=1");
    cr_assert_eq(ks_queue_add(q, p, qt_now), 0);
    struct ks_queued_pod *qp = qt_pop(q, "p");
    /* while p is in flight: a CSIDriver event none of these plugins registers */
    move(q, KS_ER_CSI_DRIVER, KS_ACT_ADD, NULL, NULL);
    qt_reject(q, qp, BIT(QT_FIT), ks_event_map_kinds(m, BIT(QT_FIT)));
    qt_expect_where(q, p, KS_WHERE_UNSCHEDULABLE);
    /* a node add (registered) during its next cycle is one */
    qt_now += 60 * SEC;
    struct ks_node *n = node("n1", "", "cpu=4,pods=110");
    move(q, KS_ER_NODE, KS_ACT_ADD, NULL, n);
    qp = qt_pop(q, "p");
    struct ks_node *small = node("n2", "", "cpu=0,pods=110");
    move(q, KS_ER_NODE, KS_ACT_ADD, NULL, small);
    qt_reject(q, qp, BIT(QT_FIT), ks_event_map_kinds(m, BIT(QT_FIT)));
    qt_expect_where(q, p, KS_WHERE_BACKOFF);
    ks_queue_destroy(q);
    ks_event_map_destroy(m);
    ks_node_destroy(n), ks_node_destroy(small);
}

Test(queue_events, rejector_kinds_prefilter_events)
{
    struct ks_event_map *m = qt_map();
    unsigned fit = ks_event_map_kinds(m, BIT(QT_FIT));
    cr_expect(fit & KS_EVENT_NODE_ADD);
    cr_expect(fit & KS_EVENT_NODE_UPDATE);
    cr_expect(fit & KS_EVENT_ASSIGNED_POD_DELETE);
    cr_expect_not(fit & KS_EVENT_ASSIGNED_POD_ADD);
    unsigned aff = ks_event_map_kinds(m, BIT(QT_INTER_POD_AFFINITY));
    cr_expect(aff & KS_EVENT_ASSIGNED_POD_ADD);
    cr_expect_eq(ks_event_map_kinds(m, 0), (unsigned)KS_EVENT_ALL);
    cr_expect_eq(ks_event_map_kinds(m, BIT(QT_PRIORITY_SORT)), 0u,
                 "a plugin that never rejects registers nothing");
    ks_event_map_destroy(m);
}

/* An out-of-tree plugin: registers Node/UpdateNodeLabel with a hint that wants label "ready". */
static enum ks_queueing_hint ready_hint(void *self, const struct ks_pod *pod, const void *old_obj,
                                        const void *new_obj)
{
    const struct ks_node *n = new_obj;
    uint32_t v;
    (void)pod, (void)old_obj;
    *(int *)self += 1;
    return n && ks_labels_get(&n->meta.labels, ks_intern("ready"), &v) ? KS_QUEUE : KS_QUEUE_SKIP;
}

static uint32_t custom_events(void *self, struct ks_event_registration *out, uint32_t max)
{
    (void)self;
    if (max >= 1)
        out[0] = (struct ks_event_registration){{KS_ER_NODE, KS_ACT_UPDATE_NODE_LABEL}, ready_hint};
    return 1;
}

static int custom_filter(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                         const struct ks_node_snap *node, struct ks_status *st)
{
    (void)self, (void)cs, (void)pod, (void)node, (void)st;
    return KS_SUCCESS;
}

Test(queue_events, out_of_tree_registrations_and_the_wildcard_default)
{
    static const struct ks_plugin custom = {.abi_version = KS_PLUGIN_ABI_VERSION,
                                            .name = "Custom",
                                            .filter = custom_filter,
                                            .events_to_register = custom_events};
    static const struct ks_plugin silent = {
        .abi_version = KS_PLUGIN_ABI_VERSION, .name = "Silent", .filter = custom_filter};
    int calls = 0;
    struct ks_event_map_plugin plugins[2] = {{.plugin = &custom, .self = &calls}, {.plugin = &silent}};
    struct ks_event_map *m;
    cr_assert_eq(ks_event_map_create(plugins, 2, &m), 0);
    struct ks_queue *q = qt_queue((const struct ks_event_map *const *)&m);
    struct ks_pod *a = qt_pod("a", 0, NULL), *b = qt_pod("b", 0, NULL);
    cr_assert_eq(ks_queue_add(q, a, 1), 0);
    cr_assert_eq(ks_queue_add(q, b, 2), 0);
    qt_reject(q, qt_pop(q, "a"), BIT(0), ks_event_map_kinds(m, BIT(0)));
    qt_reject(q, qt_pop(q, "b"), BIT(1), ks_event_map_kinds(m, BIT(1)));
    qt_now += 60 * SEC;

    struct ks_node *n = node("n1", "", "cpu=1");
    struct ks_node *ready = node("n1", "ready=yes", "cpu=1");
    move(q, KS_ER_NODE, KS_ACT_UPDATE_NODE_TAINT, n, n);
    qt_expect_where(q, a, KS_WHERE_UNSCHEDULABLE);
    qt_expect_where(q, b, KS_WHERE_ACTIVE); /* registered nothing: every event may help */
    move(q, KS_ER_NODE, KS_ACT_UPDATE_NODE_LABEL, ready, n);
    qt_expect_where(q, a, KS_WHERE_UNSCHEDULABLE);
    move(q, KS_ER_NODE, KS_ACT_UPDATE_NODE_LABEL, n, ready);
    qt_expect_where(q, a, KS_WHERE_ACTIVE);
    cr_expect_eq(calls, 2, "the hint ran for the two label updates (%d)", calls);
    qt_check(q);
    ks_queue_destroy(q);
    ks_event_map_destroy(m);
    ks_node_destroy(n), ks_node_destroy(ready);
}

/*
 * Every in-tree plugin that can reject a pod describes its events in its own ops table (as
 * upstream's in-tree plugins all implement EnqueueExtensions): none falls back to being
 * registered for every event.
 */
Test(queue_events, every_in_tree_plugin_that_rejects_registers_its_own_events)
{
    for (uint32_t i = 0; ks_registry[i]; i++) {
        const struct ks_plugin *p = ks_registry[i];
        bool rejects = p->pre_filter || p->filter || p->reserve || p->permit || p->pre_enqueue;
        if (rejects)
            cr_expect_not_null(p->events_to_register, "%s rejects pods but registers no events", p->name);
    }
}
