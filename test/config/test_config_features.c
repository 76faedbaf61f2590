/*
 * test_config_features.c - kube-scheduler's feature gates (config/features.c) and the
 * configuration defaults that follow them (config/config_defaults.c,
 * plugins/pod_topology_spread.c): with DefaultPodTopologySpread off, v1beta2 and v1beta3
 * default to SelectorSpread at PreScore and at Score with weight 1 (1.22's and 1.23's
 * applyFeatureGates, as kube-scheduler's server_test expects for
 * --feature-gates=DefaultPodTopologySpread=false), and v1beta2's PodTopologySpreadArgs
 * default to List. With the gate at its default nothing changes.
 */
#include <criterion/criterion.h>

#include "config/config_helpers.h"
#include "ksched/internal/features.h"
#include "ksched/plugin_args.h"

static void reset(void)
{
    ks_features_reset();
}

TestSuite(config_features, .init = reset, .fini = reset);

#define V1BETA2_SCORE                                                                                        \
    "NodeResourcesBalancedAllocation:1 ImageLocality:1 InterPodAffinity:1 NodeResourcesFit:1 "               \
    "NodeAffinity:1 "                                                                                        \
    "PodTopologySpread:2 TaintToleration:1"

static void set_ok(const char *spec)
{
    struct ks_error err = {0};
    cr_assert_eq(ks_features_set(spec, &err), 0, "%s: %s", spec, err.msg);
}

static void set_fails(const char *spec, const char *msg)
{
    struct ks_error err = {0};
    cr_assert_eq(ks_features_set(spec, &err), -EINVAL, "%s", spec);
    cr_assert_str_eq(err.field, "--feature-gates");
    cr_assert_str_eq(err.msg, msg);
}

Test(config_features, defaults_are_those_of_1_22)
{
    cr_expect(ks_feature_enabled(KS_FEATURE_DEFAULT_POD_TOPOLOGY_SPREAD));
    cr_expect(ks_feature_enabled(KS_FEATURE_POD_AFFINITY_NAMESPACE_SELECTOR));
    cr_expect(ks_feature_enabled(KS_FEATURE_PREFER_NOMINATED_NODE));
    cr_expect(!ks_feature_enabled(KS_FEATURE_VOLUME_CAPACITY_PRIORITY));
    cr_expect(!ks_feature_enabled(KS_FEATURE_READ_WRITE_ONCE_POD));
    cr_expect_str_eq(ks_feature_name(KS_FEATURE_DEFAULT_POD_TOPOLOGY_SPREAD), "DefaultPodTopologySpread");
}

Test(config_features, flag_syntax)
{
    set_ok("DefaultPodTopologySpread=false");
    cr_expect(!ks_feature_enabled(KS_FEATURE_DEFAULT_POD_TOPOLOGY_SPREAD));
    set_ok(" DefaultPodTopologySpread = T ,,PodOverhead=true");
    cr_expect(ks_feature_enabled(KS_FEATURE_DEFAULT_POD_TOPOLOGY_SPREAD));
    set_ok("DefaultPodTopologySpread=0");
    cr_expect(!ks_feature_enabled(KS_FEATURE_DEFAULT_POD_TOPOLOGY_SPREAD));
    set_ok(""); /* nothing named: nothing changes */
    cr_expect(!ks_feature_enabled(KS_FEATURE_DEFAULT_POD_TOPOLOGY_SPREAD));
    ks_features_reset();
    cr_expect(ks_feature_enabled(KS_FEATURE_DEFAULT_POD_TOPOLOGY_SPREAD));
}

Test(config_features, bad_values_change_nothing)
{
    set_fails("DefaultPodTopologySpread=false,NoSuchGate=true", "unrecognized feature gate: NoSuchGate");
    cr_expect(ks_feature_enabled(KS_FEATURE_DEFAULT_POD_TOPOLOGY_SPREAD), "all or nothing");
    set_fails("DefaultPodTopologySpread", "missing bool value for DefaultPodTopologySpread");
    set_fails(
        "DefaultPodTopologySpread=yes",
        "invalid value of DefaultPodTopologySpread=yes, err: strconv.ParseBool: parsing \"yes\": invalid "
        "syntax");
    set_fails("VolumeCapacityPriority=true",
              "cannot set feature gate VolumeCapacityPriority to true, feature is locked to false in ksched");
    set_fails("minDomainsInPodTopologySpread=true",
              "unrecognized feature gate: minDomainsInPodTopologySpread");
    cr_expect(ks_feature_enabled(KS_FEATURE_DEFAULT_POD_TOPOLOGY_SPREAD));
}

/* v1.37's workload gates are known, off and locked off: every pod is scheduled on its own. */
Test(config_features, workload_gates_are_known_and_off_by_default)
{
    cr_expect(!ks_feature_enabled(KS_FEATURE_GENERIC_WORKLOAD));
    cr_expect(!ks_feature_enabled(KS_FEATURE_TOPOLOGY_AWARE_WORKLOAD_SCHEDULING));
    set_ok("GenericWorkload=false,TopologyAwareWorkloadScheduling=false");
    set_ok("GenericWorkload=true");
    cr_expect(ks_feature_enabled(KS_FEATURE_GENERIC_WORKLOAD));
    ks_features_reset();
    set_ok("GenericWorkload=true,TopologyAwareWorkloadScheduling=true");
    cr_expect(ks_feature_enabled(KS_FEATURE_TOPOLOGY_AWARE_WORKLOAD_SCHEDULING));
    ks_features_reset();
    set_fails("GangScheduling=true",
              "unrecognized feature gate: GangScheduling"); /* merged into GenericWorkload */
}

