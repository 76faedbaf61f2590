/*
 * schedule_podgroup.c - the PodGroup scheduling cycle (scheduleOnePodGroup and
 * podGroupSchedulingDefaultAlgorithm in upstream's schedule_one_podgroup.go, v1.37).
 *
 * The popped member of a group takes the group's other queued members with it
 * (ks_queue_take; in-flight members stay where they are); skipped are those being deleted or
 * already assumed. While a member is gated by PreEnqueue, no member is tried. The members are validated (one
 * schedulerName, every pod's priority the group's: else a SchedulerError for all) and ordered by priority,
 * then by when they first entered activeQ. Then each is scheduled in turn as a single pod is - PreFilter,
 * Filter, Score, select, with no PostFilter - on a snapshot that holds the members placed
 * before it (assumed in the cache and reserved), and after each, PlacementFeasible
 * (GangScheduling's rule, plugins/helpers/helper_gang.c) counts the group's placed pods
 * (those of earlier cycles included) against minCount (1 for a basic group): once even all
 * the remaining members cannot reach it, the search stops.
 *
 * All or nothing: when minCount was reached and at least one member was placed, the placed
 * members go on to Permit and binding and the others go back with their own FitError, to
 * activeQ without backoff (upstream requeues the group entity so, its counters reset).
 * Otherwise every reservation is undone (Unreserve, the assumption forgotten, newest first)
 * and no member binds: a placed or untried member fails with the group's message ("pod group
 * is unschedulable, minCount (N) cannot be satisfied: S scheduled, R remaining"), a member no
 * node fits with its FitError. Members of a group that failed go to backoff, as upstream
 * requeues a group entity.
 */
#include "podgroup_internal.h"

#include "ksched/api.h"
#include "ksched/base/arena.h"
#include "ksched/base/intern.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/features.h"
#include "ksched/internal/nominator.h"
#include "ksched/internal/pod_groups.h"
#include "ksched/plugin_helpers_gang.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ks__group_scratch_free(struct ks_scheduler *s)
{
    if (!s->group_scratch)
        return;
    free(s->group_scratch->pods);
    free(s->group_scratch->members);
    free(s->group_scratch->sched_nodes);
    free(s->group_scratch->assign);
    free(s->group_scratch->results);
    free(s->group_scratch->first_messages);
    free(s->group_scratch->order);
    free(s->group_scratch->report_placements);
    ks_placement_set_free(&s->group_scratch->placements);
    ks_placement_weights_free(&s->group_scratch->weights);
    free(s->group_scratch->adds);
    free(s->group_scratch);
    s->group_scratch = NULL;
}

/* priority first, then the earlier first attempt, then the one that joined the group first. */
static int member_cmp(const void *pa, const void *pb)
{
    const struct member *ma = pa, *mb = pb;
    const struct ks_queued_pod *a = ma->qp, *b = mb->qp;
    if (a->pod->priority != b->pod->priority)
        return a->pod->priority > b->pod->priority ? -1 : 1;
    if (a->initial_attempt_ns != b->initial_attempt_ns)
        return a->initial_attempt_ns < b->initial_attempt_ns ? -1 : 1;
    return ma->order < mb->order ? -1 : ma->order > mb->order;
}

/*
 * The members in flight for this cycle: @first and the group's queued ones, in scheduling
 * order, into sc->members; *@scheduled counts the group's pods assumed or bound. Returns the
 * number of members, or -ENOMEM (@first still the caller's).
 */
