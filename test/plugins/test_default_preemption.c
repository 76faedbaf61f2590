/*
 * test_default_preemption.c - the DefaultPreemption plugin (plugins/default_preemption.c)
 * and the preemption evaluator (engine/preemption.c).
 *
 * Cases from upstream's defaultpreemption/default_preemption_test.go: TestPostFilter (the
 * extender and pod-group rows left out: ksched has neither), TestDryRunPreemption,
 * TestSelectBestCandidate, TestPodEligibleToPreemptOthers and TestPreempt, with their
 * exact candidates, victims and messages; then ksched's own cases for pods nominated to a
 * node, victims already being deleted, evictor failures and the args.
 *
 * Each cluster is a YAML fixture in test/data/preemption/ loaded with the real loader into
 * a real cache; the framework is a real one whose profile enables the plugins upstream's
 * test registers (NodeResourcesFit at PreFilter and Filter, plus the case's extras), and
 * the evictor records victims and removes them from the cache as the in-process scheduler
 * does. Like upstream's tests, the Filter statuses PostFilter receives are written by
 * hand; dry runs that upstream pins with a seeded offset get that offset directly.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/framework.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/config.h"
#include "ksched/internal/nominator.h"
#include "ksched/internal/preemption.h"
#include "ksched/loader.h"
#include "ksched/plugin_args.h"
#include "ksched/registry.h"
#include "ksched/yaml_tree.h"

static const struct ks_plugin *const dp = &ks_plugin_default_preemption;

/* ---- test plugins -------------------------------------------------------------------------------- */

/* upstream's TestPlugin: AddPod / RemovePod fail on nodes labelled error=true */
static bool error_node(const struct ks_node_snap *node)
{
    uint32_t v;
    return ks_labels_get(&node->node->meta.labels, ks_intern("error"), &v) && v == ks_intern("true");
}

static int tp_pre_filter(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                         struct ks_pre_filter_result *res, struct ks_status *st)
{
    (void)self, (void)cs, (void)pod, (void)res, (void)st;
    return KS_SUCCESS;
}

static int tp_add_pod(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                      const struct ks_pod *other, const struct ks_node_snap *node, struct ks_status *st)
{
    (void)self, (void)cs, (void)other;
    return error_node(node) ? ks_status_set(st, KS_ERROR, "failed to add pod: %s", pod->meta.name)
                            : KS_SUCCESS;
}

static int tp_remove_pod(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                         const struct ks_pod *other, const struct ks_node_snap *node, struct ks_status *st)
{
    (void)self, (void)cs, (void)other;
    return error_node(node) ? ks_status_set(st, KS_ERROR, "failed to remove pod: %s", pod->meta.name)
                            : KS_SUCCESS;
}

static const struct ks_plugin test_plugin = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "test-plugin",
    .pre_filter = tp_pre_filter,
    .add_pod = tp_add_pod,
    .remove_pod = tp_remove_pod,
};

/* upstream's FalseFilter: no node ever fits */
static int ff_filter(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                     const struct ks_node_snap *node, struct ks_status *st)
{
    (void)self, (void)cs, (void)pod, (void)node;
    return ks_status_set(st, KS_UNSCHEDULABLE, "FalseFilter rejects every node");
}

static const struct ks_plugin false_filter = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "FalseFilter",
    .filter = ff_filter,
};

static void setup(void)
{
    struct ks_error err = {0};
    cr_assert_eq(ks_api_init(), 0);
    ks_rcu_register_thread();
    if (!ks_registry_find(test_plugin.name))
        cr_assert_eq(ks_registry_add(&test_plugin, &err), 0, "%s", err.msg);
    if (!ks_registry_find(false_filter.name))
        cr_assert_eq(ks_registry_add(&false_filter, &err), 0, "%s", err.msg);
}

static void teardown(void)
{
    ks_rcu_unregister_thread();
}

TestSuite(defaultpreemption, .init = setup, .fini = teardown);

/* ---- the cluster ----------------------------------------------------------------------------------- */

#define MAX_EVICTED 16

struct env {
    struct ks_objects *objs;
    struct ks_config *cfg;
    struct ks_cache *cache;
    struct ks_nominator *nom;
    struct ks_framework *fw;
    void *self; /* a DefaultPreemption instance on fw */
    int evict_rc;
    uint32_t nevicted;
    char evicted[MAX_EVICTED][64]; /* "name@node" in eviction order */
};

static int record_evict(void *ctx, const struct ks_pod *victim, const struct ks_pod *preemptor, uint32_t node)
{
    struct env *e = ctx;
    (void)preemptor;
    if (e->evict_rc)
        return e->evict_rc;
    cr_assert(e->nevicted < MAX_EVICTED);
    snprintf(e->evicted[e->nevicted++], sizeof(e->evicted[0]), "%s@%s", victim->meta.name,
             ks_intern_str(node));
    return ks_cache_remove_pod(e->cache, victim);
}

/* A v1 configuration whose only filters are the NULL-terminated @filters (at PreFilter and Filter as they
 * implement them). */
static struct ks_config *config_with(const char *const *filters)
{
    char pre[1024] = "", fil[1024] = "", yaml[4096];
    size_t np = 0, nf = 0;
    for (const char *const *f = filters; *f; f++) {
        const struct ks_plugin *p = ks_registry_find(*f);
        cr_assert_not_null(p, "no plugin %s", *f);
        if (p->pre_filter)
            np += (size_t)snprintf(pre + np, sizeof(pre) - np, "      - name: %s\n", *f);
        if (p->filter)
            nf += (size_t)snprintf(fil + nf, sizeof(fil) - nf, "      - name: %s\n", *f);
    }
    snprintf(yaml, sizeof(yaml),
             "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
             "- schedulerName: default-scheduler\n  plugins:\n    multiPoint:\n      disabled:\n      - "
             "name: '*'\n"
             "    queueSort:\n      enabled:\n      - name: PrioritySort\n"
             "%s%s%s%s"
             "    postFilter:\n      enabled:\n      - name: DefaultPreemption\n"
             "    bind:\n      enabled:\n      - name: DefaultBinder\n",
             np ? "    preFilter:\n      enabled:\n" : "", pre, nf ? "    filter:\n      enabled:\n" : "",
             fil);
    struct ks_config *cfg = NULL;
    struct ks_error err = {0};
    int rc = ks_config_load_yaml("test.yaml", yaml, strlen(yaml), &cfg, &err);
    cr_assert_eq(rc, 0, "config: %s: %s\n%s", err.field, err.msg, yaml);
    return cfg;
}

