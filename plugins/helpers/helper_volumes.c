/*
 * helper_volumes.c - indexes of the storage objects and the storage helpers the volume
 * plugins share (see include/ksched/plugin_helpers_volumes.h).
 *
 * Mirrors k8s.io/component-helpers/storage/volume (GetPersistentVolumeClaimClass,
 * GetPersistentVolumeClass, CheckNodeAffinity), v1helper.MatchTopologySelectorTerms,
 * ephemeral.VolumeIsForPod and cloud-provider's volumehelpers.LabelZonesToSet.
 *
 * Indexes are sorted arrays of (interned key, object) built at init and rebuilt at a
 * PreFilter after the objects changed (ksched serve; ks_vol_index_refresh): the scheduling
 * cycle looks objects up by integer key with a binary search, never by string. The objects
 * stay owned by the struct ks_objects they came from, which outlives every framework (serve
 * keeps replaced ones until exit, as an older index or a binder may still point at them).
 *
 * The end of the file holds the one implementation of the four in-tree volume limit
 * plugins (EBSLimits, GCEPDLimits, AzureDiskLimits, CinderLimits), parameterised by kind.
 */
#include "ksched/plugin_helpers_hints.h"
#include "ksched/plugin_helpers_volumes.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/framework.h"
#include "ksched/loader.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- indexes -------------------------------------------------------------------------------- */

static int cmp_entry(const void *a, const void *b)
{
    const struct ks_vol_entry *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Sort by key and keep the first object of each key (input order). */
static void table_finish(struct ks_vol_table *t)
{
    uint32_t kept = 0;

    qsort(t->items, t->n, sizeof(*t->items), cmp_entry);
    for (uint32_t i = 0; i < t->n; i++) {
        if (kept == 0 || t->items[kept - 1].key != t->items[i].key)
            t->items[kept++] = t->items[i];
    }
    t->n = kept;
}

static int table_build(struct ks_vol_table *t, const struct ks_objects *objs, enum ks_kind kind,
                       bool namespaced)
{
    const struct ks_objvec *v = objs ? &objs->of[kind] : NULL;
    uint32_t n = v ? v->n : 0;

    t->n = 0;
    t->items = calloc(n ? n : 1, sizeof(*t->items));
    if (!t->items)
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++) {
        /* every kind indexed here starts with its struct ks_object_meta */
        const struct ks_object_meta *m = v->items[i];
        uint32_t key = ks_intern_ns_name(namespaced ? m->namespace_id : KS_ID_NONE, m->name);
        if (key == KS_ID_NONE)
            return -ENOMEM;
        t->items[t->n++] = (struct ks_vol_entry){.key = key, .pos = i, .obj = v->items[i]};
    }
    table_finish(t);
    return 0;
}

int ks_vol_index_build(struct ks_vol_index *ix, const struct ks_objects *objs)
{
    memset(ix, 0, sizeof(*ix));
    if (table_build(&ix->pvcs, objs, KS_KIND_PVC, true) < 0 ||
        table_build(&ix->pvs, objs, KS_KIND_PV, false) < 0 ||
        table_build(&ix->classes, objs, KS_KIND_STORAGE_CLASS, false) < 0 ||
        table_build(&ix->csinodes, objs, KS_KIND_CSI_NODE, false) < 0) {
        ks_vol_index_destroy(ix);
        return -ENOMEM;
    }
    ix->gen = ks_vol_objects_gen(objs);
    return 0;
}

uint64_t ks_vol_objects_gen(const struct ks_objects *objs)
{
    if (!objs)
        return 0;
    return objs->gen[KS_KIND_PVC] + objs->gen[KS_KIND_PV] + objs->gen[KS_KIND_STORAGE_CLASS] +
           objs->gen[KS_KIND_CSI_NODE];
}

bool ks_vol_index_stale(const struct ks_vol_index *ix, const struct ks_objects *objs)
{
    return ks_vol_objects_gen(objs) != ix->gen;
}

int ks_vol_index_refresh(struct ks_vol_index *ix, const struct ks_objects *objs)
{
    struct ks_vol_index fresh;
    if (__builtin_expect(!ks_vol_index_stale(ix, objs), 1))
        return 0;
    if (ks_vol_index_build(&fresh, objs) < 0)
        return -ENOMEM;
    ks_vol_index_destroy(ix);
    *ix = fresh;
    return 1;
}

