/*
 * test_volume_binding.c - the VolumeBinding plugin's scheduling ops (plugins/volume_binding.c;
 * its args are tested with the configuration).
 *
 * Cases from upstream's volumebinding/volume_binding_test.go (TestVolumeBinding) with their
 * exact PreFilter statuses, PreFilter results and per-node Filter statuses; the score
 * columns of the capacity cases are not ported, since the StorageCapacityScoring gate is off
 * by default and PreScore returns Skip (asserted). Test storage classes without a
 * provisioner use kubernetes.io/no-provisioner, which ksched requires and which is just as
 * unprovisionable. Then binder.go behaviours from binder_test.go's FindPodVolumes and
 * AssumePodVolumes tables in ksched's words (prebound PVs, smallest fit with each PV chosen
 * once, dynamic provisioning with allowedTopologies, the selected-node fast path, ephemeral
 * claims), and the in-process Reserve / Unreserve / PreBind cycle.
 */
#include "ksched/registry.h"
#include "test_volume_fixtures.h"

TestSuite(volumebinding, .init = vfx_setup, .fini = vfx_teardown);

static const struct ks_plugin *const vb = &ks_plugin_volume_binding;

#define BIND_CONFLICT "node(s) didn't find available persistent volumes to bind"
#define NODE_CONFLICT "node(s) didn't match PersistentVolume's node affinity"
#define PV_MISSING    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
#define UU            "UnschedulableAndUnresolvable: "

#define SC(name, mode, prov)                                                                                 \
    "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: " name "}\n"                   \
    "provisioner: " prov "\nvolumeBindingMode: " mode "\n"
#define CLASSES                                                                                              \
    SC("immediate-sc", "Immediate", "kubernetes.io/no-provisioner")                                          \
    SC("wait-sc", "WaitForFirstConsumer", "kubernetes.io/no-provisioner")                                    \
    SC("wait-hdd-sc", "WaitForFirstConsumer", "kubernetes.io/no-provisioner")

/* makePVC(name, class)[.withRequestStorage(req)] */
#define PVC(name, sc, req)                                                                                   \
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " name ", namespace: default}\n"     \
    "spec: {storageClassName: " sc ", resources: {requests: {storage: " req "}}}\n"
/* makePVC(name, class).withBoundPV(pv): volumeName and the bind-completed annotation */
#define PVC_BOUND(name, sc, pv)                                                                              \
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " name ", namespace: default, "      \
    "annotations: {pv.kubernetes.io/bind-completed: 'true'}}\n"                                              \
    "spec: {storageClassName: " sc ", volumeName: " pv "}\n"
/* makePV(name, class).withPhase(phase).withCapacity(cap)[.withNodeAffinity(...)] */
#define PV(name, sc, phase, cap, affinity)                                                                   \
    "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: " name "}\n"                              \
    "spec: {storageClassName: " sc ", capacity: {storage: " cap "}, accessModes: [ReadWriteOnce]" affinity   \
    "}\nstatus: {phase: " phase "}\n"
#define AFFINITY(exprs) ", nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [" exprs "]}]}}"
#define HOST(n)         AFFINITY("{key: kubernetes.io/hostname, operator: In, values: [" n "]}")
/* makeNode(name): the hostname label is the node's name */
#define NODE(name, labels)                                                                                   \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: " name ", labels: {kubernetes.io/hostname: " name     \
    ", " labels "}}\n"
#define POD(volumes)                                                                                         \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: pod-a, namespace: default, uid: pod-a-uid}\n"          \
    "spec: {containers: [{name: c}], volumes: [" volumes "]}\n"
#define CLAIM(name) "{name: v-" name ", persistentVolumeClaim: {claimName: " name "}}"

#define MAX_NODES 6

struct vb_case {
    const char *name;
    const char *yaml; /* cluster with the pending pod "default/pod-a" */
    const char *pre;
    const char *result; /* PreFilter's node names, space separated; NULL: all nodes */
    const char *nodes[MAX_NODES];
    const char *want[MAX_NODES]; /* Filter per node */
};

