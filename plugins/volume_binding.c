/*
 * volume_binding.c - the VolumeBinding plugin: filters nodes on whether the pod's
 * PersistentVolumeClaims can be bound or provisioned there, reserves and binds the
 * volumes (PreFilter, Filter, PreScore, Score, Reserve/Unreserve, PreBind).
 *
 * Mirrors pkg/scheduler/framework/plugins/volumebinding/{volume_binding.go,binder.go} and
 * FindMatchingVolume / CheckNodeAffinity of k8s.io/component-helpers/storage/volume:
 *  - PreFilter reads every persistentVolumeClaim and ephemeral ("<pod>-<volume>") volume's
 *    claim. UnschedulableAndUnresolvable, in volume order: `persistentvolumeclaim "<c>" not
 *    found` (ephemeral: `waiting for ephemeral volume controller to create the
 *    persistentvolumeclaim "<c>"`), `persistentvolumeclaim "<c>" bound to non-existent
 *    persistentvolume "<pv>"` (phase Lost), `persistentvolumeclaim "<c>" is being deleted`,
 *    "PVC <ns>/<c> was not created for pod <ns>/<pod> (pod is not owner)". No claim: Skip.
 *    Claims are then sorted as GetPodVolumeClaims does: fully bound (volumeName and the
 *    pv.kubernetes.io/bind-completed annotation), unbound with a WaitForFirstConsumer class
 *    and no volumeName (delayed), anything else "pod has unbound immediate
 *    PersistentVolumeClaims" (UnschedulableAndUnresolvable). Bound local volumes narrow the
 *    nodes (GetEligibleNodes: the kubernetes.io/hostname In values of each PV's terms,
 *    intersected over the PVs; no narrowing when a bound PV is missing). For each delayed
 *    claim the node-independent part of FindMatchingVolume is done here: the PVs of its
 *    class that are prebound to it, or unclaimed, Available, large enough, of the same
 *    volume mode, matching its selector and access modes.
 *  - Filter, per node, is FindPodVolumes: a bound claim's PV whose node affinity rejects the
 *    node gives "node(s) didn't match PersistentVolume's node affinity" (current upstream's
 *    ErrReasonNodeConflict); a missing bound PV gives "node(s) unavailable due to one or
 *    more pvc(s) bound to non-existent pv(s)"; delayed claims with a selected-node
 *    annotation for another node, or claims (smallest request first) that find no PV (a
 *    prebound PV decides alone; otherwise the smallest fitting PV in input order, each PV
 *    chosen once) and cannot be provisioned (class provisioner empty or
 *    kubernetes.io/no-provisioner, or allowedTopologies not matching the node) give
 *    "node(s) didn't find available persistent volumes to bind". All reasons together,
 *    UnschedulableAndUnresolvable. Storage capacity is never short: ksched has no CSIDriver
 *    objects, so no driver opts into capacity tracking.
 *  - PreScore returns Skip and Score 0: the capacity score needs the StorageCapacityScoring
 *    gate (VolumeCapacityPriority before), off by default.
 *  - Reserve repeats the Filter computation for the chosen node (Filter may not write the
 *    cycle state), reading the node's labels from the cache's current snapshot (the one the
 *    cycle filtered with), and assumes the result (AssumePodVolumes): chosen PVs get the
 *    claim as their claimRef, provisioned claims the selected-node annotation, in the
 *    plugin's in-memory binding state; nothing is assumed when every claim is already
 *    bound. Unreserve restores the assumed objects.
 *  - PreBind with an API server (ksched serve: the framework deps carry a struct
 *    ks_volume_api, include/ksched/volume_api.h) is BindPodVolumes (helper_volumes_bind.c):
 *    the PUT of each chosen PV with its claimRef, then of each claim to provision with the
 *    selected-node annotation, each at the resourceVersion Reserve saw (a PV or claim the
 *    server changed since answers 409 and fails PreBind), then a wait, without holding a
 *    binder thread (PreBind returns KS_WAIT), until the PV controller has bound every claim,
 *    at most bindTimeoutSeconds. A failure fails PreBind with upstream's message; the
 *    framework then runs Unreserve and the pod goes back to the queue. The assumed views
 *    stay until the informers deliver the updated objects (refresh views them afresh), as
 *    upstream's assume caches keep an assumed object until a newer one arrives.
 *  - PreBind without an API server (ksched schedule, bench, soak) simulates the binding in
 *    process: what the API updates and the PV controller would do, at once: a chosen PV is
 *    bound to its claim and the claim to it (volumeName, bind-completed); a provisioned
 *    claim keeps the selected node (the volume itself is the external provisioner's
 *    business, so later pods sharing the claim follow the node).
 *
 * Binding state: per PV its claim and phase, per claim its volumeName, bind-completed and
 * selected node, each as the API has it and as assumed (upstream's assume caches). It is
 * guarded by one mutex (KS_LOCK_VOLUME_BINDING, include/ksched/base/lock.h; only messages are
 * interned under it), taken by PreFilter (to copy what Filter needs into the cycle
 * state), Reserve, Unreserve and PreBind (binder threads), never by Filter. PreFilter takes
 * it inside the cycle's RCU read section: holders only copy or store a few entries and never
 * wait for a grace period, so a reader is delayed briefly and cannot deadlock. Objects
 * themselves are immutable; other plugins read the loaded objects, not this state. PreBind
 * through the API holds no lock while it calls the API (binder thread) and its wait's
 * check (the API's thread) reads only the informers' objects and the cache's snapshot.
 *
 * Live objects (ksched serve, loader.h gen): PreFilter, on the scheduling thread, rebuilds
 * the index, the views and pv_order when the storage objects changed, and swaps them in
 * under p->lock; the binder-side ops (Unreserve, PreBind) read them only under p->lock, so
 * the mutex publishes the new tables and nobody reads the old ones after the swap (no RCU
 * needed). A view is carried over when its object is the same one (an in-process binding
 * or an assumption survives); an object the server replaced is viewed afresh, as the
 * server has it. The cycle state names claims and PVs by index and by interned key: when
 * the index was rebuilt since the pod's PreFilter (s->gen), Reserve, Unreserve and PreBind
 * find them again by key (a deleted one is skipped). Filter reads only the cycle state.
 *
 * Signature: a pod with a volume that is not KS_VOLUME_OTHER is unsignable (its claims read
 * the binding state); any other pod skips PreFilter and PreScore (ks_sign_no_volumes).
 */
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/lock.h"
#include "ksched/base/rcu.h"
#include "ksched/framework.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/config_decode.h"
#include "ksched/plugin_args.h"
#include "ksched/plugin_batch.h"
#include "ksched/plugin_helpers_hints.h"
#include "ksched/plugin_helpers_sign.h"
#include "ksched/plugin_helpers_volumes.h"
#include "ksched/registry.h"
#include "ksched/volume_api.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- args ----------------------------------------------------------------------------------- */

