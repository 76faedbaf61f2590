/*
 * test_sched_check.c - the invariant checkers the churn soak runs (ks_cache_check,
 * ksched/internal/sched_check.h): that they pass on consistent state and name the invariant, the
 * pod or node, and both values when it is broken; and regression tests for the bugs the
 * soak found (stale updates of bound pods, nominations of pods deleted while in flight).
 */
#include <criterion/criterion.h>

#include "../../cache/cache_internal.h"
#include "../../engine/scheduler_internal.h"
#include "cache/cache_helpers.h"
#include "ksched/api.h"
#include "ksched/internal/config.h"
#include "ksched/internal/nominator.h"
#include "ksched/internal/queue.h"
#include "ksched/internal/sched_check.h"
#include "ksched/internal/scheduler.h"

#include <string.h>

static struct ks_cache *cache;

static void setup(void)
{
    cr_assert_eq(ks_api_init(), 0);
    ks_rcu_register_thread();
    cr_assert_eq(ks_cache_create(&cache), 0);
}

static void teardown(void)
{
    ks_cache_destroy(cache);
    ks_rcu_unregister_thread();
}

TestSuite(sched_check, .init = setup, .fini = teardown);

/* Two nodes; pods with host ports, an extended resource, affinity and a PVC on n1, one assumed on n2. */
static void populate(void)
{
    cr_assert_eq(
        ks_cache_add_node(cache, mk_node("n1", "zone=a", "cpu=4,memory=8Gi,pods=10,example.com/gpu=2")), 0);
    cr_assert_eq(ks_cache_add_node(cache, mk_node("n2", "zone=b", NULL)), 0);
    struct ks_pod *a = mk_pod_raw("ns", "a", "cpu=1,memory=1Gi,example.com/gpu=1");
    pod_port(a, NULL, 8080, KS_PROTO_TCP);
    pod_volume(a, KS_VOLUME_PVC, "claim");
    ks_fake_pod_done(a);
    struct ks_pod *b = mk_pod_raw("ns", "b", "cpu=500m");
    pod_port(b, NULL, 8080, KS_PROTO_TCP); /* the same port twice: one entry in the set */
    pod_affinity(b, true, false, true);
    ks_fake_pod_done(b);
    cr_assert_eq(ks_cache_add_pod(cache, a, id("n1")), 0);
    cr_assert_eq(ks_cache_add_pod(cache, b, id("n1")), 0);
    struct ks_pod *c = mk_pod("ns", "c", "cpu=1");
    cr_assert_eq(ks_cache_assume_pod(cache, c, id("n2")), 0);
    ks_pod_put(c); /* the cache keeps its own */
}

Test(sched_check, consistent_cache_and_snapshot_pass)
{
    char msg[256];
    uint32_t assumed = 0;
    populate();
    cr_assert_geq(ks_cache_refresh(cache), 0);
    uint32_t bad =
        ks_cache_check(cache, KS_CACHE_CHECK_FIT | KS_CACHE_CHECK_SNAPSHOT, &assumed, msg, sizeof(msg));
    cr_expect_eq(bad, 0, "violation: %s", msg);
    cr_expect_eq(assumed, 1);
}

static struct node_info *info_of(const char *name)
{
    for (uint32_t b = 0; b <= cache->nmask; b++) {
        for (struct node_info *ni = cache->nbuckets[b]; ni; ni = ni->hnext) {
            if (ni->name == id(name))
                return ni;
        }
    }
    cr_assert_fail("no node_info %s", name);
    return NULL;
}

Test(sched_check, aggregate_drift_is_named_with_both_values)
{
    char msg[256];
    populate();
    info_of("n1")->req_milli_cpu += 250; /* as a lost RemovePod would leave it */
    cr_expect_geq(ks_cache_check(cache, 0, NULL, msg, sizeof(msg)), 1);
    cr_expect_str_eq(msg, "cache node n1: requested cpu (m) 1750, sum over its 2 pods 1500");
}

Test(sched_check, host_port_set_drift_is_found)
{
    char msg[256];
    populate();
    info_of("n1")->nports = 0; /* removing one of the two users dropped the shared port */
    cr_expect_geq(ks_cache_check(cache, 0, NULL, msg, sizeof(msg)), 1);
    cr_expect_str_eq(msg, "cache node n1: 0 host ports in use, the union over its 2 pods has 1");
}

