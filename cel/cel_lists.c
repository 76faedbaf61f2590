/*
 * cel_lists.c - Kubernetes' lists library for CEL (library.Lists, version 0): isSorted, sum,
 * min, max, indexOf and lastIndexOf on lists.
 *
 * Mirrors k8s.io/apiserver/pkg/cel/library/lists.go: overloads per comparable element type
 * (int, uint, double, bool, duration, timestamp, string, bytes) and summable type (int, uint,
 * double, duration), sum of an empty list is the type's zero, min and max of an empty list
 * are "min called on empty list" / "max called on empty list", indexOf compares with CEL
 * equality. Kubernetes prices all of them by a traversal of the list (library/cost.go).
 */
#include <string.h>

#include "cel_internal.h"

#define IMPL(name)                                                                                           \
    static struct ks_cel_value name(struct cel_ctx *c, const struct cel_expr *e,                             \
                                    const struct ks_cel_value *a, uint32_t n)

IMPL(is_sorted)
{
    (void)e;
    (void)n;
    uint32_t sz = ks__cel_agg_size(&a[0]);
    struct ks_cel_value prev = {0};
    for (uint32_t i = 0; i < sz; i++) {
        struct ks_cel_value x = ks__cel_list_at(c, &a[0], i);
        if (i) {
            struct ks_cel_value err;
            int r = ks__cel_compare(c, &prev, &x, &err);
            if (r == 1)
                return ks__cel_bool(false);
        }
        prev = x;
    }
    return ks__cel_bool(true);
}

/* The zero of a summable element type, from the overload's result type. */
static struct ks_cel_value zero_of(const struct cel_expr *e)
{
    int k = e->u.call.novls == 1 ? e->u.call.ovls[0]->result->kind : KS_CEL_INT;
    struct ks_cel_value z = {.kind = (enum ks_cel_kind)k};
    if (k != KS_CEL_INT && k != KS_CEL_UINT && k != KS_CEL_DOUBLE && k != KS_CEL_DURATION)
        z.kind = KS_CEL_INT;
    return z;
}

IMPL(sum)
{
    (void)n;
    uint32_t sz = ks__cel_agg_size(&a[0]);
    if (!sz)
        return zero_of(e);
    struct ks_cel_value acc = ks__cel_list_at(c, &a[0], 0);
    for (uint32_t i = 1; i < sz; i++) {
        struct ks_cel_value x = ks__cel_list_at(c, &a[0], i);
        if (x.kind != acc.kind)
            return ks__cel_err_overload();
        switch (acc.kind) {
        case KS_CEL_INT:
            if (__builtin_add_overflow(acc.v.i, x.v.i, &acc.v.i))
                return ks__cel_str(KS_CEL_ERROR, "integer overflow", 16);
            break;
        case KS_CEL_UINT:
            if (__builtin_add_overflow(acc.v.u, x.v.u, &acc.v.u))
                return ks__cel_str(KS_CEL_ERROR, "unsigned integer overflow", 25);
            break;
        case KS_CEL_DOUBLE:
            acc.v.d += x.v.d;
            break;
        case KS_CEL_DURATION: {
            struct ks_cel_value two[2] = {acc, x};
            acc = ks__cel_add_time(c, e, two, 2);
            if (ks__cel_is_err(&acc))
                return acc;
            break;
        }
        default:
            return ks__cel_err_overload();
        }
    }
    return acc;
}

static struct ks_cel_value extreme(struct cel_ctx *c, const struct ks_cel_value *l, int prefer,
                                   const char *name)
{
    uint32_t sz = ks__cel_agg_size(l);
    if (!sz)
        return ks__cel_errf(c, "%s called on empty list", name);
    struct ks_cel_value r = ks__cel_list_at(c, l, 0);
    for (uint32_t i = 1; i < sz; i++) {
        struct ks_cel_value x = ks__cel_list_at(c, l, i), err;
        int cmp = ks__cel_compare(c, &r, &x, &err);
        if (cmp == 2)
            return err;
        if (cmp == prefer)
            r = x;
    }
    return r;
}

IMPL(list_min)
{
    (void)e;
    (void)n;
    return extreme(c, &a[0], 1, "min");
}

IMPL(list_max)
{
    (void)e;
    (void)n;
    return extreme(c, &a[0], -1, "max");
}

IMPL(list_index_of)
{
    (void)e;
    (void)n;
    uint32_t sz = ks__cel_agg_size(&a[0]);
    for (uint32_t i = 0; i < sz; i++) {
        struct ks_cel_value x = ks__cel_list_at(c, &a[0], i);
        if (ks__cel_equal(&x, &a[1]))
            return ks__cel_int(i);
    }
    return ks__cel_int(-1);
}

IMPL(list_last_index_of)
{
    (void)e;
    (void)n;
    uint32_t sz = ks__cel_agg_size(&a[0]);
    for (uint32_t i = sz; i-- > 0;) {
        struct ks_cel_value x = ks__cel_list_at(c, &a[0], i);
        if (ks__cel_equal(&x, &a[1]))
            return ks__cel_int(i);
    }
    return ks__cel_int(-1);
}

#define MEM CEL_OVL_MEMBER
#define T   CEL_COST_TRAVERSE0
#define COMPARABLE(fn, pat, impl, res)                                                                       \
    {fn, "list_int_" pat, MEM, T, "list(int) -> " res("int"), impl},                                         \
        {fn, "list_uint_" pat, MEM, T, "list(uint) -> " res("uint"), impl},                                  \
        {fn, "list_double_" pat, MEM, T, "list(double) -> " res("double"), impl},                            \
        {fn, "list_bool_" pat, MEM, T, "list(bool) -> " res("bool"), impl},                                  \
        {fn, "list_duration_" pat, MEM, T, "list(duration) -> " res("duration"), impl},                      \
        {fn, "list_timestamp_" pat, MEM, T, "list(timestamp) -> " res("timestamp"), impl},                   \
        {fn, "list_string_" pat, MEM, T, "list(string) -> " res("string"), impl},                            \
    {                                                                                                        \
        fn, "list_bytes_" pat, MEM, T, "list(bytes) -> " res("bytes"), impl                                  \
    }
#define BOOL_RES(t) "bool"
#define ELEM_RES(t) t

const struct cel_decl ks__cel_lists_decls[] = {
    COMPARABLE("isSorted", "is_sorted_bool", is_sorted, BOOL_RES),
    {"sum", "list_int_sum_int", MEM, T, "list(int) -> int", sum},
    {"sum", "list_uint_sum_uint", MEM, T, "list(uint) -> uint", sum},
    {"sum", "list_double_sum_double", MEM, T, "list(double) -> double", sum},
    {"sum", "list_duration_sum_duration", MEM, T, "list(duration) -> duration", sum},
    COMPARABLE("max", "max", list_max, ELEM_RES),
    COMPARABLE("min", "min", list_min, ELEM_RES),
    {"indexOf", "list_a_index_of_int", MEM, T, "list(A), A -> int", list_index_of},
    {"lastIndexOf", "list_a_last_index_of_int", MEM, T, "list(A), A -> int", list_last_index_of},
    {NULL, NULL, 0, 0, NULL, NULL},
};
