/*
 * plugin_helpers_topology.h - topology pairs, namespaces and label keys shared by the
 * plugins that count pods per topology domain (InterPodAffinity, PodTopologySpread).
 *
 * Mirrors the bookkeeping upstream keeps in Go maps keyed by strings:
 *  - struct ks_tp_map is interpodaffinity's topologyToMatchedTermCount (and its scoreMap
 *    flattened): counts keyed by a (topology key, topology value) pair of interned ids, in
 *    a small open-addressing hash table that lives in an arena (the cycle state's).
 *  - struct ks_ns_index is the namespace lister: namespace name -> labels, built from the
 *    Namespace objects at init and rebuilt by ks_ns_index_refresh() when they changed.
 *  - ks_selector_matches_keys() is a label selector with matchLabelKeys /
 *    mismatchLabelKeys merged in (`key in (v)` / `key notin (v)` for each key the owner
 *    pod has), evaluated without building the merged selector.
 *
 * Context: the map is written on the scheduling thread (PreFilter, PreScore, AddPod,
 * RemovePod, clones for dry runs) and read by Filter and Score workers once written;
 * ks_tp_map_get() and ks_tp_node_value() are allocation-free and lock-free. Index lookups
 * are read-only between ks_ns_index_build() / ks_ns_index_refresh() calls.
 */
#ifndef KSCHED_PLUGIN_HELPERS_TOPOLOGY_H
#define KSCHED_PLUGIN_HELPERS_TOPOLOGY_H

#include <stdbool.h>
#include <stdint.h>

#include "ksched/api.h"
#include "ksched/base/arena.h"
#include "ksched/base/intern.h"
#include "ksched/cache_types.h"
#include "ksched/plugin_helpers_memo.h"

struct ks_objects;

/* ---- topology pairs ----------------------------------------------------------------------- */

/* One (topology key, topology value) pair and its count; key KS_ID_EMPTY marks a free slot. */
struct ks_tp_entry {
    uint32_t key;
    uint32_t value;
    int64_t count;
};

/*
 * Counts per topology pair. An entry whose count drops to 0 keeps its slot (no
 * tombstones); `nonzero` is upstream's len(map) when zero entries are deleted, and
 * `keys` lists every topology key that ever had an entry (upstream's scoreMap keys), in
 * first-insertion order. A zeroed struct is an empty map that ks_tp_map_add() sizes on
 * first use.
 */
struct ks_tp_map {
    struct ks_tp_entry *slots; /* mask + 1 slots, a power of two; NULL while empty */
    uint32_t mask;
    uint32_t used;    /* occupied slots */
    uint32_t nonzero; /* entries whose count is not 0 */
    uint32_t nkeys;
    uint32_t keys_cap;
    uint32_t *keys; /* distinct topology keys */
};

/*
 * ks_tp_map_init - an empty map with room for about @hint pairs, allocated in @a.
 * Returns 0 or -ENOMEM.
 */
int ks_tp_map_init(struct ks_tp_map *m, struct ks_arena *a, uint32_t hint);

/*
 * ks_tp_map_add - add @delta to the count of (@key, @value), inserting the pair (and
 * recording @key) when new, even for a @delta of 0. @key must not be KS_ID_EMPTY (label
 * keys never are). Grows the table in @a (the old one stays in the arena until it is
 * reset). Returns 0 or -ENOMEM (the map is unchanged then).
 */
int ks_tp_map_add(struct ks_tp_map *m, struct ks_arena *a, uint32_t key, uint32_t value, int64_t delta);

/* ks_tp_map_clone - @dst becomes a copy of @src with its own storage in @a. 0 or -ENOMEM. */
int ks_tp_map_clone(struct ks_tp_map *dst, const struct ks_tp_map *src, struct ks_arena *a);

/* ks__tp_hash - the slot of (@key, @value) before probing (multiplicative hashing). */
static inline uint32_t ks__tp_hash(uint32_t key, uint32_t value, uint32_t mask)
{
    uint64_t x = ((uint64_t)key << 32 | value) * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(x ^ (x >> 29) ^ (x >> 47)) & mask;
}

