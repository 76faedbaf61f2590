/*
 * pod_topology_spread.c - the PodTopologySpread plugin: topology spread constraints as a
 * filter (DoNotSchedule) and a score (ScheduleAnyway), with cluster default constraints
 * for pods that define none (PreFilter, Filter, PreScore, Score).
 *
 * Mirrors pkg/scheduler/framework/plugins/podtopologyspread/plugin.go. Args
 * (PodTopologySpreadArgs): defaultingType defaults to System
 * (SetDefaults_PodTopologySpreadArgs); ValidatePodTopologySpreadArgs requires System or
 * List, no constraints with System, and per constraint a positive maxSkew, a valid
 * topologyKey, a known whenUnsatisfiable, no labelSelector (it is derived per pod) and no
 * repeated {topologyKey, whenUnsatisfiable}. The extension-point ops join this table with
 * the framework runtime.
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

static const char *const policy_names[] = {"", "Honor", "Ignore", NULL}; /* enum ks_inclusion_policy */
static const char *const action_names[] = {"DoNotSchedule",
                                           "ScheduleAnyway"}; /* enum ks_unsatisfiable_action */

static int decode_constraint(struct ks_decoder *d, const struct ks_yaml_node *n,
                             struct ks_spread_constraint *c, const char **when)
{
    static const char *const fields[] = {"maxSkew",          "topologyKey",    "whenUnsatisfiable",
                                         "labelSelector",    "minDomains",     "nodeAffinityPolicy",
                                         "nodeTaintsPolicy", "matchLabelKeys", NULL};
    int affinity = KS_POLICY_UNSET, taints = KS_POLICY_UNSET, rc;

    c->topology_key = KS_ID_EMPTY;
    *when = "";
    if ((rc = ks_cfg_strict(d, n, fields)) || (rc = ks_dec_int32(d, n, "maxSkew", &c->max_skew)) ||
        (rc = ks_dec_id(d, n, "topologyKey", &c->topology_key)) ||
        (rc = ks_dec_string(d, n, "whenUnsatisfiable", when)) ||
        (rc = ks_dec_label_selector(d, n, "labelSelector", &c->selector)) ||
        (rc = ks_dec_int32(d, n, "minDomains", &c->min_domains)) ||
        (rc = ks_dec_enum(d, n, "nodeAffinityPolicy", policy_names, &affinity)) ||
        (rc = ks_dec_enum(d, n, "nodeTaintsPolicy", policy_names, &taints)) ||
        (rc = ks_dec_id_list(d, n, "matchLabelKeys", &c->nmatch_label_keys, &c->match_label_keys)))
        return rc;
    c->node_affinity_policy = (enum ks_inclusion_policy)affinity;
    c->node_taints_policy = (enum ks_inclusion_policy)taints;
    return 0;
}

static int check_constraint(struct ks_decoder *d, const struct ks_yaml_node *n,
                            const struct ks_spread_constraint *all, uint32_t i, const char *when)
{
    const struct ks_spread_constraint *c = &all[i];
    const char *key = ks_intern_str(c->topology_key);
    char why[512];

    if (c->max_skew <= 0)
        return ks_cfg_fail_at(d, ks_yaml_get(n, "maxSkew"), n->line, "maxSkew",
                              "Invalid value: %d: not in valid range (0, inf)", c->max_skew);
    if (!*key)
        return ks_cfg_fail_at(d, ks_yaml_get(n, "topologyKey"), n->line, "topologyKey",
                              "Required value: can not be empty");
    if (!ks_cfg_qualified_name(key, why, sizeof(why)))
        return ks_cfg_fail_at(d, ks_yaml_get(n, "topologyKey"), n->line, "topologyKey",
                              "Invalid value: \"%s\": %s", key, why);
    if (!*when)
        return ks_cfg_fail_at(d, ks_yaml_get(n, "whenUnsatisfiable"), n->line, "whenUnsatisfiable",
                              "Required value: can not be empty");
    if (strcmp(when, action_names[KS_DO_NOT_SCHEDULE]) != 0 &&
        strcmp(when, action_names[KS_SCHEDULE_ANYWAY]) != 0)
        return ks_cfg_fail_at(
            d, ks_yaml_get(n, "whenUnsatisfiable"), n->line, "whenUnsatisfiable",
            "Unsupported value: \"%s\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\"", when);
    if (c->selector)
        return ks_cfg_fail_at(
            d, ks_yaml_get(n, "labelSelector"), n->line, "labelSelector",
            "Forbidden: constraint must not define a selector, as they deduced for each pod");
    for (uint32_t k = 0; k < i; k++) {
        if (all[k].topology_key == c->topology_key && all[k].when_unsatisfiable == c->when_unsatisfiable)
            return ks_cfg_fail_at(d, n, 0, NULL, "Duplicate value: \"{%s, %s}\"", key, when);
    }
    return 0;
}

