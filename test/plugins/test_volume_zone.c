/*
 * test_volume_zone.c - the VolumeZone plugin (plugins/volume_zone.c).
 *
 * Cases from upstream's volumezone/volume_zone_test.go (TestSingleZone, TestMultiZone,
 * TestWithBinding) with their exact statuses, but two: a missing StorageClass reads
 * `storageclass.storage.k8s.io "Class_0" not found` (the real lister's NotFound; upstream's
 * fake lister says "storageclasses"), and "Class_Immediate" has volumeBindingMode
 * Immediate, as the API server defaults it (upstream's fake leaves it nil and gets
 * "VolumeBindingMode not set"), so an unbound claim of it reads "PersistentVolume had no name".
 */
#include "ksched/registry.h"
#include "test_volume_fixtures.h"

TestSuite(volumezone, .init = vfx_setup, .fini = vfx_teardown);

static const struct ks_plugin *const vz = &ks_plugin_volume_zone;

#define CONFLICT "UnschedulableAndUnresolvable: node(s) had no available volume zone"

#define PV(name, labels)                                                                                     \
    "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: " name ", labels: {" labels "}}\n"        \
    "spec: {capacity: {storage: 1Gi}}\n"
#define PVC_BOUND(name, pv)                                                                                  \
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " name ", namespace: default}\n"     \
    "spec: {volumeName: " pv "}\n"
#define PVC_CLASS(name, cls)                                                                                 \
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " name ", namespace: default}\n"     \
    "spec: {storageClassName: " cls "}\n"
#define PVC_NOCLASS(name)                                                                                    \
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " name ", namespace: default}\n"     \
    "spec: {}\n"
#define SC(name, mode)                                                                                       \
    "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: " name "}\n"                   \
    "provisioner: kubernetes.io/no-provisioner\nvolumeBindingMode: " mode "\n"

#define BZ "failure-domain.beta.kubernetes.io/zone"
#define BR "failure-domain.beta.kubernetes.io/region"
#define GZ "topology.kubernetes.io/zone"
#define GR "topology.kubernetes.io/region"

#define SINGLE_ZONE_OBJECTS                                                                                  \
    PV("Vol_1", BZ ": us-west1-a")                                                                           \
    PV("Vol_2", BR ": us-west1, uselessLabel: none")                                                         \
    PV("Vol_3", BR ": us-west1")                                                                             \
    PV("Vol_Stable_1", GZ ": us-west1-a")                                                                    \
    PV("Vol_Stable_2", GR ": us-west1, uselessLabel: none")                                                  \
    PV("Vol_Stable_3", GZ ": us-west1-a, " GR ": us-west1-a")                                                \
    PVC_BOUND("PVC_1", "Vol_1")                                                                              \
    PVC_BOUND("PVC_2", "Vol_2")                                                                              \
    PVC_BOUND("PVC_3", "Vol_3")                                                                              \
    PVC_BOUND("PVC_4", "Vol_not_exist")                                                                      \
    PVC_BOUND("PVC_Stable_1", "Vol_Stable_1")                                                                \
    PVC_BOUND("PVC_Stable_2", "Vol_Stable_2")                                                                \
    PVC_BOUND("PVC_Stable_3", "Vol_Stable_3")

#define MULTI_ZONE_OBJECTS                                                                                   \
    PV("Vol_1", BZ ": us-west1-a")                                                                           \
    PV("Vol_2", BZ ": us-west1-b, uselessLabel: none")                                                       \
    PV("Vol_3", BZ ": us-west1-c__us-west1-a")                                                               \
    PV("Vol_Stable_1", GZ ": us-west1-a")                                                                    \
    PV("Vol_Stable_2", GZ ": us-west1-c__us-west1-a")                                                        \
    PVC_BOUND("PVC_1", "Vol_1")                                                                              \
    PVC_BOUND("PVC_2", "Vol_2")                                                                              \
    PVC_BOUND("PVC_3", "Vol_3")                                                                              \
    PVC_BOUND("PVC_4", "Vol_not_exist")                                                                      \
    PVC_BOUND("PVC_Stable_1", "Vol_Stable_1")                                                                \
    PVC_BOUND("PVC_Stable_2", "Vol_Stable_2")

