/*
 * test_dynamic_resources.c - the DynamicResources plugin's ops (plugins/dynamic_resources.c)
 * with its claim tracker (plugins/helpers/helper_dra_claims.c), in process (no API server).
 *
 * Cases from upstream's dynamicresources_test.go (TestPlugin: "empty", "claim-reference",
 * "claim-template", "missing-claim", "deleted-claim", "wrong-claim", "no-resources",
 * "with-resources", "missing class", "in-use-by-other", "wrong-topology", "good-topology",
 * "bind-failure" and the PostFilter deallocation) with their exact statuses, then the
 * assume-cache behaviour across pods: an in-flight allocation, what PreBind wrote, Unreserve.
 * Device classes here have no selectors, so the allocator's CEL is not involved.
 */
#include "ksched/plugin_helpers_dra.h"
#include "ksched/registry.h"
#include "test_volume_fixtures.h"

TestSuite(dynamicresources, .init = vfx_setup, .fini = vfx_teardown);

static const struct ks_plugin *const dr = &ks_plugin_dynamic_resources;

#define UU "UnschedulableAndUnresolvable: "

#define NODES VFX_NODE("worker", "nodename: worker") VFX_NODE("worker-2", "nodename: worker-2")
#define CLASS "---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: my-resource-class}\n"
/* a slice of one device (instance-1) on @node */
#define SLICE(node)                                                                                          \
    "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: " node "-slice}\n"           \
    "spec: {driver: some-driver, nodeName: " node ", pool: {name: " node ", generation: 1, "                 \
    "resourceSliceCount: 1}, devices: [{name: instance-1}]}\n"
/* a pending claim asking for one device of my-resource-class; @extra: more metadata */
#define CLAIM(name, extra)                                                                                   \
    "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: " name ", namespace: "       \
    "default, uid: " name "-uid" extra "}\n"                                                                 \
    "spec: {devices: {requests: [{name: req-1, exactly: {deviceClassName: my-resource-class}}]}}\n"
#define OWNED_BY_POD                                                                                         \
    ", ownerReferences: [{apiVersion: v1, kind: Pod, name: my-pod, uid: '1234', controller: true}]"
/* the claim allocated instance-1 of @node's pool, with @selector as the allocation's node selector */
#define ALLOCATED(name, node, extra, status)                                                                 \
    CLAIM(name, extra)                                                                                       \
    "status: {allocation: {devices: {results: [{request: req-1, driver: some-driver, pool: " node ", "       \
    "device: instance-1}]}, nodeSelector: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, "         \
    "operator: In, values: [" node "]}]}]}}" status "}\n"
#define POD_WITH_CLAIM(name, uid, claim)                                                                     \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: default, uid: '" uid "'}\n"       \
    "spec: {containers: [{name: c, resources: {claims: [{name: my-resource}]}}], resourceClaims: "           \
    "[{name: my-resource, resourceClaimName: " claim "}]}\n"
#define POD_WITH_TEMPLATE(status)                                                                            \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: my-pod, namespace: default, uid: '1234'}\n"            \
    "spec: {containers: [{name: c}], resourceClaims: [{name: my-resource, resourceClaimTemplateName: "       \
    "my-template}]}\n" status
#define TEMPLATE_STATUS                                                                                      \
    "status: {resourceClaimStatuses: [{name: my-resource, resourceClaimName: my-pod-my-resource}]}\n"

struct drx {
    struct vfx x;
    void *self;
    struct ks_cycle_state cs;
    char buf[VFX_MSG];
};

static void drx_open(struct drx *d, const char *yaml)
{
    vfx_open(&d->x, yaml);
    d->self = vfx_plugin(&d->x, dr);
    ks_cycle_state_init(&d->cs);
}

static void drx_close(struct drx *d)
{
    vfx_unlock(&d->x);
    ks_cycle_state_destroy(&d->cs);
    dr->destroy(d->self);
    vfx_close(&d->x);
}

static const char *pre_enqueue(struct drx *d, const char *pod)
{
    struct ks_status st = {0};
    int code = dr->pre_enqueue(d->self, vfx_pod(&d->x, "default", pod), &st);
    return vfx_status(code, &st, d->buf, sizeof(d->buf));
}

