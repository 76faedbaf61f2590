/*
 * scheduling_gates.c - the SchedulingGates plugin: keeps a pod out of the active queue while it
 * has scheduling gates (PreEnqueue).
 *
 * Mirrors pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates.go. It takes no args.
 * Its extension-point ops join this table with the framework runtime; the points it implements are
 * listed in ksched/registry.h.
 */
#include "ksched/registry.h"

const struct ks_plugin ks_plugin_scheduling_gates = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "SchedulingGates",
};