static const char *const FIT[] = {"NodeResourcesFit", NULL};

/* Load test/data/preemption/@fixture.yaml into a cache and build the framework and plugin (@args NULL:
 * defaults). */
static void env_open(struct env *e, const char *fixture, const char *const *filters,
                     const struct ks_defaultpreemption_args *args)
{
    char path[512];
    const char *paths[] = {path};
    struct ks_error err = {0};

    memset(e, 0, sizeof(*e));
    snprintf(path, sizeof(path), "%s/preemption/%s.yaml", KS_TEST_DATA_DIR, fixture);
    cr_assert_eq(ks_objects_load(paths, 1, &e->objs, &err), 0, "%s:%d: %s: %s", err.file, err.line, err.field,
                 err.msg);
    cr_assert_eq(ks_cache_create(&e->cache), 0);
    struct ks_node **nodes = ks_objects_nodes(e->objs);
    for (uint32_t i = 0; i < ks_objects_count(e->objs, NODE); i++)
        cr_assert_eq(ks_cache_add_node(e->cache, nodes[i]), 0);
    e->objs->of[KS_KIND_NODE].n = 0; /* the cache owns them */
    struct ks_pod **pods = ks_objects_pods(e->objs);
    for (uint32_t i = 0; i < ks_objects_count(e->objs, POD); i++) {
        if (pods[i]->node_name != KS_ID_EMPTY)
            cr_assert_eq(ks_cache_add_pod(e->cache, ks_pod_get(pods[i]), pods[i]->node_name), 0);
    }
    cr_assert_geq(ks_cache_refresh(e->cache), 0);
    cr_assert_eq(ks_nominator_create(&e->nom), 0);
    e->cfg = config_with(filters ? filters : FIT);
    struct ks_framework_deps deps = {
        .evictor = {.evict = record_evict, .ctx = e},
        .cache = e->cache,
        .nominator = e->nom,
        .objects = e->objs,
    };
    cr_assert_eq(ks_framework_create(&e->cfg->profiles[0], &deps, &e->fw, &err), 0, "%s", err.msg);
    struct ks_plugin_init in = {.args = args, .slot = 0, .framework = e->fw};
    cr_assert_eq(dp->init(&in, &e->self, &err), 0);
}

static void env_close(struct env *e)
{
    dp->destroy(e->self);
    ks_framework_destroy(e->fw);
    ks_config_destroy(e->cfg);
    ks_nominator_destroy(e->nom);
    ks_cache_destroy(e->cache);
    ks_objects_destroy(e->objs);
}

static const struct ks_pod *pod_named(const struct env *e, const char *name)
{
    struct ks_pod **pods = ks_objects_pods(e->objs);
    for (uint32_t i = 0; i < ks_objects_count(e->objs, POD); i++) {
        if (strcmp(pods[i]->meta.name, name) == 0)
            return pods[i];
    }
    cr_fatal("no pod %s in the fixture", name);
    return NULL;
}

static void pre_filter(struct env *e, struct ks_cycle_state *cs, const struct ks_pod *pod)
{
    struct ks_pre_filter_result pre = {.all = true};
    struct ks_status st = {0};
    int rc = ks_fw_run_pre_filter(e->fw, cs, pod, &pre, &st);
    cr_assert_eq(rc, KS_SUCCESS, "PreFilter: %s", st.nreasons ? ks_intern_str(st.reasons[0]) : "");
}

#define MAX_NODES 8

/*
 * Run PostFilter for @pod_name with the Filter statuses @statuses: "*" every node
 * Unschedulable, "" none (every node absent: UnschedulableAndUnresolvable), otherwise
 * "node1=U,node4=UU". @seed is the cycle's seed (the dry run's offset).
 */
static int post_filter(struct env *e, const char *pod_name, const char *statuses, uint64_t seed,
                       struct ks_post_filter_result *res, struct ks_status *st)
{
    const struct ks_pod *pod = pod_named(e, pod_name);
    struct ks_cycle_state cs;
    const struct ks_node_snap *nodes[MAX_NODES];
    struct ks_status sts[MAX_NODES];
    struct ks_diagnosis d = {
        .nodes = nodes, .statuses = sts, .pre_filter_msg = KS_ID_EMPTY, .post_filter_msg = KS_ID_EMPTY};

    ks_cycle_state_init(&cs);
    cs.seed = seed;
    pre_filter(e, &cs, pod);
    ks_rcu_read_lock();
    const struct ks_snapshot *snap = ks_cache_snapshot(e->cache);
    d.nall = snap->nnodes;
    if (strcmp(statuses, "*") == 0) {
        for (uint32_t i = 0; i < snap->nnodes; i++) {
            nodes[d.nfailed] = ks_snapshot_node(snap, i);
            sts[d.nfailed++] = (struct ks_status){.code = KS_UNSCHEDULABLE, .plugin = KS_NO_PLUGIN};
        }
    } else {
        char buf[256], *save = NULL;
        snprintf(buf, sizeof(buf), "%s", statuses);
        for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            char *eq = strchr(tok, '=');
            cr_assert_not_null(eq);
            *eq = '\0';
            nodes[d.nfailed] = ks_snapshot_find(snap, ks_intern(tok));
            cr_assert_not_null(nodes[d.nfailed], "no node %s", tok);
            sts[d.nfailed++] = (struct ks_status){
                .code = strcmp(eq + 1, "UU") == 0 ? KS_UNSCHEDULABLE_AND_UNRESOLVABLE : KS_UNSCHEDULABLE,
                .plugin = KS_NO_PLUGIN};
        }
    }
    res->nominated_node = KS_ID_EMPTY;
    *st = (struct ks_status){.code = KS_SUCCESS, .plugin = KS_NO_PLUGIN};
    int rc = dp->post_filter(e->self, &cs, pod, &d, res, st);
    ks_rcu_read_unlock();
    ks_cycle_state_destroy(&cs);
    return rc;
}

