/*
 * test_config_validate.c - every way a KubeSchedulerConfiguration is rejected: strict
 * decoding, apiVersion and kind, validation.go's checks, the framework's plugin checks and
 * the profile map's queue sort check. Each case checks the line, the field path and the
 * message. The V*_HEADER lines are lines 1 and 2 of every input.
 */
#include "config_helpers.h"

#include <criterion/criterion.h>

/* ---- decoding ----------------------------------------------------------------------------------- */

Test(config_validate, unknown_top_level_field)
{
    cfg_load_fails(V1_HEADER "parallelism: 4\nfoo: 1\n", 4, "foo", "unknown field \"foo\"");
}

Test(config_validate, unknown_field_in_profile_and_plugins)
{
    cfg_load_fails(V1_HEADER "profiles:\n- schedulerName: a\n  weight: 1\n", 5, "profiles[0].weight",
                   "unknown field \"weight\"");
    cfg_load_fails(V1_HEADER "profiles:\n- plugins:\n    scor: {}\n", 5, "profiles[0].plugins.scor",
                   "unknown field \"scor\"");
    cfg_load_fails(V1_HEADER "profiles:\n- plugins:\n    score:\n      enable: []\n", 6,
                   "profiles[0].plugins.score.enable", "unknown field \"enable\"");
    cfg_load_fails(V1_HEADER
                   "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: ImageLocality\n"
                   "        wieght: 2\n",
                   8, "profiles[0].plugins.score.enabled[0].wieght", "unknown field \"wieght\"");
    cfg_load_fails(V1_HEADER "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    arg: {}\n", 6,
                   "profiles[0].pluginConfig[0].arg", "unknown field \"arg\"");
}

Test(config_validate, unknown_field_in_component_blocks)
{
    cfg_load_fails(V1_HEADER "leaderElection:\n  leaderElection: true\n", 4, "leaderElection.leaderElection",
                   "unknown field");
    cfg_load_fails(V1_HEADER "clientConnection:\n  qps: 5\n  burts: 1\n", 5, "clientConnection.burts",
                   "unknown field");
}

Test(config_validate, fields_of_other_versions_are_unknown)
{
    /* v1beta2 has no multiPoint, preEnqueue, per-profile percentage or delayCacheUntilActive */
    cfg_load_fails(V1BETA2_HEADER "profiles:\n- plugins:\n    multiPoint: {}\n", 5,
                   "profiles[0].plugins.multiPoint", "unknown field");
    cfg_load_fails(V1BETA2_HEADER "profiles:\n- percentageOfNodesToScore: 5\n", 4,
                   "profiles[0].percentageOfNodesToScore", "unknown field");
    cfg_load_fails(V1BETA2_HEADER "delayCacheUntilActive: true\n", 3, "delayCacheUntilActive",
                   "unknown field");
    /* the bind addresses left with v1beta2 */
    cfg_load_fails(V1BETA3_HEADER "healthzBindAddress: 0.0.0.0:10251\n", 3, "healthzBindAddress",
                   "unknown field");
    cfg_load_fails(V1_HEADER "metricsBindAddress: 0.0.0.0:10251\n", 3, "metricsBindAddress", "unknown field");
}

Test(config_validate, api_version_and_kind)
{
    cfg_load_fails("kind: KubeSchedulerConfiguration\n", 1, "apiVersion", "Required value");
    cfg_load_fails("apiVersion: kubescheduler.config.k8s.io/v1beta1\nkind: KubeSchedulerConfiguration\n", 1,
                   "apiVersion", "Unsupported value: \"kubescheduler.config.k8s.io/v1beta1\"");
    cfg_load_fails("apiVersion: v1\nkind: KubeSchedulerConfiguration\n", 1, "apiVersion",
                   "Unsupported value");
    cfg_load_fails("apiVersion: kubescheduler.config.k8s.io/v1\n", 1, "kind", "Required value");
    cfg_load_fails("apiVersion: kubescheduler.config.k8s.io/v1\nkind: Policy\n", 2, "kind",
                   "Unsupported value: \"Policy\": supported values: \"KubeSchedulerConfiguration\"");
    cfg_load_fails("", 1, "apiVersion", "Required value");
}

