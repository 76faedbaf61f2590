/*
 * test_selector_counts.c - the cache's counts of pods per tracked label selector
 * (ks_cache_selector_track, cache/selector_counts.c, node_info.c): which pods count (the
 * selector's namespace, not terminating, not hidden), the ids, when a snapshot's records
 * count a selector, and a property test comparing every record's counts with a recount after
 * random sequences of adds, assumes, forgets, removes, relabels, deletions, hides and node
 * changes, with selectors tracked along the way.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <errno.h>

#include "cache/cache_helpers.h"
#include "ksched/api.h"

static struct ks_arena arena;

static void setup(void)
{
    cr_assert(eq(int, ks_api_init(), 0));
    ks_rcu_register_thread();
}

static void teardown(void)
{
    ks_arena_destroy(&arena);
    ks_rcu_unregister_thread();
}

TestSuite(selector_counts, .init = setup, .fini = teardown);

static void refresh_and_check(struct ks_cache *c)
{
    char msg[256] = "";
    cr_assert(ge(int, ks_cache_refresh(c), 0));
    cr_assert(eq(u32, ks_cache_check(c, KS_CACHE_CHECK_SNAPSHOT, NULL, msg, sizeof(msg)), 0), "%s", msg);
}

static struct ks_pod *labelled(const char *ns, const char *name, const char *labels)
{
    struct ks_pod *p = mk_pod_raw(ns, name, "cpu=100m");
    if (labels)
        ks_fake_pod_labels(p, labels);
    return ks_fake_pod_done(p);
}

/* The published record of @node's count for selector @id; -1 when the record has no counts. */
static int64_t count_on(struct ks_cache *c, const char *node, uint32_t sel)
{
    uint32_t n = 0;
    ks_rcu_read_lock();
    const struct ks_node_snap *r = snap_node(c, node);
    bool ok = r && ks_node_snap_sel_count(r, sel, &n);
    ks_rcu_read_unlock();
    return ok ? (int64_t)n : -1;
}

static uint32_t track(struct ks_cache *c, const char *ns, const char *spec, uint64_t *ready)
{
    uint32_t sel = 0;
    uint64_t r = 0;
    cr_assert(ge(int, ks_cache_selector_track(c, id(ns), ks_fake_selector(&arena, spec), &sel, &r), 0));
    if (ready)
        *ready = r;
    return sel;
}

