/*
 * volume_restrictions.c - the VolumeRestrictions plugin: filters nodes on volume conflicts: shared
 * read-write disks and ReadWriteOncePod claims (PreFilter, Filter).
 *
 * Mirrors pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions.go. It takes no
 * args. Its extension-point ops join this table with the framework runtime; the points it
 * implements are listed in ksched/registry.h.
 */
#include "ksched/registry.h"

const struct ks_plugin ks_plugin_volume_restrictions = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "VolumeRestrictions",
};
