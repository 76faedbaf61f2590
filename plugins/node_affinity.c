/*
 * node_affinity.c - the NodeAffinity plugin: the pod's node selector and required node
 * affinity as a filter, preferred node affinity as a score, plus a cluster-wide
 * addedAffinity every pod must also satisfy (PreFilter, Filter, PreScore, Score).
 *
 * Mirrors pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go. Args
 * (NodeAffinityArgs): addedAffinity is optional; ValidateNodeAffinityArgs parses its
 * required selector and preferred terms as nodeaffinity.NewNodeSelector and
 * NewPreferredSchedulingTerms do (here through the object decoder's node selector
 * checks). The extension-point ops join this table with the framework runtime.
 */
#include "ksched/api.h"
#include "ksched/config_decode.h"
#include "ksched/intern.h"
#include "ksched/plugin_args.h"
#include "ksched/registry.h"

#include <errno.h>
#include <stdlib.h>

/* ---- args ----------------------------------------------------------------------------------- */

/* Strict decoding of a NodeSelectorTerm: the object decoder ignores unknown fields, args may not. */
static int strict_term(struct ks_decoder *d, const struct ks_yaml_node *term)
{
    static const char *const term_fields[] = {"matchExpressions", "matchFields", NULL};
    static const char *const req_fields[] = {"key", "operator", "values", NULL};
    static const char *const lists[] = {"matchExpressions", "matchFields"};
    int rc;

    if (term->kind != KS_YAML_MAP)
        return 0; /* the decoder reports the shape */
    if ((rc = ks_cfg_strict(d, term, term_fields)))
        return rc;
    for (int l = 0; l < 2; l++) {
        const struct ks_yaml_node *seq = ks_yaml_get(term, lists[l]);
        if (!seq || seq->kind != KS_YAML_SEQ)
            continue;
        size_t saved = ks_dec_push(d, lists[l]);
        for (uint32_t i = 0; i < seq->n; i++) {
            size_t s2 = ks_dec_push_index(d, i);
            if (seq->items[i]->kind == KS_YAML_MAP && (rc = ks_cfg_strict(d, seq->items[i], req_fields)))
                return rc;
            ks_dec_pop(d, s2);
        }
        ks_dec_pop(d, saved);
    }
    return 0;
}

static int decode_required(struct ks_decoder *d, const struct ks_yaml_node *aff, struct ks_node_affinity *na)
{
    static const char *const key = "requiredDuringSchedulingIgnoredDuringExecution";
    static const char *const fields[] = {"nodeSelectorTerms", NULL};
    const struct ks_yaml_node *req = NULL;
    int rc;

    if ((rc = ks_dec_map(d, aff, key, &req)) || !req)
        return rc;
    size_t saved = ks_dec_push(d, key);
    if ((rc = ks_cfg_strict(d, req, fields)))
        return rc;
    const struct ks_yaml_node *terms = ks_yaml_get(req, "nodeSelectorTerms");
    if (terms && terms->kind == KS_YAML_SEQ) {
        size_t s2 = ks_dec_push(d, "nodeSelectorTerms");
        for (uint32_t i = 0; i < terms->n; i++) {
            size_t s3 = ks_dec_push_index(d, i);
            if ((rc = strict_term(d, terms->items[i])))
                return rc;
            ks_dec_pop(d, s3);
        }
        ks_dec_pop(d, s2);
    }
    ks_dec_pop(d, saved);
    return ks_dec_node_selector(d, aff, key, &na->required);
}

static int decode_preferred(struct ks_decoder *d, const struct ks_yaml_node *aff, struct ks_node_affinity *na)
{
    static const char *const key = "preferredDuringSchedulingIgnoredDuringExecution";
    static const char *const fields[] = {"weight", "preference", NULL};
    const struct ks_yaml_node *seq = NULL;
    int rc;

    if ((rc = ks_dec_seq(d, aff, key, &seq)) || !seq)
        return rc;
    na->preferred = ks_arena_calloc(d->arena, seq->n ? seq->n : 1, sizeof(*na->preferred));
    if (!na->preferred)
        return ks_dec_nomem(d);
    size_t saved = ks_dec_push(d, key);
    for (uint32_t i = 0; i < seq->n; i++) {
        const struct ks_yaml_node *item = seq->items[i], *pref = NULL;
        struct ks_preferred_term *t = &na->preferred[i];
        size_t s2 = ks_dec_push_index(d, i);
        if ((rc = ks_cfg_strict(d, item, fields)) || (rc = ks_dec_int32(d, item, "weight", &t->weight)) ||
            (rc = ks_dec_map(d, item, "preference", &pref)))
            return rc;
        if (pref) {
            size_t s3 = ks_dec_push(d, "preference");
            if ((rc = strict_term(d, pref)) || (rc = ks_dec_node_selector_term(d, pref, &t->term)))
                return rc;
            ks_dec_pop(d, s3);
        }
        ks_dec_pop(d, s2);
    }
    ks_dec_pop(d, saved);
    na->npreferred = seq->n;
    return 0;
}

