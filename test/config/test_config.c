/*
 * test_config.c - KubeSchedulerConfiguration defaults per version, plugin merging (the
 * cases of upstream's TestMergePlugins and the MultiPoint expansion of NewFramework),
 * resolved extension points, printing and round trips.
 */
#include "config_helpers.h"

#include "../../config/config_internal.h"
#include "ksched/plugin_args.h"
#include "ksched/registry.h"

#include <criterion/criterion.h>
#include <unistd.h>

/* ---- defaults ------------------------------------------------------------------------------- */

static void assert_v1_expanded(const struct ks_profile *prof)
{
    assert_point(prof, KS_EXT_PRE_ENQUEUE, "SchedulingGates DynamicResources DefaultPreemption");
    assert_point(prof, KS_EXT_QUEUE_SORT, "PrioritySort");
    assert_point(prof, KS_EXT_PRE_FILTER,
                 "NodeAffinity NodePorts NodeResourcesFit VolumeRestrictions NodeVolumeLimits VolumeBinding "
                 "VolumeZone PodTopologySpread InterPodAffinity DynamicResources");
    assert_point(
        prof, KS_EXT_FILTER,
        "NodeUnschedulable NodeName TaintToleration NodeAffinity NodePorts NodeResourcesFit "
        "VolumeRestrictions NodeVolumeLimits VolumeBinding VolumeZone PodTopologySpread InterPodAffinity "
        "DynamicResources");
    assert_point(prof, KS_EXT_POST_FILTER, "DynamicResources DefaultPreemption");
    assert_point(
        prof, KS_EXT_PRE_SCORE,
        "TaintToleration NodeAffinity NodeResourcesFit VolumeBinding PodTopologySpread InterPodAffinity "
        "NodeResourcesBalancedAllocation");
    assert_point(prof, KS_EXT_SCORE,
                 "TaintToleration:3 NodeAffinity:2 NodeResourcesFit:1 VolumeBinding:1 PodTopologySpread:2 "
                 "InterPodAffinity:2 DynamicResources:1 NodeResourcesBalancedAllocation:1 ImageLocality:1");
    assert_point(prof, KS_EXT_RESERVE, "VolumeBinding DynamicResources");
    assert_point(prof, KS_EXT_PERMIT, "");
    assert_point(prof, KS_EXT_PRE_BIND, "VolumeBinding DynamicResources");
    assert_point(prof, KS_EXT_BIND, "DefaultBinder");
    assert_point(prof, KS_EXT_POST_BIND, "");
}

/* The defaulted pluginConfig of a profile: in name order; DynamicResources' only in v1. */
static void assert_default_args(const struct ks_profile *prof, bool v1)
{
    static const char *const all[] = {
        "DefaultPreemption",
        "DynamicResources",
        "InterPodAffinity",
        "NodeAffinity",
        "NodeResourcesBalancedAllocation",
        "NodeResourcesFit",
        "PodTopologySpread",
        "VolumeBinding",
    };
    uint32_t n = 0;
    for (uint32_t i = 0; i < 8; i++) {
        if (!v1 && strcmp(all[i], "DynamicResources") == 0)
            continue;
        cr_assert_lt(n, prof->nplugin_config, "pluginConfig lacks %s", all[i]);
        cr_assert_str_eq(prof->plugin_config[n].name, all[i]);
        cr_assert(prof->plugin_config[n].defaulted);
        cr_assert_not_null(prof->plugin_config[n].args);
        n++;
    }
    cr_assert_eq(prof->nplugin_config, n, "got %u pluginConfig entries, want %u", prof->nplugin_config, n);
    const struct ks_defaultpreemption_args *dp = ks_profile_args(prof, "DefaultPreemption");
    cr_assert_eq(dp->min_candidate_nodes_percentage, 10);
    cr_assert_eq(dp->min_candidate_nodes_absolute, 100);
    const struct ks_interpodaffinity_args *ipa = ks_profile_args(prof, "InterPodAffinity");
    cr_assert_eq(ipa->hard_pod_affinity_weight, 1);
    cr_assert(!ipa->ignore_preferred_terms_of_existing_pods);
    const struct ks_nodeaffinity_args *na = ks_profile_args(prof, "NodeAffinity");
    cr_assert_null(na->added_affinity);
    const struct ks_noderesourcesfit_args *fit = ks_profile_args(prof, "NodeResourcesFit");
    cr_assert_eq(fit->strategy, KS_SCORING_LEAST_ALLOCATED);
    cr_assert_eq(fit->nresources, 2);
    cr_assert_str_eq(ks_intern_str(fit->resources[0].name), "cpu");
    cr_assert_eq(fit->resources[0].weight, 1);
    cr_assert_str_eq(ks_intern_str(fit->resources[1].name), "memory");
    cr_assert_eq(fit->resources[1].weight, 1);
    cr_assert_eq(fit->nignored_resources, 0);
    const struct ks_noderesourcesbalancedallocation_args *ba =
        ks_profile_args(prof, "NodeResourcesBalancedAllocation");
    cr_assert_eq(ba->nresources, 2);
    const struct ks_podtopologyspread_args *pts = ks_profile_args(prof, "PodTopologySpread");
    cr_assert_eq(pts->defaulting, KS_SPREAD_DEFAULTING_SYSTEM);
    cr_assert_eq(pts->nconstraints, 0);
    const struct ks_volumebinding_args *vb = ks_profile_args(prof, "VolumeBinding");
    cr_assert_eq(vb->bind_timeout_seconds, 600);
    cr_assert_eq(vb->nshape, 0);
}

