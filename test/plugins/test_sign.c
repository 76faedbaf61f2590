/*
 * test_sign.c - the in-tree plugins' sign ops (plugin_types.h) and the signatures
 * ks_fw_sign() builds from them (include/ksched/sign.h).
 *
 * What a signature must do: pods that differ in a field some plugin's Filter or Score
 * reads sign differently, pods that differ only in fields nothing reads sign the same,
 * and a pod whose Filter or Score depends on more than itself and the node's record
 * (other pods' terms, workloads selecting it, claims) is unsignable. The property test
 * holds the promise itself: over a cluster of varied nodes, random pods whose signatures
 * and PreFilter Skip masks are equal get, on every node, the same Filter status and the
 * same raw score from every score plugin of the default profile; and after more pods are
 * placed and one deleted, the same answers as before on every node whose record did not
 * change (what the signature index reuses).
 *
 * Clusters and pods are loaded from YAML as `ksched schedule` loads them
 * (test_volume_fixtures.h); plugin instances that need no framework come from
 * plugin_fixtures.h.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdarg.h>

#include "ksched/plugin_helpers_sign.h"
#include "ksched/plugin_helpers_spread.h"
#include "ksched/registry.h"
#include "ksched/sign.h"
#include "plugin_fixtures.h"
#include "test_volume_fixtures.h"

TestSuite(sign, .init = vfx_setup, .fini = vfx_teardown);

/* ---- the cluster -------------------------------------------------------------------------------- */

#define ALLOC "cpu: '4', memory: 8Gi, pods: '110', ephemeral-storage: 20Gi"
#define NODE(n, l)                                                                                           \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: " n ", labels: {kubernetes.io/hostname: " n l "}}\n"
#define IMAGE(n, s) "{names: [" n "], sizeBytes: " s "}"
#define BOUND(n, node, meta, spec)                                                                           \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " n ", namespace: default" meta "}\n"                  \
    "spec: {nodeName: " node ", " spec "}\n"

/*
 * Nodes with taints of every effect, a cordon, labels, images, used host ports and
 * allocations; existing pods whose terms reach some pending pods (required anti-affinity
 * against app=web, preferred affinity to app=db, both over zones); a Service selecting
 * app=api and a ReplicaSet; a WaitForFirstConsumer claim.
 */
/* clang-format off */
static const char cluster[] =
    NODE("n1", ", zone: a, disktype: ssd")
    "status: {allocatable: {" ALLOC "}, images: [" IMAGE("nginx:latest", "300000000") "]}\n"
    NODE("n2", ", zone: a")
    "spec: {taints: [{key: gpu, value: 'true', effect: NoSchedule}]}\n"
    "status: {allocatable: {" ALLOC ", example.com/gpu: '2'}}\n"
    NODE("n3", ", zone: b")
    "spec: {taints: [{key: maint, value: 'true', effect: PreferNoSchedule}]}\n"
    "status: {allocatable: {" ALLOC "}, images: [" IMAGE("busybox:latest", "50000000") ", "
        IMAGE("nginx:1.25", "150000000") "]}\n"
    NODE("n4", ", zone: b, disktype: ssd")
    "spec: {taints: [{key: dedicated, value: infra, effect: NoExecute}]}\n"
    "status: {allocatable: {" ALLOC "}}\n"
    NODE("n5", ", zone: c")
    "spec: {unschedulable: true}\n"
    "status: {allocatable: {" ALLOC "}, images: [" IMAGE("nginx:latest", "300000000") "]}\n"
    NODE("n6", ", zone: c, disktype: hdd")
    "status: {allocatable: {cpu: '1', memory: 1Gi, pods: '3'}}\n"
    NODE("n7", "")
    "spec: {taints: [{key: maint, value: 'true', effect: PreferNoSchedule}, "
        "{key: other, value: x, effect: PreferNoSchedule}]}\n"
    "status: {allocatable: {" ALLOC ", example.com/gpu: '4'}}\n"
    NODE("n8", ", zone: a, disktype: ssd")
    "status: {allocatable: {" ALLOC "}}\n"
    NODE("n9", ", zone: b")
    "status: {allocatable: {" ALLOC "}, images: [" IMAGE("nginx:latest", "300000000") ", "
        IMAGE("busybox:latest", "50000000") "]}\n"
    BOUND("used-1", "n1", "", "containers: [{name: c, resources: {requests: {cpu: '1', memory: 2Gi}}}]")
    BOUND("used-2", "n6", "", "containers: [{name: c, resources: {requests: {cpu: 500m, memory: 512Mi}}}]")
    BOUND("port-user", "n8", "", "containers: [{name: c, ports: [{containerPort: 80, hostPort: 8080}]}]")
    BOUND("udp-user", "n9", "",
          "containers: [{name: c, ports: [{containerPort: 90, hostPort: 9090, protocol: UDP}]}]")
    BOUND("api-user", "n1", ", labels: {app: api}", "containers: [{name: c}]")
    BOUND("gpu-user", "n2", "", "containers: [{name: c, resources: {requests: {example.com/gpu: '1'}, "
                                "limits: {example.com/gpu: '1'}}}]")
    BOUND("anti-user", "n3", ", labels: {app: anti}",
          "containers: [{name: c}], affinity: {podAntiAffinity: {"
          "requiredDuringSchedulingIgnoredDuringExecution: "
          "[{labelSelector: {matchLabels: {app: web}}, topologyKey: zone}]}}")
    BOUND("pref-user", "n4", ", labels: {app: pref}",
          "containers: [{name: c}], affinity: {podAffinity: {"
          "preferredDuringSchedulingIgnoredDuringExecution: "
          "[{weight: 50, podAffinityTerm: {labelSelector: {matchLabels: {app: db}}, topologyKey: zone}}]}}")
    "---\napiVersion: v1\nkind: Service\nmetadata: {name: svc-api, namespace: default}\n"
    "spec: {selector: {app: api}}\n"
    "---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs-1, namespace: default}\n"
    "spec: {selector: {matchLabels: {app: rs}}}\n"
    "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: wffc}\n"
    "provisioner: example.com/csi\nvolumeBindingMode: WaitForFirstConsumer\n"
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: default}\n"
    "spec: {storageClassName: wffc, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n";
/* clang-format on */

/* ---- pending pods ------------------------------------------------------------------------------- */

#define POD_NS(n, ns, meta, spec)                                                                            \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " n ", namespace: " ns meta "}\nspec: " spec "\n"
#define POD(n, meta, spec) POD_NS(n, "default", meta, spec)
#define C(req)             "{name: c, image: nginx, resources: {requests: {" req "}}}"
#define BASE_C             C("cpu: 100m, memory: 128Mi")
#define BASE(more)         "{" more "containers: [" BASE_C "]}"
#define NA(aff)            "affinity: {nodeAffinity: {" aff "}}, "
#define REQUIRED(term)     "requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [" term "]}"
#define PREFERRED(w, expr)                                                                                   \
    "preferredDuringSchedulingIgnoredDuringExecution: [{weight: " w                                          \
    ", preference: {matchExpressions: [" expr "]}}]"

