/*
 * framework_metrics.h - how the framework runtime and the scheduling loop record the
 * engine's metrics (ksched/internal/metrics_sched.h). Internal to engine/: metrics_sched.c (the
 * families, the gauges read at each scrape), framework_metrics.c (a framework's series,
 * the worker tallies), and the Run functions and passes that record.
 *
 * A framework built with metrics (fw->metrics) holds its series, looked up once when it is
 * created: per call list, its extension point's duration by status, each call's plugin
 * duration by status, and, at PreFilter, Filter, PreScore and Score, each call's
 * evaluation counter. Recording looks nothing up and allocates nothing.
 *
 * What it costs on the hot path:
 *   - extension points: a clock read at each end and one histogram observation per point
 *     per cycle (single-writer updates for the points only the scheduling thread runs);
 *   - evaluations (upstream counts every Filter and Score call per node): a batched Filter
 *     pass adds each block's nodes once per plugin to the worker's tally (struct
 *     ks_fw_tally, one per worker, no sharing), and the scheduling thread adds the tallies
 *     to the counters after the pass; Score's are the feasible nodes times the plugins run;
 *   - plugin durations: nothing, except in the sampled cycles (upstream's
 *     pluginMetricsSamplePercent). Upstream times every plugin call of a sampled cycle, and
 *     Filter and Score per node (runFilterPlugin, runScorePlugin, each call a clock read
 *     pair and an observation). The batched passes time each plugin's call over a block of
 *     nodes instead (one clock read per call, chained to the next) and add the time and the
 *     node calls by status to the worker's tally; after the pass each plugin gets one
 *     observation per status: the cycle's mean time per node call, weighted by its calls
 *     (ks_metric_observe_n). So _count is upstream's (the per-node calls) and _sum is the
 *     time spent in them; the buckets hold each cycle's mean per-node time rather than
 *     every call's own. The per-node paths that are not batched (nominated nodes,
 *     preemption's dry runs) time each call as upstream does.
 */
#ifndef KSCHED_ENGINE_FRAMEWORK_METRICS_H
#define KSCHED_ENGINE_FRAMEWORK_METRICS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "framework_internal.h"
#include "ksched/base/metrics.h"
#include "ksched/base/spin.h"
#include "ksched/internal/metrics_sched.h"

struct ks_scheduler;

/* The engine's families (metrics_sched.c); struct ks_sched_metrics of ksched/internal/metrics_sched.h. */
struct ks_sched_metrics {
    struct ks_metrics *reg;
    struct ks_metric_family *point, *plugin, *evals, *unschedulable;
    struct ks_metric *algorithm;                  /* scheduling_algorithm_duration_seconds */
    struct ks_metric *permit_wait[KS_CODE_COUNT]; /* permit_wait_duration_seconds{result} */
    struct ks_metric *cache_size[2][3];           /* [scheduler_cache_size, the old name][type] */
    uint32_t sample_percent;                      /* set before the scheduler exists */
    struct ks_mutex lock;                         /* everything below */
    struct ks_scheduler *sched;                   /* attached: read by the collector */
    uint32_t nprofiles;                           /* of the attached scheduler */
    struct ks_metric **unschedulable_series; /* nprofiles x 64, made at the first scrape that needs one */
};

/* One framework's series (framework_metrics.c). */
struct ks_fw_metrics {
    struct ks_metric *point[KS_FWL_COUNT][KS_CODE_COUNT]; /* NULL for the lists with no point of their own */
    struct ks_metric **plugin[KS_FWL_COUNT];              /* call i, code c: [i * KS_CODE_COUNT + c] */
    struct ks_metric **evals[KS_FWL_COUNT];               /* PreFilter, Filter, PreScore, Score: per call */
    struct ks_metric *algorithm;
    struct ks_metric *const *permit_wait; /* by code */
};

/*
 * What one worker saw during a parallel pass, per call of the pass's list (its index in
 * fw->list). Reset by the scheduling thread before the pass, written by its worker only,
 * read by the scheduling thread after the join.
 */
struct ks_fw_tally {
    bool timed;                                            /* the cycle is sampled */
    uint32_t evals[KS_MAX_PROFILE_PLUGINS];                /* node calls */
    uint64_t ns[KS_MAX_PROFILE_PLUGINS];                   /* timed: nanoseconds in the calls */
    uint32_t calls[KS_MAX_PROFILE_PLUGINS][KS_CODE_COUNT]; /* timed: node calls by the code returned */
} __attribute__((aligned(64)));

/* ks__fw_metrics_create - @fw's series from @sm (framework creation). 0 or -ENOMEM. */
int ks__fw_metrics_create(struct ks_framework *fw, struct ks_sched_metrics *sm);
void ks__fw_metrics_destroy(struct ks_fw_metrics *m);

