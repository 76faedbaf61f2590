/*
 * test_volume_limits.c - the in-tree volume limit plugins EBSLimits, GCEPDLimits,
 * AzureDiskLimits and CinderLimits (plugins/{ebs,gce_pd,azure_disk,cinder}_limits.c, shared
 * code in plugins/helpers/helper_volumes.c).
 *
 * Cases from upstream's nodevolumelimits/non_csi_test.go (TestEphemeralLimits, TestEBSLimits,
 * TestGCEPDLimits, TestAzureDiskLimits, TestGetMaxVols) on the same fixtures: the node's
 * limit is its allocatable attachable-volumes-<plugin> entry; the class named after the
 * filter ("EBS", "GCE") is provisioned by the driver of the case. Cases whose outcome depends
 * on a PersistentVolume with an in-tree source (someEBSVol) are left out: ksched's object
 * model has no in-tree PV sources, so such a claim never counts here; so are existing pods
 * whose claims do not exist, which the loader rejects. Then what ksched adds: the Nitro
 * instance-type rule, KUBE_MAX_PD_VOLS, a CSINode deferring to NodeVolumeLimits, PreFilter Skip.
 */
#include <stdlib.h>

#include "ksched/registry.h"
#include "test_volume_fixtures.h"

TestSuite(volumelimits, .init = vfx_setup, .fini = vfx_teardown);

#define EXCEEDED "Unschedulable: node(s) exceed max volume count"

static const struct {
    const char *kind, *ns, *name, *uid, *volumes;
} pods[] = {
    {"oneVolPod", "default", NULL, NULL, "{name: a, awsElasticBlockStore: {volumeID: ovp}}"},
    {"twoVolPod", "default", NULL, NULL,
     "{name: a, awsElasticBlockStore: {volumeID: tvp1}}, {name: b, awsElasticBlockStore: {volumeID: tvp2}}"},
    {"splitVolsPod", "default", NULL, NULL,
     "{name: a, hostPath: {path: /tmp}}, {name: b, awsElasticBlockStore: {volumeID: svp}}"},
    {"nonApplicablePod", "default", NULL, NULL, "{name: a, hostPath: {path: /tmp}}"},
    {"emptyPod", "default", NULL, NULL, ""},
    {"deletedPVPod", "default", NULL, NULL,
     "{name: a, persistentVolumeClaim: {claimName: pvcWithDeletedPV}}"},
    {"deletedPVPod2", "default", NULL, NULL,
     "{name: a, persistentVolumeClaim: {claimName: pvcWithDeletedPV}}"},
    {"anotherDeletedPVPod", "default", NULL, NULL,
     "{name: a, persistentVolumeClaim: {claimName: anotherPVCWithDeletedPV}}"},
    {"unboundPVCPod", "default", NULL, NULL, "{name: a, persistentVolumeClaim: {claimName: unboundPVC}}"},
    {"unboundPVCPod2", "default", NULL, NULL, "{name: a, persistentVolumeClaim: {claimName: unboundPVC}}"},
    {"anotherUnboundPVCPod", "default", NULL, NULL,
     "{name: a, persistentVolumeClaim: {claimName: anotherUnboundPVC}}"},
    {"unboundPVCWithInvalidSCPod", "default", NULL, NULL,
     "{name: a, persistentVolumeClaim: {claimName: unboundPVCWithInvalidSCPod}}"},
    {"unboundPVCWithDefaultSCPod", "default", NULL, NULL,
     "{name: a, persistentVolumeClaim: {claimName: unboundPVCWithDefaultSCPod}}"},
    {"onePVCPod", "default", NULL, NULL, "{name: a, persistentVolumeClaim: {claimName: some%sVol}}"},
    {"splitPVCPod", "default", NULL, NULL,
     "{name: a, persistentVolumeClaim: {claimName: someNon%sVol}}, {name: b, persistentVolumeClaim: "
     "{claimName: some%sVol}}"},
    {"ephemeralVolumePod", "test", "abc", "'12345'", "{name: xyz, ephemeral: {}}"},
    {"gcePod", "default", NULL, NULL, "{name: a, gcePersistentDisk: {pdName: pd-1}}"},
};

struct limit_case {
    const char *test;
    const char *new_pod;
    const char *existing[4];
    int max;           /* node allocatable attachable-volumes-<plugin>; -1: none */
    const char *extra; /* more documents */
    const char *want;  /* Filter status, NULL: Success */
};