static int gather(struct ks_scheduler *s, struct ks_group_scratch *sc, struct ks_queued_pod *first,
                  uint32_t name, uint32_t *scheduled)
{
    const struct ks_pod *pod = first->pod;
    uint32_t n;
    for (;;) {
        n = ks_pod_groups_members(s->groups, pod->meta.namespace_id, name, sc->pods, sc->cap_pods);
        if (n <= sc->cap_pods)
            break;
        for (uint32_t i = 0; i < sc->cap_pods; i++)
            ks_pod_put(sc->pods[i]);
        if (KS_RESERVE(sc->pods, sc->cap_pods, n) < 0)
            return -ENOMEM;
    }
    if (KS_RESERVE(sc->members, sc->cap_members, n + 1) < 0 ||
        KS_RESERVE(sc->sched_nodes, sc->cap_sched, n + 1) < 0) {
        for (uint32_t i = 0; i < n; i++)
            ks_pod_put(sc->pods[i]);
        return -ENOMEM;
    }
    uint32_t m = 0;
    sc->members[m++] = (struct member){.qp = first, .order = n};
    sc->gated = false;
    *scheduled = 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct ks_pod *p = sc->pods[i];
        uint32_t node = ks_cache_pod_node(s->cache, p);
        if (node != KS_ID_NONE) {
            sc->sched_nodes[(*scheduled)++] = node;
        } else if (p == pod || (p->meta.namespace_id == pod->meta.namespace_id && p->meta.name &&
                                pod->meta.name && strcmp(p->meta.name, pod->meta.name) == 0)) {
            sc->members[0].order = i;
        } else {
            bool gated;
            struct ks_queued_pod *qp = ks_queue_take(s->queue, p, &gated);
            if (qp)
                sc->members[m++] = (struct member){.qp = qp, .order = i};
            sc->gated |= gated;
        }
        ks_pod_put(p);
    }
    qsort(sc->members, m, sizeof(*sc->members), member_cmp);
    return (int)m;
}

/* validatePodGroup: NULL, or the SchedulerError's message in @buf. */
static const char *validate(struct ks_scheduler *s, const struct member *mv, uint32_t n,
                            const struct ks_pod_group_state *gs, char *buf, size_t len)
{
    int32_t priority = gs->spec.has_priority ? gs->spec.priority : 0;
    const struct ks_pod *first = mv[0].qp->pod;
    for (uint32_t i = 0; i < n; i++) {
        const struct ks_pod *p = mv[i].qp->pod;
        if (p->scheduler_name != first->scheduler_name) {
            snprintf(
                buf, len,
                "all pods in a single pod group should have the same .spec.schedulerName set, got: \"%s\" "
                "and \"%s\"",
                ks_intern_str(first->scheduler_name), ks_intern_str(p->scheduler_name));
            return buf;
        }
        if (p->priority != priority) {
            snprintf(
                buf, len,
                "all pods in a single pod group should have the same priority as the pod group's priority, "
                "got %d and %d",
                p->priority, priority);
            return buf;
        }
    }
    if (!ks__framework_for(s, first)) {
        snprintf(buf, len, "profile not found for scheduler name \"%s\"",
                 ks_intern_str(first->scheduler_name));
        return buf;
    }
    return NULL;
}

/* Every reservation of the cycle undone, newest first. */
void ks__pg_revert(struct ks_scheduler *s, struct ks_framework *fw, struct member *mv, uint32_t n)
{
    for (uint32_t i = n; i-- > 0;) {
        struct ks_bind_job *job = mv[i].job;
        if (!job)
            continue;
        ks_fw_run_unreserve(fw, &job->cs, job->qp->pod, job->node);
        ks_cache_forget_pod(s->cache, job->qp->pod);
        ks__job_put(s, job);
        mv[i].job = NULL;
    }
}

/*
 * Schedule the members in order (podGroupSchedulingDefaultAlgorithm). Returns the group's
 * verdict (KS_GANG_FEASIBLE with at least one placed: success) with its message in @msg, or
 * -1 after an error that @st holds.
 */
int ks__pg_place_one(struct ks_scheduler *s, struct ks_framework *fw, struct member *m, uint64_t cycle,
                     struct ks_status *st)
{
    struct ks_bind_job *job = ks__job_get(s);
    if (!job)
        return ks_status_set(st, KS_ERROR, "out of memory");
    int64_t start = ks__job_start(s, job, fw, m->qp, cycle);
    struct ks_unfit uf = {.post_filter = false};
    uint32_t node = KS_ID_EMPTY;
    int rc = ks__algorithm(s, fw, job, start, &uf, &node, st);
    if (rc == KS_SUCCESS)
        rc = ks__assume_reserve(s, fw, job, node, false, st);
    m->tried = true;
    if (rc == KS_SUCCESS) {
        m->job = job;
        return KS_SUCCESS;
    }
    ks__job_put(s, job);
    if (rc == KS_UNSCHEDULABLE && !uf.message)
        return ks_status_set(st, KS_ERROR, "out of memory");
    if (rc != KS_UNSCHEDULABLE && rc != KS_UNSCHEDULABLE_AND_UNRESOLVABLE)
        return rc;
    m->message = uf.message ? uf.message : strdup(ks_intern_str(st->reasons[0]));
    return KS_UNSCHEDULABLE;
}

