/*
 * cel_sets.c - the sets extension library for CEL (cel-go ext.Sets): sets.contains,
 * sets.equivalent and sets.intersects over lists, with CEL equality.
 *
 * Mirrors cel-go ext/sets.go, including its own cost tracker: 1 + size(a) * size(b), twice
 * the product for sets.equivalent.
 */
#include "cel_internal.h"

#define IMPL(name)                                                                                           \
    static struct ks_cel_value name(struct cel_ctx *c, const struct cel_expr *e,                             \
                                    const struct ks_cel_value *a, uint32_t n)

static bool list_has(struct cel_ctx *c, const struct ks_cel_value *l, const struct ks_cel_value *x)
{
    uint32_t sz = ks__cel_agg_size(l);
    for (uint32_t i = 0; i < sz; i++) {
        struct ks_cel_value y = ks__cel_list_at(c, l, i);
        if (ks__cel_equal(x, &y))
            return true;
    }
    return false;
}

static bool contains_all(struct cel_ctx *c, const struct ks_cel_value *l, const struct ks_cel_value *sub)
{
    uint32_t sz = ks__cel_agg_size(sub);
    for (uint32_t i = 0; i < sz; i++) {
        struct ks_cel_value x = ks__cel_list_at(c, sub, i);
        if (!list_has(c, l, &x))
            return false;
    }
    return true;
}

IMPL(sets_contains)
{
    (void)e;
    (void)n;
    return ks__cel_bool(contains_all(c, &a[0], &a[1]));
}

IMPL(sets_equivalent)
{
    (void)e;
    (void)n;
    return ks__cel_bool(contains_all(c, &a[0], &a[1]) && contains_all(c, &a[1], &a[0]));
}

IMPL(sets_intersects)
{
    (void)e;
    (void)n;
    uint32_t sz = ks__cel_agg_size(&a[0]);
    for (uint32_t i = 0; i < sz; i++) {
        struct ks_cel_value x = ks__cel_list_at(c, &a[0], i);
        if (list_has(c, &a[1], &x))
            return ks__cel_bool(true);
    }
    return ks__cel_bool(false);
}

const struct cel_decl ks__cel_sets_decls[] = {
    {"sets.contains", "list_sets_contains_list", 0, CEL_COST_SETS1, "list(T), list(T) -> bool",
     sets_contains},
    {"sets.equivalent", "list_sets_equivalent_list", 0, CEL_COST_SETS2, "list(T), list(T) -> bool",
     sets_equivalent},
    {"sets.intersects", "list_sets_intersects_list", 0, CEL_COST_SETS1, "list(T), list(T) -> bool",
     sets_intersects},
    {NULL, NULL, 0, 0, NULL, NULL},
};
