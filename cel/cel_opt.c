/*
 * cel_opt.c - CEL optional values: optional.of, optional.ofNonZeroValue, optional.none,
 * value(), hasValue(), or() and orValue() (evaluated by cel_eval.c, which short-circuits
 * them), first(), last(), optional.unwrap() and unwrapOpt(), and the optional overloads of
 * indexing.
 *
 * Mirrors cel-go cel/library.go optionalLib at its latest version, as Kubernetes enables
 * it (cel.OptionalTypes()): "optional.none() dereference" for value() of none; a zero value
 * (0, 0u, 0.0, false, "", b"", [], {}, null, a zero duration or timestamp) makes
 * ofNonZeroValue none.
 */
#include <string.h>

#include "cel_internal.h"

#define IMPL(name)                                                                                           \
    static struct ks_cel_value name(struct cel_ctx *c, const struct cel_expr *e,                             \
                                    const struct ks_cel_value *a, uint32_t n)
#define UNUSED_ARGS                                                                                          \
    (void)c;                                                                                                 \
    (void)e;                                                                                                 \
    (void)n;                                                                                                 \
    (void)a

IMPL(opt_of)
{
    UNUSED_ARGS;
    return ks__cel_make_opt(c, &a[0]);
}

static bool is_zero(const struct ks_cel_value *v)
{
    switch (v->kind) {
    case KS_CEL_NULL:
        return true;
    case KS_CEL_BOOL:
        return !v->v.b;
    case KS_CEL_INT:
        return v->v.i == 0;
    case KS_CEL_UINT:
        return v->v.u == 0;
    case KS_CEL_DOUBLE:
        return v->v.d == 0;
    case KS_CEL_STRING:
    case KS_CEL_BYTES:
        return v->v.str.len == 0;
    case KS_CEL_LIST:
    case KS_CEL_MAP:
        return ks__cel_agg_size(v) == 0;
    case KS_CEL_DURATION:
        return v->v.time.seconds == 0 && v->v.time.nanos == 0;
    case KS_CEL_TIMESTAMP:
        return v->v.time.seconds == -62135596800LL && v->v.time.nanos == 0;
    default:
        return false;
    }
}

IMPL(opt_of_non_zero)
{
    UNUSED_ARGS;
    return is_zero(&a[0]) ? ks__cel_make_opt(c, NULL) : ks__cel_make_opt(c, &a[0]);
}

IMPL(opt_none)
{
    UNUSED_ARGS;
    (void)a;
    return ks__cel_make_opt(c, NULL);
}

IMPL(opt_value)
{
    UNUSED_ARGS;
    if (!a[0].v.own)
        return ks__cel_errf(c, "optional.none() dereference");
    return ((const struct cel_opt *)a[0].v.own)->v;
}

IMPL(opt_has_value)
{
    UNUSED_ARGS;
    return ks__cel_bool(a[0].v.own != NULL);
}

IMPL(list_first)
{
    UNUSED_ARGS;
    uint32_t sz = ks__cel_agg_size(&a[0]);
    if (!sz)
        return ks__cel_make_opt(c, NULL);
    struct ks_cel_value v = ks__cel_list_at(c, &a[0], 0);
    return ks__cel_make_opt(c, &v);
}

IMPL(list_last)
{
    UNUSED_ARGS;
    uint32_t sz = ks__cel_agg_size(&a[0]);
    if (!sz)
        return ks__cel_make_opt(c, NULL);
    struct ks_cel_value v = ks__cel_list_at(c, &a[0], sz - 1);
    return ks__cel_make_opt(c, &v);
}

IMPL(opt_unwrap)
{
    UNUSED_ARGS;
    uint32_t sz = ks__cel_agg_size(&a[0]);
    struct ks_cel_value *items = ks__cel_salloc(c, (sz ? sz : 1) * sizeof(*items));
    uint32_t k = 0;
    for (uint32_t i = 0; i < sz; i++) {
        struct ks_cel_value v = ks__cel_list_at(c, &a[0], i);
        if (v.kind != KS_CEL_OPTIONAL)
            return ks__cel_errf(c, "value %s is not optional", "");
        if (v.v.own)
            items[k++] = ((const struct cel_opt *)v.v.own)->v;
    }
    return ks__cel_make_list(c, items, k);
}

/* Evaluated by cel_eval.c (short-circuit and optional-chaining operators). */
IMPL(special)
{
    UNUSED_ARGS;
    (void)a;
    return ks__cel_err_overload();
}

