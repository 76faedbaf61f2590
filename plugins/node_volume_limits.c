/*
 * node_volume_limits.c - the NodeVolumeLimits plugin (upstream's CSILimits): rejects nodes
 * where the pod's CSI volumes would exceed a driver's attach limit (PreFilter, Filter).
 *
 * Mirrors pkg/scheduler/framework/plugins/nodevolumelimits/csi.go with every CSI migration
 * gate at its default:
 *  - PreFilter skips pods without a persistentVolumeClaim, ephemeral, gcePersistentDisk or
 *    awsElasticBlockStore volume (the inline kinds CSI migration translates).
 *  - A volume counts as a unique name "<driver>/<handle>" under the limit of its driver:
 *    a claim bound to a CSI PV gives the PV's driver and volumeHandle; an unbound claim, or
 *    one bound to a missing PV, gives its class's provisioner and a handle made of the
 *    claim's namespace and name (getCSIDriverInfoFromSC; in-tree provisioners count under
 *    their CSI driver when the node has a CSINode, since migration is on for AWS EBS, GCE
 *    PD, Azure disk and Cinder, and Portworx when the CSINode's migrated-plugins annotation
 *    lists it; other in-tree provisioners and PVs without a csi source do not count);
 *    inline GCE PD and AWS EBS volumes count when the node has a CSINode, with the handles
 *    the CSI translation library gives them.
 *  - Filter: the node's limits are its CSINode drivers' allocatable.count (current upstream
 *    no longer reads attachable-volumes-* from node allocatable; a node without a CSINode,
 *    or a driver without a count, has no limit). The new pod's unique volumes that no pod on
 *    the node uses yet are its new volumes; a limit key is checked only when the pod brings at
 *    least one new volume under it, so a pod whose volumes are all in use on the node fits even
 *    where the node is already over the limit. For such a key, the node's pods' unique volumes
 *    plus the new ones above the limit is Unschedulable "node(s) exceed max volume count" (the
 *    in-tree plugins of helper_volumes.c check their limit whether or not a volume is new, as
 *    non_csi.go did). A claim of the new pod that
 *    does not exist is UnschedulableAndUnresolvable `looking up PVC <ns>/<c>:
 *    persistentvolumeclaim "<c>" not found`; an ephemeral claim the pod does not own, or an
 *    inline EBS volume id that does not translate, is an Error.
 *
 * Deviations, for speed or for lack of objects: ksched has no VolumeAttachment objects, so
 * current upstream's counting of a node's VolumeAttachments adds nothing; the node's claims
 * come from the cache's per-node pvc_refs (claims of its pods, unique), so a pod on the node
 * whose ephemeral claim it does not own is counted instead of failing the node with an
 * Error; unique names of the claims are computed once at init from the loaded objects
 * (VolumeBinding's in-process bindings are not seen here); an existing pod's untranslatable
 * inline EBS id fails the node with a fixed message (upstream formats it). Filter allocates
 * nothing below 128 attached volumes of the pod's drivers per node. A pod with any volume
 * this plugin reads is unsignable (ks_sign_no_volumes). It takes no args.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/framework.h"
#include "ksched/plugin_batch.h"
#include "ksched/plugin_helpers.h"
#include "ksched/plugin_helpers_hints.h"
#include "ksched/plugin_helpers_sign.h"
#include "ksched/plugin_helpers_volumes.h"
#include "ksched/registry.h"

/* The migration contexts a node can be in: no CSINode, a CSINode, one that migrated Portworx. */
enum { CTX_NO_CSINODE, CTX_CSINODE, CTX_CSINODE_PX, NCTX };

#define NVL_STACK 128

/* One volume: its limit key and unique name. */
struct nvl_vol {
    uint32_t key;   /* interned limit key; KS_ID_NONE: not counted */
    uint32_t uname; /* interned "<driver>/<handle>" */
};

struct nvl_limit {
    uint32_t key;
    int64_t count;
};

struct nvl_csinode {
    bool px_migrated;
    uint32_t nlimits;
    struct nvl_limit *limits;
};

struct node_volume_limits {
    uint16_t slot;
    uint32_t msg_exceeded, msg_nostate, msg_ebs_invalid;
    uint32_t gce_driver_key, ebs_driver_key;
    const struct ks_objects *objs; /* the live objects (NULL: none) */
    /* refreshed at PreFilter (scheduling thread); read by PreFilter and the cycle's Filter workers */
    struct ks_vol_index ix;
    struct nvl_vol *pvc_vol[NCTX]; /* parallel to ix.pvcs.items */
    struct nvl_csinode *csinodes;  /* parallel to ix.csinodes.items */
};

