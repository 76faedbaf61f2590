/*
 * test_node_volume_limits.c - the NodeVolumeLimits plugin (plugins/node_volume_limits.c).
 *
 * Cases from upstream's nodevolumelimits/csi_test.go (TestCSILimits) with their exact
 * statuses, on the same fixtures: per driver four claims "csi-<driver>-<j>" bound to PVs of
 * that name, "csi-4" unbound in class csi-sc (provisioned by the first driver), "csi-5"
 * without a class, "csi-6" bound to a missing PV; a CSINode with every driver, with or
 * without allocatable.count. Differences forced by the object model: PersistentVolumes of
 * the in-tree plugin kubernetes.io/aws-ebs are written as their CSI translation
 * (ebs.csi.aws.com, volumeHandle = volumeID), which is what upstream counts once CSI
 * migration translates them; ksched has no VolumeAttachment objects, so the case counting
 * two attachments without pods is not ported; the NotFound text is the real lister's
 * ("persistentvolumeclaim", upstream's fake lister says "persistentvolumeclaims").
 */
#include "ksched/registry.h"
#include "test_volume_fixtures.h"

TestSuite(nodevolumelimits, .init = vfx_setup, .fini = vfx_teardown);

static const struct ks_plugin *const nvl = &ks_plugin_node_volume_limits;

#define EXCEEDED  "Unschedulable: node(s) exceed max volume count"
#define EBS       "ebs.csi.aws.com"
#define GCE       "pd.csi.storage.gke.io"
#define INTREE    "kubernetes.io/aws-ebs"
#define HOSTPATH  "kubernetes.io/hostpath"
#define NODE_NAME "node-for-max-pd-test-1"

/* The pods of upstream's table: namespace, name, uid and volumes (flow list body). */
static const struct {
    const char *kind, *ns, *name, *uid, *volumes;
} pods[] = {
    {"runningPod", "default", NULL, NULL,
     "{name: a, persistentVolumeClaim: {claimName: csi-ebs.csi.aws.com-3}}"},
    {"pendingVolumePod", "default", NULL, NULL, "{name: a, persistentVolumeClaim: {claimName: csi-4}}"},
    {"unboundPVCPod2", "default", NULL, NULL, "{name: a, persistentVolumeClaim: {claimName: csi-4}}"},
    {"missingPVPod", "default", NULL, NULL, "{name: a, persistentVolumeClaim: {claimName: csi-6}}"},
    {"noSCPVCPod", "default", NULL, NULL, "{name: a, persistentVolumeClaim: {claimName: csi-5}}"},
    {"gceTwoVolPod", "default", NULL, NULL,
     "{name: a, persistentVolumeClaim: {claimName: csi-pd.csi.storage.gke.io-1}}, "
     "{name: b, persistentVolumeClaim: {claimName: csi-pd.csi.storage.gke.io-2}}"},
    {"inTreeOneVolPod", "default", NULL, NULL,
     "{name: a, persistentVolumeClaim: {claimName: csi-kubernetes.io/aws-ebs-0}}"},
    {"inTreeTwoVolPod", "default", NULL, NULL,
     "{name: a, persistentVolumeClaim: {claimName: csi-kubernetes.io/aws-ebs-1}}, "
     "{name: b, persistentVolumeClaim: {claimName: csi-kubernetes.io/aws-ebs-2}}"},
    {"csiEBSOneVolPod", "default", NULL, NULL,
     "{name: a, persistentVolumeClaim: {claimName: csi-ebs.csi.aws.com-0}}"},
    {"csiEBSTwoVolPod", "default", NULL, NULL,
     "{name: a, persistentVolumeClaim: {claimName: csi-ebs.csi.aws.com-1}}, "
     "{name: b, persistentVolumeClaim: {claimName: csi-ebs.csi.aws.com-2}}"},
    {"inTreeNonMigratableOneVolPod", "default", NULL, NULL,
     "{name: a, persistentVolumeClaim: {claimName: csi-kubernetes.io/hostpath-0}}"},
    {"ephemeralVolumePod", "test", "abc", "'12345'", "{name: xyz, ephemeral: {}}"},
    {"ephemeralTwoVolumePod", "test", "abc", "12345II", "{name: x, ephemeral: {}}, {name: \"y\", ephemeral: {}}"},
    {"inTreeInlineVolPod", "default", NULL, NULL, "{name: a, awsElasticBlockStore: {volumeID: aws-inline1}}"},
    {"inTreeInlineVolPodWithSameCSIVolumeID", "default", NULL, NULL,
     "{name: a, awsElasticBlockStore: {volumeID: csi-ebs.csi.aws.com-1}}"},
    {"onlyConfigmapAndSecretVolPod", "default", NULL, NULL,
     "{name: a, configMap: {}}, {name: b, secret: {}}"},
    {"pvcPodWithConfigmapAndSecret", "default", NULL, NULL,
     "{name: a, configMap: {}}, {name: b, secret: {}}, "
     "{name: c, persistentVolumeClaim: {claimName: csi-ebs.csi.aws.com-0}}"},
    {"ephemeralPodWithConfigmapAndSecret", "test", "abc", NULL,
     "{name: a, configMap: {}}, {name: b, secret: {}}, {name: xyz, ephemeral: {}}"},
    {"inlineMigratablePodWithConfigmapAndSecret", "default", NULL, NULL,
     "{name: a, configMap: {}}, {name: b, secret: {}}, {name: c, awsElasticBlockStore: {volumeID: "
     "aws-inline1}}"},
};

