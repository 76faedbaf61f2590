/*
 * test_cache.c - assume / forget / finish-binding / expiry, pod and node events, and the
 * per-node aggregates as the snapshot shows them (cache/cache.c, cache/node_info.c).
 *
 * Cases follow upstream's pkg/scheduler/backend/cache/cache_test.go (TestAssumePodScheduled,
 * TestExpirePod, TestAddPodWillConfirm, TestAddPodAfterExpiration, TestUpdatePod,
 * TestRemovePod, TestForgetPod, TestNodeOperators, TestAddPodWillReplaceAssumed) and
 * framework/types_test.go (NodeInfo AddPod / RemovePod aggregates), rewritten for ksched's
 * API: pods are identified by namespace/name and results are read from the snapshot.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <errno.h>

#include "cache/cache_helpers.h"

static void setup(void)
{
    cr_assert(eq(int, ks_api_init(), 0));
    ks_rcu_register_thread();
}

static void teardown(void)
{
    ks_rcu_unregister_thread();
}

TestSuite(cache, .init = setup, .fini = teardown);

static struct ks_cache *mk_cache(void)
{
    struct ks_cache *c = NULL;
    cr_assert(eq(int, ks_cache_create(&c), 0));
    cr_assert(not(eq(ptr, c, NULL)));
    return c;
}

static void add_node(struct ks_cache *c, struct ks_node *n)
{
    cr_assert(eq(int, ks_cache_add_node(c, n), 0), "add node %s", n->meta.name);
}

/* Refresh and check the snapshot now holds @n nodes. */
static int refresh(struct ks_cache *c)
{
    int rc = ks_cache_refresh(c);
    cr_assert(ge(int, rc, 0), "refresh: %d", rc);
    return rc;
}

/* Requested cpu/memory and pod count of node @name in the current snapshot. */
static void expect_node(struct ks_cache *c, const char *name, int64_t cpu, int64_t mem, uint32_t npods)
{
    ks_rcu_read_lock();
    const struct ks_node_snap *r = snap_node(c, name);
    cr_assert(not(eq(ptr, (void *)r, NULL)), "node %s in the snapshot", name);
    cr_expect(eq(i64, r->req_milli_cpu, cpu), "%s requested cpu", name);
    cr_expect(eq(i64, r->req_memory, mem), "%s requested memory", name);
    cr_expect(eq(u32, r->npods, npods), "%s pods", name);
    ks_rcu_read_unlock();
}

static void expect_counts(struct ks_cache *c, uint32_t nodes, uint32_t pods)
{
    uint32_t n = 0, p = 0;
    ks_cache_counts(c, &n, &p);
    cr_expect(eq(u32, n, nodes), "node infos");
    cr_expect(eq(u32, p, pods), "pods");
}

/* ---- assume, confirm, forget, expire ------------------------------------------------------------ */

Test(cache, assumed_pod_is_counted)
{
    struct ks_cache *c = mk_cache();
    add_node(c, mk_node("n1", NULL, NULL));
    struct ks_pod *p = mk_pod("default", "p", "cpu=1,memory=1Gi");
    cr_assert(eq(int, ks_cache_assume_pod(c, p, id("n1")), 0));
    cr_expect(ks_cache_is_assumed(c, p));
    cr_expect(eq(u32, ks_cache_pod_node(c, p), id("n1")));
    cr_expect(eq(int, ks_cache_assume_pod(c, p, id("n1")), -EEXIST), "assumed twice");
    refresh(c);
    expect_node(c, "n1", 1000, GI, 1);
    ks_cache_destroy(c);
    ks_pod_put(p); /* assumed only: the test's reference */
}

Test(cache, assume_then_add_is_not_counted_twice)
{
    struct ks_cache *c = mk_cache();
    add_node(c, mk_node("n1", NULL, NULL));
    struct ks_pod *p = mk_pod("default", "p", "cpu=1,memory=1Gi");
    cr_assert(eq(int, ks_cache_assume_pod(c, p, id("n1")), 0));
    cr_assert(eq(int, ks_cache_add_pod(c, p, id("n1")), 0), "confirm: ownership moves to the cache");
    cr_expect(not(ks_cache_is_assumed(c, p)));
    refresh(c);
    expect_node(c, "n1", 1000, GI, 1);
    expect_counts(c, 1, 1);
    cr_expect(eq(int, ks_cache_add_pod(c, p, id("n1")), -EEXIST), "added twice");
    ks_cache_destroy(c);
}

