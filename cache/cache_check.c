/*
 * cache_check.c - the cache's invariant checker (ks_cache_check, ksched/internal/cache.h).
 *
 * Recomputes, under the cache lock, what cache.c and node_info.c maintain incrementally
 * and compares: each node's requested and non-zero requested resources, scalar requests,
 * pod count, affinity and anti-affinity lists, host-port set, PVC counts and tracked
 * selectors' counts against the sums over the pods indexed on it (upstream's
 * NodeInfo.AddPod / RemovePod bookkeeping), each pod's list of the selectors it matches;
 * the pod table against the per-node pod arrays and the assumed list; optionally the fit
 * of every node (requests within allocatable) and the published snapshot against the
 * cache (upstream's cache_comparer / snapshot tests: same nodes in order, each record
 * equal to its node's aggregates).
 *
 * Used by `ksched soak`, engine/sched_check.c and unit tests; never on the scheduling
 * path. Context: any registered thread outside RCU read sections; takes the cache lock
 * (allocating scratch under it is fine: no other ksched lock is taken).
 */
#include "cache_internal.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/lock.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ck {
    char *msg;
    uint32_t len;
    uint32_t n;
};

static void __attribute__((format(printf, 2, 3))) fail(struct ck *k, const char *fmt, ...)
{
    if (k->n++ == 0 && k->msg && k->len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(k->msg, k->len, fmt, ap);
        va_end(ap);
    }
}

static const char *nm(uint32_t id)
{
    const char *s = ks_intern_str(id);
    return s ? s : "?";
}

static const char *pod_name(const struct ks_pod *pod)
{
    return pod && pod->meta.name ? pod->meta.name : "(unnamed)";
}

/* ---- scratch ---------------------------------------------------------------------------------- */

struct scratch {
    uint32_t nscalar, cap_scalar;
    struct ks_resource_item *scalar;
    uint32_t nports, cap_ports;
    struct ks_host_port *ports;
    uint32_t npvcs, cap_pvcs;
    uint32_t *pvcs;
};

static int cmp_item(const void *a, const void *b)
{
    uint32_t x = ((const struct ks_resource_item *)a)->name, y = ((const struct ks_resource_item *)b)->name;
    return (x > y) - (x < y);
}