/* The new pod's volumes in one migration context, or the failure Filter reports. */
struct nvl_ctx {
    enum ks_code err_code; /* KS_SUCCESS: none */
    uint32_t err;
    uint32_t n;
    struct nvl_vol *vols; /* distinct unique names */
};

struct nvl_state {
    struct nvl_ctx ctx[NCTX];
};

/* The limit key of a driver. Upstream keys limits by GetCSIAttachLimitKey(driver), a
 * function of the driver name on both sides (volumes and CSINode), so the name itself serves. */
static uint32_t limit_key(const char *driver)
{
    return ks_intern(driver);
}

/* Intern "<a><b><c><d>". */
static uint32_t intern4(const char *a, const char *b, const char *c, const char *d)
{
    size_t la = strlen(a), lb = strlen(b), lc = strlen(c), ld = strlen(d);
    char *buf = malloc(la + lb + lc + ld + 1);
    if (!buf)
        return KS_ID_NONE;
    memcpy(buf, a, la);
    memcpy(buf + la, b, lb);
    memcpy(buf + la + lb, c, lc);
    memcpy(buf + la + lb + lc, d, ld);
    uint32_t id = ks_intern_n(buf, la + lb + lc + ld);
    free(buf);
    return id;
}

/* ---- unique names of claims (getCSIDriverInfo) -------------------------------------------- */

/* The in-tree provisioners csi-translation-lib knows, and the CSI driver of those it migrates. */
static const struct {
    const char *plugin, *driver;
    int min_ctx; /* migration on from this context; NCTX: never */
} intree[] = {
    {"kubernetes.io/aws-ebs", "ebs.csi.aws.com", CTX_CSINODE},
    {"kubernetes.io/gce-pd", "pd.csi.storage.gke.io", CTX_CSINODE},
    {"kubernetes.io/azure-disk", "disk.csi.azure.com", CTX_CSINODE},
    {"kubernetes.io/cinder", "cinder.csi.openstack.org", CTX_CSINODE},
    {"kubernetes.io/portworx-volume", "pxd.portworx.com", CTX_CSINODE_PX},
    {"kubernetes.io/azure-file", "file.csi.azure.com", NCTX},
    {"kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com", NCTX},
};

/* The handle of an unbound claim: "<prefix>-<ns>/<name>" upstream, with a random prefix per instance. */
#define UNBOUND_HANDLE_PREFIX "ksched-unbound-claim-"
/* The handle csi-translation-lib gives an inline GCE PD (its zone unspecified). */
#define GCE_HANDLE_PREFIX "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/"

/* The volume "<driver>/<h1><h2>" under the limit key of @driver. */
static int vol_of(struct nvl_vol *out, const char *driver, const char *h1, const char *h2)
{
    out->key = limit_key(driver);
    out->uname = intern4(driver, "/", h1, h2);
    return out->key == KS_ID_NONE || out->uname == KS_ID_NONE ? -ENOMEM : 0;
}

/* getCSIDriverInfoFromSC in migration context @ctx. */
static int from_class(const struct node_volume_limits *p, const struct ks_persistent_volume_claim *pvc,
                      int ctx, struct nvl_vol *out)
{
    const char *sc_name = ks_pvc_class(pvc);
    out->key = KS_ID_NONE;
    if (!sc_name[0])
        return 0;
    const struct ks_storage_class *sc = ks_vol_find_class(&p->ix, sc_name);
    if (!sc || !sc->provisioner)
        return 0;
    const char *ns = ks_intern_str(pvc->meta.namespace_id);
    size_t len = strlen(ns) + strlen(pvc->meta.name) + 2;
    char *handle = malloc(len);
    if (!handle)
        return -ENOMEM;
    snprintf(handle, len, "%s/%s", ns, pvc->meta.name);
    const char *driver = sc->provisioner;
    for (size_t i = 0; i < sizeof(intree) / sizeof(intree[0]); i++) {
        if (strcmp(intree[i].plugin, sc->provisioner) != 0)
            continue;
        if (ctx < intree[i].min_ctx) {
            free(handle);
            return 0;
        }
        driver = intree[i].driver;
    }
    int rc = vol_of(out, driver, UNBOUND_HANDLE_PREFIX, handle);
    free(handle);
    return rc;
}