Test(config_defaults, v1_without_a_file_is_upstream_default_profile)
{
    struct ks_config *cfg = NULL;
    cr_assert_eq(ks_config_load_default(&cfg), 0);
    cr_assert_eq(cfg->version, KS_CONFIG_V1);
    cr_assert_eq(cfg->parallelism, 16);
    cr_assert_eq(cfg->percentage_of_nodes_to_score, 0);
    cr_assert_eq(cfg->pod_initial_backoff_seconds, 1);
    cr_assert_eq(cfg->pod_max_backoff_seconds, 10);
    cr_assert(cfg->enable_profiling && cfg->enable_contention_profiling);
    cr_assert(cfg->leader_election.leader_elect);
    cr_assert_eq(cfg->leader_election.lease_duration_ns, 15000000000LL);
    cr_assert_str_eq(cfg->leader_election.resource_lock, "leases");
    cr_assert_eq(cfg->client_connection.burst, 100);
    cr_assert_null(cfg->healthz_bind_address);
    cr_assert_eq(cfg->nprofiles, 1);
    const struct ks_profile *prof = ks_config_find_profile(cfg, "default-scheduler");
    cr_assert_not_null(prof);
    cr_assert(!prof->has_percentage);
    assert_set(
        &prof->plugins.point[KS_EXT_MULTI_POINT],
        "SchedulingGates PrioritySort NodeUnschedulable NodeName TaintToleration:3 NodeAffinity:2 NodePorts "
        "NodeResourcesFit:1 VolumeRestrictions NodeVolumeLimits VolumeBinding VolumeZone PodTopologySpread:2 "
        "InterPodAffinity:2 DynamicResources DefaultPreemption NodeResourcesBalancedAllocation:1 "
        "ImageLocality:1 "
        "DefaultBinder");
    for (int p = 0; p < KS_EXT_MULTI_POINT; p++)
        assert_set(&prof->plugins.point[p], "");
    assert_v1_expanded(prof);
    assert_default_args(prof, true);
    ks_config_destroy(cfg);
}

Test(config_defaults, v1_file_with_only_type_meta_equals_the_default)
{
    struct ks_config *def = NULL, *cfg = cfg_load_ok(V1_HEADER);
    cr_assert_eq(ks_config_load_default(&def), 0);
    char *a = cfg_print(def), *b = cfg_print(cfg);
    cr_assert_str_eq(a, b);
    free(a);
    free(b);
    assert_v1_expanded(&cfg->profiles[0]);
    ks_config_destroy(def);
    ks_config_destroy(cfg);
}

Test(config_defaults, v1beta3_uses_multipoint_with_in_tree_volume_limits)
{
    struct ks_config *cfg = cfg_load_ok(V1BETA3_HEADER);
    const struct ks_profile *prof = &cfg->profiles[0];
    cr_assert_eq(cfg->version, KS_CONFIG_V1BETA3);
    cr_assert_str_eq(prof->scheduler_name, "default-scheduler");
    assert_set(
        &prof->plugins.point[KS_EXT_MULTI_POINT],
        "PrioritySort NodeUnschedulable NodeName TaintToleration:3 NodeAffinity:2 NodePorts "
        "NodeResourcesFit:1 "
        "VolumeRestrictions EBSLimits GCEPDLimits NodeVolumeLimits AzureDiskLimits VolumeBinding VolumeZone "
        "PodTopologySpread:2 InterPodAffinity:2 DefaultPreemption NodeResourcesBalancedAllocation:1 "
        "ImageLocality:1 DefaultBinder");
    /* DefaultPreemption implements PreEnqueue (asynchronous preemption): multiPoint expands it there */
    assert_point(prof, KS_EXT_PRE_ENQUEUE, "DefaultPreemption");
    assert_point(
        prof, KS_EXT_FILTER,
        "NodeUnschedulable NodeName TaintToleration NodeAffinity NodePorts NodeResourcesFit "
        "VolumeRestrictions EBSLimits GCEPDLimits NodeVolumeLimits AzureDiskLimits VolumeBinding VolumeZone "
        "PodTopologySpread InterPodAffinity");
    assert_point(prof, KS_EXT_SCORE,
                 "TaintToleration:3 NodeAffinity:2 NodeResourcesFit:1 VolumeBinding:1 PodTopologySpread:2 "
                 "InterPodAffinity:2 NodeResourcesBalancedAllocation:1 ImageLocality:1");
    assert_default_args(prof, false);
    ks_config_destroy(cfg);
}

