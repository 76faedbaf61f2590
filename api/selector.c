/*
 * selector.c - label sets, label selectors and node selectors over interned ids.
 *
 * Implements the matching half of include/ksched/api.h for labels: a label lookup, a
 * metav1.LabelSelector match and a v1.NodeSelector match (expressions on labels, fields on
 * the node name). Mirrors k8s.io/apimachinery/pkg/labels/selector.go (Requirement.Matches,
 * internalSelector.Matches) and
 * k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go
 * (LazyErrorNodeSelector.Match, nodeSelectorTerm.match, the field selector built from
 * matchFields).
 *
 * Invariants relied on: label sets are sorted by key id with unique keys; requirement
 * values (In, NotIn) are sorted ids; Gt and Lt carry their operand already parsed in
 * `number`. Everything here reads immutable objects, allocates nothing and takes no lock,
 * so it is safe on the per-node hot path from any thread.
 *
 * Requirements that upstream could not even construct (labels.NewRequirement errors: In or
 * NotIn without values, Exists or DoesNotExist with values, field requirements other than
 * In/NotIn with exactly one value, Gt/Lt in a metav1.LabelSelector) never match here, which
 * is what upstream's lazy parse errors amount to for a term. Syntax checks of keys and
 * values belong to the loader.
 */
#include "ksched/api.h"
#include "ksched/base/intern.h"

#include <stdint.h>

bool ks_labels_get(const struct ks_labels *labels, uint32_t key, uint32_t *value)
{
    uint32_t lo = 0, hi = labels->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        uint32_t k = labels->items[mid].key;
        if (k == key) {
            if (value)
                *value = labels->items[mid].value;
            return true;
        }
        if (k < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

bool ks_labels_equal(const struct ks_labels *a, const struct ks_labels *b)
{
    if (a->n != b->n)
        return false;
    for (uint32_t i = 0; i < a->n; i++) {
        if (a->items[i].key != b->items[i].key || a->items[i].value != b->items[i].value)
            return false;
    }
    return true;
}

/*
 * Parse @s as Go's strconv.ParseInt(s, 10, 64) does: an optional sign, then one or more
 * decimal digits, no spaces, no underscores, no base prefix, and within int64.
 */
static bool parse_int64(const char *s, int64_t *out)
{
    bool neg = false;
    if (*s == '+' || *s == '-') {
        neg = *s == '-';
        s++;
    }
    if (*s == '\0')
        return false;
    const uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
        uint64_t d = (uint64_t)(*s - '0');
        if (v > (limit - d) / 10)
            return false;
        v = v * 10 + d;
    }
    if (neg)
        *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    else
        *out = (int64_t)v;
    return true;
}

/* One requirement on a label set, as labels.Requirement.Matches for a well-formed requirement. */
static bool requirement_matches(const struct ks_requirement *r, const struct ks_labels *labels)
{
    uint32_t value;
    switch (r->op) {
    case KS_OP_IN:
        if (r->nvalues == 0)
            return false;
        return ks_labels_get(labels, r->key, &value) && ks_ids_contain(r->values, r->nvalues, value);
    case KS_OP_NOT_IN:
        if (r->nvalues == 0)
            return false;
        /* An absent key satisfies NotIn. */
        return !ks_labels_get(labels, r->key, &value) || !ks_ids_contain(r->values, r->nvalues, value);
    case KS_OP_EXISTS:
        return r->nvalues == 0 && ks_labels_get(labels, r->key, NULL);
    case KS_OP_DOES_NOT_EXIST:
        return r->nvalues == 0 && !ks_labels_get(labels, r->key, NULL);
    case KS_OP_GT:
    case KS_OP_LT: {
        int64_t n;
        if (!ks_labels_get(labels, r->key, &value) || !parse_int64(ks_intern_str(value), &n))
            return false;
        return r->op == KS_OP_GT ? n > r->number : n < r->number;
    }
    }
    return false;
}

bool ks_label_selector_matches(const struct ks_label_selector *sel, const struct ks_labels *labels)
{
    if (!sel)
        return false;
    for (uint32_t i = 0; i < sel->nreqs; i++) {
        const struct ks_requirement *r = &sel->reqs[i];
        /* metav1.LabelSelector knows only the four set operators. */
        if (r->op == KS_OP_GT || r->op == KS_OP_LT)
            return false;
        if (!requirement_matches(r, labels))
            return false;
    }
    return true;
}

/*
 * One matchFields requirement against the node's fields. The only field a node has is
 * metadata.name; any other key reads as "", as fields.Set.Get does.
 */
static bool field_matches(const struct ks_requirement *r, uint32_t node_name)
{
    uint32_t field = r->key == ks_wk.metadata_name ? node_name : KS_ID_EMPTY;
    if (r->op == KS_OP_IN)
        return field == r->values[0];
    return field != r->values[0];
}

bool ks_node_selector_term_matches(const struct ks_node_selector_term *term, const struct ks_labels *labels,
                                   uint32_t node_name)
{
    if (term->nexprs == 0 && term->nfields == 0)
        return false;
    for (uint32_t i = 0; i < term->nexprs; i++) {
        if (!requirement_matches(&term->exprs[i], labels))
            return false;
    }
    for (uint32_t i = 0; i < term->nfields; i++) {
        const struct ks_requirement *r = &term->fields[i];
        /* A field requirement is In or NotIn with exactly one value, or the term is invalid. */
        if ((r->op != KS_OP_IN && r->op != KS_OP_NOT_IN) || r->nvalues != 1)
            return false;
        /* A node without a name has no fields, and upstream then skips matchFields. */
        if (node_name != KS_ID_EMPTY && !field_matches(r, node_name))
            return false;
    }
    return true;
}

bool ks_node_selector_matches(const struct ks_node_selector *sel, const struct ks_labels *labels,
                              uint32_t node_name)
{
    if (!sel)
        return false;
    for (uint32_t i = 0; i < sel->nterms; i++) {
        if (ks_node_selector_term_matches(&sel->terms[i], labels, node_name))
            return true;
    }
    return false;
}