Test(config_validate, wrong_shapes)
{
    cfg_load_fails(V1_HEADER "parallelism: many\n", 3, "parallelism", "invalid integer \"many\"");
    cfg_load_fails(V1_HEADER "parallelism: \"4\"\n", 3, "parallelism", "expected an integer");
    cfg_load_fails(V1_HEADER "profiles: {}\n", 3, "profiles", "expected a list");
    cfg_load_fails(V1_HEADER "profiles:\n- plugins: []\n", 4, "profiles[0].plugins", "expected a map");
    cfg_load_fails(V1_HEADER "enableProfiling: maybe\n", 3, "enableProfiling", "expected true or false");
    cfg_load_fails(V1_HEADER "leaderElection:\n  leaseDuration: 15\n", 4, "leaderElection.leaseDuration",
                   "expected a duration string");
    cfg_load_fails(V1_HEADER "leaderElection:\n  leaseDuration: 15 seconds\n", 4,
                   "leaderElection.leaseDuration", "invalid duration");
    cfg_load_fails(V1_HEADER "clientConnection:\n  qps: fast\n", 4, "clientConnection.qps",
                   "invalid number \"fast\"");
    cfg_load_fails("- a\n- b\n", 1, "", "expected a map");
}

Test(config_validate, one_document_only)
{
    cfg_load_fails(V1_HEADER "---\n" V1_HEADER, 4, "", "expected one KubeSchedulerConfiguration document");
}

Test(config_validate, extenders_are_not_supported)
{
    cfg_load_fails(V1_HEADER "extenders:\n- urlPrefix: http://127.0.0.1:8888\n  filterVerb: filter\n", 4,
                   "extenders[0]", "not supported");
    struct ks_config *cfg = cfg_load_ok(V1_HEADER "extenders: []\n");
    ks_config_destroy(cfg);
}

/* ---- validation.go ------------------------------------------------------------------------------ */

Test(config_validate, parallelism_must_be_positive)
{
    cfg_load_fails(V1_HEADER "parallelism: 0\n", 3, "parallelism",
                   "Invalid value: 0: should be an integer value greater than zero");
    cfg_load_fails(V1_HEADER "parallelism: -3\n", 3, "parallelism", "greater than zero");
}

Test(config_validate, percentage_of_nodes_to_score_range)
{
    cfg_load_fails(V1_HEADER "percentageOfNodesToScore: 101\n", 3, "percentageOfNodesToScore",
                   "Invalid value: 101: not in valid range [0-100]");
    cfg_load_fails(V1_HEADER "percentageOfNodesToScore: -1\n", 3, "percentageOfNodesToScore",
                   "not in valid range [0-100]");
    cfg_load_fails(V1_HEADER "profiles:\n- schedulerName: a\n  percentageOfNodesToScore: 101\n", 5,
                   "profiles[0].percentageOfNodesToScore", "Invalid value: 101: not in valid range [0-100]");
    struct ks_config *cfg = cfg_load_ok(V1_HEADER "percentageOfNodesToScore: 100\n");
    ks_config_destroy(cfg);
}

Test(config_validate, backoffs)
{
    cfg_load_fails(V1_HEADER "podInitialBackoffSeconds: 0\n", 3, "podInitialBackoffSeconds",
                   "Invalid value: 0: must be greater than 0");
    cfg_load_fails(V1_HEADER "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 4\n", 4,
                   "podMaxBackoffSeconds",
                   "Invalid value: 4: must be greater than or equal to PodInitialBackoffSeconds");
    /* the defaulted maximum (10) is below the given initial backoff */
    cfg_load_fails(V1_HEADER "podInitialBackoffSeconds: 20\n", 3, "podMaxBackoffSeconds",
                   "Invalid value: 10: must be greater than or equal to PodInitialBackoffSeconds");
}

