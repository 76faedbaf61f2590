/*
 * node_info.c - per-node aggregates and the snapshot record built from them.
 *
 * Mirrors NodeInfo of pkg/scheduler/framework/types.go: AddPodInfo / RemovePod keep
 * requested and non-zero requested resources, the pod list (appended, swap-removed, so
 * the order matches upstream's), the pods with affinity and with required anti-affinity,
 * the used host ports (a set, as HostPortInfo: adding a port twice keeps one, removing it
 * once drops it) and the PVC reference counts. The generation is bumped by the caller
 * (cache.c), which also owns the node table.
 *
 * Invariants: every array is sized by a reserve call before a mutation, so add/remove
 * never fail halfway; scalar requests keep no zero entries; ports and PVCs stay sorted.
 *
 * Context: everything runs under the cache lock, except ks__node_prep_make() (interns
 * taint messages; called before the lock is taken).
 */
#include "cache_internal.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- node prep ---------------------------------------------------------------------------- */

/* The value of the first of @k1, @k2 present in @labels; KS_ID_EMPTY when neither is. */
static uint32_t label_either(const struct ks_labels *labels, uint32_t k1, uint32_t k2)
{
    uint32_t v;
    if (ks_labels_get(labels, k1, &v) || ks_labels_get(labels, k2, &v))
        return v;
    return KS_ID_EMPTY;
}

/* The interned TaintToleration message for @t, KS_ID_NONE on ENOMEM. */
static uint32_t taint_reason(const struct ks_taint *t)
{
    static const char fmt[] = "node(s) had untolerated taint {%s: %s}";
    const char *k = ks_intern_str(t->key), *v = ks_intern_str(t->value);
    char small[256];
    int len = snprintf(small, sizeof(small), fmt, k, v);
    if (len < 0)
        return KS_ID_NONE;
    if ((size_t)len < sizeof(small))
        return ks_intern_n(small, (size_t)len);
    char *buf = malloc((size_t)len + 1);
    if (!buf)
        return KS_ID_NONE;
    snprintf(buf, (size_t)len + 1, fmt, k, v);
    uint32_t id = ks_intern_n(buf, (size_t)len);
    free(buf);
    return id;
}

struct image_ref {
    uint32_t name;
    uint32_t order; /* first occurrence wins, as upstream's map insert */
    int64_t size_bytes;
};