/* The order node_info.c keeps host ports in: port, protocol, ip. */
static int cmp_port(const void *pa, const void *pb)
{
    const struct ks_host_port *a = pa, *b = pb;
    if (a->port != b->port)
        return a->port < b->port ? -1 : 1;
    if (a->protocol != b->protocol)
        return a->protocol < b->protocol ? -1 : 1;
    return (a->ip > b->ip) - (a->ip < b->ip);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Sum scalar requests by name (sorted, zero sums dropped) as scalar_update() keeps them. */
static void fold_scalars(struct scratch *s)
{
    if (s->nscalar > 1)
        qsort(s->scalar, s->nscalar, sizeof(*s->scalar), cmp_item);
    uint32_t out = 0;
    for (uint32_t i = 0; i < s->nscalar;) {
        struct ks_resource_item sum = {s->scalar[i].name, 0};
        for (; i < s->nscalar && s->scalar[i].name == sum.name; i++)
            sum.value += s->scalar[i].value;
        if (sum.value)
            s->scalar[out++] = sum;
    }
    s->nscalar = out;
}

/* Host ports as a set (HostPortInfo): sorted, duplicates dropped. */
static void fold_ports(struct scratch *s)
{
    if (s->nports > 1)
        qsort(s->ports, s->nports, sizeof(*s->ports), cmp_port);
    uint32_t out = 0;
    for (uint32_t i = 0; i < s->nports; i++) {
        if (out && cmp_port(&s->ports[out - 1], &s->ports[i]) == 0)
            continue;
        s->ports[out++] = s->ports[i];
    }
    s->nports = out;
}

/* ---- one node ----------------------------------------------------------------------------------- */

struct sums {
    int64_t cpu, mem, eph, nz_cpu, nz_mem;
    uint32_t naff, nanti, nhidden;
};

/* Recompute @ni's aggregates into @sum and @s; check the pod index on the way. -1: out of memory. */
static int node_sums(struct ks_cache *c, struct ck *k, const struct node_info *ni, struct sums *sum,
                     struct scratch *s)
{
    memset(sum, 0, sizeof(*sum));
    s->nscalar = s->nports = s->npvcs = 0;
    for (uint32_t i = 0; i < ni->npods; i++) {
        const struct pod_entry *e = ni->pods[i];
        const struct ks_pod *p = e->pod;
        if (e->ni != ni || e->slot != i || e->node != ni->name)
            fail(k, "cache pod index: pod %s listed at node %s slot %u records node %s slot %u", pod_name(p),
                 nm(ni->name), i, nm(e->node), e->slot);
        uint32_t ns = p->meta.namespace_id;
        if (ks__pod_table_find(&c->pods, ns, p->meta.name, ks__pod_key_hash(ns, p->meta.name)) != e)
            fail(k, "cache pod index: pod %s on node %s is not the table's entry for its name", pod_name(p),
                 nm(ni->name));
        if (e->hidden) {
            sum->nhidden++;
            continue; /* out of the aggregates until it is put back */
        }
        sum->cpu += p->requests.milli_cpu;
        sum->mem += p->requests.memory;
        sum->eph += p->requests.ephemeral_storage;
        sum->nz_cpu += p->nonzero_milli_cpu;
        sum->nz_mem += p->nonzero_memory;
        if (e->has_affinity) {
            sum->naff++;
            if (e->aff_slot >= ni->naff || ni->aff[e->aff_slot] != e)
                fail(k, "cache node %s: pod %s with affinity is not at its affinity slot %u", nm(ni->name),
                     pod_name(p), e->aff_slot);
        }
        if (e->has_anti_affinity) {
            sum->nanti++;
            if (e->anti_slot >= ni->nanti || ni->anti[e->anti_slot] != e)
                fail(k, "cache node %s: pod %s with anti-affinity is not at its anti-affinity slot %u",
                     nm(ni->name), pod_name(p), e->anti_slot);
        }
        if (KS_RESERVE(s->scalar, s->cap_scalar, (uint64_t)s->nscalar + p->requests.nscalar) ||
            KS_RESERVE(s->ports, s->cap_ports, (uint64_t)s->nports + e->nports) ||
            KS_RESERVE(s->pvcs, s->cap_pvcs, (uint64_t)s->npvcs + e->npvcs))
            return -1;
        for (uint32_t j = 0; j < p->requests.nscalar; j++)
            s->scalar[s->nscalar++] = p->requests.scalar[j];
        for (uint32_t j = 0; j < e->nports; j++)
            s->ports[s->nports++] = e->ports[j];
        for (uint32_t j = 0; j < e->npvcs; j++)
            s->pvcs[s->npvcs++] = e->pvcs[j];
    }
    fold_scalars(s);
    fold_ports(s);
    if (s->npvcs > 1)
        qsort(s->pvcs, s->npvcs, sizeof(*s->pvcs), cmp_u32);
    return 0;
}

static void cmp_i64(struct ck *k, uint32_t node, const char *what, int64_t got, int64_t want, uint32_t npods)
{
    if (got != want)
        fail(k, "cache node %s: %s %lld, sum over its %u pods %lld", nm(node), what, (long long)got, npods,
             (long long)want);
}

static void check_aggregates(struct ck *k, const struct node_info *ni, const struct sums *sum,
                             const struct scratch *s)
{
    uint32_t n = ni->npods;
    cmp_i64(k, ni->name, "requested cpu (m)", ni->req_milli_cpu, sum->cpu, n);
    cmp_i64(k, ni->name, "requested memory", ni->req_memory, sum->mem, n);
    cmp_i64(k, ni->name, "requested ephemeral storage", ni->req_ephemeral, sum->eph, n);
    cmp_i64(k, ni->name, "non-zero requested cpu (m)", ni->nonzero_milli_cpu, sum->nz_cpu, n);
    cmp_i64(k, ni->name, "non-zero requested memory", ni->nonzero_memory, sum->nz_mem, n);
    cmp_i64(k, ni->name, "pods with affinity", ni->naff - ni->nhidden_aff, sum->naff, n);
    cmp_i64(k, ni->name, "pods with required anti-affinity", ni->nanti - ni->nhidden_anti, sum->nanti, n);
    cmp_i64(k, ni->name, "hidden pods", ni->nhidden, sum->nhidden, n);
    for (uint32_t i = 0; i < ni->nscalar || i < s->nscalar; i++) {
        const struct ks_resource_item *got = i < ni->nscalar ? &ni->scalar[i] : NULL;
        const struct ks_resource_item *want = i < s->nscalar ? &s->scalar[i] : NULL;
        if (got && want && got->name == want->name && got->value == want->value)
            continue;
        fail(k, "cache node %s: requested %s %lld, sum over its %u pods: %s %lld", nm(ni->name),
             got ? nm(got->name) : "(nothing)", got ? (long long)got->value : 0LL, n,
             want ? nm(want->name) : "(nothing)", want ? (long long)want->value : 0LL);
        break;
    }
    if (ni->nports != s->nports || (s->nports && memcmp(ni->ports, s->ports, s->nports * sizeof(*s->ports))))
        fail(k, "cache node %s: %u host ports in use, the union over its %u pods has %u", nm(ni->name),
             ni->nports, n, s->nports);
    uint32_t distinct = 0;
    for (uint32_t i = 0; i < s->npvcs;) {
        uint32_t id = s->pvcs[i], count = 0;
        for (; i < s->npvcs && s->pvcs[i] == id; i++)
            count++;
        if (distinct >= ni->npvcs || ni->pvcs[distinct].id != id || ni->pvcs[distinct].count != count)
            fail(k, "cache node %s: PVC %s used by %u of its pods, recorded otherwise", nm(ni->name), nm(id),
                 count);
        distinct++;
    }
    if (distinct != ni->npvcs)
        fail(k, "cache node %s: %u PVCs recorded, its pods use %u", nm(ni->name), ni->npvcs, distinct);
}

/* @ni's count for selector @id (0 when it has none). */
static uint32_t ni_sel_count(const struct node_info *ni, uint32_t id)
{
    for (uint32_t i = 0; i < ni->nselc; i++) {
        if (ni->selc[i].id == id)
            return ni->selc[i].count;
    }
    return 0;
}

/* Each tracked selector's count on @ni equals the visible pods it matches; the counts are sorted, none 0. */
static void check_sel_counts(struct ks_cache *c, struct ck *k, const struct node_info *ni)
{
    for (uint32_t i = 0; i < ni->nselc; i++) {
        if (ni->selc[i].count == 0 || ni->selc[i].id >= c->sels.n ||
            (i && ni->selc[i - 1].id >= ni->selc[i].id))
            fail(k, "cache node %s: selector counts out of order, of an unknown selector, or 0",
                 nm(ni->name));
    }
    for (uint32_t id = 0; id < c->sels.n; id++) {
        uint32_t want = 0;
        for (uint32_t i = 0; i < ni->npods; i++)
            want += !ni->pods[i]->hidden && ks__sel_matches(c->sels.by_id[id], ni->pods[i]->pod);
        uint32_t got = ni_sel_count(ni, id);
        if (got != want)
            fail(k, "cache node %s: tracked selector %u counts %u pods, %u of its visible pods match it",
                 nm(ni->name), id, got, want);
    }
}

/* @e lists exactly the tracked selectors its pod matches. */
static void check_sel_list(struct ks_cache *c, struct ck *k, const struct pod_entry *e)
{
    uint32_t matched = 0;
    for (uint32_t id = 0; id < c->sels.n; id++) {
        bool listed = false;
        for (uint32_t i = 0; i < e->nsel && !listed; i++)
            listed = e->sel[i] == id;
        bool match = ks__sel_matches(c->sels.by_id[id], e->pod);
        matched += match;
        if (listed != match)
            fail(k, "cache pod %s: tracked selector %u %s, but the pod's list says otherwise",
                 pod_name(e->pod), id, match ? "matches it" : "does not match it");
    }
    if (matched != e->nsel)
        fail(k, "cache pod %s: lists %u tracked selectors, %u match it", pod_name(e->pod), e->nsel, matched);
}

/* With the label index on, @e is in the list of each of its labels, at the place it remembers. */
static void check_label_index(struct ks_cache *c, struct ck *k, const struct pod_entry *e, uint64_t *listed)
{
    const struct ks_labels *labels = &e->pod->meta.labels;
    for (uint32_t i = 0; c->labels.on && i < labels->n; i++) {
        const struct label_list *l = ks__label_index_find(&c->labels, e->pod->meta.namespace_id,
                                                          labels->items[i].key, labels->items[i].value);
        if (!l || e->label_pos[i] >= l->n || l->pods[e->label_pos[i]] != e)
            fail(k, "cache pod %s: not in the label index's list of %s=%s at its place", pod_name(e->pod),
                 nm(labels->items[i].key), nm(labels->items[i].value));
        (*listed)++;
    }
}

static int64_t scalar_of(const struct ks_resources *r, uint32_t name)
{
    for (uint32_t i = 0; i < r->nscalar; i++) {
        if (r->scalar[i].name == name)
            return r->scalar[i].value;
    }
    return 0;
}

/* NodeResourcesFit's view: no request above allocatable, no more pods than allowed. */
static void check_fit(struct ck *k, const struct node_info *ni)
{
    const struct ks_resources *a = &ni->node->alloc;
    if (ni->req_milli_cpu > a->milli_cpu)
        fail(k, "node %s overcommitted: requested cpu %lldm, allocatable %lldm", nm(ni->name),
             (long long)ni->req_milli_cpu, (long long)a->milli_cpu);
    if (ni->req_memory > a->memory)
        fail(k, "node %s overcommitted: requested memory %lld, allocatable %lld", nm(ni->name),
             (long long)ni->req_memory, (long long)a->memory);
    if (ni->req_ephemeral > a->ephemeral_storage)
        fail(k, "node %s overcommitted: requested ephemeral storage %lld, allocatable %lld", nm(ni->name),
             (long long)ni->req_ephemeral, (long long)a->ephemeral_storage);
    if ((int64_t)ni->npods > a->allowed_pods)
        fail(k, "node %s overcommitted: %u pods, allocatable %lld", nm(ni->name), ni->npods,
             (long long)a->allowed_pods);
    for (uint32_t i = 0; i < ni->nscalar; i++) {
        int64_t have = scalar_of(a, ni->scalar[i].name);
        if (ni->scalar[i].value > have)
            fail(k, "node %s overcommitted: requested %s %lld, allocatable %lld", nm(ni->name),
                 nm(ni->scalar[i].name), (long long)ni->scalar[i].value, (long long)have);
    }
}

/* The published record of a clean node against the node_info it was built from. */
/* @rec lists the pods of @entries that are not hidden, in their order (count checked before). */
static bool same_visible(const struct ks_pod *const *rec, struct pod_entry *const *entries, uint32_t n)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!entries[i]->hidden && rec[k++] != entries[i]->pod)
            return false;
    }
    return true;
}

