/*
 * priority_sort.c - the PrioritySort plugin: orders the scheduling queue by pod priority, then by
 * the time a pod entered the queue (QueueSort).
 *
 * Mirrors pkg/scheduler/framework/plugins/queuesort/priority_sort.go. It takes no args. Its
 * extension-point ops join this table with the framework runtime; the points it implements are
 * listed in ksched/registry.h.
 */
#include "ksched/registry.h"

const struct ks_plugin ks_plugin_priority_sort = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "PrioritySort",
};
