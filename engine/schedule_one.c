/*
 * schedule_one.c - one scheduling cycle (ScheduleOne / schedulingCycle in upstream's
 * schedule_one.go).
 *
 * Pop a pod; pick its profile's framework; skip pods being deleted or already assumed;
 * refresh and read the snapshot under RCU; find feasible nodes; if none, run PostFilter
 * and report the FitError; else score, select, assume, Reserve, Permit, and hand the pod
 * to a binder thread. Every failure unreserves what was reserved, forgets the assumption
 * and gives the pod back to the queue with the reason.
 */
#include "scheduler_internal.h"

#include "ksched/api.h"
#include "ksched/intern.h"
#include "ksched/rcu.h"

#include <stdlib.h>
#include <string.h>

static struct ks_framework *framework_for(struct ks_scheduler *s, const struct ks_pod *pod)
{
    for (uint32_t i = 0; i < s->nfw; i++) {
        if (s->fw_names[i] == pod->scheduler_name)
            return s->fw[i];
    }
    return NULL;
}

/* The events that may make a pod rejected by @rejectors schedulable (interim EventsToRegister). */
static unsigned events_for(const struct ks_framework *fw, uint64_t rejectors)
{
    unsigned events = KS_EVENT_NODE_ADD | KS_EVENT_NODE_UPDATE | KS_EVENT_ASSIGNED_POD_DELETE |
                      KS_EVENT_ASSIGNED_POD_UPDATE;
    for (uint32_t i = 0; i < KS_MAX_PROFILE_PLUGINS; i++) {
        if (!(rejectors & (1ull << i)))
            continue;
        const char *name = ks_framework_plugin_name(fw, i);
        /* plugins that look at other pods' placement can be satisfied by a new pod */
        if (strcmp(name, "InterPodAffinity") == 0 || strcmp(name, "PodTopologySpread") == 0)
            events |= KS_EVENT_ASSIGNED_POD_ADD;
    }
    return events;
}

void ks__failure(struct ks_scheduler *s, struct ks_framework *fw, struct ks_queued_pod *qp, uint64_t cycle,
                 int code, const char *message, uint64_t rejectors)
{
    bool rejected = code == KS_UNSCHEDULABLE || code == KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    ks__emit(s, rejected ? KS_SCHED_UNSCHEDULABLE : KS_SCHED_ERROR, qp->pod, KS_ID_EMPTY, message);
    /* an error is retried on any event; a rejection on the events its plugins care about */
    unsigned events = rejected ? events_for(fw, rejectors) : ~0u;
    if (ks_queue_add_unschedulable(s->queue, qp, cycle, events) < 0) {
        ks_pod_put(qp->pod);
        ks_queued_pod_free(qp);
    }
}

/* Report an attempt that found no feasible node (prioritize reports the others). */
static void report_unfit(struct ks_scheduler *s, struct ks_framework *fw, const struct ks_queued_pod *qp,
                         const struct ks_find_result *found)
{
    if (!s->opts.on_attempt)
        return;
    struct ks_attempt a = {
        .pod = qp->pod, .attempt = qp->attempts, .fw = fw, .snap = found->snap, .diag = &found->diag};
    s->opts.on_attempt(s->opts.ctx, &a);
}

