/*
 * scheduling_gates.c - the SchedulingGates plugin: keeps a pod out of the active queue while it
 * has scheduling gates (PreEnqueue).
 *
 * Mirrors pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates.go: a pod with
 * spec.schedulingGates is rejected as UnschedulableAndUnresolvable with "waiting for
 * scheduling gates: [a b]" (Go's %v of the gate names) and waits among the unschedulable
 * pods; the event that lets it through (an update of the pod that removes every gate,
 * Pod/UpdatePodSchedulingGatesEliminated, hinted for the pod itself) is its one
 * registration (events_to_register). It takes no args.
 */
#include "ksched/framework.h"
#include "ksched/plugin_helpers_hints.h"
#include "ksched/registry.h"

#include <stdio.h>

/* pre_enqueue - Context: any thread, under one of the queue's locks; interns its message (not a hot path). */
static int pre_enqueue(void *self, const struct ks_pod *pod, struct ks_status *st)
{
    char gates[1024];
    size_t len = 0;

    (void)self;
    if (pod->ngates == 0)
        return KS_SUCCESS;
    gates[0] = '\0';
    for (uint32_t i = 0; i < pod->ngates && len < sizeof(gates); i++)
        len += (size_t)snprintf(gates + len, sizeof(gates) - len, "%s%s", i ? " " : "",
                                pod->scheduling_gates[i]);
    return ks_status_set(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for scheduling gates: [%s]", gates);
}

/* ---- events ---------------------------------------------------------------------------------- */

/* EventsToRegister with QueueingHints, as upstream's. */
static const struct ks_event_registration events[] = {
    {{KS_ER_POD, KS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED}, ks_hint_same_pod},
};
KS_DEFINE_EVENTS_TO_REGISTER(events)

const struct ks_plugin ks_plugin_scheduling_gates = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "SchedulingGates",
    .pre_enqueue = pre_enqueue,
    .events_to_register = events_to_register,
};
