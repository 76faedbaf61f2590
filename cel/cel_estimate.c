/*
 * cel_estimate.c - the static cost estimate of a checked CEL expression: the worst case
 * (and best case) cost cel-go's checker.Cost computes, with Kubernetes' CostEstimator
 * (library/cost.go EstimateCallCost), ext.Sets' estimators and a size estimator that reads
 * the bounds declared on the environment's types (ks_cel_type_*_bounded).
 *
 * Mirrors cel-go checker/cost.go: identifiers and selects on maps and objects cost 1, has()
 * costs nothing (PresenceTestHasCost(false), as Kubernetes sets it), list and map literals 10
 * and 30, calls 1 unless priced by their arguments' estimated sizes, && and || their left
 * argument at best and both at worst, the ternary its condition and the costlier branch, a
 * comprehension its range's size times its loop condition and step, cel.bind its init and
 * result. Sizes: literals are exact; a select or index path from a declared variable
 * ("device", "attributes", "@values", "model") is looked up in the declared types the way
 * Kubernetes' DRA size estimator walks its declaration (a field by name, "@items" and
 * "@values" to the element type, "@keys" to the key type, a name on a map of leaves to the
 * value type); bool, int, uint, double, duration and timestamp have size 1; anything else is
 * unknown (0 to 2^64-1). Runs on the checked tree, before the planner rewrites it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cel_internal.h"

struct est {
    uint64_t min, max;
};

struct path {
    const struct path *up;
    const char *seg;
};

struct entry_size {
    int kind; /* KS_CEL_LIST or KS_CEL_MAP */
    struct est key, val;
};

struct node_info {
    bool has_size, has_entry;
    struct est size;
    struct entry_size entry;
    const struct path *path;
};

struct local {
    const char *name;
    const struct path *path;
    bool has_size, has_entry;
    struct est size;
    struct entry_size entry;
};

struct coster {
    const struct ks_cel_program *p;
    struct node_info *info; /* by node id */
    uint32_t ninfo;
    struct local *locals;
    uint32_t nlocals, caplocals;
    struct cel_arena a;     /* paths */
    struct node_info spare; /* for a node without an id (none: ids are dense) */
    bool oom;
};

static const struct est UNKNOWN = {0, UINT64_MAX};

static uint64_t add_sat(uint64_t x, uint64_t y)
{
    return y > 0 && x > UINT64_MAX - y ? UINT64_MAX : x + y;
}
static uint64_t mul_sat(uint64_t x, uint64_t y)
{
    return y != 0 && x > UINT64_MAX / y ? UINT64_MAX : x * y;
}
static uint64_t by_factor(uint64_t x, double f)
{
    double xf = (double)x;
    if (xf > 0 && f > 0 && xf > 18446744073709551615.0 / f)
        return UINT64_MAX;
    double c = ceil(xf * f);
    if (c >= 18446744073709551616.0)
        return UINT64_MAX;
    return (uint64_t)c;
}
static struct est e_add(struct est a, struct est b)
{
    return (struct est){add_sat(a.min, b.min), add_sat(a.max, b.max)};
}
static struct est e_mul(struct est a, struct est b)
{
    return (struct est){mul_sat(a.min, b.min), mul_sat(a.max, b.max)};
}
static struct est e_factor(struct est a, double f)
{
    return (struct est){by_factor(a.min, f), by_factor(a.max, f)};
}
static struct est e_union(struct est a, struct est b)
{
    return (struct est){b.min < a.min ? b.min : a.min, b.max > a.max ? b.max : a.max};
}
static struct est fixed(uint64_t v)
{
    return (struct est){v, v};
}

static struct node_info *info(struct coster *c, const struct cel_expr *e)
{
    if (e->id >= c->ninfo) {
        memset(&c->spare, 0, sizeof(c->spare));
        return &c->spare;
    }
    return &c->info[e->id];
}

static const struct path *mkpath(struct coster *c, const struct path *up, const char *seg)
{
    struct path *p = ks__cel_alloc(&c->a, sizeof(*p));
    if (!p) {
        c->oom = true;
        return up;
    }
    p->up = up;
    p->seg = seg;
    return p;
}

static struct local *peek_local(struct coster *c, const char *name)
{
    for (uint32_t i = c->nlocals; i-- > 0;)
        if (!strcmp(c->locals[i].name, name))
            return &c->locals[i];
    return NULL;
}