static void run_case(const struct vb_case *c)
{
    struct vfx x;
    char buf[VFX_MSG];
    vfx_open(&x, c->yaml);
    void *self = vfx_plugin(&x, vb);
    struct ks_cycle_state cs = {0};
    struct ks_pre_filter_result res;
    const struct ks_pod *pod = vfx_pod(&x, "default", "pod-a");

    cr_expect(eq(str, (char *)vfx_pre_filter(vb, self, &cs, pod, &res, buf), (char *)c->pre), "%s: PreFilter",
              c->name);
    char names[256] = "";
    for (uint32_t i = 0; !res.all && i < res.n; i++) {
        strcat(names, i ? " " : "");
        strcat(names, ks_intern_str(res.names[i]));
    }
    if (c->result) {
        cr_expect(res.all == false, "%s: PreFilterResult narrows", c->name);
        cr_expect(eq(str, names, (char *)c->result), "%s: PreFilterResult", c->name);
    } else
        cr_expect(res.all, "%s: PreFilterResult narrows to \"%s\"", c->name, names);
    if (strcmp(c->pre, "Success") == 0) {
        for (int i = 0; i < MAX_NODES && c->nodes[i]; i++) {
            const struct ks_node_snap *node = vfx_node(&x, c->nodes[i]);
            cr_expect(eq(str, (char *)vfx_filter(vb, self, &cs, pod, node, buf), (char *)c->want[i]),
                      "%s: Filter on %s", c->name, c->nodes[i]);
        }
        struct ks_status st = {0};
        cr_expect(eq(int, vb->pre_score(self, &cs, pod, NULL, 0, &st), KS_SKIP), "%s: PreScore", c->name);
    }
    ks_arena_destroy(&cs.arena);
    vb->destroy(self);
    vfx_close(&x);
}

