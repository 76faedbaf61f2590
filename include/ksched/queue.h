/*
 * queue.h - the scheduling queue the scheduling loop pops pods from.
 *
 * Mirrors the interface of kube-scheduler's SchedulingQueue (backend/queue): pending pods
 * are added, popped in QueueSort order, put back as unschedulable after a failed attempt
 * (remembering which plugins rejected them and in which scheduling cycle), and moved
 * back to the active queue by cluster events that could make them schedulable.
 *
 * Ownership: the queue owns each struct ks_queued_pod from ks_queue_add() until it is
 * popped; the popper owns it then, and either gives it back (ks_queue_add_unschedulable)
 * or frees it (ks_queued_pod_free). The pod object itself is not owned by the queue.
 *
 * Context: every function may be called from any thread.
 */
#ifndef KSCHED_QUEUE_H
#define KSCHED_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include "ksched/queue_types.h"

struct ks_queue;

/* Comparison from the profiles' QueueSort plugin: true when @a pops before @b. */
typedef bool (*ks_queue_less_fn)(const void *ctx, const struct ks_queued_pod *a,
                                 const struct ks_queued_pod *b);

/* Cluster events that move unschedulable pods (a bit set). */
enum ks_cluster_event {
    KS_EVENT_NODE_ADD = 1u << 0,
    KS_EVENT_NODE_UPDATE = 1u << 1,
    KS_EVENT_ASSIGNED_POD_ADD = 1u << 2,
    KS_EVENT_ASSIGNED_POD_DELETE = 1u << 3,
    KS_EVENT_ASSIGNED_POD_UPDATE = 1u << 4,
};

int ks_queue_create(ks_queue_less_fn less, const void *less_ctx, struct ks_queue **out);

/* ks_queue_destroy - free every queued pod wrapper (not the pods). Accepts NULL. */
void ks_queue_destroy(struct ks_queue *q);

/* ks_queue_add - a new pending pod enters the active queue at @now_ns. */
int ks_queue_add(struct ks_queue *q, const struct ks_pod *pod, int64_t now_ns);

/*
 * ks_queue_pop - the next pod to schedule, its attempts counted; NULL when the active
 * queue is empty (with @block: waits until a pod arrives or the queue is closed).
 * Also starts a new scheduling cycle (ks_queue_cycle).
 */
struct ks_queued_pod *ks_queue_pop(struct ks_queue *q, bool block);

/* ks_queue_cycle - the number of pods popped so far (upstream's schedulingCycle). */
uint64_t ks_queue_cycle(struct ks_queue *q);

/*
 * ks_queue_add_unschedulable - give back a pod whose attempt in scheduling cycle @cycle
 * failed; @rejectors is the events mask that could make it schedulable. If a move
 * request happened during or after @cycle, it goes straight back to the active queue.
 */
int ks_queue_add_unschedulable(struct ks_queue *q, struct ks_queued_pod *qp, uint64_t cycle, unsigned events);

/* ks_queue_move - move unschedulable pods waiting for any of @events back to the active queue. */
void ks_queue_move(struct ks_queue *q, unsigned events, int64_t now_ns);

/* ks_queue_counts - pods in the active queue and among the unschedulable. */
void ks_queue_counts(struct ks_queue *q, uint32_t *active, uint32_t *unschedulable);

/* ks_queue_close - wake every blocked pop (which then returns NULL). */
void ks_queue_close(struct ks_queue *q);

/* ks_queued_pod_free - free a popped wrapper. Accepts NULL. */
void ks_queued_pod_free(struct ks_queued_pod *qp);

/* ks_queue_take_unschedulable - remove and return one unschedulable pod (shutdown), NULL when none. */
struct ks_queued_pod *ks_queue_take_unschedulable(struct ks_queue *q);

#endif
