/*
 * helper_node_memo.c - which node records a per-node count cache has counted; see
 * ksched/plugin_helpers_memo.h.
 *
 * The sync is the loop PodTopologySpread's counter and InterPodAffinity's memo share. It
 * relies on two uniqueness properties of the cache's generations (cache_types.h): a
 * non-zero record generation names one record, and at one chunk index a non-zero chunk
 * generation names one chunk. So an unchanged chunk generation means its 256 positions
 * hold the records counted last time, and only the chunks a snapshot version replaced
 * (one per assumed pod, typically) have their records' generations read.
 *
 * Invariants: see struct ks_node_memo. chunk_gen[c] is cleared before chunk c is walked
 * and set only after every position of it was brought up to date, so a sync that fails
 * half-way leaves nothing marked that was not counted.
 */
#include "ksched/plugin_helpers_memo.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Grow @arr (of @cap entries) to at least @need entries, zero-filling the new ones. */
static int grow_u64(uint64_t **arr, uint32_t *cap, uint32_t need, uint32_t first)
{
    if (need <= *cap)
        return 0;
    uint32_t ncap = *cap ? *cap : first;
    while (ncap < need)
        ncap *= 2;
    uint64_t *a = realloc(*arr, (size_t)ncap * sizeof(*a));
    if (!a)
        return -ENOMEM;
    memset(a + *cap, 0, (size_t)(ncap - *cap) * sizeof(*a));
    *arr = a;
    *cap = ncap;
    return 0;
}

/* Hand position @pos to @update if its record is not the one counted there. */
static inline int sync_position(struct ks_node_memo *m, uint32_t pos, const struct ks_node_snap *rec,
                                ks_node_memo_update_fn update, void *ctx)
{
    m->rec_reads++;
    if (rec->generation && rec->generation == m->gen[pos])
        return 0;
    m->gen[pos] = 0;
    m->recounts++;
    if (update(ctx, pos, rec))
        return -ENOMEM;
    m->gen[pos] = rec->generation;
    return 0;
}

int ks_node_memo_sync(struct ks_node_memo *m, const struct ks_snapshot *snap, ks_node_memo_update_fn update,
                      void *ctx)
{
    if (ks_node_memo_synced(m, snap))
        return 0;
    m->snap_gen = 0;
    if (grow_u64(&m->gen, &m->cap, snap->nnodes, 64) ||
        grow_u64(&m->chunk_gen, &m->chunk_cap, snap->nchunks, 4))
        return -ENOMEM;
    for (uint32_t c = 0; c < snap->nchunks; c++) {
        const struct ks_snap_chunk *chunk = snap->chunks[c];
        if (chunk->generation && chunk->generation == m->chunk_gen[c])
            continue; /* the very chunk counted last time: its records too */
        m->chunk_gen[c] = 0;
        uint32_t base = c << KS_SNAP_CHUNK_SHIFT;
        uint32_t n = snap->nnodes - base < KS_SNAP_CHUNK ? snap->nnodes - base : KS_SNAP_CHUNK;
        for (uint32_t j = 0; j < n; j++) {
            if (sync_position(m, base + j, chunk->nodes[j], update, ctx))
                return -ENOMEM;
        }
        m->chunk_gen[c] = chunk->generation;
    }
    /* positions past the end: their nodes left (chunk marks there are stale) */
    for (uint32_t pos = snap->nnodes; pos < m->nnodes; pos++) {
        m->recounts++;
        if (update(ctx, pos, NULL))
            return -ENOMEM;
        m->gen[pos] = 0;
    }
    for (uint32_t c = snap->nchunks; c < m->chunk_cap; c++)
        m->chunk_gen[c] = 0;
    m->nnodes = snap->nnodes;
    m->snap_gen = snap->generation;
    return 0;
}

void ks_node_memo_reset(struct ks_node_memo *m)
{
    if (m->cap)
        memset(m->gen, 0, (size_t)m->cap * sizeof(*m->gen));
    if (m->chunk_cap)
        memset(m->chunk_gen, 0, (size_t)m->chunk_cap * sizeof(*m->chunk_gen));
    m->nnodes = 0;
    m->snap_gen = 0;
}

void ks_node_memo_destroy(struct ks_node_memo *m)
{
    free(m->gen);
    free(m->chunk_gen);
    memset(m, 0, sizeof(*m));
}
