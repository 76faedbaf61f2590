/*
 * plugin_helpers_gang.h - GangScheduling's rules for pod groups (GenericWorkload):
 *
 * ks_gang_pre_enqueue - may a member of PodGroup @pod_group_name (@pg: the object's spec, NULL
 * when it does not exist) enter the queue, @all_pods being the pods of the group the scheduler
 * knows (unscheduled, assumed and bound)? true, or false with upstream's message in @msg:
 * "waiting for pod's pod group \"NAME\" to appear in scheduling queue", "waiting for minCount
 * pods from a gang to appear in scheduling queue" (both UnschedulableAndUnresolvable). A basic
 * group admits every member.
 *
 * ks_gang_placement_feasible - PlacementFeasible after @scheduled pods of the group are placed
 * (those of earlier cycles included) and @remaining are still to be tried, minCount being the
 * gang's or 1 for a basic group: KS_GANG_INFEASIBLE ("minCount (N) cannot be satisfied: S
 * scheduled, R remaining") when even all the remaining ones would not reach it, KS_GANG_WAIT
 * ("minCount (N) is not yet satisfied: ...") while below it, KS_GANG_FEASIBLE once reached.
 *
 * Pure functions: any thread.
 */
#ifndef KSCHED_PLUGIN_HELPERS_GANG_H
#define KSCHED_PLUGIN_HELPERS_GANG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ksched/workload_types.h"

enum ks_gang_verdict {
    KS_GANG_FEASIBLE,
    KS_GANG_WAIT,
    KS_GANG_INFEASIBLE,
};

bool ks_gang_pre_enqueue(const struct ks_pod_group_spec *pg, const char *pod_group_name, uint32_t all_pods,
                         char *msg, size_t len);
enum ks_gang_verdict ks_gang_placement_feasible(const struct ks_pod_group_spec *pg, uint32_t scheduled,
                                                uint32_t remaining, char *msg, size_t len);

#endif
