/*
 * registry.h - the in-tree plugins, as kube-scheduler's NewInTreeRegistry().
 *
 * KS_INTREE_PLUGIN_MAP lists every in-tree plugin once: the suffix of its ops table
 * (plugins/<suffix>.c exports ks_plugin_<suffix>) and the extension points it implements.
 * The point masks follow upstream's plugins as the framework expands them from MultiPoint
 * (pkg/scheduler/apis/config/testing/defaults: ExpandedPluginsV1); once the ops tables
 * carry extension-point ops the masks can be derived from the non-NULL ops instead, as
 * they already are for plugins added at run time (ks_registry_add(), ks_registry_load()).
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

#define KS_PT_FILTERS (KS_EXT_BIT(PRE_FILTER) | KS_EXT_BIT(FILTER))
#define KS_PT_SCORES  (KS_EXT_BIT(PRE_SCORE) | KS_EXT_BIT(SCORE))

#define KS_INTREE_PLUGIN_MAP(X)                                                                              \
    X(scheduling_gates, KS_EXT_BIT(PRE_ENQUEUE))                                                             \
    X(priority_sort, KS_EXT_BIT(QUEUE_SORT))                                                                 \
    X(node_unschedulable, KS_EXT_BIT(FILTER))                                                                \
    X(node_name, KS_EXT_BIT(FILTER))                                                                         \
    X(taint_toleration, KS_EXT_BIT(FILTER) | KS_PT_SCORES)                                                   \
    X(node_affinity, KS_PT_FILTERS | KS_PT_SCORES)                                                           \
    X(node_ports, KS_PT_FILTERS)                                                                             \
    X(node_resources_fit, KS_PT_FILTERS | KS_PT_SCORES)                                                      \
    X(volume_restrictions, KS_PT_FILTERS)                                                                    \
    X(node_volume_limits, KS_PT_FILTERS)                                                                     \
    X(ebs_limits, KS_PT_FILTERS)                                                                             \
    X(gce_pd_limits, KS_PT_FILTERS)                                                                          \
    X(azure_disk_limits, KS_PT_FILTERS)                                                                      \
    X(cinder_limits, KS_PT_FILTERS)                                                                          \
    X(volume_binding, KS_PT_FILTERS | KS_PT_SCORES | KS_EXT_BIT(RESERVE) | KS_EXT_BIT(PRE_BIND))             \
    X(volume_zone, KS_PT_FILTERS)                                                                            \
    X(pod_topology_spread, KS_PT_FILTERS | KS_PT_SCORES)                                                     \
    X(inter_pod_affinity, KS_PT_FILTERS | KS_PT_SCORES)                                                      \
    X(default_preemption, KS_EXT_BIT(POST_FILTER))                                                           \
    X(node_resources_balanced_allocation, KS_PT_SCORES)                                                      \
    X(image_locality, KS_EXT_BIT(SCORE))                                                                     \
    X(default_binder, KS_EXT_BIT(BIND))                                                                      \
    X(selector_spread, KS_PT_SCORES)                                                                         \
    X(dynamic_resources, KS_EXT_BIT(PRE_ENQUEUE) | KS_PT_FILTERS | KS_EXT_BIT(POST_FILTER) |                 \
                             KS_EXT_BIT(RESERVE) | KS_EXT_BIT(PRE_BIND))

#define KS_X(suffix, points) extern const struct ks_plugin ks_plugin_##suffix;
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
 * ks_registry_points - KS_EXT_BIT() mask of the extension points @plugin implements: the
 * table above for in-tree plugins, derived from the non-NULL ops for any other plugin
 * (less, pre_filter, filter, post_filter, pre_score, score, reserve or unreserve,
 * permit, pre_bind, bind, post_bind). Any thread.
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