Test(config_defaults, v1beta2_uses_the_1_22_per_point_lists)
{
    struct ks_config *cfg = cfg_load_ok(V1BETA2_HEADER);
    const struct ks_profile *prof = &cfg->profiles[0];
    cr_assert_eq(cfg->version, KS_CONFIG_V1BETA2);
    cr_assert_str_eq(cfg->healthz_bind_address, "0.0.0.0:10251");
    cr_assert_str_eq(cfg->metrics_bind_address, "0.0.0.0:10251");
    assert_set(&prof->plugins.point[KS_EXT_MULTI_POINT], "");
    assert_set(&prof->plugins.point[KS_EXT_QUEUE_SORT], "PrioritySort");
    assert_set(
        &prof->plugins.point[KS_EXT_PRE_FILTER],
        "NodeResourcesFit NodePorts VolumeRestrictions PodTopologySpread InterPodAffinity VolumeBinding "
        "NodeAffinity");
    assert_set(
        &prof->plugins.point[KS_EXT_FILTER],
        "NodeUnschedulable NodeName TaintToleration NodeAffinity NodePorts NodeResourcesFit "
        "VolumeRestrictions "
        "EBSLimits GCEPDLimits NodeVolumeLimits AzureDiskLimits VolumeBinding VolumeZone PodTopologySpread "
        "InterPodAffinity");
    assert_set(&prof->plugins.point[KS_EXT_POST_FILTER], "DefaultPreemption");
    assert_set(&prof->plugins.point[KS_EXT_PRE_SCORE],
               "InterPodAffinity PodTopologySpread TaintToleration NodeAffinity");
    assert_set(&prof->plugins.point[KS_EXT_SCORE],
               "NodeResourcesBalancedAllocation:1 ImageLocality:1 InterPodAffinity:1 NodeResourcesFit:1 "
               "NodeAffinity:1 PodTopologySpread:2 TaintToleration:1");
    assert_set(&prof->plugins.point[KS_EXT_RESERVE], "VolumeBinding");
    assert_set(&prof->plugins.point[KS_EXT_PRE_BIND], "VolumeBinding");
    assert_set(&prof->plugins.point[KS_EXT_BIND], "DefaultBinder");
    assert_point(prof, KS_EXT_SCORE,
                 "NodeResourcesBalancedAllocation:1 ImageLocality:1 InterPodAffinity:1 NodeResourcesFit:1 "
                 "NodeAffinity:1 PodTopologySpread:2 TaintToleration:1");
    assert_default_args(prof, false);
    ks_config_destroy(cfg);
}

