/*
 * config_validate.c - validation of a defaulted KubeSchedulerConfiguration.
 *
 * Mirrors ValidateKubeSchedulerConfiguration of pkg/scheduler/apis/config/validation/
 * validation.go (with component-base's client connection and leader election checks it
 * calls) and the cross-profile check of pkg/scheduler/profile/profile.go (every profile
 * runs the same queue sort plugin). Checks run in upstream's order and the first failure
 * is reported; messages repeat upstream's after the field path. Plugin args are validated
 * by each plugin's .args_parse, called from config_defaults.c.
 *
 * Plugins removed from the API are rejected per version as upstream's
 * invalidPluginsByVersion does: a list per version, oldest first, where a configuration
 * of version V checks the lists up to and including V's.
 */
#include "config_internal.h"

#include "ksched/internal/config_decode.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char *const removed_v1beta2[] = {
    "NodeLabel",
    "ServiceAffinity",
    "NodePreferAvoidPods",
    "NodeResourcesLeastAllocated",
    "NodeResourcesMostAllocated",
    "RequestedToCapacityRatio",
    NULL,
};
static const char *const removed_v1beta3[] = {NULL};
static const char *const removed_v1[] = {
    "SelectorSpread", "AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits", NULL,
};
static const char *const *const removed_by_version[KS_CONFIG_VERSION_COUNT] = {
    [KS_CONFIG_V1BETA2] = removed_v1beta2,
    [KS_CONFIG_V1BETA3] = removed_v1beta3,
    [KS_CONFIG_V1] = removed_v1,
};

int ks__config_check_invalid_name(struct ks__cfg_load *l, const char *name, int line, const char *field)
{
    enum ks_config_version cur = l->cfg->version;

    for (int v = 0; v < KS_CONFIG_VERSION_COUNT; v++) {
        for (const char *const *p = removed_by_version[v]; *p; p++) {
            if (strcmp(*p, name) == 0)
                return ks__cfg_fail(l, line, field,
                                    "Invalid value: \"%s\": was invalid in version \"%s\" "
                                    "(KubeSchedulerConfiguration is version \"%s\")",
                                    name, ks_config_version_name((enum ks_config_version)v),
                                    ks_config_version_name(cur));
        }
        if ((enum ks_config_version)v == cur)
            break;
    }
    return 0;
}

/* Line of @field inside the top-level map @block, else of the block, else of the document. */
static int block_line(const struct ks__cfg_load *l, const char *block, const char *field)
{
    const struct ks_yaml_node *b = ks_yaml_get(l->doc, block);
    const struct ks_yaml_node *f = b ? ks_yaml_get(b, field) : NULL;
    return ks__cfg_line(l, f ? f : b);
}

static int validate_components(struct ks__cfg_load *l)
{
    const struct ks_leader_election *le = &l->cfg->leader_election;
    char dur[40];

    if (l->cfg->client_connection.burst < 0)
        return ks__cfg_fail(l, block_line(l, "clientConnection", "burst"), "clientConnection.burst",
                            "Invalid value: %d: must be non-negative", l->cfg->client_connection.burst);
    if (!le->leader_elect)
        return 0;
    const struct {
        const char *field;
        int64_t ns;
    } durations[] = {
        {"leaseDuration", le->lease_duration_ns},
        {"renewDeadline", le->renew_deadline_ns},
        {"retryPeriod", le->retry_period_ns},
    };
    for (size_t i = 0; i < sizeof(durations) / sizeof(durations[0]); i++) {
        if (durations[i].ns <= 0) {
            char field[64];
            snprintf(field, sizeof(field), "leaderElection.%s", durations[i].field);
            ks_cfg_format_duration(durations[i].ns, dur, sizeof(dur));
            return ks__cfg_fail(l, block_line(l, "leaderElection", durations[i].field), field,
                                "Invalid value: \"%s\": must be greater than zero", dur);
        }
    }
    if (le->lease_duration_ns <= le->renew_deadline_ns) {
        ks_cfg_format_duration(le->renew_deadline_ns, dur, sizeof(dur));
        return ks__cfg_fail(l, block_line(l, "leaderElection", "leaseDuration"),
                            "leaderElection.leaseDuration",
                            "Invalid value: \"%s\": LeaseDuration must be greater than RenewDeadline", dur);
    }
    if (strcmp(le->resource_lock, "leases") != 0)
        return ks__cfg_fail(l, block_line(l, "leaderElection", "resourceLock"), "leaderElection.resourceLock",
                            "Invalid value: \"%s\": resourceLock value must be \"leases\"",
                            le->resource_lock);
    return 0;
}