Test(config_validate, leader_election_and_client_connection)
{
    cfg_load_fails(V1_HEADER "leaderElection:\n  resourceLock: endpointsleases\n", 4,
                   "leaderElection.resourceLock",
                   "Invalid value: \"endpointsleases\": resourceLock value must be \"leases\"");
    cfg_load_fails(V1_HEADER "leaderElection:\n  leaseDuration: 5s\n", 4, "leaderElection.leaseDuration",
                   "Invalid value: \"10s\": LeaseDuration must be greater than RenewDeadline");
    cfg_load_fails(V1_HEADER "leaderElection:\n  retryPeriod: -2s\n", 4, "leaderElection.retryPeriod",
                   "Invalid value: \"-2s\": must be greater than zero");
    cfg_load_fails(V1_HEADER "clientConnection:\n  burst: -1\n", 4, "clientConnection.burst",
                   "Invalid value: -1: must be non-negative");
    /* nothing is checked when leader election is off */
    struct ks_config *cfg =
        cfg_load_ok(V1_HEADER "leaderElection:\n  leaderElect: false\n  resourceLock: configmaps\n");
    ks_config_destroy(cfg);
}

Test(config_validate, scheduler_names)
{
    cfg_load_fails(V1_HEADER "profiles:\n- schedulerName: a\n- schedulerName: b\n- schedulerName: a\n", 6,
                   "profiles[2].schedulerName", "Duplicate value: \"a\"");
    /* only a single profile gets the default name */
    cfg_load_fails(V1_HEADER "profiles:\n- schedulerName: a\n- plugins: {}\n", 5, "profiles[1].schedulerName",
                   "Required value");
    cfg_load_fails(V1_HEADER "profiles:\n- schedulerName: \"\"\n", 4, "profiles[0].schedulerName",
                   "Required value");
}

Test(config_validate, plugins_removed_from_the_version)
{
    cfg_load_fails(V1_HEADER "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: EBSLimits\n",
                   7, "profiles[0].plugins.filter.enabled[0]",
                   "Invalid value: \"EBSLimits\": was invalid in version \"kubescheduler.config.k8s.io/v1\" "
                   "(KubeSchedulerConfiguration is version \"kubescheduler.config.k8s.io/v1\")");
    cfg_load_fails(V1_HEADER
                   "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - name: SelectorSpread\n",
                   7, "profiles[0].plugins.multiPoint.enabled[0]", "was invalid in version");
    cfg_load_fails(V1_HEADER "profiles:\n- pluginConfig:\n  - name: GCEPDLimits\n", 5,
                   "profiles[0].pluginConfig[0]", "Invalid value: \"GCEPDLimits\": was invalid in version");
    /* removed in v1beta2: rejected there and in every later version */
    cfg_load_fails(
        V1BETA2_HEADER "profiles:\n- plugins:\n    score:\n      enabled:\n"
                       "      - name: NodeResourcesLeastAllocated\n",
        7, "profiles[0].plugins.score.enabled[0]",
        "was invalid in version \"kubescheduler.config.k8s.io/v1beta2\" (KubeSchedulerConfiguration is "
        "version \"kubescheduler.config.k8s.io/v1beta2\")");
    cfg_load_fails(
        V1_HEADER "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: NodePreferAvoidPods\n", 7,
        "profiles[0].plugins.score.enabled[0]",
        "was invalid in version \"kubescheduler.config.k8s.io/v1beta2\" (KubeSchedulerConfiguration is "
        "version \"kubescheduler.config.k8s.io/v1\")");
    /* still valid before v1 */
    struct ks_config *cfg = cfg_load_ok(
        V1BETA3_HEADER "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: CinderLimits\n");
    ks_config_destroy(cfg);
}

