/*
 * test_scheduler_queue.c - the queue inside the scheduler: batch runs that wait out
 * backoff and stop when only event-waiting pods remain, cluster events through
 * ks_scheduler_node_event / update / delete, scheduling gates end to end, the flusher
 * thread, and Filter with pods nominated to a node.
 */
#include "queue_helpers.h"

#include "ksched/internal/cache.h"
#include "ksched/internal/config.h"
#include "ksched/internal/nominator.h"
#include "ksched/internal/scheduler.h"

#include "../../engine/scheduler_internal.h"

#include <pthread.h>
#include <unistd.h>

struct tally {
    pthread_mutex_t lock;
    uint32_t scheduled, unschedulable, errors;
    char last_pod[64], last_node[64], last_message[512];
};

static void on_event(void *ctx, const struct ks_sched_event *ev)
{
    struct tally *t = ctx;
    pthread_mutex_lock(&t->lock);
    if (ev->kind == KS_SCHED_SCHEDULED)
        t->scheduled++;
    else if (ev->kind == KS_SCHED_UNSCHEDULABLE)
        t->unschedulable++;
    else if (ev->kind == KS_SCHED_ERROR)
        t->errors++;
    snprintf(t->last_pod, sizeof(t->last_pod), "%s", ev->pod->meta.name);
    snprintf(t->last_node, sizeof(t->last_node), "%s",
             ev->node != KS_ID_EMPTY ? ks_intern_str(ev->node) : "");
    snprintf(t->last_message, sizeof(t->last_message), "%s", ev->message ? ev->message : "");
    pthread_mutex_unlock(&t->lock);
}

struct env {
    struct ks_config *cfg;
    struct ks_cache *cache;
    struct ks_scheduler *s;
    struct tally t;
};

static void setup(struct env *e, bool flusher)
{
    memset(e, 0, sizeof(*e));
    pthread_mutex_init(&e->t.lock, NULL);
    cr_assert_eq(ks_api_init(), 0);
    qt_rcu();
    cr_assert_eq(ks_config_load_default(&e->cfg), 0);
    cr_assert_eq(ks_cache_create(&e->cache), 0);
    struct ks_scheduler_opts o = {
        .config = e->cfg, .seeded = true, .seed = 3, .on_event = on_event, .ctx = &e->t, .flusher = flusher};
    struct ks_error err = {0};
    cr_assert_eq(ks_scheduler_create(&o, e->cache, &e->s, &err), 0, "%s", err.msg);
}

static void teardown(struct env *e)
{
    char msg[256];
    cr_expect_eq(ks_queue_check(ks_scheduler_queue(e->s), msg, sizeof(msg)), 0, "%s", msg);
    ks_scheduler_destroy(e->s);
    ks_cache_destroy(e->cache);
    ks_config_destroy(e->cfg);
}

static struct ks_node *node(const char *name, const char *alloc)
{
    struct ks_node *n = ks_fake_node(name, "");
    ks_fake_node_allocatable(n, alloc);
    return n;
}

static void add(struct env *e, struct ks_pod *p)
{
    cr_assert_eq(ks_scheduler_add_pod(e->s, p), 0);
    ks_pod_put(p); /* the scheduler holds its own reference */
}

Test(queue_scheduler, node_added_later_schedules_waiting_pods)
{
    struct env e;
    setup(&e, false);
    cr_assert_eq(ks_scheduler_node_event(e.s, NULL, node("small", "cpu=1,memory=4Gi,pods=110")), 0);
    add(&e, qt_pod("big", 0, "cpu=2"));
    ks_scheduler_run_until_idle(e.s);
    cr_expect_eq(e.t.scheduled, 0u);
    cr_expect_geq(e.t.unschedulable, 1u);
    struct ks_queue_counts c;
    ks_queue_count(ks_scheduler_queue(e.s), &c);
    cr_expect_eq(c.unschedulable, 1u, "run_until_idle stops with the pod waiting for an event");

    /* an unrelated node event does not retry it; a node that fits does */
    cr_assert_eq(ks_scheduler_node_event(e.s, NULL, node("tiny", "cpu=500m,memory=1Gi,pods=110")), 0);
    ks_queue_count(ks_scheduler_queue(e.s), &c);
    cr_expect_eq(c.unschedulable, 1u, "NodeResourcesFit's hint: the new node cannot hold the pod");
    cr_assert_eq(ks_scheduler_node_event(e.s, NULL, node("large", "cpu=4,memory=8Gi,pods=110")), 0);
    ks_scheduler_run_until_idle(e.s);
    cr_expect_eq(e.t.scheduled, 1u);
    cr_expect_str_eq(e.t.last_node, "large");
    teardown(&e);
}

