/*
 * helper_topology_pairs.c - topology-pair counts, the namespace index and selectors with
 * merged label keys (see include/ksched/plugin_helpers_topology.h).
 *
 * The pair map is open addressing with linear probing over a power-of-two table kept at
 * most half full, so a miss (the common case for Filter: most nodes' pairs are absent)
 * ends within a couple of probes. Entries are never removed: an entry whose count returns
 * to 0 stays in place, which keeps probing correct without tombstones and gives the
 * "every key ever inserted" list upstream's scoreMap has. Tables live in an arena; growing
 * leaves the old table there until the arena is reset (once per scheduling cycle).
 *
 * The memo keeps counts over the whole snapshot from one cycle to the next, each node's
 * share tagged with the generation of the record it came from (see the header for why an
 * equal generation is the same content); only changed records are recounted.
 *
 * Mirrors the map operations of interpodaffinity/filtering.go (topologyToMatchedTermCount:
 * update, merge, clone), the namespace lister that plugin.go reads, and
 * applyMatchLabelKeysAndMismatchLabelKeys of pkg/registry/core/pod/strategy.go.
 */
#include "ksched/plugin_helpers_topology.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ksched/loader.h"

/* ---- topology pairs ----------------------------------------------------------------------- */

#define TP_MIN_SLOTS 16u

static uint32_t slots_for(uint32_t pairs)
{
    uint32_t n = TP_MIN_SLOTS;
    while (n < 0x80000000u && n / 2 < pairs)
        n <<= 1;
    return n;
}

int ks_tp_map_init(struct ks_tp_map *m, struct ks_arena *a, uint32_t hint)
{
    uint32_t n = slots_for(hint);
    struct ks_tp_entry *slots = ks_arena_calloc(a, n, sizeof(*slots));

    memset(m, 0, sizeof(*m));
    if (!slots)
        return -ENOMEM;
    m->slots = slots;
    m->mask = n - 1;
    return 0;
}

/* Place @e into the (larger, empty-slotted) table @slots; the pair is known to be absent. */
static void place(struct ks_tp_entry *slots, uint32_t mask, const struct ks_tp_entry *e)
{
    uint32_t i = ks__tp_hash(e->key, e->value, mask);
    while (slots[i].key != KS_ID_EMPTY)
        i = (i + 1) & mask;
    slots[i] = *e;
}

/* Make room for one more entry: the table stays at most half full. */
static int reserve_one(struct ks_tp_map *m, struct ks_arena *a)
{
    uint32_t cap = m->slots ? m->mask + 1 : 0;
    if (cap && (m->used + 1) * 2 <= cap)
        return 0;
    uint32_t n = slots_for(m->used + 1);
    struct ks_tp_entry *slots = ks_arena_calloc(a, n, sizeof(*slots));
    if (!slots)
        return -ENOMEM;
    for (uint32_t i = 0; i < cap; i++) {
        if (m->slots[i].key != KS_ID_EMPTY)
            place(slots, n - 1, &m->slots[i]);
    }
    m->slots = slots;
    m->mask = n - 1;
    return 0;
}

static int add_key(struct ks_tp_map *m, struct ks_arena *a, uint32_t key)
{
    for (uint32_t i = 0; i < m->nkeys; i++) {
        if (m->keys[i] == key)
            return 0;
    }
    if (m->nkeys == m->keys_cap) {
        uint32_t cap = m->keys_cap ? m->keys_cap * 2 : 4;
        uint32_t *keys = ks_arena_calloc(a, cap, sizeof(*keys));
        if (!keys)
            return -ENOMEM;
        if (m->nkeys)
            memcpy(keys, m->keys, m->nkeys * sizeof(*keys));
        m->keys = keys;
        m->keys_cap = cap;
    }
    m->keys[m->nkeys++] = key;
    return 0;
}

int ks_tp_map_add(struct ks_tp_map *m, struct ks_arena *a, uint32_t key, uint32_t value, int64_t delta)
{
    if (m->slots) {
        for (uint32_t i = ks__tp_hash(key, value, m->mask);; i = (i + 1) & m->mask) {
            struct ks_tp_entry *e = &m->slots[i];
            if (e->key == key && e->value == value) {
                bool was_zero = e->count == 0;
                e->count += delta;
                if (was_zero && e->count != 0)
                    m->nonzero++;
                else if (!was_zero && e->count == 0)
                    m->nonzero--;
                return 0;
            }
            if (e->key == KS_ID_EMPTY)
                break;
        }
    }
    /* a new pair (a failure may leave its key listed: harmless, lookups of it find nothing) */
    if (add_key(m, a, key) || reserve_one(m, a))
        return -ENOMEM;
    struct ks_tp_entry e = {.key = key, .value = value, .count = delta};
    place(m->slots, m->mask, &e);
    m->used++;
    m->nonzero += delta != 0;
    return 0;
}

