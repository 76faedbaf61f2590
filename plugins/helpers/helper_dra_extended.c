/*
 * helper_dra_extended.c - the DynamicResources plugin's part of extended resources backed by
 * devices (see ksched/plugin_helpers_dra.h and ksched/dra_extended.h).
 *
 * Mirrors preFilterExtendedResources and filterExtendedResources of
 * pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources.go. Upstream
 * builds a node's variant of the special claim in Filter; here the variants (one per set of
 * backed resources a node may lack) are built and prepared for the allocator once in
 * PreFilter, so that Filter workers only pick one.
 */
#include "ksched/plugin_helpers_dra.h"

#include "ksched/base/intern.h"
#include "ksched/dra_extended.h"
#include "ksched/plugin_helpers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void ks_dra_ext_release(struct ks_dra_ext *x)
{
    for (uint32_t m = 0; m < (1u << KS_DRA_EXT_MAX); m++) {
        ks_dra_claims_destroy(x->variant[m]);
        x->variant[m] = NULL;
        x->claim[m] = NULL;
    }
    x->nres = 0;
    x->nother = 0;
    x->other = NULL;
    x->stale = false;
    ks_arena_reset(&x->arena);
}

void ks_dra_ext_destroy(struct ks_dra_ext *x)
{
    ks_dra_ext_release(x);
    ks_arena_destroy(&x->arena);
}

/* Sort and collect: the pod's requested resources a class backs, and the other DRA names. */
static int collect(struct ks_dra_ext *x, const struct ks_objects *objs, const struct ks_pod *pod)
{
    const struct ks_objvec *v = objs ? &objs->of[KS_KIND_DEVICE_CLASS] : NULL;
    const struct ks_device_class *const *classes = v ? (const struct ks_device_class *const *)v->items : NULL;
    const struct ks_resources *r = &pod->requests;
    uint32_t *other = ks_arena_calloc(&x->arena, r->nscalar ? r->nscalar : 1, sizeof(*other));

    if (!other)
        return -ENOMEM;
    x->other = other;
    for (uint32_t i = 0; i < r->nscalar; i++) {
        const char *name = ks_intern_str(r->scalar[i].name);
        if (r->scalar[i].value <= 0 || !ks_dra_extended_name(name))
            continue;
        const struct ks_device_class *c = v ? ks_dra_class_for_resource(classes, v->n, name) : NULL;
        if (!c) {
            other[x->nother++] = r->scalar[i].name;
        } else if (x->nres == KS_DRA_EXT_MAX) {
            return -E2BIG;
        } else {
            x->res[x->nres++] = (struct ks_dra_ext_resource){r->scalar[i].name, c->meta.name};
        }
    }
    return 0;
}

int ks_dra_ext_prepare(struct ks_dra_ext *x, struct ks_dra_tracker *t, const struct ks_objects *objs,
                       const struct ks_pod *pod, const struct ks_resource_claim *const *user, uint32_t nuser)
{
    const struct ks_dra_catalog *cat = ks_dra_tracker_catalog(t);
    int rc;

    ks_dra_ext_release(x);
    if (pod->requests.nscalar == 0 || !objs || objs->of[KS_KIND_DEVICE_CLASS].n == 0)
        return 0;
    if ((rc = collect(x, objs, pod)) < 0)
        return rc;
    if (x->nres == 0)
        return 0;
    if (ks_dra_tracker_extended_claim(t, pod, &x->found) && x->found.obj->spec.nrequests > 0) {
        /* left from an earlier cycle: Filter rejects every node, PostFilter deletes it */
        x->stale = true;
        return 1;
    }
    const struct ks_resource_claim **claims = ks_arena_calloc(&x->arena, nuser + 1, sizeof(*claims));
    if (!claims)
        return -ENOMEM;
    memcpy(claims, user, nuser * sizeof(*user));
    for (uint32_t m = 1; m < (1u << x->nres); m++) {
        struct ks_dra_ext_resource sub[KS_DRA_EXT_MAX];
        uint32_t n = 0;
        for (uint32_t i = 0; i < x->nres; i++) {
            if (m & (1u << i))
                sub[n++] = x->res[i];
        }
        if ((rc = ks_dra_extended_claim(&x->arena, pod, sub, n, &x->claim[m], NULL, NULL)) < 0)
            return rc;
        claims[nuser] = x->claim[m];
        if ((rc = ks_dra_claims_prepare(cat, claims, nuser + 1, &x->variant[m])) < 0)
            return rc;
    }
    return 1;
}

int ks_dra_ext_node_mask(const struct ks_dra_ext *x, const struct ks_node *node)
{
    const struct ks_resource_item *alloc = node ? node->alloc.scalar : NULL;
    uint32_t nalloc = node ? node->alloc.nscalar : 0;
    int mask = 0;

    for (uint32_t i = 0; i < x->nres; i++) {
        if (ks_resource_items_find(alloc, nalloc, x->res[i].name, NULL) == 0)
            mask |= 1 << i;
    }
    for (uint32_t i = 0; i < x->nother; i++) {
        bool found = false;
        ks_resource_items_find(alloc, nalloc, x->other[i], &found);
        if (!found)
            return -1;
    }
    return mask;
}
