/*
 * plugin_helpers_memo.h - per-node counts kept across scheduling cycles: which node
 * records of the snapshot a count cache has already taken into account.
 *
 * PodTopologySpread and InterPodAffinity count, in PreFilter and PreScore, matching pods
 * over every node of the cluster; upstream recounts them for every pod. Their count
 * caches (ks_spread_counter in plugin_helpers_spread.h, ks_tp_memo in
 * plugin_helpers_topology.h) instead keep what each node position contributed and, per
 * cycle, replace only the contributions of the positions whose record changed. This
 * helper is the part they share: it remembers, per position, the generation of the record
 * counted there and, per chunk of KS_SNAP_CHUNK positions, the generation of the snapshot
 * chunk whose positions were all counted; a sync walks the snapshot's chunk pointers,
 * skips every chunk whose generation is unchanged without reading its records (the
 * uniqueness argument is in cache_types.h), and within a changed chunk hands each
 * position whose record generation moved to the caller's update function. A cycle after
 * one assume therefore costs O(nodes / 256) chunk reads plus O(256) record reads plus
 * the recount of the changed node.
 *
 * Context: one thread (the scheduling thread) per memo, inside the RCU read section that
 * loaded the snapshot being synced; allocates (the per-position arrays) only when the
 * cluster grows.
 */
#ifndef KSCHED_PLUGIN_HELPERS_MEMO_H
#define KSCHED_PLUGIN_HELPERS_MEMO_H

#include <stdbool.h>
#include <stdint.h>

#include "ksched/cache_types.h"

/*
 * The generations a count cache has taken into account. A zeroed struct is an empty memo
 * (nothing counted). Invariant: chunk_gen[c] != 0 only if every position of chunk c below
 * nnodes has gen[] equal to its record's generation in the chunk of that generation.
 */
struct ks_node_memo {
    uint32_t nnodes;     /* positions accounted (the last synced snapshot's nnodes) */
    uint32_t cap;        /* positions allocated in gen */
    uint32_t chunk_cap;  /* chunk slots allocated in chunk_gen */
    uint64_t *gen;       /* [cap] generation of the record counted at each position, 0: none */
    uint64_t *chunk_gen; /* [chunk_cap] generation of the chunk fully counted at each index, 0: none */
    uint64_t snap_gen;   /* generation of the snapshot last synced completely (0: none) */
    uint64_t rec_reads;  /* records whose generation a sync read (tests and benches watch it) */
    uint64_t recounts;   /* positions handed to the update function */
};

/*
 * ks_node_memo_update_fn - position @pos now holds @rec (NULL: the position is past the
 * end of the snapshot): take away what the position contributed and add @rec's share.
 * On failure (-ENOMEM) the caller's counts must stay consistent with whatever it recorded
 * for @pos (the memo then treats @pos as uncounted). Returns 0 or -ENOMEM.
 */
typedef int (*ks_node_memo_update_fn)(void *ctx, uint32_t pos, const struct ks_node_snap *rec);

/*
 * ks_node_memo_sync - bring the counts of the caller up to @snap: call @update(@ctx, pos,
 * rec) for every position whose record is not the one counted there, and (rec NULL) for
 * every position counted past @snap's end. A no-op when the last complete sync was to
 * @snap itself. Returns 0 or -ENOMEM (positions done so far stay recorded; the next sync
 * redoes the rest). Context: see the file comment.
 */
int ks_node_memo_sync(struct ks_node_memo *m, const struct ks_snapshot *snap, ks_node_memo_update_fn update,
                      void *ctx);

/* ks_node_memo_synced - the last complete sync was to @snap (same published version). */
static inline bool ks_node_memo_synced(const struct ks_node_memo *m, const struct ks_snapshot *snap)
{
    return m->snap_gen && m->snap_gen == snap->generation && m->nnodes == snap->nnodes;
}

/* ks_node_memo_reset - forget every generation (the caller dropped its counts); keeps the buffers. */
void ks_node_memo_reset(struct ks_node_memo *m);

/* ks_node_memo_destroy - free the buffers. Accepts a zeroed memo. */
void ks_node_memo_destroy(struct ks_node_memo *m);

#endif