Test(selector_counts, counts_the_namespace_s_live_visible_pods_that_match)
{
    struct ks_cache *c = NULL;
    cr_assert(eq(int, ks_cache_create(&c), 0));
    cr_assert(eq(int, ks_cache_add_node(c, mk_node("n1", NULL, NULL)), 0));
    cr_assert(eq(int, ks_cache_add_node(c, mk_node("n2", NULL, NULL)), 0));
    cr_assert(eq(int, ks_cache_add_pod(c, labelled("d", "a", "app=web"), id("n1")), 0));
    cr_assert(eq(int, ks_cache_add_pod(c, labelled("d", "b", "app=web,tier=fe"), id("n1")), 0));
    cr_assert(eq(int, ks_cache_add_pod(c, labelled("d", "c", "app=db"), id("n1")), 0));
    cr_assert(eq(int, ks_cache_add_pod(c, labelled("other", "a", "app=web"), id("n2")), 0));
    struct ks_pod *gone = mk_pod_raw("d", "gone", "cpu=100m");
    ks_fake_pod_labels(gone, "app=web");
    gone->meta.deletion_time = 1; /* terminating: not counted (#87621) */
    cr_assert(eq(int, ks_cache_add_pod(c, ks_fake_pod_done(gone), id("n2")), 0));
    refresh_and_check(c);

    uint64_t ready = 0;
    uint32_t web = track(c, "d", "app=web", &ready);
    cr_expect(gt(u64, ready, 0), "pods matched: the records change with the next version");
    cr_expect(eq(u32, track(c, "d", "app=web", NULL), web), "the same selector, the same id");
    cr_expect(not(eq(u32, track(c, "other", "app=web", NULL), web)), "another namespace, another selector");
    refresh_and_check(c);
    const struct ks_snapshot *snap;
    ks_rcu_read_lock();
    snap = ks_cache_snapshot(c);
    cr_expect(ge(u64, snap->generation, ready));
    ks_rcu_read_unlock();
    cr_expect(eq(i64, count_on(c, "n1", web), 2));
    cr_expect(eq(i64, count_on(c, "n2", web), 0), "the other namespace's pod and the terminating one");

    uint64_t none_ready = 1;
    uint32_t none = track(c, "d", "app=cache", &none_ready);
    cr_expect(eq(u64, none_ready, 0), "no pod matched: every snapshot already counts it");
    cr_expect(eq(i64, count_on(c, "n1", none), 0));

    /* assumed pods count, hidden ones do not; a relabel moves the count */
    struct ks_pod *e = labelled("d", "e", "app=web");
    cr_assert(eq(int, ks_cache_assume_pod(c, e, id("n2")), 0));
    ks_pod_put(e); /* the cache keeps its own */
    cr_assert(eq(int, ks_cache_add_pod(c, labelled("d", "f", "app=cache"), id("n2")), 0));
    refresh_and_check(c);
    cr_expect(eq(i64, count_on(c, "n2", web), 1));
    cr_expect(eq(i64, count_on(c, "n2", none), 1));
    struct ks_pod *a = ks_fake_pod("d", "a");
    cr_expect(eq(int, ks_cache_hide_pod(c, a), 0));
    refresh_and_check(c);
    cr_expect(eq(i64, count_on(c, "n1", web), 1), "hidden");
    cr_expect(eq(int, ks_cache_unhide_pod(c, a), 0));
    cr_assert(eq(int, ks_cache_update_pod(c, labelled("d", "b", "app=cache"), id("n1")), 0));
    refresh_and_check(c);
    cr_expect(eq(i64, count_on(c, "n1", web), 1));
    cr_expect(eq(i64, count_on(c, "n1", none), 1));
    cr_assert(eq(int, ks_cache_remove_pod(c, a), 0));
    ks_pod_put(a);
    refresh_and_check(c);
    cr_expect(eq(i64, count_on(c, "n1", web), 0));

    uint32_t n = 0;
    size_t bytes = 0;
    ks_cache_selector_stats(c, &n, &bytes);
    cr_expect(eq(u32, n, 3));
    cr_expect(gt(sz, bytes, 0));
    ks_cache_destroy(c);
}

/*
 * A pod that left since the last version: the published record still holds it, without a
 * count of a selector tracked now, so that selector is not counted by every snapshot yet
 * and is not "new and empty".
 */
Test(selector_counts, a_selector_tracked_after_a_change_is_ready_with_the_next_version)
{
    struct ks_cache *c = NULL;
    cr_assert(eq(int, ks_cache_create(&c), 0));
    cr_assert(eq(int, ks_cache_add_node(c, mk_node("n1", NULL, NULL)), 0));
    struct ks_pod *p = labelled("d", "p", "app=late");
    cr_assert(eq(int, ks_cache_add_pod(c, ks_pod_get(p), id("n1")), 0));
    refresh_and_check(c);
    cr_assert(eq(int, ks_cache_remove_pod(c, p), 0)); /* the published record still holds it */
    ks_pod_put(p);
    uint64_t published;
    ks_rcu_read_lock();
    published = ks_cache_snapshot(c)->generation;
    ks_rcu_read_unlock();
    uint32_t sel;
    uint64_t ready = 0;
    int rc = ks_cache_selector_track(c, id("d"), ks_fake_selector(&arena, "app=late"), &sel, &ready);
    cr_expect(eq(int, rc, 0), "not new and empty: a published record holds a pod it matches");
    cr_expect(gt(u64, ready, published), "the published version does not count it");
    /* with nothing changed since the last version, a selector no pod matches is ready at once */
    refresh_and_check(c);
    rc = ks_cache_selector_track(c, id("d"), ks_fake_selector(&arena, "app=later"), &sel, &ready);
    cr_expect(eq(int, rc, 1));
    cr_expect(eq(u64, ready, 0));
    ks_cache_destroy(c);
}

