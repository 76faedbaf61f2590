/*
 * volume_zone.c - the VolumeZone plugin: filters out nodes outside the zones and regions of the
 * pod's bound volumes (PreFilter, Filter).
 *
 * Mirrors pkg/scheduler/framework/plugins/volumezone/volume_zone.go:
 *  - PreFilter resolves every persistentVolumeClaim volume (ephemeral volumes are not read,
 *    as upstream) to its PersistentVolume and keeps, per topology label the PV carries
 *    (failure-domain.beta.kubernetes.io/zone, .../region, topology.kubernetes.io/zone,
 *    .../region, in that order), the set of values: the label value split at "__" and
 *    trimmed (LabelZonesToSet; a value with an empty part is ignored). An unbound claim whose
 *    class is WaitForFirstConsumer is skipped. Failures are UnschedulableAndUnresolvable:
 *    `persistentvolumeclaim "<c>" not found`, "PersistentVolumeClaim had no pv name and
 *    storageClass name", `storageclass.storage.k8s.io "<sc>" not found`, "PersistentVolume
 *    had no name" (unbound, Immediate), `persistentvolume "<pv>" not found` (the NotFound
 *    texts of the real listers). No topology at all returns Skip.
 *  - Filter passes nodes without any of the four labels (single-zone clusters); otherwise
 *    every kept label must be on the node (a beta key may be matched by the node's GA key)
 *    with a value in the set, else UnschedulableAndUnresolvable "node(s) had no available
 *    volume zone".
 * Claims and volumes are read from the loaded objects (the API's view), not from
 * VolumeBinding's in-process bindings. Zone values are interned in PreFilter, so Filter
 * compares integers. A pod with any volume this plugin reads is unsignable
 * (ks_sign_no_volumes). It takes no args.
 */
#include <errno.h>
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

enum { BETA_ZONE, BETA_REGION, GA_ZONE, GA_REGION, NTOPO };

struct volume_zone {
    uint16_t slot;
    uint32_t labels[NTOPO]; /* topologyLabels, interned, in upstream's order */
    uint32_t msg_conflict;
    uint32_t msg_nostate;
    const struct ks_objects *objs; /* the live objects (NULL: none) */
    struct ks_vol_index ix;        /* refreshed at PreFilter; read by PreFilter only */
};

/* pvTopology: one topology label of one PV and its allowed values. */
struct vz_topology {
    uint32_t key; /* index into labels[] */
    uint32_t nvalues;
    uint32_t *values; /* interned */
};

struct vz_state {
    uint32_t n;
    struct vz_topology *topo;
};

static int init(const struct ks_plugin_init *in, void **self, struct ks_error *err)
{
    static const char *const names[NTOPO] = {KS_LABEL_BETA_ZONE, KS_LABEL_BETA_REGION,
                                             "topology.kubernetes.io/zone", "topology.kubernetes.io/region"};
    struct volume_zone *p = calloc(1, sizeof(*p));

    (void)err;
    if (!p)
        return -ENOMEM;
    p->slot = in->slot;
    bool ok = true;
    for (int i = 0; i < NTOPO; i++)
        ok &= (p->labels[i] = ks_intern(names[i])) != KS_ID_NONE;
    p->msg_conflict = ks_intern("node(s) had no available volume zone");
    p->msg_nostate = ks_intern("cannot read \"PreFilterVolumeZone\" from cycleState");
    if (!ok || p->msg_conflict == KS_ID_NONE || p->msg_nostate == KS_ID_NONE ||
        ks_vol_index_build(&p->ix, p->objs = ks_vol_objects(in->framework)) < 0) {
        free(p);
        return -ENOMEM;
    }
    *self = p;
    return 0;
}

static void destroy(void *self)
{
    struct volume_zone *p = self;
    if (!p)
        return;
    ks_vol_index_destroy(&p->ix);
    free(p);
}

struct zone_collect {
    struct ks_arena *arena;
    struct vz_topology *t;
    uint32_t cap;
    bool oom;
};

static void add_zone(void *ctx, const char *s, size_t len)
{
    struct zone_collect *z = ctx;
    uint32_t id = ks_intern_n(s, len);
    if (id == KS_ID_NONE) {
        z->oom = true;
        return;
    }
    for (uint32_t i = 0; i < z->t->nvalues; i++) {
        if (z->t->values[i] == id)
            return;
    }
    if (z->t->nvalues < z->cap)
        z->t->values[z->t->nvalues++] = id;
}

/* Parts of a "__"-separated value (an upper bound for the set's size). */
static uint32_t parts(const char *v)
{
    uint32_t n = 1;
    for (const char *p = strstr(v, "__"); p; p = strstr(p + 2, "__"))
        n++;
    return n;
}

