/*
 * helper_spread_counter.c - matching pods per topology domain, kept across scheduling
 * cycles (ksched/plugin_helpers_spread.h, struct ks_spread_counter).
 *
 * Upstream's PreFilter and PreScore walk every node and every pod on it for each pod they
 * schedule. Here the work is kept across cycles, in two parts:
 *   - a layout per way of counting the nodes (the terms' keys and inclusion policies, the
 *     pod's affinity and tolerations where a policy reads them, whether a node needs every
 *     key): per node position the domain each term counts it under, and per term the
 *     eligible nodes per domain. The shared node memo (plugin_helpers_memo.h) hands it the
 *     positions whose record changed since it last looked; it re-reads their labels and
 *     logs them.
 *   - an entry per query (a layout, a namespace, the terms' selectors): per term the
 *     matching pods per domain, and the positions holding matching pods with their counts
 *     (only those: an entry costs memory for the pods it counts, not for the nodes). It
 *     catches up by recounting the positions its layout logged since it last did, each
 *     with ks_spread_node_count(); when the log no longer reaches back (a new entry, a new
 *     node order), by recounting every position - or none when the query says its
 *     selectors match no pod of the snapshot (a new workload's).
 * A count is then one sync of the layout, the entry's catch-up and copying its domains
 * into the cycle's arena: O(nodes / 256) chunk checks + O(changed positions) + O(domains).
 *
 * Invariants: a layout's node tables are the sums of its positions' domains; an entry's
 * sums are the sums of its slots, each slot keeping the domain its counts were added
 * under; an entry reflects its layout's positions up to its seq. A layout holds one
 * reference to the pod whose affinity and tolerations it counts with, and lives as long
 * as an entry uses it.
 */
#include "helper_spread_internal.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/cache.h"
#include "ksched/plugin_helpers_memo.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Positions a layout remembers having changed: an entry further behind recounts them all. */
enum { LOG_SIZE = 4096 };

/* No catch-up yet: the entry recounts every position. */
#define NEVER UINT64_MAX

/* A persistent table value -> {nodes, count}, on the heap. */
struct heap_table {
    uint32_t used; /* occupied slots (live or not: entries are never removed) */
    uint32_t live; /* values with nodes > 0 */
    uint32_t mask;
    struct ks_spread_domain *slots;
};

struct layout {
    struct ks_arena arena; /* the terms' copies */
    bool require_all, any_affinity, any_taints;
    uint32_t nterms;
    struct ks_spread_term *terms; /* keys and policies; selectors are the entries' */
    const struct ks_pod *tmpl;    /* referenced: the affinity and tolerations counted with */
    struct ks_node_memo memo;     /* the record generations read (plugin_helpers_memo.h) */
    uint32_t cap;                 /* positions allocated in dom */
    /* [cap * nterms]: the value a position counts under, KS_ID_NONE for none; a per_node term's is
     * KS_ID_EMPTY for a position holding a node */
    uint32_t *dom;
    struct heap_table *nodes; /* [nterms] value -> eligible nodes */
    uint64_t seq;             /* positions logged so far */
    uint32_t *log;            /* [LOG_SIZE]: the position logged as number s is log[s % LOG_SIZE] */
    uint32_t refs;            /* entries using it */
};

struct entry {
    struct ks_arena arena; /* the selectors' copies */
    struct layout *lay;
    uint32_t ns;
    uint32_t nterms;
    struct ks_spread_term *terms; /* selectors, and the sel_id of the last query */
    int32_t host_term;            /* the first per_node term, -1: none */
    uint64_t seq;                 /* the layout's log this entry reflects, NEVER: nothing yet */
    /* the positions holding matching pods: slot i is position spos[i] */
    uint32_t nslots, cap_slots;
    uint32_t *spos;          /* [cap_slots] */
    uint32_t *scnt;          /* [cap_slots * nterms] matching pods, per term */
    uint32_t *sdom;          /* [cap_slots * nterms] the value they were added under */
    uint32_t mask;           /* index slots - 1 */
    uint32_t *index;         /* open addressing by position: slot + 1, 0 for empty */
    struct heap_table *sums; /* [nterms] value -> matching pods */
    uint64_t last_use;
};

