/*
 * helper_node_affinity.c - parsing checks and matching of node selector terms with the
 * semantics of component-helpers' nodeaffinity package (see
 * ksched/plugin_helpers_node_affinity.h).
 *
 * Mirrors k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go and
 * the label checks of apimachinery's labels.NewRequirement (validateLabelKey,
 * validateLabelValue). Upstream aggregates every error of a term list; so does
 * ks_preferred_terms_error (errors.NewAggregate's format: one message alone, several in
 * brackets joined by ", ").
 *
 * Context: any thread; allocation-free.
 */
#include "ksched/plugin_helpers_node_affinity.h"

#include <stdio.h>
#include <string.h>

#include "ksched/api.h"
#include "ksched/base/intern.h"

/* Append ", "-separated @msg to @buf. */
static void append(char *buf, size_t len, uint32_t *nerr, const char *msg)
{
    size_t used = strlen(buf);
    if (used < len)
        snprintf(buf + used, len - used, "%s%s", *nerr ? ", " : "", msg);
    ++*nerr;
}

uint32_t ks_node_selector_term_errors(const struct ks_node_selector_term *t, const char *path, char *buf,
                                      size_t len, uint32_t *nerr)
{
    char why[512], msg[1024];
    uint32_t before = *nerr;

    for (uint32_t i = 0; i < t->nexprs; i++) {
        const struct ks_requirement *r = &t->exprs[i];
        const char *key = ks_intern_str(r->key);
        if (!ks_qualified_name_ok(key, why, sizeof(why))) {
            snprintf(msg, sizeof(msg), "%s.matchExpressions[%u].key: Invalid value: \"%s\": %s", path, i, key,
                     why);
            append(buf, len, nerr, msg);
        }
        for (uint32_t v = 0; v < r->nvalues; v++) {
            const char *value = ks_intern_str(r->values[v]);
            if (ks_label_value_ok(value, why, sizeof(why)))
                continue;
            snprintf(msg, sizeof(msg), "%s.matchExpressions[%u].values[%u][%s]: Invalid value: \"%s\": %s",
                     path, i, v, key, value, why);
            append(buf, len, nerr, msg);
        }
    }
    return *nerr - before;
}

bool ks_node_selector_term_valid(const struct ks_node_selector_term *t)
{
    char why[512];

    for (uint32_t i = 0; i < t->nexprs; i++) {
        const struct ks_requirement *r = &t->exprs[i];
        if (!ks_qualified_name_ok(ks_intern_str(r->key), why, sizeof(why)))
            return false;
        for (uint32_t v = 0; v < r->nvalues; v++) {
            if (!ks_label_value_ok(ks_intern_str(r->values[v]), why, sizeof(why)))
                return false;
        }
    }
    return true;
}

bool ks_preferred_terms_error(const struct ks_preferred_term *terms, uint32_t n, char *buf, size_t len)
{
    char inner[2048] = "", path[32];
    uint32_t nerr = 0;

    for (uint32_t i = 0; i < n; i++) {
        const struct ks_node_selector_term *t = &terms[i].term;
        if (terms[i].weight == 0 || (t->nexprs == 0 && t->nfields == 0))
            continue;
        snprintf(path, sizeof(path), "[%u]", i);
        ks_node_selector_term_errors(t, path, inner, sizeof(inner), &nerr);
    }
    if (nerr == 0)
        return false;
    snprintf(buf, len, nerr == 1 ? "%s" : "[%s]", inner);
    return true;
}

bool ks_node_selector_matches_parsed(const struct ks_node_selector *sel, const bool *valid,
                                     const struct ks_labels *labels, uint32_t node_name)
{
    if (!sel)
        return false;
    for (uint32_t i = 0; i < sel->nterms; i++) {
        const struct ks_node_selector_term *t = &sel->terms[i];
        if (!(valid ? valid[i] : ks_node_selector_term_valid(t)))
            continue;
        if (ks_node_selector_term_matches(t, labels, node_name))
            return true;
    }
    return false;
}

bool ks_labels_superset(const struct ks_labels *set, const struct ks_labels *labels)
{
    for (uint32_t i = 0; i < set->n; i++) {
        uint32_t value;
        if (!ks_labels_get(labels, set->items[i].key, &value) || value != set->items[i].value)
            return false;
    }
    return true;
}
