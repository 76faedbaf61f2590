/*
 * summary.h - `ksched schedule --summary`: the run's outcome per workload.
 *
 * A workload is the pending pods of one owner (the controller ownerReference; a ReplicaSet
 * the input shows owned by a Deployment reads as the Deployment), or, for pods without an
 * owner, the pods of one namespace that share their labels, requests, priority, scheduler
 * and node selector (one template). For each, in the order its first pod was loaded: how
 * many pods were placed, on how many nodes and in which zones; for the others, their last
 * FailedScheduling messages with the pods each; the pods its pods preempted; and, where the
 * failures are of capacity alone, what would fit them: how many more nodes of an existing
 * shape would hold the pods left, and how small a request the room the cluster has left
 * would hold every pod of the workload at.
 *
 * JSON writes one object per workload and line; a table writes one row per workload with
 * its reasons, preemptions and suggestions indented below.
 */
#ifndef KSCHED_CMD_SUMMARY_H
#define KSCHED_CMD_SUMMARY_H

#include <stdbool.h>
#include <stdio.h>

#include "ksched/internal/cache.h"
#include "ksched/internal/scheduler.h"
#include "ksched/loader.h"

struct ks_summary;

/*
 * ks_summary_create - a summary of the pending pods of @objs (their workloads, and the nodes
 * they may land on), written to @out as a table or JSON lines. Call before the objects'
 * nodes go to the cache; @objs must outlive the summary. 0 or -ENOMEM.
 */
int ks_summary_create(const struct ks_objects *objs, bool table, FILE *out, struct ks_summary **s);

/*
 * The scheduler's callbacks (ksched/internal/scheduler.h: on_event, on_unschedulable), the summary
 * as ctx. Called one at a time, as a deterministic run calls them.
 */
void ks_summary_on_event(void *s, const struct ks_sched_event *ev);
void ks_summary_on_unschedulable(void *s, const struct ks_attempt *a);

/*
 * ks_summary_finish - work out the suggestions against @cache's final state and write the
 * summary. Scheduling thread, the scheduler idle, registered with RCU. 0, -ENOMEM, or -EIO
 * when writing failed.
 */
int ks_summary_finish(struct ks_summary *s, struct ks_cache *cache);

/* ks_summary_destroy - accepts NULL. */
void ks_summary_destroy(struct ks_summary *s);

#endif
