/*
 * registry.h - the in-tree plugins, as kube-scheduler's NewInTreeRegistry().
 *
 * KS_INTREE_PLUGIN_MAP lists every in-tree plugin once, by the suffix of its ops table
 * (plugins/<suffix>.c exports ks_plugin_<suffix>). The extension points a plugin implements
 * are not listed: they are derived from its non-NULL ops (ks_registry_points()), for in-tree
 * and added plugins alike, so they match upstream's plugins as the framework expands them
 * from MultiPoint (pkg/scheduler/apis/config/testing/defaults: ExpandedPluginsV1) as long as
 * the ops tables do.
 *
 * Names that upstream removed from every version ksched reads (NodeLabel, ServiceAffinity,
 * NodePreferAvoidPods, NodeResourcesLeastAllocated, ...) are not plugins here; the
 * configuration validator reports them as removed.
 *
 * Context: the in-tree table is immutable; added plugins are published once, at start-up.
 */
#ifndef KSCHED_REGISTRY_H
#define KSCHED_REGISTRY_H

#include "ksched/config_types.h"
#include "ksched/plugin_types.h"

#define KS_INTREE_PLUGIN_MAP(X)                                                                              \
    X(scheduling_gates)                                                                                      \
    X(priority_sort)                                                                                         \
    X(node_unschedulable)                                                                                    \
    X(node_name)                                                                                             \
    X(taint_toleration)                                                                                      \
    X(node_affinity)                                                                                         \
    X(node_ports)                                                                                            \
    X(node_resources_fit)                                                                                    \
    X(volume_restrictions)                                                                                   \
    X(node_volume_limits)                                                                                    \
    X(ebs_limits)                                                                                            \
    X(gce_pd_limits)                                                                                         \
    X(azure_disk_limits)                                                                                     \
    X(cinder_limits)                                                                                         \
    X(volume_binding)                                                                                        \
    X(volume_zone)                                                                                           \
    X(pod_topology_spread)                                                                                   \
    X(inter_pod_affinity)                                                                                    \
    X(default_preemption)                                                                                    \
    X(node_resources_balanced_allocation)                                                                    \
    X(image_locality)                                                                                        \
    X(default_binder)                                                                                        \
    X(selector_spread)                                                                                       \
    X(dynamic_resources)                                                                                     \
    X(gang_scheduling)

#define KS_X(suffix) extern const struct ks_plugin ks_plugin_##suffix;
KS_INTREE_PLUGIN_MAP(KS_X)
#undef KS_X

/* ks_registry - every in-tree plugin, NULL-terminated, in KS_INTREE_PLUGIN_MAP order. */
extern const struct ks_plugin *const ks_registry[];

/* Most plugins that may be added besides the in-tree ones (out-of-tree, tests, embedders). */
#define KS_REGISTRY_MAX_ADDED 64

/*
 * ks_registry_find - the plugin called @name: in-tree first, then those added with
 * ks_registry_add() or ks_registry_load() (framework.h); NULL when there is none.
 * Context: any thread; may run concurrently with ks_registry_add().
 */
const struct ks_plugin *ks_registry_find(const char *name);

/*
 * ks_registry_points - KS_EXT_BIT() mask of the extension points @plugin implements,
 * derived from its non-NULL ops (pre_enqueue, less, pre_filter, filter, post_filter,
 * pre_score, score, reserve or unreserve, permit, pre_bind, bind, post_bind). 0 for NULL.
 * Any thread.
 */
unsigned ks_registry_points(const struct ks_plugin *plugin);

/*
 * ks_registry_add - make @plugin findable by name, as upstream's Registry.Register for
 * out-of-tree plugins. @plugin must stay valid for the life of the process. Fails with
 * -EINVAL and @err set when its abi_version is not one this build reads (1 through
 * KS_PLUGIN_ABI_VERSION), its name is NULL or empty, the name is taken ("a plugin named X
 * already exists"), or KS_REGISTRY_MAX_ADDED plugins were added already.
 * Context: start-up, before configurations are loaded; calls are serialised internally.
 */
int ks_registry_add(const struct ks_plugin *plugin, struct ks_error *err);

/*
 * ks_registry_check - the checks of ks_registry_add() (ABI version, a name, the name not
 * taken) without adding @plugin, and with the same messages; 0 or -EINVAL with @err set.
 * Context: start-up, as ks_registry_add().
 */
int ks_registry_check(const struct ks_plugin *plugin, struct ks_error *err);

/* ks_registry_count - in-tree plus added plugins (an upper bound for per-plugin tables). Any thread. */
uint32_t ks_registry_count(void);

#endif
