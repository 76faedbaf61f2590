/*
 * metrics_sched.c - the engine's metric families (ksched/internal/metrics_sched.h) and the gauges
 * read at each scrape.
 *
 * Mirrors pkg/scheduler/metrics/metrics.go: names, help texts with component-base's
 * stability prefix, labels and buckets of the newest kube-scheduler that has each family
 * (scheduler_scheduler_cache_size is v1.33's deprecated name of scheduler_cache_size,
 * kept for the dashboards written before v1.34; both carry the same values).
 *
 * The gauges are refreshed by the registry's collector from the attached scheduler: the
 * cache's sizes (upstream sets them from its cache every second; here at the scrape), and
 * scheduler_unschedulable_pods from the queue's rejection counts. Upstream increments a
 * plugin's gauge when a pod it rejected is queued and decrements it when the pod is popped,
 * so a series appears with the first pod a plugin rejects and stays (at 0 once none is
 * left): the collector makes a (plugin, profile) series the first time its count is not 0.
 * Unlike upstream, a pod deleted while it waits leaves the count too.
 *
 * Locking: `lock` guards the attached scheduler and the unschedulable series; the
 * collector holds it while it reads the scheduler, and detaching takes it, so the
 * scheduler is never read after its ks_scheduler_destroy() began. `lock` is
 * KS_LOCK_SCHED_METRICS in the lock order of include/ksched/base/lock.h.
 */
#include "framework_metrics.h"
#include "scheduler_internal.h"

#include "ksched/base/lock.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/config.h"
#include "ksched/internal/queue.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const cache_types[3] = {"nodes", "pods", "assumed_pods"};

static void collect(void *ctx);

int ks_sched_metrics_create(struct ks_metrics *reg, struct ks_sched_metrics **out)
{
    struct ks_sched_metrics *m = calloc(1, sizeof(*m));
    double algorithm_buckets[15], point_buckets[12], plugin_buckets[20];
    static const char *const point_labels[] = {"extension_point", "status", "profile", NULL};
    static const char *const plugin_labels[] = {"plugin", "extension_point", "status", NULL};
    static const char *const evals_labels[] = {"plugin", "extension_point", "profile", NULL};
    static const char *const plugin_profile[] = {"plugin", "profile", NULL};
    static const char *const result_label[] = {"result", NULL};
    static const char *const type_label[] = {"type", NULL};
    int rc;

    *out = NULL;
    if (!m)
        return -ENOMEM;
    ks_mutex_init(&m->lock, KS_LOCK_SCHED_METRICS);
    m->reg = reg;
    m->sample_percent = KS_PLUGIN_METRICS_SAMPLE_PERCENT;
    ks_metrics_exponential_buckets(0.001, 2, 15, algorithm_buckets);
    ks_metrics_exponential_buckets(0.0001, 2, 12, point_buckets);
    ks_metrics_exponential_buckets(0.00001, 1.5, 20, plugin_buckets);

    struct ks_metric_family *algorithm =
        ks_metrics_family(reg, KS_METRIC_HISTOGRAM, "scheduler_scheduling_algorithm_duration_seconds",
                          "[BETA] Scheduling algorithm latency in seconds", NULL, algorithm_buckets, 15);
    m->point =
        ks_metrics_family(reg, KS_METRIC_HISTOGRAM, "scheduler_framework_extension_point_duration_seconds",
                          "[STABLE] Latency for running all plugins of a specific extension point.",
                          point_labels, point_buckets, 12);
    m->plugin = ks_metrics_family(reg, KS_METRIC_HISTOGRAM, "scheduler_plugin_execution_duration_seconds",
                                  "[BETA] Duration for running a plugin at a specific extension point.",
                                  plugin_labels, plugin_buckets, 20);
    m->evals =
        ks_metrics_family(reg, KS_METRIC_COUNTER, "scheduler_plugin_evaluation_total",
                          "[BETA] Number of attempts to schedule pods by each plugin and the extension "
                          "point (available only in PreFilter, Filter, PreScore, and Score).",
                          evals_labels, NULL, 0);
    struct ks_metric_family *permit =
        ks_metrics_family(reg, KS_METRIC_HISTOGRAM, "scheduler_permit_wait_duration_seconds",
                          "[BETA] Duration of waiting on permit.", result_label, algorithm_buckets, 15);
    m->unschedulable = ks_metrics_family(
        reg, KS_METRIC_GAUGE, "scheduler_unschedulable_pods",
        "[BETA] The number of unschedulable pods broken down by plugin name. A pod will increment the gauge "
        "for "
        "all plugins that caused it to not schedule and so this metric have meaning only when broken down by "
        "plugin.",
        plugin_profile, NULL, 0);
    struct ks_metric_family *cache[2] = {
        ks_metrics_family(reg, KS_METRIC_GAUGE, "scheduler_cache_size",
                          "[ALPHA] Number of nodes, pods, and assumed (bound) pods in the scheduler cache.",
                          type_label, NULL, 0),
        ks_metrics_family(
            reg, KS_METRIC_GAUGE, "scheduler_scheduler_cache_size",
            "[ALPHA] (Deprecated since 1.33.0) Number of nodes, pods, and assumed (bound) pods in "
            "the scheduler cache.",
            type_label, NULL, 0),
    };
    rc = -ENOMEM;
    if (!algorithm || !m->point || !m->plugin || !m->evals || !permit || !m->unschedulable || !cache[0] ||
        !cache[1] || !(m->algorithm = ks_metric_series(algorithm, NULL)))
        goto err;
    ks_metrics_family_hide_unused(m->point);
    ks_metrics_family_hide_unused(m->plugin);
    ks_metrics_family_hide_unused(permit);
    for (int c = 0; c < KS_CODE_COUNT; c++) {
        if (!(m->permit_wait[c] = ks_metric_series(permit, (const char *const[]){ks_code_name(c)})))
            goto err;
    }
    for (int n = 0; n < 2; n++) {
        for (int t = 0; t < 3; t++) {
            if (!(m->cache_size[n][t] = ks_metric_series(cache[n], (const char *const[]){cache_types[t]})))
                goto err;
        }
    }
    if ((rc = ks_metrics_add_collector(reg, collect, m)) < 0)
        goto err;
    *out = m;
    return 0;
err:
    ks_mutex_destroy(&m->lock);
    free(m);
    return rc;
}

