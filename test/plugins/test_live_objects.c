/*
 * test_live_objects.c - the storage plugins and the namespace index follow objects added
 * after they were created, as `ksched serve` adds them between cycles (loader.h gen): a
 * claim created after the scheduler started is found by the next PreFilter, as upstream's
 * listers find it. Each case first asserts the plugin's verdict without the object, then
 * adds it (test/fakes/live_objects.h) and asserts the next cycle sees it.
 */
#include "fakes/live_objects.h"
#include "ksched/plugin_helpers_topology.h"
#include "ksched/plugin_helpers_volumes.h"
#include "ksched/registry.h"
#include "test_volume_fixtures.h"

TestSuite(live_objects, .init = vfx_setup, .fini = vfx_teardown);

#define UU "UnschedulableAndUnresolvable: "

#define WAIT_SC                                                                                              \
    "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: wait-sc}\n"                    \
    "provisioner: kubernetes.io/no-provisioner\nvolumeBindingMode: WaitForFirstConsumer\n"
#define LATE_PVC(name)                                                                                       \
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " name ", namespace: default}\n"     \
    "spec: {storageClassName: wait-sc, accessModes: [ReadWriteOnce], resources: {requests: {storage: "       \
    "1Gi}}}\n"
#define LATE_PV(name, host)                                                                                  \
    "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: " name "}\n"                              \
    "spec: {storageClassName: wait-sc, capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], "             \
    "nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, "       \
    "operator: In, values: [" host "]}]}]}}}\nstatus: {phase: Available}\n"
#define NODES                                                                                                \
    VFX_NODE("node-a", "kubernetes.io/hostname: node-a")                                                     \
    VFX_NODE("node-b", "kubernetes.io/hostname: "                                                            \
                       "node-b")

/* A pending pod "default/<name>" with one persistentVolumeClaim volume of @claim. */
static struct ks_pod *claim_pod(const char *name, const char *claim)
{
    struct ks_pod *pod = ks_fake_pod("default", name);
    ks_fake_container(pod, "cpu=100m");
    vfx_volume(pod, KS_VOLUME_PVC, "data", claim, false);
    return ks_fake_pod_done(pod);
}

static void reset(struct ks_cycle_state *cs)
{
    ks_arena_reset(&cs->arena);
    memset(cs->slot, 0, sizeof(cs->slot));
}

/* PreFilter then Filter on @node: the first non-Success status as text, or "Success". */
static const char *cycle(const struct ks_plugin *p, void *self, struct vfx *x, struct ks_cycle_state *cs,
                         const struct ks_pod *pod, const char *node, char *buf)
{
    struct ks_pre_filter_result res;
    reset(cs);
    const char *pre = vfx_pre_filter(p, self, cs, pod, &res, buf);
    if (strcmp(pre, "Success") != 0)
        return pre;
    return vfx_filter(p, self, cs, pod, vfx_node(x, node), buf);
}

/* The StatefulSet case: the claim and its PV appear after the plugins were created. */
/* @before / @after: the cycle's status without / with the objects (after: Skip when the
 * plugin has nothing to check for the found claim). */
static void claim_created_late(const struct ks_plugin *p, const char *before, const char *after)
{
    struct vfx x;
    char buf[VFX_MSG];
    vfx_open(&x, NODES WAIT_SC);
    void *self = vfx_plugin(&x, p);
    struct ks_pod *pod = claim_pod("web-0", "data-web-0");
    struct ks_cycle_state cs = {0};

    cr_expect(eq(str, (char *)cycle(p, self, &x, &cs, pod, "node-a", buf), (char *)before), "%s: before",
              p->name);
    vfx_unlock(&x);
    cr_assert(eq(int, ks_live_add(x.objs, LATE_PVC("data-web-0") LATE_PV("pv-a", "node-a")), 0));
    cr_expect(eq(str, (char *)cycle(p, self, &x, &cs, pod, "node-a", buf), (char *)after), "%s: after",
              p->name);
    vfx_unlock(&x);
    ks_arena_destroy(&cs.arena);
    ks_pod_put(pod);
    p->destroy(self);
    vfx_close(&x);
}

