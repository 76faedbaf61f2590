/*
 * claims.c - claims prepared for allocation (struct ks_dra_claims): everything about a
 * pod's claims that does not depend on the node, worked out once per pod instead of once
 * per (pod, node).
 *
 * Per request or subrequest ("spec", upstream's requestAccessor): its names ("req",
 * "req/sub"), its class, its compiled selectors (through the catalog's selector table),
 * its mode and count, its capacity requests, the tolerations its results carry, and the
 * first error validateDeviceRequest would return that needs no node, formatted now in
 * upstream's words. Per request: the error Allocate returns before validating it (a
 * firstAvailable request with DRAPrioritizedList off, capacity requests with
 * DRAConsumableCapacity off). Per claim: its constraints, which requests each applies to,
 * and the error of an empty constraint. ks_dra_allocate() walks these in upstream's order,
 * so an error needing the node (a pool being updated, a CEL runtime error) and one that
 * does not come out in the same order as upstream's.
 *
 * The result's tolerations come from the first request (or its subrequest) of the claim
 * with the result's request name, as upstream's lookupRequest finds them.
 *
 * Context: any thread, once per pod (slow path: allocates, may compile CEL); the prepared
 * claims are immutable afterwards and may be shared by the threads that allocate them on
 * different nodes. The claims and the catalog must outlive them. Mirrors
 * structured/internal/incubating/allocator_incubating.go (Allocate's claim loop,
 * validateDeviceRequest, requestAccessor, lookupRequest).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ksched/base/intern.h"

#include "dra_internal.h"

static const char *kobj(struct dra_bump *mem, const struct ks_resource_claim *c)
{
    const char *name = c->meta.name ? c->meta.name : "";
    if (c->meta.namespace_id == KS_ID_EMPTY || c->meta.namespace_id == KS_ID_NONE)
        return ks__dra_bump_printf(mem, "%s", name);
    return ks__dra_bump_printf(mem, "%s/%s", ks_intern_str(c->meta.namespace_id), name);
}

static const char *str(const char *s)
{
    return s ? s : "";
}

/* The tolerations upstream's lookupRequest finds for a result of @sp. */
static void result_tolerations(const struct ks_device_claim *dc, struct dra_spec *sp)
{
    sp->nres_tol = 0;
    sp->res_tol = NULL;
    for (uint32_t i = 0; i < dc->nrequests; i++) {
        const struct ks_device_request *r = &dc->requests[i];
        if (strcmp(str(r->name), sp->base_name) != 0)
            continue;
        if (!sp->is_sub) {
            if (r->exact) {
                sp->nres_tol = r->spec.ntolerations;
                sp->res_tol = r->spec.tolerations;
            }
            return;
        }
        for (uint32_t j = 0; j < r->nsubrequests; j++) {
            if (strcmp(str(r->subrequests[j].name), sp->name) == 0) {
                sp->nres_tol = r->subrequests[j].ntolerations;
                sp->res_tol = r->subrequests[j].tolerations;
                return;
            }
        }
    }
}

static int add_private(struct ks_dra_claims *p, struct dra_selector *s)
{
    if (p->nprivate == p->cap_private) {
        uint32_t cap = p->cap_private ? 2 * p->cap_private : 4;
        struct dra_selector **n = realloc(p->private_sels, cap * sizeof(*n));
        if (!n)
            return -ENOMEM;
        p->private_sels = n;
        p->cap_private = cap;
    }
    p->private_sels[p->nprivate++] = s;
    return 0;
}

/* validateDeviceRequest's checks that need no node; the selectors compiled. */
static int prepare_spec(struct ks_dra_claims *p, const struct dra_claim *cl, struct dra_spec *sp)
{
    const struct ks_dra_catalog *cat = p->cat;
    const struct ks_device_request_spec *s = sp->spec;
    struct dra_bump *mem = &p->mem;
    const char *err = NULL;

    sp->admin = !sp->is_sub && s->has_admin_access && s->admin_access;
    sp->all = s->mode == KS_ALLOC_ALL;
    sp->count = s->count;
    sp->has_capacity = s->has_capacity;
    sp->ncapreq = s->ncapacity_requests;
    sp->capreq = s->capacity_requests;
    sp->nsel = s->nselectors;
    sp->sel = ks__dra_bump_zalloc(mem, s->nselectors ? s->nselectors : 1, sizeof(*sp->sel));
    if (!sp->sel)
        return -ENOMEM;
    for (uint32_t i = 0; i < s->nselectors; i++) {
        if (!s->selectors[i]) {
            if (!err)
                err = ks__dra_bump_printf(
                    mem,
                    "claim %s, request %s, selector #%u: CEL expression empty (unsupported "
                    "selector type?)",
                    cl->kobj, sp->name, i);
            continue;
        }
        bool priv;
        if (ks__dra_catalog_selector(cat, s->selectors[i], &sp->sel[i], &priv))
            return -ENOMEM;
        if (priv && add_private(p, sp->sel[i])) {
            ks__dra_selector_destroy(sp->sel[i]);
            sp->sel[i] = NULL;
            return -ENOMEM;
        }
    }
    if (err)
        goto done;
    if (!cat->features.admin_access && !sp->is_sub && s->has_admin_access) {
        err = ks__dra_bump_printf(
            mem, "claim %s, request %s: admin access is requested, but the feature is disabled", cl->kobj,
            sp->name);
        goto done;
    }
    if (!s->device_class_name || !s->device_class_name[0]) {
        err = ks__dra_bump_printf(
            mem, "claim %s, request %s: missing device class name (unsupported request type?)", cl->kobj,
            sp->name);
        goto done;
    }
    sp->cls = ks__dra_catalog_class_by_name(cat, s->device_class_name);
    if (!sp->cls) {
        err = ks__dra_bump_printf(mem,
                                  "claim %s, request %s: could not retrieve device class %s: "
                                  "deviceclass.resource.k8s.io \"%s\" not found",
                                  cl->kobj, sp->name, s->device_class_name, s->device_class_name);
        goto done;
    }
    if (s->mode != KS_ALLOC_EXACT_COUNT && s->mode != KS_ALLOC_ALL) {
        err = ks__dra_bump_printf(mem, "claim %s, request %s: unsupported count mode %s", cl->kobj, sp->name,
                                  str(s->mode_text));
        goto done;
    }
    return 0;
done:
    if (!err)
        return -ENOMEM;
    sp->static_error = err;
    return 0;
}

