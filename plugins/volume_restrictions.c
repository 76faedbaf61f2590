/*
 * volume_restrictions.c - the VolumeRestrictions plugin: rejects nodes where the pod's
 * volumes would conflict with volumes already in use (PreFilter with AddPod/RemovePod,
 * Filter).
 *
 * Mirrors pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions.go:
 *  - PreFilter looks up the claim of every persistentVolumeClaim volume (a missing one is
 *    UnschedulableAndUnresolvable `persistentvolumeclaim "<name>" not found`), keeps the
 *    names of those with the ReadWriteOncePod access mode and counts how many of them some
 *    cached pod already uses (the snapshot's pvcs_in_use, upstream's IsPVCUsedByPods). It
 *    returns Skip when the pod has no gcePersistentDisk, awsElasticBlockStore, rbd or iscsi
 *    volume and that count is 0.
 *  - Filter, per node: a disk conflict with a pod on the node is Unschedulable "node(s) had
 *    no available disk" (the same GCE PD unless both mounts are read-only; the same EBS
 *    volume id; the same iSCSI IQN unless both are read-only; the same RBD pool and image
 *    with a monitor in common unless both are read-only); otherwise a positive ReadWriteOncePod
 *    count is Unschedulable "node has pod using PersistentVolumeClaim with the same name and
 *    ReadWriteOncePod access mode" on every node, which preemption can resolve.
 *  - AddPod / RemovePod move the count by the other pod's persistentVolumeClaim volumes whose
 *    claim name is one of the pod's ReadWriteOncePod claims (by name only, as upstream).
 * A pod with any volume this plugin reads is unsignable (ks_sign_no_volumes). It takes no
 * args. The state lives in the cycle's arena; state_clone copies the count and shares the
 * (immutable) claim names.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/framework.h"
#include "ksched/internal/cache.h"
#include "ksched/plugin_batch.h"
#include "ksched/plugin_helpers.h"
#include "ksched/plugin_helpers_hints.h"
#include "ksched/plugin_helpers_sign.h"
#include "ksched/plugin_helpers_volumes.h"
#include "ksched/registry.h"

struct volume_restrictions {
    uint16_t slot;
    uint32_t msg_disk;             /* ErrReasonDiskConflict */
    uint32_t msg_rwop;             /* ErrReasonReadWriteOncePodConflict */
    uint32_t msg_nostate;          /* Filter without PreFilter state */
    struct ks_cache *cache;        /* for the snapshot's pvcs_in_use (NULL: none in use) */
    const struct ks_objects *objs; /* the live objects (NULL: none) */
    struct ks_vol_index ix;        /* refreshed at PreFilter; read by PreFilter only */
};

/* preFilterState */
struct vr_state {
    int64_t conflicts; /* conflictingPVCRefCount */
    uint32_t nrwop;
    const char **rwop; /* names of the pod's ReadWriteOncePod claims, distinct */
};

static int init(const struct ks_plugin_init *in, void **self, struct ks_error *err)
{
    struct volume_restrictions *p = calloc(1, sizeof(*p));
    const struct ks_framework_deps *deps = in->framework ? ks_framework_deps(in->framework) : NULL;

    (void)err;
    if (!p)
        return -ENOMEM;
    p->slot = in->slot;
    p->cache = deps ? deps->cache : NULL;
    p->msg_disk = ks_intern("node(s) had no available disk");
    p->msg_rwop =
        ks_intern("node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod "
                  "access mode");
    p->msg_nostate = ks_intern("cannot read \"PreFilterVolumeRestrictions\" from cycleState");
    if (p->msg_disk == KS_ID_NONE || p->msg_rwop == KS_ID_NONE || p->msg_nostate == KS_ID_NONE ||
        ks_vol_index_build(&p->ix, p->objs = ks_vol_objects(in->framework)) < 0) {
        free(p);
        return -ENOMEM;
    }
    *self = p;
    return 0;
}

static void destroy(void *self)
{
    struct volume_restrictions *p = self;
    if (!p)
        return;
    ks_vol_index_destroy(&p->ix);
    free(p);
}

/* needsRestrictionsCheck */
static bool needs_check(const struct ks_volume *v)
{
    return v->kind == KS_VOLUME_GCE_PD || v->kind == KS_VOLUME_AWS_EBS || v->kind == KS_VOLUME_RBD ||
           v->kind == KS_VOLUME_ISCSI;
}