/* Claims owned by the ephemeral pods (extraClaims). */
#define EPHEMERAL_CLAIM                                                                                      \
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: abc-xyz, namespace: test, "          \
    "ownerReferences: [{kind: Pod, name: abc, uid: '12345', controller: true}]}\nspec: {storageClassName: "  \
    "csi-sc}\n"
#define CONFLICTING_CLAIM                                                                                    \
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: abc-xyz, namespace: test}\n"         \
    "spec: {storageClassName: csi-sc}\n"
#define EPHEMERAL_CLAIM_XY                                                                                   \
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: abc-x, namespace: test, "            \
    "ownerReferences: [{kind: Pod, name: abc, uid: 12345II, controller: true}]}\nspec: {storageClassName: "  \
    "csi-sc}\n"                                                                                              \
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: abc-y, namespace: test, "            \
    "ownerReferences: [{kind: Pod, name: abc, uid: 12345II, controller: true}]}\nspec: {storageClassName: "  \
    "csi-sc}\n"

struct csi_case {
    const char *test;
    const char *new_pod;
    const char *existing[4];
    const char *extra; /* extraClaims */
    int max;           /* maxVols */
    const char *drivers[2];
    const char *limit_source; /* "csinode", "csinode-with-no-limit" or "" */
    const char *pre;          /* PreFilter status */
    const char *want;         /* Filter status */
};

static size_t pod_doc(char *out, size_t cap, const char *kind, int index, bool on_node)
{
    for (size_t i = 0; i < sizeof(pods) / sizeof(pods[0]); i++) {
        if (strcmp(pods[i].kind, kind) != 0)
            continue;
        char name[64];
        if (pods[i].name)
            snprintf(name, sizeof(name), "%s", pods[i].name);
        else
            snprintf(name, sizeof(name), on_node ? "existing-%d" : "pod", index);
        return (size_t)snprintf(out, cap,
                                "---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: %s%s%s}\n"
                                "spec: {%scontainers: [{name: c}], volumes: [%s]}\n",
                                name, pods[i].ns, pods[i].uid ? ", uid: " : "",
                                pods[i].uid ? pods[i].uid : "", on_node ? "nodeName: " NODE_NAME ", " : "",
                                pods[i].volumes);
    }
    cr_assert(false, "no pod kind %s", kind);
    return 0;
}

