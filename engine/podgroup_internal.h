/*
 * podgroup_internal.h - what the PodGroup cycle's files share: schedule_podgroup.c (the
 * cycle, its default algorithm, validation and results) and schedule_placement.c
 * (topology-aware placements). Scheduling thread only.
 */
#ifndef KSCHED_ENGINE_PODGROUP_INTERNAL_H
#define KSCHED_ENGINE_PODGROUP_INTERNAL_H

#include "scheduler_internal.h"

#include "ksched/internal/placement.h"
#include "ksched/internal/pod_groups.h"
#include "ksched/plugin_helpers_gang.h"

#include <stddef.h>

/* One member in this cycle. */
struct member {
    struct ks_queued_pod *qp;
    struct ks_bind_job *job; /* placed: assumed and reserved */
    char *message;           /* no node fits: its FitError (malloc'd) */
    uint32_t order;          /* when it joined its group, among the group's pods */
    uint32_t nominated;      /* the node preemption made room for it on, KS_ID_EMPTY: none */
    bool tried;
};

/* The cycle's growable arrays, kept by the scheduler between cycles. */
struct ks_group_scratch {
    uint32_t cap_pods, cap_members, cap_sched;
    const struct ks_pod **pods;
    struct member *members;
    bool gated; /* a member is gated by PreEnqueue (gather) */
    uint32_t nsched;
    uint32_t *sched_nodes; /* the nodes of the group's pods assumed or bound (gather) */
    /* schedule_placement.c: the placements, and per placement what it found */
    struct ks_placement_set placements;
    uint32_t cap_assign, cap_results, cap_first, cap_order;
    uint32_t *order; /* the placements in the order they are evaluated */
    uint32_t report; /* the placement whose results a group no placement holds reports */
    uint32_t kept;   /* the winning placement whose reservations were kept, UINT32_MAX: none */
    struct ks_placement_weights weights;   /* the placement scores' weights in profile weights_fw */
    const struct ks_framework *weights_fw; /* the profile they were read from (NULL: none yet) */
    bool bounded;                          /* a placement scores at most its all-placed score (rank) */
    uint32_t cap_adds;
    int64_t
        *adds; /* (placements + 1) x weights.nres: each placement's proposed requests, then all members' */
    /* what opts.on_group is told of this cycle (ks__pg_fail_all and ks__pg_commit report it) */
    struct ks_group_attempt report_to;
    uint32_t cap_report;
    struct ks_group_placement *report_placements;
    char **first_messages; /* the members' FitErrors in the first placement (the report) */
    uint32_t *assign;      /* placements x members: the node each member got, KS_ID_NONE: none */
    struct placement_result *results;
};

/* ks__pg_place_one - @m's scheduling algorithm, then assume and Reserve: KS_SUCCESS (m->job set),
 * KS_UNSCHEDULABLE (m->message set), or another code with @st. */
int ks__pg_place_one(struct ks_scheduler *s, struct ks_framework *fw, struct member *m, uint64_t cycle,
                     struct ks_status *st);

/*
 * ks__pg_place_members - podGroupSchedulingDefaultAlgorithm over the @n members in order
 * (within s->placement when set): the verdict of PlacementFeasible (KS_GANG_FEASIBLE...)
 * with its message in @msg, *@any when a member was placed; -1 after an error in @st.
 */
int ks__pg_place_members(struct ks_scheduler *s, struct ks_framework *fw, struct member *mv, uint32_t n,
                         const struct ks_pod_group_spec *spec, uint32_t scheduled, uint64_t cycle, bool *any,
                         char *msg, size_t len, struct ks_status *st);

/* ks__pg_revert - every reservation of the members undone, newest first. */
void ks__pg_revert(struct ks_scheduler *s, struct ks_framework *fw, struct member *mv, uint32_t n);

/* ks__pg_fail_all - every member back to the queue with @code and @message (its own when @own and it has
 * one). */
void ks__pg_fail_all(struct ks_scheduler *s, struct ks_framework *fw, struct member *mv, uint32_t n,
                     uint64_t cycle, int code, const char *message, bool own);

/*
 * ks__pg_unschedulable - the group's cycle failed Unschedulable with @message: with
 * WorkloadAwarePreemption on, the profile's PodGroupPostFilter (podgroup_post_filter.c) runs
 * first and its message is appended to the group's; then every member goes back as
 * ks__pg_fail_all() sends it, each one preemption made room for nominated to its node.
 */
void ks__pg_unschedulable(struct ks_scheduler *s, struct ks_framework *fw, struct member *mv, uint32_t n,
                          const struct ks_pod_group_state *gs, uint32_t scheduled, uint64_t cycle,
                          const char *message);

/* ks__pg_fail_error - every member back after the error in @st: "failed to schedule other pod from a pod
 * group: ...". */
void ks__pg_fail_error(struct ks_scheduler *s, struct ks_framework *fw, struct member *mv, uint32_t n,
                       uint64_t cycle, const struct ks_status *st);

/* ks__pg_commit - a group that reached minCount: placed members to Permit and binding, the others back. */
void ks__pg_commit(struct ks_scheduler *s, struct ks_framework *fw, struct member *mv, uint32_t n,
                   uint64_t cycle);

/*
 * ks__pg_schedule_placements - podGroupSchedulingPlacementAlgorithm for a group with a
 * topology constraint (schedule_placement.c): every member handed on before it returns.
 */
void ks__pg_schedule_placements(struct ks_scheduler *s, struct ks_framework *fw, struct member *mv,
                                uint32_t n, const struct ks_pod_group_state *gs, uint32_t scheduled,
                                uint64_t cycle);

#endif