/* getCSIDriverInfo of @pvc in context @ctx, from the loaded objects. */
static int claim_vol(const struct node_volume_limits *p, const struct ks_persistent_volume_claim *pvc,
                     int ctx, struct nvl_vol *out)
{
    out->key = KS_ID_NONE;
    if (!pvc->volume_name || !pvc->volume_name[0])
        return from_class(p, pvc, ctx, out);
    const struct ks_persistent_volume *pv = ks_vol_find_pv(&p->ix, pvc->volume_name);
    if (!pv)
        return from_class(p, pvc, ctx, out);
    if (!pv->csi_driver || !pv->csi_driver[0] || !pv->csi_volume_handle || !pv->csi_volume_handle[0])
        return 0; /* no in-tree PV sources in the object model: nothing to translate */
    return vol_of(out, pv->csi_driver, pv->csi_volume_handle, "");
}

/* ---- init ------------------------------------------------------------------------------------ */

static bool px_migrated(const struct ks_csi_node *cn)
{
    const char *v = ks_annotation(&cn->meta.annotations, KS_ANN_MIGRATED_PLUGINS);
    const char *want = "kubernetes.io/portworx-volume";
    size_t wl = strlen(want);
    for (const char *s = v; s && *s;) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        if (len == wl && strncmp(s, want, wl) == 0)
            return true;
        s = comma ? comma + 1 : NULL;
    }
    return false;
}

static void destroy(void *self);

/* Free tables parallel to an index with @ncn CSINodes. */
static void tables_free(struct nvl_vol *pvc_vol[NCTX], struct nvl_csinode *csinodes, uint32_t ncn)
{
    for (int c = 0; c < NCTX; c++)
        free(pvc_vol[c]);
    if (csinodes) {
        for (uint32_t i = 0; i < ncn; i++)
            free(csinodes[i].limits);
        free(csinodes);
    }
}

/* The tables parallel to p->ix (NULL before). -ENOMEM leaves them for tables_free(). */
static int tables_build(struct node_volume_limits *p)
{
    uint32_t npvc = p->ix.pvcs.n, ncn = p->ix.csinodes.n;
    for (int c = 0; c < NCTX; c++) {
        if (!(p->pvc_vol[c] = calloc(npvc ? npvc : 1, sizeof(*p->pvc_vol[c]))))
            return -ENOMEM;
        for (uint32_t i = 0; i < npvc; i++) {
            if (claim_vol(p, p->ix.pvcs.items[i].obj, c, &p->pvc_vol[c][i]) < 0)
                return -ENOMEM;
        }
    }
    if (!(p->csinodes = calloc(ncn ? ncn : 1, sizeof(*p->csinodes))))
        return -ENOMEM;
    for (uint32_t i = 0; i < ncn; i++) {
        const struct ks_csi_node *cn = p->ix.csinodes.items[i].obj;
        struct nvl_csinode *c = &p->csinodes[i];
        c->px_migrated = px_migrated(cn);
        if (!(c->limits = calloc(cn->ndrivers ? cn->ndrivers : 1, sizeof(*c->limits))))
            return -ENOMEM;
        for (uint32_t d = 0; d < cn->ndrivers; d++) {
            if (!cn->drivers[d].has_count)
                continue;
            uint32_t key = limit_key(cn->drivers[d].name);
            if (key == KS_ID_NONE)
                return -ENOMEM;
            uint32_t k = 0;
            while (k < c->nlimits && c->limits[k].key != key)
                k++;
            c->limits[k] = (struct nvl_limit){.key = key, .count = cn->drivers[d].allocatable_count};
            c->nlimits += k == c->nlimits;
        }
    }
    return 0;
}

/*
 * Rebuild the index and its tables when the objects changed (plugin_helpers_volumes.h).
 * Scheduling thread, at PreFilter: the previous cycle's Filter workers are done and this
 * cycle's have not started; no other op reads them. On -ENOMEM the old ones stay.
 */