/* upstream's getFakeCSIPVLister, getFakeCSIPVCLister, getFakeCSIStorageClassLister and node. */
static void cluster(char *y, size_t cap, const struct csi_case *c)
{
    size_t off = 0;
#define ADD(...) off += (size_t)snprintf(y + off, cap - off, __VA_ARGS__)
    ADD("---\napiVersion: v1\nkind: Node\nmetadata: {name: " NODE_NAME "}\n");
    for (int d = 0; d < 2 && c->drivers[d]; d++) {
        const char *drv = c->drivers[d];
        for (int j = 0; j < 4; j++) {
            ADD("---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: csi-%s-%d}\nspec: {", drv, j);
            if (strcmp(drv, INTREE) == 0) /* an AWS EBS volume, as CSI migration translates it */
                ADD("csi: {driver: " EBS ", volumeHandle: csi-%s-%d}", drv, j);
            else if (strcmp(drv, HOSTPATH) != 0)
                ADD("csi: {driver: %s, volumeHandle: csi-%s-%d}", drv, drv, j);
            ADD("}\n---\napiVersion: v1\nkind: PersistentVolumeClaim\n"
                "metadata: {name: csi-%s-%d, namespace: default}\nspec: {volumeName: csi-%s-%d}\n",
                drv, j, drv, j);
        }
    }
    ADD("---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: csi-4, namespace: default}\n"
        "spec: {storageClassName: csi-sc}\n");
    ADD("---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: csi-5, namespace: "
        "default}\nspec: {}\n");
    ADD("---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: csi-6, namespace: default}\n"
        "spec: {storageClassName: csi-sc, volumeName: missing-in-action}\n");
    ADD("---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: csi-sc}\nprovisioner: %s\n",
        c->drivers[0]);
    if (c->limit_source[0]) {
        ADD("---\napiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: " NODE_NAME
            ", annotations: {storage.alpha.kubernetes.io/migrated-plugins: " INTREE
            "}}\nspec:\n  drivers:\n");
        for (int d = 0; d < 2 && c->drivers[d]; d++) {
            ADD("  - {name: %s, nodeID: " NODE_NAME, c->drivers[d]);
            if (strcmp(c->limit_source, "csinode") == 0)
                ADD(", allocatable: {count: %d}", c->max);
            ADD("}\n");
        }
    }
    if (c->extra)
        ADD("%s", c->extra);
    for (int i = 0; i < 4 && c->existing[i]; i++)
        off += pod_doc(y + off, cap - off, c->existing[i], i, true);
    off += pod_doc(y + off, cap - off, c->new_pod, 0, false);
#undef ADD
    cr_assert(off < cap);
}

static void run(const struct csi_case *c)
{
    char yaml[32768], buf[VFX_MSG];
    cluster(yaml, sizeof(yaml), c);
    struct vfx x;
    vfx_open(&x, yaml);
    void *self = vfx_plugin(&x, nvl);
    const struct ks_pod *pod = NULL;
    for (size_t i = 0; i < sizeof(pods) / sizeof(pods[0]); i++) {
        if (strcmp(pods[i].kind, c->new_pod) == 0)
            pod = vfx_pod(&x, pods[i].ns, pods[i].name ? pods[i].name : "pod");
    }
    struct ks_cycle_state cs = {0};
    struct ks_pre_filter_result res;
    const char *pre = c->pre ? c->pre : "Success";
    cr_expect(eq(str, (char *)vfx_pre_filter(nvl, self, &cs, pod, &res, buf), (char *)pre), "%s: PreFilter",
              c->test);
    if (strcmp(pre, "Skip") != 0)
        cr_expect(eq(str, (char *)vfx_filter(nvl, self, &cs, pod, vfx_node(&x, NODE_NAME), buf),
                     (char *)(c->want ? c->want : "Success")),
                  "%s: Filter", c->test);
    ks_arena_destroy(&cs.arena);
    nvl->destroy(self);
    vfx_close(&x);
}