int ks_tp_map_clone(struct ks_tp_map *dst, const struct ks_tp_map *src, struct ks_arena *a)
{
    struct ks_tp_map m = *src;

    if (src->slots) {
        m.slots = ks_arena_calloc(a, (size_t)src->mask + 1, sizeof(*m.slots));
        if (!m.slots)
            return -ENOMEM;
        memcpy(m.slots, src->slots, ((size_t)src->mask + 1) * sizeof(*m.slots));
    }
    if (src->keys_cap) {
        m.keys = ks_arena_calloc(a, src->keys_cap, sizeof(*m.keys));
        if (!m.keys)
            return -ENOMEM;
        memcpy(m.keys, src->keys, src->nkeys * sizeof(*m.keys));
    }
    *dst = m;
    return 0;
}

int ks_tp_map_add_node(struct ks_tp_map *m, struct ks_arena *a, const struct ks_node_snap *node, uint32_t key,
                       int64_t delta)
{
    uint32_t value;
    if (!ks_tp_node_value(node, key, &value))
        return 0;
    return ks_tp_map_add(m, a, key, value, delta);
}

/* ---- counts kept across cycles -------------------------------------------------------------- */

void ks_tp_memo_destroy(struct ks_tp_memo *m)
{
    ks_arena_destroy(&m->arena);
    ks_node_memo_destroy(&m->nodes);
    free(m->off);
    free(m->len);
    free(m->pool);
    memset(m, 0, sizeof(*m));
}

void ks_tp_memo_reset(struct ks_tp_memo *m)
{
    ks_arena_reset(&m->arena);
    memset(m->maps, 0, sizeof(m->maps));
    /* all of cap: a refresh that failed may have left shares past nodes.nnodes */
    if (m->cap)
        memset(m->len, 0, m->cap * sizeof(*m->len));
    ks_node_memo_reset(&m->nodes);
    m->pool_len = m->live = 0;
}

/* Room for @n indices; indices at and past nodes.nnodes always have no share. */
static int memo_reserve(struct ks_tp_memo *m, uint32_t n)
{
    if (n <= m->cap)
        return 0;
    uint32_t cap = m->cap ? m->cap : 64;
    while (cap < n)
        cap *= 2;
    uint32_t *off = realloc(m->off, cap * sizeof(*off));
    if (off)
        m->off = off;
    uint32_t *len = realloc(m->len, cap * sizeof(*len));
    if (len)
        m->len = len;
    if (!off || !len)
        return -ENOMEM;
    memset(len + m->cap, 0, (cap - m->cap) * sizeof(*len));
    m->cap = cap;
    return 0;
}

static int memo_emit(void *ectx, uint32_t map, uint32_t key, uint32_t value, int64_t count)
{
    struct ks_tp_memo *m = ectx;
    if (m->pool_len == m->pool_cap) {
        uint32_t cap = m->pool_cap ? m->pool_cap * 2 : 1024;
        struct ks_tp_share_pair *pool = realloc(m->pool, cap * sizeof(*pool));
        if (!pool)
            return -ENOMEM;
        m->pool = pool;
        m->pool_cap = cap;
    }
    m->pool[m->pool_len++] =
        (struct ks_tp_share_pair){.key = key, .value = value, .map = map, .count = (int32_t)count};
    return 0;
}

/* Add (@sign 1) or take away (-1) the share of index @i. */
static int memo_apply(struct ks_tp_memo *m, uint32_t i, int64_t sign)
{
    for (uint32_t k = 0; k < m->len[i]; k++) {
        const struct ks_tp_share_pair *pr = &m->pool[m->off[i] + k];
        if (ks_tp_map_add(&m->maps[pr->map], &m->arena, pr->key, pr->value, sign * pr->count))
            return -ENOMEM;
    }
    return 0;
}

/* ks_node_memo_update_fn: replace the share of index @i with @node's (none when NULL). */
static int memo_recount(void *ctx, uint32_t i, const struct ks_node_snap *node)
{
    struct ks_tp_memo *m = ctx;
    if (memo_apply(m, i, -1))
        return -ENOMEM;
    m->live -= m->len[i];
    m->len[i] = 0;
    if (!node)
        return 0;
    uint32_t start = m->pool_len;
    if (m->share(m->share_ctx, node, memo_emit, m))
        return -ENOMEM;
    m->off[i] = start;
    m->len[i] = m->pool_len - start;
    m->live += m->len[i];
    return memo_apply(m, i, 1);
}

