/*
 * test_config_args.c - plugin args in pluginConfig: defaults applied to what is written,
 * upstream's validation_pluginargs.go checks, strict decoding and TypeMeta inside args.
 * Inputs are one profile with one pluginConfig entry; the args map starts on line 6.
 */
#include "config_helpers.h"

#include "ksched/plugin_args.h"

#include <criterion/criterion.h>

#define ARGS(plugin) V1_HEADER "profiles:\n- pluginConfig:\n  - name: " plugin "\n    args:\n"

static const void *args_of(struct ks_config *cfg, const char *plugin)
{
    const void *a = ks_profile_args(&cfg->profiles[0], plugin);
    cr_assert_not_null(a, "no args for %s", plugin);
    return a;
}

/* ---- TypeMeta and strictness -------------------------------------------------------------------- */

Test(config_args, type_meta_inside_args)
{
    struct ks_config *cfg =
        cfg_load_ok(ARGS("DefaultPreemption") "      apiVersion: kubescheduler.config.k8s.io/v1\n"
                                              "      kind: DefaultPreemptionArgs\n"
                                              "      minCandidateNodesAbsolute: 5\n");
    const struct ks_defaultpreemption_args *a = args_of(cfg, "DefaultPreemption");
    cr_assert_eq(a->min_candidate_nodes_absolute, 5);
    cr_assert_eq(a->min_candidate_nodes_percentage, 10);
    ks_config_destroy(cfg);

    cfg_load_fails(ARGS("DefaultPreemption") "      kind: InterPodAffinityArgs\n", 7,
                   "profiles[0].pluginConfig[0].args.kind",
                   "Invalid value: \"InterPodAffinityArgs\": must be \"DefaultPreemptionArgs\"");
    cfg_load_fails(ARGS("DefaultPreemption") "      apiVersion: kubescheduler.config.k8s.io/v1alpha1\n", 7,
                   "profiles[0].pluginConfig[0].args.apiVersion", "Unsupported value");
    cfg_load_fails(ARGS("DefaultPreemption") "      minCandidateNodes: 5\n", 7,
                   "profiles[0].pluginConfig[0].args.minCandidateNodes",
                   "unknown field \"minCandidateNodes\"");
    cfg_load_fails(ARGS("DefaultPreemption") "      - 5\n", 7, "profiles[0].pluginConfig[0].args",
                   "expected a map");
}

Test(config_args, null_or_missing_args_are_defaults)
{
    struct ks_config *cfg = cfg_load_ok(V1_HEADER "profiles:\n- pluginConfig:\n  - name: VolumeBinding\n"
                                                  "  - name: NodeResourcesFit\n    args: null\n");
    cr_assert_eq(((const struct ks_volumebinding_args *)args_of(cfg, "VolumeBinding"))->bind_timeout_seconds,
                 600);
    cr_assert_eq(((const struct ks_noderesourcesfit_args *)args_of(cfg, "NodeResourcesFit"))->nresources, 2);
    cr_assert(!cfg->profiles[0].plugin_config[0].defaulted);
    ks_config_destroy(cfg);
}

/* ---- DefaultPreemption -------------------------------------------------------------------------- */

Test(config_args, default_preemption)
{
    cfg_load_fails(ARGS("DefaultPreemption") "      minCandidateNodesPercentage: 101\n", 7,
                   "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage",
                   "Invalid value: 101: not in valid range [0, 100]");
    cfg_load_fails(ARGS("DefaultPreemption") "      minCandidateNodesAbsolute: -1\n", 7,
                   "profiles[0].pluginConfig[0].args.minCandidateNodesAbsolute",
                   "Invalid value: -1: not in valid range [0, inf)");
    cfg_load_fails(
        ARGS(
            "DefaultPreemption") "      minCandidateNodesPercentage: 0\n      minCandidateNodesAbsolute: 0\n",
        7, "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage",
        "cannot be zero at the same time as minCandidateNodesAbsolute");
    struct ks_config *cfg = cfg_load_ok(ARGS("DefaultPreemption") "      minCandidateNodesPercentage: 0\n");
    cr_assert_eq(((const struct ks_defaultpreemption_args *)args_of(cfg, "DefaultPreemption"))
                     ->min_candidate_nodes_absolute,
                 100);
    ks_config_destroy(cfg);
}

/* ---- InterPodAffinity --------------------------------------------------------------------------- */