Test(sched_check, overcommitted_node_is_reported_with_fit)
{
    char msg[256];
    populate();
    /* a bound pod from elsewhere may overcommit (the kubelet decides): only FIT asks */
    cr_assert_eq(ks_cache_add_pod(cache, mk_pod("ns", "big", "cpu=3"), id("n1")), 0);
    cr_expect_eq(ks_cache_check(cache, 0, NULL, msg, sizeof(msg)), 0, "%s", msg);
    cr_expect_eq(ks_cache_check(cache, KS_CACHE_CHECK_FIT, NULL, msg, sizeof(msg)), 1);
    cr_expect_str_eq(msg, "node n1 overcommitted: requested cpu 4500m, allocatable 4000m");
}

Test(sched_check, snapshot_record_differing_from_the_cache_is_found)
{
    char msg[256];
    populate();
    cr_assert_geq(ks_cache_refresh(cache), 0);
    ks_rcu_read_lock();
    struct ks_node_snap *rec = (struct ks_node_snap *)snap_node(cache, "n2");
    ks_rcu_read_unlock();
    rec->req_memory += 1;
    cr_expect_eq(ks_cache_check(cache, KS_CACHE_CHECK_SNAPSHOT, NULL, msg, sizeof(msg)), 1);
    cr_expect_str_eq(msg, "snapshot: node n2 record requested memory 1, cache 0");
    rec->req_memory -= 1;
    cr_expect_eq(ks_cache_check(cache, KS_CACHE_CHECK_SNAPSHOT, NULL, msg, sizeof(msg)), 0, "%s", msg);
    /* a node changed since the refresh is not compared until the next one */
    rec->req_memory += 1;
    struct ks_pod *key = mk_pod("ns", "c", NULL);
    cr_assert_eq(ks_cache_forget_pod(cache, key), 0);
    ks_pod_put(key);
    cr_expect_eq(ks_cache_check(cache, KS_CACHE_CHECK_SNAPSHOT, NULL, msg, sizeof(msg)), 0, "%s", msg);
}

/* ---- scheduler-wide checks ---------------------------------------------------------------------- */

struct sched_fixture {
    struct ks_config *cfg;
    struct ks_scheduler *s;
};

static void sched_up(struct sched_fixture *f)
{
    struct ks_error err = {0};
    cr_assert_eq(ks_config_load_default(&f->cfg), 0);
    struct ks_scheduler_opts opts = {.config = f->cfg, .seeded = true, .seed = 3, .binders = 1};
    cr_assert_eq(ks_scheduler_create(&opts, cache, &f->s, &err), 0, "%s", err.msg);
    cr_assert_eq(ks_scheduler_node_event(f->s, NULL, mk_node("n1", NULL, NULL)), 0);
}

static void sched_down(struct sched_fixture *f)
{
    ks_scheduler_destroy(f->s);
    ks_config_destroy(f->cfg);
}

static void expect_clean(struct ks_scheduler *s, uint64_t live)
{
    struct ks_check_report r = {0};
    ks_sched_check(s, KS_SCHED_CHECK_FIT, live, &r);
    cr_expect_eq(r.nviolations, 0, "first violation: %s", r.nkept ? r.kept[0] : "");
}

Test(sched_check, pod_in_two_places_and_lost_pod_are_named)
{
    struct sched_fixture f;
    struct ks_check_report r = {0};
    sched_up(&f);
    struct ks_pod *p = mk_pod("ns", "twice", "cpu=1");
    struct ks_pod *lost = mk_pod("ns", "lost", "cpu=1");
    cr_assert_eq(ks_scheduler_add_pod(f.s, p), 0);
    ks_sched_check_pod(f.s, p, KS_PLACE_QUEUED, KS_ID_NONE, &r);
    cr_expect_eq(r.nviolations, 0, "%s", r.kept[0]);
    cr_assert_eq(ks_cache_add_pod(cache, ks_pod_get(p), id("n1")), 0);
    ks_sched_check_pod(f.s, p, KS_PLACE_QUEUED, KS_ID_NONE, &r);
    ks_sched_check_pod(f.s, lost, KS_PLACE_QUEUED, KS_ID_NONE, &r);
    ks_sched_check(f.s, 0, 1, &r);
    cr_assert_eq(r.nviolations, 3);
    cr_expect_str_eq(r.kept[0], "pod twice: expected in exactly one place, found bound+activeQ");
    cr_expect_str_eq(r.kept[1], "pod lost: lost: expected queued, found nowhere");
    cr_expect_str_eq(r.kept[2],
                     "pods: expected 1 live pods held, found 2 (1 in the cache, 1 queued: 1 active, 0 "
                     "backoff, 0 unschedulable, 0 in flight)");
    sched_down(&f);
    ks_pod_put(p);
    ks_pod_put(lost);
}

