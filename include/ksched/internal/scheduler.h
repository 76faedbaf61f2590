/*
 * scheduler.h - the scheduling loop: scheduleOne over a queue, a cache and one framework
 * per profile, with parallel Filter/Score workers and asynchronous binding.
 *
 * Mirrors pkg/scheduler/schedule_one.go. One thread (the caller of
 * ks_scheduler_schedule_one) runs scheduling cycles; decisions are serial, each pod
 * seeing the previous pod's assumption. Binding runs on a small pool of binder threads.
 *
 * Ownership: ks_scheduler_add_pod takes a reference to the pod (ksched/api.h) for as long
 * as the pod is queued or being bound; a bound pod is handed to the cache, which takes
 * its own reference.
 */
#ifndef KSCHED_SCHEDULER_H
#define KSCHED_SCHEDULER_H

#include <stdbool.h>
#include <stdint.h>

#include "ksched/base/error.h"
#include "ksched/base/intern.h"
#include "ksched/config_types.h"
#include "ksched/framework.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/metrics_sched.h"
#include "ksched/queue_types.h"

#define KS_SCHED_EVENT_MAP(X)                                                                                \
    X(SCHEDULED, "Scheduled")                                                                                \
    X(UNSCHEDULABLE, "Unschedulable")                                                                        \
    X(ERROR, "Error")                                                                                        \
    X(NOMINATED, "Nominated")                                                                                \
    X(PREEMPTED, "Preempted")

enum ks_sched_event_kind {
#define KS_X(id, text) KS_SCHED_##id,
    KS_SCHED_EVENT_MAP(KS_X)
#undef KS_X
};

/* An outcome worth telling the user (kube-scheduler's Events). */
struct ks_sched_event {
    enum ks_sched_event_kind kind;
    const struct ks_pod *pod;
    uint32_t node;           /* SCHEDULED, NOMINATED, PREEMPTED: interned node name */
    const char *message;     /* UNSCHEDULABLE, ERROR: the FailedScheduling message */
    const struct ks_pod *by; /* PREEMPTED: the preemptor */
};

/*
 * One scheduling attempt in detail, for `--explain`: every evaluated node that failed
 * with its status, and every feasible node with each score plugin's weighted score.
 * Everything is valid only during the callback.
 */
struct ks_attempt {
    const struct ks_pod *pod;
    uint32_t attempt;
    const struct ks_framework *fw;
    const struct ks_cycle_state *cs; /* the pod's cycle state (ks_framework_explain_status) */
    const struct ks_snapshot *snap;  /* the snapshot the attempt read (every node) */
    const struct ks_diagnosis *diag;
    uint32_t nfeasible;
    const struct ks_node_snap *const *feasible;
    uint32_t nscore;       /* score plugins (ks_framework_score_slot / weight) */
    const int64_t *scores; /* nfeasible x nscore, normalised and weighted */
    const int64_t *totals; /* per feasible node */
    /* a PodGroup cycle's placement limited the attempt to these nodes (interned names, sorted); NULL: every
     * node */
    uint32_t nplacement;
    const uint32_t *placement;
};

/* ks_attempt_lists - whether the attempt considered node @name at all (a placement lists only its own). */
static inline bool ks_attempt_lists(const struct ks_attempt *a, uint32_t name)
{
    return !a->placement || ks_sorted_ids_have(a->placement, a->nplacement, name);
}

/* One topology placement a PodGroup cycle considered (struct ks_group_attempt). */
struct ks_group_placement {
    uint32_t domain;   /* the value of the constraint's key (interned) */
    uint32_t nnodes;   /* nodes with that value */
    bool room;         /* its capacity could hold what minCount needs (else passed over) */
    bool evaluated;    /* its members were scheduled within it */
    bool feasible;     /* and minCount was reached */
    uint32_t placed;   /* the group's pods it held: already scheduled + placed by the evaluation */
    int64_t fit_score; /* NodeResourcesFit's placement score (-1 when not computed) */
    const char *why;   /* evaluated and infeasible: PlacementFeasible's reason, else NULL */
};

