/*
 * cel_eval.c - CEL evaluation: walks the planned tree with the activation's values in slots,
 * allocating only from the scratch arena, and counts cel-go's runtime cost.
 *
 * Mirrors cel-go interpreter/interpretable.go: strict calls return their first error argument;
 * && and || absorb errors commutatively (false && error is false, error || true is true, a
 * non-bool is "no such overload"); the ternary evaluates one branch; a comprehension evaluates
 * its accumulator's initial value when the accumulator is first read and appends to an empty
 * list accumulator in place (cel-go's mutable list); the result is computed once the loop
 * condition is not true. Selection and indexing follow interpreter/attributes.go ("no such
 * key: x", "index out of bounds: 5", optional chaining through optional values). The cost
 * follows interpreter/runtimecost.go: 1 per variable read and per select or index qualifier
 * (a chain read as a qualifier or a ternary branch does not pay for its root), calls by their
 * overload (cel_cost.c), 10 per list and 30 per map literal built; exceeding the limit aborts
 * with "operation cancelled: actual cost limit exceeded".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel_internal.h"

/* ---- scratch ------------------------------------------------------------------------------------------- */

int ks_cel_scratch_create(struct ks_cel_scratch **out)
{
    struct ks_cel_scratch *s = calloc(1, sizeof(*s));
    if (!s)
        return -ENOMEM;
    *out = s;
    return 0;
}

void ks_cel_scratch_destroy(struct ks_cel_scratch *s)
{
    if (!s)
        return;
    ks__cel_regex_scratch_destroy(s);
    ks__cel_arena_free(&s->arena);
    free(s);
}

const char *ks_cel_scratch_string(struct ks_cel_scratch *s, const char *p, size_t len)
{
    char *d = ks__cel_alloc(&s->arena, len ? len : 1);
    if (d && len)
        memcpy(d, p, len);
    return d;
}

void *ks_cel_scratch_alloc(struct ks_cel_scratch *s, size_t n)
{
    return ks__cel_alloc(&s->arena, n);
}

void *ks__cel_salloc(struct cel_ctx *c, size_t n)
{
    void *p = ks__cel_alloc(&c->s->arena, n);
    if (!p) {
        c->fatal = -ENOMEM;
        longjmp(c->jb, 1);
    }
    return p;
}

struct ks_cel_value ks__cel_errf(struct cel_ctx *c, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n >= sizeof(buf))
        n = sizeof(buf) - 1;
    char *p = ks__cel_salloc(c, (size_t)n + 1);
    memcpy(p, buf, (size_t)n + 1);
    return ks__cel_str(KS_CEL_ERROR, p, (size_t)n);
}

struct ks_cel_value ks__cel_err_overload(void)
{
    return ks__cel_str(KS_CEL_ERROR, "no such overload", 16);
}

struct ks_cel_value ks__cel_err_key(struct cel_ctx *c, const char *prefix, const struct ks_cel_value *k)
{
    struct cel_sb b = {0};
    ks__cel_sb_puts(&b, prefix);
    ks__cel_value_fmt(&b, k);
    if (b.oom || !b.p) {
        ks__cel_sb_free(&b);
        return ks__cel_errf(c, "%s", prefix);
    }
    char *p = ks__cel_salloc(c, b.len + 1);
    memcpy(p, b.p, b.len + 1);
    size_t n = b.len;
    ks__cel_sb_free(&b);
    return ks__cel_str(KS_CEL_ERROR, p, n);
}

void ks__cel_cost_add(struct cel_ctx *c, uint64_t n)
{
    c->cost += n;
    if (c->limit && c->cost > c->limit) {
        c->fatal = -ECANCELED;
        longjmp(c->jb, 1);
    }
}

void ks__cel_ssb_putn(struct cel_ssb *b, const char *s, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 32;
        while (cap < b->len + n)
            cap *= 2;
        char *p = ks__cel_salloc(b->c, cap);
        if (b->len)
            memcpy(p, b->p, b->len);
        b->p = p;
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->len, s, n);
    b->len += n;
}

