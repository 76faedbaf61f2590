/*
 * test_extended.c - extended resources backed by devices (dra/extended.c): the DeviceClass
 * resolver and the special claim's requests and request mappings, transcribed from
 * upstream's Test_createRequestsAndMappings_requests / _mappings
 * (pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources_test.go) and
 * the field documentation of DeviceClassSpec.extendedResourceName.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/dra_extended.h"
#include "ksched/loader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void init(void)
{
    cr_assert_eq(ks_api_init(), 0);
}

TestSuite(dra_extended, .init = init);

#define GPU  "example.com/gpu"
#define INIT "example.com/gpuinit"
#define IMPL "deviceclass.resource.kubernetes.io/classInit"

/* st.MakePod's containers: Res() is "con<N>", InitReq() "init-con<N>", SidecarReq() "sidecar-con<N>". */
#define C(name, reqs) "  - {name: " name ", image: pause, resources: {requests: {" reqs "}}}\n"
#define SIDECAR(name, reqs)                                                                                  \
    "  - {name: " name ", image: pause, restartPolicy: Always, resources: {requests: {" reqs "}}}\n"
#define POD(init, containers)                                                                                \
    "apiVersion: v1\nkind: Pod\nmetadata: {name: pod, namespace: ns, uid: pod-uid}\nspec:\n"                 \
    "  initContainers:\n" init "  containers:\n" containers

static struct ks_pod *load_pod(const char *text, struct ks_objects **objs)
{
    struct ks_error err = {0};
    cr_assert_eq(ks_objects_load_buffer("pod.yaml", text, strlen(text), objs, &err), 0, "%s:%d: %s: %s",
                 err.file, err.line, err.field, err.msg);
    cr_assert_eq((*objs)->of[KS_KIND_POD].n, 1);
    return (*objs)->of[KS_KIND_POD].items[0];
}

struct want_req {
    const char *name, *class_name;
    int64_t count;
};

struct want_map {
    const char *container, *resource, *request;
};

struct ext_case {
    const char *name;
    const char *pod;
    struct ks_dra_ext_resource res[3]; /* name filled from res_names */
    const char *res_names[3];
    struct want_req reqs[4];
    struct want_map maps[5];
};

static int map_order(const void *x, const void *y)
{
    const struct ks_dra_ext_mapping *a = x, *b = y;
    int c = strcmp(a->request, b->request);
    return c ? c : strcmp(a->container, b->container);
}

static void check(const struct ext_case *tc)
{
    struct ks_objects *objs = NULL;
    const struct ks_pod *pod = load_pod(tc->pod, &objs);
    struct ks_dra_ext_resource res[3];
    uint32_t nres = 0, nmaps = 0;
    struct ks_arena a = KS_ARENA_INIT;
    struct ks_resource_claim *claim;
    struct ks_dra_ext_mapping *maps;

    for (; nres < 3 && tc->res_names[nres]; nres++)
        res[nres] = (struct ks_dra_ext_resource){ks_intern(tc->res_names[nres]), tc->res[nres].class_name};
    cr_assert_eq(ks_dra_extended_claim(&a, pod, res, nres, &claim, &maps, &nmaps), 0);
    uint32_t nwant = 0;
    while (nwant < 4 && tc->reqs[nwant].name)
        nwant++;
    cr_assert_eq(claim->spec.nrequests, nwant, "%s: %u requests", tc->name, claim->spec.nrequests);
    for (uint32_t i = 0; i < nwant; i++) {
        const struct ks_device_request *r = &claim->spec.requests[i];
        cr_expect_str_eq(r->name, tc->reqs[i].name, "%s", tc->name);
        cr_expect(r->exact);
        cr_expect_str_eq(r->spec.device_class_name, tc->reqs[i].class_name, "%s: %s", tc->name, r->name);
        cr_expect_eq(r->spec.mode, KS_ALLOC_EXACT_COUNT);
        cr_expect_eq(r->spec.count, tc->reqs[i].count, "%s: %s", tc->name, r->name);
    }
    qsort(maps, nmaps, sizeof(*maps), map_order);
    uint32_t nwmap = 0;
    while (nwmap < 5 && tc->maps[nwmap].container)
        nwmap++;
    if (tc->maps[0].container) {
        cr_assert_eq(nmaps, nwmap, "%s: %u mappings", tc->name, nmaps);
        for (uint32_t i = 0; i < nwmap; i++) {
            cr_expect_str_eq(maps[i].container, tc->maps[i].container, "%s", tc->name);
            cr_expect_str_eq(maps[i].resource, tc->maps[i].resource, "%s", tc->name);
            cr_expect_str_eq(maps[i].request, tc->maps[i].request, "%s", tc->name);
        }
    }
    cr_expect_str_eq(claim->meta.name, KS_DRA_SPECIAL_CLAIM_NAME);
    cr_expect_eq(claim->meta.nowners, 1);
    cr_expect(claim->meta.owners[0].controller);
    cr_expect_str_eq(claim->meta.owners[0].uid, "pod-uid");
    cr_expect_str_eq(claim->meta.annotations.items[0].key, KS_DRA_EXTENDED_CLAIM_ANNOTATION);
    ks_arena_destroy(&a);
    ks_objects_destroy(objs);
}