Test(config_defaults, scalars_given_are_kept)
{
    struct ks_config *cfg = cfg_load_ok(V1_HEADER "parallelism: 8\n"
                                                  "percentageOfNodesToScore: 35\n"
                                                  "podInitialBackoffSeconds: 2\n"
                                                  "podMaxBackoffSeconds: 2\n"
                                                  "enableProfiling: false\n"
                                                  "delayCacheUntilActive: true\n"
                                                  "leaderElection:\n"
                                                  "  leaderElect: false\n"
                                                  "  leaseDuration: 1m30s\n"
                                                  "  resourceName: mine\n"
                                                  "clientConnection:\n"
                                                  "  kubeconfig: /etc/kubeconfig\n"
                                                  "  qps: 12.5\n"
                                                  "profiles:\n"
                                                  "- schedulerName: fast\n"
                                                  "  percentageOfNodesToScore: 20\n");
    cr_assert_eq(cfg->parallelism, 8);
    cr_assert_eq(cfg->percentage_of_nodes_to_score, 35);
    cr_assert_eq(cfg->pod_initial_backoff_seconds, 2);
    cr_assert_eq(cfg->pod_max_backoff_seconds, 2);
    cr_assert(!cfg->enable_profiling);
    cr_assert(!cfg->enable_contention_profiling, "contention profiling defaults on only with profiling");
    cr_assert(cfg->delay_cache_until_active);
    cr_assert(!cfg->leader_election.leader_elect);
    cr_assert_eq(cfg->leader_election.lease_duration_ns, 90000000000LL);
    cr_assert_eq(cfg->leader_election.renew_deadline_ns, 10000000000LL);
    cr_assert_str_eq(cfg->leader_election.resource_name, "mine");
    cr_assert_str_eq(cfg->client_connection.kubeconfig, "/etc/kubeconfig");
    cr_assert_float_eq(cfg->client_connection.qps, 12.5, 1e-6);
    cr_assert_str_eq(cfg->profiles[0].scheduler_name, "fast");
    cr_assert(cfg->profiles[0].has_percentage);
    cr_assert_eq(cfg->profiles[0].percentage_of_nodes_to_score, 20);
    cr_assert_null(ks_config_find_profile(cfg, "default-scheduler"));
    ks_config_destroy(cfg);
}

Test(config_defaults, several_profiles_keep_their_names_and_get_defaults_each)
{
    struct ks_config *cfg = cfg_load_ok(V1_HEADER "profiles:\n"
                                                  "- schedulerName: a\n"
                                                  "- schedulerName: b\n"
                                                  "  pluginConfig:\n"
                                                  "  - name: InterPodAffinity\n"
                                                  "    args:\n"
                                                  "      hardPodAffinityWeight: 5\n");
    cr_assert_eq(cfg->nprofiles, 2);
    assert_default_args(&cfg->profiles[0], true);
    const struct ks_profile *b = ks_config_find_profile(cfg, "b");
    cr_assert_eq(b->nplugin_config, 8);
    cr_assert_str_eq(b->plugin_config[0].name, "InterPodAffinity");
    cr_assert(!b->plugin_config[0].defaulted);
    cr_assert_str_eq(b->plugin_config[1].name, "DefaultPreemption");
    cr_assert_eq(((const struct ks_interpodaffinity_args *)ks_profile_args(b, "InterPodAffinity"))
                     ->hard_pod_affinity_weight,
                 5);
    const struct ks_resolved_point *score = ks_profile_point(b, KS_EXT_SCORE);
    for (uint32_t i = 0; i < score->n; i++) {
        if (strcmp(score->items[i].plugin->name, "InterPodAffinity") == 0)
            cr_assert_eq(score->items[i].args, ks_profile_args(b, "InterPodAffinity"));
    }
    ks_config_destroy(cfg);
}

Test(config_defaults, registry_knows_every_in_tree_plugin)
{
    static const char *const names[] = {
        "SchedulingGates",    "PrioritySort",     "NodeUnschedulable", "NodeName",
        "TaintToleration",    "NodeAffinity",     "NodePorts",         "NodeResourcesFit",
        "VolumeRestrictions", "NodeVolumeLimits", "EBSLimits",         "GCEPDLimits",
        "AzureDiskLimits",    "CinderLimits",     "VolumeBinding",     "VolumeZone",
        "PodTopologySpread",  "InterPodAffinity", "DefaultPreemption", "NodeResourcesBalancedAllocation",
        "ImageLocality",      "DefaultBinder",    "SelectorSpread",    "DynamicResources",
        "GangScheduling",
    };
    size_t n = 0;
    for (const struct ks_plugin *const *p = ks_registry; *p; p++, n++) {
        cr_assert_eq((*p)->abi_version, KS_PLUGIN_ABI_VERSION);
        cr_assert_neq(ks_registry_points(*p), 0u, "%s implements no point", (*p)->name);
    }
    cr_assert_eq(n, sizeof(names) / sizeof(names[0]));
    for (size_t i = 0; i < n; i++) {
        const struct ks_plugin *p = ks_registry_find(names[i]);
        cr_assert_not_null(p, "%s missing", names[i]);
        cr_assert_str_eq(p->name, names[i]);
    }
    cr_assert_null(ks_registry_find("NodePreferAvoidPods"));
    cr_assert_null(ks_registry_find("nodename"));
}

/* ---- mergePluginSet (upstream's TestMergePlugins cases) --------------------------------------- */