void ks__cel_ssb_putc(struct cel_ssb *b, char ch)
{
    ks__cel_ssb_putn(b, &ch, 1);
}

struct ks_cel_value ks__cel_ssb_value(struct cel_ssb *b, int kind)
{
    return ks__cel_str(kind, b->p ? b->p : "", b->len);
}

/* ---- the mutable list of a comprehension's accumulator ---------------------------------------------------
 */

/* An empty list that may grow in place while it is a comprehension's accumulator. */
static struct ks_cel_value new_mlist(struct cel_ctx *c)
{
    struct ks_cel_value v = ks__cel_make_list(c, NULL, 0);
    ((struct cel_list *)v.v.host.obj)->mutable = true;
    return v;
}

/* ---- selection and indexing
 * ---------------------------------------------------------------------------------- */

static const char *go_type_name(const struct ks_cel_value *v)
{
    switch (v->kind) {
    case KS_CEL_NULL:
        return "types.Null";
    case KS_CEL_BOOL:
        return "types.Bool";
    case KS_CEL_INT:
        return "types.Int";
    case KS_CEL_UINT:
        return "types.Uint";
    case KS_CEL_DOUBLE:
        return "types.Double";
    case KS_CEL_STRING:
        return "types.String";
    case KS_CEL_BYTES:
        return "types.Bytes";
    case KS_CEL_DURATION:
        return "types.Duration";
    case KS_CEL_TIMESTAMP:
        return "types.Timestamp";
    case KS_CEL_TYPE:
        return "*types.Type";
    case KS_CEL_OPTIONAL:
        return "*types.Optional";
    default:
        return "ref.Val";
    }
}

/*
 * Qualify @obj by @key: 0 with *out, 1 when absent (not an error when @presence), or an error
 * value in *out with -1.
 */
static int qualify(struct cel_ctx *c, const struct ks_cel_value *obj, const struct ks_cel_value *key,
                   struct ks_cel_value *out, bool presence)
{
    bool bad_presence_error = (c->p->flags & KS_CEL_COMPILE_BAD_PRESENCE_ERROR) != 0;
    switch (obj->kind) {
    case KS_CEL_MAP:
    case KS_CEL_OBJECT: {
        int rc = ks__cel_map_find(c, obj, key, out);
        if (rc <= 0)
            return rc;
        if (presence)
            return 1;
        *out = ks__cel_err_key(c, "no such key: ", key);
        return -1;
    }
    case KS_CEL_LIST: {
        int64_t i;
        switch (key->kind) {
        case KS_CEL_INT:
            i = key->v.i;
            break;
        case KS_CEL_UINT:
            if (key->v.u > INT64_MAX) {
                *out = ks__cel_err_key(c, "unsupported index value ", key);
                goto in_list;
            }
            i = (int64_t)key->v.u;
            break;
        case KS_CEL_DOUBLE: {
            double d = key->v.d;
            if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || (double)(int64_t)d != d) {
                *out = ks__cel_err_key(c, "unsupported index value ", key);
                goto in_list;
            }
            i = (int64_t)d;
            break;
        }
        default:
            *out = ks__cel_errf(c, "unsupported index type '%s' in list",
                                ks__cel_type_name(ks__cel_type_of(key)));
            return -1;
        }
        if (i >= 0 && (uint64_t)i < ks__cel_agg_size(obj)) {
            *out = ks__cel_list_at(c, obj, (uint32_t)i);
            return ks__cel_is_err(out) ? -1 : 0;
        }
        if (presence)
            return 1;
        *out = ks__cel_err_key(c, "index out of bounds: ", key);
        return -1;
    in_list : {
        /* "unsupported index value 1.5 in list" */
        struct ks_cel_value e = *out;
        *out = ks__cel_errf(c, "%.*s in list", (int)e.v.str.len, e.v.str.p);
        return -1;
    }
    }
    default:
        if (presence && !bad_presence_error)
            return 1;
        *out = ks__cel_err_key(c, "no such key: ", key);
        return -1;
    }
}

