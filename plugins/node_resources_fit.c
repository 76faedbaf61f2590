/*
 * node_resources_fit.c - the NodeResourcesFit plugin: filters out nodes without room for
 * the pod's requests and scores nodes by allocation under a scoring strategy
 * (LeastAllocated, MostAllocated or RequestedToCapacityRatio) (PreFilter, Filter,
 * PreScore, Score).
 *
 * Mirrors pkg/scheduler/framework/plugins/noderesources/fit.go. Args
 * (NodeResourcesFitArgs): defaults of SetDefaults_NodeResourcesFitArgs (LeastAllocated
 * over cpu and memory with weight 1; a resource weight of 0 means 1) and the checks of
 * ValidateNodeResourcesFitArgs (ignored resources are label names, groups contain no
 * '/', a known strategy type, weights in (0, 100], a shape exactly when the type is
 * RequestedToCapacityRatio). The extension-point ops join this table with the framework
 * runtime.
 */
#include "ksched/config_decode.h"
#include "ksched/intern.h"
#include "ksched/plugin_args.h"
#include "ksched/registry.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- args ----------------------------------------------------------------------------------- */

static const char *const strategy_names[] = {
#define KS_X(id, text) text,
    KS_SCORING_STRATEGY_MAP(KS_X)
#undef KS_X
        NULL,
};

/* What decoding saw, for defaulting and for error lines. */
struct fit_src {
    const struct ks_yaml_node *strategy;  /* scoringStrategy */
    const struct ks_yaml_node *resources; /* scoringStrategy.resources */
    const struct ks_yaml_node *rtcr;      /* scoringStrategy.requestedToCapacityRatio */
    const struct ks_yaml_node *shape;     /* ...requestedToCapacityRatio.shape */
    const char *type;                     /* scoringStrategy.type as written ("" when absent) */
};

static int decode_strategy(struct ks_decoder *d, struct ks_noderesourcesfit_args *a, struct fit_src *s)
{
    static const char *const fields[] = {"type", "resources", "requestedToCapacityRatio", NULL};
    static const char *const rtcr_fields[] = {"shape", NULL};
    int rc;

    size_t saved = ks_dec_push(d, "scoringStrategy");
    if ((rc = ks_cfg_strict(d, s->strategy, fields)) ||
        (rc = ks_dec_string(d, s->strategy, "type", &s->type)) ||
        (rc = ks_cfg_resources(d, s->strategy, "resources", &a->nresources, &a->resources, &s->resources)) ||
        (rc = ks_dec_map(d, s->strategy, "requestedToCapacityRatio", &s->rtcr)))
        return rc;
    if (s->rtcr) {
        size_t s2 = ks_dec_push(d, "requestedToCapacityRatio");
        if ((rc = ks_cfg_strict(d, s->rtcr, rtcr_fields)) ||
            (rc = ks_cfg_shape(d, s->rtcr, "shape", &a->nshape, &a->shape, &s->shape)))
            return rc;
        ks_dec_pop(d, s2);
        a->has_requested_to_capacity_ratio = true;
    }
    ks_dec_pop(d, saved);
    return 0;
}

static int check_names(struct ks_decoder *d, const struct ks_yaml_node *node,
                       const struct ks_noderesourcesfit_args *a)
{
    const struct ks_yaml_node *res = ks_yaml_get(node, "ignoredResources");
    const struct ks_yaml_node *groups = ks_yaml_get(node, "ignoredResourceGroups");
    char field[64], why[512];

    for (uint32_t i = 0; i < a->nignored_resources; i++) {
        const char *name = ks_intern_str(a->ignored_resources[i]);
        if (!ks_cfg_qualified_name(name, why, sizeof(why))) {
            snprintf(field, sizeof(field), "ignoredResources[%u]", i);
            return ks_cfg_fail_at(d, ks_cfg_item_field(res, i, NULL), 0, field, "Invalid value: \"%s\": %s",
                                  name, why);
        }
    }
    for (uint32_t i = 0; i < a->nignored_resource_groups; i++) {
        const char *group = a->ignored_resource_groups[i];
        snprintf(field, sizeof(field), "ignoredResourceGroups[%u]", i);
        if (strchr(group, '/'))
            return ks_cfg_fail_at(d, ks_cfg_item_field(groups, i, NULL), 0, field,
                                  "Invalid value: \"%s\": resource group name can't contain '/'", group);
        if (!ks_cfg_qualified_name(group, why, sizeof(why)))
            return ks_cfg_fail_at(d, ks_cfg_item_field(groups, i, NULL), 0, field,
                                  "Invalid value: \"%s\": %s", group, why);
    }
    return 0;
}