Test(volumebinding, upstream_volume_binding)
{
    static const struct vb_case cases[] = {
        {"pod has not pvcs", CLASSES NODE("node-a", "") POD(""), "Skip", NULL, {NULL}, {NULL}},
        {"all bound",
         CLASSES NODE("node-a", "") PVC_BOUND("pvc-a", "wait-sc", "pv-a")
             PV("pv-a", "wait-sc", "Available", "1Gi", "") POD(CLAIM("pvc-a")),
         "Success",
         NULL,
         {"node-a"},
         {"Success"}},
        {"all bound with local volumes",
         CLASSES NODE("node-a", "") PVC_BOUND("pvc-a", "wait-sc", "pv-a")
             PVC_BOUND("pvc-b", "wait-sc", "pv-b") PV("pv-a", "wait-sc", "Bound", "1Gi", HOST("node-a")) PV(
                 "pv-b", "wait-sc", "Bound", "1Gi", HOST("node-a")) POD(CLAIM("pvc-a") ", " CLAIM("pvc-b")),
         "Success",
         "node-a",
         {"node-a"},
         {"Success"}},
        {"immediate claims not bound",
         CLASSES NODE("node-a", "") PVC("pvc-a", "immediate-sc", "1Gi") POD(CLAIM("pvc-a")),
         UU "pod has unbound immediate PersistentVolumeClaims",
         NULL,
         {NULL},
         {NULL}},
        {"unbound claims no matches",
         CLASSES NODE("node-a", "") PVC("pvc-a", "wait-sc", "1Gi") POD(CLAIM("pvc-a")),
         "Success",
         NULL,
         {"node-a"},
         {UU BIND_CONFLICT}},
        {"bound and unbound unsatisfied",
         CLASSES NODE("node-a", "foo: barbar") PVC_BOUND("pvc-a", "wait-sc", "pv-a")
             PVC("pvc-b", "wait-sc", "1Gi") PV("pv-a", "wait-sc", "Available", "1Gi",
                                               AFFINITY("{key: foo, operator: In, values: [bar]}"))
                 POD(CLAIM("pvc-a") ", " CLAIM("pvc-b")),
         "Success",
         NULL,
         {"node-a"},
         {UU NODE_CONFLICT "; " BIND_CONFLICT}},
        {"pv not found",
         CLASSES NODE("node-a", "") PVC_BOUND("pvc-a", "wait-sc", "pv-a") POD(CLAIM("pvc-a")),
         "Success",
         NULL,
         {"node-a"},
         {UU PV_MISSING}},
        {"pv not found claim lost",
         CLASSES NODE("node-a",
                      "") "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: pvc-a, "
                          "namespace: default, "
                          "annotations: {pv.kubernetes.io/bind-completed: 'true'}}\n"
                          "spec: {storageClassName: wait-sc, volumeName: pv-a}\nstatus: {phase: Lost}\n" POD(
                              CLAIM("pvc-a")),
         UU "persistentvolumeclaim \"pvc-a\" bound to non-existent persistentvolume \"pv-a\"",
         NULL,
         {NULL},
         {NULL}},
        {"local volumes with close capacity are preferred",
         CLASSES NODE("node-a", "") NODE("node-b", "") NODE("node-c", "") PVC("pvc-a", "wait-sc", "50Gi")
             PV("pv-a-0", "wait-sc", "Available", "200Gi", HOST("node-a"))
                 PV("pv-a-1", "wait-sc", "Available", "200Gi", HOST("node-a"))
                     PV("pv-b-0", "wait-sc", "Available", "100Gi", HOST("node-b"))
                         PV("pv-b-1", "wait-sc", "Available", "100Gi", HOST("node-b")) POD(CLAIM("pvc-a")),
         "Success",
         NULL,
         {"node-a", "node-b", "node-c"},
         {"Success", "Success", UU BIND_CONFLICT}},
        {"local volumes with close capacity are preferred (multiple pvcs)",
         CLASSES NODE("node-a", "") NODE("node-b", "") NODE("node-c", "") PVC("pvc-0", "wait-sc", "50Gi") PVC(
             "pvc-1", "wait-hdd-sc", "100Gi") PV("pv-a-0", "wait-sc", "Available", "200Gi", HOST("node-a"))
             PV("pv-a-1", "wait-sc", "Available", "200Gi", HOST("node-a"))
                 PV("pv-a-2", "wait-hdd-sc", "Available", "200Gi", HOST("node-a"))
                     PV("pv-a-3", "wait-hdd-sc", "Available", "200Gi", HOST("node-a"))
                         PV("pv-b-0", "wait-sc", "Available", "100Gi", HOST("node-b"))
                             PV("pv-b-1", "wait-sc", "Available", "100Gi", HOST("node-b"))
                                 PV("pv-b-2", "wait-hdd-sc", "Available", "100Gi", HOST("node-b"))
                                     PV("pv-b-3", "wait-hdd-sc", "Available", "100Gi", HOST("node-b"))
                                         POD(CLAIM("pvc-0") ", " CLAIM("pvc-1")),
         "Success",
         NULL,
         {"node-a", "node-b", "node-c"},
         {"Success", "Success", UU BIND_CONFLICT}},
        {"zonal volumes with close capacity are preferred",
         CLASSES NODE("zone-a-node-a", "topology.kubernetes.io/region: region-a, "
                                       "topology.kubernetes.io/zone: zone-a")
             NODE("zone-a-node-b", "topology.kubernetes.io/region: region-a, topology.kubernetes.io/zone: "
                                   "zone-a") NODE("zone-b-node-a", "topology.kubernetes.io/region: region-b, "
                                                                   "topology.kubernetes.io/zone: zone-b")
                 NODE("zone-b-node-b",
                      "topology.kubernetes.io/region: region-b, topology.kubernetes.io/zone: "
                      "zone-b") NODE("zone-c-node-a", "topology.kubernetes.io/region: region-c, "
                                                      "topology.kubernetes.io/zone: zone-c")
                     NODE("zone-c-node-b",
                          "topology.kubernetes.io/region: region-c, topology.kubernetes.io/zone: zone-c")
                         PVC("pvc-a", "wait-sc", "50Gi") PV(
                             "pv-a-0", "wait-sc", "Available", "200Gi",
                             AFFINITY(
                                 "{key: topology.kubernetes.io/region, operator: In, values: [region-a]}, "
                                 "{key: topology.kubernetes.io/zone, operator: In, values: [zone-a]}"))
                             PV("pv-a-1", "wait-sc", "Available", "200Gi",
                                AFFINITY("{key: topology.kubernetes.io/region, operator: In, values: "
                                         "[region-a]}, {key: topology.kubernetes.io/zone, operator: In, "
                                         "values: [zone-a]}"))
                                 PV("pv-b-0", "wait-sc", "Available", "100Gi",
                                    AFFINITY("{key: topology.kubernetes.io/region, operator: In, values: "
                                             "[region-b]}, {key: topology.kubernetes.io/zone, operator: "
                                             "In, values: [zone-b]}"))
                                     PV("pv-b-1", "wait-sc", "Available", "100Gi",
                                        AFFINITY("{key: topology.kubernetes.io/region, operator: In, "
                                                 "values: [region-b]}, {key: topology.kubernetes.io/zone, "
                                                 "operator: In, values: [zone-b]}")) POD(CLAIM("pvc-a")),
         "Success",
         NULL,
         {"zone-a-node-a", "zone-a-node-b", "zone-b-node-a", "zone-b-node-b", "zone-c-node-a",
          "zone-c-node-b"},
         {"Success", "Success", "Success", "Success", UU BIND_CONFLICT, UU BIND_CONFLICT}},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run_case(&cases[i]);
}

/* PVC does not exist / Part of PVCs do not exist / pvc not found: the loader rejects such pods. */
Test(volumebinding, upstream_missing_claims)
{
    static const struct {
        const char *name;
        const char *yaml;
        const char *claims[2];
        const char *want;
    } cases[] = {
        {"PVC does not exist",
         CLASSES NODE("node-a", ""),
         {"pvc-a", NULL},
         UU "persistentvolumeclaim \"pvc-a\" not found"},
        {"Part of PVCs do not exist",
         CLASSES NODE("node-a", "") PVC_BOUND("pvc-a", "wait-sc", "pv-a"),
         {"pvc-a", "pvc-b"},
         UU "persistentvolumeclaim \"pvc-b\" not found"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct vfx x;
        char buf[VFX_MSG];
        vfx_open(&x, cases[i].yaml);
        void *self = vfx_plugin(&x, vb);
        struct ks_pod *pod = ks_fake_pod("default", "pod-a");
        for (int k = 0; k < 2 && cases[i].claims[k]; k++)
            vfx_volume(pod, KS_VOLUME_PVC, cases[i].claims[k], cases[i].claims[k], false);
        struct ks_cycle_state cs = {0};
        struct ks_pre_filter_result res;
        cr_expect(eq(str, (char *)vfx_pre_filter(vb, self, &cs, pod, &res, buf), (char *)cases[i].want), "%s",
                  cases[i].name);
        ks_arena_destroy(&cs.arena);
        ks_pod_destroy(pod);
        vb->destroy(self);
        vfx_close(&x);
    }
}

#define PROV_SC                                                                                              \
    "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: csi-sc}\n"                     \
    "provisioner: csi.example.com\nvolumeBindingMode: WaitForFirstConsumer\nallowedTopologies:\n"            \
    "- matchLabelExpressions: [{key: topology.kubernetes.io/zone, values: [zone-a]}]\n"
#define ZONE_NODES                                                                                           \
    NODE("node-a", "topology.kubernetes.io/zone: zone-a")                                                    \
    NODE("node-b", "topology.kubernetes.io/zone: zone-b")

/* binder.go: prebinding, matching, provisioning and the selected-node fast path. */
Test(volumebinding, find_pod_volumes)
{
    static const struct vb_case cases[] = {
        {"prebound PV decides alone, even when not Available",
         CLASSES ZONE_NODES PVC("pvc-a", "wait-sc", "1Gi") PV(
             "pv-small", "wait-sc", "Available", "1Gi",
             "") "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-pre}\n"
                 "spec: {storageClassName: wait-sc, capacity: {storage: 5Gi}, accessModes: [ReadWriteOnce], "
                 "claimRef: {namespace: default, name: pvc-a}" HOST(
                     "node-b") "}\nstatus: {phase: Pending}\n" POD(CLAIM("pvc-a")),
         "Success",
         NULL,
         {"node-a", "node-b"},
         {UU BIND_CONFLICT, "Success"}},
        {"a PV claimed by another claim is not taken",
         CLASSES ZONE_NODES PVC(
             "pvc-a", "wait-sc",
             "1Gi") "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-other}\n"
                    "spec: {storageClassName: wait-sc, capacity: {storage: 5Gi}, accessModes: "
                    "[ReadWriteOnce], "
                    "claimRef: {namespace: default, name: pvc-other}}\nstatus: {phase: Available}\n" POD(
                        CLAIM("pvc-a")),
         "Success",
         NULL,
         {"node-a"},
         {UU BIND_CONFLICT}},
        {"too small, wrong access mode, wrong volume mode, wrong selector",
         CLASSES ZONE_NODES
         "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: pvc-a, namespace: default}\n"
         "spec: {storageClassName: wait-sc, accessModes: [ReadWriteMany], resources: {requests: {storage: "
         "2Gi}}, "
         "selector: {matchLabels: {tier: gold}}}\n"
         "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-small, labels: {tier: gold}}\n"
         "spec: {storageClassName: wait-sc, capacity: {storage: 1Gi}, accessModes: [ReadWriteMany]}\n"
         "status: {phase: Available}\n"
         "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-rwo, labels: {tier: gold}}\n"
         "spec: {storageClassName: wait-sc, capacity: {storage: 5Gi}, accessModes: [ReadWriteOnce]}\n"
         "status: {phase: Available}\n"
         "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-block, labels: {tier: gold}}\n"
         "spec: {storageClassName: wait-sc, capacity: {storage: 5Gi}, accessModes: [ReadWriteMany], "
         "volumeMode: Block}\nstatus: {phase: Available}\n"
         "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-silver, labels: {tier: silver}}\n"
         "spec: {storageClassName: wait-sc, capacity: {storage: 5Gi}, accessModes: [ReadWriteMany]}\n"
         "status: {phase: Available}\n" POD(CLAIM("pvc-a")),
         "Success",
         NULL,
         {"node-a"},
         {UU BIND_CONFLICT}},
        {"two claims cannot share one PV",
         CLASSES ZONE_NODES PVC("pvc-a", "wait-sc", "1Gi") PVC("pvc-b", "wait-sc", "1Gi")
             PV("pv-a", "wait-sc", "Available", "1Gi", HOST("node-a"))
                 PV("pv-b1", "wait-sc", "Available", "1Gi", HOST("node-b"))
                     PV("pv-b2", "wait-sc", "Available", "1Gi", HOST("node-b"))
                         POD(CLAIM("pvc-a") ", " CLAIM("pvc-b")),
         "Success",
         NULL,
         {"node-a", "node-b"},
         {UU BIND_CONFLICT, "Success"}},
        {"dynamic provisioning within allowedTopologies",
         PROV_SC ZONE_NODES PVC("pvc-a", "csi-sc", "1Gi") POD(CLAIM("pvc-a")),
         "Success",
         NULL,
         {"node-a", "node-b"},
         {"Success", UU BIND_CONFLICT}},
        {"a static PV first, provisioning for the rest",
         PROV_SC ZONE_NODES PVC("pvc-a", "csi-sc", "1Gi") PVC("pvc-b", "csi-sc", "1Gi")
             PV("pv-b", "csi-sc", "Available", "1Gi", HOST("node-b")) POD(CLAIM("pvc-a") ", " CLAIM("pvc-b")),
         "Success",
         NULL,
         {"node-a", "node-b"},
         {"Success", UU BIND_CONFLICT}},
        {"selected node: only that node",
         PROV_SC ZONE_NODES
         "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: pvc-a, namespace: default, "
         "annotations: {volume.kubernetes.io/selected-node: node-b}}\n"
         "spec: {storageClassName: csi-sc, resources: {requests: {storage: 1Gi}}}\n" POD(CLAIM("pvc-a")),
         "Success",
         NULL,
         {"node-a", "node-b"},
         {UU BIND_CONFLICT, UU BIND_CONFLICT}},
        {"selected node matching and provisionable",
         PROV_SC ZONE_NODES
         "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: pvc-a, namespace: default, "
         "annotations: {volume.kubernetes.io/selected-node: node-a}}\n"
         "spec: {storageClassName: csi-sc, resources: {requests: {storage: 1Gi}}}\n" POD(CLAIM("pvc-a")),
         "Success",
         NULL,
         {"node-a", "node-b"},
         {"Success", UU BIND_CONFLICT}},
        {"prebound claim (volumeName without bind-completed) is immediate",
         CLASSES ZONE_NODES
         "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: pvc-a, namespace: default}\n"
         "spec: {storageClassName: wait-sc, volumeName: pv-a}\n" PV("pv-a", "wait-sc", "Available", "1Gi", "")
             POD(CLAIM("pvc-a")),
         UU "pod has unbound immediate PersistentVolumeClaims",
         NULL,
         {NULL},
         {NULL}},
        {"local PVs of two nodes leave none",
         CLASSES ZONE_NODES PVC_BOUND("pvc-a", "wait-sc", "pv-a") PVC_BOUND("pvc-b", "wait-sc", "pv-b")
             PV("pv-a", "wait-sc", "Bound", "1Gi", HOST("node-a")) PV(
                 "pv-b", "wait-sc", "Bound", "1Gi", HOST("node-b")) POD(CLAIM("pvc-a") ", " CLAIM("pvc-b")),
         "Success",
         "",
         {"node-a", "node-b"},
         {UU NODE_CONFLICT, UU NODE_CONFLICT}},
        {"a bound PV in a zone does not narrow",
         CLASSES ZONE_NODES PVC_BOUND("pvc-a", "wait-sc", "pv-a")
             PV("pv-a", "wait-sc", "Bound", "1Gi",
                AFFINITY("{key: topology.kubernetes.io/zone, operator: In, values: [zone-b]}"))
                 POD(CLAIM("pvc-a")),
         "Success",
         NULL,
         {"node-a", "node-b"},
         {UU NODE_CONFLICT, "Success"}},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run_case(&cases[i]);
}

#define OWNED_CLAIM(owner_uid)                                                                               \
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: pod-a-scratch, namespace: default, " \
    "ownerReferences: [{apiVersion: v1, kind: Pod, name: pod-a, uid: " owner_uid ", controller: true}]}\n"   \
    "spec: {storageClassName: csi-sc, resources: {requests: {storage: 1Gi}}}\n"
#define EPHEMERAL "{name: scratch, ephemeral: {volumeClaimTemplate: {spec: {}}}}"

Test(volumebinding, ephemeral_volumes)
{
    static const struct vb_case cases[] = {
        {"the pod's own claim <pod>-<volume>",
         PROV_SC ZONE_NODES OWNED_CLAIM("pod-a-uid") POD(EPHEMERAL),
         "Success",
         NULL,
         {"node-a", "node-b"},
         {"Success", UU BIND_CONFLICT}},
        {"a claim the pod does not own",
         PROV_SC ZONE_NODES OWNED_CLAIM("someone-else") POD(EPHEMERAL),
         UU "PVC default/pod-a-scratch was not created for pod default/pod-a (pod is not owner)",
         NULL,
         {NULL},
         {NULL}},
        {"not created yet",
         PROV_SC ZONE_NODES POD(EPHEMERAL),
         UU "waiting for ephemeral volume controller to create the persistentvolumeclaim \"pod-a-scratch\"",
         NULL,
         {NULL},
         {NULL}},
        {"being deleted",
         PROV_SC ZONE_NODES
         "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: pvc-a, namespace: default, "
         "deletionTimestamp: '2024-01-01T00:00:00Z'}\nspec: {storageClassName: csi-sc}\n" POD(CLAIM("pvc-a")),
         UU "persistentvolumeclaim \"pvc-a\" is being deleted",
         NULL,
         {NULL},
         {NULL}},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run_case(&cases[i]);
}

#define TWO_PODS_ONE_PV                                                                                      \
    CLASSES ZONE_NODES PVC("pvc-a", "wait-sc", "1Gi") PVC("pvc-b", "wait-sc", "1Gi")                         \
        PV("pv-1", "wait-sc", "Available", "1Gi",                                                            \
           "") "---\napiVersion: v1\nkind: Pod\nmetadata: {name: pod-a, namespace: default}\n"               \
               "spec: {containers: [{name: c}], volumes: [" CLAIM(                                           \
                   "pvc-a") "]}\n"                                                                           \
                            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: pod-b, namespace: default}\n"  \
                            "spec: {containers: [{name: c}], volumes: [" CLAIM("pvc-b") "]}\n"

/* Reserve assumes the PV: the next pod's claim cannot take it; Unreserve gives it back. */
Test(volumebinding, reserve_assumes_and_unreserve_reverts)
{
    struct vfx x;
    char buf[VFX_MSG];
    vfx_open(&x, TWO_PODS_ONE_PV);
    void *self = vfx_plugin(&x, vb);
    const struct ks_pod *a = vfx_pod(&x, "default", "pod-a"), *b = vfx_pod(&x, "default", "pod-b");
    struct ks_cycle_state cs_a = {0}, cs_b = {0};
    struct ks_pre_filter_result res;

    cr_assert(eq(int, vfx_cycle_to_reserve(vb, self, &x, a, "node-a", &cs_a), KS_SUCCESS));
    cr_expect(eq(str, (char *)vfx_pre_filter(vb, self, &cs_b, b, &res, buf), "Success"));
    cr_expect(eq(str, (char *)vfx_filter(vb, self, &cs_b, b, vfx_node(&x, "node-a"), buf), UU BIND_CONFLICT),
              "pv-1 is assumed for pvc-a");
    ks_arena_reset(&cs_b.arena);
    memset(cs_b.slot, 0, sizeof(cs_b.slot));

    vb->unreserve(self, &cs_a, a, ks_intern("node-a"));
    vb->unreserve(self, &cs_a, a, ks_intern("node-a")); /* idempotent */
    cr_expect(eq(str, (char *)vfx_pre_filter(vb, self, &cs_b, b, &res, buf), "Success"));
    cr_expect(eq(str, (char *)vfx_filter(vb, self, &cs_b, b, vfx_node(&x, "node-a"), buf), "Success"),
              "pv-1 free again");
    ks_arena_destroy(&cs_a.arena);
    ks_arena_destroy(&cs_b.arena);
    vb->destroy(self);
    vfx_close(&x);
}

/* PreBind binds in process: the claim is bound afterwards and pins later pods to the PV's node. */
Test(volumebinding, pre_bind_binds_the_claim)
{
    struct vfx x;
    char buf[VFX_MSG];
    vfx_open(
        &x,
        CLASSES ZONE_NODES PVC("pvc-a", "wait-sc", "1Gi") PV(
            "pv-1", "wait-sc", "Available", "1Gi",
            HOST("node-b")) "---\napiVersion: v1\nkind: Pod\nmetadata: {name: pod-a, namespace: default}\n"
                            "spec: {containers: [{name: c}], volumes: [" CLAIM(
                                "pvc-a") "]}\n"
                                         "---\napiVersion: v1\nkind: Pod\nmetadata: {name: pod-c, namespace: "
                                         "default}\n"
                                         "spec: {containers: [{name: c}], volumes: [" CLAIM("pvc-a") "]}\n");
    void *self = vfx_plugin(&x, vb);
    const struct ks_pod *a = vfx_pod(&x, "default", "pod-a"), *c = vfx_pod(&x, "default", "pod-c");
    struct ks_cycle_state cs_a = {0}, cs_c = {0};
    struct ks_pre_filter_result res;
    struct ks_status st = {0};

    cr_assert(eq(int, vfx_cycle_to_reserve(vb, self, &x, a, "node-b", &cs_a), KS_SUCCESS));
    cr_expect(eq(int, vb->pre_bind(self, &cs_a, a, ks_intern("node-b"), &st), KS_SUCCESS));
    vb->unreserve(self, &cs_a, a, ks_intern("node-b")); /* after a successful bind: no effect */

    cr_expect(eq(str, (char *)vfx_pre_filter(vb, self, &cs_c, c, &res, buf), "Success"));
    cr_expect(res.all == false && res.n == 1 && res.names[0] == ks_intern("node-b"),
              "pv-1 is local to node-b");
    cr_expect(eq(str, (char *)vfx_filter(vb, self, &cs_c, c, vfx_node(&x, "node-a"), buf), UU NODE_CONFLICT));
    cr_expect(eq(str, (char *)vfx_filter(vb, self, &cs_c, c, vfx_node(&x, "node-b"), buf), "Success"));
    vfx_unlock(&x);
    /* every claim bound: Reserve assumes nothing and PreBind has nothing to do */
    cr_expect(eq(int, vb->reserve(self, &cs_c, c, ks_intern("node-b"), &st), KS_SUCCESS));
    cr_expect(eq(int, vb->pre_bind(self, &cs_c, c, ks_intern("node-b"), &st), KS_SUCCESS));
    ks_arena_destroy(&cs_a.arena);
    ks_arena_destroy(&cs_c.arena);
    vb->destroy(self);
    vfx_close(&x);
}

/* A provisioned claim keeps its selected node: a second pod sharing it follows. */
Test(volumebinding, provisioned_claim_keeps_the_selected_node)
{
    struct vfx x;
    char buf[VFX_MSG];
    vfx_open(&x,
             PROV_SC NODE("node-a", "topology.kubernetes.io/zone: zone-a")
                 NODE("node-a2", "topology.kubernetes.io/zone: zone-a") PVC(
                     "pvc-a", "csi-sc",
                     "1Gi") "---\napiVersion: v1\nkind: Pod\nmetadata: {name: pod-a, namespace: default}\n"
                            "spec: {containers: [{name: c}], volumes: [" CLAIM(
                                "pvc-a") "]}\n"
                                         "---\napiVersion: v1\nkind: Pod\nmetadata: {name: pod-c, namespace: "
                                         "default}\n"
                                         "spec: {containers: [{name: c}], volumes: [" CLAIM("pvc-a") "]}\n");
    void *self = vfx_plugin(&x, vb);
    const struct ks_pod *a = vfx_pod(&x, "default", "pod-a"), *c = vfx_pod(&x, "default", "pod-c");
    struct ks_cycle_state cs_a = {0}, cs_c = {0};
    struct ks_pre_filter_result res;
    struct ks_status st = {0};

    cr_assert(eq(int, vfx_cycle_to_reserve(vb, self, &x, a, "node-a2", &cs_a), KS_SUCCESS));
    cr_expect(eq(int, vb->pre_bind(self, &cs_a, a, ks_intern("node-a2"), &st), KS_SUCCESS));
    cr_expect(eq(str, (char *)vfx_pre_filter(vb, self, &cs_c, c, &res, buf), "Success"));
    cr_expect(eq(str, (char *)vfx_filter(vb, self, &cs_c, c, vfx_node(&x, "node-a"), buf), UU BIND_CONFLICT));
    cr_expect(eq(str, (char *)vfx_filter(vb, self, &cs_c, c, vfx_node(&x, "node-a2"), buf), "Success"));
    ks_arena_destroy(&cs_a.arena);
    ks_arena_destroy(&cs_c.arena);
    vb->destroy(self);
    vfx_close(&x);
}

/* Reserve without PreFilter state (a pod without claims) and PreBind before Reserve. */
Test(volumebinding, reserve_and_pre_bind_edges)
{
    struct vfx x;
    vfx_open(&x, CLASSES ZONE_NODES POD(""));
    void *self = vfx_plugin(&x, vb);
    const struct ks_pod *pod = vfx_pod(&x, "default", "pod-a");
    struct ks_cycle_state cs = {0};
    struct ks_status st = {0};
    cr_expect(eq(int, vb->reserve(self, &cs, pod, ks_intern("node-a"), &st), KS_SUCCESS));
    cr_expect(eq(int, vb->pre_bind(self, &cs, pod, ks_intern("node-a"), &st), KS_SUCCESS));
    vb->unreserve(self, &cs, pod, ks_intern("node-a"));
    int64_t score = -1;
    cr_expect(eq(int, vb->score(self, &cs, pod, NULL, &score, &st), KS_SUCCESS));
    cr_expect(eq(i64, score, 0));
    vb->destroy(self);
    vfx_close(&x);
}
