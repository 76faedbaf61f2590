/*
 * test_requests.c - effective pod requests, non-zero requests and node allocatable
 * (api/resources.c).
 *
 * Cases follow upstream's component-helpers resource/helpers_test.go
 * (TestPodRequestsAndLimits, TestPodRequestsAndLimitsWithoutOverhead, TestPodResourceRequests,
 * the restartable init container rows of TestPodResourceLimits read as requests),
 * scheduler framework types_test.go (TestPodInfoCalculateResources without pod-level
 * resources), and framework.Resource.Add's scalar resource classes.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <stdio.h>
#include <string.h>

#include "fakes/objects.h"
#include "ksched/base/intern.h"

#define MI          (1024LL * 1024)
#define GI          (1024LL * MI)
#define DEFAULT_CPU 100
#define DEFAULT_MEM (200 * MI)

static void setup(void)
{
    cr_assert(eq(int, ks_api_init(), 0));
}

TestSuite(requests, .init = setup);

static uint32_t id(const char *s)
{
    return ks_intern(s);
}

/* The scalar value of @name in @r, or -1 when absent. */
static int64_t scalar(const struct ks_resources *r, const char *name)
{
    for (uint32_t i = 0; i < r->nscalar; i++) {
        if (r->scalar[i].name == id(name))
            return r->scalar[i].value;
    }
    return -1;
}

static void assert_sorted(const struct ks_resources *r)
{
    for (uint32_t i = 1; i < r->nscalar; i++)
        cr_assert(lt(u32, r->scalar[i - 1].name, r->scalar[i].name), "scalar list sorted and unique");
}

Test(requests, fake_quantities_scale_like_kubernetes)
{
    cr_assert(eq(i64, ks_fake_quantity(ks_wk.cpu, "1"), 1000));
    cr_assert(eq(i64, ks_fake_quantity(ks_wk.cpu, "1.5"), 1500));
    cr_assert(eq(i64, ks_fake_quantity(ks_wk.cpu, "100m"), 100));
    cr_assert(eq(i64, ks_fake_quantity(ks_wk.cpu, "0.0001"), 1), "MilliValue rounds up");
    cr_assert(eq(i64, ks_fake_quantity(ks_wk.memory, "1Gi"), GI));
    cr_assert(eq(i64, ks_fake_quantity(ks_wk.memory, "1G"), 1000000000));
    cr_assert(eq(i64, ks_fake_quantity(ks_wk.memory, "0.5"), 1), "Value rounds up");
    cr_assert(eq(i64, ks_fake_quantity(ks_wk.memory, "1500m"), 2));
}

Test(requests, resource_list_get)
{
    struct ks_arena a = KS_ARENA_INIT;
    struct ks_resource_list l = ks_fake_resource_list(&a, "memory=1Gi, cpu=250m, example.com/gpu=2");
    cr_assert(eq(i64, ks_resource_list_get(&l, ks_wk.cpu), 250));
    cr_assert(eq(i64, ks_resource_list_get(&l, ks_wk.memory), GI));
    cr_assert(eq(i64, ks_resource_list_get(&l, id("example.com/gpu")), 2));
    cr_assert(eq(i64, ks_resource_list_get(&l, ks_wk.pods), 0));
    struct ks_resource_list empty = {0};
    cr_assert(eq(i64, ks_resource_list_get(&empty, ks_wk.cpu), 0));
    ks_arena_destroy(&a);
}

struct pod_spec {
    const char *what;
    const char *containers[4];
    const char *init[6]; /* "=" prefix marks a sidecar (restartPolicy: Always) */
    const char *overhead;
    int64_t cpu, memory;              /* expected requests */
    int64_t nonzero_cpu, nonzero_mem; /* expected non-zero requests */
};

static struct ks_pod *build(const struct pod_spec *s)
{
    struct ks_pod *pod = ks_fake_pod("default", s->what);
    for (size_t i = 0; i < 4 && s->containers[i]; i++)
        ks_fake_container(pod, s->containers[i]);
    for (size_t i = 0; i < 6 && s->init[i]; i++) {
        bool sidecar = s->init[i][0] == '=';
        ks_fake_init_container(pod, s->init[i] + sidecar, sidecar);
    }
    if (s->overhead)
        ks_fake_pod_overhead(pod, s->overhead);
    return ks_fake_pod_done(pod);
}