static int args_decode(struct ks_decoder *d, const struct ks_yaml_node *node, const char *api_version,
                       struct ks_nodeaffinity_args *a)
{
    static const char *const fields[] = {"addedAffinity", NULL};
    static const char *const aff_fields[] = {"requiredDuringSchedulingIgnoredDuringExecution",
                                             "preferredDuringSchedulingIgnoredDuringExecution", NULL};
    const struct ks_yaml_node *aff = NULL;
    enum ks_config_version version;
    int rc;

    if ((rc = ks_cfg_args_begin(d, node, "NodeAffinityArgs", api_version, fields, &version)) ||
        (rc = ks_dec_map(d, node, "addedAffinity", &aff)) || !aff)
        return rc;
    if (!(a->added_affinity = ks_arena_alloc(d->arena, sizeof(*a->added_affinity))))
        return ks_dec_nomem(d);
    size_t saved = ks_dec_push(d, "addedAffinity");
    if ((rc = ks_cfg_strict(d, aff, aff_fields)) || (rc = decode_required(d, aff, a->added_affinity)) ||
        (rc = decode_preferred(d, aff, a->added_affinity)))
        return rc;
    ks_dec_pop(d, saved);
    return 0;
}

KS_DEFINE_ARGS_OPS(struct ks_nodeaffinity_args, args_decode)

static void print_requirements(struct ks_yaml_out *o, const char *key, uint32_t n,
                               const struct ks_requirement *reqs)
{
    if (n == 0)
        return;
    ks_yaml_key_seq(o, key);
    for (uint32_t i = 0; i < n; i++) {
        ks_yaml_item_map(o);
        ks_yaml_key_str(o, "key", ks_intern_str(reqs[i].key));
        ks_yaml_key_str(o, "operator", ks_selector_op_name(reqs[i].op));
        if (reqs[i].nvalues) {
            ks_yaml_key_seq(o, "values");
            for (uint32_t v = 0; v < reqs[i].nvalues; v++)
                ks_yaml_item_str(o, ks_intern_str(reqs[i].values[v]));
            ks_yaml_end(o);
        }
        ks_yaml_end(o);
    }
    ks_yaml_end(o);
}

static void print_term(struct ks_yaml_out *o, const struct ks_node_selector_term *t)
{
    print_requirements(o, "matchExpressions", t->nexprs, t->exprs);
    print_requirements(o, "matchFields", t->nfields, t->fields);
}

static void args_print(const void *args, struct ks_yaml_out *o)
{
    const struct ks_node_affinity *na = ((const struct ks_nodeaffinity_args *)args)->added_affinity;

    if (!na)
        return;
    ks_yaml_key_map(o, "addedAffinity");
    if (na->required) {
        ks_yaml_key_map(o, "requiredDuringSchedulingIgnoredDuringExecution");
        ks_yaml_key_seq(o, "nodeSelectorTerms");
        for (uint32_t i = 0; i < na->required->nterms; i++) {
            ks_yaml_item_map(o);
            print_term(o, &na->required->terms[i]);
            ks_yaml_end(o);
        }
        ks_yaml_end(o);
        ks_yaml_end(o);
    }
    if (na->npreferred) {
        ks_yaml_key_seq(o, "preferredDuringSchedulingIgnoredDuringExecution");
        for (uint32_t i = 0; i < na->npreferred; i++) {
            ks_yaml_item_map(o);
            ks_yaml_key_int(o, "weight", na->preferred[i].weight);
            ks_yaml_key_map(o, "preference");
            print_term(o, &na->preferred[i].term);
            ks_yaml_end(o);
            ks_yaml_end(o);
        }
        ks_yaml_end(o);
    }
    ks_yaml_end(o);
}

/* ---- plugin ----------------------------------------------------------------------------------- */

const struct ks_plugin ks_plugin_node_affinity = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "NodeAffinity",
    .args_parse = args_parse,
    .args_print = args_print,
    .args_destroy = args_destroy,
};