static int cmp_image_ref(const void *a, const void *b)
{
    const struct image_ref *x = a, *y = b;
    if (x->name != y->name)
        return x->name < y->name ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

struct node_prep *ks__node_prep_make(const struct ks_node *node, uint32_t beta_zone, uint32_t beta_region)
{
    uint32_t nnames = 0;
    for (uint32_t i = 0; i < node->nimages; i++)
        nnames += node->images[i].nnames;
    size_t size = sizeof(struct node_prep) + (size_t)nnames * sizeof(struct ni_image) +
                  (size_t)node->ntaints * sizeof(uint32_t);
    struct node_prep *p = calloc(1, size);
    struct image_ref *refs = nnames ? malloc((size_t)nnames * sizeof(*refs)) : NULL;
    if (!p || (nnames && !refs))
        goto err;
    p->images = (struct ni_image *)(p + 1);
    p->taint_reasons = (uint32_t *)(p->images + nnames);

    /* GetZoneKey: the beta failure-domain labels take precedence over topology.kubernetes.io */
    p->zone = label_either(&node->meta.labels, beta_zone, ks_wk.zone_label);
    p->region = label_either(&node->meta.labels, beta_region, ks_wk.region_label);

    for (uint32_t i = 0; i < node->ntaints; i++) {
        p->taint_reasons[i] = taint_reason(&node->taints[i]);
        if (p->taint_reasons[i] == KS_ID_NONE)
            goto err;
    }
    p->ntaints = node->ntaints;

    uint32_t k = 0;
    for (uint32_t i = 0; i < node->nimages; i++) {
        for (uint32_t j = 0; j < node->images[i].nnames; j++) {
            refs[k] = (struct image_ref){node->images[i].names[j], k, node->images[i].size_bytes};
            k++;
        }
    }
    if (k)
        qsort(refs, k, sizeof(*refs), cmp_image_ref);
    for (uint32_t i = 0; i < k; i++) {
        if (p->nimages && p->images[p->nimages - 1].name == refs[i].name)
            continue;
        p->images[p->nimages++] = (struct ni_image){refs[i].name, refs[i].size_bytes, NULL};
    }
    free(refs);
    return p;
err:
    free(refs);
    free(p);
    return NULL;
}

void ks__node_prep_free(struct node_prep *p)
{
    free(p);
}

/* ---- pods on a node -------------------------------------------------------------------------- */

int ks__ni_reserve_pod(struct node_info *ni, const struct pod_entry *e)
{
    if (KS_RESERVE(ni->pods, ni->cap_pods, (uint64_t)ni->npods + 1) ||
        (e->has_affinity && KS_RESERVE(ni->aff, ni->cap_aff, (uint64_t)ni->naff + 1)) ||
        (e->has_anti_affinity && KS_RESERVE(ni->anti, ni->cap_anti, (uint64_t)ni->nanti + 1)) ||
        KS_RESERVE(ni->ports, ni->cap_ports, (uint64_t)ni->nports + ni->hidden_ports + e->nports) ||
        KS_RESERVE(ni->pvcs, ni->cap_pvcs, (uint64_t)ni->npvcs + ni->hidden_pvcs + e->npvcs) ||
        KS_RESERVE(ni->scalar, ni->cap_scalar,
                   (uint64_t)ni->nscalar + ni->hidden_scalar + e->pod->requests.nscalar) ||
        KS_RESERVE(ni->selc, ni->cap_selc, (uint64_t)ni->nselc + ni->hidden_sel + e->nsel))
        return -ENOMEM;
    return 0;
}

static int cmp_port(const struct ks_host_port *a, const struct ks_host_port *b)
{
    if (a->port != b->port)
        return a->port < b->port ? -1 : 1;
    if (a->protocol != b->protocol)
        return a->protocol < b->protocol ? -1 : 1;
    return (a->ip > b->ip) - (a->ip < b->ip);
}

/* Index of the first element of @ports not less than @p (binary search). */
static uint32_t port_lower_bound(const struct ks_host_port *ports, uint32_t n, const struct ks_host_port *p)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (cmp_port(&ports[mid], p) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void ports_add(struct node_info *ni, const struct ks_host_port *p)
{
    uint32_t i = port_lower_bound(ni->ports, ni->nports, p);
    if (i < ni->nports && cmp_port(&ni->ports[i], p) == 0)
        return;
    memmove(&ni->ports[i + 1], &ni->ports[i], (size_t)(ni->nports - i) * sizeof(*p));
    ni->ports[i] = *p;
    ni->nports++;
}

static void ports_remove(struct node_info *ni, const struct ks_host_port *p)
{
    uint32_t i = port_lower_bound(ni->ports, ni->nports, p);
    if (i == ni->nports || cmp_port(&ni->ports[i], p) != 0)
        return;
    memmove(&ni->ports[i], &ni->ports[i + 1], (size_t)(ni->nports - i - 1) * sizeof(*p));
    ni->nports--;
}

bool ks__pvc_count_add(struct ks_sel_count *v, uint32_t *n, uint32_t id)
{
    uint32_t i = ks_sel_count_find(v, *n, id);
    if (i < *n && v[i].id == id) {
        v[i].count++;
        return false;
    }
    memmove(&v[i + 1], &v[i], (size_t)(*n - i) * sizeof(*v));
    v[i] = (struct ks_sel_count){id, 1};
    (*n)++;
    return true;
}

bool ks__pvc_count_remove(struct ks_sel_count *v, uint32_t *n, uint32_t id)
{
    uint32_t i = ks_sel_count_find(v, *n, id);
    if (i == *n || v[i].id != id)
        return false;
    if (--v[i].count > 0)
        return false;
    memmove(&v[i], &v[i + 1], (size_t)(*n - i - 1) * sizeof(*v));
    (*n)--;
    return true;
}

/* Add @sign * @items to the node's sorted scalar requests, dropping entries that reach 0. */
static void scalar_update(struct node_info *ni, const struct ks_resource_item *items, uint32_t n,
                          int64_t sign)
{
    for (uint32_t k = 0; k < n; k++) {
        uint32_t lo = 0, hi = ni->nscalar;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (ni->scalar[mid].name < items[k].name)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < ni->nscalar && ni->scalar[lo].name == items[k].name) {
            ni->scalar[lo].value += sign * items[k].value;
            if (ni->scalar[lo].value == 0) {
                memmove(&ni->scalar[lo], &ni->scalar[lo + 1],
                        (size_t)(ni->nscalar - lo - 1) * sizeof(*ni->scalar));
                ni->nscalar--;
            }
            continue;
        }
        if (items[k].value == 0)
            continue;
        memmove(&ni->scalar[lo + 1], &ni->scalar[lo], (size_t)(ni->nscalar - lo) * sizeof(*ni->scalar));
        ni->scalar[lo] = (struct ks_resource_item){items[k].name, sign * items[k].value};
        ni->nscalar++;
    }
}

void ks__ni_sel_count(struct node_info *ni, uint32_t id, int sign)
{
    uint32_t lo = ks_sel_count_find(ni->selc, ni->nselc, id);
    if (lo < ni->nselc && ni->selc[lo].id == id) {
        if (sign > 0) {
            ni->selc[lo].count++;
        } else if (--ni->selc[lo].count == 0) {
            memmove(&ni->selc[lo], &ni->selc[lo + 1], (size_t)(ni->nselc - lo - 1) * sizeof(*ni->selc));
            ni->nselc--;
        }
        return;
    }
    /* only additions reach a selector without a count: a pod is taken away from where it was added */
    memmove(&ni->selc[lo + 1], &ni->selc[lo], (size_t)(ni->nselc - lo) * sizeof(*ni->selc));
    ni->selc[lo] = (struct ks_sel_count){id, 1};
    ni->nselc++;
}

void ks__ni_sel_apply(struct node_info *ni, const struct pod_entry *e, int sign)
{
    for (uint32_t i = 0; i < e->nsel; i++)
        ks__ni_sel_count(ni, e->sel[i], sign);
}

static void update(struct node_info *ni, const struct pod_entry *e, int64_t sign)
{
    const struct ks_pod *pod = e->pod;
    ni->req_milli_cpu += sign * pod->requests.milli_cpu;
    ni->req_memory += sign * pod->requests.memory;
    ni->req_ephemeral += sign * pod->requests.ephemeral_storage;
    scalar_update(ni, pod->requests.scalar, pod->requests.nscalar, sign);
    ni->nonzero_milli_cpu += sign * pod->nonzero_milli_cpu;
    ni->nonzero_memory += sign * pod->nonzero_memory;
    for (uint32_t i = 0; i < e->nports; i++) {
        if (sign > 0)
            ports_add(ni, &e->ports[i]);
        else
            ports_remove(ni, &e->ports[i]);
    }
    for (uint32_t i = 0; i < e->npvcs; i++) {
        if (sign > 0)
            ks__pvc_count_add(ni->pvcs, &ni->npvcs, e->pvcs[i]);
        else
            ks__pvc_count_remove(ni->pvcs, &ni->npvcs, e->pvcs[i]);
    }
    ks__ni_sel_apply(ni, e, (int)sign);
}

void ks__ni_add_pod(struct node_info *ni, struct pod_entry *e)
{
    e->ni = ni;
    e->slot = ni->npods;
    ni->pods[ni->npods++] = e;
    if (e->has_affinity) {
        e->aff_slot = ni->naff;
        ni->aff[ni->naff++] = e;
    }
    if (e->has_anti_affinity) {
        e->anti_slot = ni->nanti;
        ni->anti[ni->nanti++] = e;
    }
    update(ni, e, 1);
}

/* Swap-remove @slot of @arr (as upstream's removeFromSlice); fix the moved entry's index. */
static void swap_remove(struct pod_entry **arr, uint32_t *n, uint32_t slot, size_t slot_offset)
{
    struct pod_entry *last = arr[--*n];
    arr[slot] = last;
    *(uint32_t *)((char *)last + slot_offset) = slot;
}

/* What the hidden entry @e would add back to @ni, counted @sign times. */
static void hidden_count(struct node_info *ni, const struct pod_entry *e, int sign)
{
    ni->nhidden += (uint32_t)sign;
    ni->nhidden_aff += (uint32_t)(sign * e->has_affinity);
    ni->nhidden_anti += (uint32_t)(sign * e->has_anti_affinity);
    ni->hidden_ports += (uint32_t)sign * e->nports;
    ni->hidden_pvcs += (uint32_t)sign * e->npvcs;
    ni->hidden_scalar += (uint32_t)sign * e->pod->requests.nscalar;
    ni->hidden_sel += (uint32_t)sign * e->nsel;
}

/*
 * Hiding gives back room in ports, pvcs and scalar that the hidden counts keep reserved
 * (ks__ni_reserve_pod counts them), so putting the entry back fits without allocating.
 */
void ks__ni_hide_pod(struct node_info *ni, struct pod_entry *e)
{
    update(ni, e, -1);
    hidden_count(ni, e, 1);
    e->hidden = true;
}

void ks__ni_unhide_pod(struct node_info *ni, struct pod_entry *e)
{
    hidden_count(ni, e, -1);
    e->hidden = false;
    update(ni, e, 1);
}

void ks__ni_remove_pod(struct node_info *ni, struct pod_entry *e)
{
    if (e->has_affinity)
        swap_remove(ni->aff, &ni->naff, e->aff_slot, offsetof(struct pod_entry, aff_slot));
    if (e->has_anti_affinity)
        swap_remove(ni->anti, &ni->nanti, e->anti_slot, offsetof(struct pod_entry, anti_slot));
    swap_remove(ni->pods, &ni->npods, e->slot, offsetof(struct pod_entry, slot));
    if (e->hidden)
        hidden_count(ni, e, -1); /* already out of the aggregates */
    else
        update(ni, e, -1);
    e->hidden = false;
    e->ni = NULL;
    e->slot = e->aff_slot = e->anti_slot = KS__NO_INDEX;
}

void ks__ni_free(struct node_info *ni)
{
    if (!ni)
        return;
    free(ni->scalar);
    free(ni->pods);
    free(ni->aff);
    free(ni->anti);
    free(ni->ports);
    free(ni->pvcs);
    free(ni->selc);
    ks__node_prep_free(ni->prep);
    free(ni);
}

/* ---- the snapshot record ---------------------------------------------------------------------- */

#define KS_RECORD_ALIGN 64

/* memcpy that accepts a NULL @src when @n is 0 (empty cache-side arrays are NULL). */
static void copy(void *dst, const void *src, size_t n)
{
    if (n)
        memcpy(dst, src, n);
}

/* The record's summary of @node's taints (KS_SNAP_TAINTS_*, cache_types.h). */
static uint32_t taint_summary(const struct ks_node *node)
{
    uint32_t f = KS_SNAP_TAINTS_KNOWN;
    for (uint32_t i = 0; i < node->ntaints; i++) {
        enum ks_taint_effect e = node->taints[i].effect;
        if (e == KS_EFFECT_PREFER_NO_SCHEDULE)
            f |= KS_SNAP_TAINTS_PREFER;
        else if (e == KS_EFFECT_NO_SCHEDULE || e == KS_EFFECT_NO_EXECUTE)
            f |= KS_SNAP_TAINTS_HARD;
    }
    return f;
}

/* The pods of @entries in their order, hidden ones left out, into @out. */
static const struct ks_pod **visible_pods(const struct ks_pod **out, struct pod_entry *const *entries,
                                          uint32_t n, uint32_t nhidden)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!nhidden || !entries[i]->hidden)
            out[k++] = entries[i]->pod;
    }
    return out;
}

