/*
 * taint_toleration.c - the TaintToleration plugin: filters nodes with NoSchedule/NoExecute taints
 * the pod does not tolerate and scores nodes by their untolerated PreferNoSchedule taints (Filter,
 * PreScore, Score).
 *
 * Mirrors pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go. It takes no args.
 * Its extension-point ops join this table with the framework runtime; the points it implements are
 * listed in ksched/registry.h.
 */
#include "ksched/registry.h"

const struct ks_plugin ks_plugin_taint_toleration = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "TaintToleration",
};