static int refresh(struct node_volume_limits *p)
{
    if (__builtin_expect(!ks_vol_index_stale(&p->ix, p->objs), 1))
        return 0;
    struct ks_vol_index old = p->ix;
    struct nvl_vol *old_vol[NCTX];
    struct nvl_csinode *old_cn = p->csinodes;
    memcpy(old_vol, p->pvc_vol, sizeof(old_vol));
    if (ks_vol_index_build(&p->ix, p->objs) < 0) {
        p->ix = old;
        return -ENOMEM;
    }
    memset(p->pvc_vol, 0, sizeof(p->pvc_vol));
    p->csinodes = NULL;
    if (tables_build(p) < 0) {
        tables_free(p->pvc_vol, p->csinodes, p->ix.csinodes.n);
        ks_vol_index_destroy(&p->ix);
        p->ix = old;
        memcpy(p->pvc_vol, old_vol, sizeof(old_vol));
        p->csinodes = old_cn;
        return -ENOMEM;
    }
    tables_free(old_vol, old_cn, old.csinodes.n);
    ks_vol_index_destroy(&old);
    return 1;
}

static int init(const struct ks_plugin_init *in, void **self, struct ks_error *err)
{
    struct node_volume_limits *p = calloc(1, sizeof(*p));

    (void)err;
    if (!p)
        return -ENOMEM;
    p->slot = in->slot;
    if (ks_vol_index_build(&p->ix, p->objs = ks_vol_objects(in->framework)) < 0)
        goto fail;
    p->msg_exceeded = ks_intern("node(s) exceed max volume count");
    p->msg_nostate = ks_intern("cannot read \"PreFilterNodeVolumeLimits\" from cycleState");
    p->msg_ebs_invalid =
        ks_intern("converting volume from inline to csi: failed to translate Kubernetes ID to EBS "
                  "Volume ID");
    p->gce_driver_key = limit_key("pd.csi.storage.gke.io");
    p->ebs_driver_key = limit_key("ebs.csi.aws.com");
    if (p->msg_exceeded == KS_ID_NONE || p->msg_nostate == KS_ID_NONE || p->msg_ebs_invalid == KS_ID_NONE ||
        p->gce_driver_key == KS_ID_NONE || p->ebs_driver_key == KS_ID_NONE)
        goto fail;
    if (tables_build(p) < 0)
        goto fail;
    *self = p;
    return 0;
fail:
    destroy(p);
    return -ENOMEM;
}

static void destroy(void *self)
{
    struct node_volume_limits *p = self;
    if (!p)
        return;
    tables_free(p->pvc_vol, p->csinodes, p->ix.csinodes.n);
    ks_vol_index_destroy(&p->ix);
    free(p);
}

/* ---- PreFilter ---------------------------------------------------------------------------------- */

/*
 * KubernetesVolumeIDToEBSVolumeID: "aws://<zone>/<id>", "aws:///<id>" or a bare id; the
 * result is the id (a substring of @vid, at *off with *len). False when it is malformed.
 */
static bool ebs_volume_id(const char *vid, size_t *off, size_t *len)
{
    if (strncmp(vid, "aws://", 6) != 0) {
        *off = 0;
        *len = strlen(vid);
        return true;
    }
    const char *path = strchr(vid + 6, '/');
    if (!path)
        path = vid + strlen(vid);
    const char *s = path, *e = path + strlen(path);
    while (s < e && *s == '/')
        s++;
    while (e > s && e[-1] == '/')
        e--;
    if (e - s < 4 || strncmp(s, "vol-", 4) != 0 || memchr(s, '/', (size_t)(e - s)))
        return false;
    *off = (size_t)(s - vid);
    *len = (size_t)(e - s);
    return true;
}

/* The unique name of an inline migratable volume (CSINode contexts only). */
static int inline_vol(const struct ks_volume *v, struct nvl_vol *out, bool *invalid)
{
    char buf[1024];

    *invalid = false;
    if (v->kind == KS_VOLUME_GCE_PD) {
        return vol_of(out, "pd.csi.storage.gke.io", GCE_HANDLE_PREFIX, v->source);
    }
    size_t off, len;
    if (!ebs_volume_id(v->source, &off, &len)) {
        *invalid = true;
        return 0;
    }
    snprintf(buf, sizeof(buf), "%.*s", (int)len, v->source + off);
    return vol_of(out, "ebs.csi.aws.com", buf, "");
}

static void set_err(struct nvl_ctx *c, enum ks_code code, uint32_t msg)
{
    c->err_code = code;
    c->err = msg;
}

