/*
 * inter_pod_affinity.c - the InterPodAffinity plugin: required pod affinity and
 * anti-affinity as a filter, preferred terms (and existing pods' hard affinity, weighted
 * by hardPodAffinityWeight) as a score (PreFilter, Filter, PreScore, Score).
 *
 * Mirrors pkg/scheduler/framework/plugins/interpodaffinity/plugin.go. Args
 * (InterPodAffinityArgs): hardPodAffinityWeight defaults to 1 and must be 0..100
 * (SetDefaults_InterPodAffinityArgs, ValidateInterPodAffinityArgs);
 * ignorePreferredTermsOfExistingPods exists from v1beta3 on. The extension-point ops join
 * this table with the framework runtime.
 */
#include "ksched/config.h"
#include "ksched/config_decode.h"
#include "ksched/plugin_args.h"
#include "ksched/registry.h"

#include <errno.h>
#include <stdlib.h>

/* ---- args ----------------------------------------------------------------------------------- */

static int args_decode(struct ks_decoder *d, const struct ks_yaml_node *node, const char *api_version,
                       struct ks_interpodaffinity_args *a)
{
    static const char *const fields[] = {"hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods", NULL};
    const struct ks_yaml_node *ignore = ks_yaml_get(node, "ignorePreferredTermsOfExistingPods");
    enum ks_config_version read_as;
    int rc;

    a->hard_pod_affinity_weight = 1;
    if (ks_config_version_parse(api_version, &a->version) < 0)
        a->version = KS_CONFIG_V1;
    if ((rc = ks_cfg_args_begin(d, node, "InterPodAffinityArgs", api_version, fields, &read_as)))
        return rc;
    if (ignore && read_as == KS_CONFIG_V1BETA2)
        return ks_cfg_fail_at(d, ignore, 0, "ignorePreferredTermsOfExistingPods",
                              "unknown field \"ignorePreferredTermsOfExistingPods\"");
    if ((rc = ks_dec_int32(d, node, "hardPodAffinityWeight", &a->hard_pod_affinity_weight)) ||
        (rc = ks_dec_bool(d, node, "ignorePreferredTermsOfExistingPods",
                          &a->ignore_preferred_terms_of_existing_pods)))
        return rc;
    if (a->hard_pod_affinity_weight < 0 || a->hard_pod_affinity_weight > 100)
        return ks_cfg_fail_at(d, ks_yaml_get(node, "hardPodAffinityWeight"), 0, "hardPodAffinityWeight",
                              "Invalid value: %d: not in valid range [0, 100]", a->hard_pod_affinity_weight);
    return 0;
}

KS_DEFINE_PLAIN_ARGS_OPS(struct ks_interpodaffinity_args, args_decode)

static void args_print(const void *args, struct ks_yaml_out *o)
{
    const struct ks_interpodaffinity_args *a = args;
    ks_yaml_key_int(o, "hardPodAffinityWeight", a->hard_pod_affinity_weight);
    if (a->version != KS_CONFIG_V1BETA2)
        ks_yaml_key_bool(o, "ignorePreferredTermsOfExistingPods", a->ignore_preferred_terms_of_existing_pods);
}

/* ---- plugin ----------------------------------------------------------------------------------- */

const struct ks_plugin ks_plugin_inter_pod_affinity = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "InterPodAffinity",
    .args_parse = args_parse,
    .args_print = args_print,
    .args_destroy = args_destroy,
};