static void check_record(struct ck *k, const struct ks_snapshot *snap, const struct node_info *ni)
{
    const struct ks_node_snap *r = ni->rec;
    const char *n = nm(ni->name);
    if (!r) {
        fail(k, "snapshot: node %s is in the cache's tree but has no record", n);
        return;
    }
    if (ks_snapshot_find(snap, ni->name) != r) {
        fail(k, "snapshot: ks_snapshot_find(%s) does not return the node's published record", n);
        return;
    }
    if (r->generation != ni->generation)
        fail(k, "snapshot: node %s record generation %llu, cache generation %llu (node unchanged since)", n,
             (unsigned long long)r->generation, (unsigned long long)ni->generation);
    const struct ks_resources *a = &ni->node->alloc;
    struct {
        const char *what;
        int64_t got, want;
    } f[] = {
        {"allocatable cpu", r->alloc_milli_cpu, a->milli_cpu},
        {"allocatable memory", r->alloc_memory, a->memory},
        {"allocatable pods", r->alloc_pods, a->allowed_pods},
        {"allocatable ephemeral storage", r->alloc_ephemeral, a->ephemeral_storage},
        {"requested cpu", r->req_milli_cpu, ni->req_milli_cpu},
        {"requested memory", r->req_memory, ni->req_memory},
        {"requested ephemeral storage", r->req_ephemeral, ni->req_ephemeral},
        {"non-zero cpu", r->nonzero_milli_cpu, ni->nonzero_milli_cpu},
        {"non-zero memory", r->nonzero_memory, ni->nonzero_memory},
        {"pods", r->npods, ni->npods - ni->nhidden},
        {"pods with affinity", r->naffinity_pods, ni->naff - ni->nhidden_aff},
        {"pods with anti-affinity", r->nanti_affinity_pods, ni->nanti - ni->nhidden_anti},
        {"host ports", r->nports, ni->nports},
        {"scalar requests", r->nreq_scalar, ni->nscalar},
        {"PVC refs", r->npvc_refs, ni->npvcs},
        {"unschedulable", !!(r->flags & KS_SNAP_UNSCHEDULABLE), ni->node->unschedulable},
    };
    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
        if (f[i].got != f[i].want) {
            fail(k, "snapshot: node %s record %s %lld, cache %lld", n, f[i].what, (long long)f[i].got,
                 (long long)f[i].want);
            return;
        }
    }
    if (r->node != ni->node)
        fail(k, "snapshot: node %s record points at another node object than the cache holds", n);
    if (!same_visible(r->pods, ni->pods, ni->npods)) {
        fail(k, "snapshot: node %s record pods differ from the cache's (hidden ones left out)", n);
        return;
    }
    if (!same_visible(r->affinity_pods, ni->aff, ni->naff))
        fail(k, "snapshot: node %s record affinity pods differ from the cache", n);
    if (!same_visible(r->anti_affinity_pods, ni->anti, ni->nanti))
        fail(k, "snapshot: node %s record anti-affinity pods differ from the cache", n);
    if (ni->nports && memcmp(r->ports, ni->ports, ni->nports * sizeof(*r->ports)) != 0)
        fail(k, "snapshot: node %s record host ports differ from the cache", n);
    if (ni->nscalar && memcmp(r->req_scalar, ni->scalar, ni->nscalar * sizeof(*r->req_scalar)) != 0)
        fail(k, "snapshot: node %s record scalar requests differ from the cache", n);
    for (uint32_t i = 0; i < ni->npvcs; i++) {
        if (r->pvc_refs[i] != ni->pvcs[i].id)
            fail(k, "snapshot: node %s record PVC %u differs from the cache", n, i);
    }
    if (!(r->flags & KS_SNAP_SEL_COUNTS) || r->nsel_counts != ni->nselc ||
        (ni->nselc && memcmp(r->sel_counts, ni->selc, ni->nselc * sizeof(*ni->selc)) != 0))
        fail(k, "snapshot: node %s record selector counts differ from the cache", n);
}