static const char *pre_filter(struct drx *d, const char *pod)
{
    struct ks_pre_filter_result res;
    ks_cycle_state_reset(&d->cs);
    return vfx_pre_filter(dr, d->self, &d->cs, vfx_pod(&d->x, "default", pod), &res, d->buf);
}

static const char *filter(struct drx *d, const char *pod, const char *node)
{
    return vfx_filter(dr, d->self, &d->cs, vfx_pod(&d->x, "default", pod), vfx_node(&d->x, node), d->buf);
}

/* Filter on @node, then the plugin's account of its failure for --explain ("-": none). */
static const char *explain(struct drx *d, const char *pod, const char *node)
{
    struct ks_status st = {0};
    const struct ks_pod *p = vfx_pod(&d->x, "default", pod);
    const struct ks_node_snap *n = vfx_node(&d->x, node);
    dr->filter(d->self, &d->cs, p, n, &st);
    if (dr->explain_filter(d->self, &d->cs, p, n, &st, d->buf, sizeof(d->buf)) != 1)
        snprintf(d->buf, sizeof(d->buf), "-");
    return d->buf;
}

static const char *post_filter(struct drx *d, const char *pod, const char *failed_node)
{
    const struct ks_node_snap *nodes[1];
    struct ks_status statuses[1] = {{.code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE}};
    struct ks_diagnosis diag = {.nall = 2, .nodes = nodes, .statuses = statuses};
    struct ks_post_filter_result res = {.nominated_node = KS_ID_EMPTY};
    struct ks_status st = {0};

    if (failed_node) {
        nodes[0] = vfx_node(&d->x, failed_node);
        statuses[0].plugin = 0; /* the plugin's slot in these tests */
        diag.nfailed = 1;
    }
    int code = dr->post_filter(d->self, &d->cs, vfx_pod(&d->x, "default", pod), &diag, &res, &st);
    vfx_unlock(&d->x);
    return vfx_status(code, &st, d->buf, sizeof(d->buf));
}

static const char *reserve(struct drx *d, const char *pod, const char *node)
{
    struct ks_status st = {0};
    vfx_unlock(&d->x);
    int code = dr->reserve(d->self, &d->cs, vfx_pod(&d->x, "default", pod), ks_intern(node), &st);
    return vfx_status(code, &st, d->buf, sizeof(d->buf));
}

static const char *pre_bind(struct drx *d, struct ks_cycle_state *cs, const char *pod, const char *node)
{
    struct ks_status st = {0};
    int code = dr->pre_bind(d->self, cs, vfx_pod(&d->x, "default", pod), ks_intern(node), &st);
    return vfx_status(code, &st, d->buf, sizeof(d->buf));
}

Test(dynamicresources, a_pod_without_claims_is_skipped)
{
    struct drx d;
    drx_open(&d, NODES "---\napiVersion: v1\nkind: Pod\nmetadata: {name: foo, namespace: default}\n"
                       "spec: {containers: [{name: c}]}\n");
    cr_expect_str_eq(pre_enqueue(&d, "foo"), "Success");
    cr_expect_str_eq(pre_filter(&d, "foo"), "Skip");
    cr_expect_str_eq(post_filter(&d, "foo", NULL), "Unschedulable: no new claims to deallocate");
    drx_close(&d);
}

