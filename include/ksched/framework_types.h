/*
 * framework_types.h - what the scheduling framework hands to plugins.
 *
 * Mirrors pkg/scheduler/framework/{interface.go,cycle_state.go}: CycleState, the
 * PreFilterResult, per-node scores, the filter Diagnosis that PostFilter reads.
 *
 * Context: a struct ks_cycle_state belongs to one scheduling cycle. PreFilter, PreScore,
 * Reserve, Permit and the binding ops run on one thread and may write it; Filter and Score
 * run on worker threads in parallel and only read it (they receive it const).
 */
#ifndef KSCHED_FRAMEWORK_TYPES_H
#define KSCHED_FRAMEWORK_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "ksched/base/arena.h"
#include "ksched/cache_types.h"
#include "ksched/status_types.h"

/* Upper bound of plugins in one profile (bit masks of plugin indices are 64-bit). */
#define KS_MAX_PROFILE_PLUGINS 64

/* MaxNodeScore / MinNodeScore of framework/interface.go. */
#define KS_MAX_NODE_SCORE 100
#define KS_MIN_NODE_SCORE 0

struct ks_framework;

/*
 * Per-cycle plugin data: slot[i] belongs to the plugin with index i in its profile.
 * Data lives in the cycle's arena (reset between cycles) unless a plugin says otherwise.
 */
struct ks_cycle_state {
    void *slot[KS_MAX_PROFILE_PLUGINS];
    uint64_t skip_filter; /* plugins whose PreFilter returned Skip */
    uint64_t skip_score;  /* plugins whose PreScore returned Skip */
    struct ks_arena arena;
    uint64_t seed; /* per-cycle random seed (selectHost ties, sampling) */
    /*
     * This cycle times each plugin call into scheduler_plugin_execution_duration_seconds
     * (upstream's CycleState.ShouldRecordPluginMetrics: a sampled share of the cycles).
     */
    bool record_plugin_metrics;
    /* metrics: when PreBind began, and when its waiting plugin was called (it may park and resume) */
    int64_t pre_bind_start_ns, pre_bind_plugin_ns;
    /*
     * Binding cycle: while PreBind runs, the handle that ends a PreBind which returns
     * KS_WAIT (struct ks_bind_wait below; NULL where PreBind may not wait), and which
     * PreBind plugin (its index in the profile's PreBind list) waits. Set by the binder
     * and the framework; plugins only read bind_wait.
     */
    struct ks_bind_wait *bind_wait;
    uint32_t pre_bind_waiting;
    /*
     * The nodes this cycle lists (upstream's AssumePlacement for a PodGroup placement):
     * interned names, sorted; nlisting 0: every node. Plugins that count pods across nodes
     * count only these. Set by the scheduler before PreFilter.
     */
    uint32_t nlisting;
    const uint32_t *listing;
};

/*
 * A PreBind that must wait for something outside the scheduler (VolumeBinding waiting
 * for the PV controller) returns KS_WAIT after handing cs->bind_wait to whatever will end
 * the wait, and that calls ks_bind_wait_done() exactly once, from any thread, possibly
 * before the PreBind op has returned. Success continues the binding cycle with the next
 * PreBind plugin and Bind; anything else fails it as if the plugin had returned that code
 * and status. No binder thread is held meanwhile (engine/binder.c parks the binding).
 */
struct ks_bind_wait {
    /* the binder's: resume the parked binding cycle with @code and @st (NULL: no reasons) */
    void (*done)(struct ks_bind_wait *w, int code, const struct ks_status *st);
};

/* ks_bind_wait_done - end the wait of a PreBind that returned KS_WAIT (see struct ks_bind_wait). */
static inline void ks_bind_wait_done(struct ks_bind_wait *w, int code, const struct ks_status *st)
{
    w->done(w, code, st);
}

/* PreFilterResult: nil (all nodes) or a set of node names, sorted interned ids. */
struct ks_pre_filter_result {
    bool all;
    uint32_t n;
    const uint32_t *names;
    uint64_t narrowed_by; /* set by the framework: slots of the plugins whose result was not "all" */
};

/*
 * Why nodes failed, for the FailedScheduling message and PostFilter (upstream's
 * Diagnosis with its NodeToStatus): explicit statuses of the evaluated nodes that failed,
 * and one status for every node without an entry (set when PreFilter rejected the pod or
 * narrowed the node set; code Success when there is none).
 *
 * Two forms hold the explicit entries. Listed (group_count NULL): nodes[k] failed with
 * statuses[k]. Grouped (the signature index's answer for a cycle no node of the snapshot fits):
 * every node of @snap failed, evaluated from position @start on, wrapping; the node at
 * position p has statuses[group_of[p]], and group_count[g] nodes have statuses[g]
 * (g < ngroups). Read entries of either form with ks_diagnosis_at (framework.h).
 */
struct ks_diagnosis {
    uint32_t nall;                     /* nodes in the snapshot (NumAllNodes) */
    uint32_t nfailed;                  /* explicit entries */
    const struct ks_node_snap **nodes; /* listed: nodes that failed Filter, in evaluation order */
    struct ks_status *statuses;        /* listed: parallel to nodes; grouped: one per group */
    struct ks_status absent;           /* status of every node not listed */
    uint64_t unschedulable_plugins;    /* slots of plugins that rejected the pod */
    uint32_t pre_filter_msg;           /* interned message of a rejecting PreFilter, KS_ID_EMPTY otherwise */
    uint32_t post_filter_msg;          /* interned message of PostFilter, KS_ID_EMPTY otherwise */
    /* the grouped form (appended within ABI version 1; group_count NULL in the listed form) */
    uint32_t ngroups;
    uint32_t start;
    const uint32_t *group_count;
    const uint16_t *group_of;
    const struct ks_snapshot *snap;
};

/*
 * ks_diagnosis_at - explicit entry @k (< d->nfailed) of @d in evaluation order: its status,
 * and its node in *@node. O(1) in either form. Context: inside the RCU read section of the
 * cycle that made @d.
 */
static inline const struct ks_status *ks_diagnosis_at(const struct ks_diagnosis *d, uint32_t k,
                                                      const struct ks_node_snap **node)
{
    if (!d->group_count) {
        *node = d->nodes[k];
        return &d->statuses[k];
    }
    uint32_t pos = d->start + k < d->nall ? d->start + k : d->start + k - d->nall;
    *node = ks_snapshot_node(d->snap, pos);
    return &d->statuses[d->group_of[pos]];
}

/* PostFilterResult: the nominated node, or none. */
struct ks_post_filter_result {
    uint32_t nominated_node; /* interned node name, KS_ID_EMPTY for none */
};

/* What init() receives: the plugin's parsed args and its place in the profile. */
struct ks_plugin_init {
    const void *args; /* from args_parse, NULL for a plugin without args */
    uint16_t slot;    /* index in the profile: its cycle-state slot */
    struct ks_framework *framework;
};

#endif