static void push_local(struct coster *c, const struct local *l)
{
    if (c->nlocals == c->caplocals) {
        uint32_t cap = c->caplocals ? c->caplocals * 2 : 8;
        struct local *v = realloc(c->locals, cap * sizeof(*v));
        if (!v) {
            c->oom = true;
            return;
        }
        c->locals = v;
        c->caplocals = cap;
    }
    c->locals[c->nlocals++] = *l;
}

static void pop_local(struct coster *c, const char *name)
{
    for (uint32_t i = c->nlocals; i-- > 0;) {
        if (!strcmp(c->locals[i].name, name)) {
            memmove(&c->locals[i], &c->locals[i + 1], (c->nlocals - i - 1) * sizeof(*c->locals));
            c->nlocals--;
            return;
        }
    }
}

static const struct path *get_path(struct coster *c, const struct cel_expr *e)
{
    if (e->kind == CEL_E_IDENT) {
        struct local *l = peek_local(c, e->u.ident.name);
        if (l)
            return l->path;
    }
    return info(c, e)->path;
}

/* The declared type at the end of a path from a declared variable, or NULL. */
static const struct ks_cel_type *path_type(struct coster *c, const struct path *p)
{
    if (!p)
        return NULL;
    if (!p->up) {
        if (!strcmp(p->seg, "@result") || !strcmp(p->seg, "__result__"))
            return NULL;
        const struct cel_var *v = ks__cel_env_var(c->p->env, p->seg);
        return v && !v->is_type ? v->type : NULL;
    }
    const struct ks_cel_type *t = path_type(c, p->up);
    if (!t)
        return NULL;
    const char *s = p->seg;
    if (!strcmp(s, "@items"))
        return t->kind == KS_CEL_LIST ? t->p[0] : NULL;
    if (!strcmp(s, "@values"))
        return t->kind == KS_CEL_MAP || t->kind == KS_CEL_LIST ? (t->kind == KS_CEL_MAP ? t->p[1] : t->p[0])
                                                               : NULL;
    if (!strcmp(s, "@keys"))
        return t->kind == KS_CEL_MAP ? t->p[0] : NULL;
    if (!strcmp(s, "@indices"))
        return NULL;
    if (t->kind == KS_CEL_OBJECT) {
        const struct ks_cel_field_decl *f = ks__cel_type_field(t, s, strlen(s));
        return f ? f->type : NULL;
    }
    if (t->kind == KS_CEL_MAP) {
        int vk = t->p[1]->kind;
        if (vk != KS_CEL_MAP && vk != KS_CEL_LIST && vk != KS_CEL_OBJECT)
            return t->p[1];
    }
    return NULL;
}

/* The size estimator: the declared bound of the path's type. */
static bool estimate_size(struct coster *c, const struct path *p, struct est *out)
{
    const struct ks_cel_type *t = path_type(c, p);
    if (!t || !t->max_size)
        return false;
    *out = (struct est){0, t->max_size};
    return true;
}

static bool is_scalar(const struct ks_cel_type *t)
{
    switch (t->kind) {
    case KS_CEL_BOOL:
    case KS_CEL_DOUBLE:
    case KS_CEL_DURATION:
    case KS_CEL_INT:
    case KS_CEL_TIMESTAMP:
    case KS_CEL_UINT:
        return true;
    case KS_CEL_OPTIONAL:
        return is_scalar(t->p[0]);
    default:
        return false;
    }
}

static bool compute_size(struct coster *c, const struct cel_expr *e, struct est *out)
{
    struct node_info *ni = info(c, e);
    if (ni->has_size) {
        *out = ni->size;
        return true;
    }
    switch (e->kind) {
    case CEL_E_LIT:
        switch (e->u.lit.kind) {
        case KS_CEL_STRING:
            *out = fixed(ks__cel_utf8_count(e->u.lit.v.str.p, e->u.lit.v.str.len));
            return true;
        case KS_CEL_BYTES:
            *out = fixed(e->u.lit.v.str.len);
            return true;
        default:
            *out = fixed(1);
            return true;
        }
    case CEL_E_LIST:
        *out = fixed(e->u.list.n);
        return true;
    case CEL_E_MAP:
        *out = fixed(e->u.map.n);
        return true;
    default:
        break;
    }
    if (estimate_size(c, get_path(c, e), out)) {
        ni->has_size = true;
        ni->size = *out;
        return true;
    }
    if (e->type && is_scalar(e->type)) {
        *out = fixed(1);
        return true;
    }
    if (e->kind == CEL_E_IDENT) {
        struct local *l = peek_local(c, e->u.ident.name);
        if (l && l->has_size) {
            *out = l->size;
            return true;
        }
    }
    return false;
}