/* No node fits: PostFilter (preemption), then the FitError message. */
static void unfit(struct ks_scheduler *s, struct ks_framework *fw, struct ks_cycle_state *cs,
                  struct ks_queued_pod *qp, uint64_t cycle, struct ks_find_result *found)
{
    struct ks_post_filter_result res = {.nominated_node = KS_ID_EMPTY};
    struct ks_status pst = {0};
    int rc = ks_fw_run_post_filter(fw, cs, qp->pod, &found->diag, &res, &pst);
    if (pst.nreasons)
        found->diag.post_filter_msg = pst.reasons[0];
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

/* The scheduling cycle after a host was chosen: assume, Reserve, Permit, then bind. */
static void commit(struct ks_scheduler *s, struct ks_framework *fw, struct ks_bind_job *job, uint32_t node)
{
    const struct ks_pod *pod = job->qp->pod;
    struct ks_status st = {0};
    int rc;

    if (ks_cache_assume_pod(s->cache, pod, node) < 0) {
        ks__failure(s, fw, job->qp, job->cycle, KS_ERROR, "failed to assume the pod in the cache", 0);
        ks__job_put(s, job);
        return;
    }
    job->node = node;
    ks_nominator_remove(s->nominator, pod); /* an assumed pod is no longer waiting for a node */
    if ((rc = ks_fw_run_reserve(fw, &job->cs, pod, node, &st)) == KS_SUCCESS)
        rc = ks_fw_run_permit(fw, &job->cs, pod, node, &st);
    if (rc != KS_SUCCESS && rc != KS_WAIT) {
        ks_fw_run_unreserve(fw, &job->cs, pod, node);
        ks_cache_forget_pod(s->cache, pod);
        const char *msg = st.nreasons ? ks_intern_str(st.reasons[0]) : ks_code_name((enum ks_code)rc);
        uint64_t rejectors = st.plugin != KS_NO_PLUGIN ? 1ull << st.plugin : 0;
        if (rc == KS_UNSCHEDULABLE || rc == KS_UNSCHEDULABLE_AND_UNRESOLVABLE) {
            /* a rejection at Reserve or Permit reads as a FitError over the one node */
            struct ks_diagnosis d = {.nall = 1,
                                     .nfailed = 1,
                                     .nodes = NULL,
                                     .statuses = &st,
                                     .pre_filter_msg = KS_ID_EMPTY,
                                     .post_filter_msg = KS_ID_EMPTY};
            char *fit = ks__fit_error_message(&d);
            ks__failure(s, fw, job->qp, job->cycle, rc, fit ? fit : msg, rejectors);
            free(fit);
        } else {
            ks__failure(s, fw, job->qp, job->cycle, rc, msg, rejectors);
        }
        ks__job_put(s, job);
        return;
    }
    ks__bind_async(s, job);
}

int ks_scheduler_schedule_one(struct ks_scheduler *s, bool block)
{
    struct ks_queued_pod *qp = ks_queue_pop(s->queue, block);
    if (!qp)
        return 0;
    uint64_t cycle = ks_queue_cycle(s->queue);
    const struct ks_pod *pod = qp->pod;
    struct ks_framework *fw = framework_for(s, pod);

    /* skipPodSchedule: being deleted, or already assumed */
    if (!fw || pod->meta.deletion_time != KS_TIME_NONE || ks_cache_is_assumed(s->cache, pod)) {
        ks_pod_put(pod);
        ks_queued_pod_free(qp);
        return 1;
    }
    struct ks_bind_job *job = ks__job_get(s);
    if (!job) {
        ks__failure(s, fw, qp, cycle, KS_ERROR, "out of memory", 0);
        return 1;
    }
    job->qp = qp;
    job->fw = fw;
    job->cycle = cycle;
    job->cs.seed = ks__rand(s);

    struct ks_status st = {0};
    struct ks_find_result found;
    const struct ks_node_snap *host = NULL;
    int rc;

    if (ks_cache_refresh(s->cache) < 0) {
        ks__failure(s, fw, qp, cycle, KS_ERROR, "out of memory refreshing the snapshot", 0);
        ks__job_put(s, job);
        return 1;
    }
    ks_rcu_read_lock();
    const struct ks_snapshot *snap = ks_cache_snapshot(s->cache);
    if (snap->nnodes == 0) {
        ks_rcu_read_unlock();
        ks__failure(s, fw, qp, cycle, KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                    "no nodes available to schedule pods", 0);
        ks__job_put(s, job);
        return 1;
    }
    rc = ks__find_nodes(s, fw, &job->cs, pod, snap, &found, &st);
    if (rc == KS_SUCCESS && found.nfeasible == 0) {
        report_unfit(s, fw, qp, &found);
        unfit(s, fw, &job->cs, qp, cycle, &found);
        ks_rcu_read_unlock();
        ks__job_put(s, job);
        return 1;
    }
    if (rc == KS_SUCCESS)
        rc = ks__prioritize(s, fw, &job->cs, pod, &found, qp->attempts, &host, &st);
    uint32_t node = host ? host->name : KS_ID_EMPTY;
    ks_rcu_read_unlock();
    if (rc != KS_SUCCESS) {
        ks__failure(s, fw, qp, cycle, rc, st.nreasons ? ks_intern_str(st.reasons[0]) : ks_code_name(rc), 0);
        ks__job_put(s, job);
        return 1;
    }
    commit(s, fw, job, node);
    return 1;
}
