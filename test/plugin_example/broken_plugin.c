/*
 * broken_plugin.c - shared objects that ks_registry_load() must refuse, one per error
 * path, chosen at build time:
 *
 *   KS_BROKEN_ABI       ks_plugin_entry() returns a table built for ABI version 999;
 *   KS_BROKEN_NO_ENTRY  no ks_plugin_entry symbol at all;
 *   KS_BROKEN_CLASH     a plugin named NodeName, the name of an in-tree plugin;
 *   KS_BROKEN_NULL      ks_plugin_entry() returns NULL.
 */
#include <stddef.h>

#include "ksched/framework.h"
#include "ksched/plugin_types.h"

static int broken_filter(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                         const struct ks_node_snap *node, struct ks_status *st)
{
    (void)self;
    (void)cs;
    (void)pod;
    (void)node;
    (void)st;
    return KS_SUCCESS;
}

static const struct ks_plugin broken = {
#if defined(KS_BROKEN_ABI)
    .abi_version = 999,
    .name = "BrokenAbi",
#elif defined(KS_BROKEN_CLASH)
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "NodeName",
#else
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "Broken",
#endif
    .filter = broken_filter,
};

#if defined(KS_BROKEN_NO_ENTRY)
/* exported under another name: the loader must not find it */
__attribute__((visibility("default"))) const struct ks_plugin *ks_plugin_entry_v0(void)
{
    return &broken;
}
#elif defined(KS_BROKEN_NULL)
__attribute__((visibility("default"))) const struct ks_plugin *ks_plugin_entry(void)
{
    return (void)broken, NULL;
}
#else
__attribute__((visibility("default"))) const struct ks_plugin *ks_plugin_entry(void)
{
    return &broken;
}
#endif
