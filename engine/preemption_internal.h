/*
 * preemption_internal.h - what the preemption evaluator's files share (engine/preemption*.c).
 */
#ifndef KSCHED_ENGINE_PREEMPTION_INTERNAL_H
#define KSCHED_ENGINE_PREEMPTION_INTERNAL_H

#include "ksched/internal/preemption.h"

/* What one node's trial works in: cycle-state copies and scratch memory, reused node after node. */
struct ks_preempt_scratch {
    struct ks_cycle_state state, scratch_state;
    struct ks_arena arena;
};

void ks__preempt_scratch_init(struct ks_preempt_scratch *sc);
void ks__preempt_scratch_destroy(struct ks_preempt_scratch *sc);

/*
 * ks__preempt_trial - @select's verdict (SelectVictimsOnNode) on @node for p->pod, on a fresh
 * clone of p->cs, with the pods nominated to @node that the preemptor leaves room for (each
 * held by a reference meanwhile). Victims go to @keep; @sc's arena is reset first.
 */
int ks__preempt_trial(const struct ks_preemptor *p, const struct ks_node_snap *node,
                      ks_select_victims_fn select, void *ctx, struct ks_preempt_scratch *sc,
                      struct ks_arena *keep, struct ks_preempt_candidate *c, struct ks_status *st);

/*
 * ks__preempt_priority_sum - pickOneNodeForPreemption's sum of @c's victim priorities, each
 * shifted by 2^31 so that negative priorities count.
 */
int64_t ks__preempt_priority_sum(const struct ks_preempt_candidate *c);

#endif