static void check(const struct pod_spec *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct pod_spec *s = &cases[i];
        struct ks_pod *pod = build(s);
        cr_assert(eq(i64, pod->requests.milli_cpu, s->cpu), "%s: cpu", s->what);
        cr_assert(eq(i64, pod->requests.memory, s->memory), "%s: memory", s->what);
        cr_assert(eq(i64, pod->nonzero_milli_cpu, s->nonzero_cpu), "%s: non-zero cpu", s->what);
        cr_assert(eq(i64, pod->nonzero_memory, s->nonzero_mem), "%s: non-zero memory", s->what);
        ks_pod_destroy(pod);
    }
}

Test(requests, upstream_requests_and_overhead)
{
    static const struct pod_spec cases[] = {
        /* TestPodRequestsAndLimits */
        {"just-limit-no-overhead", {""}, {NULL}, NULL, 0, 0, DEFAULT_CPU, DEFAULT_MEM},
        {"just-overhead", {""}, {NULL}, "cpu=5,memory=5", 5000, 5, 5000 + DEFAULT_CPU, 5 + DEFAULT_MEM},
        {"req-and-overhead", {"cpu=1,memory=10"}, {NULL}, "cpu=5,memory=5", 6000, 15, 6000, 15},
        /* TestPodRequestsAndLimitsWithoutOverhead, overhead added back */
        {"two containers", {"cpu=1,memory=5", "cpu=4,memory=12"}, {NULL}, NULL, 5000, 17, 5000, 17},
        {"two containers with overhead",
         {"cpu=1,memory=5", "cpu=4,memory=12"},
         {NULL},
         "cpu=3,memory=8",
         8000,
         25,
         8000,
         25},
        {"massive init",
         {"cpu=1,memory=5", "cpu=4,memory=12"},
         {"cpu=1,memory=5", "cpu=40,memory=120"},
         "cpu=3,memory=8",
         43000,
         128,
         43000,
         128},
        /* TestPodResourceRequests */
        {"larger init container", {"cpu=1"}, {"cpu=4"}, NULL, 4000, 0, 4000, DEFAULT_MEM},
        {"larger containers", {"cpu=2", "cpu=3"}, {"cpu=2"}, NULL, 5000, 0, 5000, 2 * DEFAULT_MEM},
        {"pod overhead included",
         {"cpu=2", "cpu=3"},
         {"cpu=2"},
         "cpu=1,memory=1Gi",
         6000,
         GI,
         6000,
         2 * DEFAULT_MEM + GI},
    };
    check(cases, sizeof(cases) / sizeof(cases[0]));
}

Test(requests, upstream_sidecars)
{
    static const struct pod_spec cases[] = {
        {"restartable init container", {"cpu=1"}, {"=cpu=1"}, NULL, 2000, 0, 2000, 2 * DEFAULT_MEM},
        /* max(5, sidecars 1+2+3 + regular 1) */
        {"multiple restartable init containers",
         {"cpu=1"},
         {"cpu=5", "=cpu=1", "=cpu=2", "=cpu=3"},
         NULL,
         7000,
         0,
         7000,
         4 * DEFAULT_MEM},
        /* init-2 needs 5 + the sidecars started before it (1+2); the later sidecar does not count */
        {"multiple restartable and regular init containers",
         {"cpu=1"},
         {"cpu=5", "=cpu=1", "=cpu=2", "cpu=5", "=cpu=3"},
         NULL,
         8000,
         0,
         8000,
         4 * DEFAULT_MEM},
        {"restartable-init, init and regular",
         {"cpu=100"},
         {"=cpu=10", "cpu=200"},
         NULL,
         210000,
         0,
         210000,
         2 * DEFAULT_MEM},
        /* a sidecar's own row is the running sum of sidecars */
        {"sidecars larger than the regular containers",
         {"memory=1"},
         {"=memory=10", "=memory=20"},
         NULL,
         0,
         31,
         3 * DEFAULT_CPU,
         31},
    };
    check(cases, sizeof(cases) / sizeof(cases[0]));
}