Test(live_objects, volume_binding_finds_a_late_claim)
{
    claim_created_late(&ks_plugin_volume_binding, UU "persistentvolumeclaim \"data-web-0\" not found",
                       "Success");
}

Test(live_objects, volume_restrictions_finds_a_late_claim)
{
    claim_created_late(&ks_plugin_volume_restrictions, UU "persistentvolumeclaim \"data-web-0\" not found",
                       "Skip");
}

Test(live_objects, volume_zone_finds_a_late_claim)
{
    claim_created_late(&ks_plugin_volume_zone, UU "persistentvolumeclaim \"data-web-0\" not found", "Skip");
}

Test(live_objects, node_volume_limits_finds_a_late_claim)
{
    claim_created_late(&ks_plugin_node_volume_limits,
                       UU "looking up PVC default/data-web-0: persistentvolumeclaim \"data-web-0\" not found",
                       "Success");
}

Test(live_objects, ebs_limits_finds_a_late_claim)
{
    claim_created_late(
        &ks_plugin_ebs_limits,
        "Error: looking up PVC default/data-web-0: persistentvolumeclaim \"data-web-0\" not found",
        "Success");
}

/* The late PV's node affinity is read too: node-b is refused once the PV exists. */
Test(live_objects, volume_binding_reads_the_late_pv)
{
    struct vfx x;
    char buf[VFX_MSG];
    const struct ks_plugin *vb = &ks_plugin_volume_binding;
    vfx_open(&x, NODES WAIT_SC LATE_PVC("data-web-0"));
    void *self = vfx_plugin(&x, vb);
    struct ks_pod *pod = claim_pod("web-0", "data-web-0");
    struct ks_cycle_state cs = {0};

    cr_expect(eq(str, (char *)cycle(vb, self, &x, &cs, pod, "node-b", buf),
                 UU "node(s) didn't find available persistent volumes to bind"));
    vfx_unlock(&x);
    cr_assert(eq(int, ks_live_add(x.objs, LATE_PV("pv-a", "node-a")), 0));
    cr_expect(eq(str, (char *)cycle(vb, self, &x, &cs, pod, "node-a", buf), "Success"));
    cr_expect(eq(str, (char *)vfx_filter(vb, self, &cs, pod, vfx_node(&x, "node-b"), buf),
                 UU "node(s) didn't find available persistent volumes to bind"));
    vfx_unlock(&x);
    ks_arena_destroy(&cs.arena);
    ks_pod_put(pod);
    vb->destroy(self);
    vfx_close(&x);
}

/*
 * A pod reserved before the index was rebuilt binds afterwards (PreBind on a binder finds
 * its claim and PV again by key), and the binding survives later rebuilds: the next pod of
 * the claim is pinned to the PV's node, and the PV is not offered to another claim.
 */