/* Parse "A B:2 | -C" into a set (names interned so they outlive the call). */
static struct ks_plugin_set mkset(struct ks_arena *a, const char *spec)
{
    struct ks_plugin_set s = {0};
    char buf[512], *save = NULL;
    s.enabled = ks_arena_calloc(a, 16, sizeof(*s.enabled));
    s.disabled = ks_arena_calloc(a, 16, sizeof(*s.disabled));
    snprintf(buf, sizeof(buf), "%s", spec);
    for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        if (strcmp(tok, "|") == 0)
            continue;
        bool dis = tok[0] == '-';
        struct ks_plugin_ref *r = dis ? &s.disabled[s.ndisabled++] : &s.enabled[s.nenabled++];
        char *colon = strchr(tok, ':');
        if (colon) {
            *colon = '\0';
            r->weight = atoi(colon + 1);
            r->has_weight = true;
        }
        r->name = ks_intern_str(ks_intern(tok + dis));
        r->index = -1;
    }
    return s;
}

static void check_merge(const char *def, const char *custom, const char *want)
{
    struct ks_arena a = KS_ARENA_INIT;
    struct ks_plugin_set d = mkset(&a, def), c = mkset(&a, custom), out;
    cr_assert_eq(ks__config_merge_set(&a, &d, &c, true, &out), 0);
    assert_set(&out, want);
    ks_arena_destroy(&a);
}

Test(config_merge, disable_default_plugin)
{
    check_merge("DefaultPlugin1 DefaultPlugin2", "| -DefaultPlugin1", "DefaultPlugin2 | -DefaultPlugin1");
}

Test(config_merge, append_custom_plugin)
{
    check_merge("DefaultPlugin1 DefaultPlugin2", "CustomPlugin",
                "DefaultPlugin1 DefaultPlugin2 CustomPlugin");
}

Test(config_merge, insert_after_default_plugins)
{
    check_merge("DefaultPlugin1 DefaultPlugin2", "CustomPlugin DefaultPlugin2 | -DefaultPlugin2",
                "DefaultPlugin1 CustomPlugin DefaultPlugin2 | -DefaultPlugin2");
}

Test(config_merge, insert_before_all_plugins)
{
    check_merge("DefaultPlugin1 DefaultPlugin2", "CustomPlugin DefaultPlugin1 DefaultPlugin2 | -*",
                "CustomPlugin DefaultPlugin1 DefaultPlugin2 | -*");
}

Test(config_merge, reorder_default_plugins)
{
    check_merge("DefaultPlugin1 DefaultPlugin2", "DefaultPlugin2 DefaultPlugin1 | -*",
                "DefaultPlugin2 DefaultPlugin1 | -*");
}

Test(config_merge, custom_plugin_overrides_default_weight_in_place)
{
    check_merge("Plugin1 Plugin2 Plugin3", "Plugin1:2 Plugin3:3", "Plugin1:2 Plugin2 Plugin3:3");
}

Test(config_merge, order_preserved_after_override)
{
    check_merge("Plugin1 Plugin2 Plugin3", "Plugin2:2 Plugin1:1", "Plugin1:1 Plugin2:2 Plugin3");
}

Test(config_merge, repeated_custom_plugin_last_one_replaces_first_is_appended)
{
    check_merge("Plugin1 Plugin2 Plugin3", "Plugin1 Plugin2:2 Plugin3 Plugin2:4",
                "Plugin1 Plugin2:4 Plugin3 Plugin2:2");
}

Test(config_merge, append_and_disable_multipoint_plugins)
{
    check_merge("DefaultPlugin1 DefaultPlugin2", "CustomPlugin CustomPlugin2 | -DefaultPlugin2",
                "DefaultPlugin1 CustomPlugin CustomPlugin2 | -DefaultPlugin2");
}

Test(config_merge, disabled_plugins_of_the_default_set_are_kept)
{
    check_merge("DefaultPlugin | -DefaultPlugin2", "CustomPlugin",
                "DefaultPlugin CustomPlugin | -DefaultPlugin2");
}

Test(config_merge, only_disabled_gets_merged)
{
    check_merge("DefaultPlugin", "| -DefaultPlugin", "| -DefaultPlugin");
}

Test(config_merge, v1beta2_drops_the_disabled_list)
{
    struct ks_arena a = KS_ARENA_INIT;
    struct ks_plugin_set d = mkset(&a, "A B"), c = mkset(&a, "C | -A"), out;
    cr_assert_eq(ks__config_merge_set(&a, &d, &c, false, &out), 0);
    assert_set(&out, "B C");
    ks_arena_destroy(&a);
}

/* ---- merging and MultiPoint expansion through a whole load ------------------------------------- */