/* Select or index @obj by @key, through an optional operand (optional chaining). */
static struct ks_cel_value select_value(struct cel_ctx *c, const struct ks_cel_value *obj,
                                        const struct ks_cel_value *key, bool opt_result)
{
    bool via_opt = false;
    if (obj->kind == KS_CEL_OPTIONAL) {
        if (!obj->v.own)
            return *obj;
        obj = &((const struct cel_opt *)obj->v.own)->v;
        via_opt = true;
    }
    struct ks_cel_value out;
    int rc = qualify(c, obj, key, &out, via_opt || opt_result);
    if (rc < 0)
        return out;
    if (rc == 1)
        return ks__cel_make_opt(c, NULL);
    if (via_opt || opt_result)
        return ks__cel_make_opt(c, &out);
    return out;
}

/* ---- logic
 * ----------------------------------------------------------------------------------------------------------
 */

static __attribute__((noinline)) struct ks_cel_value eval_logic(struct cel_ctx *c, const struct cel_expr *e,
                                                                bool is_and)
{
    struct ks_cel_value err = {.kind = KS_CEL_NULL};
    bool have_err = false;
    for (uint32_t i = 0; i < 2; i++) {
        struct ks_cel_value v = ks__cel_eval(c, e->u.call.args[i]);
        if (v.kind == KS_CEL_BOOL) {
            if (v.v.b != is_and)
                return v;
            continue;
        }
        if (!have_err) {
            err = ks__cel_is_err(&v) ? v : ks__cel_err_overload();
            have_err = true;
        }
    }
    return have_err ? err : ks__cel_bool(is_and);
}

/* ---- calls
 * ------------------------------------------------------------------------------------------------------------
 */

bool ks__cel_value_fits(const struct ks_cel_value *v, const struct ks_cel_type *t)
{
    switch (t->kind) {
    case KS_CEL_DYN:
    case CEL_T_PARAM:
        return true;
    case KS_CEL_OBJECT:
        return v->kind == KS_CEL_OBJECT;
    default:
        return (int)v->kind == t->kind;
    }
}

static bool ovl_fits(const struct cel_overload *o, const struct ks_cel_value *a, uint32_t n)
{
    if (o->nargs != n)
        return false;
    for (uint32_t i = 0; i < n; i++)
        if (!ks__cel_value_fits(&a[i], o->args[i]))
            return false;
    return true;
}

struct ks_cel_value ks__cel_dispatch(struct cel_ctx *c, const struct cel_expr *e,
                                     const struct ks_cel_value *a, uint32_t n,
                                     const struct cel_overload **used)
{
    const struct cel_overload *const *ov = e->u.call.ovls;
    uint32_t no = e->u.call.novls;
    bool arg0_kind = false, trait = false;
    for (uint32_t i = 0; i < no; i++) {
        if (ovl_fits(ov[i], a, n)) {
            *used = ov[i];
            return ov[i]->impl(c, e, a, n);
        }
        trait |= (ov[i]->flags & CEL_OVL_TRAIT) != 0;
        if (n && ov[i]->nargs == n && ks__cel_value_fits(&a[0], ov[i]->args[0]))
            arg0_kind = true;
    }
    *used = NULL;
    const char *fn = e->u.call.fn;
    if (trait && n && !arg0_kind) {
        /* the trait is the function's: any of its overloads taking arg0's kind */
        const struct cel_function *f = ks__cel_env_function(c->p->env, fn);
        for (uint32_t i = 0; f && i < f->n && !arg0_kind; i++)
            arg0_kind = f->ovls[i]->nargs == n && ks__cel_value_fits(&a[0], f->ovls[i]->args[0]);
    }
    if (trait) {
        /* cel-go's trait-bound operators: a missing trait names the function, a bad operand does not */
        if (arg0_kind || !strcmp(fn, "!_") || !strcmp(fn, "@in") ||
            (!strcmp(fn, "-_") && n == 1 && (a[0].kind == KS_CEL_BOOL || a[0].kind == KS_CEL_DURATION)))
            return ks__cel_err_overload();
        return ks__cel_errf(c, "no such overload: %s", fn);
    }
    if (!no)
        return ks__cel_errf(c, "no such overload: %s", fn);
    /* decls.MaybeNoSuchOverload: "no such overload: fn(int, string)" */
    struct cel_sb b = {0};
    ks__cel_sb_printf(&b, "no such overload: %s(", fn);
    for (uint32_t i = 0; i < n; i++)
        ks__cel_sb_printf(&b, i ? ", %s" : "%s", ks__cel_type_name(ks__cel_type_of(&a[i])));
    ks__cel_sb_puts(&b, ")");
    struct ks_cel_value r = ks__cel_errf(c, "%s", b.p ? b.p : "no such overload");
    ks__cel_sb_free(&b);
    return r;
}

