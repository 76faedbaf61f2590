/*
 * node_ports.c - the NodePorts plugin: filters out nodes where a host port the pod asks for is
 * already in use (PreFilter, Filter).
 *
 * Mirrors pkg/scheduler/framework/plugins/nodeports/node_ports.go. It takes no args. Its
 * extension-point ops join this table with the framework runtime; the points it implements are
 * listed in ksched/registry.h.
 */
#include "ksched/registry.h"

const struct ks_plugin ks_plugin_node_ports = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "NodePorts",
};