Test(config_merge, v1_score_listing_overrides_multipoint_and_moves_first)
{
    struct ks_config *cfg = cfg_load_ok(V1_HEADER "profiles:\n"
                                                  "- plugins:\n"
                                                  "    score:\n"
                                                  "      enabled:\n"
                                                  "      - name: NodeResourcesFit\n"
                                                  "        weight: 5\n");
    const struct ks_profile *prof = &cfg->profiles[0];
    assert_set(&prof->plugins.point[KS_EXT_SCORE], "NodeResourcesFit:5");
    assert_point(prof, KS_EXT_SCORE,
                 "NodeResourcesFit:5 TaintToleration:3 NodeAffinity:2 VolumeBinding:1 PodTopologySpread:2 "
                 "InterPodAffinity:2 DynamicResources:1 NodeResourcesBalancedAllocation:1 ImageLocality:1");
    assert_point(
        prof, KS_EXT_FILTER,
        "NodeUnschedulable NodeName TaintToleration NodeAffinity NodePorts NodeResourcesFit "
        "VolumeRestrictions NodeVolumeLimits VolumeBinding VolumeZone PodTopologySpread InterPodAffinity "
        "DynamicResources");
    ks_config_destroy(cfg);
}

Test(config_merge, v1_disabling_at_one_point_keeps_the_plugin_elsewhere)
{
    struct ks_config *cfg = cfg_load_ok(V1_HEADER "profiles:\n"
                                                  "- plugins:\n"
                                                  "    score:\n"
                                                  "      disabled:\n"
                                                  "      - name: TaintToleration\n"
                                                  "      - name: ImageLocality\n");
    const struct ks_profile *prof = &cfg->profiles[0];
    assert_point(prof, KS_EXT_SCORE,
                 "NodeAffinity:2 NodeResourcesFit:1 VolumeBinding:1 PodTopologySpread:2 InterPodAffinity:2 "
                 "DynamicResources:1 NodeResourcesBalancedAllocation:1");
    assert_point(
        prof, KS_EXT_PRE_SCORE,
        "TaintToleration NodeAffinity NodeResourcesFit VolumeBinding PodTopologySpread InterPodAffinity "
        "NodeResourcesBalancedAllocation");
    assert_set(&prof->plugins.point[KS_EXT_SCORE], "| -TaintToleration -ImageLocality");
    ks_config_destroy(cfg);
}

Test(config_merge, v1_star_at_a_point_skips_multipoint_there)
{
    struct ks_config *cfg = cfg_load_ok(V1_HEADER "profiles:\n"
                                                  "- plugins:\n"
                                                  "    score:\n"
                                                  "      disabled:\n"
                                                  "      - name: '*'\n"
                                                  "      enabled:\n"
                                                  "      - name: ImageLocality\n"
                                                  "        weight: 7\n");
    const struct ks_profile *prof = &cfg->profiles[0];
    assert_point(prof, KS_EXT_SCORE, "ImageLocality:7");
    assert_point(
        prof, KS_EXT_PRE_SCORE,
        "TaintToleration NodeAffinity NodeResourcesFit VolumeBinding PodTopologySpread InterPodAffinity "
        "NodeResourcesBalancedAllocation");
    ks_config_destroy(cfg);
}

Test(config_merge, v1_multipoint_star_with_own_list)
{
    struct ks_config *cfg = cfg_load_ok(V1_HEADER "profiles:\n"
                                                  "- plugins:\n"
                                                  "    multiPoint:\n"
                                                  "      disabled:\n"
                                                  "      - name: '*'\n"
                                                  "      enabled:\n"
                                                  "      - name: PrioritySort\n"
                                                  "      - name: NodeResourcesFit\n"
                                                  "        weight: 4\n"
                                                  "      - name: ImageLocality\n"
                                                  "      - name: DefaultBinder\n");
    const struct ks_profile *prof = &cfg->profiles[0];
    assert_set(&prof->plugins.point[KS_EXT_MULTI_POINT],
               "PrioritySort NodeResourcesFit:4 ImageLocality DefaultBinder | -*");
    assert_point(prof, KS_EXT_PRE_ENQUEUE, "");
    assert_point(prof, KS_EXT_FILTER, "NodeResourcesFit");
    assert_point(prof, KS_EXT_SCORE, "NodeResourcesFit:4 ImageLocality:1");
    /* only enabled plugins get default args */
    cr_assert_eq(prof->nplugin_config, 1);
    cr_assert_str_eq(prof->plugin_config[0].name, "NodeResourcesFit");
    ks_config_destroy(cfg);
}

