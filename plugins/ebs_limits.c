/*
 * ebs_limits.c - the EBSLimits plugin: the in-tree AWS EBS attach limit filter, kept for
 * v1beta2/v1beta3 configurations; invalid in v1 (PreFilter, Filter).
 *
 * Mirrors pkg/scheduler/framework/plugins/nodevolumelimits/non_csi.go. It takes no args. Its
 * extension-point ops join this table with the framework runtime; the points it implements are
 * listed in ksched/registry.h.
 */
#include "ksched/registry.h"

const struct ks_plugin ks_plugin_ebs_limits = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "EBSLimits",
};