/* Each pod differs from "base" in one field (or in none that anything reads). */
/* clang-format off */
static const char pending[] =
    POD("base", "", BASE(""))
    POD("same", ", labels: {team: x}, uid: u-2, annotations: {note: x}",
        "{priority: 7, containers: [" BASE_C "]}")
    POD_NS("base-other", "other", "", BASE(""))
    POD("cpu", "", "{containers: [" C("cpu: 200m, memory: 128Mi") "]}")
    POD("gpu", "", "{containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m, memory: 128Mi, "
                   "example.com/gpu: '1'}, limits: {example.com/gpu: '1'}}}]}")
    POD("overhead", "", BASE("overhead: {cpu: 10m}, "))
    POD("eph", "", "{containers: [" C("cpu: 100m, memory: 128Mi, ephemeral-storage: 1Gi") "]}")
    POD("two", "", "{containers: [" BASE_C ", {name: d, image: nginx}]}")
    POD("tol", "", BASE("tolerations: [{key: gpu, operator: Exists, effect: NoSchedule}], "))
    POD("tol-secs", "",
        BASE("tolerations: [{key: dedicated, operator: Exists, effect: NoExecute, tolerationSeconds: 30}], "))
    POD("tol-nosecs", "", BASE("tolerations: [{key: dedicated, operator: Exists, effect: NoExecute}], "))
    POD("tol-unsched", "",
        BASE("tolerations: [{key: node.kubernetes.io/unschedulable, operator: Exists, "
             "effect: NoSchedule}], "))
    POD("tol-all", "", BASE("tolerations: [{operator: Exists}], "))
    POD("port", "", "{containers: [{name: c, image: nginx, "
                    "resources: {requests: {cpu: 100m, memory: 128Mi}}, "
                    "ports: [{containerPort: 80, hostPort: 8080}]}]}")
    POD("port-udp", "", "{containers: [{name: c, image: nginx, "
                        "resources: {requests: {cpu: 100m, memory: 128Mi}}, "
                        "ports: [{containerPort: 80, hostPort: 8080, protocol: UDP}]}]}")
    POD("cport", "", "{containers: [{name: c, image: nginx, "
                     "resources: {requests: {cpu: 100m, memory: 128Mi}}, "
                     "ports: [{containerPort: 80}]}]}")
    POD("sel", "", BASE("nodeSelector: {disktype: ssd}, "))
    POD("req", "", BASE(NA(REQUIRED("{matchExpressions: [{key: zone, operator: In, values: [a, b]}]}"))))
    POD("req2", "", BASE(NA(REQUIRED("{matchExpressions: [{key: zone, operator: In, values: [a]}]}"))))
    POD("pref", "", BASE(NA(PREFERRED("10", "{key: disktype, operator: In, values: [ssd]}"))))
    POD("pref2", "", BASE(NA(PREFERRED("20", "{key: disktype, operator: In, values: [ssd]}"))))
    POD("pinned", "", BASE(NA(REQUIRED("{matchFields: [{key: metadata.name, operator: In, values: [n1]}]}"))))
    POD("busybox", "", "{containers: [{name: c, image: busybox, "
                       "resources: {requests: {cpu: 100m, memory: 128Mi}}}]}")
    POD("init-image", "", BASE("initContainers: [{name: i, image: busybox}], "))
    POD("anti-term", "", BASE("affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                              "[{labelSelector: {matchLabels: {app: x}}, topologyKey: zone}]}}, "))
    POD("aff-pref", "", BASE("affinity: {podAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
                             "[{weight: 1, podAffinityTerm: {labelSelector: {matchLabels: {app: x}}, "
                             "topologyKey: zone}}]}}, "))
    POD("spread", "", BASE("topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, "
                           "whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: x}}}], "))
    POD("spread-hard", "", BASE("topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, "
                                "whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: x}}}], "))
    POD("spread-keys", "", BASE("topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, "
                                "whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: x}}}, "
                                "{maxSkew: 1, topologyKey: rack, whenUnsatisfiable: ScheduleAnyway, "
                                "labelSelector: {matchLabels: {app: x}}}], "))
    POD("spread-host", "", BASE("topologySpreadConstraints: [{maxSkew: 2, topologyKey: kubernetes.io/hostname, "
                                "whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: yy}}}, "
                                "{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, "
                                "labelSelector: {matchLabels: {app: yy}}}], "))
    POD("api", ", labels: {app: api}", BASE(""))
    POD_NS("api-other", "other", ", labels: {app: api}", BASE(""))
    POD("rs", ", ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs-1, uid: r1, "
              "controller: true}]",
        BASE(""))
    POD("web", ", labels: {app: web}", BASE(""))
    POD_NS("web-other", "other", ", labels: {app: web}", BASE(""))
    POD("db", ", labels: {app: db}", BASE(""))
    POD("pvc", "", BASE("volumes: [{name: v, persistentVolumeClaim: {claimName: data}}], "))
    POD("ephemeral", "", BASE("volumes: [{name: v, ephemeral: {}}], "))
    POD("gce", "", BASE("volumes: [{name: v, gcePersistentDisk: {pdName: pd-1}}], "))
    POD("ebs", "", BASE("volumes: [{name: v, awsElasticBlockStore: {volumeID: vol-1}}], "))
    POD("empty-dir", "", BASE("volumes: [{name: v, emptyDir: {}}], "));
/* clang-format on */

/* ---- signing -------------------------------------------------------------------------------------- */

#define SIG_CAP 4096

struct sig {
    int pre;              /* PreFilter's code (ks_fw_sign), KS_SUCCESS for a plugin without one */
    int code;             /* the sign op's or ks_fw_sign()'s */
    uint64_t skip_filter; /* the PreFilter Skip mask */
    bool spread; /* spread-scored (ks_sign_spread_scored): by the plugin of spread_slot, over spread_key */
    uint16_t spread_slot;
    uint32_t spread_key;
    uint32_t len;
    uint8_t bytes[SIG_CAP];
};

static bool sig_eq(const struct sig *a, const struct sig *b)
{
    return a->code == KS_SUCCESS && b->code == KS_SUCCESS && a->skip_filter == b->skip_filter &&
           a->len == b->len && memcmp(a->bytes, b->bytes, a->len) == 0;
}

static bool sig_differ(const struct sig *a, const struct sig *b)
{
    return !sig_eq(a, b);
}

