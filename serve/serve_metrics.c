/*
 * serve_metrics.c - kube-scheduler's metrics for `ksched serve` (serve/serve.h), with the
 * names, labels, help texts (component-base's stability prefix first) and buckets of
 * pkg/scheduler/metrics/metrics.go:
 *   scheduler_schedule_attempts_total{result,profile}
 *   scheduler_scheduling_attempt_duration_seconds{result,profile}   ExponentialBuckets(0.001, 2, 15)
 *   scheduler_e2e_scheduling_duration_seconds{result,profile}       (the same; deprecated in v1.23)
 *   scheduler_pending_pods{queue="active|backoff|unschedulable|gated"}
 *   scheduler_queue_incoming_pods_total{queue,event}  (queue="active", event="PodAdd": pods the
 *       informer adds; the queue's internal moves are not counted)
 *   scheduler_preemption_attempts_total, scheduler_preemption_victims  ExponentialBuckets(1, 2, 7)
 *   scheduler_pod_scheduling_attempts                                ExponentialBuckets(1, 2, 5)
 *   scheduler_pod_scheduling_sli_duration_seconds{attempts}          ExponentialBuckets(0.01, 2, 20)
 *   scheduler_pod_scheduling_duration_seconds{attempts}              (the same; deprecated in v1.29)
 * and the engine's own families (ksched/internal/metrics_sched.h), whose set it creates for the
 * scheduler (ks_serve_metrics_engine). One family is ksched's, not upstream's:
 *   scheduler_indexed_cycles_total   scheduling cycles whose host the signature index chose
 *       (ks_scheduler_indexed_cycles, read at each scrape like a CounterFunc; 0 with --no-index)
 *
 * An attempt lasts from the start of its cycle (the scheduler's on_cycle hook) to its
 * outcome (on_event: Unschedulable/Error in the cycle, Scheduled after binding), as
 * upstream measures it from scheduleOne's start. Starts are kept by pod in a map under
 * `lock` (the outcome of a binding arrives on a binder thread).
 * Deviation: PostFilter runs are not visible from outside the engine, so a preemption
 * attempt is counted for each Unschedulable outcome of a profile that has PostFilter
 * plugins (the cases where upstream's defaultpreemption runs, except Reserve/Permit rejections).
 */
#include "serve.h"

#include "ksched/base/intern.h"
#include "ksched/base/lock.h"
#include "ksched/internal/config.h"
#include "ksched/internal/metrics_sched.h"
#include "ksched/internal/queue.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { RESULT_SCHEDULED, RESULT_UNSCHEDULABLE, RESULT_ERROR, NRESULTS };
static const char *const result_names[NRESULTS] = {"scheduled", "unschedulable", "error"};

struct profile_metrics {
    uint32_t scheduler_name; /* interned */
    bool post_filter;
    struct ks_metric *attempts[NRESULTS], *duration[NRESULTS], *e2e[NRESULTS];
};

struct attempt_start {
    int64_t start_ns;
    int64_t initial_ns;
    uint32_t attempts;
};

struct ks_serve_metrics {
    struct ks_metrics *reg;
    uint32_t nprofiles;
    struct profile_metrics *profiles;
    struct ks_metric *pending[4];
    struct ks_metric_family *incoming;
    struct ks_metric *preemption_attempts, *victims, *pod_attempts;
    struct ks_metric *indexed_cycles; /* set from the attached scheduler at each scrape */
    struct ks_metric_family *pod_duration, *pod_sli_duration;
    struct ks_sched_metrics *engine;
    uint32_t victims_this_cycle; /* scheduling thread */

    struct ks_mutex lock;  /* starts, sched */
    struct ks_smap starts; /* "%p" of the pod -> struct attempt_start */
    struct ks_scheduler *sched;
};

static const char *const pending_queues[4] = {"active", "backoff", "unschedulable", "gated"};