static int args_decode(struct ks_decoder *d, const struct ks_yaml_node *node, const char *api_version,
                       struct ks_podtopologyspread_args *a)
{
    static const char *const fields[] = {"defaultConstraints", "defaultingType", NULL};
    const struct ks_yaml_node *seq = NULL;
    const char *type = NULL;
    enum ks_config_version version;
    int rc;

    if ((rc = ks_cfg_args_begin(d, node, "PodTopologySpreadArgs", api_version, fields, &version)) ||
        (rc = ks_dec_seq(d, node, "defaultConstraints", &seq)) ||
        (rc = ks_dec_string(d, node, "defaultingType", &type)))
        return rc;
    uint32_t n = seq ? seq->n : 0;
    const char **when = ks_arena_calloc(d->arena, n ? n : 1, sizeof(*when));
    a->default_constraints = ks_arena_calloc(d->arena, n ? n : 1, sizeof(*a->default_constraints));
    if (!when || !a->default_constraints)
        return ks_dec_nomem(d);
    size_t saved = ks_dec_push(d, "defaultConstraints");
    for (uint32_t i = 0; i < n; i++) {
        size_t s2 = ks_dec_push_index(d, i);
        if ((rc = decode_constraint(d, seq->items[i], &a->default_constraints[i], &when[i])))
            return rc;
        ks_dec_pop(d, s2);
    }
    ks_dec_pop(d, saved);
    a->nconstraints = n;

    /* SetDefaults_PodTopologySpreadArgs, then ValidatePodTopologySpreadArgs */
    if (!type || !*type)
        type = "System";
    const struct ks_yaml_node *tn = ks_yaml_get(node, "defaultingType");
    int line = node ? node->line : 0;
    if (strcmp(type, "System") != 0 && strcmp(type, "List") != 0)
        return ks_cfg_fail_at(d, tn, line, "defaultingType",
                              "Unsupported value: \"%s\": supported values: \"System\", \"List\"", type);
    a->defaulting = strcmp(type, "List") == 0 ? KS_SPREAD_DEFAULTING_LIST : KS_SPREAD_DEFAULTING_SYSTEM;
    if (a->defaulting == KS_SPREAD_DEFAULTING_SYSTEM && n > 0)
        return ks_cfg_fail_at(d, tn, line, "defaultingType",
                              "Invalid value: \"System\": when .defaultConstraints are not empty");
    saved = ks_dec_push(d, "defaultConstraints");
    for (uint32_t i = 0; i < n; i++) {
        struct ks_spread_constraint *c = &a->default_constraints[i];
        c->when_unsatisfiable =
            strcmp(when[i], action_names[KS_SCHEDULE_ANYWAY]) == 0 ? KS_SCHEDULE_ANYWAY : KS_DO_NOT_SCHEDULE;
        size_t s2 = ks_dec_push_index(d, i);
        if ((rc = check_constraint(d, seq->items[i], a->default_constraints, i, when[i])))
            return rc;
        ks_dec_pop(d, s2);
    }
    ks_dec_pop(d, saved);
    return 0;
}

KS_DEFINE_ARGS_OPS(struct ks_podtopologyspread_args, args_decode)

static void args_print(const void *args, struct ks_yaml_out *o)
{
    const struct ks_podtopologyspread_args *a = args;

    if (a->nconstraints) {
        ks_yaml_key_seq(o, "defaultConstraints");
        for (uint32_t i = 0; i < a->nconstraints; i++) {
            const struct ks_spread_constraint *c = &a->default_constraints[i];
            ks_yaml_item_map(o);
            ks_yaml_key_int(o, "maxSkew", c->max_skew);
            ks_yaml_key_str(o, "topologyKey", ks_intern_str(c->topology_key));
            ks_yaml_key_str(o, "whenUnsatisfiable", action_names[c->when_unsatisfiable]);
            if (c->min_domains)
                ks_yaml_key_int(o, "minDomains", c->min_domains);
            if (c->node_affinity_policy != KS_POLICY_UNSET)
                ks_yaml_key_str(o, "nodeAffinityPolicy", policy_names[c->node_affinity_policy]);
            if (c->node_taints_policy != KS_POLICY_UNSET)
                ks_yaml_key_str(o, "nodeTaintsPolicy", policy_names[c->node_taints_policy]);
            if (c->nmatch_label_keys) {
                ks_yaml_key_seq(o, "matchLabelKeys");
                for (uint32_t k = 0; k < c->nmatch_label_keys; k++)
                    ks_yaml_item_str(o, ks_intern_str(c->match_label_keys[k]));
                ks_yaml_end(o);
            }
            ks_yaml_end(o);
        }
        ks_yaml_end(o);
    }
    ks_yaml_key_str(o, "defaultingType", a->defaulting == KS_SPREAD_DEFAULTING_LIST ? "List" : "System");
}

/* ---- plugin ----------------------------------------------------------------------------------- */

const struct ks_plugin ks_plugin_pod_topology_spread = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "PodTopologySpread",
    .args_parse = args_parse,
    .args_print = args_print,
    .args_destroy = args_destroy,
};