static __attribute__((noinline)) struct ks_cel_value eval_call(struct cel_ctx *c, const struct cel_expr *e)
{
    uint32_t n = e->u.call.nargs;
    struct ks_cel_value stack[4];
    struct ks_cel_value *a = n <= 4 ? stack : ks__cel_salloc(c, n * sizeof(*a));
    const struct cel_overload *o = e->u.call.novls == 1 ? e->u.call.ovls[0] : NULL;
    bool strict = !(o && (o->flags & CEL_OVL_NONSTRICT));
    for (uint32_t i = 0; i < n; i++) {
        a[i] = ks__cel_eval(c, e->u.call.args[i]);
        if (strict && n > 2 && ks__cel_is_err(&a[i]))
            return a[i];
    }
    if (strict)
        for (uint32_t i = 0; i < n; i++)
            if (ks__cel_is_err(&a[i]))
                return a[i];
    struct ks_cel_value r;
    if (e->u.call.cached) {
        r = *e->u.call.cached;
    } else if (o && o->impl && ovl_fits(o, a, n)) {
        r = o->impl(c, e, a, n);
    } else if (e->u.call.novls) {
        r = ks__cel_dispatch(c, e, a, n, &o);
    } else {
        r = ks__cel_errf(c, "no such overload: %s", e->u.call.fn);
    }
    ks__cel_cost_add(c, o ? ks__cel_call_cost(o->cost, a, n, &r) : 1);
    return r;
}

/* ---- aggregates
 * ----------------------------------------------------------------------------------------------------- */

static __attribute__((noinline)) struct ks_cel_value eval_list(struct cel_ctx *c, const struct cel_expr *e)
{
    uint32_t n = e->u.list.n;
    struct ks_cel_value *items = ks__cel_salloc(c, (n ? n : 1) * sizeof(*items));
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct ks_cel_value v = ks__cel_eval(c, e->u.list.elems[i]);
        if (ks__cel_is_err(&v))
            return v;
        if (e->u.list.opt && e->u.list.opt[i]) {
            if (v.kind != KS_CEL_OPTIONAL) {
                struct cel_sb b = {0};
                ks__cel_value_fmt(&b, &v);
                struct ks_cel_value r = ks__cel_errf(
                    c, "cannot initialize optional list element from non-optional value %s", b.p ? b.p : "");
                ks__cel_sb_free(&b);
                return r;
            }
            if (!v.v.own)
                continue;
            v = ((const struct cel_opt *)v.v.own)->v;
        }
        items[k++] = v;
    }
    ks__cel_cost_add(c, e->scost);
    return ks__cel_make_list(c, items, k);
}