Test(live_objects, volume_binding_binds_across_a_rebuild)
{
    struct vfx x;
    char buf[VFX_MSG];
    const struct ks_plugin *vb = &ks_plugin_volume_binding;
    vfx_open(&x, NODES WAIT_SC LATE_PVC("data-web-0") LATE_PV("pv-a", "node-a"));
    void *self = vfx_plugin(&x, vb);
    struct ks_pod *a = claim_pod("web-0", "data-web-0"), *b = claim_pod("web-0b", "data-web-0");
    struct ks_pod *other = claim_pod("web-1", "data-web-1");
    struct ks_cycle_state cs_a = {0}, cs = {0};
    struct ks_status st = {0};

    cr_assert(eq(str, (char *)cycle(vb, self, &x, &cs_a, a, "node-a", buf), "Success"));
    vfx_unlock(&x);
    cr_assert(eq(int, vb->reserve(self, &cs_a, a, ks_intern("node-a"), &st), KS_SUCCESS));
    /* a claim and a PV arrive; another pod's PreFilter rebuilds the index */
    cr_assert(eq(int, ks_live_add(x.objs, LATE_PVC("data-web-1") LATE_PV("pv-b", "node-b")), 0));
    cr_expect(eq(str, (char *)cycle(vb, self, &x, &cs, other, "node-b", buf), "Success"));
    cr_expect(eq(str, (char *)vfx_filter(vb, self, &cs, other, vfx_node(&x, "node-a"), buf),
                 UU "node(s) didn't find available persistent volumes to bind"),
              "pv-a stays assumed for data-web-0 across the rebuild");
    vfx_unlock(&x);
    cr_expect(eq(int, vb->pre_bind(self, &cs_a, a, ks_intern("node-a"), &st), KS_SUCCESS));
    /* one more rebuild after the binding */
    cr_assert(eq(int, ks_live_add(x.objs, LATE_PVC("data-web-2")), 0));
    struct ks_pre_filter_result res;
    reset(&cs);
    cr_expect(eq(str, (char *)vfx_pre_filter(vb, self, &cs, b, &res, buf), "Success"));
    cr_expect(res.all == false && res.n == 1 && res.names[0] == ks_intern("node-a"),
              "data-web-0 is bound to pv-a, local to node-a");
    ks_arena_destroy(&cs_a.arena);
    ks_arena_destroy(&cs.arena);
    ks_pod_put(a);
    ks_pod_put(b);
    ks_pod_put(other);
    vb->destroy(self);
    vfx_close(&x);
}

/* Nothing changed: no rebuild (the index keeps its tables). */
Test(live_objects, unchanged_objects_keep_the_index)
{
    struct vfx x;
    vfx_open(&x, NODES WAIT_SC LATE_PVC("data-web-0"));
    struct ks_vol_index ix;
    cr_assert(eq(int, ks_vol_index_build(&ix, x.objs), 0));
    const struct ks_vol_entry *items = ix.pvcs.items;
    cr_expect(eq(int, ks_vol_index_refresh(&ix, x.objs), 0));
    cr_expect(ix.pvcs.items == items);
    x.objs->gen[KS_KIND_POD]++; /* a kind the index does not hold */
    cr_expect(eq(int, ks_vol_index_refresh(&ix, x.objs), 0));
    cr_assert(eq(int, ks_live_add(x.objs, LATE_PVC("data-web-1")), 0));
    cr_expect(eq(int, ks_vol_index_refresh(&ix, x.objs), 1));
    cr_expect(eq(u32, ix.pvcs.n, 2));
    cr_expect(ks_vol_find_pvc(&ix, ks_intern("default"), "data-web-1") != NULL);
    ks_vol_index_destroy(&ix);
    vfx_close(&x);
}

/* The namespace lister: a Namespace created later is found with its labels. */
Test(live_objects, namespace_index_follows_new_namespaces)
{
    struct vfx x;
    vfx_open(&x, NODES "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: early, labels: {team: a}}\n");
    struct ks_ns_index idx;
    cr_assert(eq(int, ks_ns_index_build(&idx, x.objs), 0));
    cr_expect(ks_ns_index_find(&idx, ks_intern("late")) == NULL);
    cr_expect(eq(int, ks_ns_index_refresh(&idx), 0));
    cr_assert(eq(int,
                 ks_live_add(x.objs, "---\napiVersion: v1\nkind: Namespace\n"
                                     "metadata: {name: late, labels: {team: b}}\n"),
                 0));
    cr_expect(eq(int, ks_ns_index_refresh(&idx), 1));
    const struct ks_labels *l = ks_ns_index_find(&idx, ks_intern("late"));
    cr_assert(l != NULL && l->n == 1);
    cr_expect(ks_ns_index_find(&idx, ks_intern("early")) != NULL);
    cr_expect(eq(int, ks_ns_index_refresh(&idx), 0));
    ks_ns_index_destroy(&idx);
    struct ks_ns_index none;
    cr_assert(eq(int, ks_ns_index_build(&none, NULL), 0));
    cr_expect(eq(int, ks_ns_index_refresh(&none), 0));
    ks_ns_index_destroy(&none);
    vfx_close(&x);
}