/*
 * ks__fw_run_filter_tally - ks_fw_run_filter() counting each call into the worker's tally
 * @t, or with @t NULL straight into the counters and histograms (preemption's dry runs on
 * the scheduling thread). Workers.
 */
int ks__fw_run_filter_tally(const struct ks_framework *fw, const struct ks_cycle_state *cs,
                            const struct ks_pod *pod, const struct ks_node_snap *node, struct ks_status *st,
                            struct ks_fw_tally *t);

/* ks__fw_tally_reset - clear the first @n calls of @t for a pass; @timed: the cycle is sampled. */
void ks__fw_tally_reset(struct ks_fw_tally *t, uint32_t n, bool timed);

/*
 * ks__fw_tally_merge - the @nt tallies of a pass over list @l into @fw's series: the
 * evaluations they counted, and when timed the plugin durations (see above). Scheduling
 * thread, after the join.
 */
void ks__fw_tally_merge(const struct ks_framework *fw, enum ks_fw_list l, const struct ks_fw_tally *t,
                        uint32_t nt);

/*
 * Attaching a scheduler (metrics_sched.c): the collector reads its cache and queue until
 * it is detached. attach: 0, -EBUSY (another is attached) or -ENOMEM. Any thread.
 */
int ks__sched_metrics_attach(struct ks_sched_metrics *sm, struct ks_scheduler *s, uint32_t nprofiles);
void ks__sched_metrics_detach(struct ks_sched_metrics *sm);

static inline double ks__metrics_secs(int64_t ns)
{
    return (double)ns / 1e9;
}

/* A plugin's code as a label index (anything unknown counts as Error). */
static inline uint32_t ks__code_index(int code)
{
    return (unsigned)code < KS_CODE_COUNT ? (uint32_t)code : KS_ERROR;
}

/* The lists whose Run function only the scheduling thread calls: their points use _sw updates. */
static inline bool ks__fw_list_sched_only(enum ks_fw_list l)
{
    return l == KS_FWL_PRE_FILTER || l == KS_FWL_FILTER || l == KS_FWL_POST_FILTER || l == KS_FWL_PRE_SCORE ||
           l == KS_FWL_SCORE || l == KS_FWL_RESERVE || l == KS_FWL_PERMIT;
}

/* The start of an extension point: 0 when @fw records nothing. */
static inline int64_t ks__fw_point_start(const struct ks_framework *fw)
{
    return fw->metrics ? ks__mono_ns() : 0;
}

/*
 * ks__fw_point_span - extension point @l ran from @t0 until @t1 (ks__fw_point_start's
 * clock) and returned @code (framework_extension_point_duration_seconds). Returns @code.
 */
static inline int ks__fw_point_span(const struct ks_framework *fw, enum ks_fw_list l, int code, int64_t t0,
                                    int64_t t1)
{
    const struct ks_fw_metrics *m = fw->metrics;
    if (!m)
        return code;
    double secs = ks__metrics_secs(t1 - t0);
    struct ks_metric *s = m->point[l][ks__code_index(code)];
    if (ks__fw_list_sched_only(l))
        ks_metric_observe_sw(s, secs);
    else
        ks_metric_observe(s, secs);
    return code;
}

/*
 * ks__fw_point_end - extension point @l ran from @t0 until now and returned @code.
 * Returns @code, so a Run function can return ks__fw_point_end(fw, l, run_x(...), t0).
 */
static inline int ks__fw_point_end(const struct ks_framework *fw, enum ks_fw_list l, int code, int64_t t0)
{
    return fw->metrics ? ks__fw_point_span(fw, l, code, t0, ks__mono_ns()) : code;
}

/* The start of one plugin call: 0 unless @cs's cycle times its plugins. */
static inline int64_t ks__fw_plugin_start(const struct ks_framework *fw, const struct ks_cycle_state *cs)
{
    return fw->metrics && cs->record_plugin_metrics ? ks__mono_ns() : 0;
}

/* Call @i of list @l, started at @t0 (ks__fw_plugin_start), returned @code. Any thread. */
static inline void ks__fw_plugin_end(const struct ks_framework *fw, enum ks_fw_list l, uint32_t i, int code,
                                     int64_t t0)
{
    if (t0)
        ks_metric_observe(fw->metrics->plugin[l][i * KS_CODE_COUNT + ks__code_index(code)],
                          ks__metrics_secs(ks__mono_ns() - t0));
}

/* Call @i of list @l evaluated @n times (plugin_evaluation_total). Scheduling thread. */
static inline void ks__fw_evaluated(const struct ks_framework *fw, enum ks_fw_list l, uint32_t i, uint64_t n)
{
    if (fw->metrics && fw->metrics->evals[l])
        ks_metric_count_sw(fw->metrics->evals[l][i], n);
}

#endif