int ks__pg_place_members(struct ks_scheduler *s, struct ks_framework *fw, struct member *mv, uint32_t n,
                         const struct ks_pod_group_spec *spec, uint32_t scheduled, uint64_t cycle, bool *any,
                         char *msg, size_t len, struct ks_status *st)
{
    uint32_t remaining = n;
    enum ks_gang_verdict v = ks_gang_placement_feasible(spec, scheduled, remaining, msg, len);
    *any = false;
    for (uint32_t i = 0; i < n && v != KS_GANG_INFEASIBLE; i++) {
        int rc = ks__pg_place_one(s, fw, &mv[i], cycle, st);
        if (rc == KS_SUCCESS) {
            scheduled++;
            *any = true;
        } else if (rc != KS_UNSCHEDULABLE) {
            return -1;
        }
        remaining--;
        v = ks_gang_placement_feasible(spec, scheduled, remaining, msg, len);
    }
    return (int)v;
}

/* opts.on_group of the cycle's outcome. */
static void report(struct ks_scheduler *s, bool ok, bool error, const char *message)
{
    if (!s->opts.on_group || !s->group_scratch)
        return;
    struct ks_group_attempt *g = &s->group_scratch->report_to;
    g->ok = ok;
    g->error = error;
    g->message = message;
    s->opts.on_group(s->opts.ctx, g);
}

/* Hand every member back with @code and @message (its own FitError when it has one and @own). */
void ks__pg_fail_all(struct ks_scheduler *s, struct ks_framework *fw, struct member *mv, uint32_t n,
                     uint64_t cycle, int code, const char *message, bool own)
{
    report(s, false, code == KS_ERROR, message);
    for (uint32_t i = 0; i < n; i++) {
        const char *text = own && mv[i].message ? mv[i].message : message;
        if (mv[i].nominated != KS_ID_EMPTY) {
            /* the member waits for its victims to leave: the node is held for it meanwhile */
            ks_nominator_add(s->nominator, mv[i].qp->pod, mv[i].nominated);
            ks__emit(s, KS_SCHED_NOMINATED, mv[i].qp->pod, mv[i].nominated, NULL);
            mv[i].nominated = KS_ID_EMPTY;
        }
        /* no rejector: the member retries after backoff, as upstream requeues a group */
        ks__failure(s, fw, mv[i].qp, cycle, code, text, 0);
        free(mv[i].message);
        mv[i].message = NULL;
    }
}

/*
 * A member of the group is held by a PreEnqueue plugin (scheduling gates...): upstream gates
 * the whole group entity, so no member is tried. The others go back among the unschedulable
 * pods without an attempt reported; once the held member passes PreEnqueue and is popped, it
 * takes them along.
 */
static void wait_for_gated(struct ks_scheduler *s, struct member *mv, uint32_t n, uint64_t cycle)
{
    for (uint32_t i = 0; i < n; i++) {
        mv[i].qp->unschedulable_plugins = 0;
        ks_queue_add_unschedulable(s->queue, mv[i].qp, cycle, KS_EVENT_ALL);
    }
}