static int args_decode(struct ks_decoder *d, const struct ks_yaml_node *node, const char *api_version,
                       struct ks_volumebinding_args *a)
{
    static const char *const fields[] = {"bindTimeoutSeconds", "shape", NULL};
    const struct ks_yaml_node *shape = NULL;
    enum ks_config_version version;
    uint32_t nshape = 0;
    struct ks_shape_point *points = NULL;
    int rc;

    a->bind_timeout_seconds = 600;
    if ((rc = ks_cfg_args_begin(d, node, "VolumeBindingArgs", api_version, fields, &version)) ||
        (rc = ks_dec_int64(d, node, "bindTimeoutSeconds", &a->bind_timeout_seconds)) ||
        (rc = ks_cfg_shape(d, node, "shape", &nshape, &points, &shape)))
        return rc;
    if (a->bind_timeout_seconds < 0)
        return ks_cfg_fail_at(
            d, ks_yaml_get(node, "bindTimeoutSeconds"), 0, "bindTimeoutSeconds",
            "Invalid value: %lld: invalid BindTimeoutSeconds, should not be a negative value",
            (long long)a->bind_timeout_seconds);
    if (shape)
        return ks_cfg_fail_at(
            d, shape, 0, "shape",
            "Invalid value: unexpected field `shape`, remove it or turn on the feature gate %s",
            version == KS_CONFIG_V1 ? "StorageCapacityScoring" : "VolumeCapacityPriority");
    return 0;
}

KS_DEFINE_ARGS_OPS(struct ks_volumebinding_args, args_decode)

static void args_print(const void *args, struct ks_yaml_out *o)
{
    const struct ks_volumebinding_args *a = args;
    ks_yaml_key_int(o, "bindTimeoutSeconds", a->bind_timeout_seconds);
    if (a->nshape)
        ks_cfg_print_shape(o, "shape", a->nshape, a->shape);
}

/* ---- binding state ---------------------------------------------------------------------------- */

#define CLAIM_NONE  UINT32_MAX       /* a PV without claimRef */
#define CLAIM_OTHER (UINT32_MAX - 1) /* a claimRef naming a claim ksched does not know */
#define VB_STACK    64               /* delayed claims handled without the cold allocation */

/* A PV as the API has it or as assumed: what binding changes. */
struct pv_view {
    uint32_t claim; /* index into ix.pvcs, CLAIM_NONE or CLAIM_OTHER */
    bool available; /* status.phase == Available */
};

/* A claim as the API has it or as assumed. */
struct pvc_view {
    const char *volume_name; /* "" when unbound */
    bool bind_completed;
    uint32_t selected_node; /* interned annotation value, KS_ID_NONE when absent */
};

struct volume_binding {
    uint16_t slot;
    const struct ks_volume_api *api; /* NULL: PreBind binds in process */
    int64_t bind_timeout_ns;         /* bindTimeoutSeconds */
    struct ks_cache *cache;          /* node labels for Reserve */
    const struct ks_objects *objs;   /* the live objects (NULL: none) */
    /* ix, pv_order and the views: replaced by PreFilter (scheduling thread) under lock */
    struct ks_vol_index ix;
    uint32_t msg_node_conflict, msg_bind_conflict, msg_pv_missing, msg_nostate;
    uint32_t *pv_order; /* indices into ix.pvs in input order (pvCache.ListPVs order) */

    struct ks_mutex lock;               /* the views below; KS_LOCK_VOLUME_BINDING (see the file comment) */
    struct pv_view *pv_api, *pv_cur;    /* parallel to ix.pvs.items */
    struct pvc_view *pvc_api, *pvc_cur; /* parallel to ix.pvcs.items */
};

/* One PV a delayed claim may take, with what FindMatchingVolume checks per node. */
struct vb_cand {
    uint32_t pv;     /* index into ix.pvs */
    uint32_t pv_key; /* its interned key */
    const struct ks_persistent_volume *obj;
    bool prebound; /* claimRef names this claim */
};

struct vb_claim {
    uint32_t pvc;     /* index into ix.pvcs */
    uint32_t pvc_key; /* its interned key */
    const struct ks_persistent_volume_claim *obj;
    uint32_t selected_node; /* KS_ID_NONE: not being provisioned */
    const struct ks_storage_class *sc;
    uint32_t ncand;
    struct vb_cand *cand;
};

struct vb_binding {
    uint32_t pvc, pv;         /* indices in the index of s->gen */
    uint32_t pvc_key, pv_key; /* their keys, for a later index */
    /* the objects as this cycle saw them: an API update is made at their resourceVersion */
    const struct ks_persistent_volume *pv_obj;
    const struct ks_persistent_volume_claim *pvc_obj;
};

/* A claim to provision. */
struct vb_ref {
    uint32_t idx, key;
    const struct ks_persistent_volume_claim *obj;
};

/* stateData */
struct vb_state {
    uint64_t gen; /* ix.gen at PreFilter: the index the indices below refer to */
    uint32_t nbound;
    const struct ks_persistent_volume **bound_pv; /* NULL: the bound claim's PV does not exist */
    uint32_t ndelay;
    struct vb_claim *delay; /* pod volume order */
    uint32_t nmatch;
    uint32_t *match_order; /* delayed claims without a selected node, by request size (stable) */
    /* Reserve's result for the chosen node */
    bool reserved, all_bound;
    uint32_t node;
    uint32_t nstatic, nprov;
    struct vb_binding *statics;
    struct vb_ref *prov;
};

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* @order: the table's indices sorted by input position. */
static int pv_input_order(const struct ks_vol_table *t, uint32_t *order)
{
    uint64_t *pairs = calloc(t->n ? t->n : 1, sizeof(*pairs));
    if (!pairs)
        return -ENOMEM;
    for (uint32_t i = 0; i < t->n; i++)
        pairs[i] = (uint64_t)t->items[i].pos << 32 | i;
    qsort(pairs, t->n, sizeof(*pairs), cmp_u64);
    for (uint32_t i = 0; i < t->n; i++)
        order[i] = (uint32_t)pairs[i];
    free(pairs);
    return 0;
}

