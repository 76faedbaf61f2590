/*
 * test_snapshot.c - the published snapshot: node order (upstream nodeTree), copy-on-write
 * sharing between versions, ks_snapshot_find (cache/snapshot.c, cache/node_tree.c).
 *
 * Node-tree cases follow upstream's backend/cache/node_tree_test.go (TestNodeTree_AddNode,
 * RemoveNode, UpdateNode, List) expressed through the snapshot order; incrementality is
 * ksched's own contract: one changed node costs one record and one chunk copy, and the
 * version lists the positions it changed (or names itself as a new order).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <errno.h>
#include <time.h>

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

TestSuite(snapshot, .init = setup, .fini = teardown);

static struct ks_cache *mk_cache(void)
{
    struct ks_cache *c = NULL;
    cr_assert(eq(int, ks_cache_create(&c), 0));
    return c;
}

static void add(struct ks_cache *c, const char *name, const char *labels)
{
    cr_assert(eq(int, ks_cache_add_node(c, mk_node(name, labels, NULL)), 0), "add %s", name);
}

static void add_n(struct ks_cache *c, uint32_t n, const char *prefix)
{
    char name[64];
    for (uint32_t i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "%s-%u", prefix, i);
        add(c, name, NULL);
    }
}

/* The snapshot order must be exactly @names (space separated). */
static void expect_order(struct ks_cache *c, const char *names)
{
    cr_assert(ge(int, ks_cache_refresh(c), 0));
    ks_rcu_read_lock();
    const struct ks_snapshot *s = ks_cache_snapshot(c);
    char got[1024] = "";
    for (uint32_t i = 0; i < s->nnodes; i++) {
        if (i)
            strcat(got, " ");
        strcat(got, ks_intern_str(ks_snapshot_node(s, i)->name));
    }
    ks_rcu_read_unlock();
    cr_expect(eq(str, got, (char *)names));
}

#define ZONE(z)   "topology.kubernetes.io/zone=" z
#define REGION(r) "topology.kubernetes.io/region=" r

/* ---- order ------------------------------------------------------------------------------------- */

Test(snapshot, zones_round_robin)
{
    struct ks_cache *c = mk_cache();
    add(c, "a1", ZONE("a"));
    add(c, "a2", ZONE("a"));
    add(c, "b1", ZONE("b"));
    add(c, "a3", ZONE("a"));
    add(c, "c1", ZONE("c"));
    add(c, "b2", ZONE("b"));
    add(c, "x1", NULL); /* the "" zone is a zone like any other */
    expect_order(c, "a1 b1 c1 x1 a2 b2 a3");
    ks_cache_destroy(c);
}

Test(snapshot, zone_key_is_region_and_zone)
{
    struct ks_cache *c = mk_cache();
    add(c, "r1a", REGION("r1") "," ZONE("a"));
    add(c, "r2a", REGION("r2") "," ZONE("a")); /* same zone name, other region: another zone */
    add(c, "r1", REGION("r1"));                /* region only */
    add(c, "r1a-2", REGION("r1") "," ZONE("a"));
    expect_order(c, "r1a r2a r1 r1a-2");
    ks_cache_destroy(c);
}

Test(snapshot, legacy_zone_labels_take_precedence)
{
    struct ks_cache *c = mk_cache();
    add(c, "ga-a", ZONE("a"));
    /* beta zone label "a" wins over the GA label "b": same zone as ga-a */
    add(c, "beta-a", "failure-domain.beta.kubernetes.io/zone=a," ZONE("b"));
    add(c, "ga-b", ZONE("b"));
    /* beta region present (even empty) hides the GA region */
    add(c, "beta-region", "failure-domain.beta.kubernetes.io/region=," REGION("r") "," ZONE("a"));
    expect_order(c, "ga-a ga-b beta-a beta-region");
    ks_cache_destroy(c);
}

Test(snapshot, removal_keeps_the_order_of_the_rest)
{
    struct ks_cache *c = mk_cache();
    add(c, "a1", ZONE("a"));
    add(c, "b1", ZONE("b"));
    add(c, "c1", ZONE("c"));
    add(c, "a2", ZONE("a"));
    add(c, "a3", ZONE("a"));
    add(c, "b2", ZONE("b"));
    expect_order(c, "a1 b1 c1 a2 b2 a3");
    cr_assert(eq(int, ks_cache_remove_node(c, id("a2")), 0));
    expect_order(c, "a1 b1 c1 a3 b2");
    cr_assert(eq(int, ks_cache_remove_node(c, id("b1")), 0));
    expect_order(c, "a1 b2 c1 a3");
    cr_assert(eq(int, ks_cache_remove_node(c, id("c1")), 0)); /* zone c disappears */
    expect_order(c, "a1 b2 a3");
    add(c, "c2", ZONE("c")); /* and comes back last */
    expect_order(c, "a1 b2 c2 a3");
    ks_cache_destroy(c);
}