/* The request's error before its (sub)requests are validated, or NULL. */
static int pre_error(struct ks_dra_claims *p, const struct dra_claim *cl, const struct ks_device_request *r,
                     const char **out)
{
    const struct ks_dra_features *f = &p->cat->features;
    *out = NULL;
    if (!f->prioritized_list && r->nsubrequests > 0)
        *out = ks__dra_bump_printf(
            &p->mem,
            "claim %s, request %s: has subrequests, but the DRAPrioritizedList feature is "
            "disabled",
            cl->kobj, str(r->name));
    else if (!f->consumable_capacity && r->exact && r->spec.has_capacity)
        *out =
            ks__dra_bump_printf(&p->mem,
                                "claim %s, request %s: has capacity requests, but the DRAConsumableCapacity "
                                "feature is disabled",
                                cl->kobj, str(r->name));
    else if (!f->consumable_capacity) {
        for (uint32_t j = 0; j < r->nsubrequests && !*out; j++) {
            if (r->subrequests[j].has_capacity)
                *out = ks__dra_bump_printf(&p->mem,
                                           "claim %s, subrequest %s: has capacity requests, but the "
                                           "DRAConsumableCapacity feature is disabled",
                                           cl->kobj, str(r->subrequests[j].name));
        }
        return 0;
    } else {
        return 0;
    }
    return *out ? 0 : -ENOMEM;
}

static bool names_request(const struct ks_device_constraint *c, const char *name)
{
    for (uint32_t i = 0; i < c->nrequests; i++) {
        if (strcmp(str(c->requests[i]), name) == 0)
            return true;
    }
    return false;
}

static int prepare_constraints(struct ks_dra_claims *p, struct dra_claim *cl)
{
    const struct ks_device_claim *dc = &cl->obj->spec;
    cl->ncons = 0;
    cl->cons = ks__dra_bump_zalloc(&p->mem, dc->nconstraints ? dc->nconstraints : 1, sizeof(*cl->cons));
    if (!cl->cons)
        return -ENOMEM;
    for (uint32_t i = 0; i < dc->nconstraints; i++) {
        const struct ks_device_constraint *c = &dc->constraints[i];
        struct dra_constraint *k = &cl->cons[cl->ncons];
        if (c->match_attribute != KS_ID_NONE) {
            k->kind = DRA_MATCH;
            k->full = c->match_attribute;
        } else if (c->distinct_attribute != KS_ID_NONE) {
            k->kind = DRA_DISTINCT;
            k->full = c->distinct_attribute;
        } else {
            cl->constraint_error = ks__dra_bump_printf(
                &p->mem, "claim %s, constraint #%u: empty constraint (unsupported constraint type?)",
                cl->kobj, i);
            return cl->constraint_error ? 0 : -ENOMEM;
        }
        const char *name = ks_intern_str(k->full);
        const char *slash = strchr(name, '/');
        k->has_slash = slash != NULL;
        k->domain = k->id = KS_ID_NONE;
        if (slash) {
            k->domain = ks_intern_find(name, (size_t)(slash - name));
            k->id = ks_intern_find(slash + 1, strlen(slash + 1));
        }
        k->applies = ks__dra_bump_alloc(&p->mem, (cl->nspec ? cl->nspec : 1) * sizeof(*k->applies));
        if (!k->applies)
            return -ENOMEM;
        for (uint32_t j = 0; j < cl->nspec; j++) {
            const struct dra_spec *sp = &p->specs[cl->first_spec + j];
            k->applies[j] = c->nrequests == 0 || names_request(c, sp->base_name) ||
                            (sp->is_sub && names_request(c, sp->full_name));
        }
        cl->ncons++;
    }
    return 0;
}