/* The views of every object of @ix as the objects have them (api = cur). Allocation-free but interns. */
static int views_init(const struct ks_vol_index *ix, struct pv_view *pv_api, struct pv_view *pv_cur,
                      struct pvc_view *pvc_api, struct pvc_view *pvc_cur)
{
    uint32_t npv = ix->pvs.n, npvc = ix->pvcs.n;
    for (uint32_t i = 0; i < npv; i++) {
        const struct ks_persistent_volume *pv = ix->pvs.items[i].obj;
        struct pv_view *v = &pv_api[i];
        v->claim = CLAIM_NONE;
        v->available = pv->phase && strcmp(pv->phase, "Available") == 0;
        if (pv->claim_name) {
            uint32_t ns = ks_intern(pv->claim_namespace ? pv->claim_namespace : "");
            const struct ks_vol_entry *e =
                ns == KS_ID_NONE ? NULL
                                 : ks_vol_table_find(&ix->pvcs, ks_intern_find_ns_name(ns, pv->claim_name));
            v->claim = e ? (uint32_t)(e - ix->pvcs.items) : CLAIM_OTHER;
            /* IsVolumeBoundToClaim: a claimRef uid must be the claim's (a recreated claim is another) */
            const struct ks_persistent_volume_claim *c = e ? e->obj : NULL;
            if (c && pv->claim_uid && pv->claim_uid[0] && c->meta.uid &&
                strcmp(pv->claim_uid, c->meta.uid) != 0)
                v->claim = CLAIM_OTHER;
        }
        pv_cur[i] = *v;
    }
    for (uint32_t i = 0; i < npvc; i++) {
        const struct ks_persistent_volume_claim *pvc = ix->pvcs.items[i].obj;
        struct pvc_view *v = &pvc_api[i];
        const char *sel = ks_annotation(&pvc->meta.annotations, KS_ANN_SELECTED_NODE);
        v->volume_name = pvc->volume_name ? pvc->volume_name : "";
        v->bind_completed = ks_annotation(&pvc->meta.annotations, KS_ANN_BIND_COMPLETED) != NULL;
        v->selected_node = sel ? ks_intern(sel) : KS_ID_NONE;
        if (sel && v->selected_node == KS_ID_NONE)
            return -ENOMEM;
        pvc_cur[i] = *v;
    }
    return 0;
}

static int init(const struct ks_plugin_init *in, void **self, struct ks_error *err)
{
    struct volume_binding *p = calloc(1, sizeof(*p));
    const struct ks_framework_deps *deps = in->framework ? ks_framework_deps(in->framework) : NULL;

    (void)err;
    if (!p)
        return -ENOMEM;
    p->slot = in->slot;
    p->cache = deps ? deps->cache : NULL;
    p->api = deps ? deps->volume_api : NULL;
    const struct ks_volumebinding_args *args = in->args;
    p->bind_timeout_ns = (args ? args->bind_timeout_seconds : 600) * INT64_C(1000000000);
    if (ks_vol_index_build(&p->ix, p->objs = ks_vol_objects(in->framework)) < 0)
        goto err_index;
    p->msg_node_conflict = ks_intern("node(s) didn't match PersistentVolume's node affinity");
    p->msg_bind_conflict = ks_intern("node(s) didn't find available persistent volumes to bind");
    p->msg_pv_missing =
        ks_intern("node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)");
    p->msg_nostate = ks_intern("failed to read \"VolumeBinding\" from cycleState: not found");
    if (p->msg_node_conflict == KS_ID_NONE || p->msg_bind_conflict == KS_ID_NONE ||
        p->msg_pv_missing == KS_ID_NONE || p->msg_nostate == KS_ID_NONE)
        goto err_views;
    uint32_t npv = p->ix.pvs.n, npvc = p->ix.pvcs.n;
    p->pv_api = calloc(npv ? npv : 1, sizeof(*p->pv_api));
    p->pv_cur = calloc(npv ? npv : 1, sizeof(*p->pv_cur));
    p->pvc_api = calloc(npvc ? npvc : 1, sizeof(*p->pvc_api));
    p->pvc_cur = calloc(npvc ? npvc : 1, sizeof(*p->pvc_cur));
    p->pv_order = calloc(npv ? npv : 1, sizeof(*p->pv_order));
    if (!p->pv_api || !p->pv_cur || !p->pvc_api || !p->pvc_cur || !p->pv_order)
        goto err_views;
    if (pv_input_order(&p->ix.pvs, p->pv_order) < 0 ||
        views_init(&p->ix, p->pv_api, p->pv_cur, p->pvc_api, p->pvc_cur) < 0)
        goto err_views;
    ks_mutex_init(&p->lock, KS_LOCK_VOLUME_BINDING);
    *self = p;
    return 0;
err_views:
    free(p->pv_order);
    free(p->pv_api);
    free(p->pv_cur);
    free(p->pvc_api);
    free(p->pvc_cur);
    ks_vol_index_destroy(&p->ix);
err_index:
    free(p);
    return -ENOMEM;
}

static void destroy(void *self)
{
    struct volume_binding *p = self;
    if (!p)
        return;
    ks_mutex_destroy(&p->lock);
    free(p->pv_order);
    free(p->pv_api);
    free(p->pv_cur);
    free(p->pvc_api);
    free(p->pvc_cur);
    ks_vol_index_destroy(&p->ix);
    free(p);
}

/* ---- live objects ------------------------------------------------------------------------------ */

/* The index in @to of entry @i of @from (same key), @none when absent. */
static uint32_t same_key(const struct ks_vol_table *from, uint32_t i, const struct ks_vol_table *to,
                         uint32_t none)
{
    const struct ks_vol_entry *e = ks_vol_table_find(to, from->items[i].key);
    return e ? (uint32_t)(e - to->items) : none;
}

/* A PV view's @claim (index into p->ix.pvcs) as an index into @ix's; @fresh when it was CLAIM_OTHER. */
static uint32_t xlate_claim(const struct volume_binding *p, const struct ks_vol_index *ix, uint32_t claim,
                            uint32_t fresh)
{
    if (claim == CLAIM_NONE)
        return CLAIM_NONE;
    if (claim == CLAIM_OTHER)
        return fresh;
    return same_key(&p->ix.pvcs, claim, &ix->pvcs, CLAIM_OTHER);
}

/*
 * Rebuild the index, the views and pv_order when the storage objects changed (see the file
 * comment). Scheduling thread, at PreFilter; builds outside p->lock (only this thread
 * writes the index) and swaps under it. -ENOMEM keeps the old tables.
 */