/* filterAttachableVolumes(newPod) in context @ctx. Scheduling thread. */
static int new_volumes(const struct node_volume_limits *p, struct ks_cycle_state *cs,
                       const struct ks_pod *pod, int ctx, struct nvl_ctx *c)
{
    const char *ns = ks_intern_str(pod->meta.namespace_id);
    char msg[1024];

    c->vols = ks_arena_calloc(&cs->arena, pod->nvolumes ? pod->nvolumes : 1, sizeof(*c->vols));
    if (!c->vols)
        return -ENOMEM;
    for (uint32_t i = 0; i < pod->nvolumes; i++) {
        const struct ks_volume *v = &pod->volumes[i];
        struct nvl_vol vol = {.key = KS_ID_NONE};
        const char *claim = ks_volume_claim_name(v);
        if (claim) {
            uint32_t key = ks_intern_find_ns_name(pod->meta.namespace_id, claim);
            const struct ks_vol_entry *e = key == KS_ID_NONE ? NULL : ks_vol_table_find(&p->ix.pvcs, key);
            if (!e) {
                snprintf(msg, sizeof(msg), "looking up PVC %s/%s: persistentvolumeclaim \"%s\" not found", ns,
                         claim, claim);
                set_err(c, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, ks_intern(msg));
                return c->err == KS_ID_NONE ? -ENOMEM : 0;
            }
            if (v->kind == KS_VOLUME_EPHEMERAL && !ks_ephemeral_is_for_pod(pod, e->obj)) {
                snprintf(msg, sizeof(msg), "PVC %s/%s was not created for pod %s/%s (pod is not owner)", ns,
                         claim, ns, pod->meta.name);
                set_err(c, KS_ERROR, ks_intern(msg));
                return c->err == KS_ID_NONE ? -ENOMEM : 0;
            }
            vol = p->pvc_vol[ctx][e - p->ix.pvcs.items];
        } else if ((v->kind == KS_VOLUME_GCE_PD || v->kind == KS_VOLUME_AWS_EBS) && ctx != CTX_NO_CSINODE) {
            bool invalid;
            if (inline_vol(v, &vol, &invalid) < 0)
                return -ENOMEM;
            if (invalid) {
                snprintf(msg, sizeof(msg),
                         "converting volume(%s) from inline to csi: failed to translate Kubernetes ID to EBS "
                         "Volume ID Invalid format for AWS volume (%s)",
                         v->name, v->source);
                set_err(c, KS_ERROR, ks_intern(msg));
                return c->err == KS_ID_NONE ? -ENOMEM : 0;
            }
        }
        if (vol.key == KS_ID_NONE)
            continue;
        uint32_t k = 0;
        while (k < c->n && c->vols[k].uname != vol.uname)
            k++;
        if (k == c->n)
            c->vols[c->n++] = vol;
    }
    return 0;
}

static int pre_filter(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                      struct ks_pre_filter_result *res, struct ks_status *st)
{
    struct node_volume_limits *p = self;
    bool relevant = false;

    (void)res;
    for (uint32_t i = 0; i < pod->nvolumes && !relevant; i++) {
        enum ks_volume_kind k = pod->volumes[i].kind;
        relevant =
            k == KS_VOLUME_PVC || k == KS_VOLUME_EPHEMERAL || k == KS_VOLUME_GCE_PD || k == KS_VOLUME_AWS_EBS;
    }
    if (!relevant)
        return KS_SKIP;
    struct nvl_state *s = ks_arena_alloc(&cs->arena, sizeof(*s));
    if (!s || refresh(p) < 0)
        return ks_status_set(st, KS_ERROR, "out of memory");
    for (int c = 0; c < NCTX; c++) {
        if (new_volumes(p, cs, pod, c, &s->ctx[c]) < 0)
            return ks_status_set(st, KS_ERROR, "out of memory");
    }
    cs->slot[p->slot] = s;
    return KS_SUCCESS;
}

/* ---- Filter ------------------------------------------------------------------------------------- */

/* An attached volume: an interned unique name, or an inline volume named by parts. */
struct att {
    uint32_t key;
    uint32_t uname; /* KS_ID_NONE for an inline volume */
    const char *prefix, *h;
    size_t hlen;
};

/* The inline volume's unique name is "<driver>/<prefix><h[0:hlen]>": compare with @s. */
static bool inline_is(const struct att *a, const char *s)
{
    size_t pl = strlen(a->prefix);
    return strncmp(s, a->prefix, pl) == 0 && strncmp(s + pl, a->h, a->hlen) == 0 && s[pl + a->hlen] == '\0';
}