static bool str_eq(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

/* haveOverlap: at least one common monitor. */
static bool have_overlap(const struct ks_volume *a, const struct ks_volume *b)
{
    for (uint32_t i = 0; i < a->nmonitors; i++) {
        for (uint32_t j = 0; j < b->nmonitors; j++) {
            if (str_eq(a->monitors[i], b->monitors[j]))
                return true;
        }
    }
    return false;
}

/* isVolumeConflict: @v against every volume of @pod. */
static bool volume_conflict(const struct ks_volume *v, const struct ks_pod *pod)
{
    for (uint32_t i = 0; i < pod->nvolumes; i++) {
        const struct ks_volume *e = &pod->volumes[i];
        if (e->kind != v->kind)
            continue;
        switch (v->kind) {
        case KS_VOLUME_GCE_PD:
            if (str_eq(v->source, e->source) && !(v->read_only && e->read_only))
                return true;
            break;
        case KS_VOLUME_AWS_EBS:
            if (str_eq(v->source, e->source))
                return true;
            break;
        case KS_VOLUME_ISCSI:
            if (str_eq(v->source, e->source) && !(v->read_only && e->read_only))
                return true;
            break;
        case KS_VOLUME_RBD:
            if (have_overlap(v, e) && str_eq(v->pool, e->pool) && str_eq(v->source, e->source) &&
                !(v->read_only && e->read_only))
                return true;
            break;
        default:
            break;
        }
    }
    return false;
}

static bool in_use(const struct ks_snapshot *snap, uint32_t key)
{
    uint32_t lo = 0, hi = snap ? snap->npvcs_in_use : 0;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        uint32_t k = snap->pvcs_in_use[mid];
        if (k == key)
            return true;
        if (k < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/*
 * pre_filter - readWriteOncePodPVCsForPod + calPreFilterState. Scheduling thread, inside the
 * RCU read section of the cycle's snapshot (the cache's current version).
 */
static int pre_filter(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                      struct ks_pre_filter_result *res, struct ks_status *st)
{
    struct volume_restrictions *p = self;
    bool check = false;
    uint32_t npvc = 0;

    (void)res;
    for (uint32_t i = 0; i < pod->nvolumes; i++) {
        check |= needs_check(&pod->volumes[i]);
        npvc += pod->volumes[i].kind == KS_VOLUME_PVC;
    }
    if (!check && npvc == 0)
        return KS_SKIP; /* nothing to check and no claim that could be ReadWriteOncePod */
    struct vr_state *s = ks_arena_alloc(&cs->arena, sizeof(*s));
    const char **names = ks_arena_calloc(&cs->arena, npvc ? npvc : 1, sizeof(*names));
    if (!s || !names || ks_vol_index_refresh(&p->ix, p->objs) < 0)
        return ks_status_set(st, KS_ERROR, "out of memory");
    s->rwop = names;
    for (uint32_t i = 0; i < pod->nvolumes; i++) {
        const struct ks_volume *v = &pod->volumes[i];
        if (v->kind != KS_VOLUME_PVC)
            continue;
        const struct ks_persistent_volume_claim *pvc =
            ks_vol_find_pvc(&p->ix, pod->meta.namespace_id, v->source);
        if (!pvc)
            return ks_status_set(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                 "persistentvolumeclaim \"%s\" not found", v->source);
        if (!(pvc->access_modes & KS_ACCESS_RWOP))
            continue;
        uint32_t k = 0;
        while (k < s->nrwop && strcmp(s->rwop[k], pvc->meta.name) != 0)
            k++;
        if (k == s->nrwop)
            names[s->nrwop++] = pvc->meta.name;
    }
    const struct ks_snapshot *snap = p->cache ? ks_cache_snapshot(p->cache) : NULL;
    for (uint32_t k = 0; k < s->nrwop; k++) {
        /* there can be at most one pod using a ReadWriteOncePod claim */
        uint32_t key = ks_intern_find_ns_name(pod->meta.namespace_id, s->rwop[k]);
        s->conflicts += key != KS_ID_NONE && in_use(snap, key);
    }
    if (!check && s->conflicts == 0)
        return KS_SKIP;
    cs->slot[p->slot] = s;
    return KS_SUCCESS;
}

/* conflictingPVCRefCountForPod */
static int64_t refs_of(const struct vr_state *s, const struct ks_pod *other)
{
    int64_t n = 0;
    for (uint32_t i = 0; i < other->nvolumes; i++) {
        const struct ks_volume *v = &other->volumes[i];
        if (v->kind != KS_VOLUME_PVC)
            continue;
        for (uint32_t k = 0; k < s->nrwop; k++)
            n += str_eq(v->source, s->rwop[k]);
    }
    return n;
}

static int update(const struct volume_restrictions *p, struct ks_cycle_state *cs, const struct ks_pod *other,
                  int sign, struct ks_status *st)
{
    struct vr_state *s = cs->slot[p->slot];
    if (!s)
        return ks_status_set(st, KS_ERROR, "cannot read \"PreFilterVolumeRestrictions\" from cycleState");
    s->conflicts += sign * refs_of(s, other);
    return KS_SUCCESS;
}

/* add_pod / remove_pod - PreFilterExtensions. Scheduling thread. */
static int add_pod(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                   const struct ks_pod *other, const struct ks_node_snap *node, struct ks_status *st)
{
    (void)pod;
    (void)node;
    return update(self, cs, other, 1, st);
}

static int remove_pod(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                      const struct ks_pod *other, const struct ks_node_snap *node, struct ks_status *st)
{
    (void)pod;
    (void)node;
    return update(self, cs, other, -1, st);
}

static int state_clone(void *self, const void *src, struct ks_arena *arena, void **dst)
{
    (void)self;
    if (!src) {
        *dst = NULL;
        return 0;
    }
    struct vr_state *c = ks_arena_alloc(arena, sizeof(*c));
    if (!c)
        return -ENOMEM;
    *c = *(const struct vr_state *)src;
    *dst = c;
    return 0;
}

/* filter_node - satisfyVolumeConflicts, then satisfyReadWriteOncePod. Workers; allocation-free. */
static inline KS_ALWAYS_INLINE int filter_node(void *self, const struct ks_cycle_state *cs,
                                               const struct ks_pod *pod, const struct ks_node_snap *node,
                                               struct ks_status *st)
{
    const struct volume_restrictions *p = self;
    const struct vr_state *s = cs->slot[p->slot];

    for (uint32_t i = 0; i < pod->nvolumes; i++) {
        const struct ks_volume *v = &pod->volumes[i];
        if (!needs_check(v))
            continue;
        for (uint32_t j = 0; j < node->npods; j++) {
            if (volume_conflict(v, node->pods[j]))
                return ks_status_reject(st, KS_UNSCHEDULABLE, p->msg_disk);
        }
    }
    if (__builtin_expect(!s, 0))
        return ks_status_reject(st, KS_ERROR, p->msg_nostate);
    if (s->conflicts > 0)
        return ks_status_reject(st, KS_UNSCHEDULABLE, p->msg_rwop);
    return KS_SUCCESS;
}

KS_FILTER_OPS(filter, filter_nodes, filter_node)

/* ---- events and QueueingHints ---------------------------------------------------------------- */

/* VolumeRestrictions: a deleted pod in the namespace that shared a claim or a conflicting disk with the pod.
 */
static enum ks_queueing_hint hint_volume_pod_deleted(void *self, const struct ks_pod *pod,
                                                     const void *old_obj, const void *new_obj)
{
    const struct ks_pod *deleted = old_obj;
    (void)self;
    (void)new_obj;
    if (!deleted)
        return KS_QUEUE;
    for (uint32_t i = 0; i < deleted->nvolumes; i++) {
        const struct ks_volume *v = &deleted->volumes[i];
        if (v->kind == KS_VOLUME_OTHER)
            continue;
        if (v->kind == KS_VOLUME_PVC || v->kind == KS_VOLUME_EPHEMERAL) {
            if (ks_pod_uses_claim(pod, deleted->meta.namespace_id, v->source))
                return KS_QUEUE;
            continue;
        }
        for (uint32_t j = 0; j < pod->nvolumes; j++) {
            const struct ks_volume *w = &pod->volumes[j];
            if (w->kind == v->kind && w->source && v->source && strcmp(w->source, v->source) == 0)
                return KS_QUEUE;
        }
    }
    return KS_QUEUE_SKIP;
}

/* EventsToRegister with QueueingHints, as upstream's. */
static const struct ks_event_registration events[] = {
    {{KS_ER_POD, KS_ACT_DELETE}, hint_volume_pod_deleted},
    {{KS_ER_NODE, KS_ACT_ADD}, NULL},
    {{KS_ER_PVC, KS_ACT_ADD | KS_ACT_UPDATE}, ks_hint_claim_of_pod},
};
KS_DEFINE_EVENTS_TO_REGISTER(events)

const struct ks_plugin ks_plugin_volume_restrictions = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "VolumeRestrictions",
    .init = init,
    .destroy = destroy,
    .pre_filter = pre_filter,
    .add_pod = add_pod,
    .remove_pod = remove_pod,
    .filter = filter,
    .filter_nodes = filter_nodes,
    .state_clone = state_clone,
    .sign = ks_sign_no_volumes,
    .events_to_register = events_to_register,
};
