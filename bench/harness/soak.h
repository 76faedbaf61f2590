/*
 * soak.h - the churn soak of `ksched soak` (bench/harness/soak_run.c), shared with its TSan
 * driver (test/stress/stress_soak.c), which links soak_run.c directly.
 *
 * A generator on the calling thread (the event-intake thread) keeps adding, updating
 * and deleting nodes and pods through the scheduler's event calls while a scheduling
 * thread runs cycles and binder threads bind through a fault-injecting backend. Every
 * opts.check_every generator events, and at the end, both threads stop at a consistent
 * point, bindings drain, and the invariants of ksched/internal/sched_check.h are checked against
 * the generator's own record of every pod. docs/soak.md describes the mix and the checks.
 */
#ifndef KSCHED_BENCH_HARNESS_SOAK_H
#define KSCHED_BENCH_HARNESS_SOAK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ksched/base/error.h"
#include "ksched/internal/sched_check.h"

struct ks_soak_opts {
    uint32_t nodes;             /* cluster size kept (deleted nodes are replaced) */
    uint64_t pods;              /* stop once this many pods were bound... */
    double seconds;             /* ...or after this long, whichever comes first */
    uint64_t seed;              /* the generator's choices (thread timing still varies) */
    double bind_failure_rate;   /* fraction of bindings the backend fails (some after a delay) */
    double node_delete_rate;    /* per pod created, the chance a node is deleted (and replaced) */
    uint64_t check_every;       /* generator events between full checks; 0: only at the end */
    uint32_t parallelism;       /* Filter/Score threads; 0: the configuration's, capped at the cores */
    uint32_t binders;           /* binder threads; 0: 2 */
    uint32_t max_pods_per_node; /* allocatable pods of every node; 0: 40 */
    uint64_t max_bound;         /* at most this many pods bound at once; 0: no limit but the 90% rules */
    bool no_index;              /* ks_scheduler_opts.no_index: every cycle filters and scores node by node */
    FILE *progress;             /* a line per check, or NULL */
};

struct ks_soak_result {
    double wall_seconds;
    bool timed_out; /* stopped by --seconds before --pods were bound */
    uint64_t events;
    uint64_t checks;
    uint64_t pods_created, pods_bound, pods_deleted_pending, pods_deleted_bound, pods_updated, pods_ungated;
    uint64_t bound_updates;
    uint64_t bind_calls, bind_failures_injected, bind_failures_delayed, bind_not_found;
    uint64_t nodes_added, nodes_deleted, nodes_updated, pods_gc; /* pods_gc: deleted with their node */
    uint64_t preemption_victims, nominations, unschedulable_attempts, error_attempts;
    uint64_t cycles;         /* scheduling cycles run */
    uint64_t indexed_cycles; /* of them, those whose host the signature index chose */
    uint64_t peak_live_pods;
    struct ks_check_report report; /* every violation; nviolations 0 means a clean run */
};

/*
 * ks_soak_run - run the soak. Returns 0 with @res filled (violations in res->report),
 * -EINVAL with @err set for bad options, or a negative errno when setting up failed.
 * Context: a thread registered with RCU, outside read sections.
 */
int ks_soak_run(const struct ks_soak_opts *opts, struct ks_soak_result *res, struct ks_error *err);

#endif