struct plugin_setup {
    const struct ks_plugin *plugin;
    const char *filter;      /* filterName: the class name of the claims */
    const char *provisioner; /* driverName of the class; NULL: the class does not provision */
    const char *limit_key;
};

static size_t pod_doc(char *out, size_t cap, const char *kind, const char *filter, int index, bool on_node)
{
    for (size_t i = 0; i < sizeof(pods) / sizeof(pods[0]); i++) {
        if (strcmp(pods[i].kind, kind) != 0)
            continue;
        char name[64], volumes[512];
        if (pods[i].name)
            snprintf(name, sizeof(name), "%s", pods[i].name);
        else
            snprintf(name, sizeof(name), on_node ? "existing-%d" : "pod", index);
        snprintf(volumes, sizeof(volumes), pods[i].volumes, filter, filter);
        return (size_t)snprintf(out, cap,
                                "---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: %s%s%s}\n"
                                "spec: {%scontainers: [{name: c}], volumes: [%s]}\n",
                                name, pods[i].ns, pods[i].uid ? ", uid: " : "",
                                pods[i].uid ? pods[i].uid : "", on_node ? "nodeName: node-1, " : "", volumes);
    }
    cr_assert(false, "no pod kind %s", kind);
    return 0;
}

/* getFakePVCLister, getFakePVLister, getFakeCSIStorageClassLister and the node. */
static void cluster(char *y, size_t cap, const struct plugin_setup *p, const struct limit_case *c)
{
    size_t off = 0;
    const char *f = p->filter;
#define ADD(...) off += (size_t)snprintf(y + off, cap - off, __VA_ARGS__)
#define CLAIM(name, vol, cls)                                                                                \
    ADD("---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: %s, namespace: default}\n"       \
        "spec: {volumeName: '%s', storageClassName: %s}\n",                                                  \
        name, vol, cls)
    ADD("---\napiVersion: v1\nkind: Node\nmetadata: {name: node-1}\nstatus: {allocatable: {pods: '110'");
    if (c->max >= 0)
        ADD(", %s: '%d'", p->limit_key, c->max);
    ADD("}}\n");
    char some[64], non[64];
    snprintf(some, sizeof(some), "some%sVol", f);
    snprintf(non, sizeof(non), "someNon%sVol", f);
    CLAIM(some, some, f);
    CLAIM(non, non, f);
    CLAIM("pvcWithDeletedPV", "pvcWithDeletedPV", f);
    CLAIM("anotherPVCWithDeletedPV", "anotherPVCWithDeletedPV", f);
    CLAIM("unboundPVC", "", f);
    CLAIM("anotherUnboundPVC", "", f);
    CLAIM("unboundPVCWithDefaultSCPod", "", "standard-sc");
    CLAIM("unboundPVCWithInvalidSCPod", "", "invalid-sc");
    /* the PVs exist; their in-tree sources are not part of ksched's object model */
    ADD("---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: %s}\nspec: {}\n", some);
    ADD("---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: %s}\nspec: {}\n", non);
    ADD("---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: %s}\nprovisioner: %s\n", f,
        p->provisioner ? p->provisioner : "example.com/none");
    if (c->extra)
        ADD("%s", c->extra);
    for (int i = 0; i < 4 && c->existing[i]; i++)
        off += pod_doc(y + off, cap - off, c->existing[i], f, i, true);
    off += pod_doc(y + off, cap - off, c->new_pod, f, 0, false);
#undef CLAIM
#undef ADD
    cr_assert(off < cap);
}

static void run(const struct plugin_setup *p, const struct limit_case *c)
{
    char yaml[16384], buf[VFX_MSG];
    cluster(yaml, sizeof(yaml), p, c);
    struct vfx x;
    vfx_open(&x, yaml);
    void *self = vfx_plugin(&x, p->plugin);
    const struct ks_pod *pod = NULL;
    for (size_t i = 0; i < sizeof(pods) / sizeof(pods[0]); i++) {
        if (strcmp(pods[i].kind, c->new_pod) == 0)
            pod = vfx_pod(&x, pods[i].ns, pods[i].name ? pods[i].name : "pod");
    }
    struct ks_cycle_state cs = {0};
    struct ks_pre_filter_result res;
    const char *pre = vfx_pre_filter(p->plugin, self, &cs, pod, &res, buf);
    if (strcmp(pre, "Skip") != 0) {
        cr_expect(eq(str, (char *)pre, "Success"), "%s %s: PreFilter", p->plugin->name, c->test);
        cr_expect(eq(str, (char *)vfx_filter(p->plugin, self, &cs, pod, vfx_node(&x, "node-1"), buf),
                     (char *)(c->want ? c->want : "Success")),
                  "%s: %s", p->plugin->name, c->test);
    } else {
        cr_expect(c->want == NULL, "%s %s: skipped but %s expected", p->plugin->name, c->test, c->want);
    }
    ks_arena_destroy(&cs.arena);
    p->plugin->destroy(self);
    vfx_close(&x);
}

