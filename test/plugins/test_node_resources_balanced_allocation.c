/*
 * test_node_resources_balanced_allocation.c - the NodeResourcesBalancedAllocation plugin
 * (plugins/node_resources_balanced_allocation.c).
 *
 * Cases from upstream's noderesources/balanced_allocation_test.go
 * (TestNodeResourcesBalancedAllocation) in its standard-deviation form (released
 * upstream, checked by the conformance scenarios); the DRA extended-resource rows are left
 * out. makeNode(name, milliCPU, memory, extended) is "cpu=<milliCPU>m,memory=<memory>".
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "ksched/plugin_args.h"
#include "ksched/registry.h"
#include "plugin_fixtures.h"

TestSuite(noderesourcesbalancedallocation);

static const struct ks_plugin *const ba = &ks_plugin_node_resources_balanced_allocation;

static struct ks_noderesourcesbalancedallocation_args *mk_args(const char *const *names)
{
    struct ks_noderesourcesbalancedallocation_args *a = fx_must(calloc(1, sizeof(*a)));
    a->resources = fx_must(ks_arena_calloc(&a->arena, 8, sizeof(*a->resources)));
    for (; *names; names++)
        a->resources[a->nresources++] = (struct ks_resource_spec){ks_intern(*names), 1};
    return a;
}

static void free_args(struct ks_noderesourcesbalancedallocation_args *a)
{
    ks_arena_destroy(&a->arena);
    free(a);
}

/* The pod specs of the upstream test. */
#define CPU_AND_MEMORY                                                                                       \
    {                                                                                                        \
        {"cpu=1000m,memory=2000", "cpu=2000m,memory=3000"}, NULL                                             \
    }
#define CPU_ONLY                                                                                             \
    {                                                                                                        \
        {"cpu=1000m,memory=0", "cpu=2000m,memory=0"}, NULL                                                   \
    }
#define CPU_AND_MEMORY_AND_GPU                                                                               \
    {                                                                                                        \
        {"cpu=1000m,memory=2000", "cpu=2000m,memory=3000,nvidia.com/gpu=3"}, NULL                            \
    }

static void run(const char *const *resources, const struct fx_score_case *cases, size_t n, bool pre_score)
{
    struct ks_noderesourcesbalancedallocation_args *args = mk_args(resources);
    for (size_t i = 0; i < n; i++)
        fx_run_scores(ba, args, &cases[i], pre_score);
    free_args(args);
}

static const char *const cpu_memory[] = {"cpu", "memory", NULL};
static const char *const cpu_memory_gpu[] = {"cpu", "memory", "nvidia.com/gpu", NULL};

static const struct fx_score_case with_resources = {
    "resources requested, pods scheduled with resources",
    CPU_AND_MEMORY,
    {"cpu=10000m,memory=20000", "cpu=10000m,memory=20000"},
    2,
    {{0, CPU_ONLY}, {1, CPU_AND_MEMORY}},
    {82, 95},
    KS_SUCCESS,
};

Test(noderesourcesbalancedallocation, upstream_scores)
{
    static const struct fx_score_case cases[] = {
        {"nothing scheduled, nothing requested, skip in PreScore",
         {{NULL}, NULL},
         {"cpu=4000m,memory=10000", "cpu=4000m,memory=10000"},
         0,
         {{0}},
         {0, 0},
         KS_SKIP},
        {"nothing scheduled, resources requested, differently sized nodes",
         CPU_AND_MEMORY,
         {"cpu=4000m,memory=10000", "cpu=6000m,memory=10000"},
         0,
         {{0}},
         {87, 100},
         KS_SUCCESS},
        with_resources,
        {"resources requested, pods scheduled with resources, differently sized nodes",
         CPU_AND_MEMORY,
         {"cpu=10000m,memory=20000", "cpu=10000m,memory=50000"},
         2,
         {{0, CPU_ONLY}, {1, CPU_AND_MEMORY}},
         {82, 80},
         KS_SUCCESS},
        {"requested resources at node capacity",
         CPU_ONLY,
         {"cpu=6000m,memory=10000", "cpu=6000m,memory=10000"},
         2,
         {{0, CPU_ONLY}, {1, CPU_AND_MEMORY}},
         {50, 75},
         KS_SUCCESS},
    };
    run(cpu_memory, cases, sizeof(cases) / sizeof(cases[0]), true);
}