/*
 * One PodGroup cycle in detail, for `--explain`: the group, its members, and with a topology
 * constraint every placement considered and the one chosen. Valid only during the callback.
 */
struct ks_group_attempt {
    uint32_t namespace_id;
    const char *name;
    uint32_t members;      /* tried in this cycle */
    uint32_t scheduled;    /* assumed or bound before it */
    uint32_t topology_key; /* KS_ID_NONE: no constraint */
    uint32_t nplacements;
    const struct ks_group_placement *placements;
    uint32_t chosen;     /* index in placements, UINT32_MAX: none */
    bool ok;             /* its placed members went on to binding */
    bool error;          /* it failed with an error (SchedulerError), not a rejection */
    const char *message; /* the group's failure message, NULL on success */
};

typedef void (*ks_event_fn)(void *ctx, const struct ks_sched_event *ev);
typedef void (*ks_attempt_fn)(void *ctx, const struct ks_attempt *a);
typedef void (*ks_group_fn)(void *ctx, const struct ks_group_attempt *g);

struct ks_scheduler_opts {
    const struct ks_config *config;
    const struct ks_objects
        *objects;         /* cluster objects plugins read (PVCs, namespaces, PDBs...); may be NULL */
    uint32_t parallelism; /* worker threads for Filter/Score incl. the scheduling thread; 0: config, capped at
                             online cores */
    uint32_t binders;     /* binder threads; 0: 2 */
    uint64_t seed;        /* tie-break randomness; used when seeded */
    bool seeded;
    bool explain; /* score every node (percentageOfNodesToScore 100) and report attempts */
    /*
     * Never answer a cycle from the signature index (index/), nor a preemption's dry run from
     * the verdicts remembered for earlier preemptors (ks_framework_deps.no_memo): every cycle
     * filters and scores node by node. The decisions are the same either way; this is for
     * comparing the two.
     */
    bool no_index;
    ks_event_fn on_event;     /* from the scheduling thread and the binders, one call at a time */
    ks_attempt_fn on_attempt; /* scheduling thread */
    /*
     * on_unschedulable - each attempt that found no feasible node, with its diagnosis (scores
     * empty), before PostFilter runs; scheduling thread. Unlike on_attempt it costs the other
     * cycles nothing: the signature index keeps answering them. May be NULL.
     */
    ks_attempt_fn on_unschedulable;
    /* on_group - each PodGroup cycle, after its outcome; scheduling thread. May be NULL. */
    ks_group_fn on_group;
    void *ctx;
    /* the queue's clock; now NULL: CLOCK_MONOTONIC, which batch runs move forward instead of sleeping */
    struct ks_clock clock;
    /*
     * A batch run whose every outcome depends on its input, configuration and seed only, never
     * on thread timing (`ksched schedule`), by two rules:
     *   - a binding is settled before the next scheduling cycle starts: bound and confirmed in
     *     the cache (with its AssignedPod/Add event delivered), or failed and back in the queue;
     *     only the bindings of pods still waiting on Permit (not yet allowed, rejected or timed
     *     out) stay open. Bindings that wait for nothing run on the scheduling thread; the
     *     others on one binder thread, in the order their pods were permitted;
     *   - the queue's clock is logical: it moves KS_LOGICAL_TICK_NS at each pending pod added
     *     and at each scheduling cycle, stands still within a cycle, and
     *     ks_scheduler_run_until_idle() moves it to the next backoff expiry. Pods added one
     *     after another are thus queued in that order, and a pod's backoff is over after as
     *     many cycles as it lasts in ticks.
     * Permit timeouts stay in real time. Replaces opts.clock and opts.binders.
     */
    bool deterministic;
    int64_t max_unschedulable_ns; /* podMaxInUnschedulablePodsDuration; 0: 5 minutes */
    /*
     * Start a thread that flushes backoffQ every second and the unschedulable pods every 30
     * seconds, as upstream's queue.Run: needed by a blocking ks_scheduler_schedule_one;
     * batch runs (ks_scheduler_run_until_idle) flush themselves.
     */
    bool flusher;
    /*
     * Where DefaultBinder sends bindings (ksched/framework.h); bind NULL: they succeed at
     * once in process. Called from binder threads.
     */
    struct ks_binder_backend binder;
    /*
     * How preemption evicts its victims (ksched/framework.h); evict NULL: in process (the
     * victim leaves the cache at once and a PREEMPTED event is reported). Scheduling thread.
     */
    struct ks_evictor evictor;
    /*
     * on_cycle - called by the scheduling thread with each popped pod just before its
     * scheduling cycle, outside any lock or RCU read section; no worker is running. May be
     * NULL. (`ksched serve` times attempts and applies object changes here.)
     */
    void (*on_cycle)(void *ctx, const struct ks_queued_pod *qp);
    /*
     * How VolumeBinding's PreBind binds volumes (ksched/volume_api.h): through an API
     * server, or NULL: in process. Must outlive the scheduler.
     */
    const struct ks_volume_api *volume_api;
    /*
     * How DynamicResources publishes its allocations (ksched/internal/dra_api.h): through an API
     * server (ksched serve), or, NULL, in process.
     */
    const struct ks_dra_api *dra_api;
    /*
     * Where the engine records its metrics (ksched/internal/metrics_sched.h); NULL: nowhere. The set
     * serves this scheduler from ks_scheduler_create() to ks_scheduler_destroy() and must
     * outlive it.
     */
    struct ks_sched_metrics *metrics;
};