struct ks_node_snap *ks__ni_build_record(const struct node_info *ni)
{
    const struct ks_node *node = ni->node;
    const struct node_prep *prep = ni->prep;
    /* arrays of 8-byte alignment first, then the 4-byte ones */
    size_t off = sizeof(struct ks_node_snap);
    size_t o_scalar = off;
    off += (size_t)ni->nscalar * sizeof(struct ks_resource_item);
    size_t o_images = off;
    off += (size_t)prep->nimages * sizeof(struct ks_image_state);
    uint32_t npods = ni->npods - ni->nhidden, naff = ni->naff - ni->nhidden_aff,
             nanti = ni->nanti - ni->nhidden_anti;
    size_t o_pods = off;
    off += (size_t)npods * sizeof(void *);
    size_t o_aff = off;
    off += (size_t)naff * sizeof(void *);
    size_t o_anti = off;
    off += (size_t)nanti * sizeof(void *);
    size_t o_ports = off;
    off += (size_t)ni->nports * sizeof(struct ks_host_port);
    size_t o_pvcs = off;
    off += (size_t)ni->npvcs * sizeof(uint32_t);
    size_t o_taints = off;
    off += (size_t)prep->ntaints * sizeof(uint32_t);
    size_t o_sel = off;
    off += (size_t)ni->nselc * sizeof(struct ks_sel_count);
    size_t size = (off + KS_RECORD_ALIGN - 1) & ~(size_t)(KS_RECORD_ALIGN - 1);