static enum ks_spread_defaulting pts_defaulting(const struct ks_profile *prof)
{
    const struct ks_podtopologyspread_args *a = ks_profile_args(prof, "PodTopologySpread");
    cr_assert_not_null(a);
    return a->defaulting;
}

Test(config_features, v1beta2_defaults_with_the_gate_on)
{
    struct ks_config *cfg = cfg_load_ok(V1BETA2_HEADER);
    assert_point(&cfg->profiles[0], KS_EXT_PRE_SCORE,
                 "InterPodAffinity PodTopologySpread TaintToleration NodeAffinity");
    assert_point(&cfg->profiles[0], KS_EXT_SCORE, V1BETA2_SCORE);
    cr_expect_eq(pts_defaulting(&cfg->profiles[0]), KS_SPREAD_DEFAULTING_SYSTEM);
    ks_config_destroy(cfg);
}

Test(config_features, v1beta2_selector_spread_with_the_gate_off)
{
    set_ok("DefaultPodTopologySpread=false");
    struct ks_config *cfg = cfg_load_ok(V1BETA2_HEADER);
    const struct ks_profile *prof = &cfg->profiles[0];
    assert_point(prof, KS_EXT_PRE_SCORE,
                 "InterPodAffinity PodTopologySpread TaintToleration NodeAffinity SelectorSpread");
    assert_point(prof, KS_EXT_SCORE, V1BETA2_SCORE " SelectorSpread:1");
    cr_expect_eq(pts_defaulting(prof), KS_SPREAD_DEFAULTING_LIST);
    ks_config_destroy(cfg);

    /* a file that sets the defaulting type keeps it; a disabled SelectorSpread stays out */
    cfg = cfg_load_ok(V1BETA2_HEADER "profiles:\n"
                                     "- plugins:\n"
                                     "    score:\n"
                                     "      disabled:\n"
                                     "      - name: SelectorSpread\n"
                                     "  pluginConfig:\n"
                                     "  - name: PodTopologySpread\n"
                                     "    args:\n"
                                     "      defaultingType: System\n");
    assert_point(&cfg->profiles[0], KS_EXT_SCORE, V1BETA2_SCORE);
    cr_expect_eq(pts_defaulting(&cfg->profiles[0]), KS_SPREAD_DEFAULTING_SYSTEM);
    ks_config_destroy(cfg);
}

Test(config_features, v1beta3_selector_spread_with_the_gate_off)
{
    set_ok("DefaultPodTopologySpread=false");
    struct ks_config *cfg = cfg_load_ok(V1BETA3_HEADER);
    char pre_score[2048], score[2048];
    point_str(&cfg->profiles[0], KS_EXT_PRE_SCORE, pre_score, sizeof(pre_score));
    point_str(&cfg->profiles[0], KS_EXT_SCORE, score, sizeof(score));
    size_t np = strlen(pre_score), ns = strlen(score);
    cr_expect(np > 15 && strcmp(pre_score + np - 15, " SelectorSpread") == 0, "%s", pre_score);
    cr_expect(ns > 17 && strcmp(score + ns - 17, " SelectorSpread:1") == 0, "%s", score);
    cr_expect_eq(pts_defaulting(&cfg->profiles[0]), KS_SPREAD_DEFAULTING_SYSTEM, "v1beta3 keeps System");
    ks_config_destroy(cfg);

    /* v1: releases where the gate is locked on; nothing changes */
    cfg = cfg_load_ok(V1_HEADER);
    point_str(&cfg->profiles[0], KS_EXT_SCORE, score, sizeof(score));
    cr_expect(strstr(score, "SelectorSpread") == NULL, "%s", score);
    ks_config_destroy(cfg);
}

/* applyFeatureGates: GenericWorkload adds GangScheduling at the end of v1's MultiPoint. */
Test(config_features, generic_workload_adds_gang_scheduling_to_v1)
{
    struct ks_config *cfg;
    cr_assert_eq(ks_config_load_default(&cfg), 0);
    const struct ks_plugin_set *mp = &cfg->profiles[0].plugins.point[KS_EXT_MULTI_POINT];
    for (uint32_t i = 0; i < mp->nenabled; i++)
        cr_expect_str_neq(mp->enabled[i].name, "GangScheduling");
    ks_config_destroy(cfg);
    set_ok("GenericWorkload=true");
    cr_assert_eq(ks_config_load_default(&cfg), 0);
    mp = &cfg->profiles[0].plugins.point[KS_EXT_MULTI_POINT];
    cr_assert_gt(mp->nenabled, 0u);
    cr_expect_str_eq(mp->enabled[mp->nenabled - 1].name, "GangScheduling");
    ks_config_destroy(cfg);
    ks_features_reset();
}