struct ks_spread_counter {
    uint32_t max, n;
    uint64_t clock;
    struct entry **entries;
};

/* ---- tables -------------------------------------------------------------------------------- */

/* Rehash into a table sized for the live values (at most 1/4 full), dropping dead ones. */
static int heap_table_grow(struct heap_table *t)
{
    uint32_t cap = 16;
    while (cap < 4 * ((uint64_t)t->live + 1))
        cap *= 2;
    struct ks_spread_domain *slots = malloc((size_t)cap * sizeof(*slots));
    if (!slots)
        return -ENOMEM;
    for (uint32_t i = 0; i < cap; i++)
        slots[i].value = KS_ID_NONE;
    /* values whose last node left are dropped while rehashing */
    uint32_t used = 0;
    for (uint32_t i = 0; t->slots && i <= t->mask; i++) {
        if (t->slots[i].value != KS_ID_NONE && t->slots[i].nodes) {
            *ks__spread_table_probe(slots, cap - 1, t->slots[i].value) = t->slots[i];
            used++;
        }
    }
    free(t->slots);
    t->slots = slots;
    t->mask = cap - 1;
    t->used = used;
    return 0;
}

/* Add (sign 1) or take away (sign -1) one position's contribution to a value. */
static int heap_table_apply(struct heap_table *t, uint32_t value, uint32_t count, int sign)
{
    if (sign > 0 && (!t->slots || 2 * ((uint64_t)t->used + 1) > (uint64_t)t->mask + 1) &&
        heap_table_grow(t) < 0)
        return -ENOMEM;
    struct ks_spread_domain *s = ks__spread_table_probe(t->slots, t->mask, value);
    if (s->value == KS_ID_NONE) {
        /* only additions reach a new value: a contribution is removed from where it was added */
        *s = (struct ks_spread_domain){.value = value};
        t->used++;
    }
    if (sign > 0) {
        t->live += s->nodes == 0;
        s->nodes++;
        s->count += count;
    } else {
        s->nodes--;
        s->count -= count;
        t->live -= s->nodes == 0;
    }
    return 0;
}

static const struct ks_spread_domain *heap_table_find(const struct heap_table *t, uint32_t value)
{
    if (!t->slots)
        return NULL;
    const struct ks_spread_domain *s = ks__spread_table_probe(t->slots, t->mask, value);
    return s->value == KS_ID_NONE || !s->nodes ? NULL : s;
}

static void heap_tables_free(struct heap_table *t, uint32_t n)
{
    for (uint32_t i = 0; t && i < n; i++)
        free(t[i].slots);
    free(t);
}

/* ---- layouts ------------------------------------------------------------------------------- */

static bool labels_equal(const struct ks_labels *a, const struct ks_labels *b)
{
    return a->n == b->n && (a->n == 0 || memcmp(a->items, b->items, a->n * sizeof(*a->items)) == 0);
}

static bool node_selector_equal(const struct ks_node_selector *a, const struct ks_node_selector *b)
{
    if (!a || !b)
        return a == b;
    if (a->nterms != b->nterms)
        return false;
    for (uint32_t i = 0; i < a->nterms; i++) {
        const struct ks_node_selector_term *x = &a->terms[i], *y = &b->terms[i];
        if (!ks__spread_requirements_equal(x->exprs, x->nexprs, y->exprs, y->nexprs) ||
            !ks__spread_requirements_equal(x->fields, x->nfields, y->fields, y->nfields))
            return false;
    }
    return true;
}

/* The pod's required node affinity as GetRequiredNodeAffinity reads it. */
static const struct ks_node_selector *required_of(const struct ks_pod *pod)
{
    return pod->affinity.node_affinity ? pod->affinity.node_affinity->required : NULL;
}

static bool tolerations_equal(const struct ks_pod *a, const struct ks_pod *b)
{
    if (a->ntolerations != b->ntolerations)
        return false;
    for (uint32_t i = 0; i < a->ntolerations; i++) {
        const struct ks_toleration *x = &a->tolerations[i], *y = &b->tolerations[i];
        if (x->key != y->key || x->op != y->op || x->value != y->value || x->effect != y->effect ||
            x->toleration_seconds != y->toleration_seconds)
            return false;
    }
    return true;
}