static __attribute__((noinline)) struct ks_cel_value eval_map(struct cel_ctx *c, const struct cel_expr *e)
{
    uint32_t n = e->u.map.n;
    struct ks_cel_value *keys = ks__cel_salloc(c, (n ? n : 1) * sizeof(*keys));
    struct ks_cel_value *vals = ks__cel_salloc(c, (n ? n : 1) * sizeof(*vals));
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct cel_entry *en = &e->u.map.e[i];
        struct ks_cel_value key = ks__cel_eval(c, en->key);
        if (ks__cel_is_err(&key))
            return key;
        struct ks_cel_value v = ks__cel_eval(c, en->value);
        if (ks__cel_is_err(&v))
            return v;
        /* a later entry replaces an earlier one with the same key */
        uint32_t at = k;
        for (uint32_t j = 0; j < k; j++)
            if (keys[j].kind == key.kind && ks__cel_equal(&keys[j], &key))
                at = j;
        if (en->optional) {
            if (v.kind != KS_CEL_OPTIONAL) {
                struct cel_sb b = {0};
                ks__cel_value_fmt(&b, &v);
                struct ks_cel_value r = ks__cel_errf(
                    c, "cannot initialize optional entry '%s' from non-optional value", b.p ? b.p : "");
                ks__cel_sb_free(&b);
                return r;
            }
            if (!v.v.own) {
                if (at < k) {
                    memmove(&keys[at], &keys[at + 1], (k - at - 1) * sizeof(*keys));
                    memmove(&vals[at], &vals[at + 1], (k - at - 1) * sizeof(*vals));
                    k--;
                }
                continue;
            }
            v = ((const struct cel_opt *)v.v.own)->v;
        }
        keys[at] = key;
        vals[at] = v;
        if (at == k)
            k++;
    }
    ks__cel_cost_add(c, e->scost);
    return ks__cel_make_map(c, keys, vals, k);
}

/* ---- comprehensions
 * ---------------------------------------------------------------------------------------------------- */

struct cel_lazy {
    const struct cel_expr *init;
};

static struct ks_cel_value read_slot(struct cel_ctx *c, const struct cel_expr *e)
{
    struct ks_cel_value *v = &c->slots[e->u.ident.slot];
    if (v->kind == KS_CEL_DYN) {
        /* unbound: a global the activation lacks, or an accumulator not initialised yet */
        const struct cel_lazy *lz = v->v.own;
        if (lz) {
            struct ks_cel_value init = ks__cel_eval(c, lz->init);
            if (init.kind == KS_CEL_LIST && ks__cel_agg_size(&init) == 0)
                init = new_mlist(c);
            else if (init.kind == KS_CEL_MAP && ks__cel_agg_size(&init) == 0) {
                init = ks__cel_make_map(c, NULL, NULL, 0);
                ((struct cel_map *)init.v.host.obj)->mutable = true;
            }
            c->slots[e->u.ident.slot] = init;
            return init;
        }
        return ks__cel_errf(c, "no such attribute(s): %s", e->u.ident.name);
    }
    return *v;
}

/* accu + rhs where accu is a mutable accumulator list: append in place. */
static bool append_in_place(struct cel_ctx *c, const struct ks_cel_value *accu,
                            const struct ks_cel_value *rhs)
{
    if (accu->kind != KS_CEL_LIST || rhs->kind != KS_CEL_LIST || accu->v.host.ops != &ks__cel_list_ops)
        return false;
    struct cel_list *m = (struct cel_list *)accu->v.host.obj;
    if (!m->mutable)
        return false;
    uint32_t add = ks__cel_agg_size(rhs);
    if (m->n + add > m->cap) {
        uint32_t cap = m->cap ? m->cap * 2 : 8;
        while (cap < m->n + add)
            cap *= 2;
        struct ks_cel_value *items = ks__cel_salloc(c, cap * sizeof(*items));
        if (m->n)
            memcpy(items, m->items, m->n * sizeof(*items));
        m->items = items;
        m->cap = cap;
    }
    struct ks_cel_value *items = (struct ks_cel_value *)m->items;
    for (uint32_t i = 0; i < add; i++)
        items[m->n + i] = ks__cel_list_at(c, rhs, i);
    m->n += add;
    return true;
}

