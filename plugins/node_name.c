/*
 * node_name.c - the NodeName plugin: filters out every node but the one named by the pod's
 * spec.nodeName, when set (Filter).
 *
 * Mirrors pkg/scheduler/framework/plugins/nodename/node_name.go. It takes no args. Its extension-
 * point ops join this table with the framework runtime; the points it implements are listed in
 * ksched/registry.h.
 */
#include "ksched/registry.h"

const struct ks_plugin ks_plugin_node_name = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "NodeName",
};