Test(noderesourcesbalancedallocation, upstream_scalar_resources)
{
    static const struct fx_score_case cases[] = {
        {"include scalar resource on a node for balanced resource allocation",
         {{"memory=0,nvidia.com/gpu=1"}, NULL},
         {"cpu=3500m,memory=40000,nvidia.com/gpu=8", "cpu=3500m,memory=40000,nvidia.com/gpu=8"},
         2,
         {{1, CPU_AND_MEMORY}, {0, CPU_AND_MEMORY_AND_GPU}},
         {70, 65},
         KS_SUCCESS},
        {"node without the scalar resource should skip the scalar resource",
         CPU_AND_MEMORY,
         {"cpu=3500m,memory=40000,nvidia.com/gpu=8", "cpu=3500m,memory=40000"},
         0,
         {{0}},
         {63, 63},
         KS_SUCCESS},
    };
    run(cpu_memory_gpu, cases, sizeof(cases) / sizeof(cases[0]), true);
}

Test(noderesourcesbalancedallocation, upstream_without_pre_score)
{
    struct fx_score_case c = with_resources;
    c.name = "resources requested, pods scheduled with resources if PreScore not called";
    run(cpu_memory, &c, 1, false);

    /* a best-effort pod scores 0 everywhere when PreScore did not skip the plugin */
    static const struct fx_score_case best_effort = {
        "best-effort pod without PreScore",
        {{""}, NULL},
        {"cpu=4000m,memory=10000", "cpu=6000m,memory=10000"},
        1,
        {{0, CPU_ONLY}},
        {0, 0},
        KS_SUCCESS,
    };
    run(cpu_memory, &best_effort, 1, false);
}

Test(noderesourcesbalancedallocation, fractions_are_capped_and_zero_allocatable_left_out)
{
    static const struct fx_score_case cases[] = {
        /* cpu 6000/4000 caps at 1, memory 5000/10000: std 0.25 */
        {"over capacity", CPU_ONLY, {"cpu=4000m,memory=10000"}, 1, {{0, CPU_AND_MEMORY}}, {75}, KS_SUCCESS},
        /* one resource with allocatable: no deviation at all */
        {"one resource left", CPU_AND_MEMORY, {"cpu=4000m"}, 0, {{0}}, {100}, KS_SUCCESS},
        {"no resources left", CPU_AND_MEMORY, {""}, 0, {{0}}, {100}, KS_SUCCESS},
    };
    run(cpu_memory, cases, sizeof(cases) / sizeof(cases[0]), true);
}

Test(noderesourcesbalancedallocation, three_resources_use_the_population_deviation)
{
    /* fractions 3000/3500, 5000/40000, 4/8 with ephemeral storage as the third resource */
    static const char *const names[] = {"cpu", "memory", "ephemeral-storage", NULL};
    static const struct fx_score_case cases[] = {
        {"cpu, memory, ephemeral-storage",
         {{"cpu=3000m,memory=5000,ephemeral-storage=4"}, NULL},
         {"cpu=3500m,memory=40000,ephemeral-storage=8"},
         0,
         {{0}},
         {70},
         KS_SUCCESS},
    };
    run(names, cases, 1, true);
}

Test(noderesourcesbalancedallocation, defaults_from_args_parse)
{
    void *args = NULL;
    struct ks_error err = {0};
    cr_assert(eq(int, ba->args_parse(NULL, "kubescheduler.config.k8s.io/v1", NULL, &args, &err), 0), "%s",
              err.msg);
    fx_run_scores(ba, args, &with_resources, true);
    fx_run_scores(ba, NULL, &with_resources, true);
    ba->args_destroy(args);
}
