/*
 * test_node_resources_fit.c - the NodeResourcesFit plugin (plugins/node_resources_fit.c).
 *
 * Filter cases from upstream's noderesources/fit_test.go (TestEnoughRequests,
 * TestNotEnoughRequests, TestStorageRequests, TestRestartableInitContainers with sidecars
 * enabled, TestPreFilterDisabled, TestFitScore) as of the release that reports requests
 * larger than the node's allocatable as UnschedulableAndUnresolvable; the pod-level
 * resources and DRA extended-resource rows are left out (ksched models neither). Score
 * cases from least_allocated_test.go, most_allocated_test.go and
 * requested_to_capacity_ratio_test.go (TestRequestedToCapacityRatioScoringStrategy,
 * TestResourceBinPackingSingleExtended, TestResourceBinPackingMultipleExtended).
 *
 * Quantities are upstream's: newResourcePod's MilliCPU 10 is "cpu=10m", and the score
 * tables' "cpu": "4000" is 4000 cores, as resource.MustParse reads it.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "ksched/plugin_args.h"
#include "ksched/registry.h"
#include "plugin_fixtures.h"

TestSuite(noderesourcesfit);

static const struct ks_plugin *const fit = &ks_plugin_node_resources_fit;

/* ---- args ------------------------------------------------------------------------------------ */

/*
 * NodeResourcesFitArgs as the config decoder would return them: @resources is
 * "name:weight,..." (NULL: none), @ignored and @groups comma lists (NULL: none).
 */
static struct ks_noderesourcesfit_args *mk_args(enum ks_scoring_strategy strategy, const char *resources,
                                                const struct ks_shape_point *shape, uint32_t nshape,
                                                const char *ignored, const char *groups)
{
    struct ks_noderesourcesfit_args *a = fx_must(calloc(1, sizeof(*a)));
    char buf[256], *save, *tok;

    a->strategy = strategy;
    a->resources = fx_must(ks_arena_calloc(&a->arena, 8, sizeof(*a->resources)));
    if (resources) {
        snprintf(buf, sizeof(buf), "%s", resources);
        for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            char *colon = strrchr(tok, ':');
            cr_assert(colon && a->nresources < 8);
            *colon = '\0';
            a->resources[a->nresources++] = (struct ks_resource_spec){ks_intern(tok), atoll(colon + 1)};
        }
    }
    if (shape) {
        a->has_requested_to_capacity_ratio = true;
        a->shape = fx_must(ks_arena_calloc(&a->arena, nshape, sizeof(*a->shape)));
        memcpy(a->shape, shape, nshape * sizeof(*shape));
        a->nshape = nshape;
    }
    a->ignored_resources = fx_must(ks_arena_calloc(&a->arena, 8, sizeof(uint32_t)));
    if (ignored) {
        snprintf(buf, sizeof(buf), "%s", ignored);
        for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
            a->ignored_resources[a->nignored_resources++] = ks_intern(tok);
    }
    a->ignored_resource_groups = fx_must(ks_arena_calloc(&a->arena, 8, sizeof(char *)));
    if (groups) {
        snprintf(buf, sizeof(buf), "%s", groups);
        for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
            a->ignored_resource_groups[a->nignored_resource_groups++] =
                fx_must(ks_arena_strdup(&a->arena, tok));
    }
    return a;
}

static void free_args(struct ks_noderesourcesfit_args *a)
{
    ks_arena_destroy(&a->arena);
    free(a);
}

/* ---- Filter ------------------------------------------------------------------------------------ */

#define MAX_REASONS KS_STATUS_MAX_REASONS

struct filter_case {
    const char *name;
    const char *c[2];    /* the pod's containers (NULL: none) */
    const char *init[2]; /* its init containers */
    const char *overhead;
    const char *existing; /* the one pod already on the node: its container ("" : no requests) */
    const char *ignored, *groups;
    int want; /* code */
    const char *reasons[MAX_REASONS];
};

/* Node of TestEnoughRequests and TestStorageRequests: makeAllocatableResources(10, 20, 32, 5, 20, 5). */
#define ENOUGH_NODE "cpu=10m,memory=20,pods=32,example.com/aaa=5,ephemeral-storage=20,hugepages-2Mi=5"