Test(config_validate, plugin_config_entries)
{
    cfg_load_fails(V1_HEADER "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n  - name: NodeAffinity\n",
                   6, "profiles[0].pluginConfig[1]", "Duplicate value: \"NodeAffinity\"");
    cfg_load_fails(V1_HEADER "profiles:\n- pluginConfig:\n  - name: FooPlugin\n", 5,
                   "profiles[0].pluginConfig[0].name", "Invalid value: \"FooPlugin\": unknown plugin");
    cfg_load_fails(V1_HEADER "profiles:\n- pluginConfig:\n  - name: ImageLocality\n    args:\n      x: 1\n",
                   7, "profiles[0].pluginConfig[0].args", "takes no args");
    /* empty args for a plugin without args are fine */
    struct ks_config *cfg =
        cfg_load_ok(V1_HEADER "profiles:\n- pluginConfig:\n  - name: ImageLocality\n    args: {}\n");
    cr_assert_null(ks_profile_args(&cfg->profiles[0], "ImageLocality"));
    ks_config_destroy(cfg);
}

Test(config_validate, common_queue_sort)
{
    /* v1beta2 lists PrioritySort at queueSort, so a different one there differs from profile 0's */
    cfg_load_fails(V1BETA2_HEADER
                   "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n    queueSort:\n"
                   "      disabled:\n      - name: PrioritySort\n",
                   8, "profiles[1].plugins.queueSort", "must be the same for all profiles");
    cfg_load_fails(V1_HEADER "profiles:\n- schedulerName: a\n  plugins:\n    queueSort:\n      enabled:\n"
                             "      - name: PrioritySort\n      - name: PrioritySort\n",
                   9, "profiles[0].plugins.queueSort.enabled",
                   "Invalid value: 2: only one queue sort plugin");
    /* the same explicit set in every profile is fine */
    struct ks_config *cfg = cfg_load_ok(V1_HEADER "profiles:\n- schedulerName: a\n- schedulerName: b\n");
    ks_config_destroy(cfg);
}

/* ---- the framework's checks -------------------------------------------------------------------- */

Test(config_validate, unknown_plugins)
{
    cfg_load_fails(V1_HEADER
                   "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: ImageLocality\n"
                   "      - name: Foo\n        weight: 2\n",
                   8, "profiles[0].plugins.score.enabled[1]", "ScorePlugin \"Foo\" does not exist");
    cfg_load_fails(V1_HEADER "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - name: Bar\n", 7,
                   "profiles[0].plugins.multiPoint.enabled[0]", "\"Bar\" does not exist");
    /* disabling an unknown name is not an error, as upstream */
    struct ks_config *cfg = cfg_load_ok(V1_HEADER "profiles:\n- plugins:\n    filter:\n      disabled:\n"
                                                  "      - name: Nope\n");
    ks_config_destroy(cfg);
}

Test(config_validate, plugin_at_a_point_it_does_not_implement)
{
    cfg_load_fails(V1_HEADER
                   "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: ImageLocality\n",
                   7, "profiles[0].plugins.filter.enabled[0]",
                   "plugin \"ImageLocality\" does not extend FilterPlugin plugin");
    cfg_load_fails(V1BETA2_HEADER
                   "profiles:\n- plugins:\n    bind:\n      enabled:\n      - name: PrioritySort\n",
                   7, "profiles[0].plugins.bind.enabled[0]", "does not extend BindPlugin plugin");
}

Test(config_validate, plugin_enabled_twice_at_a_point)
{
    /* the last listing replaces the default in place, the first is appended again */
    cfg_load_fails(V1BETA2_HEADER
                   "profiles:\n- plugins:\n    score:\n      enabled:\n"
                   "      - name: ImageLocality\n        weight: 2\n      - name: ImageLocality\n",
                   7, "profiles[0].plugins.score.enabled[0]",
                   "plugin \"ImageLocality\" already registered as \"ScorePlugin\"");
    cfg_load_fails(V1_HEADER "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: NodeName\n"
                             "      - name: NodePorts\n      - name: NodeName\n",
                   9, "profiles[0].plugins.filter.enabled[2]", "already registered as \"FilterPlugin\"");
    cfg_load_fails(V1_HEADER "profiles:\n- plugins:\n    multiPoint:\n      disabled:\n      - name: '*'\n"
                             "      enabled:\n      - name: NodeName\n      - name: PrioritySort\n"
                             "      - name: DefaultBinder\n      - name: NodeName\n",
                   12, "profiles[0].plugins.multiPoint.enabled[3]", "already registered as \"FilterPlugin\"");
}