#define MEM CEL_OVL_MEMBER
const struct cel_decl ks__cel_opt_decls[] = {
    {"optional.of", "optional_of", 0, 0, "V -> optional(V)", opt_of},
    {"optional.ofNonZeroValue", "optional_ofNonZeroValue", 0, 0, "V -> optional(V)", opt_of_non_zero},
    {"optional.none", "optional_none", 0, 0, " -> optional(V)", opt_none},
    {"value", "optional_value", MEM, 0, "optional(V) -> V", opt_value},
    {"hasValue", "optional_hasValue", MEM, 0, "optional(V) -> bool", opt_has_value},
    {"or", "optional_or_optional", MEM, 0, "optional(V), optional(V) -> optional(V)", special},
    {"orValue", "optional_orValue_value", MEM, 0, "optional(V), V -> V", special},
    {"_?._", "select_optional_field", 0, 0, "dyn, string -> optional(V)", special},
    {"_[?_]", "list_optindex_optional_int", 0, 0, "list(V), int -> optional(V)", special},
    {"_[?_]", "optional_list_optindex_optional_int", 0, 0, "optional(list(V)), int -> optional(V)", special},
    {"_[?_]", "map_optindex_optional_value", 0, 0, "map(K, V), K -> optional(V)", special},
    {"_[?_]", "optional_map_optindex_optional_value", 0, 0, "optional(map(K, V)), K -> optional(V)", special},
    {"_[_]", "optional_list_index_int", 0, 0, "optional(list(V)), int -> optional(V)", special},
    {"_[_]", "optional_map_index_value", 0, 0, "optional(map(K, V)), K -> optional(V)", special},
    {"last", "list_last", MEM, 0, "list(V) -> optional(V)", list_last},
    {"first", "list_first", MEM, 0, "list(V) -> optional(V)", list_first},
    {"optional.unwrap", "optional_unwrap", 0, 0, "list(optional(V)) -> list(V)", opt_unwrap},
    {"unwrapOpt", "optional_unwrapOpt", MEM, 0, "list(optional(V)) -> list(V)", opt_unwrap},
    {NULL, NULL, 0, 0, NULL, NULL},
};

/* ---- cel.@mapInsert: the step of transformMap and transformMapEntry (cel-go ext/comprehensions.go) ---- */

/* Insert @k: @v into map @m: in place into a comprehension's accumulator, else into a copy. */
static struct ks_cel_value map_insert(struct cel_ctx *c, const struct ks_cel_value *m,
                                      const struct ks_cel_value *k, const struct ks_cel_value *v)
{
    struct ks_cel_value found;
    int rc = ks__cel_map_find(c, m, k, &found);
    if (rc < 0)
        return found;
    if (rc == 0) {
        struct ks_cel_value key = ks__cel_err_key(c, "", k);
        return ks__cel_errf(c, "insert failed: key %.*s already exists", (int)key.v.str.len, key.v.str.p);
    }
    uint32_t n = ks__cel_agg_size(m);
    if (m->v.host.ops == &ks__cel_map_ops && ((struct cel_map *)m->v.host.obj)->mutable) {
        struct cel_map *mm = (struct cel_map *)m->v.host.obj;
        if (mm->n == mm->cap) {
            uint32_t cap = mm->cap ? mm->cap * 2 : 8;
            struct ks_cel_value *nk = ks__cel_salloc(c, cap * sizeof(*nk));
            struct ks_cel_value *nv = ks__cel_salloc(c, cap * sizeof(*nv));
            if (mm->n) {
                memcpy(nk, mm->keys, mm->n * sizeof(*nk));
                memcpy(nv, mm->vals, mm->n * sizeof(*nv));
            }
            mm->keys = nk;
            mm->vals = nv;
            mm->cap = cap;
        }
        ((struct ks_cel_value *)mm->keys)[mm->n] = *k;
        ((struct ks_cel_value *)mm->vals)[mm->n] = *v;
        mm->n++;
        return *m;
    }
    struct ks_cel_value *keys = ks__cel_salloc(c, (n + 1) * sizeof(*keys));
    struct ks_cel_value *vals = ks__cel_salloc(c, (n + 1) * sizeof(*vals));
    for (uint32_t i = 0; i < n; i++)
        keys[i] = ks__cel_map_entry(c, m, i, &vals[i]);
    keys[n] = *k;
    vals[n] = *v;
    return ks__cel_make_map(c, keys, vals, n + 1);
}

IMPL(map_insert_kv)
{
    UNUSED_ARGS;
    return map_insert(c, &a[0], &a[1], &a[2]);
}

IMPL(map_insert_map)
{
    UNUSED_ARGS;
    struct ks_cel_value m = a[0];
    uint32_t n2 = ks__cel_agg_size(&a[1]);
    for (uint32_t i = 0; i < n2; i++) {
        struct ks_cel_value v;
        struct ks_cel_value k = ks__cel_map_entry(c, &a[1], i, &v);
        m = map_insert(c, &m, &k, &v);
        if (ks__cel_is_err(&m))
            return m;
    }
    return m;
}

const struct cel_decl ks__cel_comprev2_decls[] = {
    {"cel.@mapInsert", "@mapInsert_map_key_value", 0, 0, "map(K, V), K, V -> map(K, V)", map_insert_kv},
    {"cel.@mapInsert", "@mapInsert_map_map", 0, 0, "map(K, V), map(K, V) -> map(K, V)", map_insert_map},
    {NULL, NULL, 0, 0, NULL, NULL},
};
