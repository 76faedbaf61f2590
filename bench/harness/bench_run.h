/*
 * bench_run.h - the state of one `ksched bench` run, private to the harness: bench_run.c runs
 * the workload, bench_report.c checks its outcome (--check) and reports its figures.
 *
 * Context: the command's main thread, except the fields the event callback writes (marked).
 */
#ifndef KSCHED_BENCH_HARNESS_BENCH_RUN_H
#define KSCHED_BENCH_HARNESS_BENCH_RUN_H

#include "bench.h"

#include <stdatomic.h>

struct ks_cache;
struct ks_scheduler;
struct ks_metrics;
struct ks_sched_metrics;

/* Outcome of one pod, as its last event said. */
enum pod_state {
    POD_PENDING,
    POD_BOUND,
    POD_UNSCHEDULABLE,
    POD_PREEMPTED,
    POD_ERROR,
};

struct bench_pod {
    struct ks_pod *pod;
    uint32_t op;             /* index of the op that created it */
    _Atomic uint8_t state;   /* enum pod_state */
    _Atomic uint32_t node;   /* the node it was bound to */
    _Atomic uint32_t events; /* Unschedulable events: attempts that failed */
    bool deleted;            /* a steadyState pod deleted after its batch (main thread) */
};

/*
 * The claims of a steadyState op's pods, made before the run: claims[first[k] .. first[k + 1])
 * are pod k's. Claims [removed, pushed) are in the object set (which owns them), at
 * of[KS_KIND_RESOURCE_CLAIM].items[base ...]; the others are the run's to free, after the
 * scheduler.
 */
struct steady {
    uint32_t opi;
    uint32_t batch;
    uint32_t nclaims, pushed, removed, base;
    uint32_t *first;
    struct ks_resource_claim **claims;
    uint32_t batches;
};

struct bench_run {
    struct ks_bench_args a;
    const struct ks_bench_workload *w;
    const struct ks_bench_size *size;
    struct ks_cache *cache;
    struct ks_scheduler *s;
    /* the engine records its metrics as under `ksched serve`, so the figures include their cost */
    struct ks_metrics *reg;
    struct ks_sched_metrics *metrics;

    struct bench_pod *pods;
    uint32_t npods;
    uint32_t *op_first, *op_count; /* per op: its pods in pods[] */
    /* per op: the gangs its pods formed (podGroupSizes), their namespace, the last one's size */
    uint32_t *op_groups, *op_group_ns, *op_group_last;
    const struct bench_pod **index; /* open addressing by pod pointer, NULL when empty */
    uint32_t index_mask;

    uint32_t measured_op;
    uint32_t nmeasured;
    uint32_t nodes_total; /* nodes in the cache after every createNodes op */
    uint32_t next_node;   /* generated node names: node-<i> */

    /* written by the event callback (binder and scheduling threads), read by the main thread */
    _Atomic uint32_t measured_bound;
    _Atomic int64_t last_bound_ns;
    _Atomic bool measuring;

    /* results */
    struct ks_hist hist;
    int64_t t0, t_end, t_idle; /* window start, last measured bind, queue idle */
    int64_t cpu_ns;
    uint64_t cycles, untimed_cycles;
    uint64_t indexed_cycles;  /* measured-phase cycles (timed or not) whose host the signature index chose */
    uint64_t indexed_unfit;   /* measured-phase cycles the signature index found no node fits */
    uint64_t indexed_preempt; /* measured-phase preemptions its candidate trees answered */
    uint64_t cluster_bytes;
    uint32_t churn_steps;
    bool tty;
    bool dra; /* the workload has ops of Dynamic Resource Allocation */

    /* the object set: createAny's objects, DRA's, gangs' PodGroups, volumes (NULL without them) */
    struct ks_objects *objs;
    struct ks_bench_owners *made;       /* per op: the objects of a createAny that pods may belong to */
    struct ks_bench_dra_record *record; /* --check: the allocations the scheduler wrote */
    struct steady steady;
    uint32_t nplanned; /* the createNodes ops' nodes, by name, as they will be made */
    char **planned;
    uint32_t *planned_op;
};

/* The measured phase's figures (ks__bench_summarise). */
struct bench_result {
    uint32_t bound, unschedulable, failed;
    uint64_t rejections; /* Unschedulable events of the measured pods: failed attempts, retried or not */
    double seconds, pods_per_second, attempts_per_second, cpu_cores;
    uint64_t p50, p90, p99, max, peak_rss;
};

/*
 * ks__bench_check - every pod ended as its op expects, no node holds more than it can, gangs
 * are whole, and with DRA's record no device went to two claims at once and every bound pod's
 * claims are allocated on its node. Prints each problem; returns their number. After the run.
 */
uint32_t ks__bench_check(struct bench_run *r);

/* ks__bench_summarise - the figures of @r's measured phase. After the run. */
void ks__bench_summarise(const struct bench_run *r, struct bench_result *o);

/* ks__bench_print_human, ks__bench_print_json - the report on standard output: for people, one JSON line. */
void ks__bench_print_human(const struct bench_run *r, const struct bench_result *o);
void ks__bench_print_json(const struct bench_run *r, const struct bench_result *o);

#endif