static const struct plugin_setup ebs = {&ks_plugin_ebs_limits, "EBS", "kubernetes.io/aws-ebs",
                                        "attachable-volumes-aws-ebs"};

Test(volumelimits, upstream_ebs_limits)
{
    static const struct limit_case cases[] = {
        {"fits when node capacity >= new pod's EBS volumes",
         "oneVolPod",
         {"twoVolPod", "oneVolPod"},
         4,
         NULL,
         NULL},
        {"doesn't fit when node capacity < new pod's EBS volumes",
         "twoVolPod",
         {"oneVolPod"},
         2,
         NULL,
         EXCEEDED},
        {"new pod's count ignores non-EBS volumes", "splitVolsPod", {"twoVolPod"}, 3, NULL, NULL},
        {"existing pods' counts ignore non-EBS volumes",
         "twoVolPod",
         {"splitVolsPod", "nonApplicablePod", "emptyPod"},
         3,
         NULL,
         NULL},
        {"new pod's count considers PVCs backed by EBS volumes",
         "onePVCPod",
         {"splitVolsPod", "nonApplicablePod", "emptyPod"},
         3,
         NULL,
         NULL},
        {"new pod's count ignores PVCs not backed by EBS volumes",
         "splitPVCPod",
         {"splitVolsPod", "oneVolPod"},
         3,
         NULL,
         NULL},
        {"already-mounted EBS volumes are always ok to allow",
         "twoVolPod",
         {"oneVolPod", "twoVolPod", "onePVCPod"},
         4,
         NULL,
         NULL},
        {"the same EBS volumes are not counted multiple times",
         "splitVolsPod",
         {"oneVolPod", "oneVolPod", "onePVCPod"},
         3,
         NULL,
         NULL},
        {"unbound PVC with invalid SC is not counted towards the PV limit",
         "unboundPVCWithInvalidSCPod",
         {"oneVolPod"},
         1,
         NULL,
         NULL},
        {"unbound PVC from different provisioner is not counted towards the PV limit",
         "unboundPVCWithDefaultSCPod",
         {"oneVolPod"},
         1,
         NULL,
         NULL},
        {"pod with missing PV is counted towards the PV limit",
         "onePVCPod",
         {"oneVolPod", "deletedPVPod"},
         3,
         NULL,
         NULL},
        {"two pods missing the same PV are counted towards the PV limit only once",
         "deletedPVPod2",
         {"oneVolPod", "deletedPVPod"},
         2,
         NULL,
         NULL},
        {"two pods missing different PVs are counted towards the PV limit twice",
         "anotherDeletedPVPod",
         {"oneVolPod", "deletedPVPod"},
         2,
         NULL,
         EXCEEDED},
        {"pod with unbound PVC is counted towards the PV limit",
         "onePVCPod",
         {"oneVolPod", "unboundPVCPod"},
         3,
         NULL,
         NULL},
        {"the same unbound PVC in multiple pods is counted towards the PV limit only once",
         "unboundPVCPod2",
         {"oneVolPod", "unboundPVCPod"},
         2,
         NULL,
         NULL},
        {"two different unbound PVCs are counted towards the PV limit as two volumes",
         "anotherUnboundPVCPod",
         {"oneVolPod", "unboundPVCPod"},
         2,
         NULL,
         EXCEEDED},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run(&ebs, &cases[i]);
}

/* TestGCEPDLimits and TestAzureDiskLimits: their pods carry EBS volumes and the classes do not
 * provision, so every case fits. */
Test(volumelimits, upstream_gce_pd_and_azure_disk_limits)
{
    static const struct limit_case cases[] = {
        {"fits when node capacity >= new pod's volumes",
         "oneVolPod",
         {"twoVolPod", "oneVolPod"},
         4,
         NULL,
         NULL},
        {"fit when node capacity < new pod's volumes", "twoVolPod", {"oneVolPod"}, 2, NULL, NULL},
        {"new pod's count ignores non-plugin volumes", "splitVolsPod", {"twoVolPod"}, 3, NULL, NULL},
        {"existing pods' counts ignore non-plugin volumes",
         "twoVolPod",
         {"splitVolsPod", "nonApplicablePod", "emptyPod"},
         3,
         NULL,
         NULL},
        {"new pod's count considers PVCs backed by plugin volumes",
         "onePVCPod",
         {"splitVolsPod", "nonApplicablePod", "emptyPod"},
         3,
         NULL,
         NULL},
        {"existing pods' counts considers PVCs backed by plugin volumes",
         "twoVolPod",
         {"oneVolPod", "onePVCPod"},
         3,
         NULL,
         NULL},
        {"pod with missing PV is counted towards the PV limit",
         "onePVCPod",
         {"oneVolPod", "deletedPVPod"},
         2,
         NULL,
         NULL},
        {"two pods missing different PVs are counted towards the PV limit twice",
         "anotherDeletedPVPod",
         {"oneVolPod", "deletedPVPod"},
         2,
         NULL,
         NULL},
        {"pod with unbound PVC is counted towards the PV limit",
         "onePVCPod",
         {"oneVolPod", "unboundPVCPod"},
         2,
         NULL,
         NULL},
        {"two different unbound PVCs are counted towards the PV limit as two volumes",
         "anotherUnboundPVCPod",
         {"oneVolPod", "unboundPVCPod"},
         2,
         NULL,
         NULL},
    };
    static const struct plugin_setup setups[] = {
        {&ks_plugin_gce_pd_limits, "GCE", NULL, "attachable-volumes-gce-pd"},
        {&ks_plugin_azure_disk_limits, "AzureDisk", NULL, "attachable-volumes-azure-disk"},
    };
    for (size_t s = 0; s < sizeof(setups) / sizeof(setups[0]); s++) {
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
            run(&setups[s], &cases[i]);
    }
}

#define EPHEMERAL_CLAIM(owner)                                                                               \
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: abc-xyz, namespace: test" owner      \
    "}\n"                                                                                                    \
    "spec: {volumeName: missing, storageClassName: GCE}\n"