static void collect(void *ctx)
{
    struct ks_serve_metrics *m = ctx;
    struct ks_queue_counts c = {0};
    uint64_t indexed = 0;
    bool attached;
    ks_mutex_lock(&m->lock);
    if ((attached = m->sched != NULL)) {
        ks_queue_count(ks_scheduler_queue(m->sched), &c);
        indexed = ks_scheduler_indexed_cycles(m->sched);
    }
    ks_mutex_unlock(&m->lock);
    /* a counter copied from the scheduler's (a CounterFunc): kept as it was once it is detached */
    if (attached)
        ks_metric_set(m->indexed_cycles, (double)indexed);
    /* the queue counts gated pods among the unschedulable ones; upstream lists them apart */
    uint32_t unsched = c.unschedulable >= c.gated ? c.unschedulable - c.gated : 0;
    ks_metric_set(m->pending[0], c.active);
    ks_metric_set(m->pending[1], c.backoff);
    ks_metric_set(m->pending[2], unsched);
    ks_metric_set(m->pending[3], c.gated);
}

int ks_serve_metrics_create(struct ks_metrics *reg, const struct ks_config *cfg,
                            struct ks_serve_metrics **out)
{
    struct ks_serve_metrics *m = calloc(1, sizeof(*m));
    if (!m)
        return -ENOMEM;
    ks_mutex_init(&m->lock, KS_LOCK_SERVE_METRICS);
    m->reg = reg;
    double attempt_buckets[15], victim_buckets[7], pod_attempt_buckets[5], pod_duration_buckets[20];
    ks_metrics_exponential_buckets(0.001, 2, 15, attempt_buckets);
    ks_metrics_exponential_buckets(1, 2, 7, victim_buckets);
    ks_metrics_exponential_buckets(1, 2, 5, pod_attempt_buckets);
    ks_metrics_exponential_buckets(0.01, 2, 20, pod_duration_buckets);
    static const char *const result_profile[] = {"result", "profile", NULL};
    static const char *const queue_label[] = {"queue", NULL};
    static const char *const queue_event[] = {"queue", "event", NULL};
    static const char *const attempts_label[] = {"attempts", NULL};

