/*
 * test_bench_dra.c - the Dynamic Resource Allocation keys of `ksched bench` workload files
 * (bench/harness/bench_workload.c: createResourceDriver, createAny, allocResourceClaims,
 * createPods' steadyState and skipWaitToCompletion) and their errors, the objects
 * bench/harness/bench_dra.c makes from them (a driver's slices as upstream's
 * resourceSlice(), numbered objects, claims allocated ahead), the record --check reads, and
 * the workloads bench/workloads/ holds for them.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "bench.h"
#include "bench_test_load.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/quantity.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WORKLOADS KS_TEST_DATA_DIR "/../../bench/workloads/"

TestSuite(bench_dra, .init = bench_test_init);

/* Lines 1-24: templates; the ops follow (first op on line 26). */
static const char head[] =
    "name: T\n"
    "podTemplates:\n"
    "  p: {apiVersion: v1, kind: Pod, metadata: {generateName: p-}}\n"
    "objectTemplates:\n"
    "  class:\n"
    "    apiVersion: resource.k8s.io/v1\n"
    "    kind: DeviceClass\n"
    "    metadata: {name: test-class}\n"
    "    spec: {selectors: [{cel: {expression: 'device.driver == \"d\"'}}]}\n"
    "  claim:\n"
    "    apiVersion: resource.k8s.io/v1\n"
    "    kind: ResourceClaim\n"
    "    metadata: {generateName: test-claim-}\n"
    "    spec: {devices: {requests: [{name: req-0, exactly: {deviceClassName: test-class}}]}}\n"
    "  template:\n"
    "    apiVersion: resource.k8s.io/v1\n"
    "    kind: ResourceClaimTemplate\n"
    "    metadata: {name: test-claim-template}\n"
    "    spec: {spec: {devices: {requests: [{name: req-0, exactly: {deviceClassName: test-class}}]}}}\n"
    "  badsel:\n"
    "    apiVersion: resource.k8s.io/v1\n"
    "    kind: DeviceClass\n"
    "    metadata: {name: bad}\n"
    "    spec: {selectors: [{cel: {expression: 'device.driver =='}}]}\n"
    "workloadTemplate:\n";
#define FIRST_OP_LINE 26

static int load_ops(const char *ops, struct ks_bench_workload **out, struct ks_error *err)
{
    return load_parts(head, ops, BENCH_TEST_TAIL, out, err);
}