/* Whole-snapshot facts once nothing is dirty: node count, order, affinity lists. */
static void check_snapshot_lists(struct ks_cache *c, struct ck *k, const struct ks_snapshot *snap)
{
    if (snap->nnodes != c->tree.nnodes) {
        fail(k, "snapshot: %u nodes published, the cache's tree holds %u", snap->nnodes, c->tree.nnodes);
        return;
    }
    uint32_t naff = 0, nanti = 0;
    for (uint32_t i = 0; i < snap->nnodes; i++) {
        const struct ks_node_snap *r = ks_snapshot_node(snap, i);
        if (c->order[i]->rec != r) {
            fail(k, "snapshot: position %u holds node %s, the cache's order has %s", i, nm(r->name),
                 nm(c->order[i]->name));
            return;
        }
        naff += r->naffinity_pods > 0;
        nanti += r->nanti_affinity_pods > 0;
    }
    if (naff != snap->naffinity_nodes || nanti != snap->nanti_affinity_nodes)
        fail(k, "snapshot: %u/%u nodes listed with affinity/anti-affinity pods, records say %u/%u",
             snap->naffinity_nodes, snap->nanti_affinity_nodes, naff, nanti);
    for (uint32_t i = 0; i < snap->naffinity_nodes; i++) {
        uint32_t x = snap->affinity_nodes[i];
        if (x >= snap->nnodes || ks_snapshot_node(snap, x)->naffinity_pods == 0)
            fail(k, "snapshot: affinity list entry %u (index %u) names a node without affinity pods", i, x);
    }
    for (uint32_t i = 0; i < snap->nanti_affinity_nodes; i++) {
        uint32_t x = snap->anti_affinity_nodes[i];
        if (x >= snap->nnodes || ks_snapshot_node(snap, x)->nanti_affinity_pods == 0)
            fail(k, "snapshot: anti-affinity list entry %u (index %u) names a node without such pods", i, x);
    }
}