static struct est size_or_unknown(struct coster *c, const struct cel_expr *e)
{
    struct est s;
    return compute_size(c, e, &s) ? s : UNKNOWN;
}

static void set_size(struct coster *c, const struct cel_expr *e, const struct est *s)
{
    if (!s)
        return;
    struct node_info *ni = info(c, e);
    ni->has_size = true;
    ni->size = *s;
}

static bool compute_entry(struct coster *c, const struct cel_expr *e, struct entry_size *out)
{
    struct node_info *ni = info(c, e);
    if (ni->has_entry) {
        *out = ni->entry;
        return true;
    }
    if (e->kind == CEL_E_IDENT) {
        struct local *l = peek_local(c, e->u.ident.name);
        if (l && l->has_entry) {
            *out = l->entry;
            return true;
        }
    }
    return false;
}

static void set_entry(struct coster *c, const struct cel_expr *e, const struct entry_size *s)
{
    struct node_info *ni = info(c, e);
    ni->has_entry = true;
    ni->entry = *s;
}

static struct est cost(struct coster *c, const struct cel_expr *e);

/* Kubernetes' sizeEstimate of an argument: its computed size, else the declared one. */
static struct est k8s_size(struct coster *c, const struct cel_expr *e)
{
    return size_or_unknown(c, e);
}