Test(cache, confirm_in_place_publishes_nothing)
{
    struct ks_cache *c = mk_cache();
    add_node(c, mk_node("n1", NULL, NULL));
    struct ks_pod *p = mk_pod("default", "p", "cpu=1,memory=1Gi");
    struct ks_pod *other = mk_pod("default", "p", "cpu=1,memory=1Gi"); /* same pod, another object */
    cr_assert(eq(int, ks_cache_assume_pod(c, p, id("n1")), 0));
    refresh(c);
    cr_expect(eq(int, ks_cache_confirm_pod(c, other, id("n1")), -ENOENT), "another object is stale news");
    cr_expect(eq(int, ks_cache_confirm_pod(c, p, id("n2")), -ENOENT), "another node is stale news");
    cr_expect(ks_cache_is_assumed(c, p));
    cr_assert(eq(int, ks_cache_confirm_pod(c, ks_pod_get(p), id("n1")), 0));
    cr_expect(not(ks_cache_is_assumed(c, p)));
    cr_expect(eq(int, ks_cache_refresh(c), 0), "the node's aggregates did not change: no new record");
    expect_node(c, "n1", 1000, GI, 1);
    expect_counts(c, 1, 1);
    ks_cache_destroy(c);
    ks_pod_put(p); /* assumed by the cache with its own reference: the test's is still held */
    ks_pod_put(other);
}

Test(cache, add_replaces_an_assumed_object_of_the_same_pod)
{
    struct ks_cache *c = mk_cache();
    add_node(c, mk_node("n1", NULL, NULL));
    struct ks_pod *assumed = mk_pod("default", "p", "cpu=1");
    struct ks_pod *bound = mk_pod("default", "p", "cpu=2"); /* the API server's object */
    cr_assert(eq(int, ks_cache_assume_pod(c, assumed, id("n1")), 0));
    cr_assert(eq(int, ks_cache_add_pod(c, bound, id("n1")), 0));
    refresh(c);
    expect_node(c, "n1", 2000, 0, 1);
    ks_rcu_read_lock();
    cr_expect(eq(ptr, (void *)snap_node(c, "n1")->pods[0], bound));
    ks_rcu_read_unlock();
    ks_cache_destroy(c);
    ks_pod_put(assumed);
}

Test(cache, add_on_another_node_than_assumed_moves_the_pod)
{
    struct ks_cache *c = mk_cache();
    add_node(c, mk_node("n1", NULL, NULL));
    add_node(c, mk_node("n2", NULL, NULL));
    struct ks_pod *p = mk_pod("default", "p", "cpu=500m,memory=1Gi");
    cr_assert(eq(int, ks_cache_assume_pod(c, p, id("n1")), 0));
    refresh(c);
    expect_node(c, "n1", 500, GI, 1);
    cr_assert(eq(int, ks_cache_add_pod(c, p, id("n2")), 0));
    cr_expect(eq(int, refresh(c), 2), "both nodes rebuilt");
    expect_node(c, "n1", 0, 0, 0);
    expect_node(c, "n2", 500, GI, 1);
    cr_expect(eq(u32, ks_cache_pod_node(c, p), id("n2")));
    expect_counts(c, 2, 1);
    ks_cache_destroy(c);
}

Test(cache, references_are_released_after_the_snapshot)
{
    struct ks_cache *c = mk_cache();
    add_node(c, mk_node("n1", NULL, NULL));
    refresh(c);
    struct ks_pod *p = mk_pod("default", "p", "cpu=1");
    cr_assert(eq(int, ks_cache_assume_pod(c, p, id("n1")), 0));
    cr_expect(eq(u32, p->refs, 2), "assume takes a reference of its own");
    refresh(c);
    cr_assert(eq(int, ks_cache_forget_pod(c, p), 0));
    ks_rcu_barrier();
    cr_expect(eq(u32, p->refs, 2), "the published version still lists the pod");
    refresh(c); /* retires that version */
    ks_rcu_barrier();
    cr_expect(eq(u32, p->refs, 1), "released once no version can reach it");

    cr_assert(eq(int, ks_cache_add_pod(c, ks_pod_get(p), id("n1")), 0));
    cr_expect(eq(u32, p->refs, 2), "add takes over the reference it is given");
    cr_assert(eq(int, ks_cache_remove_pod(c, p), 0));
    refresh(c);
    ks_rcu_barrier();
    cr_expect(eq(u32, p->refs, 1));
    ks_cache_destroy(c);
    ks_pod_put(p);
}