Test(config_merge, v1_multipoint_override_of_default_keeps_its_place)
{
    struct ks_config *cfg = cfg_load_ok(V1_HEADER "profiles:\n"
                                                  "- plugins:\n"
                                                  "    multiPoint:\n"
                                                  "      enabled:\n"
                                                  "      - name: ImageLocality\n"
                                                  "        weight: 9\n"
                                                  "      disabled:\n"
                                                  "      - name: SchedulingGates\n");
    const struct ks_profile *prof = &cfg->profiles[0];
    assert_point(prof, KS_EXT_PRE_ENQUEUE, "DynamicResources DefaultPreemption");
    assert_point(prof, KS_EXT_SCORE,
                 "TaintToleration:3 NodeAffinity:2 NodeResourcesFit:1 VolumeBinding:1 PodTopologySpread:2 "
                 "InterPodAffinity:2 DynamicResources:1 NodeResourcesBalancedAllocation:1 ImageLocality:9");
    ks_config_destroy(cfg);
}

Test(config_merge, v1beta3_accepts_selector_spread_in_multipoint)
{
    struct ks_config *cfg = cfg_load_ok(V1BETA3_HEADER "profiles:\n"
                                                       "- plugins:\n"
                                                       "    multiPoint:\n"
                                                       "      enabled:\n"
                                                       "      - name: SelectorSpread\n"
                                                       "        weight: 1\n");
    const struct ks_profile *prof = &cfg->profiles[0];
    assert_point(
        prof, KS_EXT_PRE_SCORE,
        "TaintToleration NodeAffinity NodeResourcesFit VolumeBinding PodTopologySpread InterPodAffinity "
        "NodeResourcesBalancedAllocation SelectorSpread");
    ks_config_destroy(cfg);
}

Test(config_merge, v1beta2_custom_score_plugin_and_disabled_default)
{
    struct ks_config *cfg = cfg_load_ok(V1BETA2_HEADER "profiles:\n"
                                                       "- plugins:\n"
                                                       "    score:\n"
                                                       "      disabled:\n"
                                                       "      - name: NodeResourcesBalancedAllocation\n"
                                                       "      enabled:\n"
                                                       "      - name: SelectorSpread\n"
                                                       "      - name: ImageLocality\n"
                                                       "        weight: 3\n"
                                                       "    preScore:\n"
                                                       "      enabled:\n"
                                                       "      - name: SelectorSpread\n");
    const struct ks_profile *prof = &cfg->profiles[0];
    assert_set(&prof->plugins.point[KS_EXT_SCORE],
               "ImageLocality:3 InterPodAffinity:1 NodeResourcesFit:1 NodeAffinity:1 PodTopologySpread:2 "
               "TaintToleration:1 SelectorSpread");
    assert_point(prof, KS_EXT_SCORE,
                 "ImageLocality:3 InterPodAffinity:1 NodeResourcesFit:1 NodeAffinity:1 PodTopologySpread:2 "
                 "TaintToleration:1 SelectorSpread:1");
    assert_point(prof, KS_EXT_PRE_SCORE,
                 "InterPodAffinity PodTopologySpread TaintToleration NodeAffinity SelectorSpread");
    /* BalancedAllocation is no longer enabled anywhere: no default args for it */
    cr_assert_null(ks_profile_args(prof, "NodeResourcesBalancedAllocation"));
    cr_assert_eq(prof->nplugin_config, 6);
    ks_config_destroy(cfg);
}

/* ---- printing ------------------------------------------------------------------------------------ */

static char *read_fixture(const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/config/%s", KS_TEST_DATA_DIR, name);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "cannot open %s", path);
    char *buf = NULL;
    size_t cap = 0;
    ssize_t n = getdelim(&buf, &cap, '\0', f);
    cr_assert(n > 0);
    fclose(f);
    return buf;
}

Test(config_print, default_v1_matches_the_fixture)
{
    struct ks_config *cfg = NULL;
    cr_assert_eq(ks_config_load_default(&cfg), 0);
    char *got = cfg_print(cfg), *want = read_fixture("default_v1.yaml");
    cr_assert_str_eq(got, want, "--- got ---\n%s", got);
    free(got);
    free(want);
    ks_config_destroy(cfg);
}

static void check_round_trip(const char *yaml)
{
    struct ks_config *a = cfg_load_ok(yaml);
    char *first = cfg_print(a);
    struct ks_config *b = cfg_load_ok(first);
    char *second = cfg_print(b);
    cr_assert_str_eq(first, second);
    free(first);
    free(second);
    ks_config_destroy(a);
    ks_config_destroy(b);
}