struct ks_scheduler;

/* How far the logical clock of a deterministic run moves per pod added and per cycle: 1 us. */
#define KS_LOGICAL_TICK_NS 1000

int ks_scheduler_create(const struct ks_scheduler_opts *opts, struct ks_cache *cache,
                        struct ks_scheduler **out, struct ks_error *err);

/* ks_scheduler_destroy - wait for bindings in flight, drop every queued pod. Accepts NULL. */
void ks_scheduler_destroy(struct ks_scheduler *s);

/*
 * Cluster events. Pods and nodes reach the scheduler through these calls (kube-scheduler's
 * informer event handlers, eventhandlers.go): pending pods go to the queue, bound pods and
 * nodes to the cache, and every change is offered to the queue as a cluster event that may
 * move unschedulable pods (MoveAllToActiveOrBackoffQueue, filtered by the rejecting
 * plugins' EventsToRegister and QueueingHints). Context: one event-intake thread at a
 * time for nodes and bound pods (it keeps the objects it passes valid for the call),
 * registered with RCU; pending-pod calls may come from any registered thread.
 */

/*
 * ks_scheduler_add_pod - a pod was created. Pending (no spec.nodeName): it enters the queue,
 * which takes a reference (ksched/api.h) for as long as it is queued or being bound, and a
 * status.nominatedNodeName is recorded with the nominator. Bound: the cache takes a
 * reference and the AssignedPod/Add event is delivered. Returns 0, or 1 when no profile
 * serves a pending pod's schedulerName (the pod is left alone, as upstream), -EEXIST when
 * it is queued already, or -ENOMEM.
 */
int ks_scheduler_add_pod(struct ks_scheduler *s, const struct ks_pod *pod);

/*
 * ks_scheduler_update_pod - @old_pod (NULL: unknown) was replaced by @new_pod. Both
 * pending: the queued pod is updated in place (re-sorted), or offered to its rejectors'
 * hints (UpdatePodLabel, UpdatePodToleration, UpdatePodSchedulingGatesEliminated, ...;
 * removed gates let a gated pod through PreEnqueue); a pod in flight comes back as the
 * new version. Both bound: the cache is updated and AssignedPod/Update* events delivered.
 * Pending to bound (bound elsewhere): it leaves the queue and enters the cache. A
 * reference to @new_pod is taken. 0, 1 (no profile serves it), or a negative errno.
 */
int ks_scheduler_update_pod(struct ks_scheduler *s, const struct ks_pod *old_pod,
                            const struct ks_pod *new_pod);