Test(cache, forget_undoes_an_assumption)
{
    struct ks_cache *c = mk_cache();
    add_node(c, mk_node("n1", NULL, NULL));
    struct ks_pod *p = mk_pod("default", "p", "cpu=1,memory=1Gi");
    struct ks_pod *q = mk_pod("default", "q", "cpu=1");
    cr_assert(eq(int, ks_cache_assume_pod(c, p, id("n1")), 0));
    cr_assert(eq(int, ks_cache_add_pod(c, q, id("n1")), 0));
    refresh(c);
    expect_node(c, "n1", 2000, GI, 2);

    cr_assert(eq(int, ks_cache_forget_pod(c, p), 0));
    cr_expect(not(ks_cache_is_assumed(c, p)));
    cr_expect(eq(int, ks_cache_forget_pod(c, p), -ENOENT), "already forgotten");
    cr_expect(eq(int, ks_cache_forget_pod(c, q), -EINVAL), "a bound pod cannot be forgotten");
    refresh(c);
    expect_node(c, "n1", 1000, 0, 1);
    expect_counts(c, 1, 1);

    /* forgotten: it can be assumed again elsewhere */
    add_node(c, mk_node("n2", NULL, NULL));
    cr_assert(eq(int, ks_cache_assume_pod(c, p, id("n2")), 0));
    refresh(c);
    expect_node(c, "n2", 1000, GI, 1);
    ks_cache_destroy(c);
    ks_pod_put(p);
}

Test(cache, forget_checks_the_assumed_node)
{
    struct ks_cache *c = mk_cache();
    add_node(c, mk_node("n1", NULL, NULL));
    struct ks_pod *p = mk_pod("default", "p", "cpu=1");
    cr_assert(eq(int, ks_cache_assume_pod(c, p, id("n1")), 0));
    p->node_name = id("n2");
    cr_expect(eq(int, ks_cache_forget_pod(c, p), -EINVAL), "assumed on n1, forgotten from n2");
    p->node_name = id("n1");
    cr_expect(eq(int, ks_cache_forget_pod(c, p), 0));
    ks_cache_destroy(c);
    ks_pod_put(p);
}

Test(cache, remove_of_an_assumed_pod)
{
    struct ks_cache *c = mk_cache();
    add_node(c, mk_node("n1", NULL, NULL));
    struct ks_pod *p = mk_pod("default", "p", "cpu=1");
    cr_assert(eq(int, ks_cache_assume_pod(c, p, id("n1")), 0));
    cr_assert(eq(int, ks_cache_remove_pod(c, p), 0));
    cr_expect(not(ks_cache_is_assumed(c, p)));
    cr_expect(eq(int, ks_cache_remove_pod(c, p), -ENOENT));
    refresh(c);
    expect_node(c, "n1", 0, 0, 0);
    expect_counts(c, 1, 0);
    ks_cache_destroy(c);
    ks_pod_put(p); /* only assumed: the test kept its reference */
}

/* ---- pod events ----------------------------------------------------------------------------------- */

Test(cache, update_pod_replaces_the_object)
{
    struct ks_cache *c = mk_cache();
    add_node(c, mk_node("n1", NULL, NULL));
    add_node(c, mk_node("n2", NULL, NULL));
    struct ks_pod *v1 = mk_pod("default", "p", "cpu=1,memory=1Gi");
    struct ks_pod *v2 = mk_pod("default", "p", "cpu=2,memory=1Gi");
    struct ks_pod *v3 = mk_pod("default", "p", "cpu=3");
    cr_assert(eq(int, ks_cache_add_pod(c, v1, id("n1")), 0));
    cr_assert(eq(int, ks_cache_update_pod(c, v2, id("n1")), 0));
    refresh(c);
    expect_node(c, "n1", 2000, GI, 1);
    cr_assert(eq(int, ks_cache_update_pod(c, v3, id("n2")), 0), "an update may move the pod");
    refresh(c);
    expect_node(c, "n1", 0, 0, 0);
    expect_node(c, "n2", 3000, 0, 1);

    struct ks_pod *a = mk_pod("default", "a", "cpu=1");
    cr_assert(eq(int, ks_cache_assume_pod(c, a, id("n1")), 0));
    struct ks_pod *a2 = mk_pod("default", "a", "cpu=1");
    cr_expect(eq(int, ks_cache_update_pod(c, a2, id("n1")), -EINVAL), "assumed pods are not updated");
    ks_cache_destroy(c);
    ks_pod_put(a);
    ks_pod_put(a2);
}

Test(cache, update_pod_rejected_object_stays_with_the_caller)
{
    struct ks_cache *c = mk_cache();
    struct ks_pod *p = mk_pod("default", "p", "cpu=1");
    cr_assert(eq(int, ks_cache_update_pod(c, p, id("n1")), -ENOENT));
    cr_assert(eq(int, ks_cache_add_pod(c, p, KS_ID_EMPTY), -EINVAL), "no node name");
    ks_cache_destroy(c);
    ks_pod_put(p);
}