static int refresh(struct volume_binding *p)
{
    if (__builtin_expect(!ks_vol_index_stale(&p->ix, p->objs), 1))
        return 0;
    struct ks_vol_index ix;
    if (ks_vol_index_build(&ix, p->objs) < 0)
        return -ENOMEM;
    uint32_t npv = ix.pvs.n, npvc = ix.pvcs.n;
    struct pv_view *pv_api = calloc(npv ? npv : 1, sizeof(*pv_api));
    struct pv_view *pv_cur = calloc(npv ? npv : 1, sizeof(*pv_cur));
    struct pvc_view *pvc_api = calloc(npvc ? npvc : 1, sizeof(*pvc_api));
    struct pvc_view *pvc_cur = calloc(npvc ? npvc : 1, sizeof(*pvc_cur));
    uint32_t *pv_order = calloc(npv ? npv : 1, sizeof(*pv_order));
    if (!pv_api || !pv_cur || !pvc_api || !pvc_cur || !pv_order || pv_input_order(&ix.pvs, pv_order) < 0 ||
        views_init(&ix, pv_api, pv_cur, pvc_api, pvc_cur) < 0)
        goto err;
    ks_mutex_lock(&p->lock);
    for (uint32_t i = 0; i < npv; i++) {
        uint32_t o = same_key(&ix.pvs, i, &p->ix.pvs, UINT32_MAX);
        if (o == UINT32_MAX || p->ix.pvs.items[o].obj != ix.pvs.items[i].obj)
            continue; /* new or replaced: as the object has it */
        /* the claim index, into the new claim table; a claimRef to a claim that was
         * unknown (CLAIM_OTHER) is resolved afresh: the claim may have arrived */
        uint32_t fresh = pv_api[i].claim;
        pv_api[i] = p->pv_api[o];
        pv_cur[i] = p->pv_cur[o];
        pv_api[i].claim = xlate_claim(p, &ix, pv_api[i].claim, fresh);
        pv_cur[i].claim = xlate_claim(p, &ix, pv_cur[i].claim, fresh);
    }
    for (uint32_t i = 0; i < npvc; i++) {
        uint32_t o = same_key(&ix.pvcs, i, &p->ix.pvcs, UINT32_MAX);
        if (o == UINT32_MAX || p->ix.pvcs.items[o].obj != ix.pvcs.items[i].obj)
            continue;
        pvc_api[i] = p->pvc_api[o];
        pvc_cur[i] = p->pvc_cur[o];
    }
    struct ks_vol_index old = p->ix;
    struct pv_view *old_pv_api = p->pv_api, *old_pv_cur = p->pv_cur;
    struct pvc_view *old_pvc_api = p->pvc_api, *old_pvc_cur = p->pvc_cur;
    uint32_t *old_order = p->pv_order;
    p->ix = ix;
    p->pv_api = pv_api;
    p->pv_cur = pv_cur;
    p->pvc_api = pvc_api;
    p->pvc_cur = pvc_cur;
    p->pv_order = pv_order;
    ks_mutex_unlock(&p->lock);
    free(old_order);
    free(old_pv_api);
    free(old_pv_cur);
    free(old_pvc_api);
    free(old_pvc_cur);
    ks_vol_index_destroy(&old);
    return 1;
err:
    free(pv_order);
    free(pv_api);
    free(pv_cur);
    free(pvc_api);
    free(pvc_cur);
    ks_vol_index_destroy(&ix);
    return -ENOMEM;
}

/* The current index of a PV (@t = &p->ix.pvs) or claim named in a cycle state of @gen by
 * @idx and @key; UINT32_MAX when it is gone. Under p->lock. */
static uint32_t now_at(const struct volume_binding *p, const struct ks_vol_table *t, uint64_t gen,
                       uint32_t idx, uint32_t key)
{
    if (__builtin_expect(gen == p->ix.gen, 1))
        return idx;
    const struct ks_vol_entry *e = ks_vol_table_find(t, key);
    return e ? (uint32_t)(e - t->items) : UINT32_MAX;
}

/* ---- PreFilter ---------------------------------------------------------------------------------- */

static const char *mode_or_default(const char *m)
{
    return m && m[0] ? m : "Filesystem";
}

/*
 * The node-independent checks of FindMatchingVolume for claim @c and PV @i (the assumed
 * view): true when the PV stays a candidate; *prebound when its claimRef names the claim.
 */
static bool candidate(const struct volume_binding *p, const struct vb_claim *c, uint32_t i, bool *prebound)
{
    const struct ks_persistent_volume *pv = p->ix.pvs.items[i].obj;
    const struct ks_persistent_volume_claim *pvc = c->obj;
    const struct pv_view *v = &p->pv_cur[i];

    *prebound = v->claim == c->pvc;
    if (v->claim != CLAIM_NONE && !*prebound)
        return false; /* bound to another claim */
    if (pv->capacity_storage < pvc->request_storage)
        return false;
    if (strcmp(mode_or_default(pvc->volume_mode), mode_or_default(pv->volume_mode)) != 0)
        return false;
    if (pv->meta.deletion_time != KS_TIME_NONE)
        return false;
    if (*prebound)
        return true; /* decided by node affinity alone */
    if (!v->available)
        return false;
    if (pvc->selector && !ks_label_selector_matches(pvc->selector, &pv->meta.labels))
        return false;
    if (strcmp(ks_pv_class(pv), ks_pvc_class(pvc)) != 0)
        return false;
    return (pvc->access_modes & ~pv->access_modes) == 0; /* CheckAccessModes */
}

/* GetEligibleNodes: the hostnames local bound PVs pin the pod to, or all nodes. */
static int eligible_nodes(struct ks_cycle_state *cs, const struct vb_state *s,
                          struct ks_pre_filter_result *res)
{
    uint32_t *set = NULL, n = 0;
    bool have = false;