    /* one cache line holds the hot fields Filter and Score read for every node */
    char *mem = aligned_alloc(KS_RECORD_ALIGN, size);
    if (!mem)
        return NULL;
    struct ks_node_snap *r = (struct ks_node_snap *)mem;
    *r = (struct ks_node_snap){
        .alloc_milli_cpu = node->alloc.milli_cpu,
        .alloc_memory = node->alloc.memory,
        .req_milli_cpu = ni->req_milli_cpu,
        .req_memory = ni->req_memory,
        .nonzero_milli_cpu = ni->nonzero_milli_cpu,
        .nonzero_memory = ni->nonzero_memory,
        .alloc_pods = (int32_t)node->alloc.allowed_pods,
        .npods = npods,
        .name = ni->name,
        .flags = KS_SNAP_HAS_NODE | KS_SNAP_SEL_COUNTS | (node->unschedulable ? KS_SNAP_UNSCHEDULABLE : 0),
        .alloc_ephemeral = node->alloc.ephemeral_storage,
        .req_ephemeral = ni->req_ephemeral,
        .node = node,
        .nreq_scalar = ni->nscalar,
        .nports = ni->nports,
        .taints = taint_summary(node),
        .naffinity_pods = naff,
        .nanti_affinity_pods = nanti,
        .nimages = prep->nimages,
        .npvc_refs = ni->npvcs,
        .generation = ni->generation,
    };