Test(bench_dra, the_dra_keys_are_read)
{
    struct ks_bench_workload *w = NULL;
    struct ks_error err = {0};
    int rc =
        load_ops("- opcode: createResourceDriver\n"
                 "  driverName: test-driver.cdi.k8s.io\n"
                 "  nodes: dra-*\n"
                 "  maxClaimsPerNodeParam: $n\n"
                 "  deviceAttributes:\n"
                 "    model: {string: [A100, H100, L4]}\n"
                 "    dra.example.com/numa: {int: [0, 1]}\n"
                 "    healthy: {bool: true}\n"
                 "  deviceCapacity: {memory: [40Gi, 80Gi]}\n"
                 "- {opcode: createAny, template: class}\n"
                 "- {opcode: createAny, template: claim, countParam: $n, namespace: init}\n"
                 "- {opcode: allocResourceClaims, namespace: init}\n"
                 "- {opcode: createPods, count: 3, podTemplate: p, skipWaitToCompletion: true}\n"
                 "- {opcode: createPods, count: 10, steadyState: true, totalPodsParam: $n, podTemplate: p}\n",
                 &w, &err);
    cr_assert_eq(rc, 0, "%s:%d: %s: %s", err.file, err.line, err.field, err.msg);
    cr_assert_eq(w->nops, 7);

    const struct ks_bench_op *d = &w->ops[0];
    cr_expect_eq(d->code, KS_BENCH_CREATE_RESOURCE_DRIVER);
    cr_expect(eq(str, (char *)d->driver_name, "test-driver.cdi.k8s.io"));
    cr_expect(eq(str, (char *)d->nodes, "dra-*"));
    cr_expect(eq(str, (char *)d->max_claims_param, "n"));
    cr_expect(d->own_devices);
    cr_assert_eq(d->nattrs, 3);
    cr_expect(eq(str, (char *)d->attrs[0].name, "model"));
    cr_expect_eq(d->attrs[0].kind, KS_ATTR_STRING);
    cr_expect_eq(d->attrs[0].nvalues, 3);
    cr_expect(eq(str, (char *)d->attrs[0].values[2], "L4"));
    cr_expect_eq(d->attrs[1].kind, KS_ATTR_INT);
    cr_expect_eq(d->attrs[2].kind, KS_ATTR_BOOL);
    cr_expect_eq(d->attrs[2].nvalues, 1, "a scalar is a list of one");
    cr_assert_eq(d->ncapacity, 1);
    cr_expect(eq(str, (char *)d->capacity[0].values[1], "80Gi"));

    cr_expect_eq(w->ops[1].code, KS_BENCH_CREATE_ANY);
    cr_expect_eq(w->ops[1].object_kind, KS_KIND_DEVICE_CLASS);
    cr_expect_eq(w->ops[1].numbered, false);
    cr_expect_eq(w->ops[1].count, 1, "createAny without count makes one");
    cr_expect_eq(w->ops[2].object_kind, KS_KIND_RESOURCE_CLAIM);
    cr_expect(w->ops[2].numbered);
    cr_expect(eq(str, (char *)w->ops[2].count_param, "n"));
    cr_expect(eq(str, (char *)w->ops[2].namespace, "init"));
    cr_expect_eq(w->ops[3].code, KS_BENCH_ALLOC_RESOURCE_CLAIMS);
    cr_expect(w->ops[4].skip_wait);
    cr_expect(w->ops[5].steady_state);
    cr_expect_eq(w->ops[5].count, 10);
    cr_expect(eq(str, (char *)w->ops[5].total_param, "n"));
    ks_bench_workload_destroy(w);
}

