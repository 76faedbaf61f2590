/*
 * decode_policy.c - PodDisruptionBudget (policy/v1), Namespace (v1) and PriorityClass
 * (scheduling.k8s.io/v1): what preemption, namespaceSelector and priority resolution read.
 */
#include "ksched/api.h"
#include "ksched/internal/decode.h"

#include <stdio.h>
#include <string.h>

/* An intOrString field: an integer, or a string "N%". */
static int int_or_percent(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key,
                          struct ks_int_or_percent *out)
{
    const struct ks_yaml_node *n = ks_yaml_get(map, key);
    if (ks_yaml_is_null(n))
        return 0;
    size_t saved = ks_dec_push(d, key);
    if (n->kind != KS_YAML_SCALAR)
        return ks_dec_fail(d, n, 0, "expected an integer or a percentage, found %s", ks_yaml_kind_name(n));
    int value, used = 0;
    char number[64];
    /* a number as kubectl sends it (1e1 is 10), or a string "N%" */
    bool is_number = ks_dec_number_text(n, number, sizeof(number)) == 0;
    const char *text = is_number ? number : n->str;
    out->set = true;
    out->percent = !is_number && n->len > 0 && n->str[n->len - 1] == '%';
    if (sscanf(text, "%d%n", &value, &used) != 1 || used != (int)strlen(text) - (out->percent ? 1 : 0) ||
        value < 0 || (out->percent && value > 100) || (!out->percent && !is_number))
        return ks_dec_fail(d, n, 0, "invalid value \"%s\": want a non-negative integer or a percentage",
                           n->str);
    out->value = value;
    ks_dec_pop(d, saved);
    return 0;
}

static int pdb_body(struct ks_decoder *d, const struct ks_yaml_node *doc,
                    struct ks_pod_disruption_budget *pdb)
{
    const struct ks_yaml_node *spec = NULL, *status = NULL, *disrupted = NULL;
    int rc;

    if ((rc = ks_dec_meta(d, doc, true, &pdb->meta)) || (rc = ks_dec_map(d, doc, "spec", &spec)) ||
        (rc = ks_dec_map(d, doc, "status", &status)))
        return rc;
    if (spec) {
        size_t saved = ks_dec_push(d, "spec");
        if ((rc = ks_dec_label_selector(d, spec, "selector", &pdb->selector)) ||
            (rc = int_or_percent(d, spec, "minAvailable", &pdb->min_available)) ||
            (rc = int_or_percent(d, spec, "maxUnavailable", &pdb->max_unavailable)))
            return rc;
        if (pdb->min_available.set && pdb->max_unavailable.set)
            return ks_dec_fail(d, spec, 0, "minAvailable and maxUnavailable cannot be both set");
        ks_dec_pop(d, saved);
    }
    if (status) {
        size_t saved = ks_dec_push(d, "status");
        if ((rc = ks_dec_int32(d, status, "disruptionsAllowed", &pdb->disruptions_allowed)) ||
            (rc = ks_dec_map(d, status, "disruptedPods", &disrupted)))
            return rc;
        if (disrupted) {
            pdb->ndisrupted = disrupted->n;
            if (!(pdb->disrupted_pods =
                      ks_arena_calloc(d->arena, disrupted->n ? disrupted->n : 1, sizeof(char *))))
                return ks_dec_nomem(d);
            for (uint32_t i = 0; i < disrupted->n; i++) {
                const struct ks_yaml_node *k = disrupted->pairs[i].key;
                if (!(pdb->disrupted_pods[i] = ks_arena_strndup(d->arena, k->str, k->len)))
                    return ks_dec_nomem(d);
            }
        }
        ks_dec_pop(d, saved);
    }
    return 0;
}

static int namespace_body(struct ks_decoder *d, const struct ks_yaml_node *doc, struct ks_namespace *ns)
{
    return ks_dec_meta(d, doc, false, &ns->meta);
}

static int priority_class_body(struct ks_decoder *d, const struct ks_yaml_node *doc,
                               struct ks_priority_class *pc)
{
    static const char *const policies[] = {"PreemptLowerPriority", "Never", NULL};
    int policy = -1, rc;

    if ((rc = ks_dec_meta(d, doc, false, &pc->meta)) || (rc = ks_dec_int32(d, doc, "value", &pc->value)) ||
        (rc = ks_dec_bool(d, doc, "globalDefault", &pc->global_default)) ||
        (rc = ks_dec_enum(d, doc, "preemptionPolicy", policies, &policy)))
        return rc;
    if (!ks_yaml_get(doc, "value"))
        return ks_dec_required(d, doc, "value");
    pc->has_preemption_policy = policy >= 0;
    pc->preemption_policy = policy == 1 ? KS_PREEMPT_NEVER : KS_PREEMPT_LOWER_PRIORITY;
    return 0;
}

KS_DEFINE_DECODER(ks_decode_pdb, struct ks_pod_disruption_budget, ks_pdb_destroy, pdb_body)
KS_DEFINE_DECODER(ks_decode_namespace, struct ks_namespace, ks_namespace_destroy, namespace_body)
KS_DEFINE_DECODER(ks_decode_priority_class, struct ks_priority_class, ks_priority_class_destroy,
                  priority_class_body)