static int check_strategy(struct ks_decoder *d, struct ks_noderesourcesfit_args *a, const struct fit_src *s,
                          int line)
{
    char field[96];
    int i, rc;

    for (i = 0; strategy_names[i]; i++) {
        if (strcmp(strategy_names[i], s->type) == 0)
            break;
    }
    if (!strategy_names[i])
        return ks_cfg_fail_at(
            d, ks_yaml_get(s->strategy, "type"), line, "scoringStrategy.type",
            "Unsupported value: \"%s\": supported values: \"LeastAllocated\", \"MostAllocated\", "
            "\"RequestedToCapacityRatio\"",
            s->type);
    a->strategy = (enum ks_scoring_strategy)i;
    for (uint32_t r = 0; r < a->nresources; r++) {
        if (a->resources[r].weight <= 0 || a->resources[r].weight > 100) {
            snprintf(field, sizeof(field), "scoringStrategy.resources[%u].weight", r);
            return ks_cfg_fail_at(d, ks_cfg_item_field(s->resources, r, "weight"), line, field,
                                  "Invalid value: %lld: resource weight of %s not in valid range (0, 100]",
                                  (long long)a->resources[r].weight, ks_intern_str(a->resources[r].name));
        }
    }
    if (a->strategy == KS_SCORING_REQUESTED_TO_CAPACITY_RATIO) {
        if (!s->rtcr)
            return ks_cfg_fail_at(d, s->strategy, line, "scoringStrategy.requestedToCapacityRatio",
                                  "Required value: must be specified when type is RequestedToCapacityRatio");
        size_t saved = d->plen;
        ks_dec_push(d, "scoringStrategy.requestedToCapacityRatio.shape");
        rc = ks_cfg_check_shape(d, s->shape, s->rtcr->line, a->nshape, a->shape);
        ks_dec_pop(d, saved);
        return rc;
    }
    if (s->rtcr)
        return ks_cfg_fail_at(d, s->rtcr, line, "scoringStrategy.requestedToCapacityRatio",
                              "Forbidden: must be nil when type is not RequestedToCapacityRatio");
    return 0;
}

static int args_decode(struct ks_decoder *d, const struct ks_yaml_node *node, const char *api_version,
                       struct ks_noderesourcesfit_args *a)
{
    static const char *const fields[] = {"ignoredResources", "ignoredResourceGroups", "scoringStrategy",
                                         NULL};
    struct fit_src s = {.type = ""};
    enum ks_config_version version;
    int rc;

    if ((rc = ks_cfg_args_begin(d, node, "NodeResourcesFitArgs", api_version, fields, &version)) ||
        (rc = ks_dec_id_list(d, node, "ignoredResources", &a->nignored_resources, &a->ignored_resources)) ||
        (rc = ks_dec_string_list(d, node, "ignoredResourceGroups", &a->nignored_resource_groups,
                                 &a->ignored_resource_groups)) ||
        (rc = ks_dec_map(d, node, "scoringStrategy", &s.strategy)))
        return rc;
    if (s.strategy && (rc = decode_strategy(d, a, &s)))
        return rc;
    /* SetDefaults_NodeResourcesFitArgs */
    if (!s.strategy)
        s.type = strategy_names[KS_SCORING_LEAST_ALLOCATED];
    if (a->nresources == 0 && (rc = ks_cfg_default_resources(&a->arena, &a->nresources, &a->resources)))
        return ks_dec_nomem(d);
    for (uint32_t r = 0; r < a->nresources; r++) {
        if (a->resources[r].weight == 0)
            a->resources[r].weight = 1;
    }
    if ((rc = check_names(d, node, a)))
        return rc;
    return check_strategy(d, a, &s, node ? node->line : 0);
}

static void args_destroy(void *args)
{
    struct ks_noderesourcesfit_args *a = args;
    if (!a)
        return;
    ks_arena_destroy(&a->arena);
    free(a);
}

static int args_parse(const struct ks_yaml_node *node, const char *api_version, const char *file, void **out,
                      struct ks_error *err)
{
    struct ks_noderesourcesfit_args *a = calloc(1, sizeof(*a));
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
    const struct ks_noderesourcesfit_args *a = args;

    if (a->nignored_resources) {
        ks_yaml_key_seq(o, "ignoredResources");
        for (uint32_t i = 0; i < a->nignored_resources; i++)
            ks_yaml_item_str(o, ks_intern_str(a->ignored_resources[i]));
        ks_yaml_end(o);
    }
    if (a->nignored_resource_groups) {
        ks_yaml_key_seq(o, "ignoredResourceGroups");
        for (uint32_t i = 0; i < a->nignored_resource_groups; i++)
            ks_yaml_item_str(o, a->ignored_resource_groups[i]);
        ks_yaml_end(o);
    }
    ks_yaml_key_map(o, "scoringStrategy");
    ks_yaml_key_str(o, "type", strategy_names[a->strategy]);
    ks_cfg_print_resources(o, "resources", a->nresources, a->resources);
    if (a->has_requested_to_capacity_ratio) {
        ks_yaml_key_map(o, "requestedToCapacityRatio");
        ks_cfg_print_shape(o, "shape", a->nshape, a->shape);
        ks_yaml_end(o);
    }
    ks_yaml_end(o);
}

/* ---- plugin ----------------------------------------------------------------------------------- */

const struct ks_plugin ks_plugin_node_resources_fit = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "NodeResourcesFit",
    .args_parse = args_parse,
    .args_print = args_print,
    .args_destroy = args_destroy,
};
