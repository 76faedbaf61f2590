/*
 * schedule_one.c - one scheduling cycle (ScheduleOne / schedulingCycle in upstream's
 * schedule_one.go).
 *
 * Pop a pod; pick its profile's framework; skip pods being deleted or already assumed;
 * refresh and read the snapshot under RCU; find feasible nodes; if none, run PostFilter
 * and report the FitError; else score, select, assume, Reserve, Permit, and hand the pod
 * to a binder thread. Every failure unreserves what was reserved, forgets the assumption
 * and gives the pod back to the queue with the reason and the plugins that rejected it.

 *
 * Metrics (framework_metrics.h): a sampled share of the cycles times its plugins (the
 * cycle state's record_plugin_metrics, drawn from a generator of its own so the
 * tie-breaks stay what the seed makes them), and scheduling_algorithm_duration_seconds
 * runs from the cycle's start to its host, or to the end of PostFilter when none fits,
 * as upstream's schedulingCycle observes it.
 */
#include "framework_metrics.h"
#include "scheduler_internal.h"
#include "select_host.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/index.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ks_framework *ks__framework_for(struct ks_scheduler *s, const struct ks_pod *pod)
{
    for (uint32_t i = 0; i < s->nfw; i++) {
        if (s->fw_names[i] == pod->scheduler_name)
            return s->fw[i];
    }
    return NULL;
}

static struct ks_event_map *map_of(struct ks_scheduler *s, const struct ks_framework *fw)
{
    for (uint32_t i = 0; i < s->nfw; i++) {
        if (s->fw[i] == fw)
            return s->maps[i];
    }
    return NULL;
}

void ks__failure(struct ks_scheduler *s, struct ks_framework *fw, struct ks_queued_pod *qp, uint64_t cycle,
                 int code, const char *message, uint64_t rejectors)
{
    bool rejected = code == KS_UNSCHEDULABLE || code == KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    ks__emit(s, rejected ? KS_SCHED_UNSCHEDULABLE : KS_SCHED_ERROR, qp->pod, KS_ID_EMPTY, message);
    /*
     * A rejection waits for the events its plugins register; an error, or a rejection no
     * plugin owns, is retried after backoff (events 0), as upstream treats a pod without
     * unschedulable plugins.
     */
    qp->unschedulable_plugins = rejected ? rejectors : 0;
    const struct ks_event_map *m = fw ? map_of(s, fw) : NULL;
    unsigned events = 0;
    if (rejected && rejectors) {
        events = m ? ks_event_map_kinds(m, rejectors) : KS_EVENT_ALL;
        if (!events)
            events = KS_EVENT_ALL; /* its rejectors register nothing: every hint skips, the timeout helps */
    }
    /* the queue owns the pod again (and has dropped it if it ran out of memory) */
    ks_queue_add_unschedulable(s->queue, qp, cycle, events);
}

/* Report an attempt that found no feasible node (prioritize reports the others to on_attempt). */
static void report_unfit(struct ks_scheduler *s, struct ks_framework *fw, const struct ks_cycle_state *cs,
                         const struct ks_queued_pod *qp, const struct ks_find_result *found)
{
    if ((!s->opts.on_attempt && !s->opts.on_unschedulable) || s->what_if)
        return;
    struct ks_attempt a = {.pod = qp->pod,
                           .attempt = qp->attempts,
                           .fw = fw,
                           .cs = cs,
                           .snap = found->snap,
                           .diag = &found->diag,
                           .nplacement = s->placement.n,
                           .placement = s->placement.n ? s->placement.names : NULL};
    if (s->opts.on_attempt)
        s->opts.on_attempt(s->opts.ctx, &a);
    if (s->opts.on_unschedulable)
        s->opts.on_unschedulable(s->opts.ctx, &a);
}

/* scheduling_algorithm_duration_seconds: the cycle that began at @start found its answer. */
static void algorithm_done(const struct ks_framework *fw, int64_t start)
{
    if (fw->metrics)
        ks_metric_observe_sw(fw->metrics->algorithm, ks__metrics_secs(ks__mono_ns() - start));
}

/* Status.Message() of PostFilter's status: every plugin's reasons joined by ", " (interned). */
static uint32_t post_filter_message(const struct ks_status *st)
{
    char buf[2048];
    size_t len = 0;

    if (st->nreasons == 1)
        return st->reasons[0];
    buf[0] = '\0';
    for (uint16_t i = 0; i < st->nreasons && len < sizeof(buf); i++)
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? ", " : "",
                                ks_intern_str(st->reasons[i]));
    uint32_t id = ks_intern(buf);
    return id == KS_ID_NONE ? st->reasons[0] : id;
}

