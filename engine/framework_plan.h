/*
 * framework_plan.h - one cycle's Filter and Score call lists with the skipped plugins left
 * out (internal to the scheduling loop: find_nodes.c, prioritize.c, framework_run.c).
 *
 * ks_fw_run_filter() and ks_fw_score_node() test every plugin of the profile against the
 * cycle's skip masks for every node. For a pod that PreFilter and PreScore let most
 * plugins skip (the common case: no volumes, ports, affinity or spread constraints), that
 * is ten tests and a loop step per node for four or five calls. A plan copies, once per
 * cycle after PreFilter (PreScore), the calls that run, in order, with the score column
 * each one fills, so the per-node loops run exactly those calls with the same statuses,
 * messages and scores as the unplanned functions.
 *
 * Context: built by the scheduling thread; read-only while the workers run the phase.
 */
#ifndef KSCHED_ENGINE_FRAMEWORK_PLAN_H
#define KSCHED_ENGINE_FRAMEWORK_PLAN_H

#include "framework_internal.h"

#include <stdbool.h>

struct ks_fw_plan {
    uint32_t n;                                  /* calls that run */
    uint32_t col[KS_MAX_PROFILE_PLUGINS];        /* score plans: the call's column in a score row */
    struct ks_fw_call v[KS_MAX_PROFILE_PLUGINS]; /* copies of the framework's entries, in order */
    /* score plans only */
    int64_t weight[KS_MAX_PROFILE_PLUGINS];  /* the call's score weight */
    bool normalized[KS_MAX_PROFILE_PLUGINS]; /* the call's plugin has a NormalizeScore op */
    uint32_t nskipped;                       /* skipped plugins' columns, cleared per row */
    uint32_t skipped[KS_MAX_PROFILE_PLUGINS];
};

/* ks__fw_plan_filter / ks__fw_plan_score - the Filter (Score) calls @cs does not skip. */
void ks__fw_plan_filter(const struct ks_framework *fw, const struct ks_cycle_state *cs, struct ks_fw_plan *p);
void ks__fw_plan_score(const struct ks_framework *fw, const struct ks_cycle_state *cs, struct ks_fw_plan *p);

/* ks__fw_plan_run_filter - ks_fw_run_filter() through a filter plan built for @cs. Workers. */
int ks__fw_plan_run_filter(const struct ks_fw_plan *p, const struct ks_cycle_state *cs,
                           const struct ks_pod *pod, const struct ks_node_snap *node, struct ks_status *st);

/*
 * ks__fw_plan_filter_nodes - ks__fw_plan_run_filter() for a block of @n nodes, plugin by
 * plugin (each plugin's filter_nodes op, or its filter per node), each plugin seeing only
 * the nodes every earlier one passed. @ok[i] must be 1 on entry; a node that fails gets
 * @ok[i] = 0 and in @st[i] the status ks__fw_plan_run_filter() gives it. @st[i] of nodes
 * that pass is not written. Returns how many passed. Workers.
 */
uint32_t ks__fw_plan_filter_nodes(const struct ks_fw_plan *p, const struct ks_cycle_state *cs,
                                  const struct ks_pod *pod, const struct ks_node_snap *const *nodes,
                                  uint32_t n, uint8_t *ok, struct ks_status *st);

/*
 * The passes of a scheduler with metrics: the same, also counting into the worker's tally
 * @t (framework_metrics.h; NULL: nothing counted): each plugin's node calls, and when
 * t->timed its time and the codes it returned.
 */
struct ks_fw_tally;
uint32_t ks__fw_plan_filter_nodes_tally(const struct ks_fw_plan *p, const struct ks_cycle_state *cs,
                                        const struct ks_pod *pod, const struct ks_node_snap *const *nodes,
                                        uint32_t n, uint8_t *ok, struct ks_status *st, struct ks_fw_tally *t);

/*
 * Planned scoring keeps one column per call of the plan (column-major: call k's scores
 * of the cycle's @stride feasible nodes at cols + k * stride), so each plugin's batched
 * Score writes, and NormalizeScore reads and rewrites, a contiguous array; a plugin
 * without NormalizeScore is range-checked, weighted and summed into the totals as its
 * block is scored, while the block is in L1. A row per node (the feasible x nscore matrix
 * of ks_fw_score_node(), which observers read) is made only when asked for
 * (ks__fw_plan_rows).
 *
 * ks__fw_plan_score_nodes - score a block of @n nodes (@nodes, their columns' cells at
 * @cols, the block's offset already added) plugin by plugin: a plugin with NormalizeScore
 * leaves its raw scores, one without leaves them times its weight, summed into @totals
 * (assigned: no need to clear them). A score of a plugin without NormalizeScore outside
 * [0, KS_MAX_NODE_SCORE] sets *@out_of_range (the caller then redoes the cycle's scoring
 * unplanned, which reports it as upstream does). Returns Success, or Error when some Score
 * call was not Success: the caller then finds and reports the first failure in node order
 * through ks_fw_score_node(). Workers.
 *
 * ks__fw_plan_normalize - after every block was scored: NormalizeScore for the plan's
 * plugins that have it, on their columns in place, then their weighted scores added to
 * @totals. Returns the wrapped Error of a failing NormalizeScore as
 * ks_fw_normalize_scores() does; a normalised score out of range sets *@redo instead (same
 * remedy). With neither, the columns (weighted) and @totals equal what ks_fw_score_node()
 * and ks_fw_normalize_scores() give. Scheduling thread.
 *
 * ks__fw_plan_rows - the columns as the feasible x @nscore rows of ks_fw_normalize_scores()
 * (skipped plugins' cells 0). Scheduling thread.
 */
int ks__fw_plan_score_nodes(const struct ks_fw_plan *p, const struct ks_cycle_state *cs,
                            const struct ks_pod *pod, const struct ks_node_snap *const *nodes, uint32_t n,
                            int64_t *cols, size_t stride, int64_t *totals, bool *out_of_range);
/* ks__fw_plan_score_nodes() timing each plugin's column into @t when t->timed (NULL: nothing). */
int ks__fw_plan_score_nodes_tally(const struct ks_fw_plan *p, const struct ks_cycle_state *cs,
                                  const struct ks_pod *pod, const struct ks_node_snap *const *nodes,
                                  uint32_t n, int64_t *cols, size_t stride, int64_t *totals,
                                  bool *out_of_range, struct ks_fw_tally *t);
int ks__fw_plan_normalize(struct ks_framework *fw, const struct ks_fw_plan *p,
                          const struct ks_cycle_state *cs, const struct ks_pod *pod,
                          const struct ks_node_snap *const *nodes, uint32_t n, int64_t *cols, int64_t *totals,
                          bool *redo, struct ks_status *st);
void ks__fw_plan_rows(const struct ks_fw_plan *p, uint32_t nscore, const int64_t *cols, uint32_t n,
                      int64_t *rows);

#endif
