/*
 * test_volume_binding_api.c - VolumeBinding's PreBind through a volume API (ksched serve's
 * path: plugins/volume_binding.c pre_bind_api, plugins/helpers/helper_volumes_bind.c) with a fake
 * API: the updates in upstream's order at the versions Reserve saw, the flags of
 * GetBindVolumeToClaim, a failed update failing PreBind with the server's message and
 * Unreserve giving the PV back, the wait handed out (KS_WAIT) and ended through the cycle's
 * bind_wait with upstream's messages, and checkBindings' outcomes on the informers' objects.
 */
#include "ksched/plugin_helpers_volumes.h"
#include "ksched/registry.h"
#include "ksched/volume_api.h"
#include "test_volume_fixtures.h"

#include <errno.h>
#include <stdarg.h>

TestSuite(volumebinding_api, .init = vfx_setup, .fini = vfx_teardown);

static const struct ks_plugin *const vb = &ks_plugin_volume_binding;

#define SC(name, mode, prov)                                                                                 \
    "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: " name "}\n"                   \
    "provisioner: " prov "\nvolumeBindingMode: " mode "\n"
#define CLASSES                                                                                              \
    SC("local", "WaitForFirstConsumer", "kubernetes.io/no-provisioner")                                      \
    SC("csi", "WaitForFirstConsumer", "example.com/csi")
#define NODES                                                                                                \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: node-a, labels: {kubernetes.io/hostname: node-a}}\n"  \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: node-b, labels: {kubernetes.io/hostname: node-b}}\n"
#define PVC(name, sc, rv, extra)                                                                             \
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " name                               \
    ", namespace: default, uid: uid-" name ", resourceVersion: '" rv "'" extra                               \
    "}\nspec: {storageClassName: " sc ", resources: {requests: {storage: 1Gi}}}\n"
#define PV(name, host, rv, spec_extra)                                                                       \
    "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: " name ", resourceVersion: '" rv "'}\n"   \
    "spec: {storageClassName: local, capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], nodeAffinity: " \
    "{required: {nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, "       \
    "values: [" host "]}]}]}}" spec_extra "}\nstatus: {phase: Available}\n"
#define POD(name, claims)                                                                                    \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: default, uid: uid-" name "}\n"    \
    "spec: {containers: [{name: c}], volumes: [" claims "]}\n"
#define CLAIM(name) "{name: v-" name ", persistentVolumeClaim: {claimName: " name "}}"

/* ---- a fake volume API ---------------------------------------------------------------------- */

struct fake_api {
    struct ks_volume_api api;
    char log[2048];
    int calls, fail_at; /* fail_at: the update (1-based) that answers fail_msg */
    const char *fail_msg;
    uint64_t next_rv;
    struct ks_vol_wait *w;
    int wait_rc;
};

static void logf_(struct fake_api *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(struct fake_api *f, const char *fmt, ...)
{
    size_t n = strlen(f->log);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->log + n, sizeof(f->log) - n, fmt, ap);
    va_end(ap);
}

/* An update's answer: fail_msg at the fail_at-th, else the next resourceVersion. */
static int answer(struct fake_api *f, char *rv, size_t rv_len, char *msg, size_t msg_len)
{
    if (++f->calls == f->fail_at) {
        snprintf(msg, msg_len, "%s", f->fail_msg);
        return -1;
    }
    snprintf(rv, rv_len, "%llu", (unsigned long long)f->next_rv++);
    return 0;
}

static int fake_update_pv(void *ctx, const struct ks_persistent_volume *pv,
                          const struct ks_persistent_volume_claim *claim, bool claim_ref, bool bbc, char *rv,
                          size_t rv_len, char *msg, size_t msg_len)
{
    struct fake_api *f = ctx;
    logf_(f, "PUT pv %s claim=%s ref=%d bbc=%d at %s; ", pv->meta.name, claim->meta.name, claim_ref, bbc,
          pv->meta.resource_version);
    return answer(f, rv, rv_len, msg, msg_len);
}

static int fake_update_pvc(void *ctx, const struct ks_persistent_volume_claim *pvc, const char *node,
                           char *rv, size_t rv_len, char *msg, size_t msg_len)
{
    struct fake_api *f = ctx;
    logf_(f, "PUT pvc %s selected-node=%s at %s; ", pvc->meta.name, node, pvc->meta.resource_version);
    return answer(f, rv, rv_len, msg, msg_len);
}

static int fake_wait(void *ctx, struct ks_vol_wait *w)
{
    struct fake_api *f = ctx;
    logf_(f, "wait %s/%s %llds", w->pod_namespace, w->pod_name, (long long)(w->timeout_ns / 1000000000));
    if (f->wait_rc)
        return f->wait_rc;
    f->w = w;
    return 0;
}