    struct ks_metric_family *attempts =
        ks_metrics_family(reg, KS_METRIC_COUNTER, "scheduler_schedule_attempts_total",
                          "[STABLE] Number of attempts to schedule pods, by the result. 'unschedulable' "
                          "means a pod could not be "
                          "scheduled, while 'error' means an internal scheduler problem.",
                          result_profile, NULL, 0);
    struct ks_metric_family *duration =
        ks_metrics_family(reg, KS_METRIC_HISTOGRAM, "scheduler_scheduling_attempt_duration_seconds",
                          "[STABLE] Scheduling attempt latency in seconds (scheduling algorithm + binding)",
                          result_profile, attempt_buckets, 15);
    struct ks_metric_family *e2e =
        ks_metrics_family(reg, KS_METRIC_HISTOGRAM, "scheduler_e2e_scheduling_duration_seconds",
                          "[ALPHA] (Deprecated since 1.23.0) E2e scheduling latency in seconds (scheduling "
                          "algorithm + binding). "
                          "This metric is replaced by scheduling_attempt_duration_seconds.",
                          result_profile, attempt_buckets, 15);
    struct ks_metric_family *pending = ks_metrics_family(
        reg, KS_METRIC_GAUGE, "scheduler_pending_pods",
        "[STABLE] Number of pending pods, by the queue type. 'active' means number of pods in activeQ; "
        "'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in "
        "unschedulablePods "
        "that the scheduler attempted to schedule and failed; 'gated' is the number of unschedulable pods "
        "that "
        "the scheduler never attempted to schedule because they are gated.",
        queue_label, NULL, 0);
    m->incoming = ks_metrics_family(
        reg, KS_METRIC_COUNTER, "scheduler_queue_incoming_pods_total",
        "[STABLE] Number of pods added to scheduling queues by event and queue type.", queue_event, NULL, 0);
    struct ks_metric_family *pre_attempts =
        ks_metrics_family(reg, KS_METRIC_COUNTER, "scheduler_preemption_attempts_total",
                          "[STABLE] Total preemption attempts in the cluster till now", NULL, NULL, 0);
    struct ks_metric_family *victims =
        ks_metrics_family(reg, KS_METRIC_HISTOGRAM, "scheduler_preemption_victims",
                          "[STABLE] Number of selected preemption victims", NULL, victim_buckets, 7);
    struct ks_metric_family *pod_attempts = ks_metrics_family(
        reg, KS_METRIC_HISTOGRAM, "scheduler_pod_scheduling_attempts",
        "[STABLE] Number of attempts to successfully schedule a pod.", NULL, pod_attempt_buckets, 5);
    m->pod_sli_duration = ks_metrics_family(
        reg, KS_METRIC_HISTOGRAM, "scheduler_pod_scheduling_sli_duration_seconds",
        "[BETA] E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and "
        "might involve multiple scheduling attempts.",
        attempts_label, pod_duration_buckets, 20);
    m->pod_duration =
        ks_metrics_family(reg, KS_METRIC_HISTOGRAM, "scheduler_pod_scheduling_duration_seconds",
                          "[STABLE] (Deprecated since 1.29.0) E2e latency for a pod being scheduled "
                          "which may include multiple scheduling attempts.",
                          attempts_label, pod_duration_buckets, 20);
    struct ks_metric_family *indexed = ks_metrics_family(
        reg, KS_METRIC_COUNTER, "scheduler_indexed_cycles_total",
        "[ALPHA] Number of scheduling cycles whose node the signature index chose without filtering and "
        "scoring node by node (ksched only; 0 with --no-index).",
        NULL, NULL, 0);
    if (!attempts || !duration || !e2e || !pending || !m->incoming || !pre_attempts || !victims ||
        !pod_attempts || !m->pod_sli_duration || !m->pod_duration || !indexed)
        goto err;
    for (int i = 0; i < 4; i++) {
        if (!(m->pending[i] = ks_metric_series(pending, (const char *const[]){pending_queues[i]})))
            goto err;
    }
    if (!(m->preemption_attempts = ks_metric_series(pre_attempts, NULL)) ||
        !(m->victims = ks_metric_series(victims, NULL)) ||
        !(m->pod_attempts = ks_metric_series(pod_attempts, NULL)) ||
        !(m->indexed_cycles = ks_metric_series(indexed, NULL)))
        goto err;
    m->nprofiles = cfg->nprofiles;
    if (!(m->profiles = calloc(cfg->nprofiles, sizeof(*m->profiles))))
        goto err;
    for (uint32_t p = 0; p < cfg->nprofiles; p++) {
        struct profile_metrics *pm = &m->profiles[p];
        const char *name = cfg->profiles[p].scheduler_name;
        pm->scheduler_name = ks_intern(name);
        pm->post_filter = ks_profile_point(&cfg->profiles[p], KS_EXT_POST_FILTER)->n > 0;
        for (int r = 0; r < NRESULTS; r++) {
            const char *labels[] = {result_names[r], name};
            if (!(pm->attempts[r] = ks_metric_series(attempts, labels)) ||
                !(pm->duration[r] = ks_metric_series(duration, labels)) ||
                !(pm->e2e[r] = ks_metric_series(e2e, labels)))
                goto err;
        }
    }
    int rc;
    if ((rc = ks_sched_metrics_create(reg, &m->engine)) < 0 ||
        (rc = ks_metrics_add_collector(reg, collect, m)) < 0) {
        ks_serve_metrics_destroy(m);
        return rc;
    }
    *out = m;
    return 0;
err:
    ks_serve_metrics_destroy(m);
    return -ENOMEM;
}

struct ks_sched_metrics *ks_serve_metrics_engine(struct ks_serve_metrics *m)
{
    return m->engine;
}

void ks_serve_metrics_destroy(struct ks_serve_metrics *m)
{
    if (!m)
        return;
    ks_metrics_remove_collector(m->reg, collect, m);
    ks_sched_metrics_destroy(m->engine);
    ks_smap_clear(&m->starts, free);
    free(m->profiles);
    ks_mutex_destroy(&m->lock);
    free(m);
}