Test(dynamicresources, pre_enqueue_waits_for_the_claims_as_upstream)
{
    struct drx d;
    drx_open(&d, NODES CLASS POD_WITH_TEMPLATE(""));
    cr_expect_str_eq(pre_enqueue(&d, "my-pod"), UU "pod \"default/my-pod\": ResourceClaim not created yet");
    cr_expect_str_eq(pre_filter(&d, "my-pod"), UU "pod \"default/my-pod\": ResourceClaim not created yet");
    drx_close(&d);

    drx_open(&d, NODES CLASS POD_WITH_TEMPLATE(TEMPLATE_STATUS));
    cr_expect_str_eq(pre_enqueue(&d, "my-pod"),
                     UU "could not find ResourceClaim \"default/my-pod-my-resource\"");
    drx_close(&d);

    drx_open(&d, NODES CLASS CLAIM("my-pod-my-resource",
                                   OWNED_BY_POD ", deletionTimestamp: '2026-01-01T00:00:00Z'")
                     POD_WITH_TEMPLATE(TEMPLATE_STATUS));
    cr_expect_str_eq(pre_enqueue(&d, "my-pod"), UU "resourceclaim \"my-pod-my-resource\" is being deleted");
    drx_close(&d);

    drx_open(&d, NODES CLASS CLAIM("my-pod-my-resource", ", ownerReferences: [{apiVersion: v1, kind: Pod, "
                                                         "name: my-pod, uid: '1234123', controller: true}]")
                     POD_WITH_TEMPLATE(TEMPLATE_STATUS));
    cr_expect_str_eq(
        pre_enqueue(&d, "my-pod"), UU
        "ResourceClaim default/my-pod-my-resource was not created for pod default/my-pod (pod is not owner)");
    drx_close(&d);

    drx_open(&d, NODES CLASS SLICE("worker") CLAIM("my-pod-my-resource", OWNED_BY_POD)
                     POD_WITH_TEMPLATE(TEMPLATE_STATUS));
    cr_expect_str_eq(pre_enqueue(&d, "my-pod"), "Success");
    cr_expect_str_eq(pre_filter(&d, "my-pod"), "Success");
    cr_expect_str_eq(filter(&d, "my-pod", "worker"), "Success");
    drx_close(&d);
}

/*
 * A claim ksched serve's intake announced but the scheduling thread has not applied yet: the
 * tracker is behind, so PreEnqueue cannot tell and lets the pod through; PreFilter syncs and
 * finds it. Once the tracker has caught up, a missing claim keeps its pod waiting again.
 */
Test(dynamicresources, a_claim_announced_but_not_taken_in_lets_the_pod_through)
{
    struct drx d;
    drx_open(&d, NODES CLASS SLICE("worker") POD_WITH_CLAIM("my-pod", "1234", "late-claim")
                     POD_WITH_CLAIM("other-pod", "5678", "never-claim"));
    cr_expect_str_eq(pre_enqueue(&d, "my-pod"), UU "could not find ResourceClaim \"default/late-claim\"");
    ks_objects_note_queued(d.x.objs, KS_KIND_RESOURCE_CLAIM);
    cr_expect_str_eq(pre_enqueue(&d, "my-pod"), "Success");
    struct ks_objects *more = vfx_load(CLAIM("late-claim", ""));
    cr_assert(ks_objects_push(d.x.objs, KS_KIND_RESOURCE_CLAIM, more->of[KS_KIND_RESOURCE_CLAIM].items[0]) ==
              0);
    more->of[KS_KIND_RESOURCE_CLAIM].n = 0;
    ks_objects_destroy(more);
    d.x.objs->gen[KS_KIND_RESOURCE_CLAIM]++;
    cr_expect_str_eq(pre_filter(&d, "my-pod"), "Success");
    cr_expect_str_eq(filter(&d, "my-pod", "worker"), "Success");
    cr_expect_str_eq(pre_enqueue(&d, "other-pod"), UU "could not find ResourceClaim \"default/never-claim\"");
    drx_close(&d);
}

Test(dynamicresources, a_missing_class_rejects_the_pod_at_pre_filter)
{
    struct drx d;
    drx_open(&d, NODES CLAIM("my-claim", "") POD_WITH_CLAIM("my-pod", "1234", "my-claim"));
    cr_expect_str_eq(pre_filter(&d, "my-pod"),
                     UU "request req-1: device class my-resource-class does not exist");
    drx_close(&d);
}