/* The world: the cluster, the pending pods, and optionally a configuration (NULL: v1 defaults). */
static void open_world(struct vfx *x, const char *config)
{
    static char yaml[sizeof(cluster) + sizeof(pending)];
    struct ks_error err = {0};

    snprintf(yaml, sizeof(yaml), "%s%s", cluster, pending);
    vfx_open(x, yaml);
    if (!config)
        return;
    ks_framework_destroy(x->fw);
    ks_config_destroy(x->cfg);
    cr_assert(eq(int, ks_config_load_yaml("config", config, strlen(config), &x->cfg, &err), 0), "%s: %s",
              err.field, err.msg);
    struct ks_framework_deps deps = {.cache = x->cache, .objects = x->objs};
    cr_assert(eq(int, ks_framework_create(&x->cfg->profiles[0], &deps, &x->fw, &err), 0), "%s", err.msg);
}

static struct ks_pod *pod_of(struct vfx *x, const char *name)
{
    const char *slash = strchr(name, '/');
    if (!slash)
        return vfx_pod(x, "default", name);
    char ns[32];
    snprintf(ns, sizeof(ns), "%.*s", (int)(slash - name), name);
    return vfx_pod(x, ns, slash + 1);
}

/* The profile's signature of @pod after its PreFilter, into a buffer of @cap bytes, as a cycle makes it. */
static void fw_sign_cap(struct vfx *x, const struct ks_pod *pod, struct sig *out, uint32_t cap)
{
    struct ks_cycle_state cs;
    struct ks_pre_filter_result res = {.all = true};
    struct ks_status st = {0};

    ks_cycle_state_init(&cs);
    ks_rcu_read_lock();
    out->pre = ks_fw_run_pre_filter(x->fw, &cs, pod, &res, &st);
    struct ks_sign s = {.buf = out->bytes, .cap = cap};
    out->code = ks_fw_sign(x->fw, &cs, pod, &s);
    ks_rcu_read_unlock();
    out->len = s.len;
    out->skip_filter = cs.skip_filter;
    out->spread = s.spread;
    out->spread_slot = s.spread_slot;
    out->spread_key = s.spread_key;
    ks_cycle_state_destroy(&cs);
}

static void fw_sign(struct vfx *x, const char *name, struct sig *out)
{
    fw_sign_cap(x, pod_of(x, name), out, SIG_CAP);
}

/* @p's own sign op on @pod (its instance @self in slot 0), after its PreFilter if it has one. */
static void op_sign(const struct ks_plugin *p, void *self, const struct ks_pod *pod, struct sig *out)
{
    struct ks_cycle_state cs;
    struct ks_status st = {0};

    fx_cs_init(&cs);
    out->pre = KS_SUCCESS;
    if (p->pre_filter) {
        struct ks_pre_filter_result res = {.all = true};
        out->pre = p->pre_filter(self, &cs, pod, &res, &st);
        if (out->pre == KS_SKIP)
            cs.skip_filter |= 1;
    }
    struct ks_sign s = {.buf = out->bytes, .cap = SIG_CAP};
    out->code = p->sign(self, &cs, pod, &s);
    cr_assert(s.overflow == false);
    out->len = s.len;
    out->skip_filter = cs.skip_filter;
    fx_cs_free(&cs);
}

/*
 * For plugin @p (no framework, default args): the pods of @same sign as "base" does, the
 * pods of @differ sign otherwise (each NULL-terminated).
 */
static void expect_op(struct vfx *x, const struct ks_plugin *p, const char *const *same,
                      const char *const *differ)
{
    void *self = fx_init(p, NULL);
    struct sig *base = fx_must(calloc(1, sizeof(*base))), *other = fx_must(calloc(1, sizeof(*other)));

    op_sign(p, self, pod_of(x, "base"), base);
    cr_assert(eq(int, base->code, KS_SUCCESS), "%s: base", p->name);
    for (const char *const *n = same; *n; n++) {
        op_sign(p, self, pod_of(x, *n), other);
        cr_expect(sig_eq(base, other), "%s: %s should sign as base", p->name, *n);
    }
    for (const char *const *n = differ; *n; n++) {
        op_sign(p, self, pod_of(x, *n), other);
        cr_expect(eq(int, other->code, KS_SUCCESS), "%s: %s", p->name, *n);
        cr_expect(sig_differ(base, other), "%s: %s should not sign as base", p->name, *n);
    }
    free(base);
    free(other);
    if (p->destroy)
        p->destroy(self);
}

#define LIST(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NONE      ((const char *const[]){NULL})

/* ---- each plugin's own bytes ------------------------------------------------------------------ */

Test(sign, every_plugin_at_filter_or_score_has_a_sign_op)
{
    for (const struct ks_plugin *const *p = ks_registry; *p; p++) {
        bool runs = (*p)->pre_filter || (*p)->filter || (*p)->pre_score || (*p)->score;
        bool ok = !runs || (*p)->sign;
        cr_expect(ok, "%s has no sign op", (*p)->name);
    }
}

Test(sign, node_resources_fit)
{
    struct vfx x;
    open_world(&x, NULL);
    expect_op(&x, &ks_plugin_node_resources_fit, LIST("same", "tol", "sel", "busybox", "port", "web"),
              LIST("cpu", "gpu", "overhead", "eph", "two"));
    vfx_close(&x);
}

Test(sign, node_resources_balanced_allocation)
{
    struct vfx x;
    open_world(&x, NULL);
    /* cpu and memory only, without the non-zero defaults: the second container requests none */
    expect_op(&x, &ks_plugin_node_resources_balanced_allocation, LIST("same", "gpu", "eph", "two", "tol"),
              LIST("cpu", "overhead"));
    vfx_close(&x);
}

Test(sign, node_name)
{
    struct vfx x;
    open_world(&x, NULL);
    expect_op(&x, &ks_plugin_node_name, LIST("same", "cpu", "tol", "sel"), NONE);
    /* a copy of base naming a node (set here: a loaded pod with nodeName is bound) */
    struct ks_pod *named = pod_of(&x, "same");
    named->node_name = ks_intern("n1");
    expect_op(&x, &ks_plugin_node_name, NONE, LIST("same"));
    named->node_name = KS_ID_EMPTY;
    vfx_close(&x);
}

Test(sign, node_unschedulable)
{
    struct vfx x;
    open_world(&x, NULL);
    /* only whether the unschedulable taint is tolerated counts */
    expect_op(&x, &ks_plugin_node_unschedulable, LIST("same", "tol", "tol-secs", "cpu"),
              LIST("tol-unsched", "tol-all"));
    void *self = fx_init(&ks_plugin_node_unschedulable, NULL);
    struct sig *a = fx_must(calloc(1, sizeof(*a))), *b = fx_must(calloc(1, sizeof(*b)));
    op_sign(&ks_plugin_node_unschedulable, self, pod_of(&x, "tol-unsched"), a);
    op_sign(&ks_plugin_node_unschedulable, self, pod_of(&x, "tol-all"), b);
    cr_expect(sig_eq(a, b), "both tolerate the unschedulable taint");
    free(a);
    free(b);
    ks_plugin_node_unschedulable.destroy(self);
    vfx_close(&x);
}

