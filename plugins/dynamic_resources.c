/*
 * dynamic_resources.c - the DynamicResources plugin: allocates ResourceClaims (dynamic resource
 * allocation); ksched treats its feature gate as off, so it never rejects a pod (PreEnqueue,
 * PreFilter, Filter, PostFilter, Reserve, PreBind).
 *
 * Mirrors pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go. It takes no args.
 * With the gate off its ops table is empty: ks_registry_points() (plugins/registry.c) gives it
 * upstream's points, so a configuration may enable it where upstream's may.
 */
#include "ksched/registry.h"

const struct ks_plugin ks_plugin_dynamic_resources = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "DynamicResources",
};