static int prepare_claim(struct ks_dra_claims *p, struct dra_claim *cl, uint32_t ci)
{
    const struct ks_device_claim *dc = &cl->obj->spec;
    struct dra_bump *mem = &p->mem;
    cl->kobj = kobj(mem, cl->obj);
    cl->nreq = dc->nrequests;
    cl->reqs = ks__dra_bump_zalloc(mem, dc->nrequests ? dc->nrequests : 1, sizeof(*cl->reqs));
    if (!cl->kobj || !cl->reqs)
        return -ENOMEM;
    cl->first_spec = p->nspecs;
    for (uint32_t ri = 0; ri < dc->nrequests; ri++) {
        const struct ks_device_request *r = &dc->requests[ri];
        struct dra_req *rq = &cl->reqs[ri];
        if (pre_error(p, cl, r, &rq->pre_error))
            return -ENOMEM;
        rq->has_sub = r->nsubrequests > 0;
        rq->first_spec = p->nspecs;
        rq->nspec = rq->has_sub ? r->nsubrequests : 1;
        uint32_t key = ri;
        for (uint32_t k = 0; k < ri; k++) {
            if (strcmp(str(dc->requests[k].name), str(r->name)) == 0) {
                key = k;
                break;
            }
        }
        for (uint32_t j = 0; j < rq->nspec; j++) {
            struct dra_spec *sp = &p->specs[p->nspecs++];
            memset(sp, 0, sizeof(*sp));
            sp->claim = ci;
            sp->request = ri;
            sp->sub = j;
            sp->is_sub = rq->has_sub;
            sp->base_name = str(r->name);
            sp->name_key = key;
            if (rq->has_sub) {
                sp->spec = &r->subrequests[j];
                sp->name = str(sp->spec->name);
                sp->full_name = ks__dra_bump_printf(mem, "%s/%s", sp->base_name, sp->name);
                if (!sp->full_name)
                    return -ENOMEM;
            } else {
                sp->spec = &r->spec;
                sp->name = sp->base_name;
                sp->full_name = sp->base_name;
            }
            if (!rq->has_sub && !r->exact) {
                /* neither exactly nor firstAvailable: a request type this version does not know */
                sp->static_error = ks__dra_bump_printf(
                    mem, "claim %s, request %s: missing device class name (unsupported request type?)",
                    cl->kobj, sp->name);
                if (!sp->static_error)
                    return -ENOMEM;
                continue;
            }
            if (prepare_spec(p, cl, sp))
                return -ENOMEM;
            result_tolerations(dc, sp);
        }
    }
    cl->nspec = p->nspecs - cl->first_spec;
    return prepare_constraints(p, cl);
}

void ks__dra_claims_clear(struct ks_dra_claims *p)
{
    for (uint32_t i = 0; i < p->nprivate; i++)
        ks__dra_selector_destroy(p->private_sels[i]);
    p->nprivate = 0;
    p->nclaims = p->nspecs = 0;
    p->shape = 0;
    p->claims = NULL;
    p->specs = NULL;
    ks__dra_bump_reset(&p->mem);
}

int ks__dra_claims_prepare_into(const struct ks_dra_catalog *cat,
                                const struct ks_resource_claim *const *claims, uint32_t nclaims,
                                struct ks_dra_claims *p)
{
    ks__dra_claims_clear(p);
    p->cat = cat;
    uint32_t nspecs = 0;
    for (uint32_t i = 0; i < nclaims; i++) {
        const struct ks_device_claim *dc = &claims[i]->spec;
        for (uint32_t r = 0; r < dc->nrequests; r++)
            nspecs += dc->requests[r].nsubrequests ? dc->requests[r].nsubrequests : 1;
    }
    p->claims = ks__dra_bump_zalloc(&p->mem, nclaims ? nclaims : 1, sizeof(*p->claims));
    p->specs = ks__dra_bump_zalloc(&p->mem, nspecs ? nspecs : 1, sizeof(*p->specs));
    if (!p->claims || !p->specs)
        return -ENOMEM;
    for (uint32_t i = 0; i < nclaims; i++) {
        p->claims[i].obj = claims[i];
        if (prepare_claim(p, &p->claims[i], i))
            return -ENOMEM;
        p->nclaims++;
    }
    return ks__dra_claims_shape(cat, claims, nclaims, &p->shape);
}

int ks_dra_claims_prepare(const struct ks_dra_catalog *cat, const struct ks_resource_claim *const *claims,
                          uint32_t nclaims, struct ks_dra_claims **out)
{
    struct ks_dra_claims *p = calloc(1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    if (ks__dra_claims_prepare_into(cat, claims, nclaims, p))
        goto err_prepare;
    *out = p;
    return 0;

err_prepare:
    ks_dra_claims_destroy(p);
    return -ENOMEM;
}

void ks_dra_claims_destroy(struct ks_dra_claims *p)
{
    if (!p)
        return;
    ks__dra_claims_clear(p);
    free(p->private_sels);
    ks__dra_bump_free(&p->mem);
    free(p);
}
