/*
 * test_volume_restrictions.c - the VolumeRestrictions plugin (plugins/volume_restrictions.c).
 *
 * Cases from upstream's volumerestrictions/volume_restrictions_test.go (TestGCEDiskConflicts,
 * TestAWSDiskConflicts, TestRBDDiskConflicts, TestISCSIDiskConflicts, TestAccessModeConflicts)
 * with their exact statuses, plus the read-only sharing rules of isVolumeConflict and the
 * PreFilterExtensions (AddPod / RemovePod, state clone) that preemption uses. As upstream's
 * test, Filter runs only when PreFilter succeeded.
 */
#include "ksched/registry.h"
#include "test_volume_fixtures.h"

TestSuite(volumerestrictions, .init = vfx_setup, .fini = vfx_teardown);

static const struct ks_plugin *const vr = &ks_plugin_volume_restrictions;

#define DISK "Unschedulable: node(s) had no available disk"
#define RWOP                                                                                                 \
    "Unschedulable: node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod "       \
    "access mode"

#define POD_ON(name, volumes)                                                                                \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: default}\n"                       \
    "spec: {nodeName: node-1, containers: [{name: c}], volumes: [" volumes "]}\n"
#define PENDING(volumes)                                                                                     \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: pod, namespace: default}\n"                            \
    "spec: {containers: [{name: c}], volumes: [" volumes "]}\n"
#define PVC(name, mode)                                                                                      \
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " name ", namespace: default}\n"     \
    "spec: {accessModes: [" mode "]}\n"

struct disk_case {
    const char *name;
    const char *existing; /* volumes of the pod on node-1, NULL: no pod there */
    const char *pending;  /* volumes of the pod to schedule */
    const char *pre;      /* PreFilter status */
    const char *want;     /* Filter status (when PreFilter succeeds) */
};

static void run_disk_cases(const struct disk_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct disk_case *c = &cases[i];
        char yaml[4096], buf[VFX_MSG];
        int off = snprintf(yaml, sizeof(yaml), "%s", VFX_NODE("node-1", ""));
        if (c->existing)
            off += snprintf(yaml + off, sizeof(yaml) - (size_t)off,
                            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: existing, namespace: default}\n"
                            "spec: {nodeName: node-1, containers: [{name: c}], volumes: [%s]}\n",
                            c->existing);
        snprintf(yaml + off, sizeof(yaml) - (size_t)off,
                 "---\napiVersion: v1\nkind: Pod\nmetadata: {name: pod, namespace: default}\n"
                 "spec: {containers: [{name: c}], volumes: [%s]}\n",
                 c->pending);
        struct vfx x;
        vfx_open(&x, yaml);
        void *self = vfx_plugin(&x, vr);
        struct ks_cycle_state cs = {0};
        struct ks_pre_filter_result res;
        const struct ks_pod *pod = vfx_pod(&x, "default", "pod");
        const struct ks_node_snap *node = vfx_node(&x, "node-1");

        const char *pre = vfx_pre_filter(vr, self, &cs, pod, &res, buf);
        cr_expect(eq(str, (char *)pre, (char *)c->pre), "%s: PreFilter", c->name);
        cr_expect(res.all, "%s: no node narrowing", c->name);
        if (strcmp(c->pre, "Success") == 0)
            cr_expect(eq(str, (char *)vfx_filter(vr, self, &cs, pod, node, buf), (char *)c->want),
                      "%s: Filter", c->name);
        ks_arena_destroy(&cs.arena);
        vr->destroy(self);
        vfx_close(&x);
    }
}

#define GCE_FOO "{name: v, gcePersistentDisk: {pdName: foo}}"
#define GCE_BAR "{name: v, gcePersistentDisk: {pdName: bar}}"