/* library.CostEstimator.EstimateCallCost; false when it has no estimate. */
static bool k8s_call_cost(struct coster *c, const char *fn, const struct cel_expr *target,
                          struct cel_expr *const *args, uint32_t nargs, struct est *out, struct est *res,
                          bool *has_res)
{
    *has_res = false;
    if (!strcmp(fn, "isSorted") || !strcmp(fn, "sum") || !strcmp(fn, "max") || !strcmp(fn, "min") ||
        !strcmp(fn, "indexOf") || !strcmp(fn, "lastIndexOf")) {
        if (!target)
            return false;
        const struct ks_cel_type *tt = target->type;
        if (tt && tt->kind == KS_CEL_LIST) {
            struct est el = fixed(1);
            int k = tt->p[0]->kind;
            if (k == KS_CEL_STRING || k == KS_CEL_BYTES) {
                /* the element's size: the list literal's, else the declared one, else unknown */
                struct est sz = UNKNOWN;
                const struct ks_cel_type *et = path_type(c, mkpath(c, get_path(c, target), "@items"));
                if (et && et->max_size)
                    sz = (struct est){0, et->max_size};
                el = e_add(el, e_factor(sz, 0.1));
            }
            *out = e_mul(k8s_size(c, target), el);
            return true;
        }
        *out = e_factor(k8s_size(c, target), 0.1);
        return true;
    }
    if (!strcmp(fn, "lowerAscii") || !strcmp(fn, "upperAscii") || !strcmp(fn, "substring") ||
        !strcmp(fn, "trim")) {
        if (!target)
            return false;
        struct est sz = k8s_size(c, target);
        *out = e_factor(sz, 0.1);
        *res = sz;
        *has_res = true;
        return true;
    }
    if (!strcmp(fn, "replace") && target && nargs >= 2) {
        struct est sz = k8s_size(c, target), from = k8s_size(c, args[0]), with = k8s_size(c, args[1]);
        struct est count = {0, 0}, retained = {0, 0};
        if (from.min == 0) {
            count.max = sz.max < UINT64_MAX ? sz.max + 1 : sz.max;
            retained.max = sz.max;
        } else if (with.max <= from.min) {
            count.max = 0;
            retained.max = sz.max;
        } else {
            count.max = (uint64_t)ceil((double)sz.max / (double)from.min);
        }
        if (from.max == 0) {
            count.min = sz.min < UINT64_MAX ? sz.min + 1 : sz.min;
            retained.min = sz.min;
        } else if (from.max <= with.min) {
            count.min = 0;
            retained.min = sz.min;
        } else {
            count.min = (uint64_t)ceil((double)sz.min / (double)from.max);
        }
        *res = e_add(e_mul(count, with), retained);
        *has_res = true;
        *out = e_factor(sz, 2 * 0.1);
        return true;
    }
    if (!strcmp(fn, "split") && target) {
        struct est sz = k8s_size(c, target);
        uint64_t max = sz.max;
        if (nargs > 1 && args[1]->kind == CEL_E_LIT) {
            const struct ks_cel_value *l = &args[1]->u.lit;
            if (l->kind == KS_CEL_INT)
                max = (uint64_t)l->v.i;
            else if (l->kind == KS_CEL_UINT)
                max = l->v.u;
        }
        *out = e_factor(sz, 2 * 0.1);
        *res = (struct est){0, max};
        *has_res = true;
        return true;
    }
    if (!strcmp(fn, "join") && target) {
        struct est sz = {0, 0};
        struct est ls = k8s_size(c, target);
        if (target->type && target->type->kind == KS_CEL_LIST) {
            struct est es = UNKNOWN;
            const struct ks_cel_type *et = path_type(c, mkpath(c, get_path(c, target), "@items"));
            if (et && et->max_size)
                es = (struct est){0, et->max_size};
            sz = e_mul(ls, es);
        }
        if (nargs > 0) {
            struct est sep = k8s_size(c, args[0]);
            struct est seps = {ls.min > 0 ? ls.min - 1 : 0, ls.max > 0 ? ls.max - 1 : 0};
            sz = e_add(sz, e_mul(sep, seps));
        }
        *out = e_factor(sz, 0.1);
        *res = sz;
        *has_res = true;
        return true;
    }
    if ((!strcmp(fn, "find") || !strcmp(fn, "findAll")) && target && nargs >= 1) {
        struct est sz = k8s_size(c, target);
        struct est strc = e_factor(e_add(sz, fixed(1)), 0.1);
        struct est rec = e_factor(k8s_size(c, args[0]), 0.25);
        *out = e_mul(strc, rec);
        *res = (struct est){0, sz.max};
        *has_res = true;
        return true;
    }
    if ((!strcmp(fn, "quantity") || !strcmp(fn, "isQuantity") || !strcmp(fn, "semver") ||
         !strcmp(fn, "isSemver")) &&
        nargs >= 1) {
        *out = e_factor(k8s_size(c, args[0]), 0.1);
        return true;
    }
    /* Kubernetes' own types compare at a fixed cost */
    if ((!strcmp(fn, "_==_") || !strcmp(fn, "_!=_")) && nargs == 2 && args[0]->type &&
        (args[0]->type->kind == KS_CEL_QUANTITY || args[0]->type->kind == KS_CEL_SEMVER)) {
        *out = fixed(1);
        return true;
    }
    static const char *const nominal[] = {
        "sign",      "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan",
        "compareTo", "add",       "sub"};
    for (size_t i = 0; i < sizeof(nominal) / sizeof(nominal[0]); i++) {
        if (!strcmp(fn, nominal[i])) {
            *out = fixed(1);
            return true;
        }
    }
    return false;
}

struct call_est {
    struct est cost;
    bool has_res;
    struct est res;
};

