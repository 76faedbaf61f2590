/*
 * explain_table.h - `ksched schedule -o table`: the scheduler's reports as terminal tables.
 *
 * Without --explain, one table of outcomes (POD, STATUS, NODE, MESSAGE) written when the
 * run ends. With --explain, one section per scheduling cycle, in the order the scheduling
 * thread ran them: the pod and its attempt, the feasible nodes with the best totals (each
 * score plugin's weighted score in a column), the filtered nodes grouped by reason, then
 * the outcome lines. A section is written as soon as it and every earlier one have their
 * outcome, so the output is the same whichever binder thread reports first.
 */
#ifndef KSCHED_CMD_EXPLAIN_TABLE_H
#define KSCHED_CMD_EXPLAIN_TABLE_H

#include <stdbool.h>
#include <stdio.h>

#include "ksched/internal/scheduler.h"

/* Feasible nodes listed per attempt; the rest are counted. */
#define KS_EXPLAIN_TABLE_TOP 10

struct ks_explain_table;

/* ks_explain_table_create - a writer to @out (per-attempt sections when @explain). 0 or -ENOMEM. */
int ks_explain_table_create(FILE *out, bool explain, struct ks_explain_table **t);

/*
 * The scheduler's callbacks (ksched/internal/scheduler.h), each given the writer as ctx. on_cycle
 * and on_attempt come from the scheduling thread, on_event from it or from binder threads;
 * an internal lock orders them (KS_LOCK_EXPLAIN_TABLE, taken inside the scheduler's event
 * lock: ksched/base/lock.h).
 * on_attempt is for --explain writers only.
 */
void ks_explain_table_on_cycle(void *t, const struct ks_queued_pod *qp);
void ks_explain_table_on_attempt(void *t, const struct ks_attempt *a);
void ks_explain_table_on_event(void *t, const struct ks_sched_event *ev);
/*
 * ks_explain_table_on_group - a PodGroup cycle's section (--explain): the group, its
 * outcome and message, and with a topology constraint its placements (the chosen one
 * starred), written after the sections of the members it tried.
 */
void ks_explain_table_on_group(void *t, const struct ks_group_attempt *g);

/*
 * ks_explain_table_finish - write everything not yet written (a cycle without an outcome
 * says so). Call once the scheduler is idle, before it is destroyed. 0, or -ENOMEM when a
 * report could not be recorded (the output then lacks it).
 */
int ks_explain_table_finish(struct ks_explain_table *t);

/* ks_explain_table_destroy - free the writer (and anything not written). Accepts NULL. */
void ks_explain_table_destroy(struct ks_explain_table *t);

#endif