#define OWNED ", ownerReferences: [{kind: Pod, name: abc, uid: '12345', controller: true}]"

Test(volumelimits, upstream_ephemeral_limits)
{
    static const struct plugin_setup gce = {&ks_plugin_gce_pd_limits, "GCE", "kubernetes.io/gce-pd",
                                            "attachable-volumes-gce-pd"};
    static const struct limit_case cases[] = {
        {"volume missing",
         "ephemeralVolumePod",
         {NULL},
         0,
         NULL,
         "Error: looking up PVC test/abc-xyz: persistentvolumeclaim \"abc-xyz\" not found"},
        {"volume not owned",
         "ephemeralVolumePod",
         {NULL},
         0,
         EPHEMERAL_CLAIM(""),
         "Error: PVC test/abc-xyz was not created for pod test/abc (pod is not owner)"},
        {"volume unbound, allowed", "ephemeralVolumePod", {NULL}, 1, EPHEMERAL_CLAIM(OWNED), NULL},
        {"volume unbound, exceeds limit", "ephemeralVolumePod", {NULL}, 0, EPHEMERAL_CLAIM(OWNED), EXCEEDED},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run(&gce, &cases[i]);
}

/* @n pods on node-1 with one GCE PD each (disk-0...), as extra documents. */
static void gce_pods(char *out, size_t cap, int n)
{
    size_t off = 0;
    out[0] = '\0';
    for (int i = 0; i < n; i++)
        off +=
            (size_t)snprintf(out + off, cap - off,
                             "---\napiVersion: v1\nkind: Pod\nmetadata: {name: pd-%d, namespace: default}\n"
                             "spec: {nodeName: node-1, containers: [{name: c}], "
                             "volumes: [{name: a, gcePersistentDisk: {pdName: disk-%d}}]}\n",
                             i, i);
}

Test(volumelimits, default_limits_and_csinode)
{
    static const struct plugin_setup gce = {&ks_plugin_gce_pd_limits, "GCE", "kubernetes.io/gce-pd",
                                            "attachable-volumes-gce-pd"};
    char extra[8192];

    /* 16 GCE PDs per node by default (no allocatable entry) */
    gce_pods(extra, sizeof(extra), 15);
    run(&gce, &(struct limit_case){"15 disks fit a 16th", "gcePod", {NULL}, -1, extra, NULL});
    gce_pods(extra, sizeof(extra), 16);
    run(&gce, &(struct limit_case){"16 disks do not fit a 17th", "gcePod", {NULL}, -1, extra, EXCEEDED});
    /* with a CSINode the in-tree plugin is migrated: it defers to NodeVolumeLimits */
    size_t len = strlen(extra);
    snprintf(
        extra + len, sizeof(extra) - len,
        "---\napiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: node-1}\nspec: {drivers: []}\n");
    run(&gce, &(struct limit_case){"with a CSINode the plugin defers", "gcePod", {NULL}, -1, extra, NULL});
    /* no volume of interest: PreFilter skips */
    run(&gce, &(struct limit_case){"no relevant volume", "nonApplicablePod", {NULL}, -1, NULL, NULL});
}

/*
 * Unlike NodeVolumeLimits (csi.go), the in-tree plugins (non_csi.go) compare the node's
 * volumes plus the new ones with the limit even when the pod brings nothing new: a node
 * already over its limit refuses a pod that only uses volumes mounted there.
 */
Test(volumelimits, intree_limit_checked_without_new_volumes)
{
    run(&ebs, &(struct limit_case){
                  "over the limit, nothing new", "oneVolPod", {"twoVolPod", "oneVolPod"}, 2, NULL, EXCEEDED});
    run(&ebs, &(struct limit_case){
                  "at the limit, nothing new", "oneVolPod", {"twoVolPod", "oneVolPod"}, 3, NULL, NULL});
    run(&ebs, &(struct limit_case){
                  "at the limit, one new", "oneVolPod", {"twoVolPod", "twoVolPod"}, 2, NULL, EXCEEDED});
}

/* EBS: Nitro instance types allow 25, others 39; KUBE_MAX_PD_VOLS overrides both. */
Test(volumelimits, ebs_instance_types_and_env)
{
    char yaml[16384], buf[VFX_MSG];
    static const struct {
        const char *instance_type;
        const char *env;
        int fit; /* existing volumes that still fit a new one */
    } cases[] = {
        {"m5.large", NULL, 24}, {"c5.xlarge", NULL, 24}, {"t3.micro", NULL, 24},      {"m4.large", NULL, 38},
        {NULL, NULL, 38},       {"m4.large", "40", 39},  {"m5.large", "invalid", 24}, {"m5.large", "-2", 24},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        for (int extra = 0; extra < 2; extra++) {
            int n = cases[c].fit + extra;
            size_t off = (size_t)snprintf(
                yaml, sizeof(yaml),
                "---\napiVersion: v1\nkind: Node\nmetadata: {name: node-1, labels: {%s%s}}\n",
                cases[c].instance_type ? "node.kubernetes.io/instance-type: " : "",
                cases[c].instance_type ? cases[c].instance_type : "");
            for (int i = 0; i < n; i++)
                off += (size_t)snprintf(
                    yaml + off, sizeof(yaml) - off,
                    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: e-%d, namespace: default}\n"
                    "spec: {nodeName: node-1, containers: [{name: c}], "
                    "volumes: [{name: a, awsElasticBlockStore: {volumeID: vol-%d}}]}\n",
                    i, i);
            snprintf(yaml + off, sizeof(yaml) - off,
                     "---\napiVersion: v1\nkind: Pod\nmetadata: {name: pod, namespace: default}\n"
                     "spec: {containers: [{name: c}], volumes: [{name: a, awsElasticBlockStore: {volumeID: "
                     "new}}]}\n");
            if (cases[c].env)
                setenv("KUBE_MAX_PD_VOLS", cases[c].env, 1);
            else
                unsetenv("KUBE_MAX_PD_VOLS");
            struct vfx x;
            vfx_open(&x, yaml);
            void *self = vfx_plugin(&x, &ks_plugin_ebs_limits);
            unsetenv("KUBE_MAX_PD_VOLS");
            struct ks_cycle_state cs = {0};
            struct ks_pre_filter_result res;
            const struct ks_pod *pod = vfx_pod(&x, "default", "pod");
            cr_expect(
                eq(str, (char *)vfx_pre_filter(&ks_plugin_ebs_limits, self, &cs, pod, &res, buf), "Success"));
            cr_expect(
                eq(str,
                   (char *)vfx_filter(&ks_plugin_ebs_limits, self, &cs, pod, vfx_node(&x, "node-1"), buf),
                   extra ? EXCEEDED : "Success"),
                "%s env %s with %d volumes", cases[c].instance_type ? cases[c].instance_type : "(none)",
                cases[c].env ? cases[c].env : "(unset)", n);
            ks_arena_destroy(&cs.arena);
            ks_plugin_ebs_limits.destroy(self);
            vfx_close(&x);
        }
    }
}