static struct call_est function_cost(struct coster *c, const struct cel_expr *e, const char *fn,
                                     const char *id, const struct cel_expr *target,
                                     struct cel_expr *const *args, uint32_t nargs, const struct est *argc)
{
    struct call_est r = {0};
    struct est sum = {0, 0};
    for (uint32_t i = 0; i < nargs; i++)
        sum = e_add(sum, argc[i]);
    /* ext.Sets' own estimators */
    if (!strcmp(id, "list_sets_contains_list") || !strcmp(id, "list_sets_intersects_list") ||
        !strcmp(id, "list_sets_equivalent_list")) {
        if (nargs == 2) {
            double f = !strcmp(id, "list_sets_equivalent_list") ? 2 : 1;
            struct est s = e_factor(e_mul(size_or_unknown(c, args[0]), size_or_unknown(c, args[1])), f);
            r.cost = e_add(e_add(s, fixed(1)), sum);
            return r;
        }
    }
    struct est k, res;
    bool has_res;
    if (k8s_call_cost(c, fn, target, args, nargs, &k, &res, &has_res)) {
        r.cost = e_add(k, sum);
        r.has_res = has_res;
        r.res = res;
        return r;
    }
    if ((!strcmp(id, "string_to_bytes") || !strcmp(id, "bytes_to_string") || !strcmp(id, "strings_quote")) &&
        nargs == 1) {
        struct est sz = size_or_unknown(c, args[0]);
        r.cost = e_add(e_factor(sz, 0.1), sum);
        r.has_res = true;
        if (!strcmp(id, "string_to_bytes"))
            r.res = (struct est){sz.min, mul_sat(sz.max, 4)};
        else if (!strcmp(id, "bytes_to_string"))
            r.res = (struct est){sz.min / 4, sz.max};
        else
            r.res = (struct est){add_sat(sz.min, 2), add_sat(mul_sat(sz.max, 2), 2)};
        return r;
    }
    if ((!strcmp(id, "starts_with_string") || !strcmp(id, "ends_with_string")) && nargs == 1) {
        r.cost = e_add(e_factor(size_or_unknown(c, args[0]), 0.1), sum);
        return r;
    }
    if (!strcmp(id, "in_list") && nargs == 2) {
        r.cost = e_add(e_factor(size_or_unknown(c, args[1]), 1), sum);
        return r;
    }
    if (!strcmp(id, "matches_string") && target && nargs == 1) {
        struct est strc = e_factor(e_add(size_or_unknown(c, target), fixed(1)), 0.1);
        struct est rec = e_factor(size_or_unknown(c, args[0]), 0.25);
        r.cost = e_add(e_mul(strc, rec), sum);
        return r;
    }
    if (!strcmp(id, "contains_string") && target && nargs == 1) {
        struct est a = e_factor(size_or_unknown(c, target), 0.1),
                   b = e_factor(size_or_unknown(c, args[0]), 0.1);
        r.cost = e_add(e_mul(a, b), sum);
        return r;
    }
    if (!strcmp(id, "logical_or") || !strcmp(id, "logical_and")) {
        r.cost = (struct est){argc[0].min, e_add(argc[0], argc[1]).max};
        return r;
    }
    if (!strcmp(id, "conditional")) {
        struct est size = e_union(size_or_unknown(c, args[1]), size_or_unknown(c, args[2]));
        struct entry_size a, b;
        if (compute_entry(c, args[1], &a) && compute_entry(c, args[2], &b)) {
            struct entry_size u = {a.kind, e_union(a.key, b.key), e_union(a.val, b.val)};
            set_entry(c, e, &u);
        }
        r.cost = e_add(argc[0], e_union(argc[1], argc[2]));
        r.has_res = true;
        r.res = size;
        return r;
    }
    if ((!strcmp(id, "add_string") || !strcmp(id, "add_bytes") || !strcmp(id, "add_list")) && nargs == 2) {
        struct est rs = e_add(size_or_unknown(c, args[0]), size_or_unknown(c, args[1]));
        struct entry_size a, b;
        if (compute_entry(c, args[0], &a) && compute_entry(c, args[1], &b)) {
            struct entry_size u = {a.kind, e_union(a.key, b.key), e_union(a.val, b.val)};
            set_entry(c, e, &u);
        }
        r.has_res = true;
        r.res = rs;
        r.cost = !strcmp(id, "add_list") ? e_add(fixed(1), sum) : e_add(e_factor(rs, 0.1), sum);
        return r;
    }
    static const char *const sized[] = {
        "less_string", "greater_string", "less_equals_string", "greater_equals_string",
        "less_bytes",  "greater_bytes",  "less_equals_bytes",  "greater_equals_bytes",
        "equals",      "not_equals"};
    for (size_t i = 0; i < sizeof(sized) / sizeof(sized[0]); i++) {
        if (!strcmp(id, sized[i])) {
            struct est l = size_or_unknown(c, args[0]), rr = size_or_unknown(c, args[1]);
            uint64_t smallest = l.max < rr.max ? l.max : rr.max;
            struct est m = {smallest > 0 ? 1 : 0, smallest};
            r.cost = e_add(e_factor(m, 0.1), sum);
            return r;
        }
    }
    r.cost = e_add(fixed(1), sum);
    return r;
}