static const char *reason(const struct ks_status *st)
{
    return st->nreasons ? ks_intern_str(st->reasons[0]) : "";
}

/* PostFilter must succeed and nominate @node. */
static void expect_nominated(struct env *e, const char *pod, const char *statuses, const char *node)
{
    struct ks_post_filter_result res;
    struct ks_status st;
    int rc = post_filter(e, pod, statuses, 1, &res, &st);
    cr_expect(eq(int, rc, KS_SUCCESS), "%s: code %d (%s)", pod, rc, reason(&st));
    cr_expect(eq(str, (char *)ks_intern_str(res.nominated_node), (char *)node), "%s", pod);
}

/* PostFilter must fail with @code and exactly @msg, nominating nothing. */
static void expect_failure(struct env *e, const char *pod, const char *statuses, int code, const char *msg)
{
    struct ks_post_filter_result res;
    struct ks_status st;
    int rc = post_filter(e, pod, statuses, 1, &res, &st);
    cr_expect(eq(int, rc, code), "%s: code (%s)", pod, reason(&st));
    cr_expect(eq(int, st.code, code));
    cr_expect(eq(u32, st.nreasons, 1));
    cr_expect(eq(str, (char *)reason(&st), (char *)msg));
    cr_expect(eq(u32, res.nominated_node, KS_ID_EMPTY));
}

/* "name@node,..." of the evictions so far. */
static const char *evicted(const struct env *e)
{
    static char buf[MAX_EVICTED * 64];
    size_t off = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < e->nevicted; i++)
        off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s", i ? "," : "", e->evicted[i]);
    return buf;
}

/* ---- TestPostFilter -------------------------------------------------------------------------------- */

Test(defaultpreemption, post_filter_higher_priority_pod_can_be_made_schedulable)
{
    struct env e;
    env_open(&e, "one-pod-node", (const char *const[]){"NodeResourcesFit", "test-plugin", NULL}, NULL);
    expect_nominated(&e, "p", "node1=U", "node1");
    cr_expect(eq(str, (char *)evicted(&e), "p1@node1"));
    env_close(&e);
}

Test(defaultpreemption, post_filter_tied_priority_is_still_unschedulable)
{
    struct env e;
    env_open(&e, "one-pod-node", (const char *const[]){"NodeResourcesFit", "test-plugin", NULL}, NULL);
    expect_failure(&e, "p-tied", "node1=U", KS_UNSCHEDULABLE,
                   "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.");
    cr_expect(eq(u32, e.nevicted, 0));
    env_close(&e);
}

Test(defaultpreemption, post_filter_respects_filter_statuses)
{
    struct env e;
    env_open(&e, "one-pod-node", (const char *const[]){"NodeResourcesFit", "test-plugin", NULL}, NULL);
    /* an UnschedulableAndUnresolvable node, and a node without a status (absent: the same) */
    expect_failure(&e, "p", "node1=UU", KS_UNSCHEDULABLE,
                   "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.");
    expect_failure(&e, "p", "", KS_UNSCHEDULABLE,
                   "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.");
    cr_expect(eq(u32, e.nevicted, 0));
    env_close(&e);
}

Test(defaultpreemption, post_filter_schedulable_on_one_node)
{
    struct env e;
    env_open(&e, "two-one-pod-nodes", (const char *const[]){"NodeResourcesFit", "test-plugin", NULL}, NULL);
    expect_nominated(&e, "p", "node1=U,node2=U", "node2");
    cr_expect(eq(str, (char *)evicted(&e), "p2@node2"));
    env_close(&e);
}

Test(defaultpreemption, post_filter_min_highest_priority_node_with_pdbs)
{
    struct env e;
    env_open(&e, "pdb-min-highest", (const char *const[]){"NodeResourcesFit", "test-plugin", NULL}, NULL);
    expect_nominated(&e, "p", "node1=U,node2=U", "node2");
    cr_expect(eq(str, (char *)evicted(&e), "p3@node2"));
    env_close(&e);
}

Test(defaultpreemption, post_filter_not_enough_resource_after_removing_low_priority_pods)
{
    struct env e;
    env_open(&e, "insufficient-two", (const char *const[]){"NodeResourcesFit", "test-plugin", NULL}, NULL);
    expect_failure(&e, "p", "node1=U,node2=U", KS_UNSCHEDULABLE,
                   "preemption: 0/2 nodes are available: 2 Insufficient cpu.");
    env_close(&e);
}

Test(defaultpreemption, post_filter_mixed_reasons)
{
    struct env e;
    env_open(&e, "mixed-reasons", (const char *const[]){"NodeResourcesFit", "test-plugin", NULL}, NULL);
    expect_failure(&e, "p", "node1=U,node2=U,node3=U", KS_UNSCHEDULABLE,
                   "preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found "
                   "for incoming pod.");
    env_close(&e);
}

Test(defaultpreemption, post_filter_unresolvable_and_insufficient_nodes)
{
    struct env e;
    env_open(&e, "insufficient-four", (const char *const[]){"NodeResourcesFit", "test-plugin", NULL}, NULL);
    expect_failure(&e, "p", "node1=U,node2=U,node4=UU", KS_UNSCHEDULABLE,
                   "preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful for "
                   "scheduling.");
    env_close(&e);
}