Test(config_validate, queue_sort_and_bind_are_required)
{
    cfg_load_fails(V1_HEADER "profiles:\n- schedulerName: x\n  plugins:\n    multiPoint:\n      disabled:\n"
                             "      - name: PrioritySort\n",
                   6, "profiles[0].plugins.queueSort",
                   "only one queue sort plugin required for profile with scheduler name \"x\", but got 0");
    cfg_load_fails(V1BETA2_HEADER "profiles:\n- plugins:\n    bind:\n      disabled:\n      - name: '*'\n", 6,
                   "profiles[0].plugins.bind",
                   "at least one bind plugin is needed for profile with scheduler name "
                   "\"default-scheduler\"");
    cfg_load_fails(V1_HEADER
                   "profiles:\n- plugins:\n    queueSort:\n      enabled:\n      - name: PrioritySort\n"
                   "    multiPoint:\n      enabled:\n      - name: PrioritySort\n      disabled:\n"
                   "      - name: DefaultBinder\n",
                   5, "profiles[0].plugins.bind", "at least one bind plugin");
}

Test(config_validate, queue_sort_listed_in_one_profile_only)
{
    /* the resolved plugin is the same, but the explicit queueSort sets differ (validateCommonQueueSort) */
    cfg_load_fails(V1_HEADER
                   "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n    multiPoint:\n"
                   "      disabled:\n      - name: PrioritySort\n    queueSort:\n      enabled:\n"
                   "      - name: PrioritySort\n",
                   11, "profiles[1].plugins.queueSort", "must be the same for all profiles");
}

Test(config_validate, score_weights)
{
    cfg_load_fails(V1_HEADER
                   "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: ImageLocality\n"
                   "        weight: -1\n",
                   8, "profiles[0].plugins.score.enabled[0].weight", "Invalid value: -1");
    cfg_load_fails(V1_HEADER
                   "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - name: TaintToleration\n"
                   "        weight: -3\n",
                   8, "profiles[0].plugins.multiPoint.enabled[0].weight", "must not be negative");
    cfg_load_fails(V1_HEADER
                   "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: ImageLocality\n"
                   "        weight: 3000000000\n",
                   8, "profiles[0].plugins.score.enabled[0].weight", "invalid integer");
    /* a zero weight means 1; a large one is fine as long as the total cannot overflow */
    struct ks_config *cfg =
        cfg_load_ok(V1_HEADER "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n"
                              "      - name: ImageLocality\n        weight: 0\n"
                              "      - name: TaintToleration\n        weight: 2147483647\n");
    assert_point(
        &cfg->profiles[0], KS_EXT_SCORE,
        "TaintToleration:2147483647 NodeAffinity:2 NodeResourcesFit:1 VolumeBinding:1 PodTopologySpread:2 "
        "InterPodAffinity:2 DynamicResources:1 NodeResourcesBalancedAllocation:1 ImageLocality:1");
    ks_config_destroy(cfg);
}

Test(config_validate, errors_name_the_file)
{
    struct ks_config *cfg = NULL;
    struct ks_error err = {0};
    char msg[1400];
    cr_assert_eq(ks_config_load_file("/nonexistent/ksched.yaml", &cfg, &err) < 0, 1);
    cr_assert(err.set);
    ks_error_format(&err, msg, sizeof(msg));
    cr_assert(strstr(msg, "/nonexistent/ksched.yaml") == msg, "%s", msg);
    cr_assert_null(cfg);
}