uint32_t ks_cache_check(struct ks_cache *c, unsigned flags, uint32_t *nassumed, char *msg, uint32_t len)
{
    struct ck k = {.msg = msg, .len = len};
    struct scratch s = {0};
    uint64_t pods_on_nodes = 0, in_tree = 0;
    uint32_t assumed = 0;

    if (msg && len)
        msg[0] = '\0';
    cache_lock(c);
    ks_rcu_read_lock();
    const struct ks_snapshot *snap = &c->current->pub;
    bool all_clean = c->ndirty == 0 && !c->order_dirty;

    for (uint32_t b = 0; b <= c->nmask; b++) {
        for (struct node_info *ni = c->nbuckets[b]; ni; ni = ni->hnext) {
            struct sums sum;
            if (node_sums(c, &k, ni, &sum, &s) < 0) {
                fail(&k, "cache check: out of memory");
                goto out;
            }
            check_aggregates(&k, ni, &sum, &s);
            check_sel_counts(c, &k, ni);
            pods_on_nodes += ni->npods;
            if (!ni->node) {
                if (ni->npods == 0)
                    fail(&k, "cache node %s: deleted and without pods, but still held", nm(ni->name));
                if (ni->rec)
                    fail(&k, "snapshot: deleted node %s still has a published record", nm(ni->name));
                continue;
            }
            in_tree++;
            if (flags & KS_CACHE_CHECK_FIT)
                check_fit(&k, ni);
            if ((flags & KS_CACHE_CHECK_SNAPSHOT) && ni->dirty_idx == KS__NO_INDEX && !c->order_dirty)
                check_record(&k, snap, ni);
        }
    }
    if (in_tree != c->tree.nnodes)
        fail(&k, "cache: %llu nodes, the tree holds %u", (unsigned long long)in_tree, c->tree.nnodes);
    if (pods_on_nodes != c->pods.n)
        fail(&k, "cache: %llu pods on nodes, the pod table holds %u", (unsigned long long)pods_on_nodes,
             c->pods.n);
    uint64_t entries = 0, slotted[KS_CACHE_PRIORITIES] = {0}, unslotted = 0, labelled = 0;
    int32_t lowest = INT32_MAX;
    for (uint32_t b = 0; b <= c->pods.mask; b++) {
        for (struct pod_entry *e = c->pods.buckets[b]; e; e = e->hnext) {
            entries++;
            uint32_t slot = 0;
            while (slot < c->nprio && c->prio[slot].priority != e->pod->priority)
                slot++;
            if (slot < c->nprio)
                slotted[slot]++;
            else
                unslotted++;
            if (e->pod->priority < lowest)
                lowest = e->pod->priority;
            assumed += e->assumed;
            check_sel_list(c, &k, e);
            check_label_index(c, &k, e, &labelled);
            if (!e->ni || e->slot >= e->ni->npods || e->ni->pods[e->slot] != e)
                fail(&k, "cache pod index: pod %s (node %s) is not on its node's pod list", pod_name(e->pod),
                     nm(e->node));
        }
    }
    if (entries != c->pods.n)
        fail(&k, "cache pod table: %llu entries chained, count %u", (unsigned long long)entries, c->pods.n);
    uint64_t indexed = 0;
    for (uint32_t b = 0; c->labels.buckets && b <= c->labels.mask; b++) {
        for (const struct label_list *l = c->labels.buckets[b]; l; l = l->hnext)
            indexed += l->n;
    }
    if (indexed != labelled)
        fail(&k, "cache label index: %llu entries listed, the pods have %llu labels",
             (unsigned long long)indexed, (unsigned long long)labelled);
    for (uint32_t i = 0; i < c->nprio; i++) {
        if (slotted[i] != c->prio[i].n || (i && c->prio[i - 1].priority >= c->prio[i].priority))
            fail(&k, "cache priorities: %u pods of priority %d counted %u, or the slots are out of order",
                 (unsigned)slotted[i], c->prio[i].priority, c->prio[i].n);
    }
    if (unslotted != c->prio_overflow || ks__cache_min_priority(c) > lowest)
        fail(&k, "cache priorities: %llu pods without a slot counted %u; lowest %d, floor %d",
             (unsigned long long)unslotted, c->prio_overflow, lowest, ks__cache_min_priority(c));
    uint32_t listed = 0;
    for (struct pod_entry *e = c->assumed; e; e = e->anext) {
        listed++;
        if (!e->assumed || (e->anext && e->anext->aprev != e) || (!e->aprev && c->assumed != e))
            fail(&k, "cache assumed list: pod %s is listed but not assumed, or the links are broken",
                 pod_name(e->pod));
        if (listed > entries)
            break;
    }
    if (listed != assumed)
        fail(&k, "cache: %u pods assumed, %u on the assumed list", assumed, listed);
    if ((flags & KS_CACHE_CHECK_SNAPSHOT) && all_clean)
        check_snapshot_lists(c, &k, snap);
out:
    ks_rcu_read_unlock();
    cache_unlock(c);
    free(s.scalar);
    free(s.ports);
    free(s.pvcs);
    if (nassumed)
        *nassumed = assumed;
    return k.n;
}
