/*
 * podgroup_post_filter.c - what the PodGroup cycle does when its group is unschedulable
 * (upstream's RunPodGroupPostFilterPlugins and applyPodGroupPostFilterResult, v1.37, with
 * WorkloadAwarePreemption): the profile's PodGroupPostFilter plugins get the group and two
 * trial runs of its algorithm on the cluster as the cache holds it (the pods a preemption
 * hides left out), their message is appended to the group's status, and on Success the
 * members are nominated to the nodes preemption made room on. The group stays unschedulable:
 * its members come back once the victims are gone.
 *
 * A trial run places copies of the members (assumed and reserved in turn, exactly as the
 * cycle places them) and undoes every placement before it returns; its attempts are not
 * reported (s->what_if) and its tie-breaks leave the scheduler's draws as they were, so that
 * the number of trials a preemption needs changes no later decision. Scheduling thread only.
 */
#include "framework_internal.h"
#include "podgroup_internal.h"

#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/features.h"
#include "ksched/internal/preemption.h"
#include "ksched/sign.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The cycle a PodGroupPostFilter's trial runs repeat. */
struct trial {
    struct ks_scheduler *s;
    struct ks_framework *fw;
    const struct member *mv; /* the cycle's members */
    struct member *tmp;      /* their copies for a trial */
    uint32_t n;
    const struct ks_pod_group_spec *spec;
    uint32_t scheduled; /* the group's pods assumed or bound before the cycle */
    uint64_t cycle;
    struct ks_pod_group_preemptor *g;
    uint64_t rng; /* the scheduler's tie-break state before a trial, given back after it */
};

static void trial_begin(struct trial *t)
{
    for (uint32_t i = 0; i < t->n; i++)
        t->tmp[i] = (struct member){.qp = t->mv[i].qp, .order = t->mv[i].order};
    t->s->what_if = true;
    t->rng = t->s->rng;
}

static void trial_end(struct trial *t)
{
    ks__pg_revert(t->s, t->fw, t->tmp, t->n);
    for (uint32_t i = 0; i < t->n; i++) {
        free(t->tmp[i].message);
        t->tmp[i].message = NULL;
    }
    t->s->what_if = false;
    t->s->rng = t->rng; /* how many trials ran leaves later tie-breaks as they were */
}

/* Every placed copy signs: its Filter reads its node alone (ksched/sign.h). */
static bool signable(struct trial *t)
{
    bool all = true;
    ks_rcu_read_lock();
    for (uint32_t i = 0; i < t->n && all; i++) {
        const struct ks_bind_job *job = t->tmp[i].job;
        struct ks_sign sig = {.buf = t->s->sign_buf, .cap = KS_SIGN_BUF};
        all = !job || (t->s->sign_buf && ks_fw_sign(t->fw, &job->cs, job->qp->pod, &sig) == KS_SUCCESS);
    }
    ks_rcu_read_unlock();
    return all;
}

/* ks_pod_group_preemptor.schedule */
static int trial_schedule(void *ctx, uint32_t *nodes, struct ks_status *st)
{
    struct trial *t = ctx;
    bool *node_local = &t->g->node_local;
    char msg[256];
    bool any;
    trial_begin(t);
    int v = ks__pg_place_members(t->s, t->fw, t->tmp, t->n, t->spec, t->scheduled, t->cycle, &any, msg,
                                 sizeof(msg), st);
    for (uint32_t i = 0; i < t->n; i++)
        nodes[i] = t->tmp[i].job ? t->tmp[i].job->node : KS_ID_NONE;
    *node_local = v >= 0 && signable(t);
    trial_end(t);
    if (v < 0)
        return st->code != KS_SUCCESS ? st->code : KS_ERROR;
    if (v != KS_GANG_FEASIBLE)
        return ks_status_set(st, KS_UNSCHEDULABLE, "pod group is unschedulable, %s", msg);
    if (!any)
        return ks_status_set(st, KS_UNSCHEDULABLE, "pod group is unschedulable");
    return KS_SUCCESS;
}