static struct est cost_call(struct coster *c, const struct cel_expr *e)
{
    const char *fn = e->u.call.fn;
    uint32_t n = e->u.call.nargs;
    if (!strcmp(fn, "dyn") && n == 1) {
        struct est a = cost(c, e->u.call.args[0]);
        struct est s;
        if (compute_size(c, e->u.call.args[0], &s))
            set_size(c, e, &s);
        struct entry_size en;
        if (compute_entry(c, e->u.call.args[0], &en))
            set_entry(c, e, &en);
        return e_add(fixed(1), a);
    }
    struct est argc[16];
    uint32_t na = n < 16 ? n : 16;
    for (uint32_t i = 0; i < na; i++)
        argc[i] = cost(c, e->u.call.args[i]);
    if (!e->u.call.novls)
        return (struct est){0, 0};
    struct est sum = {0, 0};
    const struct cel_expr *target = (e->flags & CEL_F_MEMBER) ? e->u.call.target : NULL;
    if (target)
        sum = cost(c, target);
    struct est fnc = {UINT64_MAX, 0};
    bool has_res = false;
    struct est res = {0, 0};
    for (uint32_t i = 0; i < e->u.call.novls; i++) {
        const struct cel_overload *o = e->u.call.ovls[i];
        struct call_est ce = function_cost(c, e, fn, o->id, target, e->u.call.args, na, argc);
        fnc = e_union(fnc, ce.cost);
        if (ce.has_res) {
            res = has_res ? e_union(res, ce.res) : ce.res;
            has_res = true;
        }
        if ((!strcmp(o->id, "index_list") || !strcmp(o->id, "index_map")) && na > 0) {
            struct entry_size en;
            has_res = compute_entry(c, e->u.call.args[0], &en);
            if (has_res)
                res = en.val;
            info(c, e)->path = mkpath(c, get_path(c, e->u.call.args[0]),
                                      !strcmp(o->id, "index_list") ? "@items" : "@values");
        }
        if (!has_res)
            has_res = compute_size(c, e, &res);
    }
    if (has_res)
        set_size(c, e, &res);
    return e_add(sum, fnc);
}

static struct est cost_comp(struct coster *c, const struct cel_expr *e)
{
    struct est sum = e_add(cost(c, e->u.comp.range), cost(c, e->u.comp.init));
    const struct cel_expr *range = e->u.comp.range, *init = e->u.comp.init;
    struct local accu = {.name = e->u.comp.accu, .path = get_path(c, init)};
    accu.has_size = compute_size(c, init, &accu.size);
    accu.has_entry = compute_entry(c, init, &accu.entry);
    push_local(c, &accu);
    struct entry_size ren;
    bool has_ren = compute_entry(c, range, &ren);
    int container = has_ren ? ren.kind : (range->type ? range->type->kind : KS_CEL_DYN);
    const struct path *rp = get_path(c, range);
    if (e->u.comp.iter2) {
        struct local k = {.name = e->u.comp.iter,
                          .path = mkpath(c, rp, container == KS_CEL_LIST ? "@indices" : "@keys")};
        if (has_ren) {
            k.has_size = true;
            k.size = ren.key;
        }
        struct local v = {.name = e->u.comp.iter2,
                          .path = mkpath(c, rp, container == KS_CEL_LIST ? "@items" : "@values")};
        if (has_ren) {
            v.has_size = true;
            v.size = ren.val;
        }
        push_local(c, &k);
        push_local(c, &v);
    } else {
        struct local it = {.name = e->u.comp.iter};
        if (container == KS_CEL_LIST) {
            it.path = mkpath(c, rp, "@items");
            if (has_ren) {
                it.has_size = true;
                it.size = ren.val;
            }
        } else {
            it.path = mkpath(c, rp, "@keys");
            if (has_ren) {
                it.has_size = true;
                it.size = ren.key;
            }
        }
        push_local(c, &it);
    }
    struct est loop = cost(c, e->u.comp.cond);
    struct est step = cost(c, e->u.comp.step);
    pop_local(c, e->u.comp.iter);
    if (e->u.comp.iter2)
        pop_local(c, e->u.comp.iter2);
    sum = e_add(sum, cost(c, e->u.comp.result));
    pop_local(c, e->u.comp.accu);
    struct est cnt = size_or_unknown(c, range);
    sum = e_add(sum, e_mul(cnt, e_add(step, loop)));
    if (init->kind == CEL_E_LIT) {
        struct est s;
        if (compute_size(c, init, &s))
            set_size(c, e, &s);
    } else if (init->kind == CEL_E_LIST || init->kind == CEL_E_MAP) {
        set_size(c, e, &cnt);
        struct entry_size en;
        if (compute_entry(c, e->u.comp.step, &en))
            set_entry(c, e, &en);
    }
    return sum;
}