    for (uint32_t i = 0; i < s->nbound; i++) {
        if (!s->bound_pv[i])
            return 0; /* a missing PV: no narrowing */
    }
    for (uint32_t i = 0; i < s->nbound; i++) {
        const struct ks_node_selector *aff = s->bound_pv[i]->node_affinity;
        if (!aff)
            continue;
        /* GetLocalPersistentVolumeNodeNames: per term the intersection of its hostname In
         * values, the union over terms */
        uint32_t cap = 0;
        for (uint32_t t = 0; t < aff->nterms; t++) {
            for (uint32_t e = 0; e < aff->terms[t].nexprs; e++)
                cap += aff->terms[t].exprs[e].nvalues;
        }
        uint32_t *names = ks_arena_calloc(&cs->arena, cap ? cap : 1, sizeof(*names));
        uint32_t nn = 0;
        if (!names)
            return -ENOMEM;
        for (uint32_t t = 0; t < aff->nterms; t++) {
            const struct ks_node_selector_term *term = &aff->terms[t];
            const struct ks_requirement *first = NULL;
            for (uint32_t e = 0; e < term->nexprs; e++) {
                const struct ks_requirement *r = &term->exprs[e];
                if (r->key != ks_wk.hostname_label || r->op != KS_OP_IN)
                    continue;
                if (!first) {
                    first = r;
                    continue;
                }
            }
            if (!first)
                continue;
            for (uint32_t k = 0; k < first->nvalues; k++) {
                uint32_t name = first->values[k];
                bool in_all = true;
                for (uint32_t e = 0; e < term->nexprs && in_all; e++) {
                    const struct ks_requirement *r = &term->exprs[e];
                    if (r == first || r->key != ks_wk.hostname_label || r->op != KS_OP_IN)
                        continue;
                    bool found = false;
                    for (uint32_t q = 0; q < r->nvalues && !found; q++)
                        found = r->values[q] == name;
                    in_all = found;
                }
                bool dup = false;
                for (uint32_t q = 0; q < nn && !dup; q++)
                    dup = names[q] == name;
                if (in_all && !dup)
                    names[nn++] = name;
            }
        }
        if (nn == 0)
            continue;
        if (!have) {
            set = names;
            n = nn;
            have = true;
            continue;
        }
        uint32_t kept = 0;
        for (uint32_t a = 0; a < n; a++) {
            bool found = false;
            for (uint32_t b = 0; b < nn && !found; b++)
                found = names[b] == set[a];
            if (found)
                set[kept++] = set[a];
        }
        n = kept;
    }
    if (!have)
        return 0;
    /* sorted ids, as the framework intersects them */
    for (uint32_t a = 1; a < n; a++) {
        uint32_t x = set[a], b = a;
        while (b > 0 && set[b - 1] > x) {
            set[b] = set[b - 1];
            b--;
        }
        set[b] = x;
    }
    res->all = false;
    res->n = n;
    res->names = set;
    return 0;
}

/* podHasPVCs: the first failure, as its status; KS_SUCCESS with *has set otherwise. Under p->lock. */
static int check_claims(const struct volume_binding *p, const struct ks_pod *pod, bool *has,
                        struct ks_status *st)
{
    const char *ns = ks_intern_str(pod->meta.namespace_id);

    *has = false;
    for (uint32_t i = 0; i < pod->nvolumes; i++) {
        const struct ks_volume *v = &pod->volumes[i];
        const char *claim = ks_volume_claim_name(v);
        if (!claim)
            continue;
        *has = true;
        uint32_t key = ks_intern_find_ns_name(pod->meta.namespace_id, claim);
        const struct ks_vol_entry *e = key == KS_ID_NONE ? NULL : ks_vol_table_find(&p->ix.pvcs, key);
        if (!e) {
            if (v->kind == KS_VOLUME_EPHEMERAL)
                return ks_status_set(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                     "waiting for ephemeral volume controller to create the "
                                     "persistentvolumeclaim \"%s\"",
                                     claim);
            return ks_status_set(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                 "persistentvolumeclaim \"%s\" not found", claim);
        }
        const struct ks_persistent_volume_claim *pvc = e->obj;
        if (pvc->phase && strcmp(pvc->phase, "Lost") == 0)
            return ks_status_set(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                 "persistentvolumeclaim \"%s\" bound to non-existent persistentvolume \"%s\"",
                                 pvc->meta.name, p->pvc_api[e - p->ix.pvcs.items].volume_name);
        if (pvc->meta.deletion_time != KS_TIME_NONE)
            return ks_status_set(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                 "persistentvolumeclaim \"%s\" is being deleted", pvc->meta.name);
        if (v->kind == KS_VOLUME_EPHEMERAL && !ks_ephemeral_is_for_pod(pod, pvc))
            return ks_status_set(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                 "PVC %s/%s was not created for pod %s/%s (pod is not owner)", ns,
                                 pvc->meta.name, ns, pod->meta.name);
    }
    return KS_SUCCESS;
}

/* IsDelayBindingMode */
static const struct ks_storage_class *delay_class(const struct volume_binding *p,
                                                  const struct ks_persistent_volume_claim *pvc)
{
    const char *name = ks_pvc_class(pvc);
    if (!name[0])
        return NULL;
    const struct ks_storage_class *sc = ks_vol_find_class(&p->ix, name);
    return sc && sc->binding_mode == KS_BINDING_WAIT_FOR_FIRST_CONSUMER ? sc : NULL;
}

/* GetPodVolumeClaims + the candidates of each delayed claim. Under p->lock. */
static int classify(const struct volume_binding *p, struct ks_cycle_state *cs, const struct ks_pod *pod,
                    struct vb_state *s, struct ks_status *st)
{
    uint32_t n = pod->nvolumes;
    bool immediate = false;

    s->bound_pv = ks_arena_calloc(&cs->arena, n ? n : 1, sizeof(*s->bound_pv));
    s->delay = ks_arena_calloc(&cs->arena, n ? n : 1, sizeof(*s->delay));
    s->match_order = ks_arena_calloc(&cs->arena, n ? n : 1, sizeof(*s->match_order));
    s->statics = ks_arena_calloc(&cs->arena, n ? n : 1, sizeof(*s->statics));
    s->prov = ks_arena_calloc(&cs->arena, n ? n : 1, sizeof(*s->prov));
    if (!s->bound_pv || !s->delay || !s->match_order || !s->statics || !s->prov)
        return ks_status_set(st, KS_ERROR, "out of memory");
    for (uint32_t i = 0; i < n; i++) {
        const char *claim = ks_volume_claim_name(&pod->volumes[i]);
        if (!claim)
            continue;
        const struct ks_vol_entry *e =
            ks_vol_table_find(&p->ix.pvcs, ks_intern_find_ns_name(pod->meta.namespace_id, claim));
        uint32_t idx = (uint32_t)(e - p->ix.pvcs.items);
        const struct pvc_view *v = &p->pvc_cur[idx];
        if (v->volume_name[0] && v->bind_completed) {
            const struct ks_vol_entry *pe =
                ks_vol_table_find(&p->ix.pvs, ks_intern_find_ns_name(KS_ID_NONE, v->volume_name));
            s->bound_pv[s->nbound++] = pe ? pe->obj : NULL;
            continue;
        }
        const struct ks_storage_class *sc = delay_class(p, e->obj);
        if (!sc || v->volume_name[0]) {
            immediate = true; /* prebound claims count as immediate */
            continue;
        }
        struct vb_claim *c = &s->delay[s->ndelay++];
        c->pvc = idx;
        c->pvc_key = e->key;
        c->obj = e->obj;
        c->selected_node = v->selected_node;
        c->sc = sc;
    }
    if (immediate)
        return ks_status_set(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                             "pod has unbound immediate PersistentVolumeClaims");
    for (uint32_t i = 0; i < s->ndelay; i++) {
        struct vb_claim *c = &s->delay[i];
        const char *cls = ks_pvc_class(c->obj);
        uint32_t cap = 0;
        for (uint32_t k = 0; k < p->ix.pvs.n; k++)
            cap += strcmp(ks_pv_class(p->ix.pvs.items[k].obj), cls) == 0;
        c->cand = ks_arena_calloc(&cs->arena, cap ? cap : 1, sizeof(*c->cand));
        if (!c->cand)
            return ks_status_set(st, KS_ERROR, "out of memory");
        /* pvCache.ListPVs(class): ksched lists them in input order */
        for (uint32_t pos = 0; pos < p->ix.pvs.n; pos++) {
            uint32_t k = p->pv_order[pos];
            if (strcmp(ks_pv_class(p->ix.pvs.items[k].obj), cls) != 0)
                continue;
            bool prebound;
            if (candidate(p, c, k, &prebound))
                c->cand[c->ncand++] = (struct vb_cand){.pv = k,
                                                       .pv_key = p->ix.pvs.items[k].key,
                                                       .obj = p->ix.pvs.items[k].obj,
                                                       .prebound = prebound};
        }
        if (c->selected_node != KS_ID_NONE)
            continue;
        /* byPVCSize, stable */
        uint32_t j = s->nmatch++;
        while (j > 0 && s->delay[s->match_order[j - 1]].obj->request_storage > c->obj->request_storage) {
            s->match_order[j] = s->match_order[j - 1];
            j--;
        }
        s->match_order[j] = i;
    }
    return KS_SUCCESS;
}