static __attribute__((noinline)) struct ks_cel_value eval_comp(struct cel_ctx *c, const struct cel_expr *e)
{
    struct ks_cel_value range = ks__cel_eval(c, e->u.comp.range);
    if (ks__cel_is_err(&range))
        return range;
    if (range.kind != KS_CEL_LIST && range.kind != KS_CEL_MAP)
        return ks__cel_errf(c, "got '%s', expected iterable type", go_type_name(&range));
    struct cel_lazy *lz = ks__cel_salloc(c, sizeof(*lz));
    lz->init = e->u.comp.init;
    struct ks_cel_value *accu = &c->slots[e->u.comp.slot_accu];
    struct ks_cel_value saved_accu = *accu;
    *accu = (struct ks_cel_value){.kind = KS_CEL_DYN};
    accu->v.own = lz;
    uint32_t n = ks__cel_agg_size(&range);
    bool is_map = range.kind == KS_CEL_MAP;
    for (uint32_t i = 0; i < n; i++) {
        struct ks_cel_value v2;
        struct ks_cel_value v1 =
            is_map ? ks__cel_map_entry(c, &range, i, &v2) : ks__cel_list_at(c, &range, i);
        if (e->u.comp.iter2 && !is_map) {
            v2 = v1;
            v1 = ks__cel_int(i);
        }
        c->slots[e->u.comp.slot_iter] = v1;
        if (e->u.comp.iter2)
            c->slots[e->u.comp.slot_iter2] = v2;
        struct ks_cel_value cond = ks__cel_eval(c, e->u.comp.cond);
        if (cond.kind != KS_CEL_BOOL || !cond.v.b)
            break;
        struct ks_cel_value step = ks__cel_eval(c, e->u.comp.step);
        c->slots[e->u.comp.slot_accu] = step;
    }
    struct ks_cel_value r = ks__cel_eval(c, e->u.comp.result);
    struct ks_cel_value *last = &c->slots[e->u.comp.slot_accu];
    if (last->kind == KS_CEL_LIST && last->v.host.ops == &ks__cel_list_ops)
        ((struct cel_list *)last->v.host.obj)->mutable = false;
    if (last->kind == KS_CEL_MAP && last->v.host.ops == &ks__cel_map_ops)
        ((struct cel_map *)last->v.host.obj)->mutable = false;
    c->slots[e->u.comp.slot_accu] = saved_accu;
    return r;
}

/* ---- the walk
 * --------------------------------------------------------------------------------------------------------------
 */

#define NOINLINE __attribute__((noinline))

static NOINLINE struct ks_cel_value eval_var(struct cel_ctx *c, const struct cel_expr *e)
{
    struct ks_cel_value v = read_slot(c, e);
    ks__cel_cost_add(c, e->scost);
    return v;
}

static NOINLINE struct ks_cel_value eval_select(struct cel_ctx *c, const struct cel_expr *e)
{
    struct ks_cel_value obj = ks__cel_eval(c, e->u.sel.operand);
    ks__cel_cost_add(c, e->scost);
    if (ks__cel_is_err(&obj))
        return obj;
    return select_value(c, &obj, &e->u.sel.key, false);
}

static NOINLINE struct ks_cel_value eval_has(struct cel_ctx *c, const struct cel_expr *e)
{
    struct ks_cel_value obj = ks__cel_eval(c, e->u.sel.operand);
    ks__cel_cost_add(c, e->scost);
    if (ks__cel_is_err(&obj))
        return obj;
    const struct ks_cel_value *key = &e->u.sel.key;
    struct ks_cel_value out;
    if (obj.kind == KS_CEL_OPTIONAL) {
        if (!obj.v.own)
            return ks__cel_bool(false);
        obj = ((const struct cel_opt *)obj.v.own)->v;
    }
    int rc = qualify(c, &obj, key, &out, true);
    if (rc < 0)
        return out;
    return ks__cel_bool(rc == 0);
}

static NOINLINE struct ks_cel_value eval_index(struct cel_ctx *c, const struct cel_expr *e)
{
    struct ks_cel_value obj = ks__cel_eval(c, e->u.call.args[0]);
    struct ks_cel_value key = ks__cel_eval(c, e->u.call.args[1]);
    ks__cel_cost_add(c, e->scost);
    if (ks__cel_is_err(&obj))
        return obj;
    if (ks__cel_is_err(&key))
        return key;
    return select_value(c, &obj, &key, e->op != CEL_OP_INDEX);
}