static bool refs_equal(const struct ks_plugin_ref *a, uint32_t na, const struct ks_plugin_ref *b, uint32_t nb,
                       bool weights)
{
    if (na != nb)
        return false;
    for (uint32_t i = 0; i < na; i++) {
        if (strcmp(a[i].name, b[i].name) != 0)
            return false;
        if (weights && (a[i].has_weight ? a[i].weight : 0) != (b[i].has_weight ? b[i].weight : 0))
            return false;
    }
    return true;
}

/* validateCommonQueueSort: the merged queueSort sets of every profile equal the first one's. */
static int validate_common_queue_sort(struct ks__cfg_load *l)
{
    const struct ks_config *cfg = l->cfg;
    const struct ks_plugin_set *canon = &cfg->profiles[0].plugins.point[KS_EXT_QUEUE_SORT];
    char path[KS_ERROR_FIELD_MAX];

    if (canon->nenabled > 1) {
        const struct ks_plugin_ref *r = &canon->enabled[1];
        return ks__cfg_fail(l, r->line ? r->line : ks__cfg_line(l, l->src[0].node),
                            "profiles[0].plugins.queueSort.enabled",
                            "Invalid value: %u: only one queue sort plugin can be enabled", canon->nenabled);
    }
    for (uint32_t i = 1; i < cfg->nprofiles; i++) {
        const struct ks_plugin_set *cur = &cfg->profiles[i].plugins.point[KS_EXT_QUEUE_SORT];
        if (refs_equal(canon->enabled, canon->nenabled, cur->enabled, cur->nenabled, true) &&
            refs_equal(canon->disabled, canon->ndisabled, cur->disabled, cur->ndisabled, false))
            continue;
        const struct ks__profile_src *src = &l->src[i];
        const struct ks_yaml_node *n = src->plugins ? ks_yaml_get(src->plugins, "queueSort") : NULL;
        snprintf(path, sizeof(path), "profiles[%u].plugins.queueSort", i);
        return ks__cfg_fail(l, ks__cfg_line(l, n ? n : src->node), path, "must be the same for all profiles");
    }
    return 0;
}

static int validate_profile(struct ks__cfg_load *l, uint32_t i)
{
    const struct ks_profile *prof = &l->cfg->profiles[i];
    const struct ks__profile_src *src = &l->src[i];
    char path[KS_ERROR_FIELD_MAX];
    int rc;

    if (!prof->scheduler_name || !*prof->scheduler_name) {
        snprintf(path, sizeof(path), "profiles[%u].schedulerName", i);
        return ks__cfg_fail(l, ks__cfg_line(l, src->name ? src->name : src->node), path, "Required value");
    }
    if (prof->has_percentage &&
        (prof->percentage_of_nodes_to_score < 0 || prof->percentage_of_nodes_to_score > 100)) {
        snprintf(path, sizeof(path), "profiles[%u].percentageOfNodesToScore", i);
        return ks__cfg_fail(l, ks__cfg_line(l, src->percentage), path,
                            "Invalid value: %d: not in valid range [0-100]",
                            prof->percentage_of_nodes_to_score);
    }
    for (int p = 0; p < KS_EXT_COUNT; p++) {
        const struct ks_plugin_set *set = &prof->plugins.point[p];
        for (uint32_t j = 0; j < set->nenabled; j++) {
            const struct ks_plugin_ref *r = &set->enabled[j];
            if (r->index < 0)
                continue;
            snprintf(path, sizeof(path), "profiles[%u].plugins.%s.enabled[%d]", i, ks_ext_point_name(p),
                     r->index);
            if ((rc = ks__config_check_invalid_name(l, r->name, r->line, path)))
                return rc;
        }
    }
    for (uint32_t k = 0; k < i; k++) {
        if (strcmp(l->cfg->profiles[k].scheduler_name, prof->scheduler_name) == 0) {
            snprintf(path, sizeof(path), "profiles[%u].schedulerName", i);
            return ks__cfg_fail(l, ks__cfg_line(l, src->name ? src->name : src->node), path,
                                "Duplicate value: \"%s\"", prof->scheduler_name);
        }
    }
    return 0;
}

