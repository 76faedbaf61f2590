/*
 * selector_spread.c - the SelectorSpread plugin: spreads pods of the same Service, ReplicaSet or
 * StatefulSet across nodes and zones; a v1beta2/v1beta3 plugin, invalid in v1 and removed upstream
 * in 1.27 (PreScore, Score).
 *
 * Mirrors pkg/scheduler/framework/plugins/selectorspread/selector_spread.go (Kubernetes
 * 1.22-1.26). It takes no args. Its extension-point ops join this table with the framework
 * runtime; the points it implements are listed in ksched/registry.h.
 */
#include "ksched/registry.h"

const struct ks_plugin ks_plugin_selector_spread = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "SelectorSpread",
};