Test(sched_check, nomination_of_a_deleted_pod_is_named)
{
    struct sched_fixture f;
    struct ks_check_report r = {0};
    sched_up(&f);
    struct ks_pod *p = mk_pod("ns", "gone", "cpu=1");
    cr_assert_eq(ks_scheduler_add_pod(f.s, p), 0);
    cr_assert_eq(ks_scheduler_delete_pod(f.s, p), 0);
    ks_sched_check_pod(f.s, p, 0, KS_ID_NONE, &r);
    cr_expect_eq(r.nviolations, 0, "%s", r.kept[0]);
    /* a nomination left behind, as the in-flight deletion bug left it */
    cr_assert_eq(ks_nominator_add(f.s->nominator, p, id("n1")), 0);
    ks_sched_check_pod(f.s, p, 0, KS_ID_NONE, &r);
    ks_sched_check(f.s, 0, 0, &r);
    cr_assert_eq(r.nviolations, 2);
    cr_expect_str_eq(r.kept[0], "pod gone: deleted, expected no nomination, still nominated to node n1");
    cr_expect_str_eq(r.kept[1],
                     "pod gone: nominated to node n1, expected waiting in the queue, found nowhere");
    sched_down(&f);
    ks_pod_put(p);
}

/*
 * Regression (found by the soak): an update of a pending pod delivered after the
 * scheduler bound it (the in-process binder confirmed it and the queue let it go) put it
 * back in the queue as a new pending pod: bound and in activeQ at once, scheduled again.
 */
Test(sched_check, stale_pending_update_of_a_bound_pod_is_ignored)
{
    struct sched_fixture f;
    struct ks_check_report r = {0};
    sched_up(&f);
    struct ks_pod *p = mk_pod("ns", "p", "cpu=1");
    cr_assert_eq(ks_scheduler_add_pod(f.s, p), 0);
    ks_scheduler_run_until_idle(f.s);
    ks_sched_check_pod(f.s, p, KS_PLACE_BOUND, id("n1"), &r);
    cr_assert_eq(r.nviolations, 0, "%s", r.kept[0]);

    struct ks_pod *v2 = mk_pod("ns", "p", "cpu=1"); /* the informer's older news: still pending */
    ks_fake_pod_labels(v2, "rev=2");
    cr_assert_eq(ks_scheduler_update_pod(f.s, p, v2), 0);
    ks_sched_check_pod(f.s, v2, KS_PLACE_BOUND, id("n1"), &r);
    cr_expect_eq(r.nviolations, 0, "%s", r.kept[0]);
    expect_clean(f.s, 1);
    sched_down(&f);
    ks_pod_put(p);
    ks_pod_put(v2);
}

static bool less_fifo(const void *ctx, const struct ks_queued_pod *a, const struct ks_queued_pod *b)
{
    (void)ctx;
    return a->timestamp_ns < b->timestamp_ns;
}

/*
 * Regression (found by the soak): a pod deleted during its scheduling cycle, whose
 * PostFilter then nominated it, kept that nomination for ever once the queue dropped it:
 * a phantom reservation on the node for every equal- or higher-priority pod, and a
 * reference never released.
 */
Test(sched_check, pod_deleted_in_flight_loses_the_nomination_its_cycle_made)
{
    struct ks_nominator *nom;
    struct ks_queue *q;
    cr_assert_eq(ks_nominator_create(&nom), 0);
    struct ks_queue_opts qo = {.less = less_fifo, .nominator = nom};
    cr_assert_eq(ks_queue_create_opts(&qo, &q), 0);
    struct ks_pod *p = mk_pod("ns", "preemptor", "cpu=1");
    cr_assert_eq(ks_queue_add(q, ks_pod_get(p), 1), 0);
    struct ks_queued_pod *qp = ks_queue_pop(q, false);
    cr_assert_not_null(qp);
    uint64_t cycle = ks_queue_cycle(q);

    /* the deletion event: removed from the queue (in flight: marked) and from the nominator */
    cr_assert(ks_queue_delete(q, p));
    ks_nominator_remove(nom, p);
    /* then the cycle's PostFilter nominates it, and the failure gives it back */
    cr_assert_eq(ks_nominator_add(nom, qp->pod, id("n1")), 0);
    cr_assert_eq(ks_queue_add_unschedulable(q, qp, cycle, KS_EVENT_ALL), 0);

    cr_expect_eq(ks_nominator_count(nom), 0, "a deleted pod is still nominated");
    cr_expect_eq(ks_nominator_node(nom, p), KS_ID_EMPTY);
    ks_queue_destroy(q);
    ks_nominator_destroy(nom);
    cr_expect_eq(p->refs, 1, "references left: %u (ours only expected)", p->refs);
    ks_pod_put(p);
}

