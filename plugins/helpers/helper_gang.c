/*
 * helper_gang.c - GangScheduling's rules (pkg/scheduler/framework/plugins/gangscheduling of
 * current upstream): who may enter the queue (PreEnqueue) and whether a group's placement can
 * still meet its minCount (PlacementFeasible). See ksched/plugin_helpers_gang.h.
 */
#include "ksched/plugin_helpers_gang.h"

#include <stdio.h>

bool ks_gang_pre_enqueue(const struct ks_pod_group_spec *pg, const char *pod_group_name, uint32_t all_pods,
                         char *msg, size_t len)
{
    if (!pg) {
        snprintf(msg, len, "waiting for pod's pod group \"%s\" to appear in scheduling queue",
                 pod_group_name);
        return false;
    }
    if (pg->policy == KS_POD_GROUP_GANG && all_pods < (uint32_t)pg->min_count) {
        snprintf(msg, len, "waiting for minCount pods from a gang to appear in scheduling queue");
        return false;
    }
    return true;
}

enum ks_gang_verdict ks_gang_placement_feasible(const struct ks_pod_group_spec *pg, uint32_t scheduled,
                                                uint32_t remaining, char *msg, size_t len)
{
    int64_t min = pg->policy == KS_POD_GROUP_GANG ? pg->min_count : 1;

    if ((int64_t)remaining + scheduled < min) {
        snprintf(msg, len, "minCount (%lld) cannot be satisfied: %u scheduled, %u remaining", (long long)min,
                 scheduled, remaining);
        return KS_GANG_INFEASIBLE;
    }
    if ((int64_t)scheduled < min) {
        snprintf(msg, len, "minCount (%lld) is not yet satisfied: %u scheduled, %u remaining", (long long)min,
                 scheduled, remaining);
        return KS_GANG_WAIT;
    }
    if (len)
        msg[0] = '\0';
    return KS_GANG_FEASIBLE;
}