/* Drop the pool space of replaced shares once it outweighs the live ones. */
static int memo_compact(struct ks_tp_memo *m)
{
    if (m->pool_len <= 2 * m->live + 4096)
        return 0;
    uint32_t cap = m->live ? m->live : 1;
    struct ks_tp_share_pair *pool = malloc(cap * sizeof(*pool));
    if (!pool)
        return -ENOMEM;
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->nodes.nnodes; i++) {
        if (!m->len[i])
            continue;
        memcpy(pool + n, m->pool + m->off[i], m->len[i] * sizeof(*pool));
        m->off[i] = n;
        n += m->len[i];
    }
    free(m->pool);
    m->pool = pool;
    m->pool_len = n;
    m->pool_cap = cap;
    return 0;
}

int ks_tp_memo_refresh(struct ks_tp_memo *m, const struct ks_snapshot *snap, ks_tp_share_fn share, void *ctx)
{
    if (ks_tp_memo_synced(m, snap))
        return 0;
    m->share = share;
    m->share_ctx = ctx;
    int rc = memo_reserve(m, snap->nnodes);
    if (!rc)
        rc = ks_node_memo_sync(&m->nodes, snap, memo_recount, m);
    if (!rc)
        rc = memo_compact(m);
    m->share = NULL;
    m->share_ctx = NULL;
    if (rc) {
        ks_tp_memo_reset(m);
        return -ENOMEM;
    }
    return 0;
}

/* ---- namespaces ----------------------------------------------------------------------------- */

static int cmp_ns(const void *a, const void *b)
{
    uint32_t x = ((const struct ks_ns_entry *)a)->name, y = ((const struct ks_ns_entry *)b)->name;
    return (x > y) - (x < y);
}

int ks_ns_index_build(struct ks_ns_index *idx, const struct ks_objects *objs)
{
    const struct ks_objvec *v = objs ? &objs->of[KS_KIND_NAMESPACE] : NULL;

    memset(idx, 0, sizeof(*idx));
    idx->objs = objs;
    idx->gen = objs ? objs->gen[KS_KIND_NAMESPACE] : 0;
    if (!v || v->n == 0)
        return 0;
    idx->items = calloc(v->n, sizeof(*idx->items));
    if (!idx->items)
        return -ENOMEM;
    for (uint32_t i = 0; i < v->n; i++) {
        const struct ks_namespace *ns = v->items[i];
        uint32_t name = ks_intern(ns->meta.name ? ns->meta.name : "");
        if (name == KS_ID_NONE) {
            ks_ns_index_destroy(idx);
            return -ENOMEM;
        }
        idx->items[idx->n++] = (struct ks_ns_entry){.name = name, .labels = &ns->meta.labels};
    }
    qsort(idx->items, idx->n, sizeof(*idx->items), cmp_ns);
    return 0;
}

int ks_ns_index_refresh(struct ks_ns_index *idx)
{
    struct ks_ns_index fresh;
    if (__builtin_expect(!idx->objs || idx->objs->gen[KS_KIND_NAMESPACE] == idx->gen, 1))
        return 0;
    if (ks_ns_index_build(&fresh, idx->objs) < 0)
        return -ENOMEM;
    ks_ns_index_destroy(idx);
    *idx = fresh;
    return 1;
}

void ks_ns_index_destroy(struct ks_ns_index *idx)
{
    free(idx->items);
    memset(idx, 0, sizeof(*idx));
}

const struct ks_labels *ks_ns_index_find(const struct ks_ns_index *idx, uint32_t ns)
{
    uint32_t lo = 0, hi = idx->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (idx->items[mid].name == ns)
            return idx->items[mid].labels;
        if (idx->items[mid].name < ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* ---- selectors ------------------------------------------------------------------------------ */

bool ks_selector_matches_keys(const struct ks_label_selector *sel, const uint32_t *match_keys,
                              uint32_t nmatch, const uint32_t *mismatch_keys, uint32_t nmismatch,
                              const struct ks_labels *owner, const struct ks_labels *labels)
{
    if (!ks_label_selector_matches(sel, labels))
        return false;
    for (uint32_t i = 0; i < nmatch; i++) {
        uint32_t want, got;
        /* key in (want): the label must be present with that value */
        if (ks_labels_get(owner, match_keys[i], &want) &&
            (!ks_labels_get(labels, match_keys[i], &got) || got != want))
            return false;
    }
    for (uint32_t i = 0; i < nmismatch; i++) {
        uint32_t avoid, got;
        /* key notin (avoid): an absent label satisfies it */
        if (ks_labels_get(owner, mismatch_keys[i], &avoid) && ks_labels_get(labels, mismatch_keys[i], &got) &&
            got == avoid)
            return false;
    }
    return true;
}