/* A backend whose API server delivers the binding and then the pod's deletion before the binder confirms. */
struct racer {
    struct ks_scheduler *s;
    int calls;
};

static int bind_then_delete(void *ctx, const struct ks_pod *pod, uint32_t node, struct ks_status *st)
{
    struct racer *r = ctx;
    (void)st;
    r->calls++;
    struct ks_pod *bound = mk_pod("ns", pod->meta.name, "cpu=1");
    bound->node_name = node;
    /* this binder thread is the one event-intake thread meanwhile (the test's waits for it) */
    cr_expect_eq(ks_scheduler_update_pod(r->s, pod, bound), 0);
    cr_expect_eq(ks_scheduler_delete_pod(r->s, bound), 0);
    ks_pod_put(bound);
    return 0;
}

/* Schedule one pod on one node through @bind and check that the deleted pod is nowhere. */
static void expect_bind_race_leaves_nothing(int (*bind)(void *, const struct ks_pod *, uint32_t,
                                                        struct ks_status *))
{
    struct ks_config *cfg;
    struct ks_scheduler *s;
    struct ks_error err = {0};
    struct racer r = {0};
    struct ks_check_report rep = {0};
    cr_assert_eq(ks_config_load_default(&cfg), 0);
    struct ks_scheduler_opts opts = {
        .config = cfg, .seeded = true, .binders = 1, .binder = {.bind = bind, .ctx = &r}};
    cr_assert_eq(ks_scheduler_create(&opts, cache, &s, &err), 0, "%s", err.msg);
    r.s = s;
    cr_assert_eq(ks_scheduler_node_event(s, NULL, mk_node("n1", NULL, NULL)), 0);
    struct ks_pod *p = mk_pod("ns", "p", "cpu=1");
    cr_assert_eq(ks_scheduler_add_pod(s, p), 0);
    ks_scheduler_run_until_idle(s);
    cr_assert_eq(r.calls, 1);
    cr_expect_eq(ks_cache_pod_node(cache, p), KS_ID_NONE, "the deleted pod is still in the cache");
    ks_sched_check_pod(s, p, 0, KS_ID_NONE, &rep);
    ks_sched_check(s, KS_SCHED_CHECK_FIT, 0, &rep);
    cr_expect_eq(rep.nviolations, 0, "first violation: %s", rep.kept[0]);
    ks_scheduler_destroy(s);
    ks_config_destroy(cfg);
    ks_pod_put(p);
}

/*
 * Regression (found by the soak): the binder confirmed a pod into the cache after its
 * binding succeeded even when the pod had been deleted meanwhile (or evicted as a
 * preemption victim while assumed): ks_cache_add_pod() found no entry and added one, so
 * a deleted pod held its node's resources for ever.
 */
Test(sched_check, pod_deleted_while_its_binding_finishes_is_not_resurrected)
{
    expect_bind_race_leaves_nothing(bind_then_delete);
}

/* The API server binds the pod and the informer then reports its deletion with the last
 * version it had seen, still pending (a relist after a watch outage does this). */
static int bind_then_delete_pending(void *ctx, const struct ks_pod *pod, uint32_t node, struct ks_status *st)
{
    struct racer *r = ctx;
    (void)st;
    (void)node;
    r->calls++;
    cr_expect_eq(ks_scheduler_delete_pod(r->s, pod), 0);
    return 0;
}

/*
 * Regression (found by the soak under TSan): a pending pod deleted while its binding was
 * in flight was only marked in the queue; its assumption stayed in the cache, so the
 * binder confirmed it and the deleted pod held its node's resources for ever.
 */
Test(sched_check, pending_pod_deleted_while_in_flight_leaves_no_assumption)
{
    expect_bind_race_leaves_nothing(bind_then_delete_pending);
}
