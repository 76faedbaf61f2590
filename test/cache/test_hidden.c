/*
 * test_hidden.c - pods hidden from their node for a preemption what-if (ks_cache_hide_pod,
 * ks_cache_unhide_pod, ks_cache_unhide_all in cache/cache.c and cache/node_info.c): out of
 * the aggregates and the record while hidden, back in their place when shown again, and
 * gone for good when removed or replaced meanwhile. Every step ends with ks_cache_check.
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

TestSuite(cache_hidden, .init = setup, .fini = teardown);

/* Refresh, then the cache's invariants with the snapshot compared to it. */
static void refresh_and_check(struct ks_cache *c)
{
    char msg[256] = "";
    cr_assert(ge(int, ks_cache_refresh(c), 0));
    cr_assert(eq(u32, ks_cache_check(c, KS_CACHE_CHECK_SNAPSHOT, NULL, msg, sizeof(msg)), 0), "%s", msg);
}

/* The record of @node lists exactly @names (comma-separated, in order) and requests @cpu. */
static void expect_pods(struct ks_cache *c, const char *node, const char *names, int64_t cpu)
{
    char got[256] = "";
    size_t len = 0;
    ks_rcu_read_lock();
    const struct ks_node_snap *r = snap_node(c, node);
    cr_assert(not(eq(ptr, (void *)r, NULL)));
    for (uint32_t i = 0; i < r->npods; i++)
        len += (size_t)snprintf(got + len, sizeof(got) - len, "%s%s", i ? "," : "", r->pods[i]->meta.name);
    cr_expect(eq(i64, r->req_milli_cpu, cpu), "%s requested cpu", node);
    ks_rcu_read_unlock();
    cr_expect(eq(str, got, (char *)names), "%s pods", node);
}

static struct ks_pod *key(const char *name)
{
    return ks_fake_pod("d", name);
}

Test(cache_hidden, hidden_pod_leaves_the_record_and_comes_back_in_its_place)
{
    struct ks_cache *c = NULL;
    cr_assert(eq(int, ks_cache_create(&c), 0));
    cr_assert(eq(int, ks_cache_add_node(c, mk_node("n1", NULL, NULL)), 0));
    const char *names[] = {"a", "b", "c", "d"};
    for (int i = 0; i < 4; i++)
        cr_assert(eq(int, ks_cache_add_pod(c, mk_pod("d", names[i], "cpu=1"), id("n1")), 0));
    refresh_and_check(c);
    expect_pods(c, "n1", "a,b,c,d", 4000);

    struct ks_pod *b = key("b"), *d = key("d"), *x = key("x");
    cr_expect(eq(int, ks_cache_hide_pod(c, b), 0));
    cr_expect(eq(int, ks_cache_hide_pod(c, d), 0));
    cr_expect(eq(int, ks_cache_hide_pod(c, b), -EALREADY), "hidden twice");
    cr_expect(eq(int, ks_cache_hide_pod(c, x), -ENOENT), "unknown pod");
    refresh_and_check(c);
    expect_pods(c, "n1", "a,c", 2000);
    uint32_t nodes = 0, pods = 0;
    ks_cache_counts(c, &nodes, &pods);
    cr_expect(eq(u32, pods, 4), "hidden pods are still the cache's");

    cr_expect(eq(int, ks_cache_unhide_pod(c, b), 0));
    cr_expect(eq(int, ks_cache_unhide_pod(c, b), -ENOENT), "not hidden any more");
    refresh_and_check(c);
    expect_pods(c, "n1", "a,b,c", 3000);
    ks_cache_unhide_all(c);
    refresh_and_check(c);
    expect_pods(c, "n1", "a,b,c,d", 4000);
    ks_pod_destroy(b);
    ks_pod_destroy(d);
    ks_pod_destroy(x);
    ks_cache_destroy(c);
}

Test(cache_hidden, removed_or_replaced_while_hidden_is_hidden_no_more)
{
    struct ks_cache *c = NULL;
    cr_assert(eq(int, ks_cache_create(&c), 0));
    cr_assert(eq(int, ks_cache_add_node(c, mk_node("n1", NULL, NULL)), 0));
    cr_assert(eq(int, ks_cache_add_pod(c, mk_pod("d", "a", "cpu=1"), id("n1")), 0));
    cr_assert(eq(int, ks_cache_add_pod(c, mk_pod("d", "b", "cpu=1"), id("n1")), 0));
    cr_assert(eq(int, ks_cache_add_pod(c, mk_pod("d", "c", "cpu=1"), id("n1")), 0));
    struct ks_pod *a = key("a"), *b = key("b");
    cr_assert(eq(int, ks_cache_hide_pod(c, a), 0));
    cr_assert(eq(int, ks_cache_hide_pod(c, b), 0));
    /* a goes away; b's new object (2 cpu) is accounted as any update */
    cr_assert(eq(int, ks_cache_remove_pod(c, a), 0));
    cr_assert(eq(int, ks_cache_update_pod(c, mk_pod("d", "b", "cpu=2"), id("n1")), 0));
    refresh_and_check(c);
    expect_pods(c, "n1", "c,b", 3000);
    cr_expect(eq(int, ks_cache_unhide_pod(c, b), -ENOENT));
    ks_cache_unhide_all(c);
    refresh_and_check(c);
    expect_pods(c, "n1", "c,b", 3000);
    ks_pod_destroy(a);
    ks_pod_destroy(b);
    ks_cache_destroy(c);
}