static void fake_api_init(struct fake_api *f)
{
    memset(f, 0, sizeof(*f));
    f->api = (struct ks_volume_api){
        .update_pv = fake_update_pv, .update_pvc = fake_update_pvc, .wait = fake_wait, .ctx = f};
    f->next_rv = 100;
}

/* The binding cycle's end of a wait. */
struct resumed {
    struct ks_bind_wait w; /* first */
    int calls, code;
    char msg[512];
};

static void on_resume(struct ks_bind_wait *w, int code, const struct ks_status *st)
{
    struct resumed *r = (struct resumed *)w;
    r->calls++;
    r->code = code;
    snprintf(r->msg, sizeof(r->msg), "%s", st && st->nreasons ? ks_intern_str(st->reasons[0]) : "");
}

/* The plugin initialised against a framework whose deps carry @api. */
static void *plugin_with_api(struct vfx *x, const struct ks_volume_api *api, struct ks_framework **fw)
{
    struct ks_error err = {0};
    struct ks_framework_deps deps = {.cache = x->cache, .objects = x->objs, .volume_api = api};
    cr_assert(eq(int, ks_framework_create(&x->cfg->profiles[0], &deps, fw, &err), 0), "%s", err.msg);
    struct ks_plugin_init in = {.slot = 0, .framework = *fw};
    void *self = NULL;
    cr_assert(eq(int, vb->init(&in, &self, &err), 0));
    return self;
}

/* One PreBind case: the objects loaded, the plugin on a fake API, a pod through Reserve. */
struct api_case {
    struct vfx x;
    struct fake_api f;
    struct ks_framework *fw;
    void *self;
    const struct ks_pod *pod;
    struct resumed r;
    struct ks_cycle_state cs;
    struct ks_status st;
};

static void case_open(struct api_case *c, const char *yaml, const char *pod, const char *node)
{
    memset(c, 0, sizeof(*c));
    c->r.w.done = on_resume;
    vfx_open(&c->x, yaml);
    fake_api_init(&c->f);
    c->self = plugin_with_api(&c->x, &c->f.api, &c->fw);
    c->pod = vfx_pod(&c->x, "default", pod);
    cr_assert(eq(int, vfx_cycle_to_reserve(vb, c->self, &c->x, c->pod, node, &c->cs), KS_SUCCESS));
}

static void case_close(struct api_case *c)
{
    ks_arena_destroy(&c->cs.arena);
    vb->destroy(c->self);
    ks_framework_destroy(c->fw);
    vfx_close(&c->x);
}

/* ---- PreBind ------------------------------------------------------------------------------------ */

#define TWO_CLAIMS                                                                                           \
    CLASSES NODES PVC("pvc-a", "local", "7", "") PVC("pvc-b", "csi", "8", "") PV("pv-1", "node-a", "5", "")  \
        POD("pod-a", CLAIM("pvc-a") ", " CLAIM("pvc-b"))

Test(volumebinding_api, pre_bind_updates_pvs_then_claims_and_waits)
{
    struct api_case c;
    case_open(&c, TWO_CLAIMS, "pod-a", "node-a");
    c.cs.bind_wait = &c.r.w;
    cr_expect(eq(int, vb->pre_bind(c.self, &c.cs, c.pod, ks_intern("node-a"), &c.st), KS_WAIT));
    cr_expect(eq(str, c.f.log,
                 "PUT pv pv-1 claim=pvc-a ref=1 bbc=1 at 5; PUT pvc pvc-b selected-node=node-a at 8; "
                 "wait default/pod-a 600s"));
    cr_assert(c.f.w != NULL);
    cr_expect(eq(int, c.r.calls, 0), "nothing resumed before the wait ends");
    c.f.w->done(c.f.w, KS_VOL_BOUND, NULL);
    cr_expect(eq(int, c.r.calls, 1));
    cr_expect(eq(int, c.r.code, KS_SUCCESS));
    case_close(&c);
}