Test(defaultpreemption, post_filter_only_node_fails_with_plugin_error)
{
    struct env e;
    env_open(&e, "error-one", (const char *const[]){"NodeResourcesFit", "test-plugin", NULL}, NULL);
    expect_failure(
        &e, "p", "node1=U", KS_ERROR,
        "preemption: running RemovePod on PreFilter plugin \"test-plugin\": failed to remove pod: p");
    cr_expect(eq(u32, e.nevicted, 0));
    env_close(&e);
}

Test(defaultpreemption, post_filter_one_node_errors_the_other_passes)
{
    struct env e;
    env_open(&e, "error-two", (const char *const[]){"NodeResourcesFit", "test-plugin", NULL}, NULL);
    expect_nominated(&e, "p", "node1=U,node2=U", "node2");
    cr_expect(eq(str, (char *)evicted(&e), "p2@node2"));
    env_close(&e);
}

/* ---- TestDryRunPreemption ---------------------------------------------------------------------------- */

static int cmp_node_name(const void *a, const void *b)
{
    const struct ks_node_snap *x = *(const struct ks_node_snap *const *)a;
    const struct ks_node_snap *y = *(const struct ks_node_snap *const *)b;
    return strcmp(ks_intern_str(x->name), ks_intern_str(y->name));
}

static int cmp_candidate(const void *a, const void *b)
{
    const struct ks_preempt_candidate *x = a, *y = b;
    return strcmp(ks_intern_str(x->node->name), ks_intern_str(y->node->name));
}

static int cmp_pod_name(const void *a, const void *b)
{
    return strcmp((*(const struct ks_pod *const *)a)->meta.name,
                  (*(const struct ks_pod *const *)b)->meta.name);
}

/*
 * DryRunPreemption over every node sorted by name (as upstream's test), from @offset, for
 * @num candidates; the candidates as "node:victim,victim[/pdb violations] ..." sorted by
 * node and victim names, as upstream compares them.
 */
static const char *dry_run(struct env *e, const char *pod_name, uint32_t offset, uint32_t num)
{
    static char out[1024];
    const struct ks_pod *pod = pod_named(e, pod_name);
    const struct ks_node_snap *nodes[MAX_NODES];
    struct ks_cycle_state cs;
    struct ks_preempt_dry_run r = {0};

    ks_cycle_state_init(&cs);
    pre_filter(e, &cs, pod);
    ks_rcu_read_lock();
    const struct ks_snapshot *snap = ks_cache_snapshot(e->cache);
    cr_assert_leq(snap->nnodes, MAX_NODES);
    for (uint32_t i = 0; i < snap->nnodes; i++)
        nodes[i] = ks_snapshot_node(snap, i);
    qsort(nodes, snap->nnodes, sizeof(nodes[0]), cmp_node_name);
    struct ks_preemptor p = {
        .fw = e->fw,
        .cs = &cs,
        .pod = pod,
        .nominator = e->nom,
        .npdbs = ks_objects_count(e->objs, PDB),
        .pdbs = (const struct ks_pod_disruption_budget *const *)e->objs->of[KS_KIND_PDB].items,
        .now_ns = 1000000000000,
    };
    cr_assert_eq(
        ks_preempt_dry_run(&p, nodes, snap->nnodes, offset, num, ks_preempt_select_victims, NULL, &r), 0);
    qsort(r.candidates, r.ncandidates, sizeof(r.candidates[0]), cmp_candidate);
    size_t off = 0;
    out[0] = '\0';
    for (uint32_t i = 0; i < r.ncandidates; i++) {
        struct ks_preempt_candidate *c = &r.candidates[i];
        qsort(c->victims, c->nvictims, sizeof(c->victims[0]), cmp_pod_name);
        off += (size_t)snprintf(out + off, sizeof(out) - off, "%s%s:", i ? " " : "",
                                ks_intern_str(c->node->name));
        for (uint32_t k = 0; k < c->nvictims; k++)
            off += (size_t)snprintf(out + off, sizeof(out) - off, "%s%s", k ? "," : "",
                                    c->victims[k]->meta.name);
        if (c->npdb_violations)
            off += (size_t)snprintf(out + off, sizeof(out) - off, "/%lld", (long long)c->npdb_violations);
    }
    ks_preempt_dry_run_free(&r);
    ks_rcu_read_unlock();
    ks_cycle_state_destroy(&cs);
    return out;
}

#define EXPECT_DRY(e, pod, offset, num, want)                                                                \
    cr_expect(eq(str, (char *)dry_run((e), (pod), (offset), (num)), (char *)(want)))

Test(defaultpreemption, dry_run_pod_fits_no_node)
{
    struct env e;
    env_open(&e, "dry-two-nodes", (const char *const[]){"FalseFilter", NULL}, NULL);
    EXPECT_DRY(&e, "p", 0, 2, "");
    env_close(&e);
}

Test(defaultpreemption, dry_run_fits_both_nodes_when_lower_priority_pods_are_preempted)
{
    struct env e;
    env_open(&e, "dry-two-nodes", NULL, NULL);
    EXPECT_DRY(&e, "p", 0, 2, "node1:p1 node2:p2");
    /* the pods running are not of lower priority: no preemption */
    EXPECT_DRY(&e, "p-low", 0, 2, "");
    env_close(&e);
}

Test(defaultpreemption, dry_run_lower_priority_small_pod_stays)
{
    struct env e;
    env_open(&e, "dry-small-stays", NULL, NULL);
    EXPECT_DRY(&e, "p", 0, 2, "node1:p1.2 node2:p2");
    env_close(&e);
}

Test(defaultpreemption, dry_run_mixed_priority_pods_are_preempted)
{
    struct env e;
    env_open(&e, "dry-mixed", NULL, NULL);
    EXPECT_DRY(&e, "p", 0, 2, "node1:p1.2,p1.3");
    env_close(&e);
}

Test(defaultpreemption, dry_run_equal_priorities_preempt_the_later_start)
{
    struct env e;
    env_open(&e, "dry-start-time", NULL, NULL);
    EXPECT_DRY(&e, "p", 0, 2, "node1:p1.1,p1.3");
    env_close(&e);
}