Test(snapshot, zone_change_moves_the_node)
{
    struct ks_cache *c = mk_cache();
    add(c, "a1", ZONE("a"));
    add(c, "a2", ZONE("a"));
    add(c, "b1", ZONE("b"));
    add(c, "b2", ZONE("b"));
    expect_order(c, "a1 b1 a2 b2");
    cr_assert(eq(int, ks_cache_update_node(c, mk_node("a1", ZONE("b"), NULL)), 0));
    expect_order(c, "a2 b1 b2 a1");
    /* a label change that keeps the zone keeps the position */
    cr_assert(eq(int, ks_cache_update_node(c, mk_node("b1", ZONE("b") ",x=y", NULL)), 0));
    expect_order(c, "a2 b1 b2 a1");
    ks_cache_destroy(c);
}

/* upstream list() over (zones, nodes per zone), as a plain reference. */
static void reference_order(uint32_t nzones, const uint32_t *sizes, uint32_t *zone_of, uint32_t *idx_of)
{
    uint32_t k = 0, max = 0;
    for (uint32_t z = 0; z < nzones; z++)
        max = sizes[z] > max ? sizes[z] : max;
    for (uint32_t r = 0; r < max; r++) {
        for (uint32_t z = 0; z < nzones; z++) {
            if (r < sizes[z]) {
                zone_of[k] = z;
                idx_of[k++] = r;
            }
        }
    }
}

Test(snapshot, many_zones_match_the_reference)
{
    struct ks_cache *c = mk_cache();
    enum { NZ = 40 };
    uint32_t sizes[NZ], total = 0;
    for (uint32_t z = 0; z < NZ; z++) {
        sizes[z] = (z * 7) % 13 + 1;
        total += sizes[z];
    }
    /* interleave additions across zones; zone z appears first in order z */
    char name[64], labels[64];
    for (uint32_t r = 0; r < 13; r++) {
        for (uint32_t z = 0; z < NZ; z++) {
            if (r >= sizes[z])
                continue;
            snprintf(name, sizeof(name), "z%u-n%u", z, r);
            snprintf(labels, sizeof(labels), ZONE("z%u"), z);
            add(c, name, labels);
        }
    }
    uint32_t zone_of[13 * NZ], idx_of[13 * NZ];
    reference_order(NZ, sizes, zone_of, idx_of);
    cr_assert(ge(int, ks_cache_refresh(c), 0));
    ks_rcu_read_lock();
    const struct ks_snapshot *s = ks_cache_snapshot(c);
    cr_assert(eq(u32, s->nnodes, total));
    for (uint32_t i = 0; i < total; i++) {
        snprintf(name, sizeof(name), "z%u-n%u", zone_of[i], idx_of[i]);
        cr_assert(eq(str, (char *)ks_intern_str(ks_snapshot_node(s, i)->name), name), "position %u", i);
    }
    ks_rcu_read_unlock();
    ks_cache_destroy(c);
}

/* ---- lookup ------------------------------------------------------------------------------------ */

Test(snapshot, find_by_name)
{
    struct ks_cache *c = mk_cache();
    ks_rcu_read_lock();
    cr_expect(eq(ptr, (void *)ks_snapshot_find(ks_cache_snapshot(c), id("n-0")), NULL), "empty snapshot");
    cr_expect(eq(u32, ks_cache_snapshot(c)->nnodes, 0));
    ks_rcu_read_unlock();
    add_n(c, 700, "n");
    cr_assert(eq(int, ks_cache_refresh(c), 700));
    ks_rcu_read_lock();
    const struct ks_snapshot *s = ks_cache_snapshot(c);
    char name[64];
    for (uint32_t i = 0; i < 700; i++) {
        snprintf(name, sizeof(name), "n-%u", i);
        const struct ks_node_snap *r = ks_snapshot_find(s, id(name));
        cr_assert(not(eq(ptr, (void *)r, NULL)), "%s", name);
        cr_assert(eq(u32, r->name, id(name)));
    }
    cr_expect(eq(ptr, (void *)ks_snapshot_find(s, id("nope")), NULL));
    ks_rcu_read_unlock();
    cr_assert(eq(int, ks_cache_remove_node(c, id("n-3")), 0));
    cr_assert(ge(int, ks_cache_refresh(c), 0));
    ks_rcu_read_lock();
    s = ks_cache_snapshot(c);
    cr_expect(eq(ptr, (void *)ks_snapshot_find(s, id("n-3")), NULL));
    cr_expect(eq(u32, ks_snapshot_find(s, id("n-699"))->name, id("n-699")));
    ks_rcu_read_unlock();
    ks_cache_destroy(c);
}