Test(cache_hidden, room_is_kept_for_hidden_ports_and_affinity)
{
    struct ks_cache *c = NULL;
    cr_assert(eq(int, ks_cache_create(&c), 0));
    cr_assert(eq(int, ks_cache_add_node(c, mk_node("n1", NULL, NULL)), 0));
    struct ks_pod *h = mk_pod_raw("d", "h", "cpu=1,example.com/gpu=1");
    pod_port(h, NULL, 8000, KS_PROTO_TCP);
    pod_port(h, NULL, 8001, KS_PROTO_TCP);
    pod_affinity(h, true, false, true);
    ks_fake_pod_done(h);
    cr_assert(eq(int, ks_cache_add_pod(c, h, id("n1")), 0));
    struct ks_pod *hk = key("h");
    cr_assert(eq(int, ks_cache_hide_pod(c, hk), 0));
    /* the node's arrays fill up with other pods while h is hidden; showing it again must fit */
    for (int i = 0; i < 64; i++) {
        char name[16];
        snprintf(name, sizeof(name), "p%d", i);
        struct ks_pod *p = mk_pod_raw("d", name, "cpu=1m,example.com/fpga=1");
        pod_port(p, NULL, (int32_t)(9000 + i), KS_PROTO_TCP);
        pod_affinity(p, i % 2 == 0, false, i % 3 == 0);
        ks_fake_pod_done(p);
        cr_assert(eq(int, ks_cache_add_pod(c, p, id("n1")), 0));
    }
    refresh_and_check(c);
    ks_rcu_read_lock();
    const struct ks_node_snap *r = snap_node(c, "n1");
    cr_expect(eq(u32, r->nports, 64));
    cr_expect(eq(u32, r->naffinity_pods, 32 + 11));
    cr_expect(eq(u32, r->nanti_affinity_pods, 22));
    cr_expect(eq(u32, r->nreq_scalar, 1), "only fpga while the gpu pod is hidden");
    ks_rcu_read_unlock();
    ks_cache_unhide_all(c);
    refresh_and_check(c);
    ks_rcu_read_lock();
    r = snap_node(c, "n1");
    cr_expect(eq(u32, r->npods, 65));
    cr_expect(eq(u32, r->nports, 66));
    cr_expect(eq(u32, r->naffinity_pods, 33 + 11));
    cr_expect(eq(u32, r->nanti_affinity_pods, 23));
    cr_expect(eq(u32, r->nreq_scalar, 2));
    cr_expect(eq(str, (char *)r->pods[0]->meta.name, "h"), "first, where it was");
    ks_rcu_read_unlock();
    ks_pod_destroy(hk);
    ks_cache_destroy(c);
}

Test(cache_hidden, a_node_removed_while_its_pod_is_hidden_keeps_the_pod)
{
    struct ks_cache *c = NULL;
    cr_assert(eq(int, ks_cache_create(&c), 0));
    cr_assert(eq(int, ks_cache_add_node(c, mk_node("n1", NULL, NULL)), 0));
    cr_assert(eq(int, ks_cache_add_pod(c, mk_pod("d", "a", "cpu=1"), id("n1")), 0));
    struct ks_pod *a = key("a");
    cr_assert(eq(int, ks_cache_hide_pod(c, a), 0));
    cr_assert(eq(int, ks_cache_remove_node(c, id("n1")), 0));
    refresh_and_check(c);
    ks_cache_unhide_all(c);
    refresh_and_check(c);
    cr_expect(eq(u32, ks_cache_pod_node(c, a), id("n1")), "the pod waits for its node's return");
    cr_assert(eq(int, ks_cache_remove_pod(c, a), 0));
    refresh_and_check(c);
    uint32_t nodes = 1, pods = 1;
    ks_cache_counts(c, &nodes, &pods);
    cr_expect(eq(u32, nodes, 0));
    cr_expect(eq(u32, pods, 0));
    ks_pod_destroy(a);
    ks_cache_destroy(c);
}
