/*
 * metrics_sched.h - the metrics the scheduling engine records itself: the framework's,
 * the queue's and the cache's families of kube-scheduler (pkg/scheduler/metrics/metrics.go),
 * with upstream's names, help texts (as component-base writes them: the stability level
 * first, then "(Deprecated since X)" for a deprecated family), labels and buckets:
 *
 *   scheduler_scheduling_algorithm_duration_seconds                  ExponentialBuckets(0.001, 2, 15)
 *   scheduler_framework_extension_point_duration_seconds{extension_point,status,profile}
 *                                                                    ExponentialBuckets(0.0001, 2, 12)
 *   scheduler_plugin_execution_duration_seconds{plugin,extension_point,status}
 *                                                                    ExponentialBuckets(0.00001, 1.5, 20)
 *   scheduler_plugin_evaluation_total{plugin,extension_point,profile}   PreFilter, Filter, PreScore, Score
 *   scheduler_permit_wait_duration_seconds{result}                   ExponentialBuckets(0.001, 2, 15)
 *   scheduler_unschedulable_pods{plugin,profile}
 *   scheduler_cache_size{type}, and its name before v1.34, scheduler_scheduler_cache_size{type}
 *                                                                    type: nodes, pods, assumed_pods
 *
 * Where they are recorded (engine/framework_metrics.h says how): extension points around
 * every Run function (Filter and Score around the whole parallel pass, as upstream's
 * findNodesThatPassFilters and RunScorePlugins); plugin durations only in a sampled share
 * of the cycles (upstream's pluginMetricsSamplePercent, 10), their cycle state's
 * record_plugin_metrics set; Filter and Score evaluations counted per node. The gauges
 * are read at each scrape: the cache's sizes, and for each plugin the pods waiting in the
 * queue (not in flight) whose last attempt it rejected or that it gates (upstream
 * increments the gauge when such a pod is queued and decrements it when it is popped).
 *
 * Context: create the set with its registry, hand it to one scheduler
 * (ks_scheduler_opts.metrics), which attaches itself for its lifetime; the registry
 * outlives both. A set serves one scheduler at a time.
 */
#ifndef KSCHED_METRICS_SCHED_H
#define KSCHED_METRICS_SCHED_H

#include <stdint.h>

#include "ksched/base/metrics.h"

struct ks_sched_metrics;

/* Upstream's pluginMetricsSamplePercent: the share of cycles whose plugin calls are timed. */
#define KS_PLUGIN_METRICS_SAMPLE_PERCENT 10

/*
 * ks_sched_metrics_create - register the engine's families in @reg (which must outlive the
 * set) and add its collector. 0, or -ENOMEM / -ENOSPC (the registry's collectors are full).
 */
int ks_sched_metrics_create(struct ks_metrics *reg, struct ks_sched_metrics **out);

/* ks_sched_metrics_destroy - remove the collector and free. No scheduler may use it. Accepts NULL. */
void ks_sched_metrics_destroy(struct ks_sched_metrics *m);

/*
 * ks_sched_metrics_sample_percent - time the plugin calls of @percent % of the cycles
 * (default KS_PLUGIN_METRICS_SAMPLE_PERCENT; 100: every cycle, for tests). Before the
 * scheduler is created.
 */
void ks_sched_metrics_sample_percent(struct ks_sched_metrics *m, uint32_t percent);

#endif
