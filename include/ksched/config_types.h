/*
 * config_types.h - KubeSchedulerConfiguration as loaded, defaulted and resolved.
 *
 * Mirrors kube-scheduler's pkg/scheduler/apis/config (types.go) for the three versioned
 * APIs ksched reads: kubescheduler.config.k8s.io/v1, v1beta3 and v1beta2. A struct
 * ks_config holds the effective configuration: every default applied, each profile's
 * plugins merged with the version's default plugins (struct ks_plugins, as printed by
 * `ksched config --print`), every plugin's parsed args, and per extension point the
 * plugins the framework runs, in order, with their score weights (the resolved view,
 * after MultiPoint expansion, as upstream's frameworkImpl builds it).
 *
 * Everything except plugin args lives in the configuration's arena; args are owned by
 * the plugin that parsed them and freed through its args_destroy. A loaded configuration
 * is immutable and may be read from any thread.
 */
#ifndef KSCHED_CONFIG_TYPES_H
#define KSCHED_CONFIG_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "ksched/base/arena.h"
#include "ksched/plugin_types.h"

#define KS_CONFIG_KIND "KubeSchedulerConfiguration"

/* The apiVersions ksched accepts, oldest first (removed-plugin checks walk this order). */
#define KS_CONFIG_VERSION_MAP(X)                                                                             \
    X(V1BETA2, "kubescheduler.config.k8s.io/v1beta2")                                                        \
    X(V1BETA3, "kubescheduler.config.k8s.io/v1beta3")                                                        \
    X(V1, "kubescheduler.config.k8s.io/v1")

enum ks_config_version {
#define KS_X(id, text) KS_CONFIG_##id,
    KS_CONFIG_VERSION_MAP(KS_X)
#undef KS_X
        KS_CONFIG_VERSION_COUNT
};

/*
 * Extension points in the field order of upstream's Plugins struct: YAML field name and
 * the framework interface name used in upstream's error messages. MultiPoint is last and
 * is not a point the framework runs: it expands into the others.
 */
#define KS_EXT_POINT_MAP(X)                                                                                  \
    X(PRE_ENQUEUE, "preEnqueue", "PreEnqueuePlugin")                                                         \
    X(QUEUE_SORT, "queueSort", "QueueSortPlugin")                                                            \
    X(PRE_FILTER, "preFilter", "PreFilterPlugin")                                                            \
    X(FILTER, "filter", "FilterPlugin")                                                                      \
    X(POST_FILTER, "postFilter", "PostFilterPlugin")                                                         \
    X(PRE_SCORE, "preScore", "PreScorePlugin")                                                               \
    X(SCORE, "score", "ScorePlugin")                                                                         \
    X(RESERVE, "reserve", "ReservePlugin")                                                                   \
    X(PERMIT, "permit", "PermitPlugin")                                                                      \
    X(PRE_BIND, "preBind", "PreBindPlugin")                                                                  \
    X(BIND, "bind", "BindPlugin")                                                                            \
    X(POST_BIND, "postBind", "PostBindPlugin")                                                               \
    X(MULTI_POINT, "multiPoint", "MultiPoint")

enum ks_ext_point {
#define KS_X(id, field, iface) KS_EXT_##id,
    KS_EXT_POINT_MAP(KS_X)
#undef KS_X
        KS_EXT_COUNT
};

/* Points a framework runs: every one but MultiPoint. */
#define KS_EXT_RUN_COUNT KS_EXT_MULTI_POINT

/* A set of extension points as a bit mask. */
#define KS_EXT_BIT(point) (1u << KS_EXT_##point)

/* One entry of a plugin set's enabled or disabled list. */
struct ks_plugin_ref {
    const char *name;
    const struct ks_plugin *plugin; /* registry entry; NULL for "*" and unknown names */
    int32_t weight;                 /* as written; meaningful when has_weight */
    bool has_weight;
    int32_t index;   /* position in the file's list, -1 when it comes from the defaults */
    int line;        /* source line, 0 when it comes from the defaults */
    int weight_line; /* source line of the weight, 0 when not written */
};

/* Enabled and disabled plugins of one extension point (PluginSet). */
struct ks_plugin_set {
    uint32_t nenabled;
    uint32_t ndisabled;
    struct ks_plugin_ref *enabled;
    struct ks_plugin_ref *disabled;
};

/* Every extension point's plugin set (Plugins), indexed by enum ks_ext_point. */
struct ks_plugins {
    struct ks_plugin_set point[KS_EXT_COUNT];
};

/* One pluginConfig entry, with its args parsed and defaulted by the plugin. */
struct ks_plugin_config {
    const char *name;
    const struct ks_plugin *plugin;
    void *args;     /* from plugin->args_parse; NULL for a plugin without args */
    bool defaulted; /* added by defaulting, not written in the file */
    int line;       /* source line, 0 when defaulted */
};

/* One plugin the framework runs at an extension point. */
struct ks_resolved_plugin {
    const struct ks_plugin *plugin;
    int32_t weight;   /* at the score point: the effective weight (0 in the file means 1); else 0 */
    const void *args; /* the profile's args for this plugin, NULL when it has none */
};

/* The ordered plugins of one extension point after merging and MultiPoint expansion. */
struct ks_resolved_point {
    uint32_t n;
    const struct ks_resolved_plugin *items;
};

struct ks_profile {
    const char *scheduler_name;
    bool has_percentage; /* percentageOfNodesToScore set for this profile */
    int32_t percentage_of_nodes_to_score;
    struct ks_plugins plugins; /* merged with the version's defaults */
    uint32_t nplugin_config;
    struct ks_plugin_config *plugin_config; /* the file's entries in order, then defaulted ones */
    struct ks_resolved_point resolved[KS_EXT_RUN_COUNT];
    int line; /* source line of the profile, 0 when defaulted */
};

/* componentbaseconfig LeaderElectionConfiguration (kept and printed; ksched does not elect). */
struct ks_leader_election {
    bool leader_elect;
    int64_t lease_duration_ns;
    int64_t renew_deadline_ns;
    int64_t retry_period_ns;
    const char *resource_lock;
    const char *resource_name;
    const char *resource_namespace;
};

/* componentbaseconfig ClientConnectionConfiguration (kept and printed). */
struct ks_client_connection {
    const char *kubeconfig;
    const char *accept_content_types;
    const char *content_type;
    float qps;
    int32_t burst;
};

struct ks_config {
    enum ks_config_version version;
    int32_t parallelism;
    struct ks_leader_election leader_election;
    struct ks_client_connection client_connection;
    const char *healthz_bind_address; /* v1beta2 only, else NULL */
    const char *metrics_bind_address; /* v1beta2 only, else NULL */
    bool enable_profiling;
    bool enable_contention_profiling;
    int32_t percentage_of_nodes_to_score; /* 0: adaptive */
    int64_t pod_initial_backoff_seconds;
    int64_t pod_max_backoff_seconds;
    uint32_t nprofiles;
    struct ks_profile *profiles;
    bool delay_cache_until_active;
    struct ks_arena arena; /* owns everything above except plugin args */
};

#endif