Test(config_args, inter_pod_affinity)
{
    struct ks_config *cfg =
        cfg_load_ok(ARGS("InterPodAffinity") "      hardPodAffinityWeight: 0\n"
                                             "      ignorePreferredTermsOfExistingPods: true\n");
    const struct ks_interpodaffinity_args *a = args_of(cfg, "InterPodAffinity");
    cr_assert_eq(a->hard_pod_affinity_weight, 0);
    cr_assert(a->ignore_preferred_terms_of_existing_pods);
    ks_config_destroy(cfg);

    cfg_load_fails(ARGS("InterPodAffinity") "      hardPodAffinityWeight: 101\n", 7,
                   "profiles[0].pluginConfig[0].args.hardPodAffinityWeight",
                   "Invalid value: 101: not in valid range [0, 100]");
    cfg_load_fails(ARGS("InterPodAffinity") "      hardPodAffinityWeight: -1\n", 7,
                   "profiles[0].pluginConfig[0].args.hardPodAffinityWeight", "not in valid range [0, 100]");
    cfg_load_fails(V1BETA2_HEADER "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args:\n"
                                  "      ignorePreferredTermsOfExistingPods: true\n",
                   7, "profiles[0].pluginConfig[0].args.ignorePreferredTermsOfExistingPods", "unknown field");
}

/* ---- NodeResourcesFit --------------------------------------------------------------------------- */

Test(config_args, node_resources_fit_defaults)
{
    struct ks_config *cfg = cfg_load_ok(ARGS("NodeResourcesFit") "      ignoredResources: [example.com/foo]\n"
                                                                 "      scoringStrategy:\n"
                                                                 "        type: MostAllocated\n"
                                                                 "        resources:\n"
                                                                 "        - name: cpu\n"
                                                                 "        - name: example.com/gpu\n"
                                                                 "          weight: 5\n");
    const struct ks_noderesourcesfit_args *a = args_of(cfg, "NodeResourcesFit");
    cr_assert_eq(a->strategy, KS_SCORING_MOST_ALLOCATED);
    cr_assert_eq(a->nresources, 2);
    cr_assert_eq(a->resources[0].weight, 1, "a weight of 0 means 1");
    cr_assert_str_eq(ks_intern_str(a->resources[1].name), "example.com/gpu");
    cr_assert_eq(a->resources[1].weight, 5);
    cr_assert_eq(a->nignored_resources, 1);
    cr_assert_str_eq(ks_intern_str(a->ignored_resources[0]), "example.com/foo");
    ks_config_destroy(cfg);

    /* a strategy without resources gets cpu and memory */
    cfg = cfg_load_ok(ARGS("NodeResourcesFit") "      scoringStrategy:\n        type: LeastAllocated\n");
    a = args_of(cfg, "NodeResourcesFit");
    cr_assert_eq(a->nresources, 2);
    cr_assert_str_eq(ks_intern_str(a->resources[1].name), "memory");
    ks_config_destroy(cfg);
}

Test(config_args, node_resources_fit_requested_to_capacity_ratio)
{
    struct ks_config *cfg = cfg_load_ok(ARGS("NodeResourcesFit") "      scoringStrategy:\n"
                                                                 "        type: RequestedToCapacityRatio\n"
                                                                 "        requestedToCapacityRatio:\n"
                                                                 "          shape:\n"
                                                                 "          - utilization: 0\n"
                                                                 "            score: 10\n"
                                                                 "          - utilization: 100\n"
                                                                 "            score: 0\n");
    const struct ks_noderesourcesfit_args *a = args_of(cfg, "NodeResourcesFit");
    cr_assert_eq(a->strategy, KS_SCORING_REQUESTED_TO_CAPACITY_RATIO);
    cr_assert(a->has_requested_to_capacity_ratio);
    cr_assert_eq(a->nshape, 2);
    cr_assert_eq(a->shape[0].score, 10);
    cr_assert_eq(a->shape[1].utilization, 100);
    ks_config_destroy(cfg);
}

