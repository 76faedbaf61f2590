/*
 * test_framework_batch.c - the batched Filter and Score passes (ks__fw_plan_filter_nodes,
 * ks__fw_plan_score_nodes and the plugins' filter_nodes / score_nodes ops) give exactly the
 * statuses of ks__fw_plan_run_filter and the score rows and totals of ks_fw_score_node +
 * ks_fw_normalize_scores, with the default profile's real plugins over a generated
 * cluster that makes every plugin of a basic profile pass and fail: taints of the three
 * effects, cordoned nodes, full nodes, images, labels, host ports, and pods that tolerate,
 * select, prefer and request in many ways.
 */
#include <criterion/criterion.h>

#include "../../engine/framework_plan.h"
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/framework.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/config.h"
#include "ksched/loader.h"
#include "ksched/plugin_batch.h"
#include "ksched/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NODES = 300, BOUND = 600, PENDING = 120, BLOCK = 128 };

/* A small deterministic generator, so a failure reproduces. */
static uint32_t next(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

static void write_node(FILE *f, uint64_t *rng, uint32_t i)
{
    static const char *const cpu[] = {"2", "4", "8", "16"}, *const mem[] = {"4Gi", "8Gi", "16Gi", "64Gi"};
    static const char *const taint[] = {
        "  - {key: dedicated, value: gpu, effect: NoSchedule}\n",
        "  - {key: spot, value: \"true\", effect: PreferNoSchedule}\n",
        "  - {key: maint, effect: NoExecute}\n",
        "  - {key: spot, value: \"true\", effect: PreferNoSchedule}\n  - {key: zone-b, effect: "
        "PreferNoSchedule}\n",
    };
    uint32_t r = next(rng) % 10;
    fprintf(f,
            "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: node-%u\n  labels: {kubernetes.io/hostname: "
            "node-%u, topology.kubernetes.io/zone: zone-%u, disk: %s}\nspec:\n  unschedulable: %s\n",
            i, i, i % 3, next(rng) % 2 ? "ssd" : "hdd", next(rng) % 20 == 0 ? "true" : "false");
    if (r < 4)
        fprintf(f, "  taints:\n%s", taint[r]);
    fprintf(f, "status:\n  allocatable: {cpu: \"%s\", memory: %s, pods: \"%u\", ephemeral-storage: 10Gi}\n",
            cpu[next(rng) % 4], mem[next(rng) % 4], 3 + next(rng) % 20);
    if (next(rng) % 4 == 0)
        fprintf(f,
                "  images:\n  - names: [nginx:1.25]\n    sizeBytes: %u000000\n  - names: [redis:7]\n"
                "    sizeBytes: 900000000\n",
                50 + next(rng) % 900);
}

static void write_pod(FILE *f, uint64_t *rng, const char *name, int node)
{
    static const char *const cpu[] = {"100m", "500m", "1", "2", "3500m", "0"};
    static const char *const mem[] = {"64Mi", "512Mi", "2Gi", "6Gi", "0"};
    static const char *const image[] = {"nginx:1.25", "redis:7", "busybox", "app:v1"};
    fprintf(f, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default}\nspec:\n", name);
    if (node >= 0)
        fprintf(f, "  nodeName: node-%d\n", node);
    switch (next(rng) % 8) {
    case 0:
        fprintf(f, "  tolerations:\n  - {key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}\n");
        break;
    case 1:
        fprintf(f, "  tolerations:\n  - {key: spot, operator: Exists}\n");
        break;
    case 2:
        fprintf(f, "  tolerations:\n  - {key: node.kubernetes.io/unschedulable, operator: Exists}\n"
                   "  - {operator: Exists, effect: NoExecute}\n");
        break;
    default:
        break;
    }
    if (node < 0 && next(rng) % 6 == 0)
        fprintf(f, "  nodeSelector: {disk: ssd}\n");
    if (node < 0 && next(rng) % 6 == 0)
        fprintf(f, "  affinity:\n    nodeAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n"
                   "      - weight: 7\n        preference:\n          matchExpressions:\n"
                   "          - {key: topology.kubernetes.io/zone, operator: In, values: [zone-1]}\n");
    fprintf(
        f,
        "  containers:\n  - name: c\n    image: %s\n    resources: {requests: {cpu: \"%s\", memory: %s}}\n",
        image[next(rng) % 4], cpu[next(rng) % 6], mem[next(rng) % 5]);
    if (next(rng) % 7 == 0)
        fprintf(f, "    ports:\n    - {containerPort: 80, hostPort: 8080}\n");
    if (node < 0 && next(rng) % 5 == 0)
        fprintf(f, "  - name: d\n    image: %s\n", image[next(rng) % 4]);
}

struct world {
    struct ks_objects *objs;
    struct ks_config *cfg;
    struct ks_cache *cache;
    struct ks_framework *fw;
    char *path;
};

static void world_open(struct world *w, uint64_t seed)
{
    uint64_t rng = seed;
    struct ks_error err = {0};

    w->path = strdup("/tmp/ksched-batch-XXXXXX");
    int fd = mkstemp(w->path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    for (uint32_t i = 0; i < NODES; i++)
        write_node(f, &rng, i);
    for (uint32_t i = 0; i < BOUND; i++) {
        char name[32];
        snprintf(name, sizeof(name), "bound-%u", i);
        write_pod(f, &rng, name, (int)(next(&rng) % NODES));
    }
    for (uint32_t i = 0; i < PENDING; i++) {
        char name[32];
        snprintf(name, sizeof(name), "pending-%u", i);
        write_pod(f, &rng, name, -1);
    }
    fclose(f);
    const char *p = w->path;
    cr_assert_eq(ks_objects_load(&p, 1, &w->objs, &err), 0, "%s", err.msg);
    cr_assert_eq(ks_config_load_default(&w->cfg), 0);
    cr_assert_eq(ks_cache_create(&w->cache), 0);
    for (uint32_t i = 0; i < ks_objects_count(w->objs, NODE); i++)
        cr_assert_eq(ks_cache_add_node(w->cache, ks_objects_nodes(w->objs)[i]), 0);
    w->objs->of[KS_KIND_NODE].n = 0; /* the cache owns them now */
    for (uint32_t i = 0; i < ks_objects_count(w->objs, POD); i++) {
        struct ks_pod *pod = ks_objects_pods(w->objs)[i];
        if (pod->node_name != KS_ID_EMPTY)
            cr_assert_eq(ks_cache_add_pod(w->cache, ks_pod_get(pod), pod->node_name), 0);
    }
    cr_assert_geq(ks_cache_refresh(w->cache), 0);
    struct ks_framework_deps deps = {.cache = w->cache, .objects = w->objs};
    cr_assert_eq(ks_framework_create(&w->cfg->profiles[0], &deps, &w->fw, &err), 0, "%s", err.msg);
}

static void world_close(struct world *w)
{
    ks_framework_destroy(w->fw);
    ks_cache_destroy(w->cache);
    ks_objects_destroy(w->objs);
    ks_config_destroy(w->cfg);
    unlink(w->path);
    free(w->path);
}

static void assert_same_status(const struct ks_status *a, const struct ks_status *b, const char *node)
{
    cr_assert_eq(a->code, b->code, "%s: code batched %d, per node %d", node, a->code, b->code);
    cr_assert_eq(a->plugin, b->plugin, "%s: plugin batched %u, per node %u", node, a->plugin, b->plugin);
    cr_assert_eq(a->nreasons, b->nreasons, "%s: reasons batched %u, per node %u", node, a->nreasons,
                 b->nreasons);
    for (uint16_t i = 0; i < a->nreasons; i++)
        cr_assert_str_eq(ks_intern_str(a->reasons[i]), ks_intern_str(b->reasons[i]), "%s", node);
}

struct tally {
    uint32_t passed, failed, scored;
    uint64_t nonzero_cells; /* score cells that are not 0: the scores exercise more than one value */
};

/* One pod's cycle: PreFilter, both Filter passes over every node, PreScore, both Score passes. */
static void check_pod(struct world *w, const struct ks_snapshot *snap, const struct ks_pod *pod,
                      struct tally *t)
{
    struct ks_cycle_state cs;
    struct ks_pre_filter_result pre = {.all = true};
    struct ks_status st = {0};
    struct ks_fw_plan plan;
    uint32_t n = snap->nnodes, nscore = ks_framework_nscore(w->fw), nfeasible = 0;
    const struct ks_node_snap **nodes = calloc(n, sizeof(*nodes)), **feasible = calloc(n, sizeof(*feasible));
    struct ks_status *batched = calloc(n, sizeof(*batched));
    uint8_t *ok = calloc(n, 1);

    ks_cycle_state_init(&cs);
    if (ks_fw_run_pre_filter(w->fw, &cs, pod, &pre, &st) != KS_SUCCESS)
        goto out;
    ks__fw_plan_filter(w->fw, &cs, &plan);
    for (uint32_t i = 0; i < n; i++)
        nodes[i] = ks_snapshot_node(snap, i);
    for (uint32_t b = 0; b < n; b += BLOCK) {
        uint32_t len = n - b < BLOCK ? n - b : BLOCK;
        memset(ok + b, 1, len);
        uint32_t passed = ks__fw_plan_filter_nodes(&plan, &cs, pod, nodes + b, len, ok + b, batched + b);
        uint32_t want = 0;
        for (uint32_t i = b; i < b + len; i++) {
            struct ks_status one = {0};
            const char *name = ks_intern_str(nodes[i]->name);
            int rc = ks__fw_plan_run_filter(&plan, &cs, pod, nodes[i], &one);
            cr_assert_eq(ok[i], rc == KS_SUCCESS, "%s on %s: batched ok %u, per node %d", pod->meta.name,
                         name, ok[i], rc);
            if (rc == KS_SUCCESS) {
                want++;
                feasible[nfeasible++] = nodes[i];
                continue;
            }
            assert_same_status(&batched[i], &one, name);
            t->failed++;
        }
        cr_assert_eq(passed, want);
        t->passed += want;
    }
    if (nfeasible < 2 || ks_fw_run_pre_score(w->fw, &cs, pod, feasible, nfeasible, &st) != KS_SUCCESS)
        goto out;
    ks__fw_plan_score(w->fw, &cs, &plan);
    int64_t *cols = calloc((size_t)nfeasible * nscore, sizeof(*cols));
    int64_t *rows = calloc((size_t)nfeasible * nscore, sizeof(*rows));
    int64_t *one_rows = calloc((size_t)nfeasible * nscore, sizeof(*one_rows));
    int64_t *totals = calloc(nfeasible, sizeof(*totals)),
            *one_totals = calloc(nfeasible, sizeof(*one_totals));
    bool oor = false, redo = false;
    for (uint32_t b = 0; b < nfeasible; b += BLOCK) {
        uint32_t len = nfeasible - b < BLOCK ? nfeasible - b : BLOCK;
        cr_assert_eq(ks__fw_plan_score_nodes(&plan, &cs, pod, feasible + b, len, cols + b, nfeasible,
                                             totals + b, &oor),
                     KS_SUCCESS);
    }
    cr_assert(!oor);
    cr_assert_eq(ks__fw_plan_normalize(w->fw, &plan, &cs, pod, feasible, nfeasible, cols, totals, &redo, &st),
                 KS_SUCCESS);
    cr_assert(!redo);
    ks__fw_plan_rows(&plan, nscore, cols, nfeasible, rows);
    /* the unplanned reference: every plugin per node, then ks_fw_normalize_scores */
    for (uint32_t i = 0; i < nfeasible; i++)
        cr_assert_eq(ks_fw_score_node(w->fw, &cs, pod, feasible[i], one_rows + (size_t)i * nscore, &st),
                     KS_SUCCESS);
    cr_assert_eq(ks_fw_normalize_scores(w->fw, &cs, pod, feasible, nfeasible, one_rows, one_totals, &st),
                 KS_SUCCESS);
    for (uint32_t i = 0; i < nfeasible; i++) {
        cr_assert_eq(totals[i], one_totals[i], "%s on %s: total batched %lld, per node %lld", pod->meta.name,
                     ks_intern_str(feasible[i]->name), (long long)totals[i], (long long)one_totals[i]);
        for (uint32_t k = 0; k < nscore; k++) {
            int64_t a = rows[(size_t)i * nscore + k], c = one_rows[(size_t)i * nscore + k];
            cr_assert_eq(a, c, "%s on %s, score column %u: batched %lld, per node %lld", pod->meta.name,
                         ks_intern_str(feasible[i]->name), k, (long long)a, (long long)c);
            t->nonzero_cells += a != 0;
        }
    }
    free(cols);
    t->scored += nfeasible;
    free(rows);
    free(one_rows);
    free(totals);
    free(one_totals);
out:
    ks_cycle_state_destroy(&cs);
    free(nodes);
    free(feasible);
    free(batched);
    free(ok);
}

Test(framework_batch, batched_passes_equal_per_node_calls_with_the_default_plugins)
{
    cr_assert_eq(ks_api_init(), 0);
    ks_rcu_register_thread();
    for (uint64_t seed = 1; seed <= 3; seed++) {
        struct world w;
        struct tally t = {0};
        world_open(&w, seed);
        ks_rcu_read_lock();
        const struct ks_snapshot *snap = ks_cache_snapshot(w.cache);
        cr_assert_eq(snap->nnodes, NODES);
        for (uint32_t i = 0; i < ks_objects_count(w.objs, POD); i++) {
            const struct ks_pod *pod = ks_objects_pods(w.objs)[i];
            if (pod->node_name == KS_ID_EMPTY)
                check_pod(&w, snap, pod, &t);
        }
        ks_rcu_read_unlock();
        /* the cluster exercised both outcomes of Filter and real scores */
        cr_assert_gt(t.passed, 1000u, "seed %llu: %u passed", (unsigned long long)seed, t.passed);
        cr_assert_gt(t.failed, 1000u, "seed %llu: %u failed", (unsigned long long)seed, t.failed);
        cr_assert_gt(t.nonzero_cells, 1000u);
        world_close(&w);
    }
}

/* ---- a plugin whose batched Filter returns a code that is not a rejection ---- */

static int odd_filter_node(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                           const struct ks_node_snap *node, struct ks_status *st)
{
    (void)self;
    (void)cs;
    (void)pod;
    if (node->npods % 3 == 1) {
        st->reasons[st->nreasons++] = ks_intern("one too many");
        return KS_UNSCHEDULABLE;
    }
    if (node->npods % 3 == 2) {
        st->reasons[st->nreasons++] = ks_intern("broken");
        return KS_SKIP; /* not a Filter code: wrapped into an Error */
    }
    return KS_SUCCESS;
}

KS_FILTER_OPS(odd_filter, odd_filter_nodes, odd_filter_node)

static const struct ks_plugin odd_plugin = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "BatchOdd",
    .filter = odd_filter,
    .filter_nodes = odd_filter_nodes,
};

Test(framework_batch, statuses_of_a_filter_nodes_op_are_stamped_and_wrapped_as_per_node)
{
    struct ks_config *cfg = NULL;
    struct ks_framework *fw = NULL;
    struct ks_error err = {0};
    static const char yaml[] = "apiVersion: kubescheduler.config.k8s.io/v1beta2\n"
                               "kind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: s\n"
                               "  plugins:\n    filter:\n      disabled: [{name: '*'}]\n"
                               "      enabled: [{name: NodeName}, {name: BatchOdd}]\n";
    struct ks_node_snap recs[9];
    const struct ks_node_snap *nodes[9];
    struct ks_status batched[9], one;
    uint8_t ok[9];
    struct ks_cycle_state cs;
    struct ks_pod pod = {.meta.name = "p", .node_name = KS_ID_EMPTY};
    struct ks_fw_plan plan;

    cr_assert_eq(ks_api_init(), 0);
    if (!ks_registry_find("BatchOdd"))
        cr_assert_eq(ks_registry_add(&odd_plugin, &err), 0, "%s", err.msg);
    cr_assert_eq(ks_config_load_yaml("batch.yaml", yaml, sizeof(yaml) - 1, &cfg, &err), 0, "%s", err.msg);
    cr_assert_eq(ks_framework_create(&cfg->profiles[0], NULL, &fw, &err), 0, "%s", err.msg);
    ks_cycle_state_init(&cs);
    for (uint32_t i = 0; i < 9; i++) {
        char name[8];
        snprintf(name, sizeof(name), "n%u", i);
        recs[i] = (struct ks_node_snap){.name = ks_intern(name), .npods = i, .flags = KS_SNAP_HAS_NODE};
        nodes[i] = &recs[i];
        ok[i] = 1;
    }
    ks__fw_plan_filter(fw, &cs, &plan);
    cr_assert_eq(ks__fw_plan_filter_nodes(&plan, &cs, &pod, nodes, 9, ok, batched), 3u);
    for (uint32_t i = 0; i < 9; i++) {
        int rc = ks__fw_plan_run_filter(&plan, &cs, &pod, nodes[i], &one);
        cr_assert_eq(ok[i], rc == KS_SUCCESS);
        if (rc != KS_SUCCESS)
            assert_same_status(&batched[i], &one, ks_intern_str(nodes[i]->name));
    }
    cr_assert_eq(batched[2].code, KS_ERROR);
    cr_assert_str_eq(ks_intern_str(batched[2].reasons[0]), "running \"BatchOdd\" filter plugin: broken");
    cr_assert_eq(batched[1].code, KS_UNSCHEDULABLE);
    ks_cycle_state_destroy(&cs);
    ks_framework_destroy(fw);
    ks_config_destroy(cfg);
}
