/*
 * toleration.c - whether tolerations tolerate taints.
 *
 * Mirrors k8s.io/api/core/v1/toleration.go (Toleration.ToleratesTaint) and
 * k8s.io/component-helpers/scheduling/corev1/helpers.go (TolerationsTolerateTaint,
 * FindMatchingUntoleratedTaint). Keys, values and effects are compared as interned ids
 * and enum values; nothing here allocates or locks, so it is safe on the hot path.
 *
 * Only the Equal and Exists operators exist in struct ks_toleration; upstream's Lt/Gt
 * comparison operators (behind the TaintTolerationComparisonOperators gate) are not
 * modelled.
 */
#include "ksched/api.h"
#include "ksched/base/intern.h"

bool ks_node_taints_equal(const struct ks_node *a, const struct ks_node *b)
{
    if (a->ntaints != b->ntaints)
        return false;
    for (uint32_t i = 0; i < a->ntaints; i++) {
        const struct ks_taint *x = &a->taints[i], *y = &b->taints[i];
        if (x->key != y->key || x->value != y->value || x->effect != y->effect)
            return false;
    }
    return true;
}

bool ks_toleration_tolerates(const struct ks_toleration *tol, const struct ks_taint *taint)
{
    /* An empty effect tolerates every effect. */
    if (tol->effect != KS_EFFECT_NONE && tol->effect != taint->effect)
        return false;
    /* An empty key tolerates every key; validation pairs it with Exists, but it is not enforced here. */
    if (tol->key != KS_ID_EMPTY && tol->key != taint->key)
        return false;
    switch (tol->op) {
    case KS_TOLERATION_EQUAL:
        return tol->value == taint->value;
    case KS_TOLERATION_EXISTS:
        return true;
    }
    return false;
}

/* Whether any of @tols tolerates @taint. */
static bool tolerated(const struct ks_taint *taint, const struct ks_toleration *tols, uint32_t ntols)
{
    for (uint32_t i = 0; i < ntols; i++) {
        if (ks_toleration_tolerates(&tols[i], taint))
            return true;
    }
    return false;
}

const struct ks_taint *ks_find_untolerated_taint(const struct ks_taint *taints, uint32_t ntaints,
                                                 const struct ks_toleration *tols, uint32_t ntols,
                                                 bool (*effect_filter)(enum ks_taint_effect))
{
    for (uint32_t i = 0; i < ntaints; i++) {
        if (effect_filter && !effect_filter(taints[i].effect))
            continue;
        if (!tolerated(&taints[i], tols, ntols))
            return &taints[i];
    }
    return NULL;
}
