/*
 * gang_scheduling.c - the GangScheduling plugin (GenericWorkload): a member of a pod group
 * enters the active queue only once its PodGroup exists and, for a gang, once minCount of
 * its pods exist (PreEnqueue); the events that can change that wake it.
 *
 * Mirrors pkg/scheduler/framework/plugins/gangscheduling/gangscheduling.go of current
 * upstream (v1.37). Its third point, PlacementFeasible (has a group's placement reached
 * minCount?), is a step of the PodGroup cycle (engine/schedule_podgroup.c), which calls the
 * same rule (plugins/helpers/helper_gang.c). Both waits are UnschedulableAndUnresolvable.
 * The counts come from the scheduler's pod groups (ksched/internal/pod_groups.h). It takes no args.
 */
#include "ksched/framework.h"
#include "ksched/internal/pod_groups.h"
#include "ksched/plugin_helpers_gang.h"
#include "ksched/registry.h"

#include "ksched/api.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct gang_scheduling {
    struct ks_pod_groups *groups; /* NULL: no group is ever known */
};

static int init(const struct ks_plugin_init *in, void **self, struct ks_error *err)
{
    struct gang_scheduling *p = calloc(1, sizeof(*p));
    (void)err;
    if (!p)
        return -ENOMEM;
    p->groups = ks_framework_deps(in->framework)->groups;
    *self = p;
    return 0;
}

static void destroy(void *self)
{
    free(self);
}

/* pre_enqueue - Context: any thread, under the queue's locks; takes the pod groups' leaf lock. */
static int pre_enqueue(void *self, const struct ks_pod *pod, struct ks_status *st)
{
    const struct gang_scheduling *p = self;
    struct ks_pod_group_state gs = {0};
    char msg[512];

    if (!pod->scheduling_group)
        return KS_SUCCESS;
    if (p->groups)
        ks_pod_groups_state(p->groups, pod->meta.namespace_id, ks_pod_group_key(pod), &gs);
    if (ks_gang_pre_enqueue(gs.exists ? &gs.spec : NULL, pod->scheduling_group, gs.all_pods, msg,
                            sizeof(msg)))
        return KS_SUCCESS;
    return ks_status_set(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "%s", msg);
}

static bool same_group(const struct ks_pod *pod, const struct ks_pod *other)
{
    return other && other->scheduling_group && other->meta.namespace_id == pod->meta.namespace_id &&
           strcmp(other->scheduling_group, pod->scheduling_group) == 0;
}

static bool names_group(const struct ks_pod *pod, const struct ks_pod_group *pg)
{
    return pg && pg->meta.name && pg->meta.namespace_id == pod->meta.namespace_id &&
           strcmp(pg->meta.name, pod->scheduling_group) == 0;
}

/* isSchedulableAfterPodAdded: a pod of the same group was created or bound. */
static enum ks_queueing_hint hint_pod(void *self, const struct ks_pod *pod, const void *old_obj,
                                      const void *new_obj)
{
    (void)self;
    (void)old_obj;
    return pod->scheduling_group && same_group(pod, new_obj) ? KS_QUEUE : KS_QUEUE_SKIP;
}

/* The pod's PodGroup appeared, or its gang's minCount went down. */
static enum ks_queueing_hint hint_pod_group(void *self, const struct ks_pod *pod, const void *old_obj,
                                            const void *new_obj)
{
    const struct ks_pod_group *old_pg = old_obj, *pg = new_obj;

    (void)self;
    if (!pod->scheduling_group || !names_group(pod, pg))
        return KS_QUEUE_SKIP;
    if (!old_pg)
        return KS_QUEUE;
    return old_pg->spec.policy == KS_POD_GROUP_GANG && pg->spec.policy == KS_POD_GROUP_GANG &&
                   pg->spec.min_count < old_pg->spec.min_count
               ? KS_QUEUE
               : KS_QUEUE_SKIP;
}

static uint32_t events_to_register(void *self, struct ks_event_registration *out, uint32_t max)
{
    static const struct ks_event_registration regs[] = {
        {{KS_ER_UNSCHEDULED_POD, KS_ACT_ADD}, hint_pod},
        {{KS_ER_ASSIGNED_POD, KS_ACT_ADD}, hint_pod},
        {{KS_ER_POD_GROUP, KS_ACT_ADD | KS_ACT_UPDATE}, hint_pod_group},
    };
    uint32_t n = sizeof(regs) / sizeof(regs[0]);

    (void)self;
    for (uint32_t i = 0; i < n && i < max; i++)
        out[i] = regs[i];
    return n;
}

const struct ks_plugin ks_plugin_gang_scheduling = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "GangScheduling",
    .init = init,
    .destroy = destroy,
    .pre_enqueue = pre_enqueue,
    .events_to_register = events_to_register,
};
