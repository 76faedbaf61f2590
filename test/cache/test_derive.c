/*
 * test_derive.c - ks_node_snap_derive: a node record with pods added and removed, as
 * preemption's dry runs and Filter with nominated pods see it.
 */
#include <criterion/criterion.h>

#include "cache_helpers.h"
#include "ksched/base/rcu.h"

static struct ks_cache *c;
static struct ks_pod *small, *ported, *gpu, *extra;

static void setup(void)
{
    cr_assert_eq(ks_api_init(), 0);
    ks_rcu_register_thread();
    cr_assert_eq(ks_cache_create(&c), 0);
    cr_assert_eq(ks_cache_add_node(c, mk_node("n1", NULL, "cpu=8,memory=16Gi,pods=10,example.com/gpu=4")), 0);
    small = mk_pod("default", "small", "cpu=1,memory=1Gi");
    ported = mk_pod_raw("default", "ported", "cpu=2,memory=2Gi");
    pod_port(ported, NULL, 8080, KS_PROTO_TCP);
    pod_affinity(ported, false, false, true);
    ks_fake_pod_done(ported);
    gpu = mk_pod("default", "gpu", "cpu=1,example.com/gpu=2");
    extra = mk_pod_raw("other", "extra", "cpu=500m,memory=512Mi");
    pod_port(extra, "10.0.0.1", 9090, KS_PROTO_UDP);
    ks_fake_pod_done(extra);
    cr_assert_eq(ks_cache_add_pod(c, small, id("n1")), 0);
    cr_assert_eq(ks_cache_add_pod(c, ported, id("n1")), 0);
    cr_assert_eq(ks_cache_add_pod(c, gpu, id("n1")), 0);
    cr_assert_geq(ks_cache_refresh(c), 0);
}

static void teardown(void)
{
    ks_pod_put(extra);
    ks_cache_destroy(c);
    ks_rcu_unregister_thread();
}

TestSuite(derive, .init = setup, .fini = teardown);

Test(derive, removing_pods_frees_their_resources_ports_and_affinity)
{
    struct ks_arena arena = {0};
    ks_rcu_read_lock();
    const struct ks_node_snap *base = snap_node(c, "n1");
    cr_assert_eq(base->npods, 3);
    const struct ks_pod *victims[] = {ported, gpu};
    const struct ks_node_snap *r = ks_node_snap_derive(base, NULL, 0, victims, 2, &arena);
    cr_assert_not_null(r);
    cr_expect_eq(r->npods, 1);
    cr_expect_eq(r->pods[0], small);
    cr_expect_eq(r->req_milli_cpu, 1000);
    cr_expect_eq(r->req_memory, 1 * GI);
    cr_expect_eq(r->nports, 0, "the removed pod's host port is free");
    cr_expect_eq(r->nanti_affinity_pods, 0);
    cr_expect_eq(r->nreq_scalar, 0, "the gpu request is gone");
    cr_expect_eq(r->alloc_milli_cpu, base->alloc_milli_cpu);
    cr_expect_eq(r->node, base->node);
    /* the published record is untouched */
    cr_expect_eq(base->npods, 3);
    cr_expect_eq(base->req_milli_cpu, 4000);
    cr_expect_eq(base->nports, 1);
    ks_rcu_read_unlock();
    ks_arena_destroy(&arena);
}

Test(derive, adding_a_pod_accounts_it)
{
    struct ks_arena arena = {0};
    ks_rcu_read_lock();
    const struct ks_node_snap *base = snap_node(c, "n1");
    const struct ks_pod *add[] = {extra};
    const struct ks_node_snap *r = ks_node_snap_derive(base, add, 1, NULL, 0, &arena);
    cr_assert_not_null(r);
    cr_expect_eq(r->npods, 4);
    cr_expect_eq(r->req_milli_cpu, 4500);
    cr_expect_eq(r->nonzero_milli_cpu, base->nonzero_milli_cpu + 500);
    cr_expect_eq(r->nports, 2);
    cr_expect_eq(r->nreq_scalar, 1);
    cr_expect_eq(r->req_scalar[0].value, 2);
    ks_rcu_read_unlock();
    ks_arena_destroy(&arena);
}

Test(derive, removal_matches_by_name_not_pointer)
{
    struct ks_arena arena = {0};
    struct ks_pod *same = mk_pod("default", "small", "cpu=1,memory=1Gi");
    ks_rcu_read_lock();
    const struct ks_pod *victims[] = {same};
    const struct ks_node_snap *r = ks_node_snap_derive(snap_node(c, "n1"), NULL, 0, victims, 1, &arena);
    cr_assert_not_null(r);
    cr_expect_eq(r->npods, 2);
    cr_expect_eq(r->req_milli_cpu, 3000);
    ks_rcu_read_unlock();
    ks_arena_destroy(&arena);
    ks_pod_put(same);
}