#define NO_INIT "    []\n"

static const struct ext_case cases[] = {
    {"one resource match",
     POD(NO_INIT, C("con0", GPU ": 1, " GPU "1: 2")),
     {{0, "class"}},
     {GPU},
     {{"container-0-request-0", "class", 1}},
     {{"con0", GPU, "container-0-request-0"}}},
    {"two resources match",
     POD(NO_INIT, C("con0", GPU ": 1, " GPU "1: 2")),
     {{0, "class"}, {0, "class1"}},
     {GPU, GPU "1"},
     {{"container-0-request-0", "class", 1}, {"container-0-request-1", "class1", 2}},
     {{"con0", GPU, "container-0-request-0"}, {"con0", GPU "1", "container-0-request-1"}}},
    {"two containers match",
     POD(NO_INIT, C("con0", GPU ": 1") C("con1", GPU "1: 2")),
     {{0, "class"}, {0, "class1"}},
     {GPU, GPU "1"},
     {{"container-0-request-0", "class", 1}, {"container-1-request-0", "class1", 2}},
     {{"con0", GPU, "container-0-request-0"}, {"con1", GPU "1", "container-1-request-0"}}},
    {"one init container, one regular container",
     POD(C("init-con0", INIT ": 2"), C("con0", GPU ": 1")),
     {{0, "class"}, {0, "classInit"}},
     {GPU, INIT},
     {{"container-0-request-0", "classInit", 2}, {"container-1-request-0", "class", 1}},
     {{"init-con0", INIT, "container-0-request-0"}, {"con0", GPU, "container-1-request-0"}}},
    {"two init containers, one regular container",
     POD(C("init-con0", INIT ": 1") C("init-con1", INIT ": 2"), C("con0", GPU ": 1")),
     {{0, "class"}, {0, "classInit"}},
     {GPU, INIT},
     {{"container-1-request-0", "classInit", 2}, {"container-2-request-0", "class", 1}},
     {{"init-con0", INIT, "container-1-request-0"},
      {"init-con1", INIT, "container-1-request-0"},
      {"con0", GPU, "container-2-request-0"}}},
    {"three init containers, one sidecar, one regular container",
     POD(C("init-con0", INIT ": 1") SIDECAR("sidecar-con1", INIT ": 1") C("init-con2", INIT ": 2"),
         C("con0", GPU ": 1")),
     {{0, "class"}, {0, "classInit"}},
     {GPU, INIT},
     {{"container-1-request-0", "classInit", 1},
      {"container-2-request-0", "classInit", 2},
      {"container-3-request-0", "class", 1}},
     {{"init-con0", INIT, "container-1-request-0"},
      {"sidecar-con1", INIT, "container-1-request-0"},
      {"init-con2", INIT, "container-2-request-0"},
      {"con0", GPU, "container-3-request-0"}}},
    {"one container, one explicit and one implicit request",
     POD(C("init-con0", INIT ": 1, " IMPL ": 2"), C("con0", "")),
     {{0, "classInit"}, {0, "classInit"}},
     {INIT, IMPL},
     {{"container-0-request-0", "classInit", 2}, {"container-0-request-1", "classInit", 1}},
     {{"init-con0", IMPL, "container-0-request-0"}, {"init-con0", INIT, "container-0-request-1"}}},
    {"three containers (two are init container), both explicit and implicit resources",
     POD(C("init-con0", INIT ": 1") C("init-con1", IMPL ": 2"), C("con0", GPU ": 1")),
     {{0, "class"}, {0, "classInit"}, {0, "classInit"}},
     {GPU, INIT, IMPL},
     {{"container-0-request-0", "classInit", 1},
      {"container-1-request-0", "classInit", 2},
      {"container-2-request-0", "class", 1}},
     {{"init-con0", INIT, "container-0-request-0"},
      {"init-con1", IMPL, "container-1-request-0"},
      {"con0", GPU, "container-2-request-0"}}},
};

