/*
 * config_defaults.c - the defaults of KubeSchedulerConfiguration, per API version.
 *
 * Mirrors SetDefaults_KubeSchedulerConfiguration and setDefaults_KubeSchedulerProfile of
 * pkg/scheduler/apis/config/{v1,v1beta3,v1beta2}/defaults.go and getDefaultPlugins of the
 * matching default_plugins.go, with every feature gate at its default:
 *
 *  - v1: the current upstream MultiPoint list (SchedulingGates first; the in-tree volume
 *    limit plugins EBSLimits, GCEPDLimits and AzureDiskLimits gone; DynamicResources, GA
 *    since 1.34, before DefaultPreemption) with TaintToleration 3, NodeAffinity 2,
 *    PodTopologySpread 2, InterPodAffinity 2, NodeResourcesFit 1,
 *    NodeResourcesBalancedAllocation 1 and ImageLocality 1.
 *  - v1beta3: the MultiPoint list of the 1.23-1.25 releases (same weights, the volume
 *    limit plugins still present, no SchedulingGates).
 *  - v1beta2: the per-extension-point lists of the 1.22 release, with Score weights
 *    NodeResourcesBalancedAllocation 1, ImageLocality 1, InterPodAffinity 1,
 *    NodeResourcesFit 1, NodeAffinity 1, PodTopologySpread 2, TaintToleration 1.
 *
 * Feature gates (ksched/internal/features.h) as applyFeatureGates of those releases: with
 * DefaultPodTopologySpread off (--feature-gates=DefaultPodTopologySpread=false; it is on
 * by default, beta in 1.20-1.23), v1beta2 appends SelectorSpread to PreScore and to Score
 * with weight 1, and v1beta3 appends it to MultiPoint with weight 1. The v1 defaults are
 * those of releases where the gate is locked on (GA in 1.24, removed in 1.26).
 *
 * Default plugin args: every enabled plugin that has args and no pluginConfig entry gets
 * one, appended in name order as upstream's pluginsNames() sorts them; each plugin's
 * .args_parse(NULL) supplies its defaults (SetDefaults_*Args).
 */
#include "config_internal.h"

#include "ksched/internal/features.h"
#include "ksched/registry.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct default_plugin {
    const char *name;
    int32_t weight; /* 0: no weight given */
};

static const struct default_plugin v1_multi_point[] = {
    {"SchedulingGates", 0},
    {"PrioritySort", 0},
    {"NodeUnschedulable", 0},
    {"NodeName", 0},
    {"TaintToleration", 3},
    {"NodeAffinity", 2},
    {"NodePorts", 0},
    {"NodeResourcesFit", 1},
    {"VolumeRestrictions", 0},
    {"NodeVolumeLimits", 0},
    {"VolumeBinding", 0},
    {"VolumeZone", 0},
    {"PodTopologySpread", 2},
    {"InterPodAffinity", 2},
    {"DynamicResources", 0},
    {"DefaultPreemption", 0},
    {"NodeResourcesBalancedAllocation", 1},
    {"ImageLocality", 1},
    {"DefaultBinder", 0},
    {NULL, 0},
};

static const struct default_plugin v1beta3_multi_point[] = {
    {"PrioritySort", 0},     {"NodeUnschedulable", 0},  {"NodeName", 0},
    {"TaintToleration", 3},  {"NodeAffinity", 2},       {"NodePorts", 0},
    {"NodeResourcesFit", 1}, {"VolumeRestrictions", 0}, {"EBSLimits", 0},
    {"GCEPDLimits", 0},      {"NodeVolumeLimits", 0},   {"AzureDiskLimits", 0},
    {"VolumeBinding", 0},    {"VolumeZone", 0},         {"PodTopologySpread", 2},
    {"InterPodAffinity", 2}, {"DefaultPreemption", 0},  {"NodeResourcesBalancedAllocation", 1},
    {"ImageLocality", 1},    {"DefaultBinder", 0},      {NULL, 0},
};

static const struct default_plugin v1beta2_queue_sort[] = {{"PrioritySort", 0}, {NULL, 0}};

static const struct default_plugin v1beta2_pre_filter[] = {
    {"NodeResourcesFit", 0}, {"NodePorts", 0},     {"VolumeRestrictions", 0}, {"PodTopologySpread", 0},
    {"InterPodAffinity", 0}, {"VolumeBinding", 0}, {"NodeAffinity", 0},       {NULL, 0},
};