Test(volumerestrictions, upstream_gce_disk_conflicts)
{
    static const struct disk_case cases[] = {
        {"nothing", NULL, "", "Skip", NULL},
        {"one state", GCE_FOO, "", "Skip", NULL},
        {"same state", GCE_FOO, GCE_FOO, "Success", DISK},
        {"different state", GCE_FOO, GCE_BAR, "Success", "Success"},
        {"pod with a volume that doesn't have restrictions", NULL, "{name: v, emptyDir: {}}", "Skip", NULL},
    };
    run_disk_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

Test(volumerestrictions, gce_read_only_mounts_share)
{
    static const struct disk_case cases[] = {
        {"both read-only", "{name: v, gcePersistentDisk: {pdName: foo, readOnly: true}}",
         "{name: v, gcePersistentDisk: {pdName: foo, readOnly: true}}", "Success", "Success"},
        {"existing read-write", GCE_FOO, "{name: v, gcePersistentDisk: {pdName: foo, readOnly: true}}",
         "Success", DISK},
        {"new read-write", "{name: v, gcePersistentDisk: {pdName: foo, readOnly: true}}", GCE_FOO, "Success",
         DISK},
    };
    run_disk_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

#define EBS_FOO "{name: v, awsElasticBlockStore: {volumeID: foo}}"
#define EBS_BAR "{name: v, awsElasticBlockStore: {volumeID: bar}}"

Test(volumerestrictions, upstream_aws_disk_conflicts)
{
    static const struct disk_case cases[] = {
        {"nothing", NULL, "", "Skip", NULL},
        {"one state", EBS_FOO, "", "Skip", NULL},
        {"same state", EBS_FOO, EBS_FOO, "Success", DISK},
        {"different state", EBS_FOO, EBS_BAR, "Success", "Success"},
        /* AWS EBS forbids any two pods mounting the same volume id, read-only or not */
        {"both read-only", "{name: v, awsElasticBlockStore: {volumeID: foo, readOnly: true}}",
         "{name: v, awsElasticBlockStore: {volumeID: foo, readOnly: true}}", "Success", DISK},
    };
    run_disk_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

#define RBD_AB "{name: v, rbd: {monitors: [a, b], pool: foo, image: bar, fsType: ext4}}"
#define RBD_CD "{name: v, rbd: {monitors: [c, d], pool: foo, image: bar, fsType: ext4}}"

Test(volumerestrictions, upstream_rbd_disk_conflicts)
{
    static const struct disk_case cases[] = {
        {"nothing", NULL, "", "Skip", NULL},
        {"one state", RBD_AB, "", "Skip", NULL},
        {"same state", RBD_AB, RBD_AB, "Success", DISK},
        {"different state", RBD_AB, RBD_CD, "Success", "Success"},
        {"one common monitor", RBD_AB, "{name: v, rbd: {monitors: [b, c], pool: foo, image: bar}}", "Success",
         DISK},
        {"other pool", RBD_AB, "{name: v, rbd: {monitors: [a, b], pool: baz, image: bar}}", "Success",
         "Success"},
        {"both read-only", "{name: v, rbd: {monitors: [a], pool: foo, image: bar, readOnly: true}}",
         "{name: v, rbd: {monitors: [a], pool: foo, image: bar, readOnly: true}}", "Success", "Success"},
    };
    run_disk_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

#define ISCSI_1                                                                                              \
    "{name: v, iscsi: {targetPortal: '127.0.0.1:3260', iqn: 'iqn.2016-12.server:storage.target01', fsType: " \
    "ext4, lun: 0}}"
#define ISCSI_2                                                                                              \
    "{name: v, iscsi: {targetPortal: '127.0.0.1:3260', iqn: 'iqn.2017-12.server:storage.target01', fsType: " \
    "ext4, lun: 0}}"

Test(volumerestrictions, upstream_iscsi_disk_conflicts)
{
    static const struct disk_case cases[] = {
        {"nothing", NULL, "", "Skip", NULL},
        {"one state", ISCSI_1, "", "Skip", NULL},
        {"same state", ISCSI_1, ISCSI_1, "Success", DISK},
        {"different state", ISCSI_1, ISCSI_2, "Success", "Success"},
        {"both read-only", "{name: v, iscsi: {targetPortal: 'p:3260', iqn: iqn.x, lun: 0, readOnly: true}}",
         "{name: v, iscsi: {targetPortal: 'p:3260', iqn: iqn.x, lun: 0, readOnly: true}}", "Success",
         "Success"},
    };
    run_disk_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

#define RWOP_PVCS PVC("claim-with-rwop-1", "ReadWriteOncePod") PVC("claim-with-rwop-2", "ReadWriteOncePod")
#define RWX_PVC   PVC("claim-with-rwx", "ReadWriteMany")
#define V_RWOP1   "{name: a, persistentVolumeClaim: {claimName: claim-with-rwop-1}}"
#define V_RWOP2   "{name: b, persistentVolumeClaim: {claimName: claim-with-rwop-2}}"
#define V_RWX     "{name: x, persistentVolumeClaim: {claimName: claim-with-rwx}}"

Test(volumerestrictions, upstream_access_mode_conflicts)
{
    static const struct {
        const char *name, *yaml, *pre, *want;
    } cases[] = {
        {"nothing", VFX_NODE("node-1", "") PENDING(""), "Skip", NULL},
        {"no access mode conflict",
         VFX_NODE("node-1", "") RWOP_PVCS RWX_PVC POD_ON("pod-with-rwx", V_RWX) PENDING(V_RWOP1), "Skip",
         NULL},
        {"access mode conflict, unschedulable",
         VFX_NODE("node-1", "") RWOP_PVCS RWX_PVC POD_ON("pod-with-one-pvc", V_RWOP1)
             POD_ON("pod-with-rwx", V_RWX) PENDING(V_RWOP1),
         "Success", RWOP},
        {"two conflicts, unschedulable",
         VFX_NODE("node-1", "") RWOP_PVCS RWX_PVC POD_ON("pod-with-two-pvcs", V_RWOP1 ", " V_RWOP2)
             POD_ON("pod-with-rwx", V_RWX) PENDING(V_RWOP1 ", " V_RWOP2),
         "Success", RWOP},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct vfx x;
        char buf[VFX_MSG];
        vfx_open(&x, cases[i].yaml);
        void *self = vfx_plugin(&x, vr);
        struct ks_cycle_state cs = {0};
        struct ks_pre_filter_result res;
        const struct ks_pod *pod = vfx_pod(&x, "default", "pod");
        const struct ks_node_snap *node = vfx_node(&x, "node-1");
        cr_expect(eq(str, (char *)vfx_pre_filter(vr, self, &cs, pod, &res, buf), (char *)cases[i].pre), "%s",
                  cases[i].name);
        if (strcmp(cases[i].pre, "Success") == 0)
            cr_expect(eq(str, (char *)vfx_filter(vr, self, &cs, pod, node, buf), (char *)cases[i].want), "%s",
                      cases[i].name);
        ks_arena_destroy(&cs.arena);
        vr->destroy(self);
        vfx_close(&x);
    }
}

Test(volumerestrictions, upstream_failed_to_get_pvc)
{
    struct vfx x;
    char buf[VFX_MSG];
    vfx_open(&x, VFX_NODE("node-1", ""));
    void *self = vfx_plugin(&x, vr);
    struct ks_pod *pod = ks_fake_pod("default", "pod-with-one-pvc");
    vfx_volume(pod, KS_VOLUME_PVC, "a", "claim-with-rwop-1", false);
    struct ks_cycle_state cs = {0};
    struct ks_pre_filter_result res;

    cr_expect(eq(str, (char *)vfx_pre_filter(vr, self, &cs, pod, &res, buf),
                 "UnschedulableAndUnresolvable: persistentvolumeclaim \"claim-with-rwop-1\" not found"));
    ks_arena_destroy(&cs.arena);
    ks_pod_destroy(pod);
    vr->destroy(self);
    vfx_close(&x);
}

/* Preemption: removing the pod that holds the claim resolves the conflict; the clone is separate. */
Test(volumerestrictions, remove_pod_resolves_read_write_once_pod)
{
    struct vfx x;
    char buf[VFX_MSG];
    vfx_open(&x, VFX_NODE("node-1", "") RWOP_PVCS POD_ON("holder", V_RWOP1) PENDING(V_RWOP1));
    void *self = vfx_plugin(&x, vr);
    const struct ks_pod *pod = vfx_pod(&x, "default", "pod");
    const struct ks_pod *holder = vfx_pod(&x, "default", "holder");
    const struct ks_node_snap *node = vfx_node(&x, "node-1");
    struct ks_cycle_state cs = {0}, dry = {0};
    struct ks_pre_filter_result res;
    struct ks_status st = {0};

    cr_assert(eq(str, (char *)vfx_pre_filter(vr, self, &cs, pod, &res, buf), "Success"));
    void *copy = NULL;
    cr_assert(eq(int, vr->state_clone(self, cs.slot[0], &dry.arena, &copy), 0));
    dry.slot[0] = copy;
    cr_expect(eq(int, vr->remove_pod(self, &dry, pod, holder, node, &st), KS_SUCCESS));
    cr_expect(eq(str, (char *)vfx_filter(vr, self, &dry, pod, node, buf), "Success"), "holder removed");
    cr_expect(eq(str, (char *)vfx_filter(vr, self, &cs, pod, node, buf), RWOP), "original state untouched");
    cr_expect(eq(int, vr->add_pod(self, &dry, pod, holder, node, &st), KS_SUCCESS));
    cr_expect(eq(str, (char *)vfx_filter(vr, self, &dry, pod, node, buf), RWOP), "holder added back");
    ks_arena_destroy(&dry.arena);
    ks_arena_destroy(&cs.arena);
    vr->destroy(self);
    vfx_close(&x);
}

/* A read-write-once-pod claim used in another namespace under the same name is no conflict. */
Test(volumerestrictions, read_write_once_pod_is_per_namespace)
{
    struct vfx x;
    char buf[VFX_MSG];
    vfx_open(&x, VFX_NODE("node-1", "") RWOP_PVCS
             "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: claim-with-rwop-1, "
             "namespace: other}\n"
             "spec: {accessModes: [ReadWriteOncePod]}\n"
             "---\napiVersion: v1\nkind: Pod\nmetadata: {name: holder, namespace: other}\n"
             "spec: {nodeName: node-1, containers: [{name: c}], volumes: [" V_RWOP1 "]}\n" PENDING(V_RWOP1));
    void *self = vfx_plugin(&x, vr);
    struct ks_cycle_state cs = {0};
    struct ks_pre_filter_result res;
    cr_expect(
        eq(str, (char *)vfx_pre_filter(vr, self, &cs, vfx_pod(&x, "default", "pod"), &res, buf), "Skip"));
    ks_arena_destroy(&cs.arena);
    vr->destroy(self);
    vfx_close(&x);
}