/* pre_filter - Scheduling thread; takes p->lock. */
static int pre_filter(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                      struct ks_pre_filter_result *res, struct ks_status *st)
{
    struct volume_binding *p = self;
    bool has = false;
    int rc;

    for (uint32_t i = 0; i < pod->nvolumes && !has; i++)
        has = ks_volume_claim_name(&pod->volumes[i]) != NULL;
    if (!has)
        return KS_SKIP; /* podHasPVCs: no claim, nothing to bind */
    struct vb_state *s = ks_arena_alloc(&cs->arena, sizeof(*s));
    if (!s)
        return ks_status_set(st, KS_ERROR, "out of memory");
    if (refresh(p) < 0)
        return ks_status_set(st, KS_ERROR, "out of memory");
    s->gen = p->ix.gen;
    ks_mutex_lock(&p->lock);
    rc = check_claims(p, pod, &has, st);
    if (rc == KS_SUCCESS && !has)
        rc = KS_SKIP;
    if (rc == KS_SUCCESS)
        rc = classify(p, cs, pod, s, st);
    ks_mutex_unlock(&p->lock);
    if (rc != KS_SUCCESS)
        return rc;
    if (eligible_nodes(cs, s, res) < 0)
        return ks_status_set(st, KS_ERROR, "out of memory");
    cs->slot[p->slot] = s;
    return KS_SUCCESS;
}

/* ---- Filter --------------------------------------------------------------------------------- */

/* What FindPodVolumes found for one node. */
struct vb_find {
    bool node_conflict, bind_conflict, pv_missing;
    /* with @record: the bindings and provisions for Reserve */
    uint32_t nstatic, nprov;
    struct vb_binding *statics;
    struct vb_ref *prov;
};

/* FindMatchingVolume for claim @c on a node with @labels, PVs in @chosen excluded. */
static const struct vb_cand *find_matching(const struct vb_claim *c, const struct ks_labels *labels,
                                           const uint32_t *chosen, uint32_t nchosen)
{
    const struct vb_cand *best = NULL;

    for (uint32_t i = 0; i < c->ncand; i++) {
        const struct vb_cand *k = &c->cand[i];
        bool excluded = false;
        for (uint32_t j = 0; j < nchosen && !excluded; j++)
            excluded = chosen[j] == k->pv;
        if (excluded)
            continue;
        bool affinity = ks_pv_node_affinity_ok(k->obj, labels);
        if (k->prebound)
            return affinity ? k : NULL;
        if (!affinity)
            continue;
        if (!best || best->obj->capacity_storage > k->obj->capacity_storage)
            best = k;
    }
    return best;
}

/* checkVolumeProvisions for one claim: the class provisions, and on this node. */
static bool provisionable(const struct vb_claim *c, const struct ks_labels *labels)
{
    const char *prov = c->sc->provisioner;
    if (!prov || !prov[0] || strcmp(prov, KS_NOT_SUPPORTED_PROVISIONER) == 0)
        return false;
    return ks_topology_terms_match(c->sc->allowed_topologies, c->sc->nallowed_topologies, labels);
}

/* The delayed claims part of FindPodVolumes with scratch arrays of @cap entries. */
static void find_delayed(const struct vb_state *s, const struct ks_labels *labels, uint32_t node_name,
                         struct vb_find *f, uint32_t *chosen, uint32_t *unmatched)
{
    uint32_t nchosen = 0, nunmatched = 0;
    bool satisfied = true;

    for (uint32_t i = 0; i < s->ndelay; i++) {
        if (s->delay[i].selected_node != KS_ID_NONE && s->delay[i].selected_node != node_name) {
            f->bind_conflict = true; /* fast path: provisioning was started for another node */
            return;
        }
    }
    for (uint32_t i = 0; i < s->nmatch; i++) {
        const struct vb_claim *c = &s->delay[s->match_order[i]];
        const struct vb_cand *k = find_matching(c, labels, chosen, nchosen);
        if (!k) {
            unmatched[nunmatched++] = s->match_order[i];
            satisfied = false;
            continue;
        }
        chosen[nchosen++] = k->pv;
        if (f->statics)
            f->statics[f->nstatic++] = (struct vb_binding){.pvc = c->pvc,
                                                           .pv = k->pv,
                                                           .pvc_key = c->pvc_key,
                                                           .pv_key = k->pv_key,
                                                           .pv_obj = k->obj,
                                                           .pvc_obj = c->obj};
    }
    if (s->nmatch < s->ndelay || nunmatched > 0) {
        /* claims to provision: those with a selected node, then the unmatched ones */
        satisfied = true;
        for (uint32_t i = 0; i < s->ndelay + nunmatched && satisfied; i++) {
            const struct vb_claim *c;
            if (i < s->ndelay) {
                c = &s->delay[i];
                if (c->selected_node == KS_ID_NONE)
                    continue;
            } else {
                c = &s->delay[unmatched[i - s->ndelay]];
            }
            satisfied = provisionable(c, labels);
            if (satisfied && f->prov)
                f->prov[f->nprov++] = (struct vb_ref){c->pvc, c->pvc_key, c->obj};
        }
        if (!satisfied && f->prov)
            f->nprov = 0;
    }
    f->bind_conflict = !satisfied;
}