static const struct default_plugin v1beta2_filter[] = {
    {"NodeUnschedulable", 0}, {"NodeName", 0},          {"TaintToleration", 0},    {"NodeAffinity", 0},
    {"NodePorts", 0},         {"NodeResourcesFit", 0},  {"VolumeRestrictions", 0}, {"EBSLimits", 0},
    {"GCEPDLimits", 0},       {"NodeVolumeLimits", 0},  {"AzureDiskLimits", 0},    {"VolumeBinding", 0},
    {"VolumeZone", 0},        {"PodTopologySpread", 0}, {"InterPodAffinity", 0},   {NULL, 0},
};

static const struct default_plugin v1beta2_post_filter[] = {{"DefaultPreemption", 0}, {NULL, 0}};

static const struct default_plugin v1beta2_pre_score[] = {
    {"InterPodAffinity", 0}, {"PodTopologySpread", 0}, {"TaintToleration", 0}, {"NodeAffinity", 0}, {NULL, 0},
};

static const struct default_plugin v1beta2_score[] = {
    {"NodeResourcesBalancedAllocation", 1},
    {"ImageLocality", 1},
    {"InterPodAffinity", 1},
    {"NodeResourcesFit", 1},
    {"NodeAffinity", 1},
    {"PodTopologySpread", 2},
    {"TaintToleration", 1},
    {NULL, 0},
};

static const struct default_plugin v1beta2_volume_binding[] = {{"VolumeBinding", 0}, {NULL, 0}};
static const struct default_plugin v1beta2_bind[] = {{"DefaultBinder", 0}, {NULL, 0}};

static const struct default_plugin *const defaults_by_version[KS_CONFIG_VERSION_COUNT][KS_EXT_COUNT] = {
    [KS_CONFIG_V1BETA2] =
        {
            [KS_EXT_QUEUE_SORT] = v1beta2_queue_sort,
            [KS_EXT_PRE_FILTER] = v1beta2_pre_filter,
            [KS_EXT_FILTER] = v1beta2_filter,
            [KS_EXT_POST_FILTER] = v1beta2_post_filter,
            [KS_EXT_PRE_SCORE] = v1beta2_pre_score,
            [KS_EXT_SCORE] = v1beta2_score,
            [KS_EXT_RESERVE] = v1beta2_volume_binding,
            [KS_EXT_PRE_BIND] = v1beta2_volume_binding,
            [KS_EXT_BIND] = v1beta2_bind,
        },
    [KS_CONFIG_V1BETA3] = {[KS_EXT_MULTI_POINT] = v1beta3_multi_point},
    [KS_CONFIG_V1] = {[KS_EXT_MULTI_POINT] = v1_multi_point},
};

/*
 * applyFeatureGates: the plugin a gate appends to extension point @p of version @v, if any:
 * GangScheduling with GenericWorkload (v1), SelectorSpread without DefaultPodTopologySpread.
 */
static const struct default_plugin *gated_plugin(enum ks_config_version v, int p)
{
    static const struct default_plugin spread_pre_score = {"SelectorSpread", 0};
    static const struct default_plugin spread_score = {"SelectorSpread", 1};
    static const struct default_plugin gang = {"GangScheduling", 0};

    if (v == KS_CONFIG_V1 && p == KS_EXT_MULTI_POINT && ks_feature_enabled(KS_FEATURE_GENERIC_WORKLOAD))
        return &gang;
    if (ks_feature_enabled(KS_FEATURE_DEFAULT_POD_TOPOLOGY_SPREAD))
        return NULL;
    if (v == KS_CONFIG_V1BETA2 && p == KS_EXT_PRE_SCORE)
        return &spread_pre_score;
    if ((v == KS_CONFIG_V1BETA2 && p == KS_EXT_SCORE) || (v == KS_CONFIG_V1BETA3 && p == KS_EXT_MULTI_POINT))
        return &spread_score;
    return NULL;
}

int ks__config_default_plugins(enum ks_config_version v, struct ks_arena *a, struct ks_plugins *out)
{
    memset(out, 0, sizeof(*out));
    for (int p = 0; p < KS_EXT_COUNT; p++) {
        const struct default_plugin *list = defaults_by_version[v][p];
        const struct default_plugin *gated = gated_plugin(v, p);
        uint32_t n = 0;
        if (!list)
            continue;
        while (list[n].name)
            n++;
        struct ks_plugin_ref *refs = ks_arena_calloc(a, n + (gated != NULL), sizeof(*refs));
        if (!refs)
            return -ENOMEM;
        for (uint32_t i = 0; i < n + (gated != NULL); i++) {
            const struct default_plugin *d = i < n ? &list[i] : gated;
            refs[i].name = d->name;
            refs[i].plugin = ks_registry_find(d->name);
            refs[i].weight = d->weight;
            refs[i].has_weight = d->weight != 0;
            refs[i].index = -1;
        }
        out->point[p].enabled = refs;
        out->point[p].nenabled = n + (gated != NULL);
    }
    return 0;
}