Test(sign, taint_toleration)
{
    struct vfx x;
    open_world(&x, NULL);
    expect_op(&x, &ks_plugin_taint_toleration, LIST("same", "cpu", "sel", "port"),
              LIST("tol", "tol-secs", "tol-unsched", "tol-all"));
    /* tolerationSeconds is read by neither Filter nor Score */
    void *self = fx_init(&ks_plugin_taint_toleration, NULL);
    struct sig *a = fx_must(calloc(1, sizeof(*a))), *b = fx_must(calloc(1, sizeof(*b)));
    op_sign(&ks_plugin_taint_toleration, self, pod_of(&x, "tol-secs"), a);
    op_sign(&ks_plugin_taint_toleration, self, pod_of(&x, "tol-nosecs"), b);
    cr_expect(sig_eq(a, b));
    op_sign(&ks_plugin_taint_toleration, self, pod_of(&x, "tol"), b);
    cr_expect(sig_differ(a, b));
    free(a);
    free(b);
    ks_plugin_taint_toleration.destroy(self);
    vfx_close(&x);
}

Test(sign, node_ports)
{
    struct vfx x;
    open_world(&x, NULL);
    /* a containerPort without hostPort is not a host port */
    expect_op(&x, &ks_plugin_node_ports, LIST("same", "cport", "cpu", "tol"), LIST("port", "port-udp"));
    void *self = fx_init(&ks_plugin_node_ports, NULL);
    struct sig *a = fx_must(calloc(1, sizeof(*a))), *b = fx_must(calloc(1, sizeof(*b)));
    op_sign(&ks_plugin_node_ports, self, pod_of(&x, "port"), a);
    op_sign(&ks_plugin_node_ports, self, pod_of(&x, "port-udp"), b);
    cr_expect(sig_differ(a, b), "the protocol counts");
    free(a);
    free(b);
    ks_plugin_node_ports.destroy(self);
    vfx_close(&x);
}

Test(sign, node_affinity)
{
    struct vfx x;
    open_world(&x, NULL);
    expect_op(&x, &ks_plugin_node_affinity, LIST("same", "cpu", "tol", "port"),
              LIST("sel", "req", "req2", "pref", "pref2"));
    void *self = fx_init(&ks_plugin_node_affinity, NULL);
    struct sig *a = fx_must(calloc(1, sizeof(*a))), *b = fx_must(calloc(1, sizeof(*b)));
    op_sign(&ks_plugin_node_affinity, self, pod_of(&x, "req"), a);
    op_sign(&ks_plugin_node_affinity, self, pod_of(&x, "req2"), b);
    cr_expect(sig_differ(a, b), "required values");
    op_sign(&ks_plugin_node_affinity, self, pod_of(&x, "pref"), a);
    op_sign(&ks_plugin_node_affinity, self, pod_of(&x, "pref2"), b);
    cr_expect(sig_differ(a, b), "preferred weights");
    /* PreFilter narrows the nodes to the pinned names: upstream evaluates only those */
    op_sign(&ks_plugin_node_affinity, self, pod_of(&x, "pinned"), a);
    cr_expect(eq(int, a->code, KS_SKIP));
    free(a);
    free(b);
    ks_plugin_node_affinity.destroy(self);
    vfx_close(&x);
}

Test(sign, image_locality)
{
    struct vfx x;
    open_world(&x, NULL);
    expect_op(&x, &ks_plugin_image_locality, LIST("same", "cpu", "tol"),
              LIST("busybox", "init-image", "two"));
    vfx_close(&x);
}

Test(sign, volume_plugins_decline_pods_with_volumes_they_read)
{
    static const struct ks_plugin *const plugins[] = {
        &ks_plugin_volume_binding,     &ks_plugin_volume_restrictions, &ks_plugin_volume_zone,
        &ks_plugin_node_volume_limits, &ks_plugin_ebs_limits,          &ks_plugin_gce_pd_limits,
        &ks_plugin_azure_disk_limits,  &ks_plugin_cinder_limits,
    };
    static const char *const declined[] = {"pvc", "ephemeral", "gce", "ebs"};
    static const char *const signed_[] = {"base", "empty-dir"};
    struct vfx x;
    uint8_t buf[64];

    open_world(&x, NULL);
    for (size_t i = 0; i < sizeof(plugins) / sizeof(plugins[0]); i++) {
        cr_assert(eq(ptr, (void *)plugins[i]->sign, (void *)ks_sign_no_volumes), "%s", plugins[i]->name);
        for (size_t k = 0; k < sizeof(declined) / sizeof(declined[0]); k++) {
            struct ks_sign s = {.buf = buf, .cap = sizeof(buf)};
            cr_expect(eq(int, plugins[i]->sign(NULL, NULL, pod_of(&x, declined[k]), &s), KS_SKIP), "%s: %s",
                      plugins[i]->name, declined[k]);
        }
        for (size_t k = 0; k < sizeof(signed_) / sizeof(signed_[0]); k++) {
            struct ks_sign s = {.buf = buf, .cap = sizeof(buf)};
            cr_expect(eq(int, plugins[i]->sign(NULL, NULL, pod_of(&x, signed_[k]), &s), KS_SUCCESS));
            cr_expect(eq(u32, s.len, 0));
        }
    }
    vfx_close(&x);
}

/* The default selector helper answers as the selector it stands for. */
Test(sign, default_selects_agrees_with_default_selector)
{
    struct vfx x;
    struct ks_arena arena = {0};

    open_world(&x, NULL);
    struct ks_pod **pods = ks_objects_pods(x.objs);
    uint32_t selected = 0;
    for (uint32_t i = 0; i < ks_objects_count(x.objs, POD); i++) {
        const struct ks_label_selector *sel;
        cr_assert(eq(int, ks_spread_default_selector(x.objs, NULL, pods[i], &arena, &sel), 0));
        bool selects = ks_spread_default_selects(x.objs, NULL, pods[i]);
        cr_expect(eq(int, selects, sel->nreqs > 0), "%s", pods[i]->meta.name);
        selected += selects;
        cr_expect(ks_spread_default_selects(NULL, NULL, pods[i]) == false);
    }
    cr_expect(eq(u32, selected, 3), "api, rs and api-user");
    ks_arena_destroy(&arena);
    vfx_close(&x);
}

/* ---- signatures of the default profile ------------------------------------------------------------- */