Test(dra_extended, upstream_request_and_mapping_tables)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        check(&cases[i]);
}

/* ---- the resolver ---------------------------------------------------------------------------- */

#define CLASS(name, created, ern)                                                                            \
    "---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: " name                         \
    ", creationTimestamp: '" created "'}\nspec: {" ern "}\n"

Test(dra_extended, resolver_prefers_the_newest_class_then_the_first_name)
{
    static const char text[] = CLASS("b-old", "2026-01-01T00:00:00Z", "extendedResourceName: example.com/gpu")
        CLASS("c-new", "2026-02-01T00:00:00Z", "extendedResourceName: example.com/gpu")
            CLASS("a-new", "2026-02-01T00:00:00Z", "extendedResourceName: example.com/gpu")
                CLASS("plain", "2026-01-01T00:00:00Z", "");
    struct ks_objects *objs = NULL;
    struct ks_error err = {0};
    cr_assert_eq(ks_objects_load_buffer("classes.yaml", text, strlen(text), &objs, &err), 0, "%s", err.msg);
    const struct ks_objvec *v = &objs->of[KS_KIND_DEVICE_CLASS];
    const struct ks_device_class *const *cl = (const struct ks_device_class *const *)v->items;

    const struct ks_device_class *c = ks_dra_class_for_resource(cl, v->n, "example.com/gpu");
    cr_assert_not_null(c);
    cr_expect_str_eq(c->meta.name, "a-new"); /* created last, and of those the first name */
    c = ks_dra_class_for_resource(cl, v->n, "deviceclass.resource.kubernetes.io/plain");
    cr_assert_not_null(c);
    cr_expect_str_eq(c->meta.name, "plain"); /* every class under its implicit name */
    c = ks_dra_class_for_resource(cl, v->n, "deviceclass.resource.kubernetes.io/b-old");
    cr_assert_not_null(c);
    cr_expect_str_eq(c->meta.name, "b-old");
    cr_expect_null(ks_dra_class_for_resource(cl, v->n, "example.com/fpga"));
    cr_expect_null(ks_dra_class_for_resource(cl, v->n, "deviceclass.resource.kubernetes.io/missing"));
    ks_objects_destroy(objs);
}

Test(dra_extended, names_that_devices_may_back)
{
    cr_expect(ks_dra_extended_name("example.com/gpu"));
    cr_expect(ks_dra_extended_name("deviceclass.resource.kubernetes.io/gpu"));
    cr_expect_not(ks_dra_extended_name("cpu"));
    cr_expect_not(ks_dra_extended_name("hugepages-2Mi"));
    cr_expect_not(ks_dra_extended_name("kubernetes.io/gpu"));
}

/* generateName's stand-in never names two claims alike, and cuts the base as the API server does. */
Test(dra_extended, generated_names_are_distinct_and_at_most_63_characters)
{
    enum { N = 200000 };
    char(*names)[8] = calloc(N, sizeof(*names));
    char name[128];

    cr_assert_not_null(names);
    for (uint64_t i = 0; i < N; i++) {
        ks_dra_extended_claim_name("p", i, name, sizeof(name));
        cr_assert_eq(strncmp(name, "p-extended-resources-", 21), 0, "%s", name);
        cr_assert_eq(strlen(name), 26);
        memcpy(names[i], name + 21, 6);
    }
    qsort(names, N, sizeof(*names), (int (*)(const void *, const void *))strcmp);
    for (uint64_t i = 1; i < N; i++)
        cr_assert_str_neq(names[i - 1], names[i]);
    free(names);
    ks_dra_extended_claim_name("a-pod-whose-name-is-long-enough-to-be-cut-by-the-name-generator", 0, name,
                               sizeof(name));
    cr_expect_eq(strlen(name), 63);
    cr_expect_eq(strncmp(name, "a-pod-whose-name-is-long-enough-to-be-cut-by-the-name-gener", 58), 0, "%s",
                 name);
}