Test(defaultpreemption, dry_run_pod_with_anti_affinity_is_preempted)
{
    if (!ks_plugin_inter_pod_affinity.filter)
        cr_skip_test("InterPodAffinity has no Filter yet");
    struct env e;
    env_open(&e, "dry-anti-affinity", (const char *const[]){"NodeResourcesFit", "InterPodAffinity", NULL},
             NULL);
    EXPECT_DRY(&e, "p", 0, 2, "node1:p1.1");
    env_close(&e);
}

Test(defaultpreemption, dry_run_resolves_pod_topology_spread)
{
    if (!ks_plugin_pod_topology_spread.filter)
        cr_skip_test("PodTopologySpread has no Filter yet");
    struct env e;
    env_open(&e, "dry-topology-spread", (const char *const[]){"PodTopologySpread", NULL}, NULL);
    EXPECT_DRY(&e, "p", 0, 3, "node-a:pod-a2 node-b:pod-b1");
    env_close(&e);
}

Test(defaultpreemption, dry_run_filter_rejects_every_node)
{
    struct env e;
    env_open(&e, "dry-two-nodes", (const char *const[]){"NodeResourcesFit", "FalseFilter", NULL}, NULL);
    EXPECT_DRY(&e, "p", 0, 2, "");
    env_close(&e);
}

Test(defaultpreemption, dry_run_pdb_violations)
{
    struct env e;
    env_open(&e, "dry-pdb-same", NULL, NULL);
    EXPECT_DRY(&e, "p", 0, 1, "node1:p1.1,p1.2/1");
    env_close(&e);
    /* a disrupted pod that is not a victim changes nothing */
    env_open(&e, "dry-pdb-disrupted-other", NULL, NULL);
    EXPECT_DRY(&e, "p", 0, 1, "node1:p1.1,p1.2/1");
    env_close(&e);
    /* a victim the PDB already counts as disrupted does not consume its budget */
    env_open(&e, "dry-pdb-disrupted-victim", NULL, NULL);
    EXPECT_DRY(&e, "p", 0, 1, "node1:p1.1,p1.2");
    env_close(&e);
    env_open(&e, "dry-pdb-disrupted-nonviolating", NULL, NULL);
    EXPECT_DRY(&e, "p", 0, 1, "node1:p1.1,p1.2,p1.3/1");
    env_close(&e);
}

/* DefaultPreemptionArgs{40, 1} over five nodes: 2 candidates; upstream's seeded offset is 4. */
Test(defaultpreemption, dry_run_stops_at_num_candidates)
{
    struct env e;
    env_open(&e, "dry-five", NULL, NULL);
    EXPECT_DRY(&e, "tp1", 4, 2, "node1:p1 node5:p5");
    env_close(&e);
    env_open(&e, "dry-five-some", NULL, NULL);
    EXPECT_DRY(&e, "tp1", 4, 2, "node1:p1 node3:p3");
    env_close(&e);
}

Test(defaultpreemption, dry_run_offsets_across_cycles_wrap_around)
{
    struct env e;
    env_open(&e, "dry-five", NULL, NULL);
    EXPECT_DRY(&e, "tp1", 4, 2, "node1:p1 node5:p5");
    EXPECT_DRY(&e, "tp2", 1, 2, "node2:p2 node3:p3");
    EXPECT_DRY(&e, "tp3", 3, 2, "node4:p4 node5:p5");
    env_close(&e);
}

Test(defaultpreemption, dry_run_looks_past_num_candidates_for_a_node_without_pdb_violations)
{
    struct env e;
    env_open(&e, "dry-five-pdb", NULL, NULL);
    EXPECT_DRY(&e, "tp1", 4, 2, "node1:p1/1 node3:p3 node5:p5/1");
    env_close(&e);
}

Test(defaultpreemption, dry_run_orders_clean_candidates_first_and_reports_failures)
{
    struct env e;
    env_open(&e, "dry-five-pdb", NULL, NULL);
    const struct ks_pod *pod = pod_named(&e, "tp1");
    const struct ks_node_snap *nodes[MAX_NODES];
    struct ks_cycle_state cs;
    struct ks_preempt_dry_run r = {0};
    ks_cycle_state_init(&cs);
    pre_filter(&e, &cs, pod);
    ks_rcu_read_lock();
    const struct ks_snapshot *snap = ks_cache_snapshot(e.cache);
    for (uint32_t i = 0; i < snap->nnodes; i++)
        nodes[i] = ks_snapshot_node(snap, i);
    qsort(nodes, snap->nnodes, sizeof(nodes[0]), cmp_node_name);
    struct ks_preemptor p = {
        .fw = e.fw,
        .cs = &cs,
        .pod = pod,
        .npdbs = 1,
        .pdbs = (const struct ks_pod_disruption_budget *const *)e.objs->of[KS_KIND_PDB].items,
    };
    /* node5 (PDB), node1 (PDB), node2 (PDB), node3 (clean): the violating list holds two */
    cr_assert_eq(ks_preempt_dry_run(&p, nodes, snap->nnodes, 4, 2, ks_preempt_select_victims, NULL, &r), 0);
    cr_assert_eq(r.ncandidates, 3);
    cr_expect(eq(str, (char *)ks_intern_str(r.candidates[0].node->name), "node3"));
    cr_expect(eq(str, (char *)ks_intern_str(r.candidates[1].node->name), "node5"));
    cr_expect(eq(str, (char *)ks_intern_str(r.candidates[2].node->name), "node1"));
    cr_expect(eq(u32, r.nfailed, 0));
    char err[64];
    cr_expect(ks_preempt_dry_run_error(&r, err, sizeof(err)) == false);
    ks_preempt_dry_run_free(&r);
    ks_rcu_read_unlock();
    ks_cycle_state_destroy(&cs);
    env_close(&e);
}

/* ---- TestSelectBestCandidate --------------------------------------------------------------------------- */