Test(cache, pods_are_keyed_by_namespace_and_name)
{
    struct ks_cache *c = mk_cache();
    add_node(c, mk_node("n1", NULL, NULL));
    cr_assert(eq(int, ks_cache_add_pod(c, mk_pod("ns1", "p", "cpu=1"), id("n1")), 0));
    cr_assert(eq(int, ks_cache_add_pod(c, mk_pod("ns2", "p", "cpu=1"), id("n1")), 0));
    struct ks_pod *dup = mk_pod("ns1", "p", "cpu=1");
    cr_expect(eq(int, ks_cache_add_pod(c, dup, id("n1")), -EEXIST));
    expect_counts(c, 1, 2);
    /* removal by key: another object of the same pod removes the cached one */
    cr_assert(eq(int, ks_cache_remove_pod(c, dup), 0));
    expect_counts(c, 1, 1);
    refresh(c);
    expect_node(c, "n1", 1000, 0, 1);
    ks_cache_destroy(c);
    ks_pod_put(dup);
}

Test(cache, many_pods_grow_the_tables)
{
    struct ks_cache *c = mk_cache();
    add_node(c, mk_node("n1", NULL, "cpu=1000,memory=1000Gi,pods=10000"));
    char name[32];
    for (int i = 0; i < 3000; i++) {
        snprintf(name, sizeof(name), "p-%d", i);
        cr_assert(eq(int, ks_cache_add_pod(c, mk_pod("default", name, "cpu=10m"), id("n1")), 0));
    }
    for (int i = 0; i < 3000; i += 2) {
        snprintf(name, sizeof(name), "p-%d", i);
        struct ks_pod *key = ks_fake_pod("default", name);
        cr_assert(eq(int, ks_cache_remove_pod(c, key), 0), "%s", name);
        ks_pod_destroy(key);
    }
    refresh(c);
    expect_node(c, "n1", 1500 * 10, 0, 1500);
    expect_counts(c, 1, 1500);
    ks_cache_destroy(c);
}

/* ---- node events ----------------------------------------------------------------------------------- */

Test(cache, node_removal_keeps_pods_until_they_go)
{
    struct ks_cache *c = mk_cache();
    add_node(c, mk_node("n1", NULL, NULL));
    add_node(c, mk_node("n2", NULL, NULL));
    cr_assert(eq(int, ks_cache_add_pod(c, mk_pod("default", "p", "cpu=1,memory=1Gi"), id("n1")), 0));
    refresh(c);

    cr_assert(eq(int, ks_cache_remove_node(c, id("n1")), 0));
    cr_expect(eq(int, ks_cache_remove_node(c, id("n1")), -ENOENT));
    refresh(c);
    ks_rcu_read_lock();
    const struct ks_snapshot *s = ks_cache_snapshot(c);
    cr_expect(eq(u32, s->nnodes, 1), "a ghost node is not in the snapshot");
    cr_expect(eq(ptr, (void *)ks_snapshot_find(s, id("n1")), NULL));
    cr_expect(eq(u32, ks_snapshot_node(s, 0)->name, id("n2")));
    ks_rcu_read_unlock();
    expect_counts(c, 2, 1);

    /* the node comes back: its pod's accounting was kept */
    add_node(c, mk_node("n1", NULL, "cpu=8,memory=16Gi,pods=110"));
    refresh(c);
    expect_node(c, "n1", 1000, GI, 1);
    ks_rcu_read_lock();
    cr_expect(eq(i64, snap_node(c, "n1")->alloc_milli_cpu, 8000));
    ks_rcu_read_unlock();

    /* removed again, then its last pod: the node info goes away */
    cr_assert(eq(int, ks_cache_remove_node(c, id("n1")), 0));
    struct ks_pod *key = ks_fake_pod("default", "p");
    cr_assert(eq(int, ks_cache_remove_pod(c, key), 0));
    ks_pod_destroy(key);
    expect_counts(c, 1, 0);
    refresh(c);
    ks_rcu_read_lock();
    cr_expect(eq(u32, ks_cache_snapshot(c)->nnodes, 1));
    ks_rcu_read_unlock();
    ks_cache_destroy(c);
}

Test(cache, duplicate_node_is_refused)
{
    struct ks_cache *c = mk_cache();
    add_node(c, mk_node("n1", NULL, NULL));
    struct ks_node *dup = mk_node("n1", NULL, NULL);
    cr_expect(eq(int, ks_cache_add_node(c, dup), -EEXIST));
    ks_node_destroy(dup);
    struct ks_node *other = mk_node("n9", NULL, NULL);
    cr_expect(eq(int, ks_cache_update_node(c, other), -ENOENT));
    ks_node_destroy(other);
    ks_cache_destroy(c);
}

Test(cache, pod_on_an_unknown_node_waits_for_it)
{
    struct ks_cache *c = mk_cache();
    cr_assert(eq(int, ks_cache_add_pod(c, mk_pod("default", "p", "cpu=1"), id("n9")), 0));
    expect_counts(c, 1, 1);
    refresh(c);
    ks_rcu_read_lock();
    cr_expect(eq(u32, ks_cache_snapshot(c)->nnodes, 0));
    ks_rcu_read_unlock();
    add_node(c, mk_node("n9", NULL, NULL));
    refresh(c);
    expect_node(c, "n9", 1000, 0, 1);
    ks_cache_destroy(c);
}

