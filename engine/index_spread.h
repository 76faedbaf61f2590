/*
 * index_spread.h - PodTopologySpread's ScheduleAnyway score added to an index answer
 * (ksched/sign.h, ks_sign_spread_scored; engine/index_spread.c). Internal to the
 * scheduling loop (index_path.c).
 */
#ifndef KSCHED_ENGINE_INDEX_SPREAD_H
#define KSCHED_ENGINE_INDEX_SPREAD_H

#include <stdbool.h>
#include <stdint.h>

#include "ksched/cache_types.h"
#include "ksched/internal/index.h"
#include "ksched/plugin_helpers_spread.h"

/*
 * ks__index_spread_poisons - whether a feasible @node's entry cannot stand for the
 * spread score, which the index computes for nodes carrying the hostname label (when a
 * constraint is keyed by it) and, when @s ignores nodes lacking a key, every key.
 */
bool ks__index_spread_poisons(const struct ks_pts_score_state *s, const struct ks_node_snap *node);

/*
 * ks__index_spread_host - the host the per-node path picks in window @w (no poisoned
 * position, some feasible) of class @c, whose tree totals leave out a spread score of
 * weight @weight over the domains of label @key, read from @st (PreScore's state): the
 * window's tie drawn from *@rng when more than one node has the best total. @c is split
 * by @key first when it is not (ks_index_split). false, with nothing drawn, when the
 * window must go to the per-node path: the split failed (too many domains, out of
 * memory), more than a few hundred nodes of the window hold counted pods, or the pod
 * has more constraints than valid pods can. Scheduling thread, RCU read section holding @snap.
 */
bool ks__index_spread_host(struct ks_index *ix, struct ks_index_class *c, const struct ks_snapshot *snap,
                           const struct ks_pts_score_state *st, int64_t weight, uint32_t key,
                           const struct ks_index_window *w, uint64_t *rng, uint32_t *pos);

#endif