#define WITH_BINDING_OBJECTS                                                                                 \
    SC("Class_Immediate", "Immediate")                                                                       \
    SC("Class_Wait", "WaitForFirstConsumer")                                                                 \
    PV("Vol_1", BZ ": us-west1-a")                                                                           \
    PVC_BOUND("PVC_1", "Vol_1")                                                                              \
    PVC_CLASS("PVC_NoSC", "Class_0")                                                                         \
    PVC_NOCLASS("PVC_EmptySC")                                                                               \
    PVC_CLASS("PVC_WaitSC", "Class_Wait")                                                                    \
    PVC_CLASS("PVC_ImmediateSC", "Class_Immediate")

struct zone_case {
    const char *name;
    const char *claim;       /* the pod's persistentVolumeClaim, NULL: no volume */
    const char *node_labels; /* flow-map body */
    const char *pre;         /* PreFilter status */
    const char *want;        /* Filter status when PreFilter succeeded */
};

static void run_zone_cases(const char *objects, const struct zone_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct zone_case *c = &cases[i];
        char yaml[8192], buf[VFX_MSG];
        snprintf(yaml, sizeof(yaml),
                 "%s---\napiVersion: v1\nkind: Node\nmetadata: {name: host1, labels: {%s}}\n"
                 "---\napiVersion: v1\nkind: Pod\nmetadata: {name: pod_1, namespace: default}\n"
                 "spec: {containers: [{name: c}], volumes: [%s%s%s]}\n",
                 objects, c->node_labels, c->claim ? "{name: v, persistentVolumeClaim: {claimName: " : "",
                 c->claim ? c->claim : "", c->claim ? "}}" : "");
        struct vfx x;
        vfx_open(&x, yaml);
        void *self = vfx_plugin(&x, vz);
        struct ks_cycle_state cs = {0};
        struct ks_pre_filter_result res;
        const struct ks_pod *pod = vfx_pod(&x, "default", "pod_1");
        const struct ks_node_snap *node = vfx_node(&x, "host1");
        cr_expect(eq(str, (char *)vfx_pre_filter(vz, self, &cs, pod, &res, buf), (char *)c->pre),
                  "%s: PreFilter", c->name);
        if (strcmp(c->pre, "Success") == 0)
            cr_expect(eq(str, (char *)vfx_filter(vz, self, &cs, pod, node, buf), (char *)c->want),
                      "%s: Filter", c->name);
        ks_arena_destroy(&cs.arena);
        vz->destroy(self);
        vfx_close(&x);
    }
}

Test(volumezone, upstream_single_zone)
{
    static const struct zone_case cases[] = {
        {"pod without volume", NULL, BZ ": us-west1-a", "Skip", NULL},
        {"node without labels", "PVC_1", "", "Success", "Success"},
        {"beta zone label matched", "PVC_1", BZ ": us-west1-a, uselessLabel: none", "Success", "Success"},
        {"beta region label matched", "PVC_2", BR ": us-west1, uselessLabel: none", "Success", "Success"},
        {"beta region label doesn't match", "PVC_2", BR ": no_us-west1, uselessLabel: none", "Success",
         CONFLICT},
        {"beta zone label doesn't match", "PVC_1", BZ ": no_us-west1-a, uselessLabel: none", "Success",
         CONFLICT},
        {"zone label matched", "PVC_Stable_1", GZ ": us-west1-a, uselessLabel: none", "Success", "Success"},
        {"region label matched", "PVC_Stable_2", GR ": us-west1, uselessLabel: none", "Success", "Success"},
        {"region label doesn't match", "PVC_Stable_2", GR ": no_us-west1, uselessLabel: none", "Success",
         CONFLICT},
        {"zone label doesn't match", "PVC_Stable_1", GZ ": no_us-west1-a, uselessLabel: none", "Success",
         CONFLICT},
        {"pv with zone and region, node with only zone", "PVC_Stable_3", GZ ": us-west1-a", "Success",
         CONFLICT},
        {"pv with zone,node with beta zone", "PVC_Stable_1", BZ ": us-west1-a", "Success", CONFLICT},
        {"pv with beta label,node with ga label, matched", "PVC_1", GZ ": us-west1-a", "Success", "Success"},
        {"pv with beta label,node with ga label, don't match", "PVC_1", GZ ": us-west1-b", "Success",
         CONFLICT},
        /* not in upstream's table: the bound PV is missing */
        {"pv not found", "PVC_4", GZ ": us-west1-a",
         "UnschedulableAndUnresolvable: persistentvolume \"Vol_not_exist\" not found", NULL},
    };
    run_zone_cases(SINGLE_ZONE_OBJECTS, cases, sizeof(cases) / sizeof(cases[0]));
}