Test(queue_scheduler, node_update_growing_allocatable_retries_pods)
{
    struct env e;
    setup(&e, false);
    struct ks_node *n1 = node("n1", "cpu=1,memory=4Gi,pods=110");
    cr_assert_eq(ks_scheduler_node_event(e.s, NULL, n1), 0);
    add(&e, qt_pod("p", 0, "cpu=2"));
    ks_scheduler_run_until_idle(e.s);
    cr_expect_eq(e.t.scheduled, 0u);
    struct ks_node *relabelled = ks_fake_node("n1", "disk=ssd");
    ks_fake_node_allocatable(relabelled, "cpu=1,memory=4Gi,pods=110");
    cr_assert_eq(ks_scheduler_node_event(e.s, n1, relabelled), 0);
    struct ks_queue_counts c;
    ks_queue_count(ks_scheduler_queue(e.s), &c);
    cr_expect_eq(c.unschedulable, 1u, "a label change does not help a pod NodeResourcesFit rejected");
    struct ks_node *grown = ks_fake_node("n1", "disk=ssd");
    ks_fake_node_allocatable(grown, "cpu=4,memory=4Gi,pods=110");
    cr_assert_eq(ks_scheduler_node_event(e.s, relabelled, grown), 0);
    ks_scheduler_run_until_idle(e.s);
    cr_expect_eq(e.t.scheduled, 1u);
    teardown(&e);
}

Test(queue_scheduler, deleting_a_bound_pod_frees_room)
{
    struct env e;
    setup(&e, false);
    cr_assert_eq(ks_scheduler_node_event(e.s, NULL, node("n1", "cpu=2,memory=4Gi,pods=110")), 0);
    struct ks_pod *first = qt_pod("first", 0, "cpu=2");
    cr_assert_eq(ks_scheduler_add_pod(e.s, first), 0);
    ks_scheduler_run_until_idle(e.s);
    cr_expect_eq(e.t.scheduled, 1u);
    add(&e, qt_pod("second", 0, "cpu=2"));
    ks_scheduler_run_until_idle(e.s);
    cr_expect_eq(e.t.scheduled, 1u);
    cr_assert_eq(ks_scheduler_delete_pod(e.s, first), 0);
    ks_pod_put(first);
    ks_scheduler_run_until_idle(e.s);
    cr_expect_eq(e.t.scheduled, 2u);
    cr_expect_str_eq(e.t.last_pod, "second");
    teardown(&e);
}

Test(queue_scheduler, pending_pods_updated_and_deleted)
{
    struct env e;
    setup(&e, false);
    struct ks_pod *a = qt_pod("a", 0, "cpu=8"), *b = qt_pod("b", 0, "cpu=1");
    cr_assert_eq(ks_scheduler_add_pod(e.s, a), 0);
    cr_assert_eq(ks_scheduler_add_pod(e.s, b), 0);
    cr_assert_eq(ks_scheduler_delete_pod(e.s, b), 0);
    cr_assert_eq(ks_scheduler_node_event(e.s, NULL, node("n1", "cpu=2,memory=4Gi,pods=110")), 0);
    ks_scheduler_run_until_idle(e.s);
    cr_expect_eq(e.t.scheduled, 0u, "a does not fit, b is gone");
    /* a scaled-down version of a: the update makes it fit */
    struct ks_pod *a2 = qt_pod("a", 0, "cpu=1");
    cr_assert_eq(ks_scheduler_update_pod(e.s, a, a2), 0);
    ks_pod_put(a2);
    ks_scheduler_run_until_idle(e.s);
    cr_expect_eq(e.t.scheduled, 1u);
    cr_expect_str_eq(e.t.last_pod, "a");
    ks_pod_put(a);
    ks_pod_put(b);
    teardown(&e);
}

