/*
 * plugin_args.h - the parsed, defaulted arguments of the in-tree plugins that take any.
 *
 * Mirrors pkg/scheduler/apis/config/types_pluginargs.go. Each struct is what the plugin's
 * .args_parse returns (already defaulted and validated) and what the engine hands back
 * to the plugin through ks_profile_args(). Resource names are interned ids (ksched/base/intern.h)
 * so they compare with the ids of pod and node resource lists. Structs that hold arrays
 * own an arena with them; .args_destroy frees everything.
 *
 * Context: built at configuration load; read-only afterwards, from any thread.
 */
#ifndef KSCHED_PLUGIN_ARGS_H
#define KSCHED_PLUGIN_ARGS_H

#include <stdbool.h>
#include <stdint.h>

#include "ksched/api_types.h"
#include "ksched/base/arena.h"
#include "ksched/config_types.h"

/* The score range of a utilization shape point (config.MaxCustomPriorityScore). */
#define KS_MAX_CUSTOM_PRIORITY_SCORE 10

/* One resource and its weight (ResourceSpec). */
struct ks_resource_spec {
    uint32_t name; /* interned resource name */
    int64_t weight;
};

/* One point of a utilization-to-score function (UtilizationShapePoint). */
struct ks_shape_point {
    int32_t utilization; /* 0..100 */
    int32_t score;       /* 0..KS_MAX_CUSTOM_PRIORITY_SCORE */
};

/* DefaultPreemptionArgs. */
struct ks_defaultpreemption_args {
    int32_t min_candidate_nodes_percentage; /* default 10 */
    int32_t min_candidate_nodes_absolute;   /* default 100 */
};

/* InterPodAffinityArgs. */
struct ks_interpodaffinity_args {
    int32_t hard_pod_affinity_weight;             /* default 1, 0..100 */
    bool ignore_preferred_terms_of_existing_pods; /* v1beta3 and v1 only */
    enum ks_config_version version;               /* the configuration's (decides the fields printed) */
};

#define KS_SCORING_STRATEGY_MAP(X)                                                                           \
    X(LEAST_ALLOCATED, "LeastAllocated")                                                                     \
    X(MOST_ALLOCATED, "MostAllocated")                                                                       \
    X(REQUESTED_TO_CAPACITY_RATIO, "RequestedToCapacityRatio")

enum ks_scoring_strategy {
#define KS_X(id, text) KS_SCORING_##id,
    KS_SCORING_STRATEGY_MAP(KS_X)
#undef KS_X
};

/* NodeResourcesFitArgs. */
struct ks_noderesourcesfit_args {
    uint32_t nignored_resources;
    uint32_t *ignored_resources; /* interned names, as written */
    uint32_t nignored_resource_groups;
    const char **ignored_resource_groups; /* prefixes before '/', as written */
    enum ks_scoring_strategy strategy;    /* default LeastAllocated */
    uint32_t nresources;                  /* default cpu and memory, weight 1 */
    struct ks_resource_spec *resources;
    bool has_requested_to_capacity_ratio; /* only with KS_SCORING_REQUESTED_TO_CAPACITY_RATIO */
    uint32_t nshape;
    struct ks_shape_point *shape; /* requestedToCapacityRatio.shape, utilization increasing */
    struct ks_arena arena;
};

/* NodeResourcesBalancedAllocationArgs. */
struct ks_noderesourcesbalancedallocation_args {
    uint32_t nresources; /* default cpu and memory; every weight is 1 */
    struct ks_resource_spec *resources;
    struct ks_arena arena;
};

enum ks_spread_defaulting {
    KS_SPREAD_DEFAULTING_SYSTEM, /* upstream's built-in default constraints (the default) */
    KS_SPREAD_DEFAULTING_LIST,   /* default_constraints */
};

/* PodTopologySpreadArgs. */
struct ks_podtopologyspread_args {
    uint32_t nconstraints;
    struct ks_spread_constraint *default_constraints; /* selectors are always NULL */
    enum ks_spread_defaulting defaulting;
    struct ks_arena arena;
};

/* VolumeBindingArgs. */
struct ks_volumebinding_args {
    int64_t bind_timeout_seconds; /* default 600 */
    uint32_t nshape;              /* always 0: shape needs a feature gate ksched keeps off */
    struct ks_shape_point *shape;
    struct ks_arena arena;
};

/* DynamicResourcesArgs (kubescheduler.config.k8s.io/v1 only). */
struct ks_dynamicresources_args {
    int64_t filter_timeout_ns;  /* filterTimeout, default 10s; 0: no limit */
    int64_t binding_timeout_ns; /* bindingTimeout, default 10m */
};

/* NodeAffinityArgs. */
struct ks_nodeaffinity_args {
    struct ks_node_affinity *added_affinity; /* NULL when not set */
    struct ks_arena arena;
};

#endif