Test(selector_counts, a_record_the_cache_did_not_build_has_no_counts)
{
    struct ks_cache *c = NULL;
    cr_assert(eq(int, ks_cache_create(&c), 0));
    cr_assert(eq(int, ks_cache_add_node(c, mk_node("n1", NULL, NULL)), 0));
    cr_assert(eq(int, ks_cache_add_pod(c, labelled("d", "a", "app=web"), id("n1")), 0));
    uint32_t web = track(c, "d", "app=web", NULL);
    refresh_and_check(c);
    ks_rcu_read_lock();
    const struct ks_node_snap *r = snap_node(c, "n1");
    const struct ks_pod *victim = r->pods[0];
    const struct ks_node_snap *d = ks_node_snap_derive(r, NULL, 0, &victim, 1, &arena);
    uint32_t n = 7;
    bool counted = ks_node_snap_sel_count(r, web, &n);
    cr_expect(counted);
    cr_expect(eq(u32, n, 1));
    counted = ks_node_snap_sel_count(d, web, &n);
    cr_expect(not(counted), "derived: its readers count its pods");
    ks_rcu_read_unlock();
    ks_cache_destroy(c);
}

Test(selector_counts, bad_selector_is_refused)
{
    struct ks_cache *c = NULL;
    uint32_t sel;
    uint64_t ready;
    cr_assert(eq(int, ks_cache_create(&c), 0));
    cr_expect(eq(int, ks_cache_selector_track(c, id("d"), NULL, &sel, &ready), -EINVAL));
    cr_expect(
        eq(int, ks_cache_selector_track(c, id("d"), ks_fake_selector(&arena, ""), &sel, &ready), -EINVAL));
    ks_cache_destroy(c);
}

/* Pods of ever-new label values (a revision hash, say) leave empty lists behind; a refresh frees them. */
Test(selector_counts, the_label_index_frees_lists_left_empty)
{
    struct ks_cache *c = NULL;
    cr_assert(eq(int, ks_cache_create(&c), 0));
    cr_assert(eq(int, ks_cache_add_node(c, mk_node("n1", NULL, "cpu=100,memory=100Gi,pods=1000")), 0));
    cr_assert(eq(int, ks_cache_add_pod(c, labelled("d", "keep", "app=web,rev=r0"), id("n1")), 0));
    uint32_t web = track(c, "d", "app=web", NULL); /* the index is on from here */
    uint32_t n;
    size_t before, after;
    ks_cache_selector_stats(c, &n, &before);
    for (int i = 1; i <= 600; i++) {
        char name[16], labels[32];
        snprintf(name, sizeof(name), "p%d", i);
        snprintf(labels, sizeof(labels), "app=web,rev=r%d", i);
        struct ks_pod *p = labelled("d", name, labels);
        cr_assert(eq(int, ks_cache_assume_pod(c, p, id("n1")), 0));
        cr_assert(eq(int, ks_cache_forget_pod(c, p), 0));
        ks_pod_put(p);
    }
    refresh_and_check(c);
    ks_cache_selector_stats(c, &n, &after);
    cr_expect(lt(sz, after, before + 600 * 64), "600 empty lists freed: %zu bytes, %zu before", after,
              before);
    cr_expect(eq(i64, count_on(c, "n1", web), 1));
    cr_assert(eq(int, ks_cache_add_pod(c, labelled("d", "late", "app=web,rev=r7"), id("n1")), 0));
    refresh_and_check(c);
    cr_expect(eq(i64, count_on(c, "n1", web), 2));
    ks_cache_destroy(c);
}

/* ---- property test ------------------------------------------------------------------------ */

#define NNODES 6
#define NPODS  40
#define NSELS  10

