/*
 * node_volume_limits.c - the NodeVolumeLimits plugin: filters out nodes where the pod's CSI
 * volumes would exceed the driver's attach limit (PreFilter, Filter).
 *
 * Mirrors pkg/scheduler/framework/plugins/nodevolumelimits/csi.go. It takes no args. Its
 * extension-point ops join this table with the framework runtime; the points it implements are
 * listed in ksched/registry.h.
 */
#include "ksched/registry.h"

const struct ks_plugin ks_plugin_node_volume_limits = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "NodeVolumeLimits",
};