Test(bench_dra, dra_key_errors_name_line_and_field)
{
    static const struct {
        const char *ops, *field, *msg;
    } cases[] = {
        {"- {opcode: createResourceDriver, maxClaimsPerNode: 8}\n", "driverName", "Required value"},
        {"- {opcode: createResourceDriver, driverName: d}\n", "maxClaimsPerNode",
         "Required value: maxClaimsPerNode or maxClaimsPerNodeParam"},
        {"- {opcode: createResourceDriver, driverName: d, maxClaimsPerNode: 0}\n", "maxClaimsPerNode",
         "must be an integer >= 1"},
        {"- {opcode: createResourceDriver, driverName: d, maxClaimsPerNodeParam: n}\n",
         "maxClaimsPerNodeParam", "must be $name, not \"n\""},
        {"- {opcode: createResourceDriver, driverName: d, maxClaimsPerNode: 8, deviceAttributes: {m: {float: "
         "[1]}}}\n",
         "deviceAttributes.m", "unknown attribute type \"float\""},
        {"- {opcode: createResourceDriver, driverName: d, maxClaimsPerNode: 8, deviceAttributes: {m: {int: "
         "[1, "
         "x]}}}\n",
         "deviceAttributes.m.int", "must be an integer, not \"x\""},
        {"- {opcode: createResourceDriver, driverName: d, maxClaimsPerNode: 8, deviceAttributes: {m: "
         "A100}}\n",
         "deviceAttributes.m", "must be a map of one type"},
        {"- {opcode: createResourceDriver, driverName: d, maxClaimsPerNode: 8, deviceCapacity: {memory: "
         "[]}}\n",
         "deviceCapacity.memory", "must be a value or a non-empty list of values"},
        {"- {opcode: createResourceDriver, driverName: d, maxClaimsPerNode: 8, namespace: x}\n", "namespace",
         "does not apply to opcode createResourceDriver"},
        {"- {opcode: createPods, count: 1, podTemplate: p, driverName: d}\n", "driverName",
         "does not apply to opcode createPods"},
        {"- {opcode: createAny, templatePath: class}\n", "workloadTemplate",
         "unknown field \"templatePath\": templates are inline here, name one with \"template\""},
        {"- {opcode: createAny}\n", "template", "Required value: a name in objectTemplates"},
        {"- {opcode: createAny, template: nope}\n", "template", "no object template named \"nope\""},
        {"- {opcode: createAny, template: class, namespace: x}\n", "namespace",
         "a DeviceClass has no namespace"},
        {"- {opcode: createAny, template: claim}\n", "template",
         "the one object of createAny without count is named by metadata.name"},
        {"- {opcode: createAny, template: class, collectMetrics: true}\n", "collectMetrics",
         "does not apply to opcode createAny"},
        {"- {opcode: allocResourceClaims, count: 3}\n", "count",
         "does not apply to opcode allocResourceClaims"},
        {"- {opcode: createPods, count: 10, steadyState: true, podTemplate: p}\n", "totalPods",
         "Required value: steadyState runs totalPods or totalPodsParam pods"},
        {"- {opcode: createPods, count: 10, totalPods: 100, podTemplate: p}\n", "totalPods",
         "only a steadyState createPods has a total"},
        {"- {opcode: createPods, count: 10, steadyState: true, totalPodsParam: n, podTemplate: p}\n",
         "totalPodsParam", "must be $name"},
        {"- {opcode: createPods, count: 1, podTemplate: p, skipWaitToCompletion: true, steadyState: true, "
         "totalPods: 3}\n",
         "skipWaitToCompletion", "the measured and steadyState pods are waited for"},
        {"- {opcode: createNodes, count: 1, steadyState: true}\n", "steadyState",
         "does not apply to opcode createNodes"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ks_bench_workload *w = NULL;
        struct ks_error err = {0};
        int rc = load_ops(cases[i].ops, &w, &err);
        expect_load_error(i, rc, w, &err, cases[i].field, cases[i].msg, FIRST_OP_LINE);
    }
}

Test(bench_dra, one_steady_state_op_per_workload)
{
    struct ks_bench_workload *w = NULL;
    struct ks_error err = {0};
    cr_expect_eq(
        load_ops("- {opcode: createPods, count: 2, steadyState: true, totalPods: 4, podTemplate: p}\n"
                 "- {opcode: createPods, count: 2, steadyState: true, totalPods: 4, podTemplate: p}\n",
                 &w, &err),
        -EINVAL);
    cr_expect(eq(str, err.field, "steadyState"));
    cr_expect_eq(err.line, FIRST_OP_LINE + 1);
    cr_expect_not_null(strstr(err.msg, "one createPods per workload may be steadyState"), "%s", err.msg);
}

Test(bench_dra, a_bad_selector_is_an_error_of_the_file_at_its_line)
{
    struct ks_bench_workload *w = NULL;
    struct ks_error err = {0};
    cr_expect_eq(load_ops("- {opcode: createAny, template: badsel}\n", &w, &err), -EINVAL);
    cr_expect_null(w);
    cr_expect_eq(err.line, 24, "the expression's line: %d", err.line);
    cr_expect_not_null(strstr(err.field, "selectors[0].cel.expression"), "%s", err.field);
    cr_expect_not_null(strstr(err.msg, "compilation failed"), "%s", err.msg);
}

/* The op of @w with @code. */
static const struct ks_bench_op *op_of(const struct ks_bench_workload *w, enum ks_bench_opcode code)
{
    for (uint32_t i = 0; i < w->nops; i++) {
        if (w->ops[i].code == code)
            return &w->ops[i];
    }
    cr_fatal("no such op");
    return NULL;
}

static const struct ks_device_attribute *attr(const struct ks_device *d, const char *name)
{
    uint32_t id = ks_intern(name);
    for (uint32_t i = 0; i < d->nattributes; i++) {
        if (d->attributes[i].name == id)
            return &d->attributes[i];
    }
    return NULL;
}

Test(bench_dra, a_driver_has_upstreams_slice_per_matching_node)
{
    struct ks_bench_workload *w = NULL;
    struct ks_error err = {0};
    struct ks_objects objs = {0};
    cr_assert_eq(load_ops("- {opcode: createResourceDriver, driverName: test-driver.cdi.k8s.io, nodes: "
                          "'dra-*', maxClaimsPerNode: 3}\n",
                          &w, &err),
                 0, "%s", err.msg);
    const char *names[] = {"dra-0", "plain-1", "dra-2"};
    int n =
        ks_bench_driver_slices(op_of(w, KS_BENCH_CREATE_RESOURCE_DRIVER), w->file, 3, names, 3, &objs, &err);
    cr_assert_eq(n, 2, "%d: %s", n, err.msg);
    cr_assert_eq(objs.of[KS_KIND_RESOURCE_SLICE].n, 2);
    for (int i = 0; i < 2; i++) {
        const struct ks_resource_slice *s = objs.of[KS_KIND_RESOURCE_SLICE].items[i];
        const char *node = i ? "dra-2" : "dra-0";
        cr_expect(eq(str, (char *)s->meta.name, (char *)node));
        cr_expect(eq(str, (char *)ks_intern_str(s->node_name), (char *)node));
        cr_expect(eq(str, (char *)ks_intern_str(s->pool), (char *)node), "the pool is the node's");
        cr_expect(eq(str, (char *)ks_intern_str(s->driver), "test-driver.cdi.k8s.io"));
        cr_expect_eq(s->slice_count, 1);
        cr_assert_eq(s->ndevices, 3);
        for (uint32_t d = 0; d < 3; d++) {
            char dev[32];
            snprintf(dev, sizeof(dev), "instance-%u", d);
            cr_expect(eq(str, (char *)ks_intern_str(s->devices[d].name), dev));
            const struct ks_device_attribute *a = attr(&s->devices[d], "model");
            cr_assert_not_null(a);
            cr_expect(eq(str, (char *)a->s, "A100"));
            cr_expect(eq(str, (char *)attr(&s->devices[d], "family")->s, "GPU"));
            cr_expect_eq(attr(&s->devices[d], "driverVersion")->kind, KS_ATTR_VERSION);
            cr_expect_eq(attr(&s->devices[d], "dra.example.com/numa")->i, d, "numa is the device's index");
            cr_assert_eq(s->devices[d].ncapacity, 1);
        }
    }
    for (uint32_t i = 0; i < objs.of[KS_KIND_RESOURCE_SLICE].n; i++)
        ks_resource_slice_destroy(objs.of[KS_KIND_RESOURCE_SLICE].items[i]);
    free(objs.of[KS_KIND_RESOURCE_SLICE].items);
    ks_bench_workload_destroy(w);
}

Test(bench_dra, device_attributes_take_their_values_in_turn_across_nodes)
{
    struct ks_bench_workload *w = NULL;
    struct ks_error err = {0};
    struct ks_objects objs = {0};
    cr_assert_eq(
        load_ops("- {opcode: createResourceDriver, driverName: d.example.com, maxClaimsPerNode: 2, "
                 "deviceAttributes: {model: {string: [a, b, c]}}, deviceCapacity: {memory: [1Gi, 2Gi]}}\n",
                 &w, &err),
        0, "%s", err.msg);
    const char *names[] = {"n0", "n1"};
    cr_assert_eq(
        ks_bench_driver_slices(op_of(w, KS_BENCH_CREATE_RESOURCE_DRIVER), w->file, 2, names, 2, &objs, &err),
        2, "%s", err.msg);
    /* device d of node k: values[(k * 2 + d) % n] */
    const char *model[] = {"a", "b", "c", "a"};
    for (uint32_t k = 0; k < 2; k++) {
        const struct ks_resource_slice *s = objs.of[KS_KIND_RESOURCE_SLICE].items[k];
        for (uint32_t d = 0; d < 2; d++) {
            cr_assert_eq(s->devices[d].nattributes, 1, "only the op's attributes");
            cr_expect(eq(str, (char *)attr(&s->devices[d], "model")->s, (char *)model[k * 2 + d]));
            cr_expect_eq(ks_quantity_value(&s->devices[d].capacity[0].value), (int64_t)(1 + d) << 30);
        }
        ks_resource_slice_destroy(objs.of[KS_KIND_RESOURCE_SLICE].items[k]);
    }
    free(objs.of[KS_KIND_RESOURCE_SLICE].items);

    /* a value the API rejects is an error of the op's line */
    ks_bench_workload_destroy(w);
    cr_assert_eq(load_ops("- {opcode: createResourceDriver, driverName: d.example.com, maxClaimsPerNode: 1, "
                          "deviceAttributes: {'bad name!': {string: x}}}\n",
                          &w, &err),
                 0, "%s", err.msg);
    memset(&objs, 0, sizeof(objs));
    cr_expect_eq(
        ks_bench_driver_slices(op_of(w, KS_BENCH_CREATE_RESOURCE_DRIVER), w->file, 1, names, 1, &objs, &err),
        -EINVAL);
    cr_expect_eq(err.line, FIRST_OP_LINE);
    cr_expect_not_null(strstr(err.msg, "createResourceDriver: "), "%s", err.msg);
    cr_expect_eq(objs.of[KS_KIND_RESOURCE_SLICE].n, 0);
    ks_bench_workload_destroy(w);
}

Test(bench_dra, claims_are_made_numbered_and_allocated_apart)
{
    struct ks_bench_workload *w = NULL;
    struct ks_error err = {0};
    struct ks_objects *objs = calloc(1, sizeof(*objs));
    char msg[512];
    cr_assert_eq(load_ops("- {opcode: createResourceDriver, driverName: d, maxClaimsPerNode: 2}\n"
                          "- {opcode: createAny, template: class}\n"
                          "- {opcode: createAny, template: claim, count: 5, namespace: init}\n",
                          &w, &err),
                 0, "%s", err.msg);
    const char *names[] = {"n0", "n1", "n2"};
    cr_assert_eq(ks_bench_driver_slices(&w->ops[0], w->file, 2, names, 3, objs, &err), 3, "%s", err.msg);
    cr_assert_eq(ks_bench_create_any(&w->ops[1], w->file, 0, 1, objs, NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(ks_bench_create_any(&w->ops[2], w->file, 0, 5, objs, NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(objs->of[KS_KIND_RESOURCE_CLAIM].n, 5);
    for (uint32_t i = 0; i < 5; i++) {
        const struct ks_resource_claim *c = objs->of[KS_KIND_RESOURCE_CLAIM].items[i];
        char want[32];
        snprintf(want, sizeof(want), "test-claim-%u", i);
        cr_expect(eq(str, (char *)c->meta.name, want));
        cr_expect(eq(str, (char *)ks_intern_str(c->meta.namespace_id), "init"));
    }

    struct ks_node *nodes[3];
    for (int i = 0; i < 3; i++)
        cr_assert_not_null(nodes[i] = ks_bench_node(names[i], (uint32_t)i, NULL));
    cr_assert_eq(ks_bench_alloc_claims(objs, "init", nodes, 3, 1, msg, sizeof(msg)), 5, "%s", msg);

    /* five of the six devices, none twice: the record agrees */
    struct ks_bench_dra_record *rec = NULL;
    cr_assert_eq(ks_bench_dra_record_create(objs, &rec), 0);
    cr_expect_eq(ks_bench_dra_record_conflicts(rec, msg, sizeof(msg)), 0, "%s", msg);
    for (uint32_t i = 0; i < 5; i++) {
        const struct ks_resource_claim *c = objs->of[KS_KIND_RESOURCE_CLAIM].items[i];
        cr_assert_not_null(c->allocation, "claim %u", i);
        cr_assert_eq(c->allocation->nresults, 1);
    }
    /* a sixth fits, a seventh does not */
    cr_assert_eq(ks_bench_create_any(&w->ops[2], w->file, 5, 2, objs, NULL, &err), 0);
    cr_expect_eq(ks_bench_alloc_claims(objs, "init", nodes, 3, 1, msg, sizeof(msg)), -EINVAL);
    cr_expect_not_null(strstr(msg, "no node has room"), "%s", msg);

    /* the record counts a device written for a second claim */
    const struct ks_dra_api *api = ks_bench_dra_record_api(rec);
    const struct ks_resource_claim *c0 = objs->of[KS_KIND_RESOURCE_CLAIM].items[0];
    struct ks_dra_api_claim other = {"init", "someone-else", NULL, NULL};
    char rv[16];
    cr_expect_eq(api->bind_claim(api, &other, c0->allocation, "p", "uid", rv, sizeof(rv), msg, sizeof(msg)),
                 0);
    cr_expect_eq(ks_bench_dra_record_conflicts(rec, msg, sizeof(msg)), 1);
    cr_expect_not_null(strstr(msg, "init/test-claim-0"), "%s", msg);
    /* once the first claim is gone, the device is free */
    ks_bench_dra_record_forget(rec, c0);
    struct ks_dra_api_claim third = {"init", "third", NULL, NULL};
    cr_expect_eq(api->bind_claim(api, &third, c0->allocation, "p", "uid", rv, sizeof(rv), msg, sizeof(msg)),
                 0);
    cr_expect_eq(ks_bench_dra_record_conflicts(rec, msg, sizeof(msg)), 1,
                 "a conflicting write takes nothing");

    ks_bench_dra_record_destroy(rec);
    for (int i = 0; i < 3; i++)
        ks_node_destroy(nodes[i]);
    ks_objects_destroy(objs);
    ks_bench_workload_destroy(w);
}

/* The DRA workloads of bench/workloads load, and their sizes fill no more devices than there are. */
Test(bench_dra, the_dra_workloads_load_and_fit)
{
    static const char *const files[] = {"SchedulingWithResourceClaimTemplate",
                                        "SteadyStateClusterResourceClaimTemplate",
                                        "SchedulingWithDeviceSelectors"};
    for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
        char path[512];
        struct ks_bench_workload *w = NULL;
        struct ks_error err = {0};
        snprintf(path, sizeof(path), WORKLOADS "%s.yaml", files[f]);
        cr_assert_eq(ks_bench_workload_load(path, &w, &err), 0, "%s:%d: %s: %s", err.file, err.line,
                     err.field, err.msg);
        for (uint32_t i = 0; i < w->nsizes; i++) {
            const struct ks_bench_size *sz = &w->sizes[i];
            int64_t devices = ks_bench_param(sz, "initNodes", 0) * ks_bench_param(sz, "maxClaimsPerNode", 0);
            int64_t used = ks_bench_param(sz, "initPods", 0) + ks_bench_param(sz, "initClaims", 0) +
                           ks_bench_param(sz, "measurePods", 0);
            if (strstr(files[f], "SteadyState"))
                used = ks_bench_param(sz, "initClaims", 0) + 10; /* a batch at a time */
            cr_expect_gt(devices, 0, "%s %s", files[f], sz->name);
            cr_expect_leq(used, devices, "%s %s: %ld devices used of %ld", files[f], sz->name, (long)used,
                          (long)devices);
            bool perf = false;
            for (uint32_t l = 0; l < sz->nlabels; l++)
                perf = perf || strcmp(sz->labels[l], "performance") == 0;
            cr_expect_eq(perf, false, "%s %s: labelled performance, so bench/run-all would run it", files[f],
                         sz->name);
        }
        ks_bench_workload_destroy(w);
    }
}