Test(cache, update_node_is_reflected)
{
    struct ks_cache *c = mk_cache();
    add_node(c, mk_node("n1", NULL, "cpu=4,memory=8Gi,pods=110"));
    add_node(c, mk_node("n2", NULL, NULL));
    cr_assert(eq(int, ks_cache_add_pod(c, mk_pod("default", "p", "cpu=1"), id("n1")), 0));
    refresh(c);
    ks_rcu_read_lock();
    const struct ks_node_snap *before = snap_node(c, "n1"), *n2 = snap_node(c, "n2");
    cr_expect(eq(i64, before->alloc_milli_cpu, 4000));

    struct ks_node *n = mk_node("n1", NULL, "cpu=8,memory=16Gi,pods=50,ephemeral-storage=100Gi");
    n->unschedulable = true;
    cr_assert(eq(int, ks_cache_update_node(c, n), 0));
    cr_expect(eq(int, ks_cache_refresh(c), 1));
    const struct ks_node_snap *after = snap_node(c, "n1");
    cr_expect(not(eq(ptr, (void *)after, (void *)before)));
    cr_expect(eq(i64, after->alloc_milli_cpu, 8000));
    cr_expect(eq(i64, after->alloc_memory, 16 * GI));
    cr_expect(eq(i64, after->alloc_ephemeral, 100 * GI));
    cr_expect(eq(i32, after->alloc_pods, 50));
    cr_expect(eq(u32, after->flags, KS_SNAP_HAS_NODE | KS_SNAP_SEL_COUNTS | KS_SNAP_UNSCHEDULABLE));
    cr_expect(eq(ptr, (void *)after->node, n));
    cr_expect(eq(i64, after->req_milli_cpu, 1000), "pods kept across the update");
    cr_expect(gt(u64, after->generation, before->generation));
    cr_expect(eq(ptr, (void *)snap_node(c, "n2"), (void *)n2), "n2 untouched");
    ks_rcu_read_unlock();
    ks_cache_destroy(c);
}

Test(cache, taint_reasons_are_precomputed)
{
    struct ks_cache *c = mk_cache();
    struct ks_node *n = mk_node("n1", NULL, NULL);
    ks_fake_node_taints(n, "dedicated=gpu:NoSchedule,maintenance:NoExecute");
    add_node(c, n);
    refresh(c);
    ks_rcu_read_lock();
    const struct ks_node_snap *r = snap_node(c, "n1");
    cr_assert(eq(u32, r->node->ntaints, 2));
    cr_expect(eq(str, (char *)ks_intern_str(r->taint_reasons[0]),
                 "node(s) had untolerated taint {dedicated: gpu}"));
    cr_expect(
        eq(str, (char *)ks_intern_str(r->taint_reasons[1]), "node(s) had untolerated taint {maintenance: }"));
    ks_rcu_read_unlock();
    ks_cache_destroy(c);
}

/* ---- aggregates ------------------------------------------------------------------------------------ */

Test(cache, requested_and_nonzero_requested)
{
    struct ks_cache *c = mk_cache();
    add_node(c, mk_node("n1", NULL, "cpu=8,memory=32Gi,pods=110,example.com/gpu=4"));
    cr_assert(eq(int,
                 ks_cache_add_pod(c, mk_pod("d", "a", "cpu=500m,memory=1Gi,ephemeral-storage=1Gi"), id("n1")),
                 0));
    cr_assert(eq(int, ks_cache_add_pod(c, mk_pod("d", "b", NULL), id("n1")), 0)); /* best effort */
    cr_assert(eq(int, ks_cache_add_pod(c, mk_pod("d", "g", "cpu=1,example.com/gpu=2"), id("n1")), 0));
    refresh(c);
    ks_rcu_read_lock();
    const struct ks_node_snap *r = snap_node(c, "n1");
    cr_expect(eq(i64, r->req_milli_cpu, 1500));
    cr_expect(eq(i64, r->req_memory, GI));
    cr_expect(eq(i64, r->req_ephemeral, GI));
    cr_expect(eq(i64, r->nonzero_milli_cpu, 500 + 100 + 1000), "100m default for the best-effort pod");
    cr_expect(eq(i64, r->nonzero_memory, GI + 200 * MI + 200 * MI), "200Mi defaults");
    cr_expect(eq(u32, r->npods, 3));
    cr_expect(eq(i32, r->alloc_pods, 110));
    cr_assert(eq(u32, r->nreq_scalar, 1));
    cr_expect(eq(u32, r->req_scalar[0].name, id("example.com/gpu")));
    cr_expect(eq(i64, r->req_scalar[0].value, 2));
    ks_rcu_read_unlock();

    struct ks_pod *key = ks_fake_pod("d", "g");
    cr_assert(eq(int, ks_cache_remove_pod(c, key), 0));
    ks_pod_destroy(key);
    refresh(c);
    ks_rcu_read_lock();
    r = snap_node(c, "n1");
    cr_expect(eq(u32, r->nreq_scalar, 0), "a scalar back at zero is dropped");
    cr_expect(eq(i64, r->req_milli_cpu, 500));
    cr_expect(eq(i64, r->nonzero_milli_cpu, 600));
    ks_rcu_read_unlock();
    ks_cache_destroy(c);
}

