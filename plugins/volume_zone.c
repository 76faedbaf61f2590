/*
 * volume_zone.c - the VolumeZone plugin: filters out nodes outside the zones and regions of the
 * pod's bound volumes (PreFilter, Filter).
 *
 * Mirrors pkg/scheduler/framework/plugins/volumezone/volume_zone.go. It takes no args. Its
 * extension-point ops join this table with the framework runtime; the points it implements are
 * listed in ksched/registry.h.
 */
#include "ksched/registry.h"

const struct ks_plugin ks_plugin_volume_zone = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "VolumeZone",
};