/* ---- copy-on-write ------------------------------------------------------------------------------ */

Test(snapshot, one_changed_node_one_new_record)
{
    struct ks_cache *c = mk_cache();
    add_n(c, 1000, "n");
    cr_assert(eq(int, ks_cache_refresh(c), 1000));
    cr_expect(eq(int, ks_cache_refresh(c), 0), "no change, no work");

    ks_rcu_read_lock(); /* keeps s1 alive across the refresh */
    const struct ks_snapshot *s1 = ks_cache_snapshot(c);
    cr_assert(eq(u32, s1->nchunks, 4));
    const struct ks_node_snap *target = ks_snapshot_find(s1, id("n-600"));
    uint32_t ti = 0;
    while (ks_snapshot_node(s1, ti) != target)
        ti++;

    struct ks_pod *p = mk_pod("d", "p", "cpu=1");
    cr_assert(eq(int, ks_cache_assume_pod(c, p, id("n-600")), 0));
    cr_expect(eq(int, ks_cache_refresh(c), 1), "one record rebuilt");
    const struct ks_snapshot *s2 = ks_cache_snapshot(c);
    cr_assert(not(eq(ptr, (void *)s2, (void *)s1)));
    cr_assert(eq(u32, s2->nnodes, 1000));
    for (uint32_t i = 0; i < 1000; i++) {
        if (i == ti)
            cr_expect(not(eq(ptr, (void *)ks_snapshot_node(s2, i), (void *)ks_snapshot_node(s1, i))));
        else
            cr_assert(eq(ptr, (void *)ks_snapshot_node(s2, i), (void *)ks_snapshot_node(s1, i)), "node %u",
                      i);
    }
    for (uint32_t ci = 0; ci < 4; ci++) {
        if (ci == ti >> KS_SNAP_CHUNK_SHIFT)
            cr_expect(not(eq(ptr, s2->chunks[ci], s1->chunks[ci])), "the changed chunk is copied");
        else
            cr_expect(eq(ptr, s2->chunks[ci], s1->chunks[ci]), "chunk %u shared", ci);
    }
    cr_expect(eq(ptr, (void *)s2->find_table, (void *)s1->find_table), "find table shared");
    cr_expect(eq(i64, ks_snapshot_node(s2, ti)->req_milli_cpu, 1000));
    cr_expect(eq(i64, target->req_milli_cpu, 0), "the old version is unchanged");
    cr_expect(gt(u64, s2->generation, s1->generation));
    cr_expect(eq(u64, s2->prev_generation, s1->generation), "the version names the one it replaced");
    cr_expect(eq(u64, s2->order_generation, s1->order_generation), "same order");
    cr_assert(eq(u32, s2->nchanged, 1), "one position changed");
    cr_expect(eq(u32, s2->changed[0], ti));
    ks_rcu_read_unlock();
    ks_cache_destroy(c);
    ks_pod_put(p);
}

Test(snapshot, retired_chunks_are_reused)
{
    struct ks_cache *c = mk_cache();
    add_n(c, 600, "n");
    cr_assert(eq(int, ks_cache_refresh(c), 600));
    struct ks_pod *p1 = mk_pod("d", "p1", "cpu=1"), *p2 = mk_pod("d", "p2", "cpu=1");

    ks_rcu_read_lock();
    const struct ks_snap_chunk *first = ks_cache_snapshot(c)->chunks[0];
    uint32_t name = ks_snapshot_node(ks_cache_snapshot(c), 0)->name;
    ks_rcu_read_unlock();
    cr_assert(eq(int, ks_cache_assume_pod(c, p1, name), 0));
    cr_assert(eq(int, ks_cache_refresh(c), 1)); /* chunk 0 copied: the first one is retired */
    ks_rcu_barrier();                           /* ... and, its grace period over, pooled */
    ks_rcu_read_lock();
    name = ks_snapshot_node(ks_cache_snapshot(c), 300)->name;
    ks_rcu_read_unlock();
    cr_assert(eq(int, ks_cache_assume_pod(c, p2, name), 0));
    cr_assert(eq(int, ks_cache_refresh(c), 1));
    ks_rcu_read_lock();
    cr_expect(eq(ptr, (void *)ks_cache_snapshot(c)->chunks[1], (void *)first),
              "chunk 1 reuses the retired chunk");
    cr_expect(eq(u32, ks_snapshot_node(ks_cache_snapshot(c), 300)->name, name));
    ks_rcu_read_unlock();
    cr_expect(eq(u32, ks_cache_check(c, KS_CACHE_CHECK_SNAPSHOT, NULL, NULL, 0), 0));
    ks_cache_destroy(c);
    ks_pod_put(p1);
    ks_pod_put(p2);
}