/* getPVbyPod. Scheduling thread. */
static int pre_filter(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                      struct ks_pre_filter_result *res, struct ks_status *st)
{
    struct volume_zone *p = self;
    uint32_t cap = 0;

    (void)res;
    for (uint32_t i = 0; i < pod->nvolumes; i++)
        cap += pod->volumes[i].kind == KS_VOLUME_PVC ? NTOPO : 0;
    if (cap == 0)
        return KS_SKIP; /* no claim: no topology */
    struct vz_state *s = ks_arena_alloc(&cs->arena, sizeof(*s));
    struct vz_topology *topo = ks_arena_calloc(&cs->arena, cap ? cap : 1, sizeof(*topo));
    if (!s || !topo || ks_vol_index_refresh(&p->ix, p->objs) < 0)
        return ks_status_set(st, KS_ERROR, "out of memory");
    s->topo = topo;
    for (uint32_t i = 0; i < pod->nvolumes; i++) {
        const struct ks_volume *v = &pod->volumes[i];
        if (v->kind != KS_VOLUME_PVC)
            continue;
        if (!v->source || !v->source[0])
            return ks_status_set(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "PersistentVolumeClaim had no name");
        const struct ks_persistent_volume_claim *pvc =
            ks_vol_find_pvc(&p->ix, pod->meta.namespace_id, v->source);
        if (!pvc)
            return ks_status_set(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                 "persistentvolumeclaim \"%s\" not found", v->source);
        if (!pvc->volume_name || !pvc->volume_name[0]) {
            const char *sc_name = ks_pvc_class(pvc);
            if (!sc_name[0])
                return ks_status_set(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                     "PersistentVolumeClaim had no pv name and storageClass name");
            const struct ks_storage_class *sc = ks_vol_find_class(&p->ix, sc_name);
            if (!sc)
                return ks_status_set(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                     "storageclass.storage.k8s.io \"%s\" not found", sc_name);
            if (sc->binding_mode == KS_BINDING_WAIT_FOR_FIRST_CONSUMER)
                continue; /* skip unbound volumes */
            return ks_status_set(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "PersistentVolume had no name");
        }
        const struct ks_persistent_volume *pv = ks_vol_find_pv(&p->ix, pvc->volume_name);
        if (!pv)
            return ks_status_set(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "persistentvolume \"%s\" not found",
                                 pvc->volume_name);
        for (uint32_t k = 0; k < NTOPO; k++) {
            uint32_t value;
            if (!ks_labels_get(&pv->meta.labels, p->labels[k], &value))
                continue;
            const char *text = ks_intern_str(value);
            struct vz_topology *t = &topo[s->n];
            struct zone_collect z = {.arena = &cs->arena, .t = t, .cap = parts(text)};
            t->key = k;
            t->values = ks_arena_calloc(&cs->arena, z.cap, sizeof(*t->values));
            if (!t->values)
                return ks_status_set(st, KS_ERROR, "out of memory");
            if (!ks_label_zones_split(text, add_zone, &z))
                continue; /* upstream logs and ignores the label */
            if (z.oom)
                return ks_status_set(st, KS_ERROR, "out of memory");
            s->n++;
        }
    }
    if (s->n == 0)
        return KS_SKIP;
    cs->slot[p->slot] = s;
    return KS_SUCCESS;
}

/* translateToGALabel */
static uint32_t ga_of(uint32_t k)
{
    return k == BETA_REGION ? GA_REGION : k == BETA_ZONE ? GA_ZONE : k;
}

/* filter_node - Workers; allocation-free. */
static inline KS_ALWAYS_INLINE int filter_node(void *self, const struct ks_cycle_state *cs,
                                               const struct ks_pod *pod, const struct ks_node_snap *node,
                                               struct ks_status *st)
{
    const struct volume_zone *p = self;
    const struct vz_state *s = cs->slot[p->slot];
    const struct ks_labels *labels = node->node ? &node->node->meta.labels : NULL;

    if (pod->nvolumes == 0)
        return KS_SUCCESS;
    if (__builtin_expect(!s, 0))
        return ks_status_reject(st, KS_ERROR, p->msg_nostate);
    bool constrained = false;
    for (int k = 0; labels && k < NTOPO && !constrained; k++)
        constrained = ks_labels_get(labels, p->labels[k], NULL);
    if (!constrained)
        return KS_SUCCESS; /* a node without zone labels: single-zone clusters */
    for (uint32_t i = 0; i < s->n; i++) {
        const struct vz_topology *t = &s->topo[i];
        uint32_t v;
        bool ok = ks_labels_get(labels, p->labels[t->key], &v) ||
                  ks_labels_get(labels, p->labels[ga_of(t->key)], &v);
        uint32_t j = 0;
        while (ok && j < t->nvalues && t->values[j] != v)
            j++;
        if (!ok || j == t->nvalues)
            return ks_status_reject(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, p->msg_conflict);
    }
    return KS_SUCCESS;
}

KS_FILTER_OPS(filter, filter_nodes, filter_node)

/* ---- events ---------------------------------------------------------------------------------- */

/* EventsToRegister with QueueingHints, as upstream's. */
static const struct ks_event_registration events[] = {
    {{KS_ER_STORAGE_CLASS, KS_ACT_ADD}, NULL},
    {{KS_ER_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL | KS_ACT_UPDATE_NODE_TAINT}, NULL},
    {{KS_ER_PVC, KS_ACT_ADD | KS_ACT_UPDATE}, ks_hint_claim_of_pod},
    {{KS_ER_PV, KS_ACT_ADD | KS_ACT_UPDATE}, NULL},
};
KS_DEFINE_EVENTS_TO_REGISTER(events)

const struct ks_plugin ks_plugin_volume_zone = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "VolumeZone",
    .init = init,
    .destroy = destroy,
    .pre_filter = pre_filter,
    .filter = filter,
    .filter_nodes = filter_nodes,
    .sign = ks_sign_no_volumes,
    .events_to_register = events_to_register,
};