/*
 * InterPodAffinity resolves a namespaceSelector through the namespace index: the pod that
 * satisfies web's affinity runs in namespace "late", which web's term selects only once the
 * Namespace object (team: b) exists.
 */
Test(live_objects, inter_pod_affinity_sees_a_late_namespace)
{
    struct vfx x;
    char buf[VFX_MSG];
    const struct ks_plugin *ipa = &ks_plugin_inter_pod_affinity;
    vfx_open(&x, NODES
             "---\napiVersion: v1\nkind: Pod\nmetadata: {name: db, namespace: late, labels: {app: db}}\n"
             "spec: {nodeName: node-a, containers: [{name: c}]}\n"
             "---\napiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: default}\n"
             "spec: {containers: [{name: c}], affinity: {podAffinity: "
             "{requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: db}}, "
             "namespaceSelector: {matchLabels: {team: b}}, topologyKey: kubernetes.io/hostname}]}}}\n");
    void *self = vfx_plugin(&x, ipa);
    const struct ks_pod *web = vfx_pod(&x, "default", "web");
    struct ks_cycle_state cs = {0};

    cr_expect(eq(str, (char *)cycle(ipa, self, &x, &cs, web, "node-a", buf),
                 "UnschedulableAndUnresolvable: node(s) didn't match pod affinity rules"));
    vfx_unlock(&x);
    cr_assert(eq(int,
                 ks_live_add(x.objs, "---\napiVersion: v1\nkind: Namespace\n"
                                     "metadata: {name: late, labels: {team: b}}\n"),
                 0));
    cr_expect(eq(str, (char *)cycle(ipa, self, &x, &cs, web, "node-a", buf), "Success"));
    cr_expect(eq(str, (char *)vfx_filter(ipa, self, &cs, web, vfx_node(&x, "node-b"), buf),
                 "UnschedulableAndUnresolvable: node(s) didn't match pod affinity rules"));
    vfx_unlock(&x);
    ks_arena_destroy(&cs.arena);
    ipa->destroy(self);
    vfx_close(&x);
}

/* A PV whose claimRef names a claim that does not exist yet is prebound to it once it does. */
Test(live_objects, volume_binding_prebinds_to_a_late_claim)
{
    struct vfx x;
    char buf[VFX_MSG];
    const struct ks_plugin *vb = &ks_plugin_volume_binding;
    vfx_open(&x, NODES WAIT_SC LATE_PV(
                     "pv-b", "node-b") "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-a}\n"
                                       "spec: {storageClassName: wait-sc, capacity: {storage: 1Gi}, "
                                       "accessModes: [ReadWriteOnce], "
                                       "claimRef: {namespace: default, name: data-web-0}, nodeAffinity: "
                                       "{required: {nodeSelectorTerms: "
                                       "[{matchExpressions: [{key: kubernetes.io/hostname, operator: In, "
                                       "values: [node-a]}]}]}}}\n"
                                       "status: {phase: Available}\n");
    void *self = vfx_plugin(&x, vb);
    struct ks_pod *pod = claim_pod("web-0", "data-web-0");
    struct ks_cycle_state cs = {0};

    cr_assert(eq(int, ks_live_add(x.objs, LATE_PVC("data-web-0")), 0));
    cr_expect(eq(str, (char *)cycle(vb, self, &x, &cs, pod, "node-a", buf), "Success"));
    cr_expect(eq(str, (char *)vfx_filter(vb, self, &cs, pod, vfx_node(&x, "node-b"), buf),
                 UU "node(s) didn't find available persistent volumes to bind"),
              "pv-a is prebound to the claim and decides alone");
    vfx_unlock(&x);
    ks_arena_destroy(&cs.arena);
    ks_pod_put(pod);
    vb->destroy(self);
    vfx_close(&x);
}