static void run_filter(const struct filter_case *c, const char *alloc, const char *sidecar)
{
    struct ks_noderesourcesfit_args *args =
        mk_args(KS_SCORING_LEAST_ALLOCATED, "cpu:1,memory:1", NULL, 0, c->ignored, c->groups);
    void *self = fx_init(fit, args);
    struct ks_pod *pod = ks_fake_pod("default", "pod");
    for (int i = 0; i < 2 && c->c[i]; i++)
        ks_fake_container(pod, *c->c[i] ? c->c[i] : NULL);
    for (int i = 0; i < 2 && c->init[i]; i++)
        ks_fake_init_container(pod, *c->init[i] ? c->init[i] : NULL, false);
    if (sidecar)
        ks_fake_init_container(pod, *sidecar ? sidecar : NULL, true);
    if (c->overhead)
        ks_fake_pod_overhead(pod, c->overhead);
    fx_done(pod);
    struct ks_pod *other = NULL;
    if (c->existing)
        other = fx_done(FX_POD(c->existing));
    struct ks_node *node = fx_node("node", alloc);
    struct ks_node_snap *snap = fx_snap(node, &other, other ? 1 : 0);
    struct ks_cycle_state cs;
    struct ks_pre_filter_result res = {.all = true};
    struct ks_status st = {0};
    fx_cs_init(&cs);

    cr_assert(eq(int, fit->pre_filter(self, &cs, pod, &res, &st), KS_SUCCESS), "%s", c->name);
    cr_expect(res.all, "%s: PreFilter narrowed the nodes", c->name);
    int code = fit->filter(self, &cs, pod, snap, &st);
    cr_expect(eq(int, code, c->want), "%s", c->name);
    uint32_t nwant = 0;
    while (nwant < MAX_REASONS && c->reasons[nwant])
        nwant++;
    if (code != KS_SUCCESS) {
        cr_expect(eq(int, st.code, c->want), "%s", c->name);
        cr_expect(eq(u32, st.nreasons, nwant), "%s", c->name);
        for (uint32_t i = 0; i < nwant; i++)
            cr_expect(eq(str, (char *)fx_reason(&st, i), (char *)c->reasons[i]), "%s: reason %u", c->name, i);
    }

    fx_cs_free(&cs);
    fx_snap_free(snap);
    ks_node_destroy(node);
    ks_pod_destroy(other);
    ks_pod_destroy(pod);
    fit->destroy(self);
    free_args(args);
}

#define U   KS_UNSCHEDULABLE
#define UU  KS_UNSCHEDULABLE_AND_UNRESOLVABLE
#define CPU "Insufficient cpu"
#define MEM "Insufficient memory"
#define AAA "Insufficient example.com/aaa"
#define HP  "Insufficient hugepages-2Mi"