Test(config_args, node_resources_fit_validation)
{
    const char *p = "profiles[0].pluginConfig[0].args.";
    char field[256];

    snprintf(field, sizeof(field), "%signoredResources[1]", p);
    cfg_load_fails(ARGS("NodeResourcesFit") "      ignoredResources: [ok, \"not ok\"]\n", 7, field,
                   "Invalid value: \"not ok\": name part must consist of alphanumeric characters");
    snprintf(field, sizeof(field), "%signoredResourceGroups[0]", p);
    cfg_load_fails(ARGS("NodeResourcesFit") "      ignoredResourceGroups:\n      - example.com/aaa\n", 8,
                   field, "resource group name can't contain '/'");
    snprintf(field, sizeof(field), "%sscoringStrategy.type", p);
    cfg_load_fails(
        ARGS("NodeResourcesFit") "      scoringStrategy:\n        type: Balanced\n", 8, field,
        "Unsupported value: \"Balanced\": supported values: \"LeastAllocated\", \"MostAllocated\", "
        "\"RequestedToCapacityRatio\"");
    /* upstream only defaults the type when the whole strategy is missing */
    cfg_load_fails(ARGS("NodeResourcesFit") "      scoringStrategy:\n        resources: [{name: cpu}]\n", 7,
                   field, "Unsupported value: \"\"");
    snprintf(field, sizeof(field), "%sscoringStrategy.resources[1].weight", p);
    cfg_load_fails(
        ARGS("NodeResourcesFit") "      scoringStrategy:\n        type: LeastAllocated\n        resources:\n"
                                 "        - name: cpu\n        - name: memory\n          weight: 101\n",
        12, field, "Invalid value: 101: resource weight of memory not in valid range (0, 100]");
    snprintf(field, sizeof(field), "%sscoringStrategy.requestedToCapacityRatio", p);
    cfg_load_fails(
        ARGS("NodeResourcesFit") "      scoringStrategy:\n        type: RequestedToCapacityRatio\n", 8, field,
        "Required value: must be specified when type is RequestedToCapacityRatio");
    cfg_load_fails(ARGS("NodeResourcesFit") "      scoringStrategy:\n        type: LeastAllocated\n"
                                            "        requestedToCapacityRatio:\n          shape: []\n",
                   10, field, "Forbidden: must be nil when type is not RequestedToCapacityRatio");
    snprintf(field, sizeof(field), "%sscoringStrategy.requestedToCapacityRatio.shape", p);
    cfg_load_fails(ARGS("NodeResourcesFit") "      scoringStrategy:\n        type: RequestedToCapacityRatio\n"
                                            "        requestedToCapacityRatio: {}\n",
                   9, field, "Required value: at least one point must be specified");
    snprintf(field, sizeof(field), "%sscoringStrategy.requestedToCapacityRatio.shape[1].utilization", p);
    cfg_load_fails(ARGS("NodeResourcesFit") "      scoringStrategy:\n        type: RequestedToCapacityRatio\n"
                                            "        requestedToCapacityRatio:\n          shape:\n"
                                            "          - {utilization: 50, score: 1}\n"
                                            "          - {utilization: 50, score: 2}\n",
                   12, field, "Invalid value: 50: values must be sorted in increasing order");
    snprintf(field, sizeof(field), "%sscoringStrategy.requestedToCapacityRatio.shape[0].utilization", p);
    cfg_load_fails(ARGS("NodeResourcesFit") "      scoringStrategy:\n        type: RequestedToCapacityRatio\n"
                                            "        requestedToCapacityRatio:\n          shape:\n"
                                            "          - {utilization: -10, score: 1}\n",
                   11, field, "Invalid value: -10: not in valid range [0, 100]");
    snprintf(field, sizeof(field), "%sscoringStrategy.requestedToCapacityRatio.shape[0].score", p);
    cfg_load_fails(ARGS("NodeResourcesFit") "      scoringStrategy:\n        type: RequestedToCapacityRatio\n"
                                            "        requestedToCapacityRatio:\n          shape:\n"
                                            "          - {utilization: 10, score: 11}\n",
                   11, field, "Invalid value: 11: not in valid range [0, 10]");
    snprintf(field, sizeof(field), "%sscoringStrategy.requestedToCapacityRatio.shape[0].bonus", p);
    cfg_load_fails(ARGS("NodeResourcesFit") "      scoringStrategy:\n        type: RequestedToCapacityRatio\n"
                                            "        requestedToCapacityRatio:\n          shape:\n"
                                            "          - {utilization: 10, score: 1, bonus: 2}\n",
                   11, field, "unknown field \"bonus\"");
}

/* ---- NodeResourcesBalancedAllocation ------------------------------------------------------------ */

