/*
 * image_locality.c - the ImageLocality plugin: scores nodes by the size of the pod's container
 * images they already hold, spread-adjusted (Score).
 *
 * Mirrors pkg/scheduler/framework/plugins/imagelocality/image_locality.go. It takes no args. Its
 * extension-point ops join this table with the framework runtime; the points it implements are
 * listed in ksched/registry.h.
 */
#include "ksched/registry.h"

const struct ks_plugin ks_plugin_image_locality = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "ImageLocality",
};