static bool has_port(const struct ks_node_snap *r, const char *ip, uint16_t port, enum ks_protocol proto)
{
    for (uint32_t i = 0; i < r->nports; i++) {
        if (r->ports[i].ip == id(ip) && r->ports[i].port == port && r->ports[i].protocol == proto)
            return true;
    }
    return false;
}

Test(cache, used_host_ports)
{
    struct ks_cache *c = mk_cache();
    add_node(c, mk_node("n1", NULL, NULL));
    struct ks_pod *a = mk_pod_raw("d", "a", "cpu=1");
    pod_port(a, NULL, 8080, KS_PROTO_TCP);
    pod_port(a, "10.0.0.1", 53, KS_PROTO_UDP);
    pod_port(a, NULL, 0, KS_PROTO_TCP); /* no hostPort: not used */
    struct ks_container *sidecar = ks_fake_init_container(a, NULL, true);
    (void)sidecar;
    ks_fake_init_container(a, NULL, false);
    /* host ports of a restartable init container count; a plain init container's do not */
    for (uint32_t i = 0; i < a->ninit_containers; i++) {
        struct ks_container *ic = &a->init_containers[i];
        ic->ports = cache_test_must(ks_arena_calloc(&a->arena, 1, sizeof(*ic->ports)));
        ic->ports[0] = (struct ks_container_port){.container_port = 1, .host_port = (int32_t)(9000 + i)};
        ic->nports = 1;
    }
    ks_fake_pod_done(a);
    struct ks_pod *b = mk_pod_raw("d", "b", NULL);
    pod_port(b, NULL, 8080, KS_PROTO_TCP); /* the same (ip, protocol, port): a set keeps one */
    ks_fake_pod_done(b);
    cr_assert(eq(int, ks_cache_add_pod(c, a, id("n1")), 0));
    cr_assert(eq(int, ks_cache_add_pod(c, b, id("n1")), 0));
    refresh(c);
    ks_rcu_read_lock();
    const struct ks_node_snap *r = snap_node(c, "n1");
    cr_expect(eq(u32, r->nports, 3));
    cr_expect(has_port(r, "0.0.0.0", 8080, KS_PROTO_TCP), "empty hostIP is 0.0.0.0");
    cr_expect(has_port(r, "10.0.0.1", 53, KS_PROTO_UDP));
    cr_expect(has_port(r, "0.0.0.0", 9000, KS_PROTO_TCP), "sidecar port");
    cr_expect(not(has_port(r, "0.0.0.0", 9001, KS_PROTO_TCP)), "init container port");
    for (uint32_t i = 1; i < r->nports; i++)
        cr_expect(le(u16, r->ports[i - 1].port, r->ports[i].port), "sorted by port");
    ks_rcu_read_unlock();

    /* HostPortInfo is a set: removing b drops 8080 although a still declares it (as upstream) */
    struct ks_pod *key = ks_fake_pod("d", "b");
    cr_assert(eq(int, ks_cache_remove_pod(c, key), 0));
    ks_pod_destroy(key);
    refresh(c);
    ks_rcu_read_lock();
    r = snap_node(c, "n1");
    cr_expect(eq(u32, r->nports, 2));
    cr_expect(not(has_port(r, "0.0.0.0", 8080, KS_PROTO_TCP)));
    ks_rcu_read_unlock();
    ks_cache_destroy(c);
}

