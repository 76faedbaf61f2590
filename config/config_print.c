/*
 * config_print.c - the effective configuration as YAML (`ksched config --print`).
 *
 * Writes what kube-scheduler's defaulted versioned object holds, fields in the order of
 * staging/src/k8s.io/kube-scheduler/config/{v1,v1beta3,v1beta2}/types.go: TypeMeta,
 * parallelism, leaderElection, clientConnection, (v1beta2's bind addresses), the
 * debugging switches, percentageOfNodesToScore, backoffs, profiles (schedulerName,
 * percentageOfNodesToScore, plugins per extension point, pluginConfig with each plugin's
 * defaulted args and their TypeMeta) and delayCacheUntilActive when set. Optional fields
 * that are unset and extension points with no plugins are left out; a weight appears
 * only where one was written or defaulted, as the versioned Plugin's *int32 does.
 */
#include "ksched/internal/config.h"

#include "ksched/internal/config_decode.h"

#include <stdio.h>

static void print_refs(struct ks_yaml_out *o, const char *key, const struct ks_plugin_ref *refs, uint32_t n,
                       bool weights)
{
    if (n == 0)
        return;
    ks_yaml_key_seq(o, key);
    for (uint32_t i = 0; i < n; i++) {
        ks_yaml_item_map(o);
        ks_yaml_key_str(o, "name", refs[i].name);
        if (weights && refs[i].has_weight)
            ks_yaml_key_int(o, "weight", refs[i].weight);
        ks_yaml_end(o);
    }
    ks_yaml_end(o);
}

static void print_plugins(struct ks_yaml_out *o, const struct ks_plugins *plugins)
{
    ks_yaml_key_map(o, "plugins");
    for (int p = 0; p < KS_EXT_COUNT; p++) {
        const struct ks_plugin_set *set = &plugins->point[p];
        if (set->nenabled == 0 && set->ndisabled == 0)
            continue;
        ks_yaml_key_map(o, ks_ext_point_name((enum ks_ext_point)p));
        print_refs(o, "enabled", set->enabled, set->nenabled, true);
        print_refs(o, "disabled", set->disabled, set->ndisabled, false);
        ks_yaml_end(o);
    }
    ks_yaml_end(o);
}

static void print_plugin_config(struct ks_yaml_out *o, const struct ks_config *cfg,
                                const struct ks_profile *prof)
{
    char kind[128];

    if (prof->nplugin_config == 0)
        return;
    ks_yaml_key_seq(o, "pluginConfig");
    for (uint32_t i = 0; i < prof->nplugin_config; i++) {
        const struct ks_plugin_config *pc = &prof->plugin_config[i];
        ks_yaml_item_map(o);
        ks_yaml_key_str(o, "name", pc->name);
        if (pc->args && pc->plugin->args_print) {
            snprintf(kind, sizeof(kind), "%sArgs", pc->name);
            ks_yaml_key_map(o, "args");
            ks_yaml_key_str(o, "apiVersion", ks_config_version_name(cfg->version));
            ks_yaml_key_str(o, "kind", kind);
            pc->plugin->args_print(pc->args, o);
            ks_yaml_end(o);
        }
        ks_yaml_end(o);
    }
    ks_yaml_end(o);
}

static void print_components(struct ks_yaml_out *o, const struct ks_config *cfg)
{
    const struct ks_leader_election *le = &cfg->leader_election;
    const struct ks_client_connection *cc = &cfg->client_connection;
    char dur[40];

    ks_yaml_key_map(o, "leaderElection");
    ks_yaml_key_bool(o, "leaderElect", le->leader_elect);
    ks_cfg_format_duration(le->lease_duration_ns, dur, sizeof(dur));
    ks_yaml_key_str(o, "leaseDuration", dur);
    ks_cfg_format_duration(le->renew_deadline_ns, dur, sizeof(dur));
    ks_yaml_key_str(o, "renewDeadline", dur);
    ks_cfg_format_duration(le->retry_period_ns, dur, sizeof(dur));
    ks_yaml_key_str(o, "retryPeriod", dur);
    ks_yaml_key_str(o, "resourceLock", le->resource_lock);
    ks_yaml_key_str(o, "resourceName", le->resource_name);
    ks_yaml_key_str(o, "resourceNamespace", le->resource_namespace);
    ks_yaml_end(o);

    ks_yaml_key_map(o, "clientConnection");
    ks_yaml_key_str(o, "kubeconfig", cc->kubeconfig);
    ks_yaml_key_str(o, "acceptContentTypes", cc->accept_content_types);
    ks_yaml_key_str(o, "contentType", cc->content_type);
    ks_yaml_key_float(o, "qps", cc->qps);
    ks_yaml_key_int(o, "burst", cc->burst);
    ks_yaml_end(o);
}

void ks_config_print(const struct ks_config *cfg, struct ks_yaml_out *o)
{
    ks_yaml_key_str(o, "apiVersion", ks_config_version_name(cfg->version));
    ks_yaml_key_str(o, "kind", KS_CONFIG_KIND);
    ks_yaml_key_int(o, "parallelism", cfg->parallelism);
    print_components(o, cfg);
    if (cfg->version == KS_CONFIG_V1BETA2) {
        ks_yaml_key_str(o, "healthzBindAddress", cfg->healthz_bind_address);
        ks_yaml_key_str(o, "metricsBindAddress", cfg->metrics_bind_address);
    }
    ks_yaml_key_bool(o, "enableProfiling", cfg->enable_profiling);
    ks_yaml_key_bool(o, "enableContentionProfiling", cfg->enable_contention_profiling);
    ks_yaml_key_int(o, "percentageOfNodesToScore", cfg->percentage_of_nodes_to_score);
    ks_yaml_key_int(o, "podInitialBackoffSeconds", cfg->pod_initial_backoff_seconds);
    ks_yaml_key_int(o, "podMaxBackoffSeconds", cfg->pod_max_backoff_seconds);
    ks_yaml_key_seq(o, "profiles");
    for (uint32_t i = 0; i < cfg->nprofiles; i++) {
        const struct ks_profile *prof = &cfg->profiles[i];
        ks_yaml_item_map(o);
        ks_yaml_key_str(o, "schedulerName", prof->scheduler_name);
        if (prof->has_percentage)
            ks_yaml_key_int(o, "percentageOfNodesToScore", prof->percentage_of_nodes_to_score);
        print_plugins(o, &prof->plugins);
        print_plugin_config(o, cfg, prof);
        ks_yaml_end(o);
    }
    ks_yaml_end(o);
    if (cfg->delay_cache_until_active)
        ks_yaml_key_bool(o, "delayCacheUntilActive", true);
}