/* Selectors of every filing: In with one value, In with two, Exists, and the scan list's. */
static const char *const sel_specs[NSELS] = {
    "app=a0",  "app=a1,tier=t0",         "app in (a0,a2)", "tier",         "!tier",
    "app!=a1", "tier=t1,app in (a0,a1)", "app=a2",         "app,tier!=t0", "tier in (t0)",
};
static const char *const label_sets[] = {
    NULL,      "app=a0", "app=a1", "app=a2", "app=a0,tier=t0", "app=a1,tier=t0", "app=a1,tier=t1",
    "tier=t1", "x=y",
};
static const char *const namespaces[] = {"d", "e"};

static uint32_t seed;

static uint32_t rnd(uint32_t n)
{
    seed = seed * 1103515245u + 12345u;
    return (seed >> 8) % n;
}

enum where { NOWHERE, BOUND, ASSUMED };

struct model {
    enum where where[NPODS];
    bool hidden[NPODS];
    uint32_t sel[NSELS];
    uint64_t ready[NSELS];
    bool tracked[NSELS];
};

static void pod_name(char *buf, size_t len, uint32_t i)
{
    snprintf(buf, len, "p%u", i);
}

static struct ks_pod *random_pod(uint32_t i)
{
    char name[16];
    pod_name(name, sizeof(name), i);
    struct ks_pod *p = mk_pod_raw(namespaces[i % 2], name, "cpu=10m");
    const char *labels = label_sets[rnd(sizeof(label_sets) / sizeof(label_sets[0]))];
    if (labels)
        ks_fake_pod_labels(p, labels);
    if (rnd(8) == 0)
        p->meta.deletion_time = 1;
    return ks_fake_pod_done(p);
}

static uint32_t random_node(void)
{
    char name[16];
    snprintf(name, sizeof(name), "n%u", rnd(NNODES));
    return id(name);
}

/* Every record of the current snapshot counts every selector ready for it as a recount does. */
static void compare_with_recount(struct ks_cache *c, const struct model *m, uint32_t step)
{
    ks_rcu_read_lock();
    const struct ks_snapshot *snap = ks_cache_snapshot(c);
    for (uint32_t s = 0; s < NSELS; s++) {
        if (!m->tracked[s] || snap->generation < m->ready[s])
            continue;
        for (uint32_t i = 0; i < snap->nnodes; i++) {
            const struct ks_node_snap *r = ks_snapshot_node(snap, i);
            uint32_t got = 0, want = 0;
            bool counted = ks_node_snap_sel_count(r, m->sel[s], &got);
            cr_assert(counted, "a record the cache built");
            for (uint32_t k = 0; k < r->npods; k++) {
                const struct ks_pod *p = r->pods[k];
                want += p->meta.namespace_id == id(namespaces[s % 2]) &&
                        p->meta.deletion_time == KS_TIME_NONE &&
                        ks_label_selector_matches(ks_fake_selector(&arena, sel_specs[s]), &p->meta.labels);
            }
            cr_assert(eq(u32, got, want), "step %u, seed %u: selector %s on %s", step, seed, sel_specs[s],
                      ks_intern_str(r->name));
        }
    }
    ks_rcu_read_unlock();
}

