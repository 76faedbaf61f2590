/*
 * dynamic_resources.c - the DynamicResources plugin: allocates ResourceClaims (dynamic resource
 * allocation); ksched treats its feature gate as off, so it never rejects a pod (PreEnqueue,
 * PreFilter, Filter, PostFilter, Reserve, PreBind).
 *
 * Mirrors pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go. It takes no args.
 * Its extension-point ops join this table with the framework runtime; the points it implements are
 * listed in ksched/registry.h.
 */
#include "ksched/registry.h"

const struct ks_plugin ks_plugin_dynamic_resources = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "DynamicResources",
};
