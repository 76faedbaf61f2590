/*
 * node_unschedulable.c - the NodeUnschedulable plugin: filters out nodes marked unschedulable
 * unless the pod tolerates the unschedulable taint (Filter).
 *
 * Mirrors pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go. It takes no
 * args. Its extension-point ops join this table with the framework runtime; the points it
 * implements are listed in ksched/registry.h.
 */
#include "ksched/registry.h"

const struct ks_plugin ks_plugin_node_unschedulable = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "NodeUnschedulable",
};