static void one_step(struct ks_cache *c, struct model *m)
{
    uint32_t i = rnd(NPODS);
    char name[16];
    pod_name(name, sizeof(name), i);
    struct ks_pod *key = ks_fake_pod(namespaces[i % 2], name);
    switch (rnd(10)) {
    case 0:
    case 1: /* add, or confirm an assumed one on another node */
        if (m->where[i] != BOUND && ks_cache_add_pod(c, random_pod(i), random_node()) == 0) {
            m->where[i] = BOUND;
            m->hidden[i] = false;
        }
        break;
    case 2: /* assume */
        if (m->where[i] == NOWHERE) {
            struct ks_pod *p = random_pod(i);
            cr_assert(eq(int, ks_cache_assume_pod(c, p, random_node()), 0));
            ks_pod_put(p);
            m->where[i] = ASSUMED;
        }
        break;
    case 3: /* forget */
        if (m->where[i] == ASSUMED) {
            cr_assert(eq(int, ks_cache_forget_pod(c, key), 0));
            m->where[i] = NOWHERE;
            m->hidden[i] = false;
        }
        break;
    case 4: /* relabel, or start terminating */
        if (m->where[i] == BOUND) {
            cr_assert(eq(int, ks_cache_update_pod(c, random_pod(i), random_node()), 0));
            m->hidden[i] = false;
        }
        break;
    case 5: /* remove */
        if (m->where[i] == BOUND) {
            cr_assert(eq(int, ks_cache_remove_pod(c, key), 0));
            m->where[i] = NOWHERE;
            m->hidden[i] = false;
        }
        break;
    case 6: /* hide or show */
        if (m->where[i] != NOWHERE) {
            int rc = m->hidden[i] ? ks_cache_unhide_pod(c, key) : ks_cache_hide_pod(c, key);
            cr_assert(eq(int, rc, 0));
            m->hidden[i] = !m->hidden[i];
        }
        break;
    case 7: { /* a node relabelled, or back after a removal */
        char node[16];
        snprintf(node, sizeof(node), "n%u", rnd(NNODES));
        struct ks_node *n = mk_node(node, rnd(2) ? "topology.kubernetes.io/zone=z1" : "zone=z2", NULL);
        if (ks_cache_update_node(c, n) == -ENOENT)
            cr_assert(eq(int, ks_cache_add_node(c, n), 0));
        break;
    }
    case 8: { /* a node removed (its pods stay on a ghost) */
        char node[16];
        snprintf(node, sizeof(node), "n%u", rnd(NNODES));
        ks_cache_remove_node(c, id(node));
        break;
    }
    case 9: { /* a selector tracked */
        uint32_t s = rnd(NSELS);
        uint32_t sel;
        uint64_t ready;
        int rc = ks_cache_selector_track(c, id(namespaces[s % 2]), ks_fake_selector(&arena, sel_specs[s]),
                                         &sel, &ready);
        cr_assert(ge(int, rc, 0));
        bool same = !m->tracked[s] || m->sel[s] == sel;
        cr_assert(same, "a selector keeps its id");
        cr_assert(rc == 0 || (!m->tracked[s] && ready == 0),
                  "1 only for a selector tracked now, ready at once");
        if (rc == 1) {
            /* no pod the cache holds matches it: the next version's records count none */
            refresh_and_check(c);
            ks_rcu_read_lock();
            const struct ks_snapshot *snap = ks_cache_snapshot(c);
            for (uint32_t i = 0; i < snap->nnodes; i++) {
                uint32_t n = 1;
                ks_node_snap_sel_count(ks_snapshot_node(snap, i), sel, &n);
                cr_assert(eq(u32, n, 0), "seed %u: a new empty selector counted on a node", seed);
            }
            ks_rcu_read_unlock();
        }
        if (!m->tracked[s]) {
            m->tracked[s] = true;
            m->sel[s] = sel;
            m->ready[s] = ready;
        }
        break;
    }
    }
    ks_pod_put(key);
}

Test(selector_counts, counts_equal_a_recount_after_random_changes)
{
    for (seed = 1; seed <= 30; seed++) {
        uint32_t start = seed;
        struct ks_cache *c = NULL;
        struct model m = {0};
        cr_assert(eq(int, ks_cache_create(&c), 0));
        for (uint32_t n = 0; n < NNODES; n++) {
            char name[16];
            snprintf(name, sizeof(name), "n%u", n);
            cr_assert(eq(int, ks_cache_add_node(c, mk_node(name, NULL, NULL)), 0));
        }
        for (uint32_t step = 0; step < 400; step++) {
            one_step(c, &m);
            if (rnd(3) == 0) {
                refresh_and_check(c);
                compare_with_recount(c, &m, step);
            }
        }
        ks_cache_unhide_all(c);
        refresh_and_check(c);
        compare_with_recount(c, &m, 400);
        ks_cache_destroy(c);
        seed = start;
    }
}
