/*
 * workers.h - a fixed pool of threads that runs parallel-for jobs in blocks.
 *
 * The scheduling thread hands a job (a function over an index range) to the pool and
 * takes part in it; threads claim blocks of indices with one atomic add each, in
 * increasing order, and always finish a block they claimed. A job may be stopped early
 * (ks_workers_stop): no further block is claimed, so the indices processed are always a
 * prefix [0, k) of the range — which is what makes the early-stopping filter phase
 * deterministic. Ranges smaller than one block run inline with no hand-off.
 *
 * Mirrors the role of framework/parallelize (Parallelizer.Until) in kube-scheduler.
 *
 * Context: one job at a time, submitted by one thread (the scheduling thread). The job
 * function runs on pool threads and on the caller; it must not block. Workers register
 * with RCU so a job may read a snapshot the caller loaded under its read lock.
 */
#ifndef KSCHED_WORKERS_H
#define KSCHED_WORKERS_H

#include <stdint.h>

struct ks_workers;

/* ks_job_fn - process indices [begin, end) of a job; @worker is 0 for the caller, 1..n for pool threads. */
typedef void (*ks_job_fn)(void *ctx, uint32_t begin, uint32_t end, uint32_t worker);

/* ks_workers_create - a pool of @threads threads besides the caller (0: run everything inline). */
int ks_workers_create(uint32_t threads, struct ks_workers **out);

/* ks_workers_destroy - stop and join the threads. Accepts NULL. */
void ks_workers_destroy(struct ks_workers *w);

/* ks_workers_count - threads that may run a job's blocks, the caller included. */
uint32_t ks_workers_count(const struct ks_workers *w);

/*
 * ks_workers_run - run @fn over [0, @n) in blocks of @block indices and wait for it.
 * Returns the end of the processed prefix: @n unless the job was stopped.
 */
uint32_t ks_workers_run(struct ks_workers *w, uint32_t n, uint32_t block, ks_job_fn fn, void *ctx);

/* ks_workers_stop - from inside the running job: claim no further block. */
void ks_workers_stop(struct ks_workers *w);

#endif
