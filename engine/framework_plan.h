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

struct ks_fw_plan {
    uint32_t n;                                  /* calls that run */
    uint32_t col[KS_MAX_PROFILE_PLUGINS];        /* score plans: the call's column in a score row */
    struct ks_fw_call v[KS_MAX_PROFILE_PLUGINS]; /* copies of the framework's entries, in order */
};

/* ks__fw_plan_filter / ks__fw_plan_score - the Filter (Score) calls @cs does not skip. */
void ks__fw_plan_filter(const struct ks_framework *fw, const struct ks_cycle_state *cs, struct ks_fw_plan *p);
void ks__fw_plan_score(const struct ks_framework *fw, const struct ks_cycle_state *cs, struct ks_fw_plan *p);

/* ks__fw_plan_run_filter - ks_fw_run_filter() through a filter plan built for @cs. Workers. */
int ks__fw_plan_run_filter(const struct ks_fw_plan *p, const struct ks_cycle_state *cs,
                           const struct ks_pod *pod, const struct ks_node_snap *node, struct ks_status *st);

/*
 * ks__fw_plan_score_node - ks_fw_score_node() through a score plan built for @cs, except
 * that the skipped plugins' cells of @scores are left as they are (ks_fw_normalize_scores()
 * clears them). Workers.
 */
int ks__fw_plan_score_node(const struct ks_fw_plan *p, const struct ks_cycle_state *cs,
                           const struct ks_pod *pod, const struct ks_node_snap *node, int64_t *scores,
                           struct ks_status *st);

#endif