int ks__config_validate(struct ks__cfg_load *l)
{
    const struct ks_config *cfg = l->cfg;
    int rc;

    if ((rc = validate_components(l)))
        return rc;
    if (cfg->parallelism <= 0)
        return ks__cfg_fail(l, ks__cfg_line(l, l->parallelism), "parallelism",
                            "Invalid value: %d: should be an integer value greater than zero",
                            cfg->parallelism);
    for (uint32_t i = 0; i < cfg->nprofiles; i++) {
        if ((rc = validate_profile(l, i)))
            return rc;
    }
    if ((rc = validate_common_queue_sort(l)))
        return rc;
    if (cfg->percentage_of_nodes_to_score < 0 || cfg->percentage_of_nodes_to_score > 100)
        return ks__cfg_fail(l, ks__cfg_line(l, l->percentage), "percentageOfNodesToScore",
                            "Invalid value: %d: not in valid range [0-100]",
                            cfg->percentage_of_nodes_to_score);
    if (cfg->pod_initial_backoff_seconds <= 0)
        return ks__cfg_fail(l, ks__cfg_line(l, l->initial_backoff), "podInitialBackoffSeconds",
                            "Invalid value: %" PRId64 ": must be greater than 0",
                            cfg->pod_initial_backoff_seconds);
    if (cfg->pod_max_backoff_seconds < cfg->pod_initial_backoff_seconds)
        return ks__cfg_fail(
            l, ks__cfg_line(l, l->max_backoff ? l->max_backoff : l->initial_backoff), "podMaxBackoffSeconds",
            "Invalid value: %" PRId64 ": must be greater than or equal to PodInitialBackoffSeconds",
            cfg->pod_max_backoff_seconds);
    return 0;
}

int ks__config_validate_queue_sorts(struct ks__cfg_load *l)
{
    const struct ks_config *cfg = l->cfg;
    const char *first = cfg->profiles[0].resolved[KS_EXT_QUEUE_SORT].items[0].plugin->name;
    char path[KS_ERROR_FIELD_MAX];

    for (uint32_t i = 1; i < cfg->nprofiles; i++) {
        const struct ks_profile *prof = &cfg->profiles[i];
        const char *name = prof->resolved[KS_EXT_QUEUE_SORT].items[0].plugin->name;
        if (strcmp(name, first) == 0)
            continue;
        const struct ks__profile_src *src = &l->src[i];
        const struct ks_yaml_node *n = src->plugins ? ks_yaml_get(src->plugins, "queueSort") : NULL;
        if (!n && src->plugins)
            n = ks_yaml_get(src->plugins, "multiPoint");
        snprintf(path, sizeof(path), "profiles[%u].plugins", i);
        return ks__cfg_fail(l, ks__cfg_line(l, n ? n : src->node), path,
                            "different queue sort plugins for profile \"%s\": \"%s\", first: \"%s\"",
                            prof->scheduler_name, name, first);
    }
    return 0;
}