/*
 * Whether @l counts the nodes as @q would: the same keys and policies, and the pod's
 * affinity and tolerations where a policy reads them.
 */
static bool layout_matches(const struct layout *l, const struct ks_spread_query *q)
{
    if (l->require_all != q->require_all || l->nterms != q->nterms)
        return false;
    for (uint32_t t = 0; t < q->nterms; t++) {
        const struct ks_spread_term *x = &l->terms[t], *y = &q->terms[t];
        if (x->topology_key != y->topology_key || x->honor_affinity != y->honor_affinity ||
            x->honor_taints != y->honor_taints || x->per_node != y->per_node)
            return false;
    }
    if (l->any_affinity && (!labels_equal(&l->tmpl->node_selector, &q->pod->node_selector) ||
                            !node_selector_equal(required_of(l->tmpl), required_of(q->pod))))
        return false;
    return !l->any_taints || tolerations_equal(l->tmpl, q->pod);
}

static void layout_put(struct layout *l)
{
    if (!l || --l->refs)
        return;
    heap_tables_free(l->nodes, l->nterms);
    ks_node_memo_destroy(&l->memo);
    free(l->dom);
    free(l->log);
    ks_pod_put(l->tmpl);
    ks_arena_destroy(&l->arena);
    free(l);
}

static struct layout *layout_new(const struct ks_spread_query *q)
{
    struct layout *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    l->refs = 1;
    l->require_all = q->require_all;
    l->nterms = q->nterms;
    l->terms = ks_arena_calloc(&l->arena, q->nterms ? q->nterms : 1, sizeof(*l->terms));
    l->nodes = calloc(q->nterms ? q->nterms : 1, sizeof(*l->nodes));
    l->log = malloc(LOG_SIZE * sizeof(*l->log));
    l->tmpl = ks_pod_get(q->pod);
    if (!l->terms || !l->nodes || !l->log) {
        layout_put(l);
        return NULL;
    }
    for (uint32_t t = 0; t < q->nterms; t++) {
        l->terms[t] = q->terms[t];
        l->terms[t].selector = NULL;
        l->any_affinity |= q->terms[t].honor_affinity && !q->terms[t].per_node;
        l->any_taints |= q->terms[t].honor_taints && !q->terms[t].per_node;
    }
    return l;
}

static int layout_reserve(struct layout *l, uint32_t nnodes)
{
    if (nnodes <= l->cap)
        return 0;
    uint32_t cap = l->cap ? l->cap : 64;
    while (cap < nnodes)
        cap *= 2;
    size_t per = l->nterms ? l->nterms : 1;
    uint32_t *dom = realloc(l->dom, (size_t)cap * per * sizeof(*dom));
    if (!dom)
        return -ENOMEM;
    for (size_t i = (size_t)l->cap * per; i < (size_t)cap * per; i++)
        dom[i] = KS_ID_NONE;
    l->dom = dom;
    l->cap = cap;
    return 0;
}

/* Take away what position @i was counted under. */
static void layout_clear(struct layout *l, uint32_t i)
{
    for (uint32_t t = 0; t < l->nterms; t++) {
        uint32_t *dom = &l->dom[(size_t)i * l->nterms + t];
        if (*dom != KS_ID_NONE && !l->terms[t].per_node)
            heap_table_apply(&l->nodes[t], *dom, 0, -1);
        *dom = KS_ID_NONE;
    }
}