Test(dynamicresources, filter_allocates_per_node)
{
    struct drx d;
    drx_open(&d, NODES CLASS CLAIM("my-claim", "") POD_WITH_CLAIM("my-pod", "1234", "my-claim"));
    cr_expect_str_eq(pre_filter(&d, "my-pod"), "Success");
    cr_expect_str_eq(filter(&d, "my-pod", "worker"), UU "cannot allocate all claims");
    cr_expect_str_eq(post_filter(&d, "my-pod", "worker"), "Unschedulable: still not schedulable");
    drx_close(&d);

    drx_open(&d,
             NODES CLASS SLICE("worker") CLAIM("my-claim", "") POD_WITH_CLAIM("my-pod", "1234", "my-claim"));
    cr_expect_str_eq(pre_filter(&d, "my-pod"), "Success");
    cr_expect_str_eq(filter(&d, "my-pod", "worker"), "Success");
    cr_expect_str_eq(filter(&d, "my-pod", "worker-2"), UU "cannot allocate all claims");
    cr_expect_str_eq(
        explain(&d, "my-pod", "worker-2"),
        "claim default/my-claim, request req-1: 1 device of class my-resource-class wanted, the node "
        "has no devices");
    cr_expect_str_eq(explain(&d, "my-pod", "worker"), "-");
    drx_close(&d);
}

Test(dynamicresources, an_allocated_claim_limits_the_nodes_and_is_deallocated_when_it_blocks)
{
    struct drx d;
    drx_open(&d, NODES CLASS SLICE("worker") ALLOCATED("my-claim", "worker", "", "")
                     POD_WITH_CLAIM("my-pod", "1234", "my-claim"));
    cr_expect_str_eq(pre_filter(&d, "my-pod"), "Success");
    cr_expect_str_eq(filter(&d, "my-pod", "worker"), "Success");
    cr_expect_str_eq(filter(&d, "my-pod", "worker-2"), UU "resourceclaim not available on the node");
    cr_expect_str_eq(post_filter(&d, "my-pod", "worker-2"),
                     "Unschedulable: deallocation of ResourceClaim completed");
    /* deallocated: the next attempt allocates afresh */
    cr_expect_str_eq(pre_filter(&d, "my-pod"), "Success");
    cr_expect_str_eq(filter(&d, "my-pod", "worker"), "Success");
    cr_expect_str_eq(filter(&d, "my-pod", "worker-2"), UU "cannot allocate all claims");
    drx_close(&d);
}

Test(dynamicresources, a_claim_reserved_for_another_pod_is_not_deallocated)
{
    struct drx d;
    drx_open(&d, NODES CLASS SLICE("worker") ALLOCATED(
                     "my-claim", "worker", "", ", reservedFor: [{resource: pods, name: other, uid: '999'}]")
                     POD_WITH_CLAIM("my-pod", "1234", "my-claim"));
    cr_expect_str_eq(pre_filter(&d, "my-pod"), "Success");
    cr_expect_str_eq(filter(&d, "my-pod", "worker-2"), UU "resourceclaim not available on the node");
    cr_expect_str_eq(post_filter(&d, "my-pod", "worker-2"), "Unschedulable: still not schedulable");
    drx_close(&d);
}

Test(dynamicresources, reserve_prebind_and_unreserve_move_the_devices)
{
    struct drx d;
    drx_open(&d, NODES CLASS SLICE("worker") CLAIM("claim-a", "") CLAIM("claim-b", "")
                     POD_WITH_CLAIM("pod-a", "a", "claim-a") POD_WITH_CLAIM("pod-b", "b", "claim-b")
                         POD_WITH_CLAIM("pod-c", "c", "claim-a"));
    /* pod-a takes worker's only device */
    cr_expect_str_eq(pre_filter(&d, "pod-a"), "Success");
    cr_expect_str_eq(filter(&d, "pod-a", "worker"), "Success");
    cr_expect_str_eq(reserve(&d, "pod-a", "worker"), "Success");
    struct ks_cycle_state a = d.cs;
    ks_cycle_state_init(&d.cs);

    /* in flight: claim-a is being allocated, and its device is taken */
    cr_expect_str_eq(pre_filter(&d, "pod-c"),
                     UU "resource claim default/claim-a is in the process of being allocated");
    cr_expect_str_eq(pre_filter(&d, "pod-b"), "Success");
    cr_expect_str_eq(filter(&d, "pod-b", "worker"), UU "cannot allocate all claims");
    cr_expect_str_eq(explain(&d, "pod-b", "worker"),
                     "claim default/claim-b, request req-1: 1 device of class "
                     "my-resource-class wanted, 0 of 1 usable (1 in use)");
    vfx_unlock(&d.x);

    /* written: claim-a is allocated and reserved for pod-a; pod-c shares it on worker only */
    cr_expect_str_eq(pre_bind(&d, &a, "pod-a", "worker"), "Success");
    cr_expect_str_eq(pre_filter(&d, "pod-c"), "Success");
    cr_expect_str_eq(filter(&d, "pod-c", "worker"), "Success");
    cr_expect_str_eq(filter(&d, "pod-c", "worker-2"), UU "resourceclaim not available on the node");
    cr_expect_str_eq(pre_filter(&d, "pod-b"), "Success");
    cr_expect_str_eq(filter(&d, "pod-b", "worker"), UU "cannot allocate all claims");
    vfx_unlock(&d.x);
    ks_cycle_state_destroy(&a);
    drx_close(&d);
}