Test(cache, pvc_reference_counts)
{
    struct ks_cache *c = mk_cache();
    add_node(c, mk_node("n1", NULL, NULL));
    add_node(c, mk_node("n2", NULL, NULL));
    struct ks_pod *a = mk_pod_raw("ns", "a", NULL);
    pod_volume(a, KS_VOLUME_PVC, "data");
    pod_volume(a, KS_VOLUME_EPHEMERAL, "a-scratch");
    pod_volume(a, KS_VOLUME_OTHER, NULL);
    ks_fake_pod_done(a);
    struct ks_pod *b = mk_pod_raw("ns", "b", NULL);
    pod_volume(b, KS_VOLUME_PVC, "data");
    ks_fake_pod_done(b);
    struct ks_pod *d = mk_pod_raw("other", "d", NULL);
    pod_volume(d, KS_VOLUME_PVC, "data");
    ks_fake_pod_done(d);
    cr_assert(eq(int, ks_cache_add_pod(c, a, id("n1")), 0));
    cr_assert(eq(int, ks_cache_add_pod(c, b, id("n1")), 0));
    cr_assert(eq(int, ks_cache_assume_pod(c, d, id("n2")), 0));
    refresh(c);
    ks_rcu_read_lock();
    const struct ks_node_snap *r = snap_node(c, "n1");
    cr_assert(eq(u32, r->npvc_refs, 2));
    uint32_t data = id("ns/data"), scratch = id("ns/a-scratch");
    cr_expect(eq(u32, r->pvc_refs[0], data < scratch ? data : scratch), "sorted");
    cr_expect(eq(u32, r->pvc_refs[1], data < scratch ? scratch : data));
    const struct ks_snapshot *s = ks_cache_snapshot(c);
    cr_expect(eq(u32, s->npvcs_in_use, 3), "ns/data, ns/a-scratch, other/data");
    ks_rcu_read_unlock();

    /* one of two users leaves: the claim is still referenced */
    struct ks_pod *key = ks_fake_pod("ns", "a");
    cr_assert(eq(int, ks_cache_remove_pod(c, key), 0));
    ks_pod_destroy(key);
    cr_assert(eq(int, ks_cache_forget_pod(c, d), 0));
    refresh(c);
    ks_rcu_read_lock();
    r = snap_node(c, "n1");
    cr_assert(eq(u32, r->npvc_refs, 1));
    cr_expect(eq(u32, r->pvc_refs[0], data));
    s = ks_cache_snapshot(c);
    cr_assert(eq(u32, s->npvcs_in_use, 1));
    cr_expect(eq(u32, s->pvcs_in_use[0], data));
    ks_rcu_read_unlock();
    ks_cache_destroy(c);
    ks_pod_put(d);
}

Test(cache, pods_with_affinity_lists)
{
    struct ks_cache *c = mk_cache();
    add_node(c, mk_node("n1", NULL, NULL));
    add_node(c, mk_node("n2", NULL, NULL));
    add_node(c, mk_node("n3", NULL, NULL));
    struct ks_pod *aff = mk_pod_raw("d", "aff", NULL);
    pod_affinity(aff, true, false, false);
    ks_fake_pod_done(aff);
    struct ks_pod *pref = mk_pod_raw("d", "pref", NULL);
    pod_affinity(pref, false, true, false); /* preferred anti-affinity only */
    ks_fake_pod_done(pref);
    struct ks_pod *anti = mk_pod_raw("d", "anti", NULL);
    pod_affinity(anti, false, false, true);
    ks_fake_pod_done(anti);
    cr_assert(eq(int, ks_cache_add_pod(c, aff, id("n1")), 0));
    cr_assert(eq(int, ks_cache_add_pod(c, pref, id("n2")), 0));
    cr_assert(eq(int, ks_cache_add_pod(c, anti, id("n3")), 0));
    cr_assert(eq(int, ks_cache_add_pod(c, mk_pod("d", "plain", NULL), id("n3")), 0));
    refresh(c);
    ks_rcu_read_lock();
    const struct ks_snapshot *s = ks_cache_snapshot(c);
    cr_assert(eq(u32, s->naffinity_nodes, 3), "any pod (anti-)affinity counts");
    cr_assert(eq(u32, s->nanti_affinity_nodes, 1), "required anti-affinity only");
    cr_expect(eq(u32, ks_snapshot_node(s, s->anti_affinity_nodes[0])->name, id("n3")));
    for (uint32_t i = 0; i < 3; i++)
        cr_expect(eq(u32, s->affinity_nodes[i], i));
    const struct ks_node_snap *r3 = snap_node(c, "n3");
    cr_expect(eq(u32, r3->npods, 2));
    cr_expect(eq(u32, r3->naffinity_pods, 1));
    cr_expect(eq(u32, r3->nanti_affinity_pods, 1));
    cr_expect(eq(ptr, (void *)r3->anti_affinity_pods[0], anti));
    const uint32_t *aff_list = s->affinity_nodes;
    ks_rcu_read_unlock();

    /* n2 loses its only affinity pod: the list shrinks; the anti list is shared */
    struct ks_pod *key = ks_fake_pod("d", "pref");
    cr_assert(eq(int, ks_cache_remove_pod(c, key), 0));
    ks_pod_destroy(key);
    ks_rcu_read_lock();
    const uint32_t *anti_list = ks_cache_snapshot(c)->anti_affinity_nodes;
    refresh(c);
    s = ks_cache_snapshot(c);
    cr_assert(eq(u32, s->naffinity_nodes, 2));
    cr_expect(eq(u32, ks_snapshot_node(s, s->affinity_nodes[0])->name, id("n1")));
    cr_expect(eq(u32, ks_snapshot_node(s, s->affinity_nodes[1])->name, id("n3")));
    cr_expect(not(eq(ptr, (void *)s->affinity_nodes, (void *)aff_list)));
    cr_expect(eq(ptr, (void *)s->anti_affinity_nodes, (void *)anti_list));
    ks_rcu_read_unlock();

    /* and regains one */
    struct ks_pod *again = mk_pod_raw("d", "again", NULL);
    pod_affinity(again, true, false, true);
    ks_fake_pod_done(again);
    cr_assert(eq(int, ks_cache_assume_pod(c, again, id("n2")), 0));
    refresh(c);
    ks_rcu_read_lock();
    s = ks_cache_snapshot(c);
    cr_assert(eq(u32, s->naffinity_nodes, 3));
    cr_assert(eq(u32, s->nanti_affinity_nodes, 2));
    for (uint32_t i = 0; i < 3; i++)
        cr_expect(eq(u32, s->affinity_nodes[i], i));
    cr_expect(eq(u32, s->anti_affinity_nodes[0], 1));
    cr_expect(eq(u32, s->anti_affinity_nodes[1], 2));
    ks_rcu_read_unlock();
    ks_cache_destroy(c);
    ks_pod_put(again);
}