void ks__schedule_pod_group(struct ks_scheduler *s, struct ks_queued_pod *first)
{
    uint64_t cycle = ks_queue_cycle(s->queue);
    struct ks_framework *fw = ks__framework_for(s, first->pod);
    uint32_t name = ks_pod_group_key(first->pod);
    struct ks_group_scratch *sc = s->group_scratch;
    char buf[1024];

    if (!sc && !(sc = s->group_scratch = calloc(1, sizeof(*sc)))) {
        ks__failure(s, fw, first, cycle, KS_ERROR, "out of memory", 0);
        return;
    }
    uint32_t scheduled = 0;
    int n = name == KS_ID_NONE ? -ENOMEM : gather(s, sc, first, name, &scheduled);
    sc->nsched = scheduled;
    if (n < 0) {
        ks__failure(s, fw, first, cycle, KS_ERROR, "out of memory", 0);
        return;
    }
    struct member *mv = sc->members;
    if (sc->gated) {
        wait_for_gated(s, mv, (uint32_t)n, cycle);
        return;
    }
    for (int i = 0; i < n; i++)
        mv[i].qp->group_size = (uint32_t)n; /* the entity's size: its members back off longer */
    /* skipPodGroupPodSchedule: being deleted, or already assumed */
    uint32_t live = 0;
    for (int i = 0; i < n; i++) {
        const struct ks_pod *p = mv[i].qp->pod;
        if (p->meta.deletion_time != KS_TIME_NONE || ks_cache_is_assumed(s->cache, p))
            ks_queue_done(s->queue, mv[i].qp);
        else
            mv[live++] = mv[i];
    }
    if (!live)
        return;
    sc->report_to = (struct ks_group_attempt){.namespace_id = first->pod->meta.namespace_id,
                                              .name = first->pod->scheduling_group,
                                              .members = live,
                                              .scheduled = scheduled,
                                              .topology_key = KS_ID_NONE,
                                              .chosen = UINT32_MAX};
    struct ks_pod_group_state gs;
    ks_pod_groups_state(s->groups, first->pod->meta.namespace_id, name, &gs);
    if (!gs.exists) {
        /* the PodGroup went away since PreEnqueue admitted the members: they wait for it again */
        snprintf(buf, sizeof(buf), "waiting for pod's pod group \"%s\" to appear in scheduling queue",
                 first->pod->scheduling_group);
        ks__pg_fail_all(s, fw, mv, live, cycle, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, buf, false);
        return;
    }
    const char *invalid = validate(s, mv, live, &gs, buf, sizeof(buf));
    if (invalid) {
        ks__pg_fail_all(s, fw, mv, live, cycle, KS_ERROR, invalid, false);
        return;
    }
    fw = ks__framework_for(s, mv[0].qp->pod);
    if (gs.spec.topology_key != KS_ID_NONE &&
        ks_feature_enabled(KS_FEATURE_TOPOLOGY_AWARE_WORKLOAD_SCHEDULING)) {
        ks__pg_schedule_placements(s, fw, mv, live, &gs, scheduled, cycle);
        return;
    }

    char verdict_msg[256];
    struct ks_status st = {0};
    bool any;
    int v = ks__pg_place_members(s, fw, mv, live, &gs.spec, scheduled, cycle, &any, verdict_msg,
                                 sizeof(verdict_msg), &st);
    if (v < 0) {
        ks__pg_revert(s, fw, mv, live);
        ks__pg_fail_error(s, fw, mv, live, cycle, &st);
        return;
    }
    if (v != KS_GANG_FEASIBLE || !any) {
        ks__pg_revert(s, fw, mv, live);
        if (v == KS_GANG_FEASIBLE)
            snprintf(buf, sizeof(buf), "pod group is unschedulable");
        else
            snprintf(buf, sizeof(buf), "pod group is unschedulable, %s", verdict_msg);
        ks__pg_unschedulable(s, fw, mv, live, &gs, scheduled, cycle, buf);
        return;
    }
    ks__pg_commit(s, fw, mv, live, cycle);
}

void ks__pg_fail_error(struct ks_scheduler *s, struct ks_framework *fw, struct member *mv, uint32_t n,
                       uint64_t cycle, const struct ks_status *st)
{
    char buf[1024];
    const char *why = st->nreasons ? ks_intern_str(st->reasons[0]) : ks_code_name((enum ks_code)st->code);
    snprintf(buf, sizeof(buf), "failed to schedule other pod from a pod group: %s", why);
    ks__pg_fail_all(s, fw, mv, n, cycle, KS_ERROR, buf, false);
}

void ks__pg_commit(struct ks_scheduler *s, struct ks_framework *fw, struct member *mv, uint32_t n,
                   uint64_t cycle)
{
    /* minCount reached: the placed members bind, the others go back with their own reasons */
    report(s, true, false, NULL);
    for (uint32_t i = 0; i < n; i++) {
        if (mv[i].job) {
            struct ks_bind_job *job = mv[i].job;
            mv[i].job = NULL;
            ks_nominator_remove(s->nominator, job->qp->pod);
            s->bind_deferred |= ks__permit_bind(s, fw, job);
        } else {
            /* a leftover of a group that succeeded: back to activeQ without backoff, as upstream
             * requeues the group entity (its counters reset) */
            const char *text = mv[i].message ? mv[i].message : "pod group is unschedulable";
            mv[i].qp->backoff_base = mv[i].qp->attempts;
            ks__failure(s, fw, mv[i].qp, cycle, KS_UNSCHEDULABLE, text, 0);
            free(mv[i].message);
            mv[i].message = NULL;
        }
    }
}