/* ks_tp_map_find - the entry of (@key, @value), NULL when absent. Hot path: no allocation, no lock. */
static inline const struct ks_tp_entry *ks_tp_map_find(const struct ks_tp_map *m, uint32_t key,
                                                       uint32_t value)
{
    if (!m->used)
        return NULL;
    for (uint32_t i = ks__tp_hash(key, value, m->mask);; i = (i + 1) & m->mask) {
        const struct ks_tp_entry *e = &m->slots[i];
        if (e->key == key && e->value == value)
            return e;
        if (e->key == KS_ID_EMPTY)
            return NULL;
    }
}

/* ks_tp_map_get - the count of (@key, @value), 0 when absent. Hot path. */
static inline int64_t ks_tp_map_get(const struct ks_tp_map *m, uint32_t key, uint32_t value)
{
    const struct ks_tp_entry *e = ks_tp_map_find(m, key, value);
    return e ? e->count : 0;
}

/* ks_tp_node_labels - the labels of @node's Node object (an empty set when it has none). */
static inline const struct ks_labels *ks_tp_node_labels(const struct ks_node_snap *node)
{
    static const struct ks_labels none = {0, 0};
    return node->node ? &node->node->meta.labels : &none;
}

/* ks_tp_node_value - the value of label @key on @node into *value; false when absent. Hot path. */
static inline bool ks_tp_node_value(const struct ks_node_snap *node, uint32_t key, uint32_t *value)
{
    return node->node && ks_labels_get(&node->node->meta.labels, key, value);
}

/*
 * ks_tp_map_add_node - upstream's topologyToMatchedTermCount.update: add @delta to the
 * pair (@key, @node's value of @key) when @node has that label; nothing otherwise.
 * Returns 0 or -ENOMEM.
 */
int ks_tp_map_add_node(struct ks_tp_map *m, struct ks_arena *a, const struct ks_node_snap *node, uint32_t key,
                       int64_t delta);

/* ---- counts kept across cycles -------------------------------------------------------------- */

/*
 * ks_tp_emit_fn - hand one pair of a node's share to a memo (or straight to a map):
 * add @count to (@key, @value) of map @map. Returns 0 or -ENOMEM.
 */
typedef int (*ks_tp_emit_fn)(void *ectx, uint32_t map, uint32_t key, uint32_t value, int64_t count);

/*
 * ks_tp_share_fn - a node's share of some counts: call @emit(@ectx, ...) for every pair
 * @node adds (a pure function of the node's record and the caller's query @ctx).
 */
typedef int (*ks_tp_share_fn)(void *ctx, const struct ks_node_snap *node, ks_tp_emit_fn emit, void *ectx);

#define KS_TP_MEMO_MAPS 4

/* One pair of a node's share. */
struct ks_tp_share_pair {
    uint32_t key, value;
    uint32_t map;
    int32_t count;
};

/*
 * Counts over every node of the snapshot, kept from one scheduling cycle to the next for
 * one query (the caller resets the memo when its query changes). Each node index keeps
 * its share; which record each share was computed from is kept by the shared node memo
 * (plugin_helpers_memo.h: record and chunk generations), so a refresh skips the snapshot
 * chunks that did not change and recounts only the changed nodes: O(nodes / 256) chunk
 * reads plus O(records of changed chunks) plus O(pods on changed nodes) instead of every
 * pod. The maps are the memo's and change at its next refresh or reset.
 *
 * Context: one thread (the scheduling thread), inside the snapshot's RCU read section for
 * a refresh; readers of the maps (Filter, Score workers) run between refreshes.
 */
struct ks_tp_memo {
    struct ks_arena arena; /* the maps' tables */
    struct ks_tp_map maps[KS_TP_MEMO_MAPS];
    struct ks_node_memo nodes; /* which record each index's share comes from */
    uint32_t cap;              /* indices the arrays below hold; those past nodes.nnodes have no share */
    uint32_t *off, *len;       /* per index: its share in pool */
    struct ks_tp_share_pair *pool;
    uint32_t pool_len, pool_cap;
    uint32_t live;        /* pairs of current shares (0: no node adds anything) */
    ks_tp_share_fn share; /* the refresh's, while it runs */
    void *share_ctx;
};