static const struct ks_image_state *image(const struct ks_node_snap *r, const char *name)
{
    for (uint32_t i = 0; i < r->nimages; i++) {
        if (r->images[i].name == id(name))
            return &r->images[i];
    }
    return NULL;
}

Test(cache, image_states_count_nodes)
{
    struct ks_cache *c = mk_cache();
    struct ks_node *n1 = mk_node("n1", NULL, NULL), *n2 = mk_node("n2", NULL, NULL);
    node_image(n1, "nginx:1.25", "docker.io/library/nginx:1.25", 100 * MI);
    node_image(n1, "redis:7", NULL, 50 * MI);
    node_image(n2, "nginx:1.25", NULL, 120 * MI); /* size differs: the first report is kept */
    add_node(c, n1);
    add_node(c, n2);
    refresh(c);
    ks_rcu_read_lock();
    const struct ks_node_snap *r1 = snap_node(c, "n1"), *r2 = snap_node(c, "n2");
    cr_assert(eq(u32, r1->nimages, 3));
    cr_expect(eq(u32, image(r1, "nginx:1.25")->num_nodes, 2));
    cr_expect(eq(i64, image(r1, "nginx:1.25")->size_bytes, 100 * MI));
    cr_expect(eq(u32, image(r1, "docker.io/library/nginx:1.25")->num_nodes, 1));
    cr_expect(eq(u32, image(r1, "redis:7")->num_nodes, 1));
    cr_assert(eq(u32, r2->nimages, 1));
    cr_expect(eq(u32, image(r2, "nginx:1.25")->num_nodes, 2));
    cr_expect(eq(i64, image(r2, "nginx:1.25")->size_bytes, 100 * MI));
    for (uint32_t i = 1; i < r1->nimages; i++)
        cr_expect(lt(u32, r1->images[i - 1].name, r1->images[i].name), "sorted by name");
    ks_rcu_read_unlock();

    /* n1 goes: nginx is on one node, redis on none; n2's record shows it once rebuilt */
    cr_assert(eq(int, ks_cache_remove_node(c, id("n1")), 0));
    struct ks_node *n2b = mk_node("n2", NULL, NULL);
    node_image(n2b, "nginx:1.25", NULL, 120 * MI);
    cr_assert(eq(int, ks_cache_update_node(c, n2b), 0));
    refresh(c);
    ks_rcu_read_lock();
    r2 = snap_node(c, "n2");
    cr_expect(eq(u32, image(r2, "nginx:1.25")->num_nodes, 1));
    cr_expect(eq(i64, image(r2, "nginx:1.25")->size_bytes, 120 * MI), "summary recreated from n2");
    ks_rcu_read_unlock();
    ks_cache_destroy(c);
}

Test(cache, generations_increase)
{
    struct ks_cache *c = mk_cache();
    add_node(c, mk_node("n1", NULL, NULL));
    refresh(c);
    ks_rcu_read_lock();
    uint64_t g1 = snap_node(c, "n1")->generation, s1 = ks_cache_snapshot(c)->generation;
    ks_rcu_read_unlock();
    cr_assert(eq(int, ks_cache_add_pod(c, mk_pod("d", "p", NULL), id("n1")), 0));
    refresh(c);
    ks_rcu_read_lock();
    cr_expect(gt(u64, snap_node(c, "n1")->generation, g1));
    cr_expect(gt(u64, ks_cache_snapshot(c)->generation, s1));
    cr_expect(eq(int, ks_cache_refresh(c), 0), "nothing changed");
    ks_rcu_read_unlock();
    ks_cache_destroy(c);
}
