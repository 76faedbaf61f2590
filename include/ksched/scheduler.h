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

#include "ksched/cache.h"
#include "ksched/config_types.h"
#include "ksched/error.h"
#include "ksched/framework.h"

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
    const struct ks_snapshot *snap; /* the snapshot the attempt read (every node) */
    const struct ks_diagnosis *diag;
    uint32_t nfeasible;
    const struct ks_node_snap *const *feasible;
    uint32_t nscore;       /* score plugins (ks_framework_score_slot / weight) */
    const int64_t *scores; /* nfeasible x nscore, normalised and weighted */
    const int64_t *totals; /* per feasible node */
};

typedef void (*ks_event_fn)(void *ctx, const struct ks_sched_event *ev);
typedef void (*ks_attempt_fn)(void *ctx, const struct ks_attempt *a);

struct ks_scheduler_opts {
    const struct ks_config *config;
    const struct ks_objects
        *objects;         /* cluster objects plugins read (PVCs, namespaces, PDBs...); may be NULL */
    uint32_t parallelism; /* worker threads for Filter/Score incl. the scheduling thread; 0: config, capped at
                             online cores */
    uint32_t binders;     /* binder threads; 0: 2 */
    uint64_t seed;        /* tie-break randomness; used when seeded */
    bool seeded;
    bool explain;             /* score every node (percentageOfNodesToScore 100) and report attempts */
    ks_event_fn on_event;     /* may be called from binder threads concurrently */
    ks_attempt_fn on_attempt; /* scheduling thread */
    void *ctx;
};

struct ks_scheduler;

int ks_scheduler_create(const struct ks_scheduler_opts *opts, struct ks_cache *cache,
                        struct ks_scheduler **out, struct ks_error *err);

/* ks_scheduler_destroy - wait for bindings in flight, drop every queued pod. Accepts NULL. */
void ks_scheduler_destroy(struct ks_scheduler *s);

/*
 * ks_scheduler_add_pod - a pending pod enters the queue. Returns 0, or 1 when no profile
 * serves its schedulerName (the pod is left alone, as upstream), or -ENOMEM.
 */
int ks_scheduler_add_pod(struct ks_scheduler *s, const struct ks_pod *pod);

/*
 * ks_scheduler_schedule_one - pop one pod and run its scheduling cycle. Returns 1, or 0
 * when the queue is empty. Context: the scheduling thread, registered with RCU
 * (ks_rcu_register_thread), as must be the threads that create and destroy the scheduler.
 */
int ks_scheduler_schedule_one(struct ks_scheduler *s, bool block);

/*
 * ks_scheduler_run_until_idle - schedule until the queue is empty and no binding is in
 * flight, so every pod is bound or waiting as unschedulable for an event that will not
 * come. Returns the number of scheduling cycles run.
 */
uint64_t ks_scheduler_run_until_idle(struct ks_scheduler *s);

/* ks_scheduler_notify - a cluster event (enum ks_cluster_event bits) for the queue. */
void ks_scheduler_notify(struct ks_scheduler *s, unsigned events);

/* ks_num_feasible_nodes_to_find - upstream's numFeasibleNodesToFind (percentage 0: adaptive). */
uint32_t ks_num_feasible_nodes_to_find(int32_t percentage, uint32_t nall);

/* ks_sched_event_name - "Scheduled", ... */
const char *ks_sched_event_name(enum ks_sched_event_kind k);

#endif