/* ks_tp_memo_reset - forget every count (keep the buffers). A zeroed memo is empty. */
void ks_tp_memo_reset(struct ks_tp_memo *m);

/* ks_tp_memo_destroy - free everything. Accepts a zeroed memo. */
void ks_tp_memo_destroy(struct ks_tp_memo *m);

/*
 * ks_tp_memo_refresh - bring the counts up to @snap with @share(@ctx) for every node whose
 * record changed since the last refresh. Returns 0, or -ENOMEM after resetting the memo.
 * Context: scheduling thread, inside the RCU read section that loaded @snap.
 */
int ks_tp_memo_refresh(struct ks_tp_memo *m, const struct ks_snapshot *snap, ks_tp_share_fn share, void *ctx);

/* ks_tp_memo_synced - the last refresh was to @snap (same published version). */
static inline bool ks_tp_memo_synced(const struct ks_tp_memo *m, const struct ks_snapshot *snap)
{
    return ks_node_memo_synced(&m->nodes, snap);
}

/* ---- namespaces ----------------------------------------------------------------------------- */

struct ks_ns_entry {
    uint32_t name; /* interned namespace name */
    const struct ks_labels *labels;
};

/* Namespace name -> labels, sorted by name id (the namespace lister). */
struct ks_ns_index {
    uint32_t n;
    struct ks_ns_entry *items;
    const struct ks_objects *objs; /* what it indexes (NULL: none) */
    uint64_t gen;                  /* objs->gen[KS_KIND_NAMESPACE] when built */
};

/*
 * ks_ns_index_build - index the Namespace objects of @objs (NULL: none). The labels stay
 * owned by the objects, which must outlive the index. Returns 0 or -ENOMEM.
 * Context: start-up (a plugin's init); allocates.
 */
int ks_ns_index_build(struct ks_ns_index *idx, const struct ks_objects *objs);

/*
 * ks_ns_index_refresh - rebuild @idx from the objects it was built from when their
 * Namespaces changed since (struct ks_objects gen, loader.h: ksched serve applies informer
 * events between cycles). Returns 1 when rebuilt, 0 when unchanged (a load and a compare),
 * -ENOMEM with @idx untouched. Context: the scheduling thread (the counter's thread), at
 * the op that first reads the index in a cycle (PreFilter / PreScore); the old entries are
 * freed, so no other thread may read the index (plugins copy the labels pointers, which
 * stay valid: serve keeps replaced Namespaces until exit). Allocates only when rebuilding.
 */
int ks_ns_index_refresh(struct ks_ns_index *idx);

/* ks_ns_index_destroy - free the index. Accepts a zeroed one. */
void ks_ns_index_destroy(struct ks_ns_index *idx);

/* ks_ns_index_find - the labels of namespace @ns, NULL when no such Namespace object exists. */
const struct ks_labels *ks_ns_index_find(const struct ks_ns_index *idx, uint32_t ns);

/* ---- selectors ------------------------------------------------------------------------------ */

/*
 * ks_selector_matches_keys - @sel matches @labels, with `key in (owner's value)` for every
 * key of @match_keys and `key notin (owner's value)` for every key of @mismatch_keys that
 * @owner has (keys the owner lacks add nothing), as the API server merges matchLabelKeys
 * and mismatchLabelKeys into a pod affinity term's labelSelector. A NULL (nil) @sel
 * matches nothing and gets no keys. Hot path: no allocation.
 */
bool ks_selector_matches_keys(const struct ks_label_selector *sel, const uint32_t *match_keys,
                              uint32_t nmatch, const uint32_t *mismatch_keys, uint32_t nmismatch,
                              const struct ks_labels *owner, const struct ks_labels *labels);

#endif