/*
 * ks_scheduler_delete_pod - @pod was deleted. Pending: removed from wherever it waits (a
 * pod in flight is dropped when it comes back, and its assumption, if its binding is under
 * way, leaves the cache), its nomination and any Permit wait ended.
 * Bound: removed from the cache, with the AssignedPod/Delete event. 0 or -ENOENT.
 */
int ks_scheduler_delete_pod(struct ks_scheduler *s, const struct ks_pod *pod);

/*
 * ks_scheduler_node_event - a node was added (@old_node NULL), updated, or deleted
 * (@new_node NULL). The cache takes over @new_node (on success); then Node/Add,
 * Node/Delete or the update kinds upstream distinguishes (allocatable, labels, taints -
 * a node that became schedulable counts as a taint change -, conditions, annotations)
 * are delivered with both objects. @old_node must be the object the cache holds.
 * 0 or the cache's negative errno (nothing taken over).
 */
int ks_scheduler_node_event(struct ks_scheduler *s, const struct ks_node *old_node, struct ks_node *new_node);

/*
 * ks_scheduler_object_event - a PersistentVolume, PersistentVolumeClaim, StorageClass,
 * CSINode (... any resource but pods and nodes) changed: @old_obj to @new_obj, either
 * NULL for an add or a delete. The objects stay the caller's (plugins read them through
 * opts.objects).
 */
void ks_scheduler_object_event(struct ks_scheduler *s, enum ks_event_resource resource, const void *old_obj,
                               const void *new_obj);

/*
 * ks_scheduler_schedule_one - pop one pod and run its scheduling cycle. Returns 1, or 0
 * when the queue is empty (with @block: waits for a pod; pods in backoff come back only
 * through the flusher, opts.flusher). Context: the scheduling thread, registered with RCU
 * (ks_rcu_register_thread), as must be the threads that create and destroy the scheduler.
 */
int ks_scheduler_schedule_one(struct ks_scheduler *s, bool block);

/*
 * ks_scheduler_run_until_idle - schedule until nothing can change any more: the active
 * queue is empty, no binding is in flight, and every pod is bound, or waits among the
 * unschedulable pods for an event that will not come (no one else delivers events in a
 * batch run), or sits in backoff after a round of retries that bound nothing. Pods in
 * backoff are retried when their backoff ends: with the default clock the clock is moved
 * forward to that moment instead of sleeping. Returns the number of scheduling cycles run.
 */
uint64_t ks_scheduler_run_until_idle(struct ks_scheduler *s);

/*
 * ks_scheduler_indexed_cycles - scheduling cycles whose host the signature index chose
 * (without filtering and scoring node by node) since the scheduler was created. Any thread.
 */
uint64_t ks_scheduler_indexed_cycles(const struct ks_scheduler *s);

/*
 * ks_scheduler_indexed_unfit_cycles - scheduling cycles the signature index found no node
 * fits (their FitError and PostFilter read its per-class statuses; 0 with opts.no_index).
 * Any thread.
 */
uint64_t ks_scheduler_indexed_unfit_cycles(const struct ks_scheduler *s);

/*
 * ks_scheduler_indexed_preemptions - preemptions whose candidates and chosen node the
 * signature index's candidate trees gave (without a dry run over numCandidates nodes; 0
 * with opts.no_index). Any thread.
 */
uint64_t ks_scheduler_indexed_preemptions(const struct ks_scheduler *s);

/* ks_scheduler_queue - the scheduling queue (inspection, tests). */
struct ks_queue *ks_scheduler_queue(struct ks_scheduler *s);

/*
 * ks__placements_exhaustive - tests: a PodGroup cycle evaluates every topology placement
 * instead of passing over those that cannot win (the decisions are the same). Set before
 * scheduling starts.
 */
extern bool ks__placements_exhaustive;

/* ks_num_feasible_nodes_to_find - upstream's numFeasibleNodesToFind (percentage 0: adaptive). */
uint32_t ks_num_feasible_nodes_to_find(int32_t percentage, uint32_t nall);

/* ks_sched_event_name - "Scheduled", ... */
const char *ks_sched_event_name(enum ks_sched_event_kind k);

#endif