Test(volumezone, upstream_multi_zone)
{
    static const struct zone_case cases[] = {
        {"node without labels", "PVC_3", "", "Success", "Success"},
        {"beta zone label matched", "PVC_3", BZ ": us-west1-a, uselessLabel: none", "Success", "Success"},
        {"beta zone label doesn't match", "PVC_1", BZ ": us-west1-b, uselessLabel: none", "Success",
         CONFLICT},
        {"zone label matched", "PVC_Stable_2", GZ ": us-west1-a, uselessLabel: none", "Success", "Success"},
        {"zone label doesn't match", "PVC_Stable_1", GZ ": us-west1-b, uselessLabel: none", "Success",
         CONFLICT},
    };
    run_zone_cases(MULTI_ZONE_OBJECTS, cases, sizeof(cases) / sizeof(cases[0]));
}

Test(volumezone, upstream_with_binding)
{
    static const struct zone_case cases[] = {
        {"label zone failure domain matched", "PVC_1", BZ ": us-west1-a, uselessLabel: none", "Success",
         "Success"},
        {"unbound volume empty storage class", "PVC_EmptySC", BZ ": us-west1-a, uselessLabel: none",
         "UnschedulableAndUnresolvable: PersistentVolumeClaim had no pv name and storageClass name", NULL},
        {"unbound volume no storage class", "PVC_NoSC", BZ ": us-west1-a, uselessLabel: none",
         "UnschedulableAndUnresolvable: storageclass.storage.k8s.io \"Class_0\" not found", NULL},
        {"unbound volume immediate binding mode", "PVC_ImmediateSC", BZ ": us-west1-a, uselessLabel: none",
         "UnschedulableAndUnresolvable: PersistentVolume had no name", NULL},
        {"unbound volume wait binding mode", "PVC_WaitSC", BZ ": us-west1-a, uselessLabel: none", "Skip",
         NULL},
    };
    run_zone_cases(WITH_BINDING_OBJECTS, cases, sizeof(cases) / sizeof(cases[0]));
}

/* LabelZonesToSet: parts are trimmed; a label with an empty part is ignored (no constraint). */
Test(volumezone, zone_label_parsing)
{
    static const struct zone_case cases[] = {
        {"spaces trimmed", "PVC_A", GZ ": zone-b", "Success", "Success"},
        {"empty part ignores the label", "PVC_B", GZ ": zone-x", "Skip", NULL},
    };
    run_zone_cases(PV("Vol_A", GZ ": 'zone-a__ zone-b '") PV("Vol_B", GZ ": 'zone-a____zone-b'")
                       PVC_BOUND("PVC_A", "Vol_A") PVC_BOUND("PVC_B", "Vol_B"),
                   cases, sizeof(cases) / sizeof(cases[0]));
}

Test(volumezone, missing_claim)
{
    struct vfx x;
    char buf[VFX_MSG];
    vfx_open(&x, VFX_NODE("host1", ""));
    void *self = vfx_plugin(&x, vz);
    struct ks_pod *pod = ks_fake_pod("default", "pod_1");
    vfx_volume(pod, KS_VOLUME_PVC, "v", "PVC_missing", false);
    struct ks_cycle_state cs = {0};
    struct ks_pre_filter_result res;
    cr_expect(eq(str, (char *)vfx_pre_filter(vz, self, &cs, pod, &res, buf),
                 "UnschedulableAndUnresolvable: persistentvolumeclaim \"PVC_missing\" not found"));
    ks_arena_destroy(&cs.arena);
    ks_pod_destroy(pod);
    vz->destroy(self);
    vfx_close(&x);
}
