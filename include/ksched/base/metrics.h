/*
 * metrics.h - counters, gauges and histograms with Prometheus text exposition (format
 * 0.0.4), for `ksched serve`'s /metrics.
 *
 * A registry holds metric families (a name, a help text, a type, label names and, for
 * histograms, the bucket upper bounds); a family holds series, one per set of label
 * values. Creating a family or a series takes the registry's mutex and may allocate;
 * updating a series (ks_metric_inc/add/count/set/observe) is lock-free and allocates
 * nothing, so callers look series up once and keep the pointer. Series live as long as
 * the registry. The `_sw` updates are for a series only one thread writes at a time
 * (plain loads and stores instead of read-modify-writes, for the scheduling thread's
 * per-cycle updates); scrapes may read it meanwhile.
 *
 * Mirrors k8s.io/component-base/metrics (Prometheus client_golang's text encoder): families
 * in registration order, series in creation order, histogram buckets cumulative with a
 * final le="+Inf", numbers in the shortest form that reads back exactly.
 */
#ifndef KSCHED_METRICS_H
#define KSCHED_METRICS_H

#include <stdint.h>
#include <stdio.h>

enum ks_metric_type {
    KS_METRIC_COUNTER,
    KS_METRIC_GAUGE,
    KS_METRIC_HISTOGRAM,
};

#define KS_METRIC_MAX_LABELS  4
#define KS_METRIC_MAX_BUCKETS 32

struct ks_metrics;
struct ks_metric_family;
struct ks_metric;

/* Called by ks_metrics_write before it writes anything (refresh gauges read from elsewhere). */
typedef void (*ks_metrics_collect_fn)(void *ctx);

#define KS_METRICS_MAX_COLLECTORS 8

/* ks_metrics_create - an empty registry. 0 or -ENOMEM. */
int ks_metrics_create(struct ks_metrics **out);

/* ks_metrics_destroy - free the registry, its families and series. Accepts NULL. */
void ks_metrics_destroy(struct ks_metrics *m);

/*
 * ks_metrics_add_collector - @fn(@ctx) runs at the start of every ks_metrics_write (in the
 * order added; it may create series). 0, or -ENOSPC past KS_METRICS_MAX_COLLECTORS.
 * ks_metrics_remove_collector - remove it; when this returns, @fn is not running and will
 * not run again, so @ctx may be freed. Any thread but a collector's own.
 */
int ks_metrics_add_collector(struct ks_metrics *m, ks_metrics_collect_fn fn, void *ctx);
void ks_metrics_remove_collector(struct ks_metrics *m, ks_metrics_collect_fn fn, void *ctx);

/*
 * ks_metrics_family - register a family. @labels is NULL-terminated (at most
 * KS_METRIC_MAX_LABELS; NULL for none); @buckets (histograms only, increasing, at most
 * KS_METRIC_MAX_BUCKETS) are copied. @name and @help must outlive the registry (string
 * literals). Returns NULL on a bad argument or ENOMEM. Any thread.
 */
struct ks_metric_family *ks_metrics_family(struct ks_metrics *m, enum ks_metric_type type, const char *name,
                                           const char *help, const char *const *labels, const double *buckets,
                                           uint32_t nbuckets);

/*
 * ks_metrics_family_hide_unused - leave @f's histogram series that have no observation yet
 * out of the exposition, as client_golang shows a vector's series only once a label set
 * was used: for families whose series are made ahead (every status of every extension
 * point) so the hot path never creates one. Call before the first write.
 */
void ks_metrics_family_hide_unused(struct ks_metric_family *f);

/*
 * ks_metric_series - the series of @f with label @values (as many as the family has
 * labels; copied), created on first use. NULL on ENOMEM. Any thread; takes the mutex.
 */
struct ks_metric *ks_metric_series(struct ks_metric_family *f, const char *const *values);

/*
 * Updates. Lock-free, allocation-free, any thread. inc/add: counters and gauges; count:
 * counters, by a whole number (one atomic add, no compare-and-swap loop); set: gauges;
 * observe: histograms; observe_n: @n observations of @v at once (a batch whose items took
 * @v each on average: the sum grows by @v x @n).
 */
void ks_metric_inc(struct ks_metric *s);
void ks_metric_add(struct ks_metric *s, double v);
void ks_metric_count(struct ks_metric *s, uint64_t n);
void ks_metric_set(struct ks_metric *s, double v);
void ks_metric_observe(struct ks_metric *s, double v);
void ks_metric_observe_n(struct ks_metric *s, double v, uint64_t n);

/* Single-writer updates: only one thread at a time updates @s (no other update may run meanwhile). */
void ks_metric_count_sw(struct ks_metric *s, uint64_t n);
void ks_metric_observe_sw(struct ks_metric *s, double v);

/* ks_metric_value - a counter's or gauge's value, a histogram's count (tests). */
double ks_metric_value(const struct ks_metric *s);

/*
 * ks_metrics_write - the registry in Prometheus text format 0.0.4. Families without series
 * are written with their HELP and TYPE lines only. 0 or -EIO. Any thread.
 */
int ks_metrics_write(struct ks_metrics *m, FILE *out);

/* ks_metrics_exponential_buckets - @n bounds start, start*factor, ... (prometheus.ExponentialBuckets). */
void ks_metrics_exponential_buckets(double start, double factor, uint32_t n, double *out);

/* ks_metrics_format_double - @v as Go's strconv.FormatFloat(v, 'g', -1, 64) / "+Inf" / "NaN". */
void ks_metrics_format_double(double v, char *buf, size_t len);

#endif