Test(queue_scheduler, gated_pods_wait_for_their_gates)
{
    struct env e;
    setup(&e, false);
    cr_assert_eq(ks_scheduler_node_event(e.s, NULL, node("n1", "cpu=2,memory=4Gi,pods=110")), 0);
    struct ks_pod *g = qt_pod("g", 0, "cpu=1");
    qt_gates(g, "example.com/wait");
    cr_assert_eq(ks_scheduler_add_pod(e.s, g), 0);
    ks_scheduler_run_until_idle(e.s);
    cr_expect_eq(e.t.scheduled + e.t.unschedulable + e.t.errors, 0u, "a gated pod is never attempted");
    struct ks_queue_counts c;
    ks_queue_count(ks_scheduler_queue(e.s), &c);
    cr_expect_eq(c.gated, 1u);
    struct ks_pod *open = qt_pod("g", 0, "cpu=1");
    cr_assert_eq(ks_scheduler_update_pod(e.s, g, open), 0);
    ks_pod_put(open);
    ks_scheduler_run_until_idle(e.s);
    cr_expect_eq(e.t.scheduled, 1u);
    ks_pod_put(g);
    teardown(&e);
}

Test(queue_scheduler, flusher_thread_retries_backed_off_pods, .timeout = 30)
{
    struct env e;
    setup(&e, true);
    /* no node at all: an error-like failure, retried after the 1 s backoff by the flusher */
    add(&e, qt_pod("p", 0, "cpu=1"));
    cr_assert_eq(ks_scheduler_schedule_one(e.s, true), 1);
    cr_expect_eq(e.t.unschedulable, 1u);
    cr_assert_eq(ks_scheduler_schedule_one(e.s, true), 1, "woken by the flusher once the backoff ended");
    cr_expect_eq(e.t.unschedulable, 2u);
    teardown(&e);
}

Test(queue_scheduler, filter_counts_pods_nominated_to_a_node)
{
    struct env e;
    setup(&e, false);
    cr_assert_eq(ks_scheduler_node_event(e.s, NULL, node("n1", "cpu=4,memory=8Gi,pods=110")), 0);
    /*
     * A pod nominated to n1 that keeps its nomination: it never fits (its selector matches
     * no node) and may not preempt, so PostFilter leaves the nomination alone.
     */
    struct ks_pod *nominated = qt_pod("preemptor", 50, "cpu=3");
    nominated->node_selector = ks_fake_labels(&nominated->arena, "disk=none");
    nominated->preemption_policy = KS_PREEMPT_NEVER;
    nominated->has_preemption_policy = true;
    nominated->nominated_node_name = ks_intern("n1");
    add(&e, nominated);
    cr_assert_eq(ks_nominator_count(e.s->nominator), 1u);
    ks_scheduler_run_until_idle(e.s);
    cr_assert_eq(ks_nominator_count(e.s->nominator), 1u);

    /* a lower-priority pod may not take the room held for the preemptor */
    add(&e, qt_pod("low", 10, "cpu=2"));
    ks_scheduler_run_until_idle(e.s);
    cr_expect_eq(e.t.scheduled, 0u);
    cr_expect_str_eq(e.t.last_pod, "low");
    cr_expect(strstr(e.t.last_message, "Insufficient cpu"), "message: %s", e.t.last_message);

    /* a higher-priority one may */
    add(&e, qt_pod("high", 100, "cpu=2"));
    ks_scheduler_run_until_idle(e.s);
    cr_expect_eq(e.t.scheduled, 1u);
    cr_expect_str_eq(e.t.last_node, "n1");
    teardown(&e);
}