/* Whether two attached volumes have the same unique name (same key implied). */
static bool att_eq(const struct att *a, const struct att *b)
{
    if (a->key != b->key)
        return false;
    if (a->uname != KS_ID_NONE && b->uname != KS_ID_NONE)
        return a->uname == b->uname;
    if (a->uname == KS_ID_NONE && b->uname == KS_ID_NONE)
        return strcmp(a->prefix, b->prefix) == 0 && a->hlen == b->hlen && strncmp(a->h, b->h, a->hlen) == 0;
    const struct att *in = a->uname == KS_ID_NONE ? a : b, *id = a->uname == KS_ID_NONE ? b : a;
    const char *s = ks_intern_str(id->uname), *slash = strchr(s, '/');
    return slash && inline_is(in, slash + 1);
}

static bool key_relevant(const struct nvl_ctx *c, uint32_t key)
{
    for (uint32_t i = 0; i < c->n; i++) {
        if (c->vols[i].key == key)
            return true;
    }
    return false;
}

struct att_set {
    uint32_t n, cap;
    struct att *v;
    struct att stack[NVL_STACK];
    bool heap, oom, invalid; /* invalid: a pod's inline EBS volume id does not translate */
};

static void att_add(struct att_set *s, const struct att *a)
{
    for (uint32_t i = 0; i < s->n; i++) {
        if (att_eq(&s->v[i], a))
            return;
    }
    if (s->n == s->cap) {
        /* cold: more than NVL_STACK attached volumes of the pod's drivers on one node */
        uint32_t cap = s->cap * 2;
        struct att *v = malloc((size_t)cap * sizeof(*v));
        if (!v) {
            s->oom = true;
            return;
        }
        memcpy(v, s->v, (size_t)s->n * sizeof(*v));
        if (s->heap)
            free(s->v);
        s->v = v;
        s->cap = cap;
        s->heap = true;
    }
    s->v[s->n++] = *a;
}

/* The attached volumes of the pod's drivers on @node (filterAttachableVolumes of its pods). */
static void attached(const struct node_volume_limits *p, const struct ks_node_snap *node, int ctx,
                     const struct nvl_ctx *c, struct att_set *set)
{
    for (uint32_t i = 0; i < node->npvc_refs; i++) {
        const struct ks_vol_entry *e = ks_vol_table_find(&p->ix.pvcs, node->pvc_refs[i]);
        if (!e)
            continue; /* an unknown claim is not counted */
        const struct nvl_vol *v = &p->pvc_vol[ctx][e - p->ix.pvcs.items];
        if (v->key != KS_ID_NONE && key_relevant(c, v->key))
            att_add(set, &(struct att){.key = v->key, .uname = v->uname});
    }
    if (ctx == CTX_NO_CSINODE)
        return;
    bool gce = key_relevant(c, p->gce_driver_key), ebs = key_relevant(c, p->ebs_driver_key);
    if (!gce && !ebs)
        return;
    for (uint32_t i = 0; i < node->npods; i++) {
        const struct ks_pod *pod = node->pods[i];
        for (uint32_t j = 0; j < pod->nvolumes; j++) {
            const struct ks_volume *v = &pod->volumes[j];
            size_t off, len;
            if (v->kind == KS_VOLUME_GCE_PD && gce)
                att_add(set, &(struct att){.key = p->gce_driver_key,
                                           .uname = KS_ID_NONE,
                                           .prefix = GCE_HANDLE_PREFIX,
                                           .h = v->source,
                                           .hlen = strlen(v->source)});
            else if (v->kind == KS_VOLUME_AWS_EBS && ebs && !ebs_volume_id(v->source, &off, &len))
                set->invalid = true;
            else if (v->kind == KS_VOLUME_AWS_EBS && ebs)
                att_add(set, &(struct att){.key = p->ebs_driver_key,
                                           .uname = KS_ID_NONE,
                                           .prefix = "",
                                           .h = v->source + off,
                                           .hlen = len});
        }
    }
}

/* getVolumeLimits: the node's limit for @key from its CSINode; false when none. */
static bool node_limit(const struct nvl_csinode *cn, uint32_t key, int64_t *limit)
{
    for (uint32_t i = 0; cn && i < cn->nlimits; i++) {
        if (cn->limits[i].key == key) {
            *limit = cn->limits[i].count;
            return true;
        }
    }
    return false;
}