Test(config_print, printed_config_loads_back_to_the_same_config)
{
    check_round_trip(V1_HEADER);
    check_round_trip(V1BETA3_HEADER);
    check_round_trip(V1BETA2_HEADER "healthzBindAddress: :10259\n");
    check_round_trip(V1_HEADER "profiles:\n"
                               "- schedulerName: a\n"
                               "  percentageOfNodesToScore: 40\n"
                               "  plugins:\n"
                               "    score:\n"
                               "      disabled:\n"
                               "      - name: '*'\n"
                               "      enabled:\n"
                               "      - name: NodeResourcesFit\n"
                               "        weight: 2\n"
                               "  pluginConfig:\n"
                               "  - name: NodeResourcesFit\n"
                               "    args:\n"
                               "      ignoredResources: [example.com/foo]\n"
                               "      ignoredResourceGroups: [example.org]\n"
                               "      scoringStrategy:\n"
                               "        type: RequestedToCapacityRatio\n"
                               "        resources:\n"
                               "        - name: cpu\n"
                               "          weight: 3\n"
                               "        requestedToCapacityRatio:\n"
                               "          shape:\n"
                               "          - {utilization: 0, score: 0}\n"
                               "          - {utilization: 100, score: 10}\n"
                               "  - name: PodTopologySpread\n"
                               "    args:\n"
                               "      defaultingType: List\n"
                               "      defaultConstraints:\n"
                               "      - maxSkew: 3\n"
                               "        topologyKey: topology.kubernetes.io/zone\n"
                               "        whenUnsatisfiable: ScheduleAnyway\n"
                               "        nodeTaintsPolicy: Honor\n"
                               "        matchLabelKeys: [app]\n"
                               "  - name: NodeAffinity\n"
                               "    args:\n"
                               "      addedAffinity:\n"
                               "        requiredDuringSchedulingIgnoredDuringExecution:\n"
                               "          nodeSelectorTerms:\n"
                               "          - matchExpressions:\n"
                               "            - {key: pool, operator: In, values: [a, b]}\n"
                               "            - {key: gen, operator: Gt, values: ['3']}\n"
                               "        preferredDuringSchedulingIgnoredDuringExecution:\n"
                               "        - weight: 10\n"
                               "          preference:\n"
                               "            matchFields:\n"
                               "            - {key: metadata.name, operator: NotIn, values: [n1]}\n"
                               "- schedulerName: b\n");
}

Test(config_print, disabled_lists_and_weights_are_printed)
{
    struct ks_config *cfg = cfg_load_ok(V1_HEADER "profiles:\n"
                                                  "- plugins:\n"
                                                  "    filter:\n"
                                                  "      disabled:\n"
                                                  "      - name: NodePorts\n");
    char *got = cfg_print(cfg);
    cr_assert(
        strstr(got, "  plugins:\n    filter:\n      disabled:\n      - name: NodePorts\n    multiPoint:\n") !=
            NULL,
        "%s", got);
    free(got);
    ks_config_destroy(cfg);
}

Test(config_print, load_file_reads_a_file_and_names_it_in_errors)
{
    char dir[] = "/tmp/ksched-config-XXXXXX", path[64];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/sched.yaml", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(V1BETA3_HEADER "profiles:\n- schedulerName: custom\n  plugins:\n    score:\n      disabled:\n"
                         "      - name: '*'\n",
          f);
    fclose(f);

    struct ks_config *cfg = NULL;
    struct ks_error err = {0};
    cr_assert_eq(ks_config_load_file(path, &cfg, &err), 0, "%s", err.msg);
    const struct ks_profile *prof = ks_config_find_profile(cfg, "custom");
    cr_assert_not_null(prof);
    assert_point(prof, KS_EXT_SCORE, "");
    ks_config_destroy(cfg);

    f = fopen(path, "w");
    fputs(V1BETA3_HEADER "parallelism: 0\n", f);
    fclose(f);
    cfg = NULL;
    memset(&err, 0, sizeof(err));
    cr_assert_eq(ks_config_load_file(path, &cfg, &err), -EINVAL);
    cr_assert_str_eq(err.file, path);
    cr_assert_eq(err.line, 3);
    char msg[1400];
    ks_error_format(&err, msg, sizeof(msg));
    char want[256];
    snprintf(want, sizeof(want),
             "%s:3: parallelism: Invalid value: 0: should be an integer value greater than zero", path);
    cr_assert_str_eq(msg, want);
    unlink(path);
    rmdir(dir);
}