Test(dynamicresources, unreserve_ends_an_in_flight_allocation)
{
    struct drx d;
    drx_open(&d, NODES CLASS SLICE("worker") CLAIM("claim-a", "") CLAIM("claim-b", "")
                     POD_WITH_CLAIM("pod-a", "a", "claim-a") POD_WITH_CLAIM("pod-b", "b", "claim-b"));
    cr_expect_str_eq(pre_filter(&d, "pod-a"), "Success");
    cr_expect_str_eq(filter(&d, "pod-a", "worker"), "Success");
    cr_expect_str_eq(reserve(&d, "pod-a", "worker"), "Success");
    dr->unreserve(d.self, &d.cs, vfx_pod(&d.x, "default", "pod-a"), ks_intern("worker"));
    cr_expect_str_eq(pre_filter(&d, "pod-b"), "Success");
    cr_expect_str_eq(filter(&d, "pod-b", "worker"), "Success");
    cr_expect_str_eq(pre_filter(&d, "pod-a"), "Success", "claim-a is no longer in flight");
    drx_close(&d);
}

Test(dynamicresources, a_claim_reserved_for_256_pods_is_in_use)
{
    char *yaml = malloc(64 * 1024);
    size_t len = 0;
    struct drx d;

    len += (size_t)snprintf(yaml + len, 64 * 1024 - len, "%s", NODES CLASS SLICE("worker"));
    len += (size_t)snprintf(yaml + len, 64 * 1024 - len, "%s",
                            ALLOCATED("my-claim", "worker", "", ", reservedFor: [RESERVED]"));
    char *r = strstr(yaml, "RESERVED");
    char list[48 * 1024];
    size_t l = 0;
    for (int i = 0; i < 256; i++)
        l += (size_t)snprintf(list + l, sizeof(list) - l, "%s{resource: pods, name: p%d, uid: u%d}",
                              i ? ", " : "", i, i);
    memmove(r + l, r + 8, strlen(r + 8) + 1);
    memcpy(r, list, l);
    len = strlen(yaml);
    snprintf(yaml + len, 64 * 1024 - len, "%s%s", POD_WITH_CLAIM("my-pod", "1234", "my-claim"),
             POD_WITH_CLAIM("p7", "u7", "my-claim"));
    drx_open(&d, yaml);
    cr_expect_str_eq(pre_filter(&d, "my-pod"), UU "resourceclaim in use");
    cr_expect_str_eq(pre_filter(&d, "p7"), "Success", "a pod it is reserved for may use it");
    drx_close(&d);
    free(yaml);
}

/* ---- extended resources backed by devices (DRAExtendedResource) ------------------------------- */

/*
 * Cases of upstream's TestPlugin for extended resources ("extended-resource-name-*",
 * "implicit-extended-resource-name-*") and the special claim's life in process: Reserve puts
 * its devices in flight, PreBind creates it, a later cycle of the same pod finds it stale.
 */
#define GPU_CLASS                                                                                            \
    "---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: my-resource-class}\n"          \
    "spec: {extendedResourceName: example.com/gpu}\n"
#define GPU_NODE(name, gpus)                                                                                 \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: " name "}\n"                                          \
    "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'" gpus "}}\n"
#define GPU_POD(name, uid, reqs)                                                                             \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: default, uid: '" uid "'}\n"       \
    "spec: {containers: [{name: c, resources: {requests: {" reqs "}, limits: {" reqs "}}}]}\n"