/* ks_pod_group_preemptor.refit: each member's cycle limited to its one node. */
static int trial_refit(void *ctx, const uint32_t *nodes, struct ks_status *st)
{
    struct trial *t = ctx;
    struct ks_placement_view saved = t->s->placement;
    int rc = KS_SUCCESS;
    trial_begin(t);
    for (uint32_t i = 0; i < t->n && rc == KS_SUCCESS; i++) {
        if (nodes[i] == KS_ID_NONE)
            continue;
        t->s->placement = (struct ks_placement_view){.n = 1, .names = &nodes[i]};
        rc = ks__pg_place_one(t->s, t->fw, &t->tmp[i], t->cycle, st);
    }
    t->s->placement = saved;
    trial_end(t);
    return rc;
}

/*
 * Run the PodGroupPostFilter plugins; append their message to @buf (of @len). Returns the code
 * the members go back with: KS_UNSCHEDULABLE, or KS_ERROR with @buf holding the error alone.
 */
static int post_filter(struct ks_scheduler *s, struct ks_framework *fw, struct member *mv, uint32_t n,
                       const struct ks_pod_group_state *gs, uint32_t scheduled, uint64_t cycle, char *buf,
                       size_t len)
{
    const struct ks_pod **members = malloc(n * sizeof(*members));
    uint32_t *nominated = malloc(n * sizeof(*nominated));
    struct member *tmp = calloc(n, sizeof(*tmp));
    struct ks_status st = {0};
    int rc = KS_UNSCHEDULABLE;
    if (!members || !nominated || !tmp) {
        snprintf(buf, len, "out of memory");
        rc = KS_ERROR;
        goto out;
    }
    for (uint32_t i = 0; i < n; i++)
        members[i] = mv[i].qp->pod;
    struct trial t = {.s = s,
                      .fw = fw,
                      .mv = mv,
                      .tmp = tmp,
                      .n = n,
                      .spec = &gs->spec,
                      .scheduled = scheduled,
                      .cycle = cycle};
    struct ks_pod_group_preemptor g = {.namespace_id = members[0]->meta.namespace_id,
                                       .name = members[0]->scheduling_group,
                                       .spec = &gs->spec,
                                       .priority = gs->spec.has_priority ? gs->spec.priority : 0,
                                       .nmembers = n,
                                       .members = members,
                                       .schedule = trial_schedule,
                                       .refit = trial_refit,
                                       .ctx = &t,
                                       .nominated = nominated};
    t.g = &g;
    int code = ks_fw_run_pod_group_post_filter(fw, &g, &st);
    if (code == KS_SKIP)
        goto out;
    char msg[1024];
    ks__status_message(&st, msg, sizeof(msg));
    if (code != KS_SUCCESS && code != KS_UNSCHEDULABLE && code != KS_UNSCHEDULABLE_AND_UNRESOLVABLE) {
        snprintf(buf, len, "%s", msg); /* an error replaces the group's status */
        rc = KS_ERROR;
        goto out;
    }
    size_t used = strlen(buf);
    if (msg[0] && used < len)
        snprintf(buf + used, len - used, ", %s", msg);
    for (uint32_t i = 0; code == KS_SUCCESS && i < n; i++)
        mv[i].nominated = nominated[i];
out:
    free(members);
    free(nominated);
    free(tmp);
    return rc;
}

void ks__pg_unschedulable(struct ks_scheduler *s, struct ks_framework *fw, struct member *mv, uint32_t n,
                          const struct ks_pod_group_state *gs, uint32_t scheduled, uint64_t cycle,
                          const char *message)
{
    char buf[2048];
    int code = KS_UNSCHEDULABLE;
    snprintf(buf, sizeof(buf), "%s", message);
    if (n && ks_feature_enabled(KS_FEATURE_WORKLOAD_AWARE_PREEMPTION))
        code = post_filter(s, fw, mv, n, gs, scheduled, cycle, buf, sizeof(buf));
    ks__pg_fail_all(s, fw, mv, n, cycle, code, buf, code == KS_UNSCHEDULABLE);
}