Test(sign, default_profile_ignores_fields_nothing_reads)
{
    static const char *const pairs[][2] = {
        {"base", "same"},             /* name, uid, labels, annotations, priority */
        {"base", "other/base-other"}, /* namespace */
        {"base", "other/web-other"},  /* labels no existing term selects there */
        {"base", "other/api-other"},  /* labels no Service of that namespace selects */
        {"base", "cport"},            /* a container port without host port */
        {"base", "empty-dir"},        /* a volume no plugin reads */
        {"tol-secs", "tol-nosecs"},   /* tolerationSeconds */
    };
    struct vfx x;
    struct sig *a = fx_must(calloc(1, sizeof(*a))), *b = fx_must(calloc(1, sizeof(*b)));

    open_world(&x, NULL);
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        fw_sign(&x, pairs[i][0], a);
        fw_sign(&x, pairs[i][1], b);
        cr_expect(eq(int, a->code, KS_SUCCESS), "%s", pairs[i][0]);
        cr_expect(eq(int, b->code, KS_SUCCESS), "%s", pairs[i][1]);
        cr_expect(sig_eq(a, b), "%s and %s should sign the same", pairs[i][0], pairs[i][1]);
    }
    free(a);
    free(b);
    vfx_close(&x);
}

Test(sign, default_profile_reads_every_field_a_plugin_reads)
{
    static const char *const differ[] = {
        "cpu",  "gpu",      "overhead", "eph", "two",  "tol",  "tol-secs", "tol-unsched", "tol-all",
        "port", "port-udp", "sel",      "req", "req2", "pref", "pref2",    "busybox",     "init-image"};
    struct vfx x;
    struct sig *base = fx_must(calloc(1, sizeof(*base)));
    struct sig *all = fx_must(calloc(sizeof(differ) / sizeof(differ[0]), sizeof(*all)));

    open_world(&x, NULL);
    fw_sign(&x, "base", base);
    cr_assert(eq(int, base->code, KS_SUCCESS));
    cr_assert(gt(u32, base->len, 0));
    for (size_t i = 0; i < sizeof(differ) / sizeof(differ[0]); i++) {
        fw_sign(&x, differ[i], &all[i]);
        cr_expect(eq(int, all[i].pre, KS_SUCCESS), "%s: PreFilter", differ[i]);
        cr_expect(eq(int, all[i].code, KS_SUCCESS), "%s", differ[i]);
        cr_expect(sig_differ(base, &all[i]), "%s should not sign as base", differ[i]);
        for (size_t k = 0; k < i; k++)
            cr_expect(sig_differ(&all[k], &all[i]), "%s and %s sign the same", differ[k], differ[i]);
    }
    /* spec.nodeName (NodeName) */
    struct ks_pod *named = pod_of(&x, "same");
    named->node_name = ks_intern("n1");
    fw_sign(&x, "same", &all[0]);
    named->node_name = KS_ID_EMPTY;
    cr_expect(eq(int, all[0].code, KS_SUCCESS));
    cr_expect(sig_differ(base, &all[0]), "nodeName");
    free(all);
    free(base);
    vfx_close(&x);
}

Test(sign, default_profile_declines_what_depends_on_more_than_pod_and_node)
{
    static const char *const declined[] = {
        "anti-term",             /* the pod's own pod anti-affinity */
        "aff-pref",              /* the pod's own preferred pod affinity */
        "web",                   /* an existing pod's required anti-affinity matches it */
        "db",                    /* an existing pod's preferred affinity weighs for it */
        "spread-hard",           /* its own DoNotSchedule topology spread constraint */
        "spread-keys",           /* ScheduleAnyway over two keys besides the hostname */
        "pvc",                   /* a claim */
        "ephemeral",             /* an ephemeral claim */
        "gce",                   /* inline disks: VolumeRestrictions, NodeVolumeLimits */
        "ebs",         "pinned", /* PreFilter narrows the nodes by name */
    };
    struct vfx x;
    struct sig *s = fx_must(calloc(1, sizeof(*s)));

    open_world(&x, NULL);
    for (size_t i = 0; i < sizeof(declined) / sizeof(declined[0]); i++) {
        fw_sign(&x, declined[i], s);
        cr_expect(eq(int, s->code, KS_SKIP), "%s should be unsignable", declined[i]);
    }
    /* a buffer too small */
    fw_sign_cap(&x, pod_of(&x, "base"), s, 8);
    cr_expect(eq(int, s->code, KS_SKIP), "overflow");
    free(s);
    vfx_close(&x);
}

/*
 * ScheduleAnyway spreading over the hostname and one other key: the counts stay out of the
 * signature (the index adds the score per cycle), so the pods of different workloads on
 * one template share a class, apart from pods without constraints.
 */
Test(sign, schedule_anyway_spreading_is_spread_scored)
{
    struct vfx x;
    struct sig *a = fx_must(calloc(1, sizeof(*a))), *b = fx_must(calloc(1, sizeof(*b)));
    uint32_t zone = ks_intern("zone"), dflt_zone = ks_intern("topology.kubernetes.io/zone");

    open_world(&x, NULL);
    fw_sign(&x, "api", a); /* a Service selects it: the default constraints (hostname, zone) */
    fw_sign(&x, "rs", b);  /* its ReplicaSet does */
    cr_expect(eq(int, a->code, KS_SUCCESS));
    cr_expect(a->spread && b->spread, "spread-scored");
    cr_expect(eq(u32, a->spread_key, dflt_zone));
    cr_expect(eq(str, (char *)ks_framework_plugin_name(x.fw, a->spread_slot), "PodTopologySpread"));
    cr_expect(sig_eq(a, b), "workloads on one template share a class");
    fw_sign(&x, "base", b);
    cr_expect(eq(int, b->code, KS_SUCCESS));
    cr_expect(b->spread == false, "no constraints");
    cr_expect(sig_differ(a, b));
    fw_sign(&x, "spread", b); /* its own constraint, keyed by zone */
    cr_expect(eq(int, b->code, KS_SUCCESS));
    cr_expect(b->spread && b->spread_key == zone, "its own key");
    cr_expect(sig_differ(a, b));
    fw_sign(&x, "spread-host", a); /* hostname and zone: the same key, another shape */
    cr_expect(a->spread && a->spread_key == zone, "the hostname and one key");
    cr_expect(sig_differ(a, b));
    free(a);
    free(b);
    vfx_close(&x);
}

Test(sign, inter_pod_affinity_ignoring_existing_preferences)
{
    static const char config[] = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                 "kind: KubeSchedulerConfiguration\n"
                                 "profiles:\n"
                                 "- schedulerName: default-scheduler\n"
                                 "  pluginConfig:\n"
                                 "  - name: InterPodAffinity\n"
                                 "    args: {ignorePreferredTermsOfExistingPods: true}\n";
    struct vfx x;
    struct sig *a = fx_must(calloc(1, sizeof(*a))), *b = fx_must(calloc(1, sizeof(*b)));

    open_world(&x, config);
    /* PreScore skips for a pod without preferences: the existing preferred affinity does not count */
    fw_sign(&x, "db", a);
    fw_sign(&x, "base", b);
    cr_expect(eq(int, a->code, KS_SUCCESS));
    cr_expect(sig_eq(a, b));
    /* existing required anti-affinity still filters */
    fw_sign(&x, "web", a);
    cr_expect(eq(int, a->code, KS_SKIP));
    free(a);
    free(b);
    vfx_close(&x);
}