Test(volumebinding_api, wait_endings_carry_upstream_messages)
{
    static const struct {
        enum ks_vol_wait_result result;
        const char *msg, *want;
    } cases[] = {
        {KS_VOL_TIMEOUT, NULL, "binding volumes: context deadline exceeded"},
        {KS_VOL_CANCELLED, NULL, "binding volumes: context canceled"},
        {KS_VOL_FAILED, "ClaimRef got reset for pv \"pv-1\"",
         "binding volumes: ClaimRef got reset for pv \"pv-1\""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct api_case c;
        case_open(&c, TWO_CLAIMS, "pod-a", "node-a");
        c.cs.bind_wait = &c.r.w;
        cr_assert(eq(int, vb->pre_bind(c.self, &c.cs, c.pod, ks_intern("node-a"), &c.st), KS_WAIT));
        c.f.w->done(c.f.w, cases[i].result, cases[i].msg);
        cr_expect(eq(int, c.r.code, KS_ERROR));
        cr_expect(eq(str, c.r.msg, (char *)cases[i].want));
        case_close(&c);
    }
}

#define CONFLICT                                                                                             \
    "Operation cannot be fulfilled on persistentvolumes \"pv-1\": the object has been modified; please "     \
    "apply your changes to the latest version and try again"

/* A PV taken between Reserve and PreBind: the update at the old version answers 409. */
Test(volumebinding_api, failed_update_fails_pre_bind_and_unreserve_frees_the_pv)
{
    struct api_case c;
    struct ks_cycle_state cs2 = {0};
    char buf[VFX_MSG];
    case_open(&c, TWO_CLAIMS PVC("pvc-c", "local", "9", "") POD("pod-b", CLAIM("pvc-c")), "pod-a", "node-a");
    c.f.fail_at = 1;
    c.f.fail_msg = CONFLICT;
    const struct ks_pod *a = c.pod, *b = vfx_pod(&c.x, "default", "pod-b");

    c.cs.bind_wait = &c.r.w;
    cr_expect(eq(int, vb->pre_bind(c.self, &c.cs, a, ks_intern("node-a"), &c.st), KS_ERROR));
    cr_expect(eq(str, (char *)vfx_status(KS_ERROR, &c.st, buf, sizeof(buf)), "Error: " CONFLICT));
    cr_expect(eq(str, c.f.log, "PUT pv pv-1 claim=pvc-a ref=1 bbc=1 at 5; "), "no claim update, no wait");
    cr_expect(eq(int, c.r.calls, 0));

    /* while pod-a holds its assumption pv-1 is not pod-b's; after Unreserve it is */
    struct ks_pre_filter_result res;
    cr_expect(eq(str, (char *)vfx_pre_filter(vb, c.self, &cs2, b, &res, buf), "Success"));
    cr_expect(eq(str, (char *)vfx_filter(vb, c.self, &cs2, b, vfx_node(&c.x, "node-a"), buf),
                 "UnschedulableAndUnresolvable: node(s) didn't find available persistent volumes to bind"));
    vfx_unlock(&c.x);
    ks_arena_reset(&cs2.arena);
    memset(cs2.slot, 0, sizeof(cs2.slot));
    vb->unreserve(c.self, &c.cs, a, ks_intern("node-a"));
    cr_expect(eq(str, (char *)vfx_pre_filter(vb, c.self, &cs2, b, &res, buf), "Success"));
    cr_expect(eq(str, (char *)vfx_filter(vb, c.self, &cs2, b, vfx_node(&c.x, "node-a"), buf), "Success"));
    vfx_unlock(&c.x);
    ks_arena_destroy(&cs2.arena);
    case_close(&c);
}

/* GetBindVolumeToClaim: a PV prebound to the claim keeps its claimRef (by uid) and gets no annotation. */
Test(volumebinding_api, prebound_pvs_keep_their_claim_ref)
{
    static const struct {
        const char *ref, *want;
    } cases[] = {
        {", claimRef: {namespace: default, name: pvc-a, uid: uid-pvc-a}", "ref=0 bbc=0"},
        {", claimRef: {namespace: default, name: pvc-a}", "ref=1 bbc=0"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char yaml[4096];
        snprintf(yaml, sizeof(yaml), "%s",
                 CLASSES NODES PVC("pvc-a", "local", "7", "") POD("pod-a", CLAIM("pvc-a")));
        size_t n = strlen(yaml);
        snprintf(yaml + n, sizeof(yaml) - n,
                 "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-1, resourceVersion: '5'}\n"
                 "spec: {storageClassName: local, capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce]%s}\n"
                 "status: {phase: Available}\n",
                 cases[i].ref);
        struct api_case c;
        case_open(&c, yaml, "pod-a", "node-b");
        c.cs.bind_wait = &c.r.w;
        cr_expect(eq(int, vb->pre_bind(c.self, &c.cs, c.pod, ks_intern("node-b"), &c.st), KS_WAIT));
        cr_expect(strstr(c.f.log, cases[i].want) != NULL, "case %zu: %s", i, c.f.log);
        c.f.w->done(c.f.w, KS_VOL_BOUND, NULL);
        case_close(&c);
    }
}

Test(volumebinding_api, pre_bind_needs_a_way_to_wait)
{
    struct api_case c;
    char buf[VFX_MSG];
    case_open(&c, TWO_CLAIMS, "pod-a", "node-a");
    cr_expect(eq(int, vb->pre_bind(c.self, &c.cs, c.pod, ks_intern("node-a"), &c.st), KS_ERROR));
    cr_expect(eq(str, (char *)vfx_status(KS_ERROR, &c.st, buf, sizeof(buf)),
                 "Error: binding volumes: the binding cycle cannot wait"));
    cr_expect(eq(str, c.f.log, ""), "no update without a way to wait");
    /* a shutting-down API refuses the wait: the updates are made, the wait is not */
    c.f.wait_rc = -ECANCELED;
    c.cs.bind_wait = &c.r.w;
    cr_expect(eq(int, vb->pre_bind(c.self, &c.cs, c.pod, ks_intern("node-a"), &c.st), KS_ERROR));
    cr_expect(eq(str, (char *)vfx_status(KS_ERROR, &c.st, buf, sizeof(buf)),
                 "Error: binding volumes: context canceled"));
    cr_expect(eq(int, c.r.calls, 0));
    case_close(&c);
}

/* ---- checkBindings -------------------------------------------------------------------------------- */

/* The informers' objects: a loaded set looked up by name. */
struct fake_lookup {
    struct ks_vol_lookup l; /* first */
    struct ks_objects *objs;
    bool pod_gone;
};

static const struct ks_persistent_volume *fl_pv(const struct ks_vol_lookup *l, const char *name)
{
    const struct fake_lookup *f = (const struct fake_lookup *)l;
    for (uint32_t i = 0; i < f->objs->of[KS_KIND_PV].n; i++) {
        const struct ks_persistent_volume *pv = f->objs->of[KS_KIND_PV].items[i];
        if (strcmp(pv->meta.name, name) == 0)
            return pv;
    }
    return NULL;
}

static const struct ks_persistent_volume_claim *fl_pvc(const struct ks_vol_lookup *l, const char *ns,
                                                       const char *name)
{
    const struct fake_lookup *f = (const struct fake_lookup *)l;
    for (uint32_t i = 0; i < f->objs->of[KS_KIND_PVC].n; i++) {
        const struct ks_persistent_volume_claim *pvc = f->objs->of[KS_KIND_PVC].items[i];
        if (strcmp(pvc->meta.name, name) == 0 && strcmp(ks_intern_str(pvc->meta.namespace_id), ns) == 0)
            return pvc;
    }
    return NULL;
}

static bool fl_pod(const struct ks_vol_lookup *l)
{
    return !((const struct fake_lookup *)l)->pod_gone;
}

#define BOUND_ANN "pv.kubernetes.io/bind-completed: 'yes', volume.kubernetes.io/selected-node: node-a"
#define SEL_ANN   "volume.kubernetes.io/selected-node: node-a"
/* what the informers deliver once the PV controller is done */
#define PV1_BOUND(rv, host)                                                                                  \
    PV("pv-1", host, rv, ", claimRef: {namespace: default, name: pvc-a, uid: uid-pvc-a}")
#define PVC_A_BOUND                                                                                          \
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: pvc-a, namespace: default, "         \
    "resourceVersion: '120', annotations: {pv.kubernetes.io/bind-completed: 'yes'}}\nspec: {volumeName: "    \
    "pv-1}\n"
#define PVC_B(rv, ann, volume)                                                                               \
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: pvc-b, namespace: default, "         \
    "resourceVersion: '" rv "', annotations: {" ann "}}\nspec: {volumeName: '" volume "'}\n"