Test(snapshot, appending_a_node_copies_only_the_tail)
{
    struct ks_cache *c = mk_cache();
    add_n(c, 600, "n");
    cr_assert(eq(int, ks_cache_refresh(c), 600));
    ks_rcu_read_lock();
    const struct ks_snapshot *s1 = ks_cache_snapshot(c);
    add(c, "late", NULL);
    cr_expect(eq(int, ks_cache_refresh(c), 1));
    const struct ks_snapshot *s2 = ks_cache_snapshot(c);
    cr_assert(eq(u32, s2->nnodes, 601));
    cr_expect(eq(ptr, s2->chunks[0], s1->chunks[0]));
    cr_expect(eq(ptr, s2->chunks[1], s1->chunks[1]));
    cr_expect(not(eq(ptr, s2->chunks[2], s1->chunks[2])));
    cr_expect(eq(u32, ks_snapshot_node(s2, 600)->name, id("late")));
    cr_expect(eq(u32, ks_snapshot_find(s2, id("late"))->name, id("late")));
    cr_expect(eq(u64, s1->order_generation, s1->generation), "the first order is the first version's");
    cr_expect(eq(u64, s2->order_generation, s2->generation), "a new node is a new order");
    cr_expect(eq(u64, s2->prev_generation, s1->generation));
    ks_rcu_read_unlock();
    ks_cache_destroy(c);
}

