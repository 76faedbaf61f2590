/*
 * node_resources_balanced_allocation.c - the NodeResourcesBalancedAllocation plugin:
 * scores nodes by how evenly the pod would leave their resources used (PreScore, Score).
 *
 * Mirrors pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go. Args
 * (NodeResourcesBalancedAllocationArgs): resources default to cpu and memory and a weight
 * of 0 means 1 (SetDefaults_NodeResourcesBalancedAllocationArgs); names must be unique and
 * every weight must be 1 (ValidateNodeResourcesBalancedAllocationArgs). The
 * extension-point ops join this table with the framework runtime.
 */
#include "ksched/config_decode.h"
#include "ksched/intern.h"
#include "ksched/plugin_args.h"
#include "ksched/registry.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- args ----------------------------------------------------------------------------------- */

static int args_decode(struct ks_decoder *d, const struct ks_yaml_node *node, const char *api_version,
                       struct ks_noderesourcesbalancedallocation_args *a)
{
    static const char *const fields[] = {"resources", NULL};
    const struct ks_yaml_node *seq = NULL;
    enum ks_config_version version;
    char field[48];
    int rc;

    if ((rc = ks_cfg_args_begin(d, node, "NodeResourcesBalancedAllocationArgs", api_version, fields,
                                &version)) ||
        (rc = ks_cfg_resources(d, node, "resources", &a->nresources, &a->resources, &seq)))
        return rc;
    if (a->nresources == 0 && ks_cfg_default_resources(&a->arena, &a->nresources, &a->resources) < 0)
        return ks_dec_nomem(d);
    for (uint32_t i = 0; i < a->nresources; i++) {
        struct ks_resource_spec *r = &a->resources[i];
        if (r->weight == 0)
            r->weight = 1;
        for (uint32_t k = 0; k < i; k++) {
            if (a->resources[k].name == r->name) {
                snprintf(field, sizeof(field), "resources[%u].name", i);
                return ks_cfg_fail_at(d, ks_cfg_item_field(seq, i, "name"), 0, field,
                                      "Duplicate value: \"%s\"", ks_intern_str(r->name));
            }
        }
        if (r->weight != 1) {
            snprintf(field, sizeof(field), "resources[%u].weight", i);
            return ks_cfg_fail_at(d, ks_cfg_item_field(seq, i, "weight"), 0, field,
                                  "Invalid value: %lld: must be 1", (long long)r->weight);
        }
    }
    return 0;
}

static void args_destroy(void *args)
{
    struct ks_noderesourcesbalancedallocation_args *a = args;
    if (!a)
        return;
    ks_arena_destroy(&a->arena);
    free(a);
}

static int args_parse(const struct ks_yaml_node *node, const char *api_version, const char *file, void **out,
                      struct ks_error *err)
{
    struct ks_noderesourcesbalancedallocation_args *a = calloc(1, sizeof(*a));
    struct ks_decoder d;
    int rc;

    if (!a)
        return -ENOMEM;
    ks_decoder_init(&d, file, &a->arena, err);
    if ((rc = args_decode(&d, node, api_version, a)))
        goto err_decode;
    *out = a;
    return 0;

err_decode:
    args_destroy(a);
    return rc;
}

static void args_print(const void *args, struct ks_yaml_out *o)
{
    const struct ks_noderesourcesbalancedallocation_args *a = args;
    ks_cfg_print_resources(o, "resources", a->nresources, a->resources);
}

/* ---- plugin ----------------------------------------------------------------------------------- */

const struct ks_plugin ks_plugin_node_resources_balanced_allocation = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "NodeResourcesBalancedAllocation",
    .args_parse = args_parse,
    .args_print = args_print,
    .args_destroy = args_destroy,
};