    struct ks_resource_item *scalar = (struct ks_resource_item *)(mem + o_scalar);
    copy(scalar, ni->scalar, (size_t)ni->nscalar * sizeof(*scalar));
    r->req_scalar = scalar;

    /* NumNodes is read now, as upstream's ImageStateSummary.Snapshot() at clone time */
    struct ks_image_state *images = (struct ks_image_state *)(mem + o_images);
    for (uint32_t i = 0; i < prep->nimages; i++) {
        const struct image_state *st = prep->images[i].st;
        images[i] = (struct ks_image_state){st->name, st->size_bytes, st->num_nodes};
    }
    r->images = images;

    r->pods = visible_pods((const struct ks_pod **)(mem + o_pods), ni->pods, ni->npods, ni->nhidden);
    r->affinity_pods =
        visible_pods((const struct ks_pod **)(mem + o_aff), ni->aff, ni->naff, ni->nhidden_aff);
    r->anti_affinity_pods =
        visible_pods((const struct ks_pod **)(mem + o_anti), ni->anti, ni->nanti, ni->nhidden_anti);

    struct ks_host_port *ports = (struct ks_host_port *)(mem + o_ports);
    copy(ports, ni->ports, (size_t)ni->nports * sizeof(*ports));
    r->ports = ports;

    uint32_t *pvcs = (uint32_t *)(mem + o_pvcs);
    for (uint32_t i = 0; i < ni->npvcs; i++)
        pvcs[i] = ni->pvcs[i].id;
    r->pvc_refs = pvcs;

    uint32_t *taints = (uint32_t *)(mem + o_taints);
    copy(taints, prep->taint_reasons, (size_t)prep->ntaints * sizeof(uint32_t));
    r->taint_reasons = taints;

    struct ks_sel_count *selc = (struct ks_sel_count *)(mem + o_sel);
    copy(selc, ni->selc, (size_t)ni->nselc * sizeof(*selc));
    r->nsel_counts = ni->nselc;
    r->sel_counts = selc;
    return r;
}