Test(requests, upstream_nonzero_requests)
{
    static const struct pod_spec cases[] = {
        /* TestPodInfoCalculateResources */
        {"requestless container", {""}, {NULL}, NULL, 0, 0, DEFAULT_CPU, DEFAULT_MEM},
        {"1X container with requests", {"cpu=500m,memory=500Mi"}, {NULL}, NULL, 500, 500 * MI, 500, 500 * MI},
        {"2X container with requests",
         {"cpu=500m,memory=500Mi", "cpu=700m,memory=800Mi"},
         {NULL},
         NULL,
         1200,
         1300 * MI,
         1200,
         1300 * MI},
        /* defaults apply per container, to whichever of cpu and memory it leaves out */
        {"cpu only", {"cpu=500m", "memory=1Gi"}, {NULL}, NULL, 500, GI, 500 + DEFAULT_CPU, GI + DEFAULT_MEM},
        /* an explicit zero is a request, not a missing one */
        {"explicit zero", {"cpu=0,memory=0"}, {NULL}, NULL, 0, 0, 0, 0},
        {"explicit zero cpu", {"cpu=0"}, {NULL}, NULL, 0, 0, 0, DEFAULT_MEM},
        /* init containers get defaults too, and take part in the max */
        {"requestless init larger than containers",
         {"cpu=50m,memory=10Mi"},
         {""},
         NULL,
         50,
         10 * MI,
         DEFAULT_CPU,
         DEFAULT_MEM},
        {"requestless sidecar adds its defaults",
         {"cpu=1,memory=1Gi"},
         {"="},
         NULL,
         1000,
         GI,
         1000 + DEFAULT_CPU,
         GI + DEFAULT_MEM},
        /* overhead is added as is, never defaulted */
        {"overhead cpu only", {""}, {NULL}, "cpu=250m", 250, 0, 250 + DEFAULT_CPU, DEFAULT_MEM},
        {"no containers", {NULL}, {NULL}, NULL, 0, 0, 0, 0},
    };
    check(cases, sizeof(cases) / sizeof(cases[0]));
}

Test(requests, ephemeral_storage_pods_and_scalars)
{
    struct ks_pod *pod = ks_fake_pod("default", "scalars");
    ks_fake_container(pod, "cpu=1, ephemeral-storage=1Gi, example.com/gpu=1, hugepages-2Mi=4Mi, "
                           "example.com/zero=0");
    ks_fake_container(pod, "example.com/gpu=2, attachable-volumes-csi-x=1, kubernetes.io/batch=3");
    ks_fake_init_container(pod, "example.com/gpu=5, ephemeral-storage=3Gi, example.com/init-only=7", false);
    ks_fake_init_container(pod, "example.com/gpu=1, hugepages-2Mi=2Mi", true);
    ks_fake_pod_overhead(pod, "example.com/gpu=1, pods=1");
    ks_fake_pod_done(pod);

    const struct ks_resources *r = &pod->requests;
    cr_assert(eq(i64, r->milli_cpu, 1000));
    cr_assert(eq(i64, r->ephemeral_storage, 3 * GI), "max(1Gi, 3Gi + sidecars before it)");
    cr_assert(eq(i64, r->allowed_pods, 1));
    assert_sorted(r);
    /* regular 1+2 + sidecar 1 = 4; init 5 (no sidecar before it) => max 5, + overhead 1 */
    cr_assert(eq(i64, scalar(r, "example.com/gpu"), 6));
    cr_assert(eq(i64, scalar(r, "hugepages-2Mi"), 6 * MI));
    cr_assert(eq(i64, scalar(r, "example.com/init-only"), 7));
    cr_assert(eq(i64, scalar(r, "example.com/zero"), 0), "a named zero is still present");
    cr_assert(eq(i64, scalar(r, "attachable-volumes-csi-x"), 1));
    cr_assert(eq(i64, scalar(r, "kubernetes.io/batch"), 3));
    cr_assert(eq(u32, r->nscalar, 6));
    ks_pod_destroy(pod);
}

Test(requests, only_scalar_resource_names_are_kept)
{
    static const struct {
        const char *name;
        bool scalar;
    } names[] = {
        {"example.com/gpu", true},
        {"nvidia.com/gpu", true},
        {"hugepages-1Gi", true},
        {"attachable-volumes-aws-ebs", true},
        {"kubernetes.io/something", true},
        {"foo.kubernetes.io/bar", true},
        {"foo", false},                    /* unprefixed: native but not a known one */
        {"requests.example.com/x", false}, /* quota prefix */
        {"Example.com/gpu", false},        /* prefix is not a DNS subdomain */
        {"example.com/a/b", false},        /* not a qualified name */
        {"example.com/-gpu", false},       /* name part must start alphanumeric */
        {"example.com/", false},
        {"/gpu", false},
        {"example..com/gpu", false},
        {"example.com/gpu_2.x-y", true},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char spec[128];
        snprintf(spec, sizeof(spec), "cpu=1,%s=3", names[i].name);
        struct ks_pod *pod = ks_fake_pod("default", "p");
        ks_fake_container(pod, spec);
        ks_fake_pod_done(pod);
        cr_assert(eq(i64, scalar(&pod->requests, names[i].name), names[i].scalar ? 3 : -1), "%s",
                  names[i].name);
        cr_assert(eq(i64, pod->requests.milli_cpu, 1000));
        ks_pod_destroy(pod);
    }
}