/* v1beta3 with SelectorSpread instead of PodTopologySpread, and the in-tree volume limit plugins. */
Test(sign, selector_spread_and_in_tree_limits)
{
    static const char config[] = "apiVersion: kubescheduler.config.k8s.io/v1beta3\n"
                                 "kind: KubeSchedulerConfiguration\n"
                                 "profiles:\n"
                                 "- schedulerName: default-scheduler\n"
                                 "  plugins:\n"
                                 "    multiPoint:\n"
                                 "      enabled: [{name: SelectorSpread, weight: 1}]\n"
                                 "      disabled: [{name: PodTopologySpread}]\n";
    struct vfx x;
    struct sig *a = fx_must(calloc(1, sizeof(*a))), *b = fx_must(calloc(1, sizeof(*b)));

    open_world(&x, config);
    fw_sign(&x, "base", a);
    cr_expect(eq(int, a->code, KS_SUCCESS));
    fw_sign(&x, "same", b);
    cr_expect(sig_eq(a, b));
    /* SelectorSpread leaves pods with constraints of their own alone: constant scores */
    fw_sign(&x, "spread", b);
    cr_expect(eq(int, b->code, KS_SUCCESS));
    cr_expect(sig_differ(a, b));
    static const char *const declined[] = {"api", "rs", "ebs", "gce", "pvc"};
    for (size_t i = 0; i < sizeof(declined) / sizeof(declined[0]); i++) {
        fw_sign(&x, declined[i], b);
        cr_expect(eq(int, b->code, KS_SKIP), "%s", declined[i]);
    }
    fw_sign(&x, "other/api-other", b);
    cr_expect(eq(int, b->code, KS_SUCCESS));
    free(a);
    free(b);
    vfx_close(&x);
}

/* ---- the promise, on random pods ------------------------------------------------------------------ */

struct text {
    char *p;
    size_t len, cap;
};

__attribute__((format(printf, 2, 3))) static void text_add(struct text *t, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(t->p ? t->p + t->len : NULL, t->p ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        cr_assert(n >= 0);
        if (t->p && t->len + (size_t)n < t->cap) {
            t->len += (size_t)n;
            return;
        }
        t->cap = (t->cap + (size_t)n + 1) * 2;
        t->p = fx_must(realloc(t->p, t->cap));
    }
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* An index below @n: 0 with probability @p0 (percent), else uniform over 1..n-1. */
static size_t pick(uint64_t *s, size_t n, unsigned p0)
{
    if (rnd(s) % 100 < p0)
        return 0;
    return 1 + (size_t)(rnd(s) % (n - 1));
}

#define NPICK(a) (sizeof(a) / sizeof((a)[0]))

/* The choices of the generator, per field; index 0 is the common value. */
static const char *const gen_ns[] = {"default", "other"};
static const char *const gen_labels[] = {"",
                                         ", labels: {app: batch}",
                                         ", labels: {team: x}",
                                         ", labels: {app: web}",
                                         ", labels: {app: db}",
                                         ", labels: {app: api}",
                                         ", ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, "
                                         "name: rs-1, uid: r1, controller: true}]"};
static const char *const gen_requests[] = {"cpu: 100m, memory: 128Mi",
                                           "",
                                           "cpu: 500m, memory: 256Mi",
                                           "cpu: '1', memory: 1Gi",
                                           "cpu: 100m, example.com/gpu: '1'",
                                           "ephemeral-storage: 1Gi",
                                           "memory: 6Gi",
                                           "cpu: '3'"};
static const char *const gen_images[] = {", image: nginx", "", ", image: nginx:1.25", ", image: busybox",
                                         ", image: nginx:latest"};
/* 0 and 1 read the same (no host port) */
static const char *const gen_ports[] = {"", ", ports: [{containerPort: 80}]",
                                        ", ports: [{containerPort: 80, hostPort: 8080}]",
                                        ", ports: [{containerPort: 90, hostPort: 9090, protocol: UDP}]",
                                        ", ports: [{containerPort: 90, hostPort: 9090}]"};
static const char *const gen_inits[] = {
    "", "  initContainers: [{name: i, image: busybox}]\n",
    "  initContainers: [{name: i, restartPolicy: Always, "
    "resources: {requests: {cpu: 200m}}}]\n",
    "  initContainers: [{name: i, resources: {requests: {memory: 512Mi}}}]\n"};
static const char *const gen_overheads[] = {"", "  overhead: {cpu: 50m}\n"};
/* 0 is none; 5 and 6 read the same (tolerationSeconds) */
static const char *const gen_tolerations[] = {
    NULL,
    "{key: gpu, operator: Exists, effect: NoSchedule}",
    "{key: maint, operator: Equal, value: 'true', effect: PreferNoSchedule}",
    "{key: node.kubernetes.io/unschedulable, operator: Exists, effect: NoSchedule}",
    "{key: dedicated, value: infra, effect: NoExecute}",
    "{key: dedicated, operator: Exists, effect: NoExecute, tolerationSeconds: 30}",
    "{key: dedicated, operator: Exists, effect: NoExecute}",
    "{operator: Exists}",
    "{key: maint, operator: Exists}",
};
static const char *const gen_selectors[] = {"", "  nodeSelector: {disktype: ssd}\n",
                                            "  nodeSelector: {zone: a}\n", "  nodeSelector: {zone: c}\n"};
static const char *const gen_affinities[] = {
    "",
    "  affinity: {nodeAffinity: {" REQUIRED(
        "{matchExpressions: [{key: zone, operator: In, values: [a, b]}]}") "}}\n",
    "  affinity: {nodeAffinity: {" REQUIRED(
        "{matchExpressions: [{key: disktype, operator: NotIn, values: [hdd]}]}, "
        "{matchExpressions: [{key: zone, operator: DoesNotExist}]}") "}}\n",
    "  affinity: {nodeAffinity: {" PREFERRED("10", "{key: disktype, operator: In, values: [ssd]}") "}}\n",
    "  affinity: {nodeAffinity: {" PREFERRED("5", "{key: zone, operator: In, values: [b]}") "}}\n",
    "  affinity: {nodeAffinity: {" REQUIRED(
        "{matchExpressions: [{key: zone, operator: Exists}]}") ", " PREFERRED("7", "{key: zone, operator: "
                                                                                   "In, values: [a]}") "}}\n",
};

/* A pod template: one choice per field the plugins read. */
struct gen_spec {
    size_t requests, image, ports, init, overhead, tol[2], selector, affinity;
};

static void random_spec(uint64_t *s, struct gen_spec *g)
{
    g->requests = pick(s, NPICK(gen_requests), 50);
    g->image = pick(s, NPICK(gen_images), 60);
    g->ports = pick(s, NPICK(gen_ports), 75);
    g->init = pick(s, NPICK(gen_inits), 80);
    g->overhead = pick(s, NPICK(gen_overheads), 85);
    g->tol[0] = pick(s, NPICK(gen_tolerations), 60);
    g->tol[1] = g->tol[0] ? pick(s, NPICK(gen_tolerations), 50) : 0;
    g->selector = pick(s, NPICK(gen_selectors), 75);
    g->affinity = pick(s, NPICK(gen_affinities), 70);
}

/* Pending pod gen-@i of @g, with a random namespace and labels (and a variant nothing reads). */
static void write_pod(struct text *t, uint64_t *s, unsigned i, const struct gen_spec *g)
{
    size_t ports = g->ports < 2 ? rnd(s) % 2 : g->ports;

    text_add(t, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: gen-%u, namespace: %s%s}\nspec:\n", i,
             gen_ns[pick(s, NPICK(gen_ns), 70)], gen_labels[pick(s, NPICK(gen_labels), 40)]);
    text_add(t, "  containers: [{name: c%s, resources: {requests: {%s}}%s}]\n", gen_images[g->image],
             gen_requests[g->requests], gen_ports[ports]);
    text_add(t, "%s%s", gen_inits[g->init], gen_overheads[g->overhead]);
    if (g->tol[0]) {
        text_add(t, "  tolerations: [");
        for (int k = 0; k < 2 && g->tol[k]; k++) {
            size_t tol = g->tol[k] == 5 || g->tol[k] == 6 ? 5 + rnd(s) % 2 : g->tol[k];
            text_add(t, "%s%s", k ? ", " : "", gen_tolerations[tol]);
        }
        text_add(t, "]\n");
    }
    text_add(t, "%s%s", gen_selectors[g->selector], gen_affinities[g->affinity]);
}