void ks_vol_index_destroy(struct ks_vol_index *ix)
{
    if (!ix)
        return;
    free(ix->pvcs.items);
    free(ix->pvs.items);
    free(ix->classes.items);
    free(ix->csinodes.items);
    memset(ix, 0, sizeof(*ix));
}

const struct ks_objects *ks_vol_objects(const struct ks_framework *fw)
{
    const struct ks_framework_deps *deps = fw ? ks_framework_deps(fw) : NULL;
    return deps ? deps->objects : NULL;
}

const struct ks_vol_entry *ks_vol_table_find(const struct ks_vol_table *t, uint32_t key)
{
    uint32_t lo = 0, hi = t->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        uint32_t k = t->items[mid].key;
        if (k == key)
            return &t->items[mid];
        if (k < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static const void *find_obj(const struct ks_vol_table *t, uint32_t key)
{
    const struct ks_vol_entry *e = key == KS_ID_NONE ? NULL : ks_vol_table_find(t, key);
    return e ? e->obj : NULL;
}

const struct ks_persistent_volume_claim *ks_vol_find_pvc(const struct ks_vol_index *ix, uint32_t ns,
                                                         const char *name)
{
    return find_obj(&ix->pvcs, ks_intern_find_ns_name(ns, name));
}

const struct ks_persistent_volume *ks_vol_find_pv(const struct ks_vol_index *ix, const char *name)
{
    return find_obj(&ix->pvs, ks_intern_find_ns_name(KS_ID_NONE, name));
}

const struct ks_storage_class *ks_vol_find_class(const struct ks_vol_index *ix, const char *name)
{
    return find_obj(&ix->classes, ks_intern_find_ns_name(KS_ID_NONE, name));
}

const struct ks_csi_node *ks_vol_find_csinode(const struct ks_vol_index *ix, uint32_t node_name)
{
    return find_obj(&ix->csinodes, node_name);
}

/* ---- object helpers ----------------------------------------------------------------------- */

const char *ks_annotation(const struct ks_annotations *a, const char *key)
{
    for (uint32_t i = 0; i < a->n; i++) {
        if (strcmp(a->items[i].key, key) == 0)
            return a->items[i].value ? a->items[i].value : "";
    }
    return NULL;
}

const char *ks_pvc_class(const struct ks_persistent_volume_claim *pvc)
{
    const char *c = ks_annotation(&pvc->meta.annotations, KS_ANN_BETA_STORAGE_CLASS);
    if (c)
        return c;
    return pvc->has_storage_class && pvc->storage_class ? pvc->storage_class : "";
}

const char *ks_pv_class(const struct ks_persistent_volume *pv)
{
    const char *c = ks_annotation(&pv->meta.annotations, KS_ANN_BETA_STORAGE_CLASS);
    if (c)
        return c;
    return pv->storage_class ? pv->storage_class : "";
}

bool ks_pvc_fully_bound(const struct ks_persistent_volume_claim *pvc)
{
    return pvc->volume_name && pvc->volume_name[0] &&
           ks_annotation(&pvc->meta.annotations, KS_ANN_BIND_COMPLETED) != NULL;
}

bool ks_pv_node_affinity_ok(const struct ks_persistent_volume *pv, const struct ks_labels *labels)
{
    /* the node CheckNodeAffinity builds has labels and no name */
    return !pv->node_affinity || ks_node_selector_matches(pv->node_affinity, labels, KS_ID_EMPTY);
}

bool ks_topology_terms_match(const struct ks_node_selector_term *terms, uint32_t n,
                             const struct ks_labels *labels)
{
    if (n == 0)
        return true;
    for (uint32_t i = 0; i < n; i++) {
        if (ks_node_selector_term_matches(&terms[i], labels, KS_ID_EMPTY))
            return true;
    }
    return false;
}

const char *ks_volume_claim_name(const struct ks_volume *v)
{
    return v->kind == KS_VOLUME_PVC || v->kind == KS_VOLUME_EPHEMERAL ? v->source : NULL;
}

static bool str_eq(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

bool ks_ephemeral_is_for_pod(const struct ks_pod *pod, const struct ks_persistent_volume_claim *pvc)
{
    if (pvc->meta.namespace_id != pod->meta.namespace_id)
        return false;
    for (uint32_t i = 0; i < pvc->meta.nowners; i++) {
        const struct ks_owner_ref *o = &pvc->meta.owners[i];
        if (o->controller) /* metav1.IsControlledBy: the controller reference's uid */
            return str_eq(o->uid, pod->meta.uid);
    }
    return false;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

bool ks_label_zones_split(const char *value, void (*fn)(void *ctx, const char *s, size_t len), void *ctx)
{
    /* validate first: one empty part rejects the label */
    for (int pass = 0; pass < 2; pass++) {
        const char *p = value;
        for (;;) {
            const char *end = strstr(p, "__");
            size_t len = end ? (size_t)(end - p) : strlen(p);
            const char *s = p, *e = p + len;
            while (s < e && is_space(*s))
                s++;
            while (e > s && is_space(e[-1]))
                e--;
            if (pass == 0 && e == s)
                return false;
            if (pass == 1)
                fn(ctx, s, (size_t)(e - s));
            if (!end)
                break;
            p = end + 2;
        }
    }
    return true;
}

/* ---- the in-tree volume limit plugins (nodevolumelimits/non_csi.go) ---------------------- */

/*
 * What upstream's VolumeFilter of each in-tree plugin reads. PersistentVolume sources of
 * in-tree types are not part of ksched's object model, so FilterPersistentVolume never
 * matches; AzureDisk and Cinder inline volumes are not decoded either (KS_VOLUME_OTHER).
 */
static const struct noncsi_desc {
    const char *provisioner;         /* MatchProvisioner */
    enum ks_volume_kind inline_kind; /* FilterVolume; KS_VOLUME_OTHER: none decoded */
    const char *limit_key;           /* volumeLimitKey in node allocatable */
    int default_max;                 /* maxVolumeFunc without the instance type rule */
} noncsi_descs[] = {
    [KS_NONCSI_EBS] = {"kubernetes.io/aws-ebs", KS_VOLUME_AWS_EBS, "attachable-volumes-aws-ebs", 39},
    [KS_NONCSI_GCE_PD] = {"kubernetes.io/gce-pd", KS_VOLUME_GCE_PD, "attachable-volumes-gce-pd", 16},
    [KS_NONCSI_AZURE_DISK] = {"kubernetes.io/azure-disk", KS_VOLUME_OTHER, "attachable-volumes-azure-disk",
                              16},
    [KS_NONCSI_CINDER] = {"kubernetes.io/cinder", KS_VOLUME_OTHER, "attachable-volumes-cinder", 256},
};

#define EBS_NITRO_MAX 25 /* volumeutil.DefaultMaxEBSNitroVolumeLimit */

struct ks_noncsi {
    enum ks_noncsi_kind kind;
    uint16_t slot;
    int env_max;        /* KUBE_MAX_PD_VOLS when valid and positive, -1 otherwise */
    uint32_t limit_key; /* interned volumeLimitKey */
    uint32_t label_instance_type, label_instance_type_beta;
    uint32_t msg_exceeded;
    const struct ks_objects *objs; /* the live objects (NULL: none) */
    /* ix and counted: refreshed at PreFilter (scheduling thread), read by PreFilter and the
     * cycle's Filter workers */
    struct ks_vol_index ix;
    /* claims that count for this plugin when used: unbound or bound to a missing PV, and
     * spec.storageClassName naming a class of this plugin's provisioner (matchProvisioner) */
    uint32_t ncounted;
    uint32_t *counted; /* sorted claim keys */
};

/* The PreFilter state: the new pod's volumes of this plugin, or the error Filter reports. */
struct noncsi_state {
    uint32_t err;     /* interned error message, KS_ID_NONE when none */
    uint32_t ninline; /* distinct inline volume ids, interned */
    uint32_t nclaims; /* distinct counted claim keys */
    uint32_t *inline_ids;
    uint32_t *claims;
};

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static bool u32_sorted_has(const uint32_t *v, uint32_t n, uint32_t x)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (v[mid] == x)
            return true;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* matchProvisioner: reads spec.storageClassName only (not the beta annotation), as upstream. */
static bool noncsi_match_provisioner(const struct ks_noncsi *p, const struct ks_persistent_volume_claim *pvc)
{
    if (!pvc->has_storage_class)
        return false;
    const struct ks_storage_class *sc = ks_vol_find_class(&p->ix, pvc->storage_class);
    return sc && sc->provisioner && strcmp(sc->provisioner, noncsi_descs[p->kind].provisioner) == 0;
}

/* filterVolumes for one claim: does it add a "<prefix>-ns/name" volume? */
static bool noncsi_claim_counts(const struct ks_noncsi *p, const struct ks_persistent_volume_claim *pvc)
{
    if (!pvc->volume_name || !pvc->volume_name[0])
        return noncsi_match_provisioner(p, pvc);
    if (!ks_vol_find_pv(&p->ix, pvc->volume_name))
        return noncsi_match_provisioner(p, pvc);
    return false; /* FilterPersistentVolume: no in-tree PV sources in the object model */
}

static int noncsi_env_max(void)
{
    const char *raw = getenv("KUBE_MAX_PD_VOLS");
    if (!raw || !*raw)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(raw, &end, 10);
    if (errno || end == raw || *end || v <= 0 || v > INT32_MAX)
        return -1;
    return (int)v;
}

/* The claim keys of p->ix that count, sorted, into *@out (malloc'ed) and *@n. */
static int noncsi_counted(const struct ks_noncsi *p, uint32_t **out, uint32_t *n)
{
    uint32_t *v = calloc(p->ix.pvcs.n ? p->ix.pvcs.n : 1, sizeof(*v)), k = 0;
    if (!v)
        return -ENOMEM;
    for (uint32_t i = 0; i < p->ix.pvcs.n; i++) {
        if (noncsi_claim_counts(p, p->ix.pvcs.items[i].obj))
            v[k++] = p->ix.pvcs.items[i].key; /* table order: sorted */
    }
    *out = v;
    *n = k;
    return 0;
}

/* Rebuild ix and counted when the objects changed; -ENOMEM keeps the old ones. Scheduling thread. */
static int noncsi_refresh(struct ks_noncsi *p)
{
    if (__builtin_expect(!ks_vol_index_stale(&p->ix, p->objs), 1))
        return 0;
    struct ks_vol_index old = p->ix;
    uint32_t *counted, n;
    if (ks_vol_index_build(&p->ix, p->objs) < 0) {
        p->ix = old;
        return -ENOMEM;
    }
    if (noncsi_counted(p, &counted, &n) < 0) {
        ks_vol_index_destroy(&p->ix);
        p->ix = old;
        return -ENOMEM;
    }
    ks_vol_index_destroy(&old);
    free(p->counted);
    p->counted = counted;
    p->ncounted = n;
    return 1;
}

int ks_noncsi_init(enum ks_noncsi_kind kind, const struct ks_plugin_init *in, void **self)
{
    struct ks_noncsi *p = calloc(1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    p->kind = kind;
    p->slot = in->slot;
    p->env_max = noncsi_env_max();
    if (ks_vol_index_build(&p->ix, p->objs = ks_vol_objects(in->framework)) < 0)
        goto err_index;
    p->limit_key = ks_intern(noncsi_descs[kind].limit_key);
    p->label_instance_type = ks_intern("node.kubernetes.io/instance-type");
    p->label_instance_type_beta = ks_intern("beta.kubernetes.io/instance-type");
    p->msg_exceeded = ks_intern("node(s) exceed max volume count");
    if (p->limit_key == KS_ID_NONE || p->label_instance_type == KS_ID_NONE ||
        p->label_instance_type_beta == KS_ID_NONE || p->msg_exceeded == KS_ID_NONE)
        goto err_counted;
    if (noncsi_counted(p, &p->counted, &p->ncounted) < 0)
        goto err_counted;
    *self = p;
    return 0;
err_counted:
    ks_vol_index_destroy(&p->ix);
err_index:
    free(p);
    return -ENOMEM;
}

/* EventsToRegister of the in-tree limit plugins (non_csi.go) with QueueingHints. */
static const struct ks_event_registration noncsi_events[] = {
    {{KS_ER_NODE, KS_ACT_ADD}, NULL},
    {{KS_ER_POD, KS_ACT_DELETE}, ks_hint_limits_pod_deleted},
    {{KS_ER_PVC, KS_ACT_ADD}, ks_hint_claim_of_pod},
    {{KS_ER_PV, KS_ACT_ADD}, NULL},
};

uint32_t ks_noncsi_events_to_register(void *self, struct ks_event_registration *out, uint32_t max)
{
    (void)self;
    return ks_events_copy(out, max, noncsi_events, sizeof(noncsi_events) / sizeof(noncsi_events[0]));
}

void ks_noncsi_destroy(void *self)
{
    struct ks_noncsi *p = self;
    if (!p)
        return;
    free(p->counted);
    ks_vol_index_destroy(&p->ix);
    free(p);
}

__attribute__((cold)) static int noncsi_oom(struct ks_status *st)
{
    return ks_status_set(st, KS_ERROR, "out of memory");
}

static uint32_t dedup(uint32_t *v, uint32_t n)
{
    uint32_t k = 0;
    qsort(v, n, sizeof(*v), cmp_u32);
    for (uint32_t i = 0; i < n; i++) {
        if (k == 0 || v[k - 1] != v[i])
            v[k++] = v[i];
    }
    return k;
}

int ks_noncsi_pre_filter(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                         struct ks_pre_filter_result *res, struct ks_status *st)
{
    struct ks_noncsi *p = self;
    enum ks_volume_kind ik = noncsi_descs[p->kind].inline_kind;
    bool relevant = false;

    (void)res;
    for (uint32_t i = 0; i < pod->nvolumes && !relevant; i++) {
        enum ks_volume_kind k = pod->volumes[i].kind;
        relevant = (ik != KS_VOLUME_OTHER && k == ik) || k == KS_VOLUME_PVC || k == KS_VOLUME_EPHEMERAL;
    }
    if (!relevant)
        return KS_SKIP;

    struct noncsi_state *s = ks_arena_alloc(&cs->arena, sizeof(*s));
    uint32_t *ids = ks_arena_calloc(&cs->arena, pod->nvolumes, sizeof(*ids));
    uint32_t *claims = ks_arena_calloc(&cs->arena, pod->nvolumes, sizeof(*claims));
    if (!s || !ids || !claims || noncsi_refresh(p) < 0)
        return noncsi_oom(st);
    s->err = KS_ID_NONE;
    s->inline_ids = ids;
    s->claims = claims;
    /* filterVolumes(pod, newPod=true) */
    for (uint32_t i = 0; i < pod->nvolumes; i++) {
        const struct ks_volume *v = &pod->volumes[i];
        if (ik != KS_VOLUME_OTHER && v->kind == ik) {
            if ((ids[s->ninline++] = ks_intern(v->source)) == KS_ID_NONE)
                return noncsi_oom(st);
            continue;
        }
        const char *claim = ks_volume_claim_name(v);
        if (!claim)
            continue;
        uint32_t key = ks_intern_find_ns_name(pod->meta.namespace_id, claim);
        const struct ks_vol_entry *e = key == KS_ID_NONE ? NULL : ks_vol_table_find(&p->ix.pvcs, key);
        char msg[1024];
        if (!e) {
            snprintf(msg, sizeof(msg), "looking up PVC %s/%s: persistentvolumeclaim \"%s\" not found",
                     ks_intern_str(pod->meta.namespace_id), claim, claim);
        } else if (v->kind == KS_VOLUME_EPHEMERAL && !ks_ephemeral_is_for_pod(pod, e->obj)) {
            snprintf(msg, sizeof(msg), "PVC %s/%s was not created for pod %s/%s (pod is not owner)",
                     ks_intern_str(pod->meta.namespace_id), claim, ks_intern_str(pod->meta.namespace_id),
                     pod->meta.name);
        } else {
            if (u32_sorted_has(p->counted, p->ncounted, key))
                claims[s->nclaims++] = key;
            continue;
        }
        if ((s->err = ks_intern(msg)) == KS_ID_NONE)
            return noncsi_oom(st);
        break;
    }
    s->ninline = dedup(ids, s->ninline);
    s->nclaims = dedup(claims, s->nclaims);
    cs->slot[p->slot] = s;
    return KS_SUCCESS;
}

/* getMaxEBSVolume: "^[cmr]5.*|t3|z1d" selects the Nitro limit. */
static bool ebs_nitro(const char *t)
{
    return ((t[0] == 'c' || t[0] == 'm' || t[0] == 'r') && t[1] == '5') || strstr(t, "t3") ||
           strstr(t, "z1d");
}

static int noncsi_max(const struct ks_noncsi *p, const struct ks_node *n)
{
    if (p->env_max > 0)
        return p->env_max;
    if (p->kind == KS_NONCSI_EBS) {
        uint32_t v = KS_ID_EMPTY;
        /* upstream takes whichever of the two labels its map iteration meets first */
        if (n && !ks_labels_get(&n->meta.labels, p->label_instance_type, &v))
            ks_labels_get(&n->meta.labels, p->label_instance_type_beta, &v);
        return ebs_nitro(ks_intern_str(v)) ? EBS_NITRO_MAX : noncsi_descs[p->kind].default_max;
    }
    return noncsi_descs[p->kind].default_max;
}

/* Count the distinct inline volume ids of this plugin's kind on the node (cold: rare volumes). */
static uint32_t existing_inline(const struct ks_noncsi *p, const struct ks_node_snap *node,
                                const struct noncsi_state *s, uint32_t *new_left)
{
    enum ks_volume_kind ik = noncsi_descs[p->kind].inline_kind;
    uint32_t count = 0;

    if (ik == KS_VOLUME_OTHER)
        return 0;
    for (uint32_t i = 0; i < node->npods; i++) {
        const struct ks_pod *pod = node->pods[i];
        for (uint32_t j = 0; j < pod->nvolumes; j++) {
            const struct ks_volume *v = &pod->volumes[j];
            if (v->kind != ik)
                continue;
            /* distinct: count the first occurrence of each id on the node */
            bool seen = false;
            for (uint32_t a = 0; a <= i && !seen; a++) {
                const struct ks_pod *q = node->pods[a];
                uint32_t lim = a == i ? j : q->nvolumes;
                for (uint32_t b = 0; b < lim && !seen; b++)
                    seen = q->volumes[b].kind == ik && strcmp(q->volumes[b].source, v->source) == 0;
            }
            if (seen)
                continue;
            count++;
            for (uint32_t k = 0; k < s->ninline; k++) {
                if (strcmp(ks_intern_str(s->inline_ids[k]), v->source) == 0)
                    (*new_left)--;
            }
        }
    }
    return count;
}

int ks_noncsi_filter(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                     const struct ks_node_snap *node, struct ks_status *st)
{
    const struct ks_noncsi *p = self;
    const struct noncsi_state *s = cs->slot[p->slot];

    if (pod->nvolumes == 0 || !s)
        return KS_SUCCESS;
    if (s->err != KS_ID_NONE) {
        st->code = KS_ERROR;
        st->nreasons = 1;
        st->reasons[0] = s->err;
        return KS_ERROR;
    }
    if (s->ninline + s->nclaims == 0)
        return KS_SUCCESS;
    /* IsMigrated: with CSI migration on for every in-tree plugin, a CSINode defers to NodeVolumeLimits */
    if (ks_vol_find_csinode(&p->ix, node->name))
        return KS_SUCCESS;

    uint32_t new_left = s->ninline + s->nclaims;
    uint32_t existing = existing_inline(p, node, s, &new_left);
    /* claims used on the node: the cache's sorted claim keys, merged with the counted set */
    for (uint32_t i = 0, j = 0; i < node->npvc_refs && j < p->ncounted;) {
        uint32_t a = node->pvc_refs[i], b = p->counted[j];
        if (a < b) {
            i++;
        } else if (b < a) {
            j++;
        } else {
            existing++;
            new_left -= u32_sorted_has(s->claims, s->nclaims, a);
            i++;
            j++;
        }
    }
    int64_t max = noncsi_max(p, node->node);
    if (node->node) {
        bool found = false;
        int64_t v = 0;
        for (uint32_t i = 0; i < node->node->alloc.nscalar; i++) {
            if (node->node->alloc.scalar[i].name == p->limit_key) {
                v = node->node->alloc.scalar[i].value;
                found = true;
            }
        }
        if (found)
            max = v;
    }
    if ((int64_t)existing + new_left > max) {
        st->code = KS_UNSCHEDULABLE;
        st->nreasons = 1;
        st->reasons[0] = p->msg_exceeded;
        return KS_UNSCHEDULABLE;
    }
    return KS_SUCCESS;
}