static NOINLINE struct ks_cel_value eval_cond(struct cel_ctx *c, const struct cel_expr *e)
{
    struct ks_cel_value v = ks__cel_eval(c, e->u.call.args[0]);
    if (v.kind == KS_CEL_BOOL)
        return ks__cel_eval(c, e->u.call.args[v.v.b ? 1 : 2]);
    return ks__cel_is_err(&v) ? v : ks__cel_err_overload();
}

static NOINLINE struct ks_cel_value eval_eq(struct cel_ctx *c, const struct cel_expr *e)
{
    struct ks_cel_value a[2];
    a[0] = ks__cel_eval(c, e->u.call.args[0]);
    a[1] = ks__cel_eval(c, e->u.call.args[1]);
    bool is_err = true;
    const struct ks_cel_value *err = &a[0];
    bool eq = false;
    if (ks__cel_is_err(&a[0]))
        err = &a[0];
    else if (ks__cel_is_err(&a[1]))
        err = &a[1];
    else {
        is_err = false;
        eq = ks__cel_equal(&a[0], &a[1]) == (e->op == CEL_OP_EQ);
    }
    struct ks_cel_value r = is_err ? *err : ks__cel_bool(eq);
    ks__cel_cost_add(c, ks__cel_call_cost(CEL_COST_MIN_SIZE, a, 2, &r));
    return r;
}

static NOINLINE struct ks_cel_value eval_in_set(struct cel_ctx *c, const struct cel_expr *e)
{
    struct ks_cel_value v = ks__cel_eval(c, e->u.call.args[0]);
    if (ks__cel_is_err(&v))
        return v;
    const struct ks_cel_value *set = &e->u.call.args[1]->u.lit;
    const struct cel_list *l = set->v.host.obj;
    for (uint32_t i = 0; i < l->n; i++)
        if (ks__cel_equal(&l->items[i], &v))
            return ks__cel_bool(true);
    return ks__cel_bool(false);
}

static NOINLINE struct ks_cel_value eval_append(struct cel_ctx *c, const struct cel_expr *e)
{
    /* accu + [x] appends to a comprehension's list accumulator in place */
    struct ks_cel_value a[2];
    a[0] = ks__cel_eval(c, e->u.call.args[0]);
    a[1] = ks__cel_eval(c, e->u.call.args[1]);
    if (!ks__cel_is_err(&a[0]) && !ks__cel_is_err(&a[1]) && append_in_place(c, &a[0], &a[1])) {
        ks__cel_cost_add(c, 1);
        return a[0];
    }
    return ks__cel_eval_call_values(c, e, a);
}

static NOINLINE struct ks_cel_value eval_opt_or(struct cel_ctx *c, const struct cel_expr *e)
{
    struct ks_cel_value v = ks__cel_eval(c, e->u.call.args[0]);
    if (v.kind != KS_CEL_OPTIONAL)
        return v;
    if (v.v.own)
        return e->op == CEL_OP_OPT_OR ? v : ((const struct cel_opt *)v.v.own)->v;
    return ks__cel_eval(c, e->u.call.args[1]);
}

static NOINLINE struct ks_cel_value eval_nsf(struct cel_ctx *c, const struct cel_expr *e)
{
    struct ks_cel_value v = ks__cel_eval(c, e->u.call.args[0]);
    ks__cel_cost_add(c, 1);
    return v.kind == KS_CEL_BOOL ? v : ks__cel_bool(true);
}