Test(config_args, balanced_allocation)
{
    struct ks_config *cfg =
        cfg_load_ok(ARGS("NodeResourcesBalancedAllocation") "      resources:\n"
                                                            "      - name: cpu\n"
                                                            "      - name: example.com/gpu\n"
                                                            "        weight: 1\n");
    const struct ks_noderesourcesbalancedallocation_args *a = args_of(cfg, "NodeResourcesBalancedAllocation");
    cr_assert_eq(a->nresources, 2);
    cr_assert_eq(a->resources[0].weight, 1);
    ks_config_destroy(cfg);

    cfg_load_fails(
        ARGS("NodeResourcesBalancedAllocation") "      resources:\n      - name: cpu\n        weight: 2\n", 9,
        "profiles[0].pluginConfig[0].args.resources[0].weight", "Invalid value: 2: must be 1");
    cfg_load_fails(
        ARGS("NodeResourcesBalancedAllocation") "      resources:\n      - name: cpu\n      - name: cpu\n", 9,
        "profiles[0].pluginConfig[0].args.resources[1].name", "Duplicate value: \"cpu\"");
}

/* ---- PodTopologySpread -------------------------------------------------------------------------- */

Test(config_args, pod_topology_spread)
{
    struct ks_config *cfg =
        cfg_load_ok(ARGS("PodTopologySpread") "      defaultingType: List\n"
                                              "      defaultConstraints:\n"
                                              "      - maxSkew: 1\n"
                                              "        topologyKey: kubernetes.io/hostname\n"
                                              "        whenUnsatisfiable: ScheduleAnyway\n"
                                              "        nodeAffinityPolicy: Ignore\n"
                                              "      - maxSkew: 2\n"
                                              "        topologyKey: kubernetes.io/hostname\n"
                                              "        whenUnsatisfiable: DoNotSchedule\n");
    const struct ks_podtopologyspread_args *a = args_of(cfg, "PodTopologySpread");
    cr_assert_eq(a->defaulting, KS_SPREAD_DEFAULTING_LIST);
    cr_assert_eq(a->nconstraints, 2);
    cr_assert_eq(a->default_constraints[0].when_unsatisfiable, KS_SCHEDULE_ANYWAY);
    cr_assert_eq(a->default_constraints[0].node_affinity_policy, KS_POLICY_IGNORE);
    cr_assert_eq(a->default_constraints[1].max_skew, 2);
    cr_assert_eq(a->default_constraints[1].when_unsatisfiable, KS_DO_NOT_SCHEDULE);
    cr_assert_null(a->default_constraints[1].selector);
    ks_config_destroy(cfg);

#define PTS_LIST ARGS("PodTopologySpread") "      defaultingType: List\n      defaultConstraints:\n"
    const char *p = "profiles[0].pluginConfig[0].args.";
    char field[256];
    snprintf(field, sizeof(field), "%sdefaultingType", p);
    cfg_load_fails(ARGS("PodTopologySpread") "      defaultingType: Cluster\n", 7, field,
                   "Unsupported value: \"Cluster\": supported values: \"System\", \"List\"");
    cfg_load_fails(
        ARGS("PodTopologySpread") "      defaultConstraints:\n      - maxSkew: 1\n"
                                  "        topologyKey: zone\n        whenUnsatisfiable: DoNotSchedule\n",
        7, field, "Invalid value: \"System\": when .defaultConstraints are not empty");
    snprintf(field, sizeof(field), "%sdefaultConstraints[0].maxSkew", p);
    cfg_load_fails(
        PTS_LIST "      - maxSkew: 0\n        topologyKey: zone\n        whenUnsatisfiable: DoNotSchedule\n",
        9, field, "Invalid value: 0: not in valid range (0, inf)");
    snprintf(field, sizeof(field), "%sdefaultConstraints[0].topologyKey", p);
    cfg_load_fails(PTS_LIST "      - maxSkew: 1\n        whenUnsatisfiable: DoNotSchedule\n", 9, field,
                   "Required value: can not be empty");
    cfg_load_fails(
        PTS_LIST
        "      - maxSkew: 1\n        topologyKey: \"-zone\"\n        whenUnsatisfiable: DoNotSchedule\n",
        10, field, "Invalid value: \"-zone\"");
    snprintf(field, sizeof(field), "%sdefaultConstraints[0].whenUnsatisfiable", p);
    cfg_load_fails(PTS_LIST "      - maxSkew: 1\n        topologyKey: zone\n", 9, field,
                   "Required value: can not be empty");
    cfg_load_fails(
        PTS_LIST "      - maxSkew: 1\n        topologyKey: zone\n        whenUnsatisfiable: Sometimes\n", 11,
        field, "Unsupported value: \"Sometimes\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\"");
    snprintf(field, sizeof(field), "%sdefaultConstraints[0].labelSelector", p);
    cfg_load_fails(PTS_LIST
                   "      - maxSkew: 1\n        topologyKey: zone\n        whenUnsatisfiable: DoNotSchedule\n"
                   "        labelSelector:\n          matchLabels: {app: x}\n",
                   13, field, "Forbidden: constraint must not define a selector");
    snprintf(field, sizeof(field), "%sdefaultConstraints[1]", p);
    cfg_load_fails(PTS_LIST "      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n"
                            "      - {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n",
                   10, field, "Duplicate value: \"{zone, DoNotSchedule}\"");
    snprintf(field, sizeof(field), "%sdefaultConstraints[0].nodeTaintsPolicy", p);
    cfg_load_fails(PTS_LIST "      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, "
                            "nodeTaintsPolicy: Always}\n",
                   9, field, "unsupported value \"Always\"");
#undef PTS_LIST
}