void ks_sched_metrics_destroy(struct ks_sched_metrics *m)
{
    if (!m)
        return;
    ks_metrics_remove_collector(m->reg, collect, m);
    free(m->unschedulable_series);
    ks_mutex_destroy(&m->lock);
    free(m);
}

void ks_sched_metrics_sample_percent(struct ks_sched_metrics *m, uint32_t percent)
{
    m->sample_percent = percent > 100 ? 100 : percent;
}

int ks__sched_metrics_attach(struct ks_sched_metrics *sm, struct ks_scheduler *s, uint32_t nprofiles)
{
    int rc = 0;
    ks_mutex_lock(&sm->lock);
    if (sm->sched) {
        rc = -EBUSY;
    } else {
        /* looked up again by label at the next scrape: an earlier scheduler's slots were other plugins */
        struct ks_metric **v = calloc((size_t)(nprofiles ? nprofiles : 1) * 64, sizeof(*v));
        if (!v) {
            rc = -ENOMEM;
        } else {
            free(sm->unschedulable_series);
            sm->unschedulable_series = v;
            sm->nprofiles = nprofiles;
            sm->sched = s;
        }
    }
    ks_mutex_unlock(&sm->lock);
    return rc;
}

void ks__sched_metrics_detach(struct ks_sched_metrics *sm)
{
    ks_mutex_lock(&sm->lock);
    sm->sched = NULL;
    ks_mutex_unlock(&sm->lock);
}

/* The registry's collector (scrape thread): cache sizes and unschedulable pods from the scheduler. */
static void collect(void *ctx)
{
    struct ks_sched_metrics *m = ctx;
    ks_mutex_lock(&m->lock);
    struct ks_scheduler *s = m->sched;
    if (!s) {
        ks_mutex_unlock(&m->lock);
        return;
    }
    uint32_t sizes[3];
    ks_cache_sizes(s->cache, &sizes[0], &sizes[1], &sizes[2]);
    for (int n = 0; n < 2; n++) {
        for (int t = 0; t < 3; t++)
            ks_metric_set(m->cache_size[n][t], sizes[t]);
    }
    for (uint32_t p = 0; p < s->nfw && p < m->nprofiles; p++) {
        uint32_t counts[64];
        const struct ks_framework *fw = s->fw[p];
        struct ks_metric **series = &m->unschedulable_series[(size_t)p * 64];
        ks_queue_rejections(s->queue, (uint16_t)p, counts);
        for (uint32_t slot = 0; slot < 64 && slot < ks_framework_nplugins(fw); slot++) {
            if (!series[slot] && counts[slot]) {
                const char *labels[] = {ks_framework_plugin_name(fw, slot),
                                        ks_framework_profile(fw)->scheduler_name};
                series[slot] = ks_metric_series(m->unschedulable, labels);
            }
            if (series[slot])
                ks_metric_set(series[slot], counts[slot]);
        }
    }
    ks_mutex_unlock(&m->lock);
}
