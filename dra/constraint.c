/*
 * constraint.c - a claim's matchAttribute and distinctAttribute constraints during the
 * search, with upstream's exact behaviour.
 *
 * Both look the attribute up as lookupAttribute does: the fully qualified name first, then,
 * when its domain is the device's driver, the bare id. A device without the attribute never
 * satisfies a constraint that applies to its request. A constraint applies to every request
 * when it names none, else to the requests it names; a subrequest is named by its parent's
 * name or by "parent/sub" (prepared per spec in claims.c).
 *
 * matchAttribute keeps the first device's value and a count: any device may start the set,
 * later ones must have the same value and kind (versions compare as text, semver's minimal
 * form making that exact). Removing only decrements the count, so the set restarts from the
 * next device once it is empty.
 *
 * distinctAttribute keeps a map from request name to the value added last for it: a new
 * value must differ from every value in the map. Keyed by the request's name, two devices
 * of one request overwrite each other and a removal forgets the request's entry while the
 * count only drops by one; ksched reproduces those quirks. Values compare by kind and value
 * (strings and versions by catalog-local ids).
 *
 * Context: the searching thread, on its scratch; no allocation. Mirrors
 * structured/internal/incubating/allocator_incubating.go (matchAttributeConstraint,
 * lookupAttribute) and constraint.go (distinctAttributeConstraint).
 */
#include "dra_internal.h"

const struct ks_device_attribute *ks__dra_lookup_attribute(const struct dra_constraint *c,
                                                           const struct dra_dev *d, uint32_t driver,
                                                           uint32_t *str)
{
    const struct ks_device *dev = d->dev;
    for (uint32_t i = 0; i < dev->nattributes; i++) {
        if (dev->attributes[i].name == c->full) {
            *str = d->attr_str[i];
            return &dev->attributes[i];
        }
    }
    if (!c->has_slash || c->domain != driver)
        return NULL;
    for (uint32_t i = 0; i < dev->nattributes; i++) {
        if (dev->attributes[i].name == c->id) {
            *str = d->attr_str[i];
            return &dev->attributes[i];
        }
    }
    return NULL;
}

static bool same_value(const struct ks_device_attribute *a, uint32_t astr,
                       const struct ks_device_attribute *b, uint32_t bstr)
{
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case KS_ATTR_INT:
        return a->i == b->i;
    case KS_ATTR_BOOL:
        return a->b == b->b;
    case KS_ATTR_STRING:
    case KS_ATTR_VERSION:
        return astr == bstr;
    }
    return false;
}

bool ks__dra_constraint_add(const struct dra_constraint *c, struct dra_cstate *st, const struct dra_spec *sp,
                            uint32_t spec_in_claim, const struct dra_dev *d)
{
    if (!c->applies[spec_in_claim])
        return true;
    uint32_t str = 0;
    const struct ks_device_attribute *attr = ks__dra_lookup_attribute(c, d, d->slice->driver, &str);
    if (!attr)
        return false;
    if (c->kind == DRA_MATCH) {
        if (st->num == 0) {
            st->attr = attr;
            st->attr_str = str;
            st->num = 1;
            return true;
        }
        if (!same_value(attr, str, st->attr, st->attr_str))
            return false;
        st->num++;
        return true;
    }
    uint32_t key = sp->name_key;
    if (st->num != 0) {
        for (uint32_t k = 0; k < st->nkeys; k++) {
            if (st->present[k] && same_value(attr, str, st->vals[k], st->val_str[k]))
                return false;
        }
    }
    st->present[key] = true;
    st->vals[key] = attr;
    st->val_str[key] = str;
    st->num = st->num == 0 ? 1 : st->num + 1;
    return true;
}

void ks__dra_constraint_remove(const struct dra_constraint *c, struct dra_cstate *st,
                               const struct dra_spec *sp, uint32_t spec_in_claim)
{
    if (!c->applies[spec_in_claim])
        return;
    if (c->kind == DRA_DISTINCT)
        st->present[sp->name_key] = false;
    st->num--;
}