/* ---- VolumeBinding ------------------------------------------------------------------------------ */

Test(config_args, volume_binding)
{
    struct ks_config *cfg = cfg_load_ok(ARGS("VolumeBinding") "      bindTimeoutSeconds: 0\n");
    cr_assert_eq(((const struct ks_volumebinding_args *)args_of(cfg, "VolumeBinding"))->bind_timeout_seconds,
                 0);
    ks_config_destroy(cfg);

    cfg_load_fails(ARGS("VolumeBinding") "      bindTimeoutSeconds: -1\n", 7,
                   "profiles[0].pluginConfig[0].args.bindTimeoutSeconds",
                   "Invalid value: -1: invalid BindTimeoutSeconds, should not be a negative value");
    cfg_load_fails(ARGS("VolumeBinding") "      shape:\n      - {utilization: 0, score: 0}\n", 8,
                   "profiles[0].pluginConfig[0].args.shape",
                   "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring");
}

/* ---- NodeAffinity ------------------------------------------------------------------------------- */

Test(config_args, node_affinity)
{
    struct ks_config *cfg =
        cfg_load_ok(ARGS("NodeAffinity") "      addedAffinity:\n"
                                         "        requiredDuringSchedulingIgnoredDuringExecution:\n"
                                         "          nodeSelectorTerms:\n"
                                         "          - matchExpressions:\n"
                                         "            - key: pool\n"
                                         "              operator: In\n"
                                         "              values: [a]\n"
                                         "        preferredDuringSchedulingIgnoredDuringExecution:\n"
                                         "        - weight: 3\n"
                                         "          preference:\n"
                                         "            matchExpressions:\n"
                                         "            - {key: disk, operator: Exists}\n");
    const struct ks_nodeaffinity_args *a = args_of(cfg, "NodeAffinity");
    cr_assert_not_null(a->added_affinity);
    cr_assert_eq(a->added_affinity->required->nterms, 1);
    cr_assert_eq(a->added_affinity->required->terms[0].exprs[0].op, KS_OP_IN);
    cr_assert_eq(a->added_affinity->npreferred, 1);
    cr_assert_eq(a->added_affinity->preferred[0].weight, 3);
    cr_assert_eq(a->added_affinity->preferred[0].term.exprs[0].op, KS_OP_EXISTS);
    ks_config_destroy(cfg);

    cfg_load_fails(
        ARGS("NodeAffinity") "      addedAffinity:\n        requiredDuringSchedulingIgnoredDuringExecution:\n"
                             "          nodeSelectorTerms:\n          - matchExpressions:\n"
                             "            - {key: pool, operator: In}\n",
        11,
        "profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution."
        "nodeSelectorTerms[0].matchExpressions[0].values",
        "must be specified when `operator` is 'In' or 'NotIn'");
    cfg_load_fails(
        ARGS("NodeAffinity") "      addedAffinity:\n        requiredDuringSchedulingIgnoredDuringExecution:\n"
                             "          nodeSelectorTerms:\n          - matchLabels: {a: b}\n",
        10,
        "profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution."
        "nodeSelectorTerms[0].matchLabels",
        "unknown field \"matchLabels\"");
    cfg_load_fails(ARGS("NodeAffinity") "      addedAffinity:\n        podAffinity: {}\n", 8,
                   "profiles[0].pluginConfig[0].args.addedAffinity.podAffinity", "unknown field");
}