Test(dynamicresources, an_extended_resource_is_allocated_from_devices_where_the_node_offers_none)
{
    struct drx d;
    drx_open(&d,
             GPU_NODE("worker", "") GPU_NODE("worker-2", "") GPU_NODE("plugin", ", example.com/gpu: '1'")
                 GPU_CLASS SLICE("worker") GPU_POD("my-pod", "1234", "example.com/gpu: '1'")
                     GPU_POD("implicit", "5678", "deviceclass.resource.kubernetes.io/my-resource-class: '1'")
                         GPU_POD("plain", "9", "cpu: 1"));
    cr_expect_str_eq(pre_filter(&d, "my-pod"), "Success");
    cr_expect_str_eq(filter(&d, "my-pod", "worker"), "Success");
    cr_expect_str_eq(filter(&d, "my-pod", "worker-2"), UU "cannot allocate all claims");
    cr_expect_str_eq(filter(&d, "my-pod", "plugin"), "Success",
                     "the device plugin's count is NodeResourcesFit's");
    vfx_unlock(&d.x);
    cr_expect_str_eq(post_filter(&d, "my-pod", "worker-2"), "Unschedulable: still not schedulable");
    cr_expect_str_eq(pre_filter(&d, "implicit"), "Success");
    cr_expect_str_eq(filter(&d, "implicit", "worker"), "Success");
    cr_expect_str_eq(filter(&d, "implicit", "worker-2"), UU "cannot allocate all claims");
    vfx_unlock(&d.x);
    cr_expect_str_eq(pre_filter(&d, "plain"), "Skip");
    drx_close(&d);
}

Test(dynamicresources, a_resource_no_class_backs_must_be_offered_by_the_node)
{
    struct drx d;
    drx_open(&d,
             GPU_NODE("worker", "") GPU_NODE("worker-2", ", example.com/nic: '1'") GPU_CLASS SLICE("worker")
                 SLICE("worker-2") GPU_POD("my-pod", "1234", "example.com/gpu: '1', example.com/nic: '1'"));
    cr_expect_str_eq(pre_filter(&d, "my-pod"), "Success");
    cr_expect_str_eq(filter(&d, "my-pod", "worker"), UU "cannot fit resource");
    cr_expect_str_eq(filter(&d, "my-pod", "worker-2"), "Success");
    vfx_unlock(&d.x);
    drx_close(&d);
}

Test(dynamicresources, the_special_claim_is_in_flight_then_created_then_stale)
{
    struct drx d;
    drx_open(&d, GPU_NODE("worker", "") GPU_NODE("worker-2", "") GPU_CLASS SLICE("worker") GPU_POD(
                     "pod-a", "a", "example.com/gpu: '1'") GPU_POD("pod-b", "b", "example.com/gpu: '1'"));
    cr_expect_str_eq(pre_filter(&d, "pod-a"), "Success");
    cr_expect_str_eq(filter(&d, "pod-a", "worker"), "Success");
    cr_expect_str_eq(reserve(&d, "pod-a", "worker"), "Success");
    struct ks_cycle_state a = d.cs;
    ks_cycle_state_init(&d.cs);

    /* in flight: worker's only device is taken */
    cr_expect_str_eq(pre_filter(&d, "pod-b"), "Success");
    cr_expect_str_eq(filter(&d, "pod-b", "worker"), UU "cannot allocate all claims");
    vfx_unlock(&d.x);

    /* created, allocated and reserved for pod-a: still taken */
    cr_expect_str_eq(pre_bind(&d, &a, "pod-a", "worker"), "Success");
    cr_expect_str_eq(pre_filter(&d, "pod-b"), "Success");
    cr_expect_str_eq(filter(&d, "pod-b", "worker"), UU "cannot allocate all claims");
    vfx_unlock(&d.x);

    /* pod-a scheduled again (its binding failed): its claim is stale, deleted by PostFilter */
    cr_expect_str_eq(pre_filter(&d, "pod-a"), "Success");
    cr_expect_str_eq(filter(&d, "pod-a", "worker"), UU "cannot schedule extended resource claim");
    cr_expect_str_eq(filter(&d, "pod-a", "worker-2"), UU "cannot schedule extended resource claim");
    vfx_unlock(&d.x);
    cr_expect_str_eq(post_filter(&d, "pod-a", "worker"),
                     "Unschedulable: deletion of ResourceClaim completed");
    cr_expect_str_eq(pre_filter(&d, "pod-b"), "Success");
    cr_expect_str_eq(filter(&d, "pod-b", "worker"), "Success", "the deleted claim's device is free");
    cr_expect_str_eq(pre_filter(&d, "pod-a"), "Success");
    cr_expect_str_eq(filter(&d, "pod-a", "worker"), "Success", "no stale claim is left");
    vfx_unlock(&d.x);
    ks_cycle_state_destroy(&a);
    drx_close(&d);
}