/* No node fits: PostFilter (preemption), then the FitError message. */
static void unfit(struct ks_scheduler *s, struct ks_framework *fw, struct ks_cycle_state *cs,
                  struct ks_queued_pod *qp, uint64_t cycle, struct ks_find_result *found, int64_t start)
{
    struct ks_post_filter_result res = {.nominated_node = KS_ID_EMPTY};
    struct ks_status pst = {0};
    int rc = ks_fw_run_post_filter(fw, cs, qp->pod, &found->diag, &res, &pst);
    algorithm_done(fw, start);
    if (pst.nreasons)
        found->diag.post_filter_msg = post_filter_message(&pst);
    if (rc == KS_SUCCESS && res.nominated_node != KS_ID_EMPTY) {
        /* the preemptor waits for its victims to leave: the node is held for it meanwhile */
        ks_nominator_add(s->nominator, qp->pod, res.nominated_node);
        ks__emit(s, KS_SCHED_NOMINATED, qp->pod, res.nominated_node, NULL);
    }
    char *msg = ks__fit_error_message(&found->diag);
    ks__failure(s, fw, qp, cycle, KS_UNSCHEDULABLE, msg ? msg : "out of memory",
                found->diag.unschedulable_plugins);
    free(msg);
}

int ks__assume_reserve(struct ks_scheduler *s, struct ks_framework *fw, struct ks_bind_job *job,
                       uint32_t node, bool nominated_off, struct ks_status *st)
{
    const struct ks_pod *pod = job->qp->pod;
    if (ks_cache_assume_pod(s->cache, pod, node) < 0)
        return ks_status_set(st, KS_ERROR, "failed to assume the pod in the cache");
    job->node = node;
    if (nominated_off)
        ks_nominator_remove(s->nominator, pod); /* an assumed pod is no longer waiting for a node */
    int rc = ks_fw_run_reserve(fw, &job->cs, pod, node, st);
    if (rc != KS_SUCCESS) {
        ks_fw_run_unreserve(fw, &job->cs, pod, node);
        ks_cache_forget_pod(s->cache, pod);
    }
    return rc;
}

/* A Reserve or Permit of @job that returned @rc with @st: the pod goes back to the queue. */
static void reserve_failed(struct ks_scheduler *s, struct ks_framework *fw, struct ks_bind_job *job, int rc,
                           struct ks_status *st)
{
    const char *msg = st->nreasons ? ks_intern_str(st->reasons[0]) : ks_code_name((enum ks_code)rc);
    uint64_t rejectors = st->plugin != KS_NO_PLUGIN ? 1ull << st->plugin : 0;
    if (rc == KS_UNSCHEDULABLE || rc == KS_UNSCHEDULABLE_AND_UNRESOLVABLE) {
        /* a rejection at Reserve or Permit reads as a FitError over the one node */
        struct ks_diagnosis d = {.nall = 1,
                                 .nfailed = 1,
                                 .nodes = NULL,
                                 .statuses = st,
                                 .pre_filter_msg = KS_ID_EMPTY,
                                 .post_filter_msg = KS_ID_EMPTY};
        char *fit = ks__fit_error_message(&d);
        ks__failure(s, fw, job->qp, job->cycle, rc, fit ? fit : msg, rejectors);
        free(fit);
    } else {
        ks__failure(s, fw, job->qp, job->cycle, rc, msg, rejectors);
    }
    ks__job_put(s, job);
}

bool ks__permit_bind(struct ks_scheduler *s, struct ks_framework *fw, struct ks_bind_job *job)
{
    const struct ks_pod *pod = job->qp->pod;
    struct ks_status st = {0};

    int rc = ks_fw_run_permit(fw, &job->cs, pod, job->node, &st);
    if (rc != KS_SUCCESS && rc != KS_WAIT) {
        ks_fw_run_unreserve(fw, &job->cs, pod, job->node);
        ks_cache_forget_pod(s->cache, pod);
        reserve_failed(s, fw, job, rc, &st);
        return false;
    }
    if (s->opts.deterministic && rc == KS_SUCCESS) {
        ks__bind_inline(s, job);
        return false;
    }
    return ks__bind_async(s, job, rc == KS_WAIT);
}

/*
 * The scheduling cycle after a host was chosen: assume, Reserve, Permit, then bind.
 * Returns true when the binding waits for a later ks__bind_flush() (binder.c).
 */
static bool commit(struct ks_scheduler *s, struct ks_framework *fw, struct ks_bind_job *job, uint32_t node)
{
    struct ks_status st = {0};
    int rc = ks__assume_reserve(s, fw, job, node, true, &st);
    if (rc != KS_SUCCESS) {
        reserve_failed(s, fw, job, rc, &st);
        return false;
    }
    return ks__permit_bind(s, fw, job);
}

/* Pop the next pod. Before the queue is found empty or the pop blocks, deferred bindings go. */
static struct ks_queued_pod *pop(struct ks_scheduler *s, bool block)
{
    struct ks_queued_pod *qp = ks_queue_pop(s->queue, false);
    if (qp)
        return qp;
    ks__bind_flush(s);
    s->bind_deferred = false;
    return block ? ks_queue_pop(s->queue, true) : NULL;
}

/*
 * After a cycle while bindings are deferred: if no pod is waiting, no later cycle will come
 * soon to send them, so send them now (the caller may be waiting for their Scheduled events).
 */
static void flush_if_idle(struct ks_scheduler *s)
{
    if (!ks_queue_active(s->queue)) {
        ks__bind_flush(s);
        s->bind_deferred = false;
    }
}

