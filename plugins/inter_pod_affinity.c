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

static int args_parse(const struct ks_yaml_node *node, const char *api_version, const char *file, void **out,
                      struct ks_error *err)
{
    static const char *const fields[] = {"hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods", NULL};
    struct ks_interpodaffinity_args *a = calloc(1, sizeof(*a));
    struct ks_arena scratch = KS_ARENA_INIT;
    const struct ks_yaml_node *ignore = ks_yaml_get(node, "ignorePreferredTermsOfExistingPods");
    enum ks_config_version read_as;
    struct ks_decoder d;
    int rc;

    if (!a)
        return -ENOMEM;
    a->hard_pod_affinity_weight = 1;
    if (ks_config_version_parse(api_version, &a->version) < 0)
        a->version = KS_CONFIG_V1;
    ks_decoder_init(&d, file, &scratch, err);
    rc = ks_cfg_args_begin(&d, node, "InterPodAffinityArgs", api_version, fields, &read_as);
    if (!rc && ignore && read_as == KS_CONFIG_V1BETA2)
        rc = ks_cfg_fail_at(&d, ignore, 0, "ignorePreferredTermsOfExistingPods",
                            "unknown field \"ignorePreferredTermsOfExistingPods\"");
    if (!rc && !(rc = ks_dec_int32(&d, node, "hardPodAffinityWeight", &a->hard_pod_affinity_weight)) &&
        !(rc = ks_dec_bool(&d, node, "ignorePreferredTermsOfExistingPods",
                           &a->ignore_preferred_terms_of_existing_pods)) &&
        (a->hard_pod_affinity_weight < 0 || a->hard_pod_affinity_weight > 100))
        rc = ks_cfg_fail_at(&d, ks_yaml_get(node, "hardPodAffinityWeight"), 0, "hardPodAffinityWeight",
                            "Invalid value: %d: not in valid range [0, 100]", a->hard_pod_affinity_weight);
    ks_arena_destroy(&scratch);
    if (rc)
        goto err_decode;
    *out = a;
    return 0;

err_decode:
    free(a);
    return rc;
}

static void args_print(const void *args, struct ks_yaml_out *o)
{
    const struct ks_interpodaffinity_args *a = args;
    ks_yaml_key_int(o, "hardPodAffinityWeight", a->hard_pod_affinity_weight);
    if (a->version != KS_CONFIG_V1BETA2)
        ks_yaml_key_bool(o, "ignorePreferredTermsOfExistingPods", a->ignore_preferred_terms_of_existing_pods);
}

static void args_destroy(void *args)
{
    free(args);
}

/* ---- plugin ----------------------------------------------------------------------------------- */

const struct ks_plugin ks_plugin_inter_pod_affinity = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "InterPodAffinity",
    .args_parse = args_parse,
    .args_print = args_print,
    .args_destroy = args_destroy,
};