/* What one pod got on every node: the class's reference, kept for the pods that sign alike. */
struct outcome {
    struct sig sig;
    const char *pod;
    uint64_t skip_score;
    int pre_score;
    uint32_t members;
    struct ks_status *filter; /* per node */
    int64_t *scores;          /* per node, per score plugin */
};

static bool status_eq(const struct ks_status *a, const struct ks_status *b)
{
    if (a->code != b->code ||
        (a->code != KS_SUCCESS && (a->plugin != b->plugin || a->nreasons != b->nreasons)))
        return false;
    return a->code == KS_SUCCESS || memcmp(a->reasons, b->reasons, a->nreasons * sizeof(a->reasons[0])) == 0;
}

/* Evaluate @pod as a cycle does, every node scored; false when it is unsignable. */
static bool evaluate(struct vfx *x, const struct ks_pod *pod, const struct ks_node_snap *const *nodes,
                     uint32_t n, uint32_t nscore, struct outcome *out)
{
    struct ks_cycle_state cs;
    struct ks_pre_filter_result res = {.all = true};
    struct ks_status st = {0};
    bool ok = false;

    ks_cycle_state_init(&cs);
    out->sig.pre = ks_fw_run_pre_filter(x->fw, &cs, pod, &res, &st);
    cr_assert(eq(int, out->sig.pre, KS_SUCCESS), "%s: PreFilter: %s", pod->meta.name, fx_reason(&st, 0));
    struct ks_sign s = {.buf = out->sig.bytes, .cap = SIG_CAP};
    out->sig.code = ks_fw_sign(x->fw, &cs, pod, &s);
    out->sig.len = s.len;
    out->sig.skip_filter = cs.skip_filter;
    out->sig.spread = s.spread;
    out->sig.spread_slot = s.spread_slot;
    out->sig.spread_key = s.spread_key;
    if (out->sig.code == KS_SUCCESS) {
        ok = true;
        cr_assert(res.all, "%s: signable, yet PreFilter narrowed the nodes", pod->meta.name);
        for (uint32_t i = 0; i < n; i++) {
            memset(&out->filter[i], 0, sizeof(out->filter[i]));
            ks_fw_run_filter(x->fw, &cs, pod, nodes[i], &out->filter[i]);
        }
        out->pre_score = ks_fw_run_pre_score(x->fw, &cs, pod, nodes, n, &st);
        out->skip_score = cs.skip_score;
        for (uint32_t i = 0; out->pre_score == KS_SUCCESS && i < n; i++) {
            int rc = ks_fw_score_node(x->fw, &cs, pod, nodes[i], &out->scores[(size_t)i * nscore], &st);
            cr_assert(eq(int, rc, KS_SUCCESS), "%s: Score: %s", pod->meta.name, fx_reason(&st, 0));
        }
    }
    ks_cycle_state_destroy(&cs);
    return ok;
}

/* Pods placed between the two rounds of check_promise(), and the node each goes to. */
/* clang-format off */
static const char later[] =
    POD("later-anti", ", labels: {app: anti2}",
        "{containers: [{name: c}], affinity: {podAntiAffinity: {"
        "requiredDuringSchedulingIgnoredDuringExecution: "
        "[{labelSelector: {matchLabels: {app: web}}, topologyKey: zone}]}}}")
    POD("later-pref", ", labels: {app: pref2}",
        "{containers: [{name: c}], affinity: {podAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
        "[{weight: 30, podAffinityTerm: {labelSelector: {matchLabels: {team: x}}, topologyKey: zone}}]}}}")
    POD("later-port", "", "{containers: [{name: c, ports: [{containerPort: 80, hostPort: 8080}], "
                          "resources: {requests: {cpu: 500m}}}]}")
    POD("later-api", ", labels: {app: api}", "{containers: [{name: c}]}");
/* clang-format on */
static const char *const later_nodes[][2] = {
    {"later-anti", "n1"}, {"later-pref", "n9"}, {"later-port", "n3"}, {"later-api", "n9"}};

/* One round of check_promise(): every generated pod evaluated on one snapshot. */
struct round {
    uint32_t n;            /* nodes */
    uint64_t *generations; /* per node position: its record's generation */
    uint32_t *names;       /* per node position */
    struct outcome *classes;
    uint32_t nclasses, signable, unsignable, shared, reused;
};