Test(requests, long_extended_resource_prefix)
{
    /* "requests." + prefix must stay within 253 characters */
    char name[300];
    size_t len = 244 - 4;
    memset(name, 'a', len);
    memcpy(name + len, ".com/x", 7); /* prefix of 244 chars: 9 + 244 = 253, allowed */
    struct ks_pod *pod = ks_fake_pod("default", "p");
    char spec[320];
    snprintf(spec, sizeof(spec), "%s=1", name);
    ks_fake_container(pod, spec);
    ks_fake_pod_done(pod);
    cr_assert(eq(i64, scalar(&pod->requests, name), 1));
    ks_pod_destroy(pod);

    memmove(name + 1, name, strlen(name) + 1); /* one more: 254 */
    pod = ks_fake_pod("default", "p");
    snprintf(spec, sizeof(spec), "%s=1", name);
    ks_fake_container(pod, spec);
    ks_fake_pod_done(pod);
    cr_assert(eq(i64, scalar(&pod->requests, name), -1));
    ks_pod_destroy(pod);
}

Test(requests, finish_is_repeatable)
{
    struct ks_pod *pod = ks_fake_pod("default", "again");
    ks_fake_container(pod, "cpu=1, example.com/gpu=1");
    ks_fake_pod_done(pod);
    ks_fake_pod_done(pod);
    cr_assert(eq(i64, pod->requests.milli_cpu, 1000));
    cr_assert(eq(i64, scalar(&pod->requests, "example.com/gpu"), 1));
    cr_assert(eq(u32, pod->requests.nscalar, 1));
    ks_pod_destroy(pod);
}

Test(requests, many_containers)
{
    struct ks_pod *pod = ks_fake_pod("default", "many");
    int64_t cpu = 0;
    for (int i = 1; i <= 50; i++) {
        char spec[64];
        snprintf(spec, sizeof(spec), "cpu=%dm, example.com/r%d=1", i, i % 7);
        ks_fake_container(pod, spec);
        cpu += i;
    }
    ks_fake_pod_done(pod);
    cr_assert(eq(i64, pod->requests.milli_cpu, cpu));
    cr_assert(eq(i64, pod->nonzero_memory, 50 * DEFAULT_MEM));
    cr_assert(eq(u32, pod->requests.nscalar, 7));
    assert_sorted(&pod->requests);
    cr_assert(eq(i64, scalar(&pod->requests, "example.com/r0"), 7));
    cr_assert(eq(i64, scalar(&pod->requests, "example.com/r1"), 8));
    ks_pod_destroy(pod);
}

Test(requests, node_allocatable)
{
    struct ks_node *node = ks_fake_node("n1", "zone=a");
    ks_fake_node_allocatable(node,
                             "cpu=3920m, memory=15Gi, ephemeral-storage=100Gi, pods=110, "
                             "nvidia.com/gpu=4, hugepages-1Gi=2Gi, attachable-volumes-aws-ebs=39, foo=5");
    const struct ks_resources *r = &node->alloc;
    cr_assert(eq(i64, r->milli_cpu, 3920));
    cr_assert(eq(i64, r->memory, 15 * GI));
    cr_assert(eq(i64, r->ephemeral_storage, 100 * GI));
    cr_assert(eq(i64, r->allowed_pods, 110));
    assert_sorted(r);
    cr_assert(eq(u32, r->nscalar, 3));
    cr_assert(eq(i64, scalar(r, "nvidia.com/gpu"), 4));
    cr_assert(eq(i64, scalar(r, "hugepages-1Gi"), 2 * GI));
    cr_assert(eq(i64, scalar(r, "attachable-volumes-aws-ebs"), 39));
    cr_assert(eq(i64, scalar(r, "foo"), -1));
    ks_node_destroy(node);

    struct ks_node *bare = ks_fake_node("n2", NULL);
    cr_assert(eq(int, ks_node_finish(bare), 0));
    cr_assert(eq(i64, bare->alloc.milli_cpu, 0));
    cr_assert(eq(u32, bare->alloc.nscalar, 0));
    ks_node_destroy(bare);
}