Test(defaultpreemption, select_best_candidate)
{
    static const struct {
        const char *fixture, *want;
    } cases[] = {
        {"best-min-highest", "node3"},  {"best-min-sum", "node2"},         {"best-min-pods", "node2"},
        {"best-adjusted-sum", "node2"}, {"best-non-overlapping", "node1"}, {"best-start-per-node", "node2"},
        {"best-start-all", "node3"},    {"best-priority-start", "node2"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct env e;
        env_open(&e, cases[i].fixture, NULL, NULL);
        struct ks_post_filter_result res;
        struct ks_status st;
        cr_expect(eq(int, post_filter(&e, "p", "*", 1, &res, &st), KS_SUCCESS), "%s: %s", cases[i].fixture,
                  reason(&st));
        cr_expect(eq(str, (char *)ks_intern_str(res.nominated_node), (char *)cases[i].want), "%s",
                  cases[i].fixture);
        env_close(&e);
    }
}

Test(defaultpreemption, select_best_candidate_any_of_equal_nodes)
{
    struct env e;
    env_open(&e, "best-both", NULL, NULL);
    for (uint64_t seed = 0; seed < 4; seed++) {
        struct ks_post_filter_result res;
        struct ks_status st;
        cr_assert_eq(post_filter(&e, "p", "node1=U,node2=U", seed, &res, &st), KS_SUCCESS, "%s", reason(&st));
        const char *got = ks_intern_str(res.nominated_node);
        cr_expect(strcmp(got, "node1") == 0 || strcmp(got, "node2") == 0, "got %s", got);
        env_close(&e);
        env_open(&e, "best-both", NULL, NULL);
    }
    env_close(&e);
}

/* pickOneNodeForPreemption on candidates built by hand: each criterion in turn. */
Test(defaultpreemption, pick_one_node_criteria_in_order)
{
    struct ks_pod pods[6];
    struct ks_node_snap nodes[3];
    memset(pods, 0, sizeof(pods));
    memset(nodes, 0, sizeof(nodes));
    for (int i = 0; i < 3; i++)
        nodes[i].name = (uint32_t)(100 + i);
    for (int i = 0; i < 6; i++) {
        pods[i].start_time = KS_TIME_NONE;
        pods[i].meta.name = "v";
    }
    const struct ks_pod *v0[] = {&pods[0]}, *v1[] = {&pods[1]}, *v2[] = {&pods[2], &pods[3]};
    struct ks_preempt_candidate c[3] = {
        {&nodes[0], 1, v0, 1},
        {&nodes[1], 1, v1, 0},
        {&nodes[2], 2, v2, 0},
    };
    /* fewest PDB violations first, even with a higher victim */
    pods[0].priority = 0;
    pods[1].priority = 500;
    pods[2].priority = 500;
    pods[3].priority = 0;
    cr_expect(eq(ptr, (void *)ks_preempt_select(c, 3, 0), &c[1]));
    /* then the sum of priorities (both highest 500): node1's 500 beats 500 + 0 shifted by 2^31 */
    cr_expect(eq(ptr, (void *)ks_preempt_select(c + 1, 2, 0), &c[1]));
    /* then the latest start of the highest-priority victims; pods without one started "now" */
    c[2].nvictims = 1;
    pods[1].start_time = 10;
    pods[2].start_time = 20;
    cr_expect(eq(ptr, (void *)ks_preempt_select(c + 1, 2, 0), &c[2]));
    pods[2].start_time = KS_TIME_NONE;
    cr_expect(eq(ptr, (void *)ks_preempt_select(c + 1, 2, 5), &c[1]), "now (5) is earlier than 10");
    /* all equal: the first */
    pods[2].start_time = 10;
    cr_expect(eq(ptr, (void *)ks_preempt_select(c + 1, 2, 0), &c[1]));
    cr_expect(eq(ptr, (void *)ks_preempt_select(c, 0, 0), NULL));
}

Test(defaultpreemption, pod_order_and_earliest_start)
{
    struct ks_pod a = {.priority = 10, .start_time = 5}, b = {.priority = 10, .start_time = 3},
                  c = {.priority = 20, .start_time = 9}, d = {.priority = 20, .start_time = KS_TIME_NONE};
    cr_expect(ks_preempt_more_important(&c, &a, 0));
    cr_expect(ks_preempt_more_important(&b, &a, 0), "same priority: the earlier start is more important");
    cr_expect(ks_preempt_more_important(&a, &a, 0) == false);
    cr_expect(ks_preempt_more_important(&d, &c, 1), "no start time: now (1) < 9");
    const struct ks_pod *list[] = {&a, &b, &c, &d};
    ks_preempt_sort(list, 4, 100);
    cr_expect(eq(ptr, (void *)list[0], &c));
    cr_expect(eq(ptr, (void *)list[1], &d));
    cr_expect(eq(ptr, (void *)list[2], &b));
    cr_expect(eq(ptr, (void *)list[3], &a));
    const struct ks_pod *v[] = {&a, &c, &b, &d};
    cr_expect(eq(i64, ks_preempt_earliest_start(v, 4, 100), 9), "earliest of the priority-20 victims");
    cr_expect(eq(i64, ks_preempt_earliest_start(v, 4, 4), 4));
    cr_expect(eq(i64, ks_preempt_earliest_start(v, 1, 4), 5));
    cr_expect(eq(i64, ks_preempt_earliest_start(v, 0, 4), INT64_MIN));
}

/* ---- TestPodEligibleToPreemptOthers ---------------------------------------------------------------- */

Test(defaultpreemption, not_eligible_with_preemption_policy_never)
{
    struct env e;
    env_open(&e, "eligible", NULL, NULL);
    expect_failure(&e, "p-never", "*", KS_UNSCHEDULABLE,
                   "preemption: not eligible due to preemptionPolicy=Never.");
    cr_expect(eq(u32, e.nevicted, 0));
    env_close(&e);
}

Test(defaultpreemption, not_eligible_while_a_victim_terminates_on_the_nominated_node)
{
    struct env e;
    env_open(&e, "eligible", NULL, NULL);
    /* nominatedNodeName node1, where p1 terminates with DisruptionTarget/PreemptionByScheduler */
    expect_failure(&e, "p-nominated-1", "*", KS_UNSCHEDULABLE,
                   "preemption: not eligible due to a terminating pod on the nominated node.");
    env_close(&e);
    /* the same when the nomination is the scheduler's own (the nominator) */
    env_open(&e, "eligible", NULL, NULL);
    cr_assert_eq(ks_nominator_add(e.nom, pod_named(&e, "p-nominated-2"), ks_intern("node1")), 0);
    expect_failure(&e, "p-nominated-2", "*", KS_UNSCHEDULABLE,
                   "preemption: not eligible due to a terminating pod on the nominated node.");
    cr_expect(eq(u32, e.nevicted, 0));
    env_close(&e);
}

Test(defaultpreemption, eligible_when_the_nominated_node_is_unresolvable)
{
    struct env e;
    env_open(&e, "eligible", NULL, NULL);
    /* node1 is UnschedulableAndUnresolvable now: preempt elsewhere (node2, whose victim is already leaving)
     */
    expect_nominated(&e, "p-nominated-1", "node1=UU,node2=U", "node2");
    cr_expect(eq(u32, e.nevicted, 0), "p2 is being deleted already: %s", evicted(&e));
    env_close(&e);
}

Test(defaultpreemption, eligible_when_terminating_pods_are_not_victims_of_preemption)
{
    struct env e;
    env_open(&e, "eligible", NULL, NULL);
    /* nominated to node2, where p2 terminates without the DisruptionTarget condition */
    struct ks_post_filter_result res;
    struct ks_status st;
    cr_expect(eq(int, post_filter(&e, "p-nominated-2", "*", 1, &res, &st), KS_SUCCESS), "%s", reason(&st));
    cr_expect(res.nominated_node != KS_ID_EMPTY);
    env_close(&e);
}

/* ---- TestPreempt ------------------------------------------------------------------------------------- */

Test(defaultpreemption, preempt_basic)
{
    struct env e;
    env_open(&e, "preempt-basic", NULL, NULL);
    expect_nominated(&e, "p", "*", "node1");
    cr_expect(eq(str, (char *)evicted(&e), "p1.1@node1,p1.2@node1"));
    /* the victims are gone from the cache */
    uint32_t nodes, pods;
    ks_cache_counts(e.cache, &nodes, &pods);
    cr_expect(eq(u32, pods, 2));
    env_close(&e);
}

Test(defaultpreemption, preempt_policy_unset_preempts)
{
    struct env e;
    env_open(&e, "preempt-basic", NULL, NULL);
    expect_nominated(&e, "p-nil", "*", "node1");
    cr_expect(eq(str, (char *)evicted(&e), "p1.1@node1,p1.2@node1"));
    env_close(&e);
}

Test(defaultpreemption, preempt_never)
{
    struct env e;
    env_open(&e, "preempt-basic", NULL, NULL);
    expect_failure(&e, "p-never", "*", KS_UNSCHEDULABLE,
                   "preemption: not eligible due to preemptionPolicy=Never.");
    cr_expect(eq(u32, e.nevicted, 0));
    env_close(&e);
}

Test(defaultpreemption, preempt_for_topology_spread_constraints)
{
    if (!ks_plugin_pod_topology_spread.filter)
        cr_skip_test("PodTopologySpread has no Filter yet");
    struct env e;
    env_open(&e, "preempt-topology-spread", (const char *const[]){"PodTopologySpread", NULL}, NULL);
    expect_nominated(&e, "p", "*", "node-b");
    cr_expect(eq(str, (char *)evicted(&e), "p-b1@node-b"));
    env_close(&e);
}

/* ---- nominated pods, deletions, evictor failures --------------------------------------------------- */

Test(defaultpreemption, nominated_pods_of_higher_priority_keep_their_room)
{
    struct env e;
    env_open(&e, "nominated", NULL, NULL);
    /* n-high (300m) waits for node1: removing p1 leaves 500m, not enough for both */
    cr_assert_eq(ks_nominator_add(e.nom, pod_named(&e, "n-high"), ks_intern("node1")), 0);
    expect_failure(&e, "p", "*", KS_UNSCHEDULABLE,
                   "preemption: 0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory.");
    cr_expect(eq(u32, e.nevicted, 0));
    env_close(&e);
}

Test(defaultpreemption, nominated_pods_of_lower_priority_lose_their_nomination)
{
    struct env e;
    env_open(&e, "nominated", NULL, NULL);
    cr_assert_eq(ks_nominator_add(e.nom, pod_named(&e, "n-low"), ks_intern("node1")), 0);
    cr_assert_eq(ks_nominator_add(e.nom, pod_named(&e, "n-empty"), ks_intern("node1")), 0);
    expect_nominated(&e, "p", "*", "node1");
    cr_expect(eq(str, (char *)evicted(&e), "p1@node1"));
    cr_expect(eq(u32, ks_nominator_node(e.nom, pod_named(&e, "n-low")), KS_ID_EMPTY));
    cr_expect(eq(u32, ks_nominator_node(e.nom, pod_named(&e, "n-empty")), ks_intern("node1")));
    env_close(&e);
}

Test(defaultpreemption, no_candidate_clears_the_preemptors_nomination)
{
    struct env e;
    env_open(&e, "nominated", NULL, NULL);
    const struct ks_pod *p = pod_named(&e, "p");
    cr_assert_eq(ks_nominator_add(e.nom, p, ks_intern("node1")), 0);
    cr_assert_eq(ks_nominator_add(e.nom, pod_named(&e, "n-high"), ks_intern("node1")), 0);
    expect_failure(&e, "p", "*", KS_UNSCHEDULABLE,
                   "preemption: 0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory.");
    cr_expect(eq(u32, ks_nominator_node(e.nom, p), KS_ID_EMPTY));
    env_close(&e);
}

Test(defaultpreemption, victims_being_deleted_are_not_evicted_again)
{
    struct env e;
    env_open(&e, "terminating-victim", NULL, NULL);
    expect_nominated(&e, "p", "*", "node1");
    cr_expect(eq(str, (char *)evicted(&e), "p2@node1"));
    env_close(&e);
}

Test(defaultpreemption, evictor_failure_is_an_error)
{
    struct env e;
    env_open(&e, "preempt-basic", NULL, NULL);
    e.evict_rc = -EIO;
    expect_failure(&e, "p", "*", KS_ERROR, "preemption: preempting pod default/p1.1: Input/output error");
    env_close(&e);
}

Test(defaultpreemption, without_a_framework_post_filter_is_an_error)
{
    void *self = NULL;
    struct ks_error err = {0};
    struct ks_plugin_init in = {.framework = NULL};
    cr_assert_eq(dp->init(&in, &self, &err), 0);
    struct ks_pod pod = {.meta = {.name = "p"}};
    struct ks_diagnosis d = {.pre_filter_msg = KS_ID_EMPTY, .post_filter_msg = KS_ID_EMPTY};
    struct ks_post_filter_result res;
    struct ks_status st = {0};
    struct ks_cycle_state cs;
    ks_cycle_state_init(&cs);
    cr_expect(eq(int, dp->post_filter(self, &cs, &pod, &d, &res, &st), KS_ERROR));
    cr_expect(eq(u32, res.nominated_node, KS_ID_EMPTY));
    dp->destroy(self);
}

/* ---- args -------------------------------------------------------------------------------------------- */

static int parse_args(const char *yaml, struct ks_defaultpreemption_args **out, struct ks_error *err)
{
    struct ks_yaml_stream *s = NULL;
    cr_assert_eq(ks_yaml_parse("args.yaml", yaml, strlen(yaml), &s, err), 0);
    int rc = dp->args_parse(s->ndocs ? s->docs[0] : NULL, "kubescheduler.config.k8s.io/v1", "args.yaml",
                            (void **)out, err);
    ks_yaml_stream_destroy(s);
    return rc;
}

Test(defaultpreemption, args_defaults_and_values)
{
    struct ks_defaultpreemption_args *a = NULL;
    struct ks_error err = {0};
    cr_assert_eq(dp->args_parse(NULL, "kubescheduler.config.k8s.io/v1", "args.yaml", (void **)&a, &err), 0);
    cr_expect(eq(i32, a->min_candidate_nodes_percentage, 10));
    cr_expect(eq(i32, a->min_candidate_nodes_absolute, 100));
    dp->args_destroy(a);
    cr_assert_eq(parse_args("minCandidateNodesPercentage: 0\nminCandidateNodesAbsolute: 5\n", &a, &err), 0,
                 "%s", err.msg);
    cr_expect(eq(i32, a->min_candidate_nodes_percentage, 0));
    cr_expect(eq(i32, a->min_candidate_nodes_absolute, 5));
    dp->args_destroy(a);
    cr_assert_eq(parse_args("minCandidateNodesPercentage: 100\nminCandidateNodesAbsolute: 0\n", &a, &err), 0);
    dp->args_destroy(a);
}

/* ValidateDefaultPreemptionArgs (validation_pluginargs_test.go) */
Test(defaultpreemption, args_validation)
{
    static const struct {
        const char *yaml, *field, *msg;
    } cases[] = {
        {"minCandidateNodesPercentage: -1\n", "minCandidateNodesPercentage",
         "Invalid value: -1: not in valid range [0, 100]"},
        {"minCandidateNodesPercentage: 900\n", "minCandidateNodesPercentage",
         "Invalid value: 900: not in valid range [0, 100]"},
        {"minCandidateNodesAbsolute: -1\n", "minCandidateNodesAbsolute",
         "Invalid value: -1: not in valid range [0, inf)"},
        {"minCandidateNodesPercentage: 0\nminCandidateNodesAbsolute: 0\n", "minCandidateNodesPercentage",
         "Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute"},
        {"minCandidateNodes: 3\n", "minCandidateNodes", "unknown field"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ks_defaultpreemption_args *a = NULL;
        struct ks_error err = {0};
        cr_expect(eq(int, parse_args(cases[i].yaml, &a, &err), -EINVAL), "%s", cases[i].yaml);
        cr_expect(strstr(err.field, cases[i].field) != NULL, "field %s, want %s", err.field, cases[i].field);
        cr_expect(strstr(err.msg, cases[i].msg) != NULL, "message \"%s\", want \"%s\"", err.msg,
                  cases[i].msg);
        cr_expect_null(a);
    }
}

/*
 * The args reach the dry run. node1's victim has the lowest priority, so it wins whenever
 * it is a candidate: with the defaults every node is tried; with {0%, 1} the dry run stops
 * at the first candidate after the seed's offset, which is not always node1.
 */
static uint32_t chosen_nodes(const struct ks_defaultpreemption_args *args)
{
    uint32_t seen = 0;
    for (uint64_t seed = 0; seed < 16; seed++) {
        struct env e;
        struct ks_post_filter_result res;
        struct ks_status st;
        env_open(&e, "five-one-best", NULL, args);
        cr_assert_eq(post_filter(&e, "p", "*", seed, &res, &st), KS_SUCCESS, "%s", reason(&st));
        seen |= 1u << (ks_intern_str(res.nominated_node)[4] - '0');
        env_close(&e);
    }
    return seen;
}

Test(defaultpreemption, args_set_the_number_of_candidates)
{
    struct ks_defaultpreemption_args one = {.min_candidate_nodes_percentage = 0,
                                            .min_candidate_nodes_absolute = 1};
    cr_expect(eq(u32, chosen_nodes(NULL), 1u << 1), "defaults: always node1");
    uint32_t seen = chosen_nodes(&one);
    cr_expect(__builtin_popcount(seen) > 1, "one candidate: the offset decides (nodes chosen: mask %x)",
              seen);
}