static void schedule_pod(struct ks_scheduler *s, struct ks_queued_pod *qp);

int ks_scheduler_schedule_one(struct ks_scheduler *s, bool block)
{
    ks__logical_tick(s);
    struct ks_queued_pod *qp = pop(s, block);
    if (!qp)
        return 0;
    if (s->opts.on_cycle)
        s->opts.on_cycle(s->opts.ctx, qp);
    if (qp->pod->scheduling_group)
        ks__schedule_pod_group(s, qp);
    else
        schedule_pod(s, qp);
    if (s->bind_deferred)
        flush_if_idle(s);
    if (s->opts.deterministic)
        ks__bind_settle(s); /* pods this cycle's Permit allowed are bound before the next one */
    return 1;
}

int ks__algorithm(struct ks_scheduler *s, struct ks_framework *fw, struct ks_bind_job *job, int64_t start,
                  struct ks_unfit *unfit_out, uint32_t *node, struct ks_status *st)
{
    struct ks_queued_pod *qp = job->qp;
    const struct ks_pod *pod = qp->pod;
    struct ks_find_result found;
    const struct ks_node_snap *host = NULL;

    if (ks_cache_refresh(s->cache) < 0)
        return ks_status_set(st, KS_ERROR, "out of memory refreshing the snapshot");
    ks_rcu_read_lock();
    const struct ks_snapshot *snap = ks_cache_snapshot(s->cache);
    if (s->index)
        ks__index_follow(s, snap);
    if (snap->nnodes == 0) {
        ks_rcu_read_unlock();
        algorithm_done(fw, start);
        return ks_status_set(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "no nodes available to schedule pods");
    }
    job->cs.nlisting = s->listing.n; /* what the counting plugins see of the cluster */
    job->cs.listing = s->listing.n ? s->listing.names : NULL;
    int rc = ks__find_nodes(s, fw, &job->cs, pod, snap, &found, st);
    if (rc == KS_SUCCESS && found.nfeasible == 0) {
        report_unfit(s, fw, &job->cs, qp, &found);
        if (unfit_out->post_filter) {
            unfit(s, fw, &job->cs, qp, job->cycle, &found, start);
        } else {
            algorithm_done(fw, start);
            unfit_out->message = ks__fit_error_message(&found.diag);
            unfit_out->rejectors = found.diag.unschedulable_plugins;
        }
        ks_rcu_read_unlock();
        return KS_UNSCHEDULABLE;
    }
    if (rc == KS_SUCCESS && found.indexed)
        host = found.feasible[0];
    else if (rc == KS_SUCCESS)
        rc = ks__prioritize(s, fw, &job->cs, pod, &found, qp->attempts, &host, st);
    *node = host ? host->name : KS_ID_EMPTY;
    ks_rcu_read_unlock();
    algorithm_done(fw, start);
    if (rc != KS_SUCCESS && !st->nreasons)
        ks_status_set(st, rc, "%s", ks_code_name(rc));
    return rc;
}

/* The scheduling cycle of @qp: whatever happens, the pod is handed on (binder, queue) before it returns. */
static void schedule_pod(struct ks_scheduler *s, struct ks_queued_pod *qp)
{
    uint64_t cycle = ks_queue_cycle(s->queue);
    const struct ks_pod *pod = qp->pod;
    struct ks_framework *fw = ks__framework_for(s, pod);

    /* skipPodSchedule: being deleted, or already assumed */
    if (!fw || pod->meta.deletion_time != KS_TIME_NONE || ks_cache_is_assumed(s->cache, pod)) {
        ks_queue_done(s->queue, qp);
        return;
    }
    struct ks_bind_job *job = ks__job_get(s);
    if (!job) {
        ks__failure(s, fw, qp, cycle, KS_ERROR, "out of memory", 0);
        return;
    }
    int64_t start = ks__job_start(s, job, fw, qp, cycle);
    struct ks_status st = {0};
    struct ks_unfit uf = {.post_filter = true};
    uint32_t node = KS_ID_EMPTY;
    int rc = ks__algorithm(s, fw, job, start, &uf, &node, &st);
    if (rc == KS_UNSCHEDULABLE) {
        ks__job_put(s, job); /* handed back by PostFilter's path */
        return;
    }
    if (rc != KS_SUCCESS) {
        ks__failure(s, fw, qp, cycle, rc, ks_intern_str(st.reasons[0]), 0);
        ks__job_put(s, job);
        return;
    }
    s->bind_deferred |= commit(s, fw, job, node);
}

int64_t ks__job_start(struct ks_scheduler *s, struct ks_bind_job *job, struct ks_framework *fw,
                      struct ks_queued_pod *qp, uint64_t cycle)
{
    job->qp = qp;
    job->fw = fw;
    job->cycle = cycle;
    job->cs.seed = ks__rand(s);
    if (!fw->metrics)
        return 0;
    job->cs.record_plugin_metrics = ks__xorshift(&s->sample_rng) % 100 < s->opts.metrics->sample_percent;
    return ks__mono_ns();
}