/* FindPodVolumes for @node (@labels, @node_name). Any thread; allocation-free up to VB_STACK claims. */
static void find_pod_volumes(const struct vb_state *s, const struct ks_labels *labels, uint32_t node_name,
                             struct vb_find *f)
{
    for (uint32_t i = 0; i < s->nbound; i++) {
        if (!s->bound_pv[i]) {
            f->pv_missing = true;
            break;
        }
        if (!ks_pv_node_affinity_ok(s->bound_pv[i], labels)) {
            f->node_conflict = true;
            break;
        }
    }
    if (s->ndelay == 0)
        return;
    if (__builtin_expect(s->nmatch <= VB_STACK, 1)) {
        uint32_t chosen[VB_STACK], unmatched[VB_STACK];
        find_delayed(s, labels, node_name, f, chosen, unmatched);
        return;
    }
    /* cold: a pod with more than VB_STACK delayed claims */
    uint32_t *scratch = malloc(2 * (size_t)s->nmatch * sizeof(*scratch));
    if (!scratch) {
        f->bind_conflict = true;
        return;
    }
    find_delayed(s, labels, node_name, f, scratch, scratch + s->nmatch);
    free(scratch);
}

static const struct ks_labels no_labels;

/* filter_node - Workers; reads the cycle state and immutable objects only. */
static inline KS_ALWAYS_INLINE int filter_node(void *self, const struct ks_cycle_state *cs,
                                               const struct ks_pod *pod, const struct ks_node_snap *node,
                                               struct ks_status *st)
{
    const struct volume_binding *p = self;
    const struct vb_state *s = cs->slot[p->slot];
    struct vb_find f = {0};

    (void)pod;
    if (__builtin_expect(!s, 0)) {
        st->code = KS_ERROR;
        st->nreasons = 1;
        st->reasons[0] = p->msg_nostate;
        return KS_ERROR;
    }
    find_pod_volumes(s, node->node ? &node->node->meta.labels : &no_labels, node->name, &f);
    uint16_t n = 0;
    if (f.node_conflict)
        st->reasons[n++] = p->msg_node_conflict;
    if (f.bind_conflict)
        st->reasons[n++] = p->msg_bind_conflict;
    if (f.pv_missing)
        st->reasons[n++] = p->msg_pv_missing;
    if (n == 0)
        return KS_SUCCESS;
    st->code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    st->nreasons = n;
    return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
}

KS_FILTER_OPS(filter, filter_nodes, filter_node)

/* ---- PreScore / Score ----------------------------------------------------------------------- */

/* pre_score - the capacity scorer is nil without its feature gate: Skip. */
static int pre_score(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                     const struct ks_node_snap *const *nodes, uint32_t n, struct ks_status *st)
{
    (void)self;
    (void)cs;
    (void)pod;
    (void)nodes;
    (void)n;
    (void)st;
    return KS_SKIP;
}

static inline KS_ALWAYS_INLINE int score_node(void *self, const struct ks_cycle_state *cs,
                                              const struct ks_pod *pod, const struct ks_node_snap *node,
                                              int64_t *out, struct ks_status *st)
{
    (void)self;
    (void)cs;
    (void)pod;
    (void)node;
    (void)st;
    *out = 0;
    return KS_SUCCESS;
}

KS_SCORE_OPS(score, score_nodes, score_node)

/* ---- Reserve / Unreserve / PreBind ------------------------------------------------------------ */

/* arePodVolumesBound, on the assumed views. Under p->lock. */
static bool all_bound(const struct volume_binding *p, const struct ks_pod *pod)
{
    for (uint32_t i = 0; i < pod->nvolumes; i++) {
        const char *claim = ks_volume_claim_name(&pod->volumes[i]);
        if (!claim)
            continue;
        const struct ks_vol_entry *e =
            ks_vol_table_find(&p->ix.pvcs, ks_intern_find_ns_name(pod->meta.namespace_id, claim));
        if (!e)
            return false;
        const struct pvc_view *v = &p->pvc_cur[e - p->ix.pvcs.items];
        if (!v->volume_name[0] || !v->bind_completed)
            return false;
    }
    return true;
}

/* Recompute the chosen node's volumes: its labels come from the current snapshot. */
static bool find_for_node(const struct volume_binding *p, struct vb_state *s, uint32_t node)
{
    struct vb_find f = {.statics = s->statics, .prov = s->prov};
    bool found = false;

    if (!p->cache)
        return false;
    ks_rcu_read_lock();
    const struct ks_node_snap *ns = ks_snapshot_find(ks_cache_snapshot(p->cache), node);
    if (ns) {
        find_pod_volumes(s, ns->node ? &ns->node->meta.labels : &no_labels, node, &f);
        found = !f.node_conflict && !f.bind_conflict && !f.pv_missing;
    }
    ks_rcu_read_unlock();
    s->nstatic = f.nstatic;
    s->nprov = f.nprov;
    return found;
}

/* reserve - AssumePodVolumes. Scheduling thread; takes p->lock outside any RCU section. */
static int reserve(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod, uint32_t node,
                   struct ks_status *st)
{
    struct volume_binding *p = self;
    struct vb_state *s = cs->slot[p->slot];

    if (!s)
        return KS_SUCCESS; /* no claims: all bound */
    s->reserved = false;
    s->node = node;
    if (!find_for_node(p, s, node))
        return ks_status_set(st, KS_ERROR, "no pod volumes found for node \"%s\"", ks_intern_str(node));
    ks_mutex_lock(&p->lock);
    s->all_bound = all_bound(p, pod);
    if (!s->all_bound) {
        for (uint32_t i = 0; i < s->nstatic; i++) {
            const struct vb_binding *b = &s->statics[i];
            uint32_t pv = now_at(p, &p->ix.pvs, s->gen, b->pv, b->pv_key);
            uint32_t pvc = now_at(p, &p->ix.pvcs, s->gen, b->pvc, b->pvc_key);
            if (pv != UINT32_MAX)
                p->pv_cur[pv].claim = pvc == UINT32_MAX ? CLAIM_OTHER : pvc;
        }
        for (uint32_t i = 0; i < s->nprov; i++) {
            uint32_t pvc = now_at(p, &p->ix.pvcs, s->gen, s->prov[i].idx, s->prov[i].key);
            if (pvc != UINT32_MAX)
                p->pvc_cur[pvc].selected_node = node;
        }
        s->reserved = true;
    }
    ks_mutex_unlock(&p->lock);
    return KS_SUCCESS;
}