#define PV_P(host) PV("pv-p", host, "130", ", claimRef: {namespace: default, name: pvc-b, uid: uid-pvc-b}")

Test(volumebinding_api, check_bindings)
{
    static const struct {
        const char *name, *objects;
        bool pod_gone;
        enum ks_vol_wait_result want;
        const char *msg;
    } cases[] = {
        {"all bound", PV1_BOUND("110", "node-a") PVC_A_BOUND PVC_B("121", BOUND_ANN, "pv-p") PV_P("node-a"),
         false, KS_VOL_BOUND, ""},
        {"our PV update not delivered yet",
         PV("pv-1", "node-a", "5", "") PVC_A_BOUND PVC_B("121", BOUND_ANN, "pv-p"), false, KS_VOL_PENDING,
         ""},
        {"claim not bound yet",
         PV1_BOUND("110", "node-a") PVC("pvc-a", "local", "7", "") PVC_B("121", BOUND_ANN, ""), false,
         KS_VOL_PENDING, ""},
        {"provisioning under way", PV1_BOUND("110", "node-a") PVC_A_BOUND PVC_B("121", SEL_ANN, ""), false,
         KS_VOL_PENDING, ""},
        {"claim update not delivered yet", PV1_BOUND("110", "node-a") PVC_A_BOUND PVC_B("8", "", ""), false,
         KS_VOL_PENDING, ""},
        {"provisioned PV not delivered yet",
         PV1_BOUND("110", "node-a") PVC_A_BOUND PVC_B("121", BOUND_ANN, "pv-p"), false, KS_VOL_PENDING, ""},
        {"pod deleted", PV1_BOUND("110", "node-a") PVC_A_BOUND PVC_B("121", BOUND_ANN, "pv-p") PV_P("node-a"),
         true, KS_VOL_FAILED, "pod does not exist any more: pod \"pod-a\" not found"},
        {"claimRef reset", PV("pv-1", "node-a", "111", "") PVC_A_BOUND, false, KS_VOL_FAILED,
         "ClaimRef got reset for pv \"pv-1\""},
        {"PV gone", PVC_A_BOUND, false, KS_VOL_FAILED,
         "failed to check binding: could not find v1.PersistentVolume \"pv-1\""},
        {"PV moved", PV1_BOUND("111", "node-b") PVC_A_BOUND, false, KS_VOL_FAILED,
         "pv \"pv-1\" node affinity doesn't match node \"node-a\": no matching NodeSelectorTerms"},
        {"provisioning given up", PV1_BOUND("110", "node-a") PVC_A_BOUND PVC_B("121", "foo: bar", ""), false,
         KS_VOL_FAILED, "provisioning failed for PVC \"pvc-b\""},
        {"annotations reset", PV1_BOUND("110", "node-a") PVC_A_BOUND PVC_B("121", "", ""), false,
         KS_VOL_FAILED, "selectedNode annotation reset for PVC \"pvc-b\""},
        {"provisioned elsewhere",
         PV1_BOUND("110", "node-a") PVC_A_BOUND PVC_B("121", BOUND_ANN, "pv-p") PV_P("node-b"), false,
         KS_VOL_FAILED,
         "pv \"pv-p\" node affinity doesn't match node \"node-a\": no matching NodeSelectorTerms"},
    };
    struct vfx x;
    vfx_open(&x, TWO_CLAIMS);
    const struct ks_pod *pod = vfx_pod(&x, "default", "pod-a");
    const struct ks_persistent_volume *pv1 = x.objs->of[KS_KIND_PV].items[0];
    struct ks_vol_bind_item items[2] = {
        {.pv = pv1, .pvc = x.objs->of[KS_KIND_PVC].items[0], .rv = 110},
        {.pvc = x.objs->of[KS_KIND_PVC].items[1], .rv = 121},
    };
    struct ks_vol_bind b = {
        .cache = x.cache, .pod = pod, .node = ks_intern("node-a"), .n = 2, .nstatic = 1, .items = items};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ks_error err = {0};
        struct fake_lookup fl = {.l = {.pv = fl_pv, .pvc = fl_pvc, .pod_exists = fl_pod},
                                 .pod_gone = cases[i].pod_gone};
        cr_assert(eq(int,
                     ks_objects_load_buffer("informer.yaml", cases[i].objects, strlen(cases[i].objects),
                                            &fl.objs, &err),
                     0),
                  "%s: %s", cases[i].name, err.msg);
        char msg[512] = "";
        enum ks_vol_wait_result got = ks_vol_check_bindings(&b, &fl.l, msg, sizeof(msg));
        cr_expect(eq(int, got, cases[i].want), "%s", cases[i].name);
        cr_expect(eq(str, msg, (char *)cases[i].msg), "%s", cases[i].name);
        ks_objects_destroy(fl.objs);
    }
    /* the node is gone */
    b.node = ks_intern("node-z");
    struct fake_lookup fl = {.l = {.pv = fl_pv, .pvc = fl_pvc, .pod_exists = fl_pod}};
    char msg[512] = "";
    struct ks_error err = {0};
    cr_assert(eq(
        int, ks_objects_load_buffer("informer.yaml", PVC_A_BOUND, strlen(PVC_A_BOUND), &fl.objs, &err), 0));
    cr_expect(eq(int, ks_vol_check_bindings(&b, &fl.l, msg, sizeof(msg)), KS_VOL_FAILED));
    cr_expect(eq(str, msg, "failed to get node \"node-z\": node \"node-z\" not found"));
    ks_objects_destroy(fl.objs);
    vfx_close(&x);
}