/* ---- scalars ---------------------------------------------------------------------------------- */

#define KS_SECOND_NS 1000000000LL

/* v1beta2's healthz and metrics addresses: "0.0.0.0:10251" unless given; a bare host or port is completed. */
static const char *bind_address(struct ks_arena *a, const char *given)
{
    static const char def[] = "0.0.0.0:10251";
    unsigned char ip[16];
    size_t len;
    char *s;

    if (!given)
        return def;
    len = strlen(given) + sizeof(def) + 2;
    if (given[0] == ':' && (s = ks_arena_alloc(a, len))) {
        snprintf(s, len, "0.0.0.0%s", given);
        return s;
    }
    if (inet_pton(AF_INET, given, ip) == 1 && (s = ks_arena_alloc(a, len))) {
        snprintf(s, len, "%s:10251", given);
        return s;
    }
    if (inet_pton(AF_INET6, given, ip) == 1 && (s = ks_arena_alloc(a, len))) {
        snprintf(s, len, "[%s]:10251", given);
        return s;
    }
    return given;
}

void ks__config_default_scalars(struct ks__cfg_load *l)
{
    struct ks_config *cfg = l->cfg;
    struct ks_leader_election *le = &cfg->leader_election;
    struct ks_client_connection *cc = &cfg->client_connection;

    if (!l->parallelism)
        cfg->parallelism = 16;
    if (!l->percentage)
        cfg->percentage_of_nodes_to_score = 0; /* DefaultPercentageOfNodesToScore: adaptive */
    if (!le->resource_lock || !*le->resource_lock)
        le->resource_lock = "leases";
    if (!le->resource_namespace || !*le->resource_namespace)
        le->resource_namespace = "kube-system";
    if (!le->resource_name || !*le->resource_name)
        le->resource_name = "kube-scheduler";
    if (!cc->content_type || !*cc->content_type)
        cc->content_type = "application/vnd.kubernetes.protobuf";
    if (!cc->kubeconfig)
        cc->kubeconfig = "";
    if (!cc->accept_content_types)
        cc->accept_content_types = "";
    if (cc->qps == 0)
        cc->qps = 50;
    if (cc->burst == 0)
        cc->burst = 100;
    /* RecommendedDefaultLeaderElectionConfiguration */
    if (!l->leader_elect)
        le->leader_elect = true;
    if (le->lease_duration_ns == 0)
        le->lease_duration_ns = 15 * KS_SECOND_NS;
    if (le->renew_deadline_ns == 0)
        le->renew_deadline_ns = 10 * KS_SECOND_NS;
    if (le->retry_period_ns == 0)
        le->retry_period_ns = 2 * KS_SECOND_NS;
    if (!l->initial_backoff)
        cfg->pod_initial_backoff_seconds = 1;
    if (!l->max_backoff)
        cfg->pod_max_backoff_seconds = 10;
    if (!l->enable_profiling)
        cfg->enable_profiling = true;
    if (cfg->enable_profiling && !l->enable_contention_profiling)
        cfg->enable_contention_profiling = true;
    if (cfg->version == KS_CONFIG_V1BETA2) {
        cfg->healthz_bind_address = bind_address(&cfg->arena, cfg->healthz_bind_address);
        cfg->metrics_bind_address = bind_address(&cfg->arena, cfg->metrics_bind_address);
    }
}

int ks__config_default_profiles(struct ks__cfg_load *l)
{
    struct ks_config *cfg = l->cfg;

    if (cfg->nprofiles == 0) {
        /* decoding reserved room for this one */
        struct ks_profile *prof = &cfg->profiles[0];
        uint32_t cap = ks_registry_count();
        prof->plugin_config = ks_arena_calloc(&cfg->arena, cap, sizeof(*prof->plugin_config));
        if (!prof->plugin_config)
            return -ENOMEM;
        cfg->nprofiles = 1;
    }
    /* only a single profile gets the default name; validation requires one everywhere else */
    if (cfg->nprofiles == 1 && !l->src[0].has_name)
        cfg->profiles[0].scheduler_name = "default-scheduler";
    return 0;
}

