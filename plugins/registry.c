/*
 * registry.c - the in-tree plugin registry (see include/ksched/registry.h).
 *
 * Mirrors pkg/scheduler/framework/plugins/registry.go (NewInTreeRegistry): an explicit,
 * NULL-terminated table of every in-tree plugin, built from KS_INTREE_PLUGIN_MAP so the
 * table and the per-plugin extension points cannot drift apart. Lookups by name happen
 * at configuration load only; the scheduling cycle dispatches through resolved pointers.
 */
#include "ksched/registry.h"

#include <string.h>

const struct ks_plugin *const ks_registry[] = {
#define KS_X(suffix, points) &ks_plugin_##suffix,
    KS_INTREE_PLUGIN_MAP(KS_X)
#undef KS_X
        NULL,
};

static const struct {
    const struct ks_plugin *plugin;
    unsigned points;
} points_table[] = {
#define KS_X(suffix, points) {&ks_plugin_##suffix, (points)},
    KS_INTREE_PLUGIN_MAP(KS_X)
#undef KS_X
};

const struct ks_plugin *ks_registry_find(const char *name)
{
    for (const struct ks_plugin *const *p = ks_registry; *p; p++) {
        if (strcmp((*p)->name, name) == 0)
            return *p;
    }
    return NULL;
}

unsigned ks_registry_points(const struct ks_plugin *plugin)
{
    for (size_t i = 0; i < sizeof(points_table) / sizeof(points_table[0]); i++) {
        if (points_table[i].plugin == plugin)
            return points_table[i].points;
    }
    return 0;
}