Test(dynamicresources, unreserve_frees_the_special_claims_devices)
{
    struct drx d;
    drx_open(&d, GPU_NODE("worker", "") GPU_CLASS SLICE("worker") GPU_POD(
                     "pod-a", "a", "example.com/gpu: '1'") GPU_POD("pod-b", "b", "example.com/gpu: '1'"));
    for (int created = 0; created < 2; created++) {
        cr_expect_str_eq(pre_filter(&d, "pod-a"), "Success");
        cr_expect_str_eq(filter(&d, "pod-a", "worker"), "Success");
        cr_expect_str_eq(reserve(&d, "pod-a", "worker"), "Success");
        if (created)
            cr_expect_str_eq(pre_bind(&d, &d.cs, "pod-a", "worker"), "Success");
        dr->unreserve(d.self, &d.cs, vfx_pod(&d.x, "default", "pod-a"), ks_intern("worker"));
        dr->unreserve(d.self, &d.cs, vfx_pod(&d.x, "default", "pod-a"), ks_intern("worker")); /* idempotent */
        cr_expect_str_eq(pre_filter(&d, "pod-b"), "Success");
        cr_expect_str_eq(filter(&d, "pod-b", "worker"), "Success", "created: %d", created);
        vfx_unlock(&d.x);
    }
    drx_close(&d);
}

/*
 * NodeResourcesFit's side (upstream's TestEnoughRequests rows "extended resource backed by
 * DRA", "... NOT backed by DRA", "... was backed by Device Plugin (Allocatable: 0)"): a
 * resource a class backs is not checked on a node whose allocatable offers none of it.
 */
Test(dynamicresources, node_resources_fit_leaves_backed_resources_to_devices)
{
    const struct ks_plugin *fit = &ks_plugin_node_resources_fit;
    struct drx d;
    drx_open(&d, GPU_NODE("none", "") GPU_NODE("zero", ", example.com/gpu: '0'")
                     GPU_NODE("one", ", example.com/gpu: '1'")
                         GPU_CLASS GPU_POD("dra", "1", "example.com/gpu: '2'")
                             GPU_POD("unbacked", "2", "example.com/bbb: '1'"));
    void *self = vfx_plugin(&d.x, fit);
    struct ks_pre_filter_result res;

    ks_cycle_state_reset(&d.cs);
    cr_expect_str_eq(vfx_pre_filter(fit, self, &d.cs, vfx_pod(&d.x, "default", "dra"), &res, d.buf),
                     "Success");
    const char *node_names[] = {"none", "zero"};
    for (int i = 0; i < 2; i++)
        cr_expect_str_eq(vfx_filter(fit, self, &d.cs, vfx_pod(&d.x, "default", "dra"),
                                    vfx_node(&d.x, node_names[i]), d.buf),
                         "Success", "%s", node_names[i]);
    cr_expect_str_eq(
        vfx_filter(fit, self, &d.cs, vfx_pod(&d.x, "default", "dra"), vfx_node(&d.x, "one"), d.buf),
        UU "Insufficient example.com/gpu", "a node that offers some is checked as always");
    ks_cycle_state_reset(&d.cs);
    cr_expect_str_eq(vfx_pre_filter(fit, self, &d.cs, vfx_pod(&d.x, "default", "unbacked"), &res, d.buf),
                     "Success");
    cr_expect_str_eq(
        vfx_filter(fit, self, &d.cs, vfx_pod(&d.x, "default", "unbacked"), vfx_node(&d.x, "none"), d.buf),
        UU "Insufficient example.com/bbb");
    vfx_unlock(&d.x);
    fit->destroy(self);
    drx_close(&d);
}