struct ks_cel_value ks__cel_eval(struct cel_ctx *c, const struct cel_expr *e)
{
    switch (e->op) {
    case CEL_OP_CONST:
        return e->u.lit;
    case CEL_OP_VAR:
        return eval_var(c, e);
    case CEL_OP_SELECT:
        return eval_select(c, e);
    case CEL_OP_HAS:
        return eval_has(c, e);
    case CEL_OP_INDEX:
    case CEL_OP_OPT_INDEX:
    case CEL_OP_OPT_SELECT:
        return eval_index(c, e);
    case CEL_OP_AND:
        return eval_logic(c, e, true);
    case CEL_OP_OR:
        return eval_logic(c, e, false);
    case CEL_OP_NOT_STRICTLY_FALSE:
        return eval_nsf(c, e);
    case CEL_OP_COND:
        return eval_cond(c, e);
    case CEL_OP_EQ:
    case CEL_OP_NE:
        return eval_eq(c, e);
    case CEL_OP_IN_SET:
        return eval_in_set(c, e);
    case CEL_OP_CALL:
        if (e->flags & CEL_F_ACCU_APPEND)
            return eval_append(c, e);
        return eval_call(c, e);
    case CEL_OP_OPT_OR:
    case CEL_OP_OPT_OR_VALUE:
        return eval_opt_or(c, e);
    case CEL_OP_LIST:
        return eval_list(c, e);
    case CEL_OP_MAP:
        return eval_map(c, e);
    case CEL_OP_COMP:
        return eval_comp(c, e);
    default:
        return ks__cel_errf(c, "unsupported expression");
    }
}

/* A two-argument call whose arguments are already evaluated. */
struct ks_cel_value ks__cel_eval_call_values(struct cel_ctx *c, const struct cel_expr *e,
                                             struct ks_cel_value *a)
{
    const struct cel_overload *o = e->u.call.novls == 1 ? e->u.call.ovls[0] : NULL;
    if (ks__cel_is_err(&a[0]))
        return a[0];
    if (ks__cel_is_err(&a[1]))
        return a[1];
    struct ks_cel_value r;
    if (o && o->impl && ovl_fits(o, a, 2))
        r = o->impl(c, e, a, 2);
    else
        r = ks__cel_dispatch(c, e, a, 2, &o);
    ks__cel_cost_add(c, o ? ks__cel_call_cost(o->cost, a, 2, &r) : 1);
    return r;
}

/* ---- entry
 * ----------------------------------------------------------------------------------------------------------------------
 */

int ks_cel_eval(const struct ks_cel_program *p, const struct ks_cel_binding *vars, uint32_t nvars,
                struct ks_cel_scratch *s, uint64_t cost_limit, struct ks_cel_value *result, uint64_t *cost,
                char *err, size_t errlen)
{
    /* not zero-initialised: the jump buffer alone is 200 bytes */
    struct cel_ctx c;
    c.p = p;
    c.s = s;
    c.slots = NULL;
    c.cost = 0;
    c.limit = cost_limit;
    c.fatal = 0;
    ks__cel_arena_reset(&s->arena);
    if (setjmp(c.jb)) {
        if (cost)
            *cost = c.cost;
        if (c.fatal == -ECANCELED) {
            if (err && errlen)
                snprintf(err, errlen, "operation cancelled: actual cost limit exceeded");
            return -EINVAL;
        }
        if (err && errlen)
            snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    c.slots = ks__cel_salloc(&c, (p->nslots ? p->nslots : 1) * sizeof(*c.slots));
    for (uint32_t i = 0; i < p->nslots; i++)
        c.slots[i] = (struct ks_cel_value){.kind = KS_CEL_DYN};
    for (uint32_t g = 0; g < p->nglobals; g++) {
        for (uint32_t i = 0; i < nvars; i++) {
            if (vars[i].name == p->global_names[g] || !strcmp(vars[i].name, p->global_names[g])) {
                c.slots[g] = vars[i].value;
                break;
            }
        }
    }
    struct ks_cel_value r = ks__cel_eval(&c, p->root);
    if (cost)
        *cost = c.cost;
    if (r.kind == KS_CEL_ERROR) {
        if (err && errlen)
            snprintf(err, errlen, "%.*s", (int)r.v.str.len, r.v.str.p);
        return -EINVAL;
    }
    *result = r;
    return 0;
}
