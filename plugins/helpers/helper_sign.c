/*
 * helper_sign.c - signature pieces shared by the in-tree plugins' sign ops; see
 * ksched/plugin_helpers_sign.h.
 *
 * Invariant: each function appends a prefix-free encoding (fixed-width fields, a count
 * before every list, a presence word before every optional part), so equal bytes mean
 * equal inputs field by field. No upstream counterpart: upstream's SignPlugin results
 * (KEP-5598) are compared as values, ksched's as bytes.
 */
#include "ksched/plugin_helpers_sign.h"

#include "ksched/framework_types.h"

void ks_sign_labels(struct ks_sign *sig, const struct ks_labels *labels)
{
    ks_sign_u32(sig, labels->n);
    for (uint32_t i = 0; i < labels->n; i++) {
        ks_sign_u32(sig, labels->items[i].key);
        ks_sign_u32(sig, labels->items[i].value);
    }
}

void ks_sign_requirements(struct ks_sign *sig, const struct ks_requirement *reqs, uint32_t n)
{
    ks_sign_u32(sig, n);
    for (uint32_t i = 0; i < n; i++) {
        const struct ks_requirement *r = &reqs[i];
        ks_sign_u32(sig, r->key);
        ks_sign_u32(sig, (uint32_t)r->op);
        ks_sign_u32(sig, r->nvalues);
        ks_sign_bytes(sig, r->values, (size_t)r->nvalues * sizeof(*r->values));
        ks_sign_i64(sig, r->number);
    }
}

void ks_sign_node_selector_term(struct ks_sign *sig, const struct ks_node_selector_term *term)
{
    ks_sign_requirements(sig, term->exprs, term->nexprs);
    ks_sign_requirements(sig, term->fields, term->nfields);
}

void ks_sign_node_selector(struct ks_sign *sig, const struct ks_node_selector *sel)
{
    if (!sel) {
        ks_sign_u32(sig, UINT32_MAX);
        return;
    }
    ks_sign_u32(sig, sel->nterms);
    for (uint32_t i = 0; i < sel->nterms; i++)
        ks_sign_node_selector_term(sig, &sel->terms[i]);
}

void ks_sign_tolerations(struct ks_sign *sig, const struct ks_toleration *tols, uint32_t n)
{
    ks_sign_u32(sig, n);
    for (uint32_t i = 0; i < n; i++) {
        ks_sign_u32(sig, tols[i].key);
        ks_sign_u32(sig, (uint32_t)tols[i].op);
        ks_sign_u32(sig, tols[i].value);
        ks_sign_u32(sig, (uint32_t)tols[i].effect);
    }
}

void ks_sign_res_requests(struct ks_sign *sig, const struct ks_res_spec *res, uint32_t n, bool use_requested,
                          const struct ks_pod *pod)
{
    ks_sign_u32(sig, n);
    for (uint32_t i = 0; i < n; i++)
        ks_sign_i64(sig, ks_res_pod_request(&res[i], use_requested, pod));
}

int ks_sign_no_volumes(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                       struct ks_sign *sig)
{
    (void)self;
    (void)cs;
    (void)sig;
    for (uint32_t i = 0; i < pod->nvolumes; i++) {
        if (pod->volumes[i].kind != KS_VOLUME_OTHER)
            return KS_SKIP;
    }
    return KS_SUCCESS;
}