/* filter_node - Workers; allocation-free below NVL_STACK attached volumes. */
static inline KS_ALWAYS_INLINE int filter_node(void *self, const struct ks_cycle_state *cs,
                                               const struct ks_pod *pod, const struct ks_node_snap *node,
                                               struct ks_status *st)
{
    const struct node_volume_limits *p = self;
    const struct nvl_state *s = cs->slot[p->slot];

    if (pod->nvolumes == 0)
        return KS_SUCCESS;
    if (__builtin_expect(!s, 0))
        return ks_status_reject(st, KS_ERROR, p->msg_nostate);
    const struct ks_vol_entry *ce = ks_vol_table_find(&p->ix.csinodes, node->name);
    const struct nvl_csinode *cn = ce ? &p->csinodes[ce - p->ix.csinodes.items] : NULL;
    int ctx = !cn ? CTX_NO_CSINODE : cn->px_migrated ? CTX_CSINODE_PX : CTX_CSINODE;
    const struct nvl_ctx *c = &s->ctx[ctx];
    if (c->err_code != KS_SUCCESS)
        return ks_status_reject(st, c->err_code, c->err);
    if (c->n == 0)
        return KS_SUCCESS;
    bool any_limit = false;
    for (uint32_t i = 0; i < c->n && !any_limit; i++) {
        int64_t limit;
        any_limit = node_limit(cn, c->vols[i].key, &limit);
    }
    if (!any_limit)
        return KS_SUCCESS;

    struct att_set set = {.cap = NVL_STACK};
    set.v = set.stack;
    attached(p, node, ctx, c, &set);
    int rc = KS_SUCCESS;
    if (__builtin_expect(set.oom, 0)) {
        rc = ks_status_set(st, KS_ERROR, "out of memory");
        goto out;
    }
    if (__builtin_expect(set.invalid, 0)) {
        rc = ks_status_reject(st, KS_ERROR, p->msg_ebs_invalid);
        goto out;
    }
    for (uint32_t i = 0; i < c->n && rc == KS_SUCCESS; i++) {
        uint32_t key = c->vols[i].key;
        bool first = true;
        for (uint32_t j = 0; j < i && first; j++)
            first = c->vols[j].key != key;
        int64_t limit;
        if (!first || !node_limit(cn, key, &limit))
            continue;
        int64_t current = 0, add = 0;
        for (uint32_t a = 0; a < set.n; a++)
            current += set.v[a].key == key;
        for (uint32_t j = i; j < c->n; j++) {
            if (c->vols[j].key != key)
                continue;
            struct att nv = {.key = key, .uname = c->vols[j].uname};
            bool on_node = false;
            for (uint32_t a = 0; a < set.n && !on_node; a++)
                on_node = att_eq(&set.v[a], &nv);
            add += !on_node;
        }
        /* a driver is checked only when the pod brings a volume the node does not use yet */
        if (add > 0 && current + add > limit)
            rc = ks_status_reject(st, KS_UNSCHEDULABLE, p->msg_exceeded);
    }
out:
    if (set.heap)
        free(set.v);
    return rc;
}

KS_FILTER_OPS(filter, filter_nodes, filter_node)

/* ---- events ---------------------------------------------------------------------------------- */

/* EventsToRegister with QueueingHints, as upstream's. */
static const struct ks_event_registration events[] = {
    {{KS_ER_CSI_NODE, KS_ACT_ADD | KS_ACT_UPDATE}, NULL},
    {{KS_ER_POD, KS_ACT_DELETE}, ks_hint_limits_pod_deleted},
    {{KS_ER_PVC, KS_ACT_ADD}, ks_hint_claim_of_pod},
    {{KS_ER_VOLUME_ATTACHMENT, KS_ACT_DELETE}, NULL},
    {{KS_ER_NODE, KS_ACT_ADD}, NULL},
};
KS_DEFINE_EVENTS_TO_REGISTER(events)

const struct ks_plugin ks_plugin_node_volume_limits = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "NodeVolumeLimits",
    .init = init,
    .destroy = destroy,
    .pre_filter = pre_filter,
    .filter = filter,
    .filter_nodes = filter_nodes,
    .sign = ks_sign_no_volumes,
    .events_to_register = events_to_register,
};