/* The domains record @r at position @i (cleared) counts under. */
static int layout_count(struct layout *l, uint32_t i, const struct ks_node_snap *r)
{
    const struct ks_node *node = r->node;
    if (!node || !(r->flags & KS_SNAP_HAS_NODE))
        return 0;
    const struct ks_labels *labels = &node->meta.labels;
    for (uint32_t t = 0; t < l->nterms; t++) {
        if (l->terms[t].per_node)
            l->dom[(size_t)i * l->nterms + t] = KS_ID_EMPTY; /* counted on any node */
    }
    if (l->require_all) {
        for (uint32_t t = 0; t < l->nterms; t++) {
            if (!ks_labels_get(labels, l->terms[t].topology_key, NULL))
                return 0;
        }
    }
    int affinity = -1, taints = -1; /* computed once per node, when a term asks */
    for (uint32_t t = 0; t < l->nterms; t++) {
        const struct ks_spread_term *term = &l->terms[t];
        if (term->per_node)
            continue;
        if (term->honor_affinity) {
            if (affinity < 0)
                affinity = ks_spread_affinity_matches(l->tmpl, node);
            if (!affinity)
                continue;
        }
        if (term->honor_taints) {
            if (taints < 0)
                taints = ks_spread_taints_tolerated(l->tmpl, node);
            if (!taints)
                continue;
        }
        uint32_t value = KS_ID_EMPTY; /* node.Labels[key] reads "" for a missing key */
        ks_labels_get(labels, term->topology_key, &value);
        if (heap_table_apply(&l->nodes[t], value, 0, 1) < 0)
            return -ENOMEM;
        l->dom[(size_t)i * l->nterms + t] = value;
    }
    return 0;
}

/* ks_node_memo_update_fn: position @i now holds @r (NULL: past the end). Logged either way. */
static int layout_update(void *ctx, uint32_t i, const struct ks_node_snap *r)
{
    struct layout *l = ctx;
    l->log[l->seq++ % LOG_SIZE] = i;
    layout_clear(l, i);
    return r ? layout_count(l, i, r) : 0;
}

static int layout_sync(struct layout *l, const struct ks_snapshot *snap)
{
    if (!ks_node_memo_synced(&l->memo, snap) && layout_reserve(l, snap->nnodes) < 0)
        return -ENOMEM;
    return ks_node_memo_sync(&l->memo, snap, layout_update, l);
}

/* ---- entries ------------------------------------------------------------------------------- */

static void entry_destroy(struct entry *e)
{
    if (!e)
        return;
    heap_tables_free(e->sums, e->nterms);
    free(e->spos);
    free(e->scnt);
    free(e->sdom);
    free(e->index);
    layout_put(e->lay);
    ks_arena_destroy(&e->arena);
    free(e);
}

static bool entry_matches(const struct entry *e, const struct ks_spread_query *q)
{
    if (e->ns != q->ns || !layout_matches(e->lay, q))
        return false;
    for (uint32_t t = 0; t < q->nterms; t++) {
        if (!ks_spread_selector_equal(e->terms[t].selector, q->terms[t].selector))
            return false;
    }
    return true;
}

/* A new entry for @q over layout @l (a reference taken). */
static struct entry *entry_new(const struct ks_spread_query *q, struct layout *l)
{
    struct entry *e = calloc(1, sizeof(*e));
    if (!e)
        return NULL;
    e->ns = q->ns;
    e->nterms = q->nterms;
    e->host_term = -1;
    e->seq = NEVER;
    e->terms = ks_arena_calloc(&e->arena, q->nterms ? q->nterms : 1, sizeof(*e->terms));
    e->sums = calloc(q->nterms ? q->nterms : 1, sizeof(*e->sums));
    e->lay = l;
    l->refs++;
    if (!e->terms || !e->sums)
        goto err;
    for (uint32_t t = 0; t < q->nterms; t++) {
        e->terms[t] = q->terms[t];
        if (q->terms[t].per_node && e->host_term < 0)
            e->host_term = (int32_t)t;
        if (q->terms[t].selector &&
            !(e->terms[t].selector = ks_spread_selector_copy(&e->arena, q->terms[t].selector)))
            goto err;
    }
    return e;
err:
    entry_destroy(e);
    return NULL;
}

