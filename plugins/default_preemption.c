/*
 * default_preemption.c - the DefaultPreemption plugin: when no node fits a pod, find
 * lower-priority victims whose eviction makes room and nominate that node (PostFilter).
 *
 * Mirrors pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go.
 * Args (DefaultPreemptionArgs): defaults of SetDefaults_DefaultPreemptionArgs (10% and
 * 100 candidate nodes) and the checks of ValidateDefaultPreemptionArgs. The PostFilter op
 * joins this table with the framework runtime.
 */
#include "ksched/config_decode.h"
#include "ksched/plugin_args.h"
#include "ksched/registry.h"

#include <errno.h>
#include <stdlib.h>

/* ---- args ----------------------------------------------------------------------------------- */

static int args_check(struct ks_decoder *d, const struct ks_yaml_node *node,
                      const struct ks_defaultpreemption_args *a)
{
    const struct ks_yaml_node *pct = ks_yaml_get(node, "minCandidateNodesPercentage");
    const struct ks_yaml_node *abs = ks_yaml_get(node, "minCandidateNodesAbsolute");
    int line = node ? node->line : 0;

    if (a->min_candidate_nodes_percentage < 0 || a->min_candidate_nodes_percentage > 100)
        return ks_cfg_fail_at(d, pct, line, "minCandidateNodesPercentage",
                              "Invalid value: %d: not in valid range [0, 100]",
                              a->min_candidate_nodes_percentage);
    if (a->min_candidate_nodes_absolute < 0)
        return ks_cfg_fail_at(d, abs, line, "minCandidateNodesAbsolute",
                              "Invalid value: %d: not in valid range [0, inf)",
                              a->min_candidate_nodes_absolute);
    if (a->min_candidate_nodes_percentage == 0 && a->min_candidate_nodes_absolute == 0)
        return ks_cfg_fail_at(
            d, pct, line, "minCandidateNodesPercentage",
            "Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute");
    return 0;
}

static int args_decode(struct ks_decoder *d, const struct ks_yaml_node *node, const char *api_version,
                       struct ks_defaultpreemption_args *a)
{
    static const char *const fields[] = {"minCandidateNodesPercentage", "minCandidateNodesAbsolute", NULL};
    enum ks_config_version version;
    int rc;

    a->min_candidate_nodes_percentage = 10;
    a->min_candidate_nodes_absolute = 100;
    if ((rc = ks_cfg_args_begin(d, node, "DefaultPreemptionArgs", api_version, fields, &version)) ||
        (rc = ks_dec_int32(d, node, "minCandidateNodesPercentage", &a->min_candidate_nodes_percentage)) ||
        (rc = ks_dec_int32(d, node, "minCandidateNodesAbsolute", &a->min_candidate_nodes_absolute)))
        return rc;
    return args_check(d, node, a);
}

KS_DEFINE_PLAIN_ARGS_OPS(struct ks_defaultpreemption_args, args_decode)

static void args_print(const void *args, struct ks_yaml_out *o)
{
    const struct ks_defaultpreemption_args *a = args;
    ks_yaml_key_int(o, "minCandidateNodesPercentage", a->min_candidate_nodes_percentage);
    ks_yaml_key_int(o, "minCandidateNodesAbsolute", a->min_candidate_nodes_absolute);
}

/* ---- plugin ----------------------------------------------------------------------------------- */

const struct ks_plugin ks_plugin_default_preemption = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "DefaultPreemption",
    .args_parse = args_parse,
    .args_print = args_print,
    .args_destroy = args_destroy,
};