/* ---- plugin args ------------------------------------------------------------------------------- */

static int parse_args(struct ks__cfg_load *l, uint32_t pi, uint32_t j, const struct ks_yaml_node *node)
{
    struct ks_plugin_config *pc = &l->cfg->profiles[pi].plugin_config[j];
    struct ks_error perr = {0};
    char field[KS_ERROR_FIELD_MAX + sizeof(perr.field) + 8]; /* ks_error_set truncates */
    void *args = NULL;
    int rc;

    snprintf(field, sizeof(field), "profiles[%u].pluginConfig[%u].args", pi, j);
    if (!pc->plugin->args_parse) {
        /* ksched plugins without an args type take none (upstream would ignore them) */
        if (node && !(node->kind == KS_YAML_MAP && node->n == 0))
            return ks__cfg_fail(l, node->line, field, "Invalid value: plugin \"%s\" takes no args", pc->name);
        return 0;
    }
    rc = pc->plugin->args_parse(node, ks_config_version_name(l->cfg->version), l->file, &args, &perr);
    if (rc < 0) {
        if (!perr.set)
            return rc;
        size_t len = strlen(field);
        if (perr.field[0])
            snprintf(field + len, sizeof(field) - len, "%s%s", perr.field[0] == '[' ? "" : ".", perr.field);
        return ks_error_set(l->err, perr.file[0] ? perr.file : l->file, perr.line ? perr.line : pc->line,
                            field, "%s", perr.msg);
    }
    pc->args = args;
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool configured(const struct ks_profile *prof, const char *name)
{
    for (uint32_t i = 0; i < prof->nplugin_config; i++) {
        if (strcmp(prof->plugin_config[i].name, name) == 0)
            return true;
    }
    return false;
}

int ks__config_plugin_config(struct ks__cfg_load *l, uint32_t pi)
{
    struct ks_profile *prof = &l->cfg->profiles[pi];
    const struct ks__profile_src *src = &l->src[pi];
    uint32_t nfile = prof->nplugin_config, nnames = 0;
    char field[KS_ERROR_FIELD_MAX];
    int rc;

    for (uint32_t j = 0; j < nfile; j++) {
        struct ks_plugin_config *pc = &prof->plugin_config[j];
        snprintf(field, sizeof(field), "profiles[%u].pluginConfig[%u]", pi, j);
        for (uint32_t k = 0; k < j; k++) {
            if (strcmp(prof->plugin_config[k].name, pc->name) == 0)
                return ks__cfg_fail(l, pc->line, field, "Duplicate value: \"%s\"", pc->name);
        }
        if ((rc = ks__config_check_invalid_name(l, pc->name, pc->line, field)))
            return rc;
        if (!pc->plugin) {
            snprintf(field, sizeof(field), "profiles[%u].pluginConfig[%u].name", pi, j);
            return ks__cfg_fail(l, pc->line, field, "Invalid value: \"%s\": unknown plugin", pc->name);
        }
        if ((rc = parse_args(l, pi, j, src->args ? src->args[j] : NULL)))
            return rc;
    }

    /* pluginsNames(): every plugin enabled at any point, sorted, that has no entry yet */
    uint32_t total = 0;
    for (int p = 0; p < KS_EXT_COUNT; p++)
        total += prof->plugins.point[p].nenabled;
    const char **names = calloc(total ? total : 1, sizeof(*names));
    if (!names)
        return -ENOMEM;
    for (int p = 0; p < KS_EXT_COUNT; p++) {
        for (uint32_t i = 0; i < prof->plugins.point[p].nenabled; i++)
            names[nnames++] = prof->plugins.point[p].enabled[i].name;
    }
    qsort(names, nnames, sizeof(*names), cmp_name);
    rc = 0;
    for (uint32_t i = 0; i < nnames && rc == 0; i++) {
        const struct ks_plugin *plugin = ks_registry_find(names[i]);
        if ((i > 0 && strcmp(names[i], names[i - 1]) == 0) || !plugin || !plugin->args_parse ||
            configured(prof, names[i]))
            continue;
        struct ks_plugin_config *pc = &prof->plugin_config[prof->nplugin_config];
        pc->name = plugin->name;
        pc->plugin = plugin;
        pc->defaulted = true;
        prof->nplugin_config++;
        rc = parse_args(l, pi, prof->nplugin_config - 1, NULL);
    }
    free(names);
    return rc;
}