static inline uint32_t pos_hash(uint32_t pos, uint32_t mask)
{
    return (uint32_t)(((uint64_t)pos * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

/* The slot of position @pos, UINT32_MAX for none. */
static uint32_t slot_of_pos(const struct entry *e, uint32_t pos)
{
    if (!e->index)
        return UINT32_MAX;
    for (uint32_t i = pos_hash(pos, e->mask); e->index[i]; i = (i + 1) & e->mask) {
        if (e->spos[e->index[i] - 1] == pos)
            return e->index[i] - 1;
    }
    return UINT32_MAX;
}

/* Index every slot again, in a table of at least twice as many entries as slots can be. */
static int index_rebuild(struct entry *e, uint32_t cap_slots)
{
    uint32_t size = 16;
    while (size < 2 * (uint64_t)cap_slots)
        size *= 2;
    uint32_t *index = calloc(size, sizeof(*index));
    if (!index)
        return -ENOMEM;
    free(e->index);
    e->index = index;
    e->mask = size - 1;
    for (uint32_t s = 0; s < e->nslots; s++) {
        uint32_t i = pos_hash(e->spos[s], e->mask);
        while (e->index[i])
            i = (i + 1) & e->mask;
        e->index[i] = s + 1;
    }
    return 0;
}

/* A new slot for position @pos (none yet), its counts 0. UINT32_MAX when out of memory. */
static uint32_t slot_add(struct entry *e, uint32_t pos)
{
    size_t per = e->nterms ? e->nterms : 1;
    if (e->nslots == e->cap_slots) {
        uint32_t cap = e->cap_slots ? 2 * e->cap_slots : 16;
        uint32_t *spos = realloc(e->spos, (size_t)cap * sizeof(*spos));
        if (spos)
            e->spos = spos;
        uint32_t *scnt = realloc(e->scnt, (size_t)cap * per * sizeof(*scnt));
        if (scnt)
            e->scnt = scnt;
        uint32_t *sdom = realloc(e->sdom, (size_t)cap * per * sizeof(*sdom));
        if (sdom)
            e->sdom = sdom;
        if (!spos || !scnt || !sdom || index_rebuild(e, cap) < 0)
            return UINT32_MAX;
        e->cap_slots = cap;
    }
    uint32_t s = e->nslots++;
    e->spos[s] = pos;
    for (size_t t = 0; t < per; t++) {
        e->scnt[s * per + t] = 0;
        e->sdom[s * per + t] = KS_ID_NONE;
    }
    uint32_t i = pos_hash(pos, e->mask);
    while (e->index[i])
        i = (i + 1) & e->mask;
    e->index[i] = s + 1;
    return s;
}

/* Drop slot @s: the last slot moves into its place; the index closes the gap (linear probing). */
static void slot_remove(struct entry *e, uint32_t s)
{
    size_t per = e->nterms ? e->nterms : 1;
    /* unindex s */
    uint32_t i = pos_hash(e->spos[s], e->mask);
    while (e->index[i] != s + 1)
        i = (i + 1) & e->mask;
    e->index[i] = 0;
    for (uint32_t j = (i + 1) & e->mask; e->index[j]; j = (j + 1) & e->mask) {
        uint32_t home = pos_hash(e->spos[e->index[j] - 1], e->mask);
        /* move j's entry into the gap at i unless its home lies cyclically in (i, j] */
        bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            e->index[i] = e->index[j];
            e->index[j] = 0;
            i = j;
        }
    }
    uint32_t last = --e->nslots;
    if (s == last)
        return;
    e->spos[s] = e->spos[last];
    memcpy(&e->scnt[s * per], &e->scnt[last * per], per * sizeof(*e->scnt));
    memcpy(&e->sdom[s * per], &e->sdom[last * per], per * sizeof(*e->sdom));
    for (i = pos_hash(e->spos[s], e->mask); e->index[i] != last + 1; i = (i + 1) & e->mask)
        ;
    e->index[i] = s + 1;
}

/* Take away what position @pos contributed. */
static void entry_uncount(struct entry *e, uint32_t pos)
{
    uint32_t s = slot_of_pos(e, pos);
    if (s == UINT32_MAX)
        return;
    for (uint32_t t = 0; t < e->nterms; t++) {
        size_t k = (size_t)s * e->nterms + t;
        if (e->scnt[k])
            heap_table_apply(&e->sums[t], e->sdom[k], e->scnt[k], -1);
    }
    slot_remove(e, s);
}

/* Count position @pos of @snap (its contribution taken away first) under its layout's domains. */
static int entry_count(struct entry *e, const struct ks_snapshot *snap, uint32_t pos)
{
    entry_uncount(e, pos);
    if (pos >= snap->nnodes)
        return 0;
    const struct ks_node_snap *r = ks_snapshot_node(snap, pos);
    const uint32_t *dom = &e->lay->dom[(size_t)pos * e->nterms];
    uint32_t s = UINT32_MAX;
    for (uint32_t t = 0; t < e->nterms; t++) {
        if (dom[t] == KS_ID_NONE)
            continue;
        const struct ks_spread_term *term = &e->terms[t];
        uint32_t count = ks_spread_node_count(r, term->selector, e->ns, term->sel_id);
        if (!count)
            continue;
        if (s == UINT32_MAX && (s = slot_add(e, pos)) == UINT32_MAX)
            return -ENOMEM;
        if (heap_table_apply(&e->sums[t], dom[t], count, 1) < 0)
            return -ENOMEM;
        e->scnt[(size_t)s * e->nterms + t] = count;
        e->sdom[(size_t)s * e->nterms + t] = dom[t];
    }
    return 0;
}

/* Nothing counted. */
static void entry_reset(struct entry *e)
{
    while (e->nslots)
        entry_uncount(e, e->spos[e->nslots - 1]);
}

/*
 * Bring @e to its layout (synced to @snap): recount the positions logged since it last
 * did, or every position when the log does not reach back - none when @q's selectors
 * match no pod of @snap. On failure the entry is left to recount everything next time.
 */
static int entry_catch_up(struct entry *e, const struct ks_snapshot *snap, const struct ks_spread_query *q)
{
    const struct layout *l = e->lay;
    int rc = 0;
    if (e->seq != NEVER && l->seq - e->seq <= LOG_SIZE) {
        for (uint64_t s = e->seq; s < l->seq && rc == 0; s++)
            rc = entry_count(e, snap, l->log[s % LOG_SIZE]);
    } else {
        bool empty = true;
        for (uint32_t t = 0; t < q->nterms; t++)
            empty &= q->terms[t].empty || !q->terms[t].selector;
        entry_reset(e);
        for (uint32_t pos = 0; !empty && pos < snap->nnodes && rc == 0; pos++)
            rc = entry_count(e, snap, pos);
    }
    e->seq = rc == 0 ? l->seq : NEVER;
    return rc;
}

/* ---- exports ------------------------------------------------------------------------------- */

/* Term @t's domains (its layout's live values) with @e's counts into a cycle table in @arena. */
static int table_export(const struct entry *e, uint32_t t, struct ks_arena *arena,
                        struct ks_spread_domains *out)
{
    const struct heap_table *nodes = &e->lay->nodes[t];
    if (ks__spread_domains_alloc(out, arena, nodes->live + 4) < 0)
        return -ENOMEM;
    for (uint32_t i = 0; nodes->slots && i <= nodes->mask; i++) {
        const struct ks_spread_domain *s = &nodes->slots[i];
        if (s->value == KS_ID_NONE || s->nodes == 0)
            continue;
        const struct ks_spread_domain *sum = heap_table_find(&e->sums[t], s->value);
        *ks__spread_table_probe(out->slots, out->mask, s->value) =
            (struct ks_spread_domain){s->value, 1, sum ? sum->count : 0};
        out->n++;
    }
    return 0;
}

/* The counts of the listed nodes alone. */
static int listing_export(const struct entry *e, const struct ks_snapshot *snap,
                          const struct ks_spread_query *q, struct ks_arena *arena,
                          struct ks_spread_domains *out)
{
    for (uint32_t t = 0; t < q->nterms; t++) {
        if (ks__spread_domains_alloc(&out[t], arena, q->nlisting + 4) < 0)
            return -ENOMEM;
        for (uint32_t k = 0; k < q->nlisting && !e->terms[t].per_node; k++) {
            uint32_t i = ks_snapshot_position(snap, q->listing[k]);
            uint32_t value = i == UINT32_MAX ? KS_ID_NONE : e->lay->dom[(size_t)i * e->nterms + t];
            if (value == KS_ID_NONE)
                continue;
            struct ks_spread_domain *d = ks__spread_table_probe(out[t].slots, out[t].mask, value);
            if (d->value == KS_ID_NONE) {
                *d = (struct ks_spread_domain){value, 1, 0};
                out[t].n++;
            }
            uint32_t s = slot_of_pos(e, i);
            d->count += s == UINT32_MAX ? 0 : e->scnt[(size_t)s * e->nterms + t];
        }
    }
    return 0;
}

/* The per_node term's positions with matching pods and their counts, copied into @arena. */
static int hosts_export(const struct entry *e, struct ks_arena *arena, struct ks_spread_hosts *out)
{
    *out = (struct ks_spread_hosts){0};
    if (e->host_term < 0 || !e->nslots)
        return 0;
    out->pos = ks_arena_calloc(arena, e->nslots, sizeof(*out->pos));
    out->count = ks_arena_calloc(arena, e->nslots, sizeof(*out->count));
    if (!out->pos || !out->count)
        return -ENOMEM;
    for (uint32_t s = 0; s < e->nslots; s++) {
        uint32_t count = e->scnt[(size_t)s * e->nterms + (uint32_t)e->host_term];
        if (!count)
            continue;
        out->pos[out->n] = e->spos[s];
        out->count[out->n++] = count;
    }
    return 0;
}

/* ---- the counter --------------------------------------------------------------------------- */

int ks_spread_counter_create(uint32_t max_entries, struct ks_spread_counter **out)
{
    struct ks_spread_counter *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->max = max_entries ? max_entries : 1;
    if (!(c->entries = calloc(c->max, sizeof(*c->entries)))) {
        free(c);
        return -ENOMEM;
    }
    *out = c;
    return 0;
}

void ks_spread_counter_destroy(struct ks_spread_counter *c)
{
    if (!c)
        return;
    for (uint32_t i = 0; i < c->n; i++)
        entry_destroy(c->entries[i]);
    free(c->entries);
    free(c);
}

/* The entry of @q: found, or made (in the place of the least recently used one when all are taken). */
static struct entry *entry_of(struct ks_spread_counter *c, const struct ks_spread_query *q)
{
    struct layout *l = NULL;
    for (uint32_t i = 0; i < c->n; i++) {
        if (entry_matches(c->entries[i], q))
            return c->entries[i];
        if (!l && layout_matches(c->entries[i]->lay, q))
            l = c->entries[i]->lay;
    }
    if (l) {
        l->refs++;
    } else if (!(l = layout_new(q))) {
        return NULL;
    }
    struct entry *e = entry_new(q, l);
    layout_put(l); /* the entry holds it now */
    if (!e)
        return NULL;
    uint32_t at = 0;
    if (c->n < c->max) {
        at = c->n++;
    } else {
        for (uint32_t i = 1; i < c->n; i++) {
            if (c->entries[i]->last_use < c->entries[at]->last_use)
                at = i;
        }
        entry_destroy(c->entries[at]);
    }
    c->entries[at] = e;
    return e;
}

int ks_spread_counter_count(struct ks_spread_counter *c, const struct ks_snapshot *snap,
                            const struct ks_spread_query *q, struct ks_arena *arena,
                            struct ks_spread_domains *out)
{
    struct entry *e = entry_of(c, q);
    if (!e)
        return -ENOMEM;
    e->last_use = ++c->clock;
    for (uint32_t t = 0; t < q->nterms; t++)
        e->terms[t].sel_id = q->terms[t].sel_id; /* this snapshot's: how the changed nodes are counted */
    if (layout_sync(e->lay, snap) < 0 || entry_catch_up(e, snap, q) < 0)
        return -ENOMEM;
    if (q->hosts && hosts_export(e, arena, q->hosts) < 0)
        return -ENOMEM;
    if (q->nlisting)
        return listing_export(e, snap, q, arena, out);
    for (uint32_t t = 0; t < q->nterms; t++) {
        if (table_export(e, t, arena, &out[t]) < 0)
            return -ENOMEM;
    }
    return 0;
}