/* unreserve - RevertAssumedPodVolumes. Any thread; idempotent. */
static void unreserve(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod, uint32_t node)
{
    struct volume_binding *p = self;
    struct vb_state *s = cs->slot[p->slot];

    (void)pod;
    (void)node;
    if (!s || !s->reserved)
        return;
    ks_mutex_lock(&p->lock);
    for (uint32_t i = 0; i < s->nstatic; i++) {
        uint32_t pv = now_at(p, &p->ix.pvs, s->gen, s->statics[i].pv, s->statics[i].pv_key);
        if (pv != UINT32_MAX)
            p->pv_cur[pv] = p->pv_api[pv];
    }
    for (uint32_t i = 0; i < s->nprov; i++) {
        uint32_t pvc = now_at(p, &p->ix.pvcs, s->gen, s->prov[i].idx, s->prov[i].key);
        if (pvc != UINT32_MAX)
            p->pvc_cur[pvc] = p->pvc_api[pvc];
    }
    s->reserved = false;
    ks_mutex_unlock(&p->lock);
}

/*
 * BindPodVolumes through the API: the updates at the versions this cycle saw, then a wait
 * that ends through cs->bind_wait. Binder thread; no plugin lock (the objects named are
 * immutable and outlive the wait); returns KS_WAIT or KS_ERROR.
 */
static int pre_bind_api(struct volume_binding *p, struct ks_cycle_state *cs, struct vb_state *s,
                        const struct ks_pod *pod, uint32_t node, struct ks_status *st)
{
    if (!cs->bind_wait)
        return ks_status_set(st, KS_ERROR, "binding volumes: the binding cycle cannot wait");
    struct ks_vol_bind *b = ks_arena_calloc(&cs->arena, 1, sizeof(*b));
    uint32_t n = s->nstatic + s->nprov;
    struct ks_vol_bind_item *items = ks_arena_calloc(&cs->arena, n ? n : 1, sizeof(*items));
    if (!b || !items)
        return ks_status_set(st, KS_ERROR, "out of memory");
    for (uint32_t i = 0; i < s->nstatic; i++)
        items[i] = (struct ks_vol_bind_item){.pv = s->statics[i].pv_obj, .pvc = s->statics[i].pvc_obj};
    for (uint32_t i = 0; i < s->nprov; i++)
        items[s->nstatic + i] = (struct ks_vol_bind_item){.pvc = s->prov[i].obj};
    *b = (struct ks_vol_bind){.cache = p->cache,
                              .pod = pod,
                              .node = node,
                              .n = n,
                              .nstatic = s->nstatic,
                              .items = items,
                              .timeout_ns = p->bind_timeout_ns,
                              .resume = cs->bind_wait};
    return ks_vol_bind_start(p->api, b, st);
}

/* pre_bind - BindPodVolumes: through the API (KS_WAIT), or in process. Binder threads; takes p->lock. */
static int pre_bind(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod, uint32_t node,
                    struct ks_status *st)
{
    struct volume_binding *p = self;
    struct vb_state *s = cs->slot[p->slot];

    if (!s || s->all_bound)
        return KS_SUCCESS;
    if (!s->reserved || s->node != node)
        return ks_status_set(st, KS_ERROR, "no pod volumes found for node \"%s\"", ks_intern_str(node));
    if (p->api)
        return pre_bind_api(p, cs, s, pod, node, st);
    ks_mutex_lock(&p->lock);
    for (uint32_t i = 0; i < s->nstatic; i++) {
        const struct vb_binding *b = &s->statics[i];
        uint32_t pvi = now_at(p, &p->ix.pvs, s->gen, b->pv, b->pv_key);
        uint32_t pvc = now_at(p, &p->ix.pvcs, s->gen, b->pvc, b->pvc_key);
        if (pvi == UINT32_MAX || pvc == UINT32_MAX)
            continue; /* deleted since the pod's PreFilter */
        const struct ks_persistent_volume *pv = p->ix.pvs.items[pvi].obj;
        /* the API update prebinds the PV; the PV controller then binds both sides */
        p->pv_api[pvi] = (struct pv_view){.claim = pvc, .available = false};
        p->pv_cur[pvi] = p->pv_api[pvi];
        p->pvc_api[pvc].volume_name = pv->meta.name;
        p->pvc_api[pvc].bind_completed = true;
        p->pvc_cur[pvc] = p->pvc_api[pvc];
    }
    for (uint32_t i = 0; i < s->nprov; i++) {
        uint32_t pvc = now_at(p, &p->ix.pvcs, s->gen, s->prov[i].idx, s->prov[i].key);
        if (pvc == UINT32_MAX)
            continue;
        /* the API update carries the selected-node annotation to the provisioner */
        p->pvc_api[pvc].selected_node = node;
        p->pvc_cur[pvc] = p->pvc_api[pvc];
    }
    ks_mutex_unlock(&p->lock);
    return KS_SUCCESS;
}

/* ---- plugin ----------------------------------------------------------------------------------- */

/* ---- events ---------------------------------------------------------------------------------- */

/* EventsToRegister with QueueingHints, as upstream's. */
static const struct ks_event_registration events[] = {
    {{KS_ER_STORAGE_CLASS, KS_ACT_ADD | KS_ACT_UPDATE}, NULL},
    {{KS_ER_PVC, KS_ACT_ADD | KS_ACT_UPDATE}, ks_hint_claim_of_pod},
    {{KS_ER_PV, KS_ACT_ADD | KS_ACT_UPDATE}, NULL},
    {{KS_ER_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL | KS_ACT_UPDATE_NODE_TAINT}, NULL},
    {{KS_ER_CSI_NODE, KS_ACT_ADD | KS_ACT_UPDATE}, NULL},
    {{KS_ER_CSI_DRIVER, KS_ACT_ADD | KS_ACT_UPDATE}, NULL},
    {{KS_ER_CSI_STORAGE_CAPACITY, KS_ACT_ADD | KS_ACT_UPDATE}, NULL},
};
KS_DEFINE_EVENTS_TO_REGISTER(events)

const struct ks_plugin ks_plugin_volume_binding = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "VolumeBinding",
    .args_parse = args_parse,
    .args_print = args_print,
    .args_destroy = args_destroy,
    .init = init,
    .destroy = destroy,
    .pre_filter = pre_filter,
    .filter = filter,
    .filter_nodes = filter_nodes,
    .pre_score = pre_score,
    .score = score,
    .score_nodes = score_nodes,
    .reserve = reserve,
    .unreserve = unreserve,
    .pre_bind = pre_bind,
    .sign = ks_sign_no_volumes,
    .events_to_register = events_to_register,
};