Test(nodevolumelimits, upstream_csi_limits)
{
    static const struct csi_case cases[] = {
        {"should schedule pod when VolumeAttachments count does not exceed limit",
         "csiEBSOneVolPod",
         {NULL},
         NULL,
         2,
         {EBS},
         "csinode",
         NULL,
         NULL},
        {"fits when node volume limit >= new pods CSI volume",
         "csiEBSOneVolPod",
         {"runningPod", "csiEBSTwoVolPod"},
         NULL,
         4,
         {EBS},
         "csinode",
         NULL,
         NULL},
        {"doesn't when node volume limit <= pods CSI volume",
         "csiEBSOneVolPod",
         {"runningPod", "csiEBSTwoVolPod"},
         NULL,
         2,
         {EBS},
         "csinode",
         NULL,
         EXCEEDED},
        {"should when driver does not support volume limits",
         "csiEBSOneVolPod",
         {"runningPod", "csiEBSTwoVolPod"},
         NULL,
         2,
         {EBS},
         "csinode-with-no-limit",
         NULL,
         NULL},
        {"count pending PVCs towards volume limit <= pods CSI volume",
         "csiEBSOneVolPod",
         {"pendingVolumePod", "csiEBSTwoVolPod"},
         NULL,
         2,
         {EBS},
         "csinode",
         NULL,
         EXCEEDED},
        {"count multiple pending pvcs towards volume limit >= pods CSI volume",
         "csiEBSOneVolPod",
         {"pendingVolumePod", "unboundPVCPod2", "csiEBSTwoVolPod"},
         NULL,
         4,
         {EBS},
         "csinode",
         NULL,
         NULL},
        {"should count PVCs with invalid PV name but valid SC",
         "csiEBSOneVolPod",
         {"missingPVPod", "csiEBSTwoVolPod"},
         NULL,
         2,
         {EBS},
         "csinode",
         NULL,
         EXCEEDED},
        {"don't count pvcs with missing SC towards volume limit",
         "csiEBSOneVolPod",
         {"runningPod", "noSCPVCPod"},
         NULL,
         2,
         {EBS},
         "csinode",
         NULL,
         NULL},
        {"count pvcs with the same type towards volume limit",
         "csiEBSOneVolPod",
         {"gceTwoVolPod", "csiEBSTwoVolPod"},
         NULL,
         2,
         {EBS, GCE},
         "csinode",
         NULL,
         EXCEEDED},
        {"don't count pvcs with different type towards volume limit",
         "gceTwoVolPod",
         {"csiEBSTwoVolPod", "runningPod"},
         NULL,
         2,
         {EBS, GCE},
         "csinode",
         NULL,
         NULL},
        {"should count in-tree volumes if migration is enabled",
         "inTreeOneVolPod",
         {"inTreeTwoVolPod"},
         NULL,
         2,
         {INTREE, EBS},
         "csinode",
         NULL,
         EXCEEDED},
        {"nil csi node", "inTreeInlineVolPod", {"inTreeTwoVolPod"}, NULL, 0, {INTREE, EBS}, "", NULL, NULL},
        {"should count unbound in-tree volumes if migration is enabled",
         "pendingVolumePod",
         {"inTreeTwoVolPod"},
         NULL,
         2,
         {INTREE, EBS},
         "csinode",
         NULL,
         EXCEEDED},
        {"should not limit pod if volume used does not report limits",
         "inTreeOneVolPod",
         {"inTreeTwoVolPod"},
         NULL,
         2,
         {INTREE, EBS},
         "csinode-with-no-limit",
         NULL,
         NULL},
        {"should not count non-migratable in-tree volumes",
         "inTreeNonMigratableOneVolPod",
         {"csiEBSTwoVolPod"},
         NULL,
         2,
         {HOSTPATH, EBS},
         "csinode",
         NULL,
         NULL},
        {"should count in-tree inline volumes if migration is enabled",
         "inTreeInlineVolPod",
         {"inTreeTwoVolPod"},
         NULL,
         2,
         {INTREE, EBS},
         "csinode",
         NULL,
         EXCEEDED},
        {"should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)",
         "inTreeOneVolPod",
         {"csiEBSTwoVolPod"},
         NULL,
         2,
         {INTREE, EBS},
         "csinode",
         NULL,
         EXCEEDED},
        {"should count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree "
         "volumes)",
         "inTreeInlineVolPod",
         {"csiEBSTwoVolPod", "inTreeOneVolPod"},
         NULL,
         3,
         {INTREE, EBS},
         "csinode",
         NULL,
         EXCEEDED},
        {"should not count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree "
         "volumes)",
         "inTreeInlineVolPodWithSameCSIVolumeID",
         {"csiEBSTwoVolPod", "inTreeOneVolPod"},
         NULL,
         3,
         {INTREE, EBS},
         "csinode",
         NULL,
         NULL},
        {"should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)",
         "csiEBSOneVolPod",
         {"inTreeTwoVolPod"},
         NULL,
         2,
         {INTREE, EBS},
         "csinode",
         NULL,
         EXCEEDED},
        {"ephemeral volume missing",
         "ephemeralVolumePod",
         {NULL},
         NULL,
         0,
         {EBS},
         "csinode-with-no-limit",
         NULL,
         "UnschedulableAndUnresolvable: looking up PVC test/abc-xyz: persistentvolumeclaim \"abc-xyz\" not "
         "found"},
        {"ephemeral volume not owned",
         "ephemeralVolumePod",
         {NULL},
         CONFLICTING_CLAIM,
         0,
         {EBS},
         "csinode-with-no-limit",
         NULL,
         "Error: PVC test/abc-xyz was not created for pod test/abc (pod is not owner)"},
        {"ephemeral volume unbound",
         "ephemeralVolumePod",
         {NULL},
         EPHEMERAL_CLAIM,
         0,
         {EBS},
         "csinode-with-no-limit",
         NULL,
         NULL},
        {"ephemeral doesn't when node volume limit <= pods CSI volume",
         "ephemeralVolumePod",
         {"runningPod", "csiEBSTwoVolPod"},
         EPHEMERAL_CLAIM,
         2,
         {EBS},
         "csinode",
         NULL,
         EXCEEDED},
        {"ephemeral doesn't when node volume limit <= pods ephemeral CSI volume",
         "csiEBSOneVolPod",
         {"runningPod", "ephemeralTwoVolumePod"},
         EPHEMERAL_CLAIM_XY,
         2,
         {EBS},
         "csinode",
         NULL,
         EXCEEDED},
        {"persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume",
         "csiEBSOneVolPod",
         {"runningPod", "ephemeralVolumePod", "csiEBSTwoVolPod"},
         EPHEMERAL_CLAIM,
         3,
         {EBS},
         "csinode",
         NULL,
         EXCEEDED},
        {"persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume",
         "csiEBSOneVolPod",
         {"runningPod", "ephemeralVolumePod", "csiEBSTwoVolPod"},
         EPHEMERAL_CLAIM,
         5,
         {EBS},
         "csinode",
         NULL,
         NULL},
        {"skip Filter when the pod only uses secrets and configmaps",
         "onlyConfigmapAndSecretVolPod",
         {NULL},
         NULL,
         2,
         {EBS},
         "csinode",
         "Skip",
         NULL},
        {"don't skip Filter when the pod has pvcs",
         "pvcPodWithConfigmapAndSecret",
         {NULL},
         NULL,
         2,
         {EBS},
         "csinode",
         NULL,
         NULL},
        {"don't skip Filter when the pod has ephemeral volumes",
         "ephemeralPodWithConfigmapAndSecret",
         {NULL},
         NULL,
         0,
         {EBS},
         "csinode-with-no-limit",
         NULL,
         "UnschedulableAndUnresolvable: looking up PVC test/abc-xyz: persistentvolumeclaim \"abc-xyz\" not "
         "found"},
        {"don't skip Filter when the pod has inline migratable volumes",
         "inlineMigratablePodWithConfigmapAndSecret",
         {"inTreeTwoVolPod"},
         NULL,
         2,
         {INTREE, EBS},
         "csinode",
         NULL,
         EXCEEDED},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run(&cases[i]);
}

/* The same claim used by two pods on the node, and a node without a CSINode. */
Test(nodevolumelimits, unique_volumes_and_missing_csinode)
{
    static const struct csi_case cases[] = {
        {"a volume the node already uses is not counted again",
         "csiEBSOneVolPod",
         {"pvcPodWithConfigmapAndSecret"},
         NULL,
         1,
         {EBS},
         "csinode",
         NULL,
         NULL},
        {"no CSINode: no limit",
         "csiEBSOneVolPod",
         {"runningPod", "csiEBSTwoVolPod"},
         NULL,
         1,
         {EBS},
         "",
         NULL,
         NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run(&cases[i]);
}

/*
 * The class of cluster the differential test found: a node whose CSINode limit is
 * below what its pods already use. One or two drivers; per driver the node's limit, how many
 * of its volumes the node's pods use (one of them by two pods, which must count once), and
 * how many of those the new pod shares and how many volumes it brings that no pod there uses.
 */
struct mix {
    const char *test;
    int limit[2];    /* CSINode allocatable.count; -1: the driver is not used at all */
    int attached[2]; /* distinct volumes of the driver used by pods on the node */
    int shared[2];   /* of those, how many the new pod uses too (the first ones) */
    int fresh[2];    /* volumes of the driver the new pod brings that the node does not use */
};

static const char *const mix_driver[2] = {EBS, GCE};

/*
 * upstream's rule (csi.go Filter): the pod's volumes that a pod on the node already uses are
 * left out; a driver's limit is checked only when the pod brings at least one new volume
 * under it, and then the node's volumes plus the new ones must not exceed it.
 */
static bool upstream_fits(const struct mix *m)
{
    for (int d = 0; d < 2; d++) {
        if (m->limit[d] >= 0 && m->fresh[d] > 0 && m->attached[d] + m->fresh[d] > m->limit[d])
            return false;
    }
    return true;
}

static void mix_cluster(char *y, size_t cap, const struct mix *m)
{
    size_t off = 0;
    char vols[4096] = "{name: cfg, configMap: {}}";
    size_t voff = strlen(vols);
#define ADD(...) off += (size_t)snprintf(y + off, cap - off, __VA_ARGS__)
    ADD("---\napiVersion: v1\nkind: Node\nmetadata: {name: " NODE_NAME "}\n");
    ADD("---\napiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: " NODE_NAME "}\nspec:\n"
        "  drivers:\n");
    for (int d = 0; d < 2; d++) {
        if (m->limit[d] >= 0)
            ADD("  - {name: %s, nodeID: " NODE_NAME ", allocatable: {count: %d}}\n", mix_driver[d],
                m->limit[d]);
    }
    for (int d = 0; d < 2; d++) {
        if (m->limit[d] < 0)
            continue;
        for (int j = 0; j < m->attached[d] + m->fresh[d]; j++) {
            ADD("---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-%d-%d}\n"
                "spec: {csi: {driver: %s, volumeHandle: vol-%d-%d}}\n",
                d, j, mix_driver[d], d, j);
            ADD("---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c-%d-%d, namespace: "
                "default}\nspec: {volumeName: pv-%d-%d}\n",
                d, j, d, j);
        }
        for (int j = 0; j < m->attached[d]; j++) {
            ADD("---\napiVersion: v1\nkind: Pod\nmetadata: {name: on-node-%d-%d, namespace: default}\n"
                "spec: {nodeName: " NODE_NAME ", containers: [{name: c}], volumes: [{name: v, "
                "persistentVolumeClaim: {claimName: c-%d-%d}}]}\n",
                d, j, d, j);
        }
        if (m->attached[d] > 0) /* a second user of the first volume: still one volume */
            ADD("---\napiVersion: v1\nkind: Pod\nmetadata: {name: also-on-node-%d, namespace: default}\n"
                "spec: {nodeName: " NODE_NAME ", containers: [{name: c}], volumes: [{name: v, "
                "persistentVolumeClaim: {claimName: c-%d-0}}]}\n",
                d, d);
        for (int j = 0; j < m->shared[d]; j++)
            voff += (size_t)snprintf(vols + voff, sizeof(vols) - voff,
                                     ", {name: s-%d-%d, persistentVolumeClaim: {claimName: c-%d-%d}}", d, j,
                                     d, j);
        for (int j = m->attached[d]; j < m->attached[d] + m->fresh[d]; j++)
            voff += (size_t)snprintf(vols + voff, sizeof(vols) - voff,
                                     ", {name: n-%d-%d, persistentVolumeClaim: {claimName: c-%d-%d}}", d, j,
                                     d, j);
    }
    cr_assert(voff < sizeof(vols));
    ADD("---\napiVersion: v1\nkind: Pod\nmetadata: {name: pod, namespace: default}\n"
        "spec: {containers: [{name: c}], volumes: [%s]}\n",
        vols);
#undef ADD
    cr_assert(off < cap);
}

/* The plugin's PreFilter and Filter for @m, as one status text ("Skip" when PreFilter skips). */
static void mix_check(const struct mix *m)
{
    char yaml[32768], buf[VFX_MSG], name[256];
    mix_cluster(yaml, sizeof(yaml), m);
    struct vfx x;
    vfx_open(&x, yaml);
    void *self = vfx_plugin(&x, nvl);
    const struct ks_pod *pod = vfx_pod(&x, "default", "pod");
    struct ks_cycle_state cs = {0};
    struct ks_pre_filter_result res;
    snprintf(name, sizeof(name), "%s: limit %d/%d, attached %d/%d, shared %d/%d, new %d/%d", m->test,
             m->limit[0], m->limit[1], m->attached[0], m->attached[1], m->shared[0], m->shared[1],
             m->fresh[0], m->fresh[1]);
    const char *pre = vfx_pre_filter(nvl, self, &cs, pod, &res, buf);
    bool any = false;
    for (int d = 0; d < 2; d++)
        any |= m->limit[d] >= 0 && m->shared[d] + m->fresh[d] > 0;
    cr_expect(eq(str, (char *)pre, (char *)(any ? "Success" : "Skip")), "%s: PreFilter", name);
    const char *got =
        strcmp(pre, "Skip") == 0 ? "Success" : vfx_filter(nvl, self, &cs, pod, vfx_node(&x, NODE_NAME), buf);
    cr_expect(eq(str, (char *)got, (char *)(upstream_fits(m) ? "Success" : EXCEEDED)), "%s: Filter", name);
    ks_arena_destroy(&cs.arena);
    nvl->destroy(self);
    vfx_close(&x);
}

/* The cluster: one volume allowed, two in use; sharing one fits, one more does not. */
Test(nodevolumelimits, node_over_limit_admits_pod_without_new_volumes)
{
    static const struct mix cases[] = {
        {"a pod that only shares a volume of the node fits though the node is over its limit",
         {1, -1},
         {2, 0},
         {1, 0},
         {0, 0}},
        {"both of the node's volumes: still nothing new", {1, -1}, {2, 0}, {2, 0}, {0, 0}},
        {"one new volume on the over-limit node does not fit", {1, -1}, {2, 0}, {1, 0}, {1, 0}},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        mix_check(&cases[i]);
}

/*
 * Every combination of {over, at, under} the limit × {0, 1, 2 new volumes} × {sharing none,
 * one, all of the node's volumes}, for one driver; then a driver over its limit whose volume
 * the pod shares next to a second driver {at, under} its limit × {0, 1 new}: each compared with
 * upstream's rule, so checking a limit the pod adds nothing to fails here.
 */
Test(nodevolumelimits, limit_checked_only_for_drivers_with_new_volumes)
{
    const int limit = 2;
    const int attached[] = {limit + 1, limit, limit - 1};
    for (size_t a = 0; a < sizeof(attached) / sizeof(attached[0]); a++) {
        const int shared[] = {0, 1, attached[a]};
        for (size_t s = 0; s < sizeof(shared) / sizeof(shared[0]); s++) {
            for (int fresh = 0; fresh <= 2; fresh++) {
                struct mix m = {"one driver", {limit, -1}, {attached[a], 0}, {shared[s], 0}, {fresh, 0}};
                mix_check(&m);
            }
        }
    }
    for (int other = limit - 1; other <= limit; other++) {
        for (int fresh = 0; fresh <= 1; fresh++) {
            struct mix m = {"two drivers", {limit, limit}, {limit + 1, other}, {1, 0}, {0, fresh}};
            mix_check(&m);
        }
    }
}