Test(noderesourcesfit, upstream_enough_requests)
{
    static const struct filter_case cases[] = {
        {"no resources requested always fits",
         {NULL},
         {NULL},
         NULL,
         "cpu=10m,memory=20",
         NULL,
         NULL,
         KS_SUCCESS,
         {NULL}},
        {"too many resources fails",
         {"cpu=1m,memory=1"},
         {NULL},
         NULL,
         "cpu=10m,memory=20",
         NULL,
         NULL,
         U,
         {CPU, MEM}},
        {"too many resources fails due to init container cpu",
         {"cpu=1m,memory=1"},
         {"cpu=3m,memory=1"},
         NULL,
         "cpu=8m,memory=19",
         NULL,
         NULL,
         U,
         {CPU}},
        {"too many resources fails due to highest init container cpu",
         {"cpu=1m,memory=1"},
         {"cpu=3m,memory=1", "cpu=2m,memory=1"},
         NULL,
         "cpu=8m,memory=19",
         NULL,
         NULL,
         U,
         {CPU}},
        {"too many resources fails due to init container memory",
         {"cpu=1m,memory=1"},
         {"cpu=1m,memory=3"},
         NULL,
         "cpu=9m,memory=19",
         NULL,
         NULL,
         U,
         {MEM}},
        {"too many resources fails due to highest init container memory",
         {"cpu=1m,memory=1"},
         {"cpu=1m,memory=3", "cpu=1m,memory=2"},
         NULL,
         "cpu=9m,memory=19",
         NULL,
         NULL,
         U,
         {MEM}},
        {"init container fits because it's the max, not sum, of containers and init containers",
         {"cpu=1m,memory=1"},
         {"cpu=1m,memory=1"},
         NULL,
         "cpu=9m,memory=19",
         NULL,
         NULL,
         KS_SUCCESS,
         {NULL}},
        {"multiple init containers fit because it's the max, not sum, of containers and init containers",
         {"cpu=1m,memory=1"},
         {"cpu=1m,memory=1", "cpu=1m,memory=1"},
         NULL,
         "cpu=9m,memory=19",
         NULL,
         NULL,
         KS_SUCCESS,
         {NULL}},
        {"both resources fit",
         {"cpu=1m,memory=1"},
         {NULL},
         NULL,
         "cpu=5m,memory=5",
         NULL,
         NULL,
         KS_SUCCESS,
         {NULL}},
        {"one resource memory fits",
         {"cpu=2m,memory=1"},
         {NULL},
         NULL,
         "cpu=9m,memory=5",
         NULL,
         NULL,
         U,
         {CPU}},
        {"one resource cpu fits",
         {"cpu=1m,memory=2"},
         {NULL},
         NULL,
         "cpu=5m,memory=19",
         NULL,
         NULL,
         U,
         {MEM}},
        {"equal edge case",
         {"cpu=5m,memory=1"},
         {NULL},
         NULL,
         "cpu=5m,memory=19",
         NULL,
         NULL,
         KS_SUCCESS,
         {NULL}},
        {"equal edge case for init container",
         {"cpu=4m,memory=1"},
         {"cpu=5m,memory=1"},
         NULL,
         "cpu=5m,memory=19",
         NULL,
         NULL,
         KS_SUCCESS,
         {NULL}},
        {"extended resource fits",
         {"cpu=0,memory=0,example.com/aaa=1"},
         {NULL},
         NULL,
         "cpu=0,memory=0",
         NULL,
         NULL,
         KS_SUCCESS,
         {NULL}},
        {"extended resource fits for init container",
         {"cpu=0,memory=0"},
         {"cpu=0,memory=0,example.com/aaa=1"},
         NULL,
         "cpu=0,memory=0",
         NULL,
         NULL,
         KS_SUCCESS,
         {NULL}},
        {"extended resource capacity enforced",
         {"cpu=1m,memory=1,example.com/aaa=10"},
         {NULL},
         NULL,
         "cpu=0,memory=0,example.com/aaa=0",
         NULL,
         NULL,
         UU,
         {AAA}},
        {"extended resource capacity enforced for init container",
         {"cpu=0,memory=0"},
         {"cpu=1m,memory=1,example.com/aaa=10"},
         NULL,
         "cpu=0,memory=0,example.com/aaa=0",
         NULL,
         NULL,
         UU,
         {AAA}},
        {"extended resource allocatable enforced",
         {"cpu=1m,memory=1,example.com/aaa=1"},
         {NULL},
         NULL,
         "cpu=0,memory=0,example.com/aaa=5",
         NULL,
         NULL,
         U,
         {AAA}},
        {"extended resource allocatable enforced for init container",
         {"cpu=0,memory=0"},
         {"cpu=1m,memory=1,example.com/aaa=1"},
         NULL,
         "cpu=0,memory=0,example.com/aaa=5",
         NULL,
         NULL,
         U,
         {AAA}},
        {"extended resource allocatable enforced for multiple containers",
         {"cpu=1m,memory=1,example.com/aaa=3", "cpu=1m,memory=1,example.com/aaa=3"},
         {NULL},
         NULL,
         "cpu=0,memory=0,example.com/aaa=2",
         NULL,
         NULL,
         UU,
         {AAA}},
        {"extended resource allocatable admits multiple init containers",
         {"cpu=0,memory=0"},
         {"cpu=1m,memory=1,example.com/aaa=3", "cpu=1m,memory=1,example.com/aaa=3"},
         NULL,
         "cpu=0,memory=0,example.com/aaa=2",
         NULL,
         NULL,
         KS_SUCCESS,
         {NULL}},
        {"extended resource allocatable enforced for multiple init containers",
         {"cpu=0,memory=0"},
         {"cpu=1m,memory=1,example.com/aaa=6", "cpu=1m,memory=1,example.com/aaa=3"},
         NULL,
         "cpu=0,memory=0,example.com/aaa=2",
         NULL,
         NULL,
         UU,
         {AAA}},
        {"extended resource allocatable enforced for unknown resource",
         {"cpu=1m,memory=1,example.com/bbb=1"},
         {NULL},
         NULL,
         "cpu=0,memory=0",
         NULL,
         NULL,
         UU,
         {"Insufficient example.com/bbb"}},
        {"extended resource allocatable enforced for unknown resource for init container",
         {"cpu=0,memory=0"},
         {"cpu=1m,memory=1,example.com/bbb=1"},
         NULL,
         "cpu=0,memory=0",
         NULL,
         NULL,
         UU,
         {"Insufficient example.com/bbb"}},
        {"kubernetes.io resource capacity enforced",
         {"cpu=1m,memory=1,kubernetes.io/something=10"},
         {NULL},
         NULL,
         "cpu=0,memory=0",
         NULL,
         NULL,
         UU,
         {"Insufficient kubernetes.io/something"}},
        {"kubernetes.io resource capacity enforced for init container",
         {"cpu=0,memory=0"},
         {"cpu=1m,memory=1,subdomain.kubernetes.io/something=10"},
         NULL,
         "cpu=0,memory=0",
         NULL,
         NULL,
         UU,
         {"Insufficient subdomain.kubernetes.io/something"}},
        {"hugepages resource capacity enforced",
         {"cpu=1m,memory=1,hugepages-2Mi=10"},
         {NULL},
         NULL,
         "cpu=0,memory=0,hugepages-2Mi=0",
         NULL,
         NULL,
         UU,
         {HP}},
        {"hugepages resource capacity enforced for init container",
         {"cpu=0,memory=0"},
         {"cpu=1m,memory=1,hugepages-2Mi=10"},
         NULL,
         "cpu=0,memory=0,hugepages-2Mi=0",
         NULL,
         NULL,
         UU,
         {HP}},
        {"hugepages resource allocatable enforced for multiple containers",
         {"cpu=1m,memory=1,hugepages-2Mi=3", "cpu=1m,memory=1,hugepages-2Mi=3"},
         {NULL},
         NULL,
         "cpu=0,memory=0,hugepages-2Mi=2",
         NULL,
         NULL,
         UU,
         {HP}},
        {"skip checking ignored extended resource",
         {"cpu=1m,memory=1,example.com/bbb=1"},
         {NULL},
         NULL,
         "cpu=0,memory=0",
         "example.com/bbb",
         NULL,
         KS_SUCCESS,
         {NULL}},
        {"resources + pod overhead fits",
         {"cpu=1m,memory=1"},
         {NULL},
         "cpu=3m,memory=13",
         "cpu=5m,memory=5",
         NULL,
         NULL,
         KS_SUCCESS,
         {NULL}},
        {"requests + overhead does not fit for memory",
         {"cpu=1m,memory=1"},
         {NULL},
         "cpu=1m,memory=15",
         "cpu=5m,memory=5",
         NULL,
         NULL,
         U,
         {MEM}},
        {"skip checking ignored extended resource via resource groups",
         {"cpu=1m,memory=1,example.com/bbb=1,kubernetes.io/something=1"},
         {NULL},
         NULL,
         "cpu=0,memory=0",
         NULL,
         "example.com",
         UU,
         {"Insufficient kubernetes.io/something"}},
        {"skip checking extended resource request with quantity zero via resource groups",
         {"cpu=1m,memory=1,example.com/aaa=0"},
         {NULL},
         NULL,
         "cpu=0,memory=0,example.com/aaa=6",
         NULL,
         NULL,
         KS_SUCCESS,
         {NULL}},
        {"skip checking resource request with quantity zero",
         {"cpu=0,memory=0,example.com/aaa=1"},
         {NULL},
         NULL,
         "cpu=20m,memory=30,example.com/aaa=1",
         NULL,
         NULL,
         KS_SUCCESS,
         {NULL}},
        {"extended resource backed by DRA not enabled",
         {"cpu=1m,memory=1,extended.resource.dra.io/something=1"},
         {NULL},
         NULL,
         "cpu=0,memory=0",
         NULL,
         NULL,
         UU,
         {"Insufficient extended.resource.dra.io/something"}},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run_filter(&cases[i], ENOUGH_NODE, NULL);
}

Test(noderesourcesfit, ignored_names_apply_to_extended_resources_only)
{
    static const struct filter_case cases[] = {
        {"an ignored group does not cover hugepages or kubernetes.io names",
         {"hugepages-2Mi=10,kubernetes.io/something=1"},
         {NULL},
         NULL,
         NULL,
         "hugepages-2Mi",
         "kubernetes.io",
         UU,
         {HP, "Insufficient kubernetes.io/something"}},
        {"a group matches the whole domain, not a prefix of it",
         {"example.com/bbb=1,example.co/x=1"},
         {NULL},
         NULL,
         NULL,
         NULL,
         "example.co",
         UU,
         {"Insufficient example.com/bbb"}},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run_filter(&cases[i], ENOUGH_NODE, NULL);
}

Test(noderesourcesfit, reasons_in_upstream_order)
{
    static const struct filter_case c = {
        "pods, cpu, memory and ephemeral-storage all short",
        {"cpu=20m,memory=1,ephemeral-storage=1"},
        {NULL},
        NULL,
        "cpu=1m,memory=20,ephemeral-storage=20",
        NULL,
        NULL,
        UU,
        {"Too many pods", CPU, MEM, "Insufficient ephemeral-storage"},
    };
    run_filter(&c, "cpu=10m,memory=20,pods=1,ephemeral-storage=20", NULL);
}

Test(noderesourcesfit, upstream_not_enough_requests)
{
    static const struct filter_case cases[] = {
        {"even without specified resources, predicate fails when there's no space for additional pod",
         {NULL},
         {NULL},
         NULL,
         "cpu=10m,memory=20",
         NULL,
         NULL,
         U,
         {"Too many pods"}},
        {"even if both resources fit, predicate fails when there's no space for additional pod",
         {"cpu=1m,memory=1"},
         {NULL},
         NULL,
         "cpu=5m,memory=5",
         NULL,
         NULL,
         U,
         {"Too many pods"}},
        {"even for equal edge case, predicate fails when there's no space for additional pod",
         {"cpu=5m,memory=1"},
         {NULL},
         NULL,
         "cpu=5m,memory=19",
         NULL,
         NULL,
         U,
         {"Too many pods"}},
        {"even for equal edge case, predicate fails when there's no space for additional pod due to init "
         "container",
         {"cpu=5m,memory=1"},
         {"cpu=5m,memory=1"},
         NULL,
         "cpu=5m,memory=19",
         NULL,
         NULL,
         U,
         {"Too many pods"}},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run_filter(&cases[i],
                   "cpu=10m,memory=20,pods=1,example.com/aaa=0,ephemeral-storage=0,hugepages-2Mi=0", NULL);
}

Test(noderesourcesfit, upstream_storage_requests)
{
    static const struct filter_case cases[] = {
        {"empty storage requested, and pod fits",
         {"cpu=1m,memory=1"},
         {NULL},
         NULL,
         "cpu=2m,memory=10",
         NULL,
         NULL,
         KS_SUCCESS,
         {NULL}},
        {"storage ephemeral local storage request exceeds allocatable",
         {"ephemeral-storage=25"},
         {NULL},
         NULL,
         "cpu=2m,memory=2",
         NULL,
         NULL,
         UU,
         {"Insufficient ephemeral-storage"}},
        {"ephemeral local storage is sufficient",
         {"ephemeral-storage=5"},
         {NULL},
         NULL,
         "cpu=2m,memory=2,ephemeral-storage=10",
         NULL,
         NULL,
         KS_SUCCESS,
         {NULL}},
        {"pod fits",
         {"ephemeral-storage=10"},
         {NULL},
         NULL,
         "cpu=2m,memory=2",
         NULL,
         NULL,
         KS_SUCCESS,
         {NULL}},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run_filter(&cases[i], ENOUGH_NODE, NULL);
}

Test(noderesourcesfit, upstream_restartable_init_containers)
{
    static const struct {
        struct filter_case c;
        const char *sidecar;
    } cases[] = {
        {{"allow pod without restartable init containers if sidecar containers is enabled",
          {""},
          {NULL},
          NULL,
          NULL,
          NULL,
          NULL,
          KS_SUCCESS,
          {NULL}},
         NULL},
        {{"allow pod with restartable init containers if sidecar containers is enabled",
          {""},
          {NULL},
          NULL,
          NULL,
          NULL,
          NULL,
          KS_SUCCESS,
          {NULL}},
         ""},
        {{"allow pod if the total requested resources do not exceed the node's allocatable resources",
          {"cpu=1m"},
          {NULL},
          NULL,
          NULL,
          NULL,
          NULL,
          KS_SUCCESS,
          {NULL}},
         "cpu=1m"},
        {{"not allow pod if the total requested resources do exceed the node's allocatable resources",
          {"cpu=1m"},
          {NULL},
          NULL,
          NULL,
          NULL,
          NULL,
          UU,
          {CPU}},
         "cpu=2m"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run_filter(&cases[i].c,
                   "cpu=2m,memory=0,pods=1,example.com/aaa=0,ephemeral-storage=0,hugepages-2Mi=0",
                   cases[i].sidecar);
}

Test(noderesourcesfit, upstream_pre_filter_disabled)
{
    void *self = fx_init(fit, NULL);
    struct ks_pod *pod = fx_done(ks_fake_pod("default", "pod"));
    struct ks_node *node = fx_node("node", NULL);
    struct ks_node_snap *snap = fx_snap(node, NULL, 0);
    struct ks_cycle_state cs;
    struct ks_status st = {0};
    fx_cs_init(&cs);

    cr_expect(eq(int, fit->filter(self, &cs, pod, snap, &st), KS_ERROR));
    cr_expect(eq(int, st.code, KS_ERROR));
    cr_expect(eq(str, (char *)fx_reason(&st, 0),
                 "error reading \"PreFilterNodeResourcesFit\" from cycleState: not found"));

    fx_cs_free(&cs);
    fx_snap_free(snap);
    ks_node_destroy(node);
    ks_pod_destroy(pod);
    fit->destroy(self);
}

Test(noderesourcesfit, status_keeps_every_reason)
{
    static const struct filter_case c = {
        "six shortages: every reason is kept",
        {"cpu=1m,memory=1,ephemeral-storage=1,example.com/aaa=1,example.com/bbb=1"},
        {NULL},
        NULL,
        NULL,
        NULL,
        NULL,
        UU,
        {"Too many pods", CPU, MEM, "Insufficient ephemeral-storage", "Insufficient example.com/aaa",
         "Insufficient example.com/bbb"},
    };
    run_filter(&c, "pods=0", NULL);
}

/* ---- Score -------------------------------------------------------------------------------------- */

static void run_fit_scores(enum ks_scoring_strategy strategy, const char *resources,
                           const struct ks_shape_point *shape, uint32_t nshape,
                           const struct fx_score_case *cases, size_t n, bool both)
{
    struct ks_noderesourcesfit_args *args = mk_args(strategy, resources, shape, nshape, NULL, NULL);
    for (size_t i = 0; i < n; i++) {
        fx_run_scores(fit, args, &cases[i], true);
        if (both)
            fx_run_scores(fit, args, &cases[i], false);
    }
    free_args(args);
}

#define N(x) (sizeof(x) / sizeof((x)[0]))

Test(noderesourcesfit, upstream_fit_score)
{
    static const struct ks_shape_point down[] = {{0, 10}, {100, 0}}, up[] = {{0, 0}, {100, 10}};
    static const struct fx_score_case big = {
        "test case for ScoringStrategy RequestedToCapacityRatio case1",
        {{"cpu=3000,memory=5000"}, NULL},
        {"cpu=4000,memory=10000", "cpu=6000,memory=10000"},
        2,
        {{0, {{"cpu=2000,memory=4000"}, NULL}}, {1, {{"cpu=1000,memory=2000"}, NULL}}},
        {10, 32},
        KS_SUCCESS,
    };
    struct fx_score_case c = big;
    run_fit_scores(KS_SCORING_REQUESTED_TO_CAPACITY_RATIO, "cpu:1,memory:1", down, 2, &c, 1, true);

    c.name = "test case for ScoringStrategy RequestedToCapacityRatio case2";
    c.want[0] = 95;
    c.want[1] = 68;
    run_fit_scores(KS_SCORING_REQUESTED_TO_CAPACITY_RATIO, "cpu:1,memory:1", up, 2, &c, 1, true);

    c.name = "test case for ScoringStrategy MostAllocated";
    c.pod.c[0] = "cpu=1000,memory=2000";
    c.want[0] = 67;
    c.want[1] = 36;
    run_fit_scores(KS_SCORING_MOST_ALLOCATED, "cpu:1,memory:1", NULL, 0, &c, 1, true);

    c.name = "test case for ScoringStrategy LeastAllocated";
    c.want[0] = 32;
    c.want[1] = 63;
    run_fit_scores(KS_SCORING_LEAST_ALLOCATED, "cpu:1,memory:1", NULL, 0, &c, 1, true);

    static const struct fx_score_case sidecar = {
        "test case for ScoringStrategy MostAllocated with sidecar container",
        {{"cpu=1000,memory=2000"}, NULL},
        {"cpu=4000,memory=10000", "cpu=4000,memory=10000"},
        2,
        {{0, {{"cpu=1000,memory=2000"}, "cpu=1000,memory=2000"}}, {1, {{"cpu=1000,memory=2000"}, NULL}}},
        {67, 45},
        KS_SUCCESS,
    };
    c = sidecar;
    run_fit_scores(KS_SCORING_MOST_ALLOCATED, "cpu:1,memory:1", NULL, 0, &c, 1, false);
    c.name = "test case for ScoringStrategy LeastAllocated with sidecar container";
    c.want[0] = 32;
    c.want[1] = 55;
    run_fit_scores(KS_SCORING_LEAST_ALLOCATED, "cpu:1,memory:1", NULL, 0, &c, 1, false);
}

/* Rows shared by least_allocated_test.go and most_allocated_test.go; want[] filled per strategy. */
#define ROW_NOTHING                                                                                          \
    "nothing scheduled, nothing requested", {{NULL}, NULL},                                                  \
        {"cpu=4000,memory=10000", "cpu=4000,memory=10000"}, 0,                                               \
    {                                                                                                        \
        {                                                                                                    \
            0                                                                                                \
        }                                                                                                    \
    }
#define ROW_DIFF                                                                                             \
    "nothing scheduled, resources requested, differently sized nodes",                                       \
        {{"cpu=1000,memory=2000", "cpu=2000,memory=3000"}, NULL},                                            \
        {"cpu=4000,memory=10000", "cpu=6000,memory=10000"}, 0,                                               \
    {                                                                                                        \
        {                                                                                                    \
            0                                                                                                \
        }                                                                                                    \
    }
#define ROW_NO_REQ_WITH_RES                                                                                  \
    "no resources requested, pods scheduled with resources", {{NULL}, NULL},                                 \
        {"cpu=10000,memory=20000", "cpu=10000,memory=20000"}, 4,                                             \
    {                                                                                                        \
        {0, {{"cpu=3000,memory=0"}, NULL}}, {0, {{"cpu=3000,memory=0"}, NULL}},                              \
            {1, {{"cpu=3000,memory=0"}, NULL}},                                                              \
        {                                                                                                    \
            1,                                                                                               \
            {                                                                                                \
                {"cpu=3000,memory=5000"}, NULL                                                               \
            }                                                                                                \
        }                                                                                                    \
    }
#define ROW_REQ_WITH_RES(mem2)                                                                               \
    "resources requested, pods scheduled with resources",                                                    \
        {{"cpu=1000,memory=2000", "cpu=2000,memory=3000"}, NULL},                                            \
        {"cpu=10000,memory=20000", "cpu=10000,memory=" mem2}, 2,                                             \
    {                                                                                                        \
        {0, {{"cpu=3000,memory=0"}, NULL}},                                                                  \
        {                                                                                                    \
            1,                                                                                               \
            {                                                                                                \
                {"cpu=3000,memory=5000"}, NULL                                                               \
            }                                                                                                \
        }                                                                                                    \
    }
#define ROW_EXT_BYPASS                                                                                       \
    "bypass extended resource if the pod does not request",                                                  \
        {{"cpu=1000,memory=2000", "cpu=2000,memory=3000"}, NULL},                                            \
        {"cpu=6000,memory=10000", "cpu=6000,memory=10000,abc.com/xyz=4"}, 0,                                 \
    {                                                                                                        \
        {                                                                                                    \
            0                                                                                                \
        }                                                                                                    \
    }
#define ROW_EXT_HONOR                                                                                        \
    "honor extended resource if the pod requests", {{"cpu=3000,memory=5000,abc.com/xyz=2"}, NULL},           \
        {"cpu=6000,memory=10000,abc.com/xyz=4", "cpu=6000,memory=10000,abc.com/xyz=10"}, 0,                  \
    {                                                                                                        \
        {                                                                                                    \
            0                                                                                                \
        }                                                                                                    \
    }
#define ROW_NO_RESOURCE                                                                                      \
    "if the node doesn't have a resource", {{"cpu=3000,memory=4000"}, NULL},                                 \
        {"cpu=6000,memory=10000", "cpu=6000,memory=10000,abc.com/xyz=4"}, 0,                                 \
    {                                                                                                        \
        {                                                                                                    \
            0                                                                                                \
        }                                                                                                    \
    }

Test(noderesourcesfit, upstream_least_allocated)
{
    static const struct fx_score_case defaults[] = {
        {ROW_NOTHING, {100, 100}, KS_SUCCESS},
        {ROW_DIFF, {37, 50}, KS_SUCCESS},
        {"no resources requested, pods scheduled",
         {{NULL}, NULL},
         {"cpu=4000,memory=10000", "cpu=4000,memory=10000"},
         4,
         {{0, {{NULL}, NULL}}, {0, {{NULL}, NULL}}, {1, {{NULL}, NULL}}, {1, {{NULL}, NULL}}},
         {100, 100},
         KS_SUCCESS},
        {ROW_NO_REQ_WITH_RES, {70, 57}, KS_SUCCESS},
        {ROW_REQ_WITH_RES("20000"), {57, 45}, KS_SUCCESS},
        {"resources requested, pods scheduled with resources, differently sized nodes",
         {{"cpu=1000,memory=2000", "cpu=2000,memory=3000"}, NULL},
         {"cpu=10000,memory=20000", "cpu=10000,memory=50000"},
         2,
         {{0, {{"cpu=3000,memory=0"}, NULL}}, {1, {{"cpu=3000,memory=5000"}, NULL}}},
         {57, 60},
         KS_SUCCESS},
        {"requested resources exceed node capacity",
         {{"cpu=3000,memory=0"}, NULL},
         {"cpu=4000,memory=10000", "cpu=4000,memory=10000"},
         2,
         {{0, {{"cpu=3000,memory=0"}, NULL}}, {1, {{"cpu=3000,memory=5000"}, NULL}}},
         {50, 25},
         KS_SUCCESS},
        {"zero node resources, pods scheduled with resources",
         {{NULL}, NULL},
         {"", ""},
         2,
         {{0, {{"cpu=3000,memory=0"}, NULL}}, {1, {{"cpu=3000,memory=5000"}, NULL}}},
         {0, 0},
         KS_SUCCESS},
    };
    run_fit_scores(KS_SCORING_LEAST_ALLOCATED, "cpu:1,memory:1", NULL, 0, defaults, N(defaults), true);

    static const struct fx_score_case weighted[] = {
        {"nothing scheduled, resources requested with different weight on CPU and memory, differently sized "
         "nodes",
         {{"cpu=1000,memory=2000", "cpu=2000,memory=3000"}, NULL},
         {"cpu=4000,memory=10000", "cpu=6000,memory=10000"},
         0,
         {{0}},
         {41, 50},
         KS_SUCCESS},
    };
    run_fit_scores(KS_SCORING_LEAST_ALLOCATED, "memory:2,cpu:1", NULL, 0, weighted, N(weighted), true);

    static const struct fx_score_case extended[] = {
        {ROW_EXT_BYPASS, {50, 50}, KS_SUCCESS},
        {ROW_EXT_HONOR, {50, 60}, KS_SUCCESS},
    };
    run_fit_scores(KS_SCORING_LEAST_ALLOCATED, "cpu:1,memory:1,abc.com/xyz:1", NULL, 0, extended, N(extended),
                   true);
    static const struct fx_score_case missing[] = {{ROW_NO_RESOURCE, {55, 55}, KS_SUCCESS}};
    run_fit_scores(KS_SCORING_LEAST_ALLOCATED, "abc.com/xyz:2,cpu:1,memory:1", NULL, 0, missing, N(missing),
                   true);

    static const struct fx_score_case unset[] = {
        {"Resources not set, pods scheduled with error",
         {{"cpu=1000,memory=2000", "cpu=2000,memory=3000"}, NULL},
         {"cpu=4000,memory=10000", "cpu=6000,memory=10000"},
         0,
         {{0}},
         {0, 0},
         KS_ERROR},
    };
    run_fit_scores(KS_SCORING_LEAST_ALLOCATED, NULL, NULL, 0, unset, N(unset), true);
}

Test(noderesourcesfit, upstream_most_allocated)
{
    static const struct fx_score_case defaults[] = {
        {ROW_NOTHING, {0, 0}, KS_SUCCESS},
        {ROW_DIFF, {62, 50}, KS_SUCCESS},
        {ROW_NO_REQ_WITH_RES, {30, 42}, KS_SUCCESS},
        {ROW_REQ_WITH_RES("20000"), {42, 55}, KS_SUCCESS},
        {"resources requested equal node capacity",
         {{"cpu=2000,memory=4000", "cpu=3000,memory=5000"}, NULL},
         {"cpu=5000,memory=10000", "cpu=10000,memory=9000"},
         0,
         {{0}},
         {95, 75},
         KS_SUCCESS},
        {"no resources requested, pods scheduled, nonzero request for resource",
         {{""}, NULL},
         {"cpu=250m,memory=1000Mi", "cpu=250m,memory=1000Mi"},
         2,
         {{0, {{""}, NULL}}, {0, {{""}, NULL}}},
         {80, 30},
         KS_SUCCESS},
    };
    run_fit_scores(KS_SCORING_MOST_ALLOCATED, "cpu:1,memory:1", NULL, 0, defaults, N(defaults), true);

    static const struct fx_score_case weighted[] = {
        {ROW_DIFF, {58, 50}, KS_SUCCESS},
    };
    run_fit_scores(KS_SCORING_MOST_ALLOCATED, "memory:2,cpu:1", NULL, 0, weighted, N(weighted), true);

    static const struct fx_score_case extended[] = {
        {ROW_EXT_BYPASS, {50, 50}, KS_SUCCESS},
        {ROW_EXT_HONOR, {50, 40}, KS_SUCCESS},
    };
    run_fit_scores(KS_SCORING_MOST_ALLOCATED, "cpu:1,memory:1,abc.com/xyz:1", NULL, 0, extended, N(extended),
                   true);
    static const struct fx_score_case missing[] = {{ROW_NO_RESOURCE, {45, 45}, KS_SUCCESS}};
    run_fit_scores(KS_SCORING_MOST_ALLOCATED, "abc.com/xyz:2,cpu:1,memory:1", NULL, 0, missing, N(missing),
                   true);

    static const struct fx_score_case unset[] = {
        {"Resources not set, pods scheduled with error",
         {{"cpu=1000,memory=2000", "cpu=2000,memory=3000"}, NULL},
         {"cpu=4000,memory=10000", "cpu=6000,memory=10000"},
         0,
         {{0}},
         {0, 0},
         KS_ERROR},
    };
    run_fit_scores(KS_SCORING_MOST_ALLOCATED, NULL, NULL, 0, unset, N(unset), true);
}

Test(noderesourcesfit, upstream_requested_to_capacity_ratio)
{
    static const struct ks_shape_point shape[] = {{0, 10}, {100, 0}};
    static const struct fx_score_case cases[] = {
        {"nothing scheduled, nothing requested (default - least requested nodes have priority)",
         {{NULL}, NULL},
         {"cpu=4000,memory=10000", "cpu=4000,memory=10000"},
         2,
         {{0, {{NULL}, NULL}}, {0, {{NULL}, NULL}}},
         {100, 100},
         KS_SUCCESS},
        {"nothing scheduled, resources requested, differently sized nodes (default - least requested nodes "
         "have "
         "priority)",
         {{"cpu=1000,memory=2000", "cpu=2000,memory=3000"}, NULL},
         {"cpu=4000,memory=10000", "cpu=6000,memory=10000"},
         2,
         {{0, {{NULL}, NULL}}, {0, {{NULL}, NULL}}},
         {38, 50},
         KS_SUCCESS},
        {"no resources requested, pods scheduled with resources (default - least requested nodes have "
         "priority)",
         {{NULL}, NULL},
         {"cpu=4000,memory=10000", "cpu=6000,memory=10000"},
         2,
         {{0, {{"cpu=3000,memory=5000"}, NULL}}, {1, {{"cpu=3000,memory=5000"}, NULL}}},
         {38, 50},
         KS_SUCCESS},
    };
    run_fit_scores(KS_SCORING_REQUESTED_TO_CAPACITY_RATIO, "cpu:1,memory:1", shape, 2, cases, N(cases), true);
}

/* makeNode(name, 4000, 10000*1024*1024, extended) of the bin-packing tests */
#define BIN_NODE(ext) "cpu=4000m,memory=10000Mi," ext

Test(noderesourcesfit, upstream_bin_packing_single_extended)
{
    static const struct ks_shape_point shape[] = {{0, 0}, {100, 1}};
    static const struct fx_score_case cases[] = {
        {"nothing scheduled, nothing requested",
         {{NULL}, NULL},
         {BIN_NODE("intel.com/foo=8"), BIN_NODE("intel.com/foo=4")},
         0,
         {{0}},
         {0, 0},
         KS_SUCCESS},
        {"resources requested, pods scheduled with less resources",
         {{"intel.com/foo=2"}, NULL},
         {BIN_NODE("intel.com/foo=8"), BIN_NODE("intel.com/foo=4")},
         1,
         {{-1, {{NULL}, NULL}}},
         {2, 5},
         KS_SUCCESS},
        {"resources requested, pods scheduled with resources, on node with existing pod running ",
         {{"intel.com/foo=2"}, NULL},
         {BIN_NODE("intel.com/foo=8"), BIN_NODE("intel.com/foo=4")},
         1,
         {{1, {{"intel.com/foo=2"}, NULL}}},
         {2, 10},
         KS_SUCCESS},
        {"resources requested, pods scheduled with more resources",
         {{"intel.com/foo=4"}, NULL},
         {BIN_NODE("intel.com/foo=8"), BIN_NODE("intel.com/foo=4")},
         1,
         {{-1, {{NULL}, NULL}}},
         {5, 10},
         KS_SUCCESS},
    };
    run_fit_scores(KS_SCORING_REQUESTED_TO_CAPACITY_RATIO, "intel.com/foo:1", shape, 2, cases, N(cases),
                   true);
}

Test(noderesourcesfit, upstream_bin_packing_multiple_extended)
{
    static const struct ks_shape_point shape[] = {{0, 0}, {100, 1}};
    static const struct fx_score_case cases[] = {
        {"nothing scheduled, nothing requested",
         {{NULL}, NULL},
         {BIN_NODE("intel.com/foo=8,intel.com/bar=4"), BIN_NODE("intel.com/foo=4,intel.com/bar=8")},
         0,
         {{0}},
         {0, 0},
         KS_SUCCESS},
        {"resources requested, pods scheduled with less resources",
         {{"intel.com/foo=2,intel.com/bar=2"}, NULL},
         {BIN_NODE("intel.com/foo=8,intel.com/bar=4"), BIN_NODE("intel.com/foo=4,intel.com/bar=8")},
         1,
         {{-1, {{NULL}, NULL}}},
         {4, 3},
         KS_SUCCESS},
        {"resources requested, pods scheduled with resources, on node with existing pod running ",
         {{"intel.com/foo=2,intel.com/bar=2"}, NULL},
         {BIN_NODE("intel.com/foo=8,intel.com/bar=4"), BIN_NODE("intel.com/foo=4,intel.com/bar=8")},
         1,
         {{1, {{"intel.com/foo=4,intel.com/bar=2"}, NULL}}},
         {4, 7},
         KS_SUCCESS},
        {"resources requested, pods scheduled with more resources",
         {{"intel.com/foo=4,intel.com/bar=2"}, NULL},
         {BIN_NODE("intel.com/foo=8,intel.com/bar=4"), BIN_NODE("intel.com/foo=4,intel.com/bar=8")},
         1,
         {{-1, {{NULL}, NULL}}},
         {5, 5},
         KS_SUCCESS},
    };
    run_fit_scores(KS_SCORING_REQUESTED_TO_CAPACITY_RATIO, "intel.com/foo:3,intel.com/bar:5", shape, 2, cases,
                   N(cases), true);
}

Test(noderesourcesfit, defaults_from_args_parse)
{
    void *args = NULL;
    struct ks_error err = {0};
    cr_assert(eq(int, fit->args_parse(NULL, "kubescheduler.config.k8s.io/v1", NULL, &args, &err), 0), "%s",
              err.msg);
    static const struct fx_score_case c = {ROW_DIFF, {37, 50}, KS_SUCCESS};
    fx_run_scores(fit, args, &c, true);
    fx_run_scores(fit, NULL, &c, true); /* no args at all: the same defaults */
    fit->args_destroy(args);
}
