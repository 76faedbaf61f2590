/*
 * results.c - the AllocationResult of each claim once the search found a solution, as
 * upstream's Allocate builds them: the device results (request names, admin access, the
 * tolerations, share ids, consumed capacity, binding conditions), the configs of the classes
 * and claims that apply to the requests picked, and the node selector of the devices'
 * slices (the node's own name for node-local devices, otherwise the slices' selectors
 * merged into one term).
 *
 * Share ids (results of devices that allow multiple allocations) are upstream's random
 * UUIDs made deterministic: the hash of the claim's uid (namespace/name without one), the
 * result's index in the claim, its request name and the device's driver/pool/device,
 * formatted as an RFC 9562 version-8 UUID.
 *
 * Context: as ks_dra_allocate_prepared(); everything in the scratch's bump. Mirrors
 * allocator_incubating.go's Allocate (the result loop) and createNodeSelector.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ksched/base/intern.h"

#include "allocate_run.h"

/* ---- results
 * ------------------------------------------------------------------------------------------------ */

static uint64_t mix64(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

static const char *share_id(struct run *R, const struct dra_claim *cl, uint32_t idx, const struct res *r)
{
    const struct ks_resource_claim *c = cl->obj;
    const char *who = c->meta.uid && c->meta.uid[0] ? c->meta.uid : cl->kobj;
    const struct dra_dev *d = dev_of(R, r->k);
    char buf[1024];
    int n =
        snprintf(buf, sizeof(buf), "%s\n%u\n%s\n%s/%s/%s", who, idx, r->sp->full_name,
                 ks_intern_str(d->slice->driver), ks_intern_str(d->slice->pool), ks_intern_str(d->dev->name));
    size_t len = n < 0 ? 0 : (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1;
    uint64_t hi = mix64(0xcbf29ce484222325ull, buf, len);
    uint64_t lo = mix64(0x84222325cbf29ce4ull ^ hi, buf, len);
    hi = (hi & ~UINT64_C(0xf000)) | UINT64_C(0x8000);       /* version 8 */
    lo = (lo & ~(UINT64_C(3) << 62)) | (UINT64_C(2) << 62); /* variant 10 */
    return ks__dra_bump_printf(
        &R->s->mem, "%08" PRIx64 "-%04" PRIx64 "-%04" PRIx64 "-%04" PRIx64 "-%012" PRIx64, hi >> 32,
        (hi >> 16) & 0xffff, hi & 0xffff, lo >> 48, lo & UINT64_C(0xffffffffffff));
}

static bool contains(const char *const *v, uint32_t n, const char *s)
{
    for (uint32_t i = 0; i < n; i++) {
        if (v[i] && strcmp(v[i], s) == 0)
            return true;
    }
    return false;
}

/* The name of the subrequest picked for request @ri of claim @cl ("req/sub"), or NULL. */
static const char *picked(const struct run *R, const struct dra_claim *cl, uint32_t ri)
{
    const struct dra_req *rq = &cl->reqs[ri];
    if (!rq->has_sub)
        return NULL;
    return R->cl->specs[rq->first_spec + R->rd[rq->first_spec].selected].full_name;
}

static int build_config(struct run *R, const struct dra_claim *cl, struct ks_allocation *a)
{
    const struct ks_device_claim *dc = &cl->obj->spec;
    struct dra_bump *m = &R->s->mem;
    uint32_t cap = dc->nconfig;
    for (uint32_t ri = 0; ri < cl->nreq; ri++) {
        const struct dra_req *rq = &cl->reqs[ri];
        const struct dra_spec *sp =
            &R->cl->specs[rq->first_spec + (rq->has_sub ? R->rd[rq->first_spec].selected : 0)];
        if (sp->cls)
            cap += sp->cls->obj->nconfig;
    }
    a->nconfig = 0;
    a->config = NULL;
    if (cap == 0)
        return 0;
    struct ks_allocation_config *cfg = ks__dra_bump_zalloc(m, cap, sizeof(*cfg));
    const struct dra_class **seen = ks__dra_bump_alloc(m, (cl->nreq ? cl->nreq : 1) * sizeof(*seen));
    uint32_t *seen_start = ks__dra_bump_alloc(m, (cl->nreq ? cl->nreq : 1) * sizeof(*seen_start));
    if (!cfg || !seen || !seen_start)
        return -ENOMEM;
    uint32_t n = 0, nseen = 0;
    for (uint32_t ri = 0; ri < cl->nreq; ri++) {
        const struct dra_req *rq = &cl->reqs[ri];
        const struct dra_spec *sp =
            &R->cl->specs[rq->first_spec + (rq->has_sub ? R->rd[rq->first_spec].selected : 0)];
        const struct dra_class *cls = sp->cls;
        if (!cls)
            continue;
        uint32_t k = 0;
        while (k < nseen && seen[k]->obj->name != cls->obj->name)
            k++;
        if (k < nseen) {
            for (uint32_t i = seen_start[k]; i < seen_start[k] + seen[k]->obj->nconfig; i++)
                cfg[i].requests[cfg[i].nrequests++] = sp->full_name;
            continue;
        }
        seen[nseen] = cls;
        seen_start[nseen++] = n;
        for (uint32_t i = 0; i < cls->obj->nconfig; i++) {
            cfg[n].from_class = true;
            cfg[n].requests = ks__dra_bump_alloc(m, cl->nreq * sizeof(*cfg[n].requests));
            if (!cfg[n].requests)
                return -ENOMEM;
            cfg[n].requests[0] = sp->full_name;
            cfg[n].nrequests = 1;
            cfg[n].opaque = cls->obj->config[i];
            n++;
        }
    }
    for (uint32_t c = 0; c < dc->nconfig; c++) {
        const struct ks_claim_config *cc = &dc->config[c];
        bool add = cc->nrequests == 0;
        for (uint32_t ri = 0; ri < cl->nreq && !add; ri++) {
            const char *name = dc->requests[ri].name ? dc->requests[ri].name : "";
            const char *sub = picked(R, cl, ri);
            add = contains(cc->requests, cc->nrequests, name) ||
                  (sub && contains(cc->requests, cc->nrequests, sub));
        }
        if (!add)
            continue;
        cfg[n].from_class = false;
        cfg[n].nrequests = cc->nrequests;
        cfg[n].requests = (const char **)cc->requests;
        cfg[n].opaque = cc->opaque;
        n++;
    }
    /* a config naming every request names none: empty means all */
    for (uint32_t i = 0; i < n; i++) {
        if (cfg[i].nrequests == 0)
            continue;
        bool all = true;
        for (uint32_t ri = 0; ri < cl->nreq && all; ri++) {
            const char *name = dc->requests[ri].name ? dc->requests[ri].name : "";
            const char *sub = picked(R, cl, ri);
            all = contains(cfg[i].requests, cfg[i].nrequests, name) ||
                  (sub && contains(cfg[i].requests, cfg[i].nrequests, sub));
        }
        if (all) {
            cfg[i].nrequests = 0;
            cfg[i].requests = NULL;
        }
    }
    a->nconfig = n;
    a->config = n ? cfg : NULL;
    return 0;
}

static bool same_values(const struct ks_requirement *a, const struct ks_requirement *b)
{
    if (a->op == KS_OP_GT || a->op == KS_OP_LT)
        return a->number == b->number;
    for (uint32_t i = 0; i < a->nvalues; i++) {
        if (!ks_ids_contain(b->values, b->nvalues, a->values[i]))
            return false;
    }
    for (uint32_t i = 0; i < b->nvalues; i++) {
        if (!ks_ids_contain(a->values, a->nvalues, b->values[i]))
            return false;
    }
    return true;
}

/* addNewNodeSelectorRequirements */
static void add_requirements(const struct ks_requirement *from, uint32_t n, struct ks_requirement *to,
                             uint32_t *nto)
{
    for (uint32_t i = 0; i < n; i++) {
        bool have = false;
        for (uint32_t j = 0; j < *nto && !have; j++)
            have = to[j].key == from[i].key && to[j].op == from[i].op && same_values(&to[j], &from[i]);
        if (!have)
            to[(*nto)++] = from[i];
    }
}

/* The selector of a node-local allocation: matchFields metadata.name In [node], one per call. */
static struct ks_node_selector *local_selector(struct run *R)
{
    if (R->local_sel)
        return R->local_sel;
    if (R->ps->local_sel && R->ps->node == R->node->name_id)
        return R->local_sel = R->ps->local_sel;
    return R->local_sel = ks__dra_name_selector(R->cat, &R->s->mem, R->node->name_id);
}

/*
 * What createNodeSelector makes of a claim's results: R_DONE with *@local (the node's own
 * selector) or the requirements to merge counted, or R_ERR (a slice selector of many terms).
 */
static int selector_shape(struct run *R, const struct dra_claim *cl, const struct claim_run *cr, bool *local,
                          uint32_t *nexpr, uint32_t *nfield)
{
    *local = false;
    *nexpr = *nfield = 0;
    for (uint32_t i = 0; i < cr->nres; i++) {
        const struct dra_dev *d = dev_of(R, cr->res[i].k);
        bool per_dev = d->slice->per_device_node_selection;
        uint32_t node_name = per_dev ? d->dev->node_name : d->slice->node_name;
        const struct ks_node_selector *sel = per_dev ? d->dev->node_selector : d->slice->node_selector;
        if ((node_name != KS_ID_NONE && node_name != KS_ID_EMPTY) || d->dev->binds_to_node) {
            *local = true;
            return R_DONE;
        }
        if (!sel || sel->nterms == 0)
            continue;
        if (sel->nterms > 1)
            return ks__dra_fail(
                R, "create NodeSelector for claim %s: unsupported ResourceSlice.NodeSelector with %u terms",
                cl->obj->meta.name ? cl->obj->meta.name : "", sel->nterms);
        *nexpr += sel->terms[0].nexprs;
        *nfield += sel->terms[0].nfields;
    }
    return R_DONE;
}

/* createNodeSelector: R_DONE, R_ERR, R_NOMEM. */
static int build_node_selector(struct run *R, const struct dra_claim *cl, const struct claim_run *cr,
                               struct ks_allocation *a)
{
    uint32_t nexpr, nfield;
    bool local;
    a->node_selector = NULL;
    int rc = selector_shape(R, cl, cr, &local, &nexpr, &nfield);
    if (rc != R_DONE)
        return rc;
    if (local) {
        a->node_selector = local_selector(R);
        return a->node_selector ? R_DONE : R_NOMEM;
    }
    if (nexpr + nfield == 0)
        return R_DONE;
    struct dra_bump *m = &R->s->mem;
    struct ks_node_selector *ns = ks__dra_bump_zalloc(m, 1, sizeof(*ns));
    struct ks_node_selector_term *term = ks__dra_bump_zalloc(m, 1, sizeof(*term));
    struct ks_requirement *exprs = ks__dra_bump_alloc(m, (nexpr + 1) * sizeof(*exprs));
    struct ks_requirement *fields = ks__dra_bump_alloc(m, (nfield + 1) * sizeof(*fields));
    if (!ns || !term || !exprs || !fields)
        return R_NOMEM;
    ns->nterms = 1;
    ns->terms = term;
    term->exprs = exprs;
    term->fields = fields;
    for (uint32_t i = 0; i < cr->nres; i++) {
        const struct dra_dev *d = dev_of(R, cr->res[i].k);
        const struct ks_node_selector *sel =
            d->slice->per_device_node_selection ? d->dev->node_selector : d->slice->node_selector;
        if (!sel || sel->nterms != 1)
            continue;
        add_requirements(sel->terms[0].fields, sel->terms[0].nfields, fields, &term->nfields);
        add_requirements(sel->terms[0].exprs, sel->terms[0].nexprs, exprs, &term->nexprs);
    }
    a->node_selector = ns;
    return R_DONE;
}

int ks__dra_build_results(struct run *R, struct ks_allocation *results)
{
    struct dra_bump *m = &R->s->mem;
    uint32_t total = 0;
    for (uint32_t ci = 0; ci < R->cl->nclaims; ci++)
        total += R->cr[ci].nres;
    struct ks_device_result *all = ks__dra_bump_zalloc(m, total ? total : 1, sizeof(*all));
    if (!all)
        return R_NOMEM;
    for (uint32_t ci = 0; ci < R->cl->nclaims; ci++) {
        const struct dra_claim *cl = &R->cl->claims[ci];
        const struct claim_run *cr = &R->cr[ci];
        struct ks_allocation *a = &results[ci];
        memset(a, 0, sizeof(*a));
        a->allocation_time = KS_TIME_NONE;
        a->nresults = cr->nres;
        a->results = all;
        all += cr->nres;
        for (uint32_t i = 0; i < cr->nres; i++) {
            const struct res *r = &cr->res[i];
            const struct dra_dev *d = dev_of(R, r->k);
            struct ks_device_result *out = &a->results[i];
            out->request = r->sp->full_name;
            out->driver = d->slice->driver;
            out->pool = d->slice->pool;
            out->device = d->dev->name;
            if (r->sp->admin) {
                out->has_admin_access = true;
                out->admin_access = true;
            }
            out->ntolerations = r->sp->nres_tol;
            out->tolerations = r->sp->nres_tol ? (struct ks_device_toleration *)r->sp->res_tol : NULL;
            if (r->multi) {
                out->share_id = share_id(R, cl, i, r);
                if (!out->share_id)
                    return R_NOMEM;
            }
            if (r->ncons) {
                struct ks_named_quantity *c = ks__dra_bump_alloc(m, r->ncons * sizeof(*c));
                if (!c)
                    return R_NOMEM;
                for (uint32_t j = 0; j < r->ncons; j++) {
                    c[j].name = d->dev->capacity[j].name;
                    c[j].value = R->cap_stack[r->cap_off + j];
                }
                out->nconsumed = r->ncons;
                out->consumed = c;
            }
            if (R->f->device_binding_conditions) {
                out->nbinding_conditions = d->dev->nbinding_conditions;
                out->binding_conditions = d->dev->binding_conditions;
                out->nbinding_failure_conditions = d->dev->nbinding_failure_conditions;
                out->binding_failure_conditions = d->dev->binding_failure_conditions;
            }
        }
        if (build_config(R, cl, a))
            return R_NOMEM;
        int rc = build_node_selector(R, cl, cr, a);
        if (rc != R_DONE)
            return rc;
    }
    return R_DONE;
}

int ks__dra_check_results(struct run *R)
{
    for (uint32_t ci = 0; ci < R->cl->nclaims; ci++) {
        uint32_t nexpr, nfield;
        bool local;
        int rc = selector_shape(R, &R->cl->claims[ci], &R->cr[ci], &local, &nexpr, &nfield);
        if (rc != R_DONE)
            return rc;
    }
    return R_DONE;
}