static bool is_bind(const struct cel_expr *e)
{
    const struct cel_expr *r = e->u.comp.range, *cond = e->u.comp.cond;
    return r->kind == CEL_E_LIST && r->u.list.n == 0 && cond->kind == CEL_E_LIT &&
           cond->u.lit.kind == KS_CEL_BOOL && !cond->u.lit.v.b && strcmp(e->u.comp.accu, "__result__");
}

static struct est cost(struct coster *c, const struct cel_expr *e)
{
    if (!e)
        return (struct est){0, 0};
    switch (e->kind) {
    case CEL_E_LIT:
        return (struct est){0, 0};
    case CEL_E_IDENT: {
        struct local *l = peek_local(c, e->u.ident.name);
        info(c, e)->path = l ? l->path : mkpath(c, NULL, e->u.ident.name);
        return fixed(1);
    }
    case CEL_E_SELECT: {
        if (e->flags & CEL_F_TEST_ONLY)
            return cost(c, e->u.sel.operand); /* PresenceTestHasCost(false) */
        struct est s = cost(c, e->u.sel.operand);
        const struct ks_cel_type *t = e->u.sel.operand->type;
        if (t && (t->kind == KS_CEL_MAP || t->kind == KS_CEL_OBJECT || t->kind == KS_CEL_QUANTITY ||
                  t->kind == KS_CEL_SEMVER || t->kind == CEL_T_PARAM))
            s = e_add(s, fixed(1));
        info(c, e)->path = mkpath(c, get_path(c, e->u.sel.operand), e->u.sel.field);
        return s;
    }
    case CEL_E_CALL:
        return cost_call(c, e);
    case CEL_E_LIST: {
        struct est sum = {0, 0};
        struct est item = {e->u.list.n ? UINT64_MAX : 0, 0};
        for (uint32_t i = 0; i < e->u.list.n; i++) {
            sum = e_add(sum, cost(c, e->u.list.elems[i]));
            item = e_union(item, size_or_unknown(c, e->u.list.elems[i]));
        }
        struct entry_size en = {KS_CEL_LIST, fixed(1), item};
        set_entry(c, e, &en);
        return e_add(sum, fixed(10));
    }
    case CEL_E_MAP: {
        struct est sum = {0, 0};
        struct est ks = {e->u.map.n ? UINT64_MAX : 0, 0}, vs = ks;
        for (uint32_t i = 0; i < e->u.map.n; i++) {
            sum = e_add(sum, cost(c, e->u.map.e[i].key));
            sum = e_add(sum, cost(c, e->u.map.e[i].value));
            ks = e_union(ks, size_or_unknown(c, e->u.map.e[i].key));
            vs = e_union(vs, size_or_unknown(c, e->u.map.e[i].value));
        }
        struct entry_size en = {KS_CEL_MAP, ks, vs};
        set_entry(c, e, &en);
        return e_add(sum, fixed(30));
    }
    case CEL_E_STRUCT: {
        struct est sum = {0, 0};
        for (uint32_t i = 0; i < e->u.map.n; i++)
            sum = e_add(sum, cost(c, e->u.map.e[i].value));
        return e_add(sum, fixed(40));
    }
    case CEL_E_COMP:
        if (is_bind(e)) {
            struct est sum = e_add(cost(c, e->u.comp.range), cost(c, e->u.comp.init));
            struct local l = {.name = e->u.comp.accu, .path = get_path(c, e->u.comp.init)};
            l.has_size = compute_size(c, e->u.comp.init, &l.size);
            l.has_entry = compute_entry(c, e->u.comp.init, &l.entry);
            push_local(c, &l);
            sum = e_add(sum, cost(c, e->u.comp.result));
            pop_local(c, e->u.comp.accu);
            struct est s;
            if (compute_size(c, e->u.comp.result, &s))
                set_size(c, e, &s);
            struct entry_size en;
            if (compute_entry(c, e->u.comp.result, &en))
                set_entry(c, e, &en);
            return sum;
        }
        return cost_comp(c, e);
    default:
        return (struct est){0, 0};
    }
}

uint64_t ks__cel_estimate_cost(const struct ks_cel_program *p)
{
    struct coster c = {.p = p, .ninfo = p->next_id + 1};
    c.info = calloc(c.ninfo, sizeof(*c.info));
    if (!c.info)
        return UINT64_MAX;
    struct est r = cost(&c, p->root);
    free(c.info);
    free(c.locals);
    ks__cel_arena_free(&c.a);
    return c.oom ? UINT64_MAX : r.max;
}
