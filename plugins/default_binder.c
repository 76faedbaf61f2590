/*
 * default_binder.c - the DefaultBinder plugin: binds the pod to the chosen node (Bind).
 *
 * Mirrors pkg/scheduler/framework/plugins/defaultbinder/default_binder.go. It takes no args. Its
 * extension-point ops join this table with the framework runtime; the points it implements are
 * listed in ksched/registry.h.
 */
#include "ksched/registry.h"

const struct ks_plugin ks_plugin_default_binder = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "DefaultBinder",
};