void ks_serve_metrics_attach(struct ks_serve_metrics *m, struct ks_scheduler *s)
{
    ks_mutex_lock(&m->lock);
    m->sched = s;
    ks_mutex_unlock(&m->lock);
}

static void pod_key(const struct ks_pod *pod, char *buf, size_t len)
{
    snprintf(buf, len, "%p", (const void *)pod);
}

void ks_serve_metrics_cycle(struct ks_serve_metrics *m, const struct ks_queued_pod *qp, int64_t now_ns)
{
    char key[32];
    pod_key(qp->pod, key, sizeof(key));
    ks_mutex_lock(&m->lock);
    struct attempt_start *a = ks_smap_get(&m->starts, key);
    if (!a && (a = malloc(sizeof(*a))) && ks_smap_put(&m->starts, key, a, NULL) < 0) {
        free(a);
        a = NULL;
    }
    if (a) {
        a->start_ns = now_ns;
        a->initial_ns = qp->initial_attempt_ns;
        a->attempts = qp->attempts;
    }
    ks_mutex_unlock(&m->lock);
    m->victims_this_cycle = 0;
}

static const struct profile_metrics *profile_of(const struct ks_serve_metrics *m, const struct ks_pod *pod)
{
    for (uint32_t p = 0; p < m->nprofiles; p++) {
        if (m->profiles[p].scheduler_name == pod->scheduler_name)
            return &m->profiles[p];
    }
    return NULL;
}

void ks_serve_metrics_event(struct ks_serve_metrics *m, const struct ks_sched_event *ev, int64_t now_ns)
{
    int result;
    switch (ev->kind) {
    case KS_SCHED_SCHEDULED:
        result = RESULT_SCHEDULED;
        break;
    case KS_SCHED_UNSCHEDULABLE:
        result = RESULT_UNSCHEDULABLE;
        break;
    case KS_SCHED_ERROR:
        result = RESULT_ERROR;
        break;
    case KS_SCHED_NOMINATED:
        ks_metric_observe(m->victims, m->victims_this_cycle);
        return;
    default:
        return;
    }
    const struct profile_metrics *pm = profile_of(m, ev->pod);
    char key[32];
    struct attempt_start a = {.start_ns = -1};
    pod_key(ev->pod, key, sizeof(key));
    ks_mutex_lock(&m->lock);
    struct attempt_start *found = ks_smap_del(&m->starts, key);
    if (found)
        a = *found;
    ks_mutex_unlock(&m->lock);
    free(found);
    if (!pm)
        return;
    ks_metric_inc(pm->attempts[result]);
    if (a.start_ns >= 0) {
        double secs = (double)(now_ns - a.start_ns) / 1e9;
        ks_metric_observe(pm->duration[result], secs);
        ks_metric_observe(pm->e2e[result], secs);
    }
    if (result == RESULT_UNSCHEDULABLE && pm->post_filter)
        ks_metric_inc(m->preemption_attempts);
    if (result == RESULT_SCHEDULED && a.start_ns >= 0) {
        ks_metric_observe(m->pod_attempts, a.attempts);
        if (a.initial_ns > 0) {
            char attempts[16];
            /* getAttemptsLabel: up to 14 attempts exactly, then "15+" */
            if (a.attempts >= 15)
                snprintf(attempts, sizeof(attempts), "15+");
            else
                snprintf(attempts, sizeof(attempts), "%u", a.attempts);
            double secs = (double)(now_ns - a.initial_ns) / 1e9;
            struct ks_metric *sli = ks_metric_series(m->pod_sli_duration, (const char *const[]){attempts});
            struct ks_metric *s = ks_metric_series(m->pod_duration, (const char *const[]){attempts});
            if (sli)
                ks_metric_observe(sli, secs);
            if (s)
                ks_metric_observe(s, secs);
        }
    }
}

void ks_serve_metrics_incoming(struct ks_serve_metrics *m, const char *event)
{
    struct ks_metric *s = ks_metric_series(m->incoming, (const char *const[]){"active", event});
    if (s)
        ks_metric_inc(s);
}

void ks_serve_metrics_victim(struct ks_serve_metrics *m)
{
    m->victims_this_cycle++;
}