Test(snapshot, ghost_node_changes_publish_nothing)
{
    struct ks_cache *c = mk_cache();
    add(c, "n1", NULL);
    cr_assert(eq(int, ks_cache_add_pod(c, mk_pod("d", "p", "cpu=1"), id("n1")), 0));
    cr_assert(eq(int, ks_cache_add_pod(c, mk_pod("d", "q", "cpu=1"), id("n1")), 0));
    cr_assert(eq(int, ks_cache_remove_node(c, id("n1")), 0));
    cr_assert(eq(int, ks_cache_refresh(c), 0));
    ks_rcu_read_lock();
    const struct ks_snapshot *s = ks_cache_snapshot(c);
    cr_expect(eq(u32, s->nnodes, 0));
    struct ks_pod *key = ks_fake_pod("d", "p");
    cr_assert(eq(int, ks_cache_remove_pod(c, key), 0));
    ks_pod_destroy(key);
    cr_expect(eq(int, ks_cache_refresh(c), 0));
    cr_expect(eq(ptr, (void *)ks_cache_snapshot(c), (void *)s), "no new version");
    ks_rcu_read_unlock();
    ks_cache_destroy(c);
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Assume + refresh at 50,000 nodes: the cache work of every cycle (reported, not asserted). */
Test(snapshot, assume_and_refresh_at_50k_nodes, .timeout = 60)
{
    enum { NODES = 50000, ROUNDS = 2000 };
    struct ks_cache *c = mk_cache();
    char name[64], labels[64];
    for (uint32_t i = 0; i < NODES; i++) {
        snprintf(name, sizeof(name), "node-%u", i);
        snprintf(labels, sizeof(labels), ZONE("zone-%u"), i % 3);
        add(c, name, labels);
    }
    double t0 = now_ns();
    cr_assert(eq(int, ks_cache_refresh(c), NODES));
    double full = now_ns() - t0;

    struct ks_pod **pods = cache_test_must(calloc(ROUNDS, sizeof(*pods)));
    uint32_t *nodes = cache_test_must(calloc(ROUNDS, sizeof(*nodes)));
    for (uint32_t i = 0; i < ROUNDS; i++) {
        snprintf(name, sizeof(name), "pod-%u", i);
        pods[i] = mk_pod("d", name, "cpu=100m,memory=128Mi");
        snprintf(name, sizeof(name), "node-%u", (i * 7919u) % NODES);
        nodes[i] = id(name);
    }
    double assume = 0, refresh = 0;
    for (uint32_t i = 0; i < ROUNDS; i++) {
        double a = now_ns();
        cr_assert(eq(int, ks_cache_assume_pod(c, pods[i], nodes[i]), 0));
        double b = now_ns();
        cr_assert(eq(int, ks_cache_refresh(c), 1));
        double e = now_ns();
        assume += b - a;
        refresh += e - b;
    }
    cr_log_info("50k nodes: full build %.1f ms; assume %.0f ns, refresh %.0f ns per pod", full / 1e6,
                assume / ROUNDS, refresh / ROUNDS);
    fprintf(stderr, "cache: 50k nodes: full build %.1f ms; assume %.0f ns + refresh %.0f ns per pod\n",
            full / 1e6, assume / ROUNDS, refresh / ROUNDS);
    ks_cache_destroy(c);
    for (uint32_t i = 0; i < ROUNDS; i++)
        ks_pod_put(pods[i]);
    free(pods);
    free(nodes);
}

/* ---- the priority floor --------------------------------------------------------------------------- */

/*
 * min_pod_priority through random adds and removes of pods of 40 priorities (more than the
 * cache tracks): never above the lowest priority on a node of the version, exact while the
 * priorities fit, and ks_cache_check agrees with the counts after every step.
 */
Test(snapshot, priority_floor_follows_adds_and_removes)
{
    struct ks_cache *c = mk_cache();
    add_n(c, 8, "n");
    enum { PODS = 400 };
    struct ks_pod *pods[PODS] = {0};
    uint64_t rng = 12345;
    char msg[512];
    bool overflowed = false;
    for (int step = 0; step < 3000; step++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t i = (uint32_t)(rng >> 33) % PODS;
        /* the first half of the run keeps to 20 priorities, the second goes up to 40 */
        int32_t spread = step < 1500 ? 20 : 40;
        if (pods[i]) {
            cr_assert(eq(int, ks_cache_remove_pod(c, pods[i]), 0));
            ks_pod_put(pods[i]);
            pods[i] = NULL;
        } else {
            char name[32], node[32];
            snprintf(name, sizeof(name), "p%u", i);
            snprintf(node, sizeof(node), "n-%u", (uint32_t)(rng >> 20) % 8);
            struct ks_pod *p = mk_pod_raw("d", name, "cpu=1m");
            p->priority = (int32_t)((rng >> 40) % (uint64_t)spread) - 5;
            pods[i] = ks_fake_pod_done(p);
            ks_pod_get(pods[i]); /* the test keeps one to remove it by */
            cr_assert(eq(int, ks_cache_add_pod(c, pods[i], id(node)), 0));
        }
        cr_assert(ge(int, ks_cache_refresh(c), 0));
        cr_assert(eq(u32, ks_cache_check(c, KS_CACHE_CHECK_SNAPSHOT, NULL, msg, sizeof(msg)), 0), "%s", msg);
        int32_t lowest = INT32_MAX;
        uint32_t distinct = 0;
        bool seen[40] = {0};
        for (uint32_t k = 0; k < PODS; k++) {
            if (!pods[k])
                continue;
            if (pods[k]->priority < lowest)
                lowest = pods[k]->priority;
            distinct += !seen[pods[k]->priority + 5];
            seen[pods[k]->priority + 5] = true;
        }
        ks_rcu_read_lock();
        const struct ks_snapshot *s = ks_cache_snapshot(c);
        cr_assert(s->priorities_known);
        cr_assert(le(i32, s->min_pod_priority, lowest), "step %d: floor %d above the lowest %d", step,
                  s->min_pod_priority, lowest);
        if (step < 1500)
            cr_assert(eq(i32, s->min_pod_priority, lowest), "step %d: %u priorities", step, distinct);
        overflowed |= s->min_pod_priority == INT32_MIN;
        ks_rcu_read_unlock();
    }
    cr_expect(overflowed, "more priorities than slots at some step");
    for (uint32_t k = 0; k < PODS; k++) {
        if (pods[k]) {
            cr_assert(eq(int, ks_cache_remove_pod(c, pods[k]), 0));
            ks_pod_put(pods[k]);
        }
    }
    cr_assert(ge(int, ks_cache_refresh(c), 0));
    ks_rcu_read_lock();
    cr_expect(eq(i32, ks_cache_snapshot(c)->min_pod_priority, INT32_MAX), "no pod: no floor");
    ks_rcu_read_unlock();
    ks_cache_destroy(c);
}