static void expect_same(const struct vfx *x, const struct outcome *o, const struct outcome *ref,
                        const uint32_t *names, uint32_t i, uint32_t nscore, const char *what)
{
    cr_expect(status_eq(&o->filter[i], &ref->filter[i]), "%s vs %s on %s (%s): Filter %s (%s) vs %s (%s)",
              o->pod, ref->pod, ks_intern_str(names[i]), what, ks_code_name(o->filter[i].code),
              fx_reason(&o->filter[i], 0), ks_code_name(ref->filter[i].code), fx_reason(&ref->filter[i], 0));
    for (uint32_t k = 0; o->pre_score == KS_SUCCESS && k < nscore; k++) {
        /* a spread-scored plugin's score is added per cycle from the counts, not shared */
        if (o->sig.spread && ks_framework_score_slot(x->fw, k) == o->sig.spread_slot)
            continue;
        cr_expect(eq(i64, o->scores[(size_t)i * nscore + k], ref->scores[(size_t)i * nscore + k]),
                  "%s vs %s on %s (%s): %s", o->pod, ref->pod, ks_intern_str(names[i]), what,
                  ks_framework_plugin_name(x->fw, ks_framework_score_slot(x->fw, k)));
    }
}

/*
 * Evaluate every generated pod on the current snapshot. Within the round, pods that sign
 * alike must get the same answers on every node; against @prev (the round before, NULL for
 * none), on every node whose record did not change, as the index reuses them.
 */
static void run_round(struct vfx *x, uint32_t npods, const struct round *prev, struct round *r)
{
    uint32_t nscore = ks_framework_nscore(x->fw);

    memset(r, 0, sizeof(*r));
    ks_rcu_read_lock();
    const struct ks_snapshot *snap = ks_cache_snapshot(x->cache);
    uint32_t n = r->n = snap->nnodes;
    const struct ks_node_snap **nodes = fx_must(calloc(n, sizeof(*nodes)));
    r->generations = fx_must(calloc(n, sizeof(*r->generations)));
    r->names = fx_must(calloc(n, sizeof(*r->names)));
    for (uint32_t i = 0; i < n; i++) {
        nodes[i] = ks_snapshot_node(snap, i);
        r->generations[i] = nodes[i]->generation;
        r->names[i] = nodes[i]->name;
    }
    r->classes = fx_must(calloc(npods + 1, sizeof(*r->classes)));

    struct ks_pod **pods = ks_objects_pods(x->objs);
    for (uint32_t p = 0; p < ks_objects_count(x->objs, POD); p++) {
        if (pods[p]->node_name != KS_ID_EMPTY || strncmp(pods[p]->meta.name, "gen-", 4) != 0)
            continue;
        struct outcome *o = &r->classes[r->nclasses];
        o->filter = fx_must(calloc(n, sizeof(*o->filter)));
        o->scores = fx_must(calloc((size_t)n * nscore + 1, sizeof(*o->scores)));
        o->pod = pods[p]->meta.name;
        if (!evaluate(x, pods[p], nodes, n, nscore, o)) {
            r->unsignable++;
            free(o->filter);
            free(o->scores);
            continue;
        }
        r->signable++;
        /* the class of the round before: its answers on the nodes whose record is the same */
        for (uint32_t c = 0; prev && prev->n == n && c < prev->nclasses; c++) {
            const struct outcome *ref = &prev->classes[c];
            if (!sig_eq(&ref->sig, &o->sig))
                continue;
            cr_expect(eq(int, o->pre_score, ref->pre_score), "%s vs %s: PreScore", o->pod, ref->pod);
            for (uint32_t i = 0; i < n; i++) {
                if (r->generations[i] && r->generations[i] == prev->generations[i]) {
                    expect_same(x, o, ref, r->names, i, nscore, "record unchanged");
                    r->reused++;
                }
            }
        }
        uint32_t c = 0;
        while (c < r->nclasses && !sig_eq(&r->classes[c].sig, &o->sig))
            c++;
        if (c == r->nclasses) {
            o->members = 1;
            r->nclasses++;
            continue;
        }
        /* the same signature and Skip mask in one snapshot: the same answers everywhere */
        const struct outcome *ref = &r->classes[c];
        r->shared += r->classes[c].members++ == 1;
        cr_expect(eq(int, o->pre_score, ref->pre_score), "%s vs %s: PreScore", o->pod, ref->pod);
        cr_expect(eq(u64, o->skip_score, ref->skip_score), "%s vs %s: PreScore Skip", o->pod, ref->pod);
        for (uint32_t i = 0; i < n; i++)
            expect_same(x, o, ref, r->names, i, nscore, "same snapshot");
        free(o->filter);
        free(o->scores);
    }
    ks_rcu_read_unlock();
    free(nodes);

    /* the generator must exercise both sides, and classes with several members */
    cr_expect(ge(u32, r->signable, npods / 3), "signable %u of %u", r->signable, npods);
    cr_expect(ge(u32, r->unsignable, npods / 10), "unsignable %u of %u", r->unsignable, npods);
    cr_expect(ge(u32, r->shared, 15), "classes with several pods: %u of %u", r->shared, r->nclasses);
}

static void round_free(struct round *r)
{
    for (uint32_t c = 0; c < r->nclasses; c++) {
        free(r->classes[c].filter);
        free(r->classes[c].scores);
    }
    free(r->classes);
    free(r->generations);
    free(r->names);
}

/*
 * @npods random pods over the cluster, evaluated twice: before and after placing more pods
 * (an anti-affinity term against app=web in another zone, a preferred affinity to team=x,
 * a host port, a pod a Service selects) and deleting one.
 */
static void check_promise(uint64_t seed, unsigned npods)
{
    struct text t = {0};
    struct vfx x;
    struct round before, after;

    /* most pods come from a few templates (classes with many pods), the others are drawn afresh */
    struct gen_spec templates[24], g;
    for (size_t k = 0; k < NPICK(templates); k++)
        random_spec(&seed, &templates[k]);
    text_add(&t, "%s%s", cluster, later);
    for (unsigned i = 0; i < npods; i++) {
        if (rnd(&seed) % 100 < 70)
            g = templates[rnd(&seed) % NPICK(templates)];
        else
            random_spec(&seed, &g);
        write_pod(&t, &seed, i, &g);
    }
    vfx_open(&x, t.p);
    free(t.p);

    run_round(&x, npods, NULL, &before);
    for (size_t i = 0; i < NPICK(later_nodes); i++)
        cr_assert(eq(int,
                     ks_cache_add_pod(x.cache, ks_pod_get(pod_of(&x, later_nodes[i][0])),
                                      ks_intern(later_nodes[i][1])),
                     0));
    cr_assert(eq(int, ks_cache_remove_pod(x.cache, pod_of(&x, "used-2")), 0));
    cr_assert(ge(int, ks_cache_refresh(x.cache), 0));
    run_round(&x, npods, &before, &after);
    cr_expect(gt(u32, after.reused, 100), "answers compared across the change: %u", after.reused);
    cr_expect(lt(u32, after.signable, before.signable), "team=x pods are no longer signable");

    round_free(&before);
    round_free(&after);
    vfx_close(&x);
}

Test(sign, equal_signatures_get_equal_filter_and_scores)
{
    check_promise(0x9e3779b97f4a7c15ull, 300);
    check_promise(12345, 300);
}
