/*
 * cel_plan.c - the CEL planner: turns a checked (or only parsed) tree into what cel_eval.c
 * walks. It binds identifiers to slots (declared variables first, comprehension variables
 * after), type names to constants, and each call to its operator or overloads; it folds
 * constants and compiles literal regexes; and it gives each node its own runtime cost.
 *
 * Mirrors cel-go interpreter/planner.go with the decorators Kubernetes enables
 * (cel.OptOptimize: list and map literals of constants become constants, a type conversion
 * of a constant is evaluated once - its failure fails the program - and "x in [consts]" becomes
 * a set test; the regex optimizer compiles literal patterns of matches, find and findAll) and
 * cel-go's literal validators (cel.ValidateDurationLiterals, ValidateTimestampLiterals,
 * ValidateRegexLiterals: "invalid duration argument"). The costs are those the cost tracker
 * charges for the interpretables the planner builds (interpreter/runtimecost.go): see
 * cel_eval.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel_internal.h"

#define LOCAL_BASE 0x40000000u

struct scope {
    const char *name;
    uint32_t slot;
};

struct planner {
    struct ks_cel_program *p;
    const struct cel_source *src;
    struct cel_issues *is;
    bool checked, fold;
    struct scope *sc;
    uint32_t nsc, capsc;
    uint32_t nlocal;
    const char **globals;
    uint32_t nglobals, capglobals;
    struct ks_cel_scratch *scratch; /* for constant folding */
    int err;
};

static void oom(struct planner *P)
{
    P->err = -ENOMEM;
}

static void push_scope(struct planner *P, const char *name, uint32_t slot)
{
    if (P->nsc == P->capsc) {
        uint32_t cap = P->capsc ? P->capsc * 2 : 16;
        struct scope *v = realloc(P->sc, cap * sizeof(*v));
        if (!v) {
            oom(P);
            return;
        }
        P->sc = v;
        P->capsc = cap;
    }
    P->sc[P->nsc++] = (struct scope){.name = name, .slot = slot};
}

static bool find_local(struct planner *P, const char *name, uint32_t *slot)
{
    for (uint32_t i = P->nsc; i-- > 0;) {
        if (!strcmp(P->sc[i].name, name)) {
            *slot = P->sc[i].slot;
            return true;
        }
    }
    return false;
}

static uint32_t global_slot(struct planner *P, const char *name)
{
    if (name[0] == '.')
        name++;
    for (uint32_t i = 0; i < P->nglobals; i++)
        if (!strcmp(P->globals[i], name))
            return i;
    if (P->nglobals == P->capglobals) {
        uint32_t cap = P->capglobals ? P->capglobals * 2 : 8;
        const char **v = realloc(P->globals, cap * sizeof(*v));
        if (!v) {
            oom(P);
            return 0;
        }
        P->globals = v;
        P->capglobals = cap;
    }
    P->globals[P->nglobals] = name;
    return P->nglobals++;
}

/* ---- constants -------------------------------------------------------------------------------------------
 */

/* A deep copy of a value into the program's arena. */
static bool copy_value(struct planner *P, const struct ks_cel_value *v, struct ks_cel_value *out)
{
    struct cel_arena *a = &P->p->arena;
    *out = *v;
    switch (v->kind) {
    case KS_CEL_STRING:
    case KS_CEL_BYTES:
    case KS_CEL_ERROR: {
        char *s = ks__cel_alloc(a, v->v.str.len ? v->v.str.len : 1);
        if (!s)
            return false;
        memcpy(s, v->v.str.p, v->v.str.len);
        out->v.str.p = s;
        return true;
    }
    case KS_CEL_SEMVER:
        if (v->v.semver.pre_len) {
            char *s = ks__cel_alloc(a, v->v.semver.pre_len);
            if (!s)
                return false;
            memcpy(s, v->v.semver.pre, v->v.semver.pre_len);
            out->v.semver.pre = s;
        }
        return true;
    case KS_CEL_OPTIONAL:
        if (v->v.own) {
            struct cel_opt *o = ks__cel_alloc(a, sizeof(*o));
            if (!o || !copy_value(P, &((const struct cel_opt *)v->v.own)->v, &o->v))
                return false;
            out->v.own = o;
        }
        return true;
    case KS_CEL_LIST: {
        if (v->v.host.ops != &ks__cel_list_ops)
            return true;
        const struct cel_list *l = v->v.host.obj;
        struct cel_list *nl = ks__cel_zalloc(a, sizeof(*nl));
        struct ks_cel_value *items = ks__cel_alloc(a, (l->n ? l->n : 1) * sizeof(*items));
        if (!nl || !items)
            return false;
        for (uint32_t i = 0; i < l->n; i++)
            if (!copy_value(P, &l->items[i], &items[i]))
                return false;
        nl->n = l->n;
        nl->items = items;
        out->v.host.obj = nl;
        return true;
    }
    case KS_CEL_MAP: {
        if (v->v.host.ops != &ks__cel_map_ops)
            return true;
        const struct cel_map *m = v->v.host.obj;
        struct cel_map *nm = ks__cel_zalloc(a, sizeof(*nm));
        struct ks_cel_value *k = ks__cel_alloc(a, (m->n ? m->n : 1) * sizeof(*k));
        struct ks_cel_value *x = ks__cel_alloc(a, (m->n ? m->n : 1) * sizeof(*x));
        if (!nm || !k || !x)
            return false;
        for (uint32_t i = 0; i < m->n; i++)
            if (!copy_value(P, &m->keys[i], &k[i]) || !copy_value(P, &m->vals[i], &x[i]))
                return false;
        nm->n = m->n;
        nm->keys = k;
        nm->vals = x;
        out->v.host.obj = nm;
        return true;
    }
    default:
        return true;
    }
}

/* Evaluate a node whose inputs are constants (at plan time). 0 with *out, -ENOMEM. */
static int fold(struct planner *P, const struct cel_expr *e, struct ks_cel_value *out)
{
    if (!P->scratch && ks_cel_scratch_create(&P->scratch))
        return -ENOMEM;
    struct cel_ctx c = {.p = P->p, .s = P->scratch};
    ks__cel_arena_reset(&P->scratch->arena);
    if (setjmp(c.jb))
        return -ENOMEM;
    struct ks_cel_value v = ks__cel_eval(&c, e);
    if (!copy_value(P, &v, out))
        return -ENOMEM;
    return 0;
}

static void make_const(struct cel_expr *e, const struct ks_cel_value *v)
{
    e->op = CEL_OP_CONST;
    e->kind = CEL_E_LIT;
    e->u.lit = *v;
    e->scost = 0;
}

static bool is_conversion(const char *fn)
{
    static const char *const names[] = {"int",   "uint",     "double",    "bool", "string",
                                        "bytes", "duration", "timestamp", "type", "dyn"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (!strcmp(fn, names[i]))
            return true;
    return false;
}

/* ---- planning
 * ----------------------------------------------------------------------------------------------- */

static void plan(struct planner *P, struct cel_expr *e);

static bool is_attr(const struct cel_expr *e)
{
    switch (e->op) {
    case CEL_OP_VAR:
    case CEL_OP_SELECT:
    case CEL_OP_INDEX:
    case CEL_OP_OPT_INDEX:
    case CEL_OP_OPT_SELECT:
    case CEL_OP_HAS:
        return true;
    default:
        return false;
    }
}

/* A qualifier chain read by resolution (index qualifier, ternary branch, has()): its root is free. */
static void free_root(struct cel_expr *e)
{
    for (;;) {
        switch (e->op) {
        case CEL_OP_VAR:
            e->scost = 0;
            return;
        case CEL_OP_SELECT:
        case CEL_OP_HAS:
            if (!is_attr(e->u.sel.operand)) {
                if (e->scost > 1 && e->op != CEL_OP_HAS)
                    e->scost--;
                return;
            }
            e = e->u.sel.operand;
            continue;
        case CEL_OP_INDEX:
        case CEL_OP_OPT_INDEX:
        case CEL_OP_OPT_SELECT:
            if (!is_attr(e->u.call.args[0])) {
                if (e->flags & CEL_F_REL_ROOT) {
                    e->flags &= (uint8_t)~CEL_F_REL_ROOT;
                    e->scost--;
                }
                return;
            }
            e = e->u.call.args[0];
            continue;
        default:
            return;
        }
    }
}

static void plan_ident(struct planner *P, struct cel_expr *e)
{
    uint32_t slot;
    if (find_local(P, e->u.ident.name, &slot)) {
        e->op = CEL_OP_VAR;
        e->u.ident.slot = slot;
        e->scost = 1;
        return;
    }
    const struct cel_var *v = ks__cel_env_var(P->p->env, e->u.ident.name);
    if (v && v->is_type) {
        make_const(e, &v->value);
        return;
    }
    e->op = CEL_OP_VAR;
    e->u.ident.slot = global_slot(P, e->u.ident.name);
    e->scost = 1;
}

/* Unchecked programs resolve qualified names here, as cel-go's maybe-attributes would. */
static bool qualified(const struct cel_expr *e, struct cel_sb *b)
{
    if (e->kind == CEL_E_IDENT) {
        ks__cel_sb_puts(b, e->u.ident.name);
        return true;
    }
    if (e->kind == CEL_E_SELECT && !(e->flags & CEL_F_TEST_ONLY) && qualified(e->u.sel.operand, b)) {
        ks__cel_sb_puts(b, ".");
        ks__cel_sb_puts(b, e->u.sel.field);
        return true;
    }
    return false;
}

static void plan_select(struct planner *P, struct cel_expr *e)
{
    if (!P->checked && !(e->flags & CEL_F_TEST_ONLY)) {
        struct cel_sb b = {0};
        const struct cel_expr *root = e;
        while (root->kind == CEL_E_SELECT)
            root = root->u.sel.operand;
        uint32_t slot;
        if (qualified(e, &b) && b.p && root->kind == CEL_E_IDENT &&
            !find_local(P, root->u.ident.name, &slot) && ks__cel_env_var(P->p->env, b.p)) {
            const char *name = ks__cel_strndup(&P->p->arena, b.p, b.len);
            ks__cel_sb_free(&b);
            if (!name) {
                oom(P);
                return;
            }
            e->kind = CEL_E_IDENT;
            e->u.ident.name = name;
            plan_ident(P, e);
            return;
        }
        ks__cel_sb_free(&b);
    }
    plan(P, e->u.sel.operand);
    e->u.sel.key = ks__cel_str(KS_CEL_STRING, e->u.sel.field, e->u.sel.flen);
    if (e->flags & CEL_F_TEST_ONLY) {
        e->op = CEL_OP_HAS;
        e->scost = 1;
        if (is_attr(e->u.sel.operand))
            free_root(e->u.sel.operand);
        return;
    }
    e->op = CEL_OP_SELECT;
    e->scost = is_attr(e->u.sel.operand) ? 1 : 2;
}

static void plan_index(struct planner *P, struct cel_expr *e, int op)
{
    (void)P;
    e->op = (uint8_t)op;
    struct cel_expr *obj = e->u.call.args[0], *idx = e->u.call.args[1];
    e->scost = 1;
    if (!is_attr(obj)) {
        e->scost++;
        e->flags |= CEL_F_REL_ROOT;
    }
    if (is_attr(idx))
        free_root(idx);
    else if (idx->op != CEL_OP_CONST)
        e->scost++;
}

static void plan_cond(struct planner *P, struct cel_expr *e)
{
    (void)P;
    e->op = CEL_OP_COND;
    for (int i = 1; i <= 2; i++)
        if (is_attr(e->u.call.args[i]))
            free_root(e->u.call.args[i]);
}

/* Candidate overloads of an unchecked call: the function's, by receiver style and arity. */
static void unchecked_overloads(struct planner *P, struct cel_expr *e)
{
    const struct cel_function *fn = ks__cel_env_function(P->p->env, e->u.call.fn);
    if (!fn)
        return;
    bool member = e->flags & CEL_F_MEMBER;
    const struct cel_overload **v = ks__cel_alloc(&P->p->arena, (fn->n ? fn->n : 1) * sizeof(*v));
    if (!v) {
        oom(P);
        return;
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < fn->n; i++) {
        const struct cel_overload *o = fn->ovls[i];
        if (((o->flags & CEL_OVL_MEMBER) != 0) == member && o->nargs == e->u.call.nargs)
            v[n++] = o;
    }
    e->u.call.ovls = v;
    e->u.call.novls = n;
}

/* A namespaced function called as a method (unchecked programs): x.y.f() is the call x.y.f(). */
static void resolve_namespaced_method(struct planner *P, struct cel_expr *e)
{
    struct cel_sb b = {0};
    if (qualified(e->u.call.target, &b) && b.p) {
        ks__cel_sb_puts(&b, ".");
        ks__cel_sb_puts(&b, e->u.call.fn);
        const struct cel_function *f = b.p ? ks__cel_env_function(P->p->env, b.p) : NULL;
        if (f) {
            e->flags &= (uint8_t)~CEL_F_MEMBER;
            e->u.call.target = NULL;
            e->u.call.fn = f->name;
        }
    }
    ks__cel_sb_free(&b);
}

/* A method call's target becomes its first argument; false when out of memory. */
static bool target_as_first_arg(struct planner *P, struct cel_expr *e)
{
    uint32_t n = e->u.call.nargs + 1;
    struct cel_expr **args = ks__cel_alloc(&P->p->arena, n * sizeof(*args));
    if (!args) {
        oom(P);
        return false;
    }
    args[0] = e->u.call.target;
    memcpy(args + 1, e->u.call.args, e->u.call.nargs * sizeof(*args));
    e->u.call.args = args;
    e->u.call.nargs = n;
    e->u.call.target = NULL;
    return true;
}

/* The operators the evaluator runs itself (non-strict ones, equality and indexing), by name and arity. */
static const struct {
    const char *fn;
    uint32_t nargs;
    uint8_t op;
} special_forms[] = {
    {"_&&_", 2, CEL_OP_AND},        {"_||_", 2, CEL_OP_OR},
    {"_?_:_", 3, CEL_OP_COND},      {"@not_strictly_false", 1, CEL_OP_NOT_STRICTLY_FALSE},
    {"_==_", 2, CEL_OP_EQ},         {"_!=_", 2, CEL_OP_NE},
    {"_[_]", 2, CEL_OP_INDEX},      {"_[?_]", 2, CEL_OP_OPT_INDEX},
    {"_?._", 2, CEL_OP_OPT_SELECT},
};

/* Plan @e as one of the special forms (or optional's or/orValue); false when it is an ordinary call. */
static bool plan_special_form(struct planner *P, struct cel_expr *e)
{
    const char *fn = e->u.call.fn;
    uint32_t n = e->u.call.nargs;
    if (e->flags & CEL_F_MEMBER) {
        if (n != 2 || (strcmp(fn, "or") && strcmp(fn, "orValue")))
            return false;
        bool is_or = !strcmp(fn, "or");
        bool opt = e->u.call.novls == 1 &&
                   !strcmp(e->u.call.ovls[0]->id, is_or ? "optional_or_optional" : "optional_orValue_value");
        if (!opt && P->checked)
            return false;
        e->op = is_or ? CEL_OP_OPT_OR : CEL_OP_OPT_OR_VALUE;
        return true;
    }
    for (size_t i = 0; i < sizeof(special_forms) / sizeof(special_forms[0]); i++) {
        if (n != special_forms[i].nargs || strcmp(fn, special_forms[i].fn))
            continue;
        switch (special_forms[i].op) {
        case CEL_OP_COND:
            plan_cond(P, e);
            break;
        case CEL_OP_INDEX:
        case CEL_OP_OPT_INDEX:
        case CEL_OP_OPT_SELECT:
            plan_index(P, e, special_forms[i].op);
            break;
        default:
            e->op = special_forms[i].op;
        }
        return true;
    }
    return false;
}

/* x in [constants of primitive types]: a set test (false for an empty list); true when planned so. */
static bool plan_in_set(struct cel_expr *e)
{
    const struct ks_cel_value *l = &e->u.call.args[1]->u.lit;
    const struct cel_list *cl = l->v.host.obj;
    for (uint32_t i = 0; i < cl->n; i++) {
        int k = cl->items[i].kind;
        if (k != KS_CEL_BOOL && k != KS_CEL_INT && k != KS_CEL_UINT && k != KS_CEL_DOUBLE &&
            k != KS_CEL_STRING)
            return false;
    }
    if (cl->n == 0) {
        struct ks_cel_value f = ks__cel_bool(false);
        make_const(e, &f);
    } else {
        e->op = CEL_OP_IN_SET;
    }
    return true;
}

/*
 * The regexes of a call to matches, find or findAll. cel.ValidateRegexLiterals: the first
 * argument of matches (the pattern of s.matches(p), the string of matches(s, p), as cel-go's
 * validator reads the call's arguments) must compile. A literal pattern is compiled once
 * (cel-go's regex optimizations); a bad one fails the program. 0, or -1 with P->err set.
 */
static int plan_regexes(struct planner *P, struct cel_expr *e)
{
    const char *fn = e->u.call.fn;
    uint32_t n = e->u.call.nargs;
    char err[256];
    const void *re;
    if (P->fold && !strcmp(fn, "matches") && n == 2) {
        const struct cel_expr *lit = e->u.call.args[(e->flags & CEL_F_MEMBER) ? 1 : 0];
        if (lit->kind == CEL_E_LIT && lit->u.lit.kind == KS_CEL_STRING) {
            int rc =
                ks__cel_regex_compile(P->p, lit->u.lit.v.str.p, lit->u.lit.v.str.len, &re, err, sizeof(err));
            if (rc == -ENOMEM) {
                oom(P);
                return -1;
            }
            if (rc) {
                ks__cel_issue(P->is, P->src, lit->off, "invalid matches argument");
                P->err = -EINVAL;
                return -1;
            }
        }
    }
    if ((!strcmp(fn, "matches") || !strcmp(fn, "find") || !strcmp(fn, "findAll")) && n >= 2 &&
        e->u.call.args[1]->op == CEL_OP_CONST && e->u.call.args[1]->u.lit.kind == KS_CEL_STRING) {
        const struct ks_cel_value *pat = &e->u.call.args[1]->u.lit;
        int rc = ks__cel_regex_compile(P->p, pat->v.str.p, pat->v.str.len, &re, err, sizeof(err));
        if (rc == -ENOMEM) {
            oom(P);
            return -1;
        }
        if (rc) {
            if (P->fold) {
                ks__cel_issue(P->is, P->src, UINT32_MAX, "%s", err);
                P->err = -EINVAL;
                return -1;
            }
        } else {
            e->u.call.aux = re;
        }
    }
    return 0;
}

/*
 * quantity(), semver() and their tests of a constant are evaluated once; unlike the
 * conversions cel-go does not fold them, so the call stays (with its result cached) and keeps
 * its runtime cost. True when @e is such a call.
 */
static bool plan_cached_call(struct planner *P, struct cel_expr *e)
{
    const char *fn = e->u.call.fn;
    uint32_t n = e->u.call.nargs;
    if (!P->fold || (n != 1 && n != 2) || e->u.call.args[0]->op != CEL_OP_CONST ||
        (n == 2 && e->u.call.args[1]->op != CEL_OP_CONST) ||
        (strcmp(fn, "quantity") && strcmp(fn, "isQuantity") && strcmp(fn, "semver") &&
         strcmp(fn, "isSemver")))
        return false;
    struct ks_cel_value v;
    struct ks_cel_value *cv = NULL;
    if (fold(P, e, &v) || !(cv = ks__cel_alloc(&P->p->arena, sizeof(*cv)))) {
        oom(P);
        return true;
    }
    *cv = v;
    e->u.call.cached = cv;
    return true;
}

/* A conversion of a constant is evaluated once; an error in it fails the program. */
static void plan_conversion(struct planner *P, struct cel_expr *e)
{
    const char *fn = e->u.call.fn;
    struct ks_cel_value v;
    if (fold(P, e, &v)) {
        oom(P);
        return;
    }
    if (v.kind == KS_CEL_ERROR) {
        if ((!strcmp(fn, "duration") || !strcmp(fn, "timestamp")) && e->u.call.args[0]->kind == CEL_E_LIT)
            ks__cel_issue(P->is, P->src, e->u.call.args[0]->off, "invalid %s argument", fn);
        else
            ks__cel_issue(P->is, P->src, UINT32_MAX, "%.*s", (int)v.v.str.len, v.v.str.p);
        P->err = -EINVAL;
        return;
    }
    make_const(e, &v);
}

static void plan_call(struct planner *P, struct cel_expr *e)
{
    if (!P->checked && (e->flags & CEL_F_MEMBER))
        resolve_namespaced_method(P, e);
    if ((e->flags & CEL_F_MEMBER) && !target_as_first_arg(P, e))
        return;
    for (uint32_t i = 0; i < e->u.call.nargs; i++)
        plan(P, e->u.call.args[i]);
    if (P->err || plan_special_form(P, e))
        return;
    const char *fn = e->u.call.fn;
    uint32_t n = e->u.call.nargs;
    if (!P->checked)
        unchecked_overloads(P, e);
    e->op = CEL_OP_CALL; /* without overloads (an unknown function, unchecked): "no such overload" */
    /* accu + [...] on a comprehension's accumulator */
    if (n == 2 && !strcmp(fn, "_+_") && e->u.call.args[0]->op == CEL_OP_VAR &&
        e->u.call.args[0]->u.ident.slot >= LOCAL_BASE && !strcmp(e->u.call.args[0]->u.ident.name, "@result"))
        e->flags |= CEL_F_ACCU_APPEND;
    if (P->fold && n == 2 && !strcmp(fn, "@in") && e->u.call.args[1]->op == CEL_OP_CONST &&
        e->u.call.args[1]->u.lit.kind == KS_CEL_LIST && plan_in_set(e))
        return;
    if (plan_regexes(P, e) < 0 || plan_cached_call(P, e))
        return;
    if (P->fold && n == 1 && is_conversion(fn) && e->u.call.args[0]->op == CEL_OP_CONST)
        plan_conversion(P, e);
}

static bool all_const(struct cel_expr **v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (v[i]->op != CEL_OP_CONST)
            return false;
    return true;
}

static void plan_list(struct planner *P, struct cel_expr *e)
{
    for (uint32_t i = 0; i < e->u.list.n; i++)
        plan(P, e->u.list.elems[i]);
    e->op = CEL_OP_LIST;
    e->scost = 10;
    if (P->fold && !P->err && all_const(e->u.list.elems, e->u.list.n)) {
        struct ks_cel_value v;
        if (fold(P, e, &v)) {
            oom(P);
            return;
        }
        if (v.kind != KS_CEL_ERROR)
            make_const(e, &v);
    }
}

static void plan_map(struct planner *P, struct cel_expr *e)
{
    bool consts = true;
    for (uint32_t i = 0; i < e->u.map.n; i++) {
        plan(P, e->u.map.e[i].key);
        plan(P, e->u.map.e[i].value);
        consts = consts && e->u.map.e[i].key->op == CEL_OP_CONST && e->u.map.e[i].value->op == CEL_OP_CONST;
    }
    e->op = CEL_OP_MAP;
    e->scost = 30;
    if (P->fold && !P->err && consts) {
        struct ks_cel_value v;
        if (fold(P, e, &v)) {
            oom(P);
            return;
        }
        if (v.kind != KS_CEL_ERROR)
            make_const(e, &v);
    }
}

static void plan_comp(struct planner *P, struct cel_expr *e)
{
    plan(P, e->u.comp.range);
    plan(P, e->u.comp.init);
    uint32_t mark = P->nsc;
    e->u.comp.slot_accu = LOCAL_BASE + P->nlocal++;
    e->u.comp.slot_iter = LOCAL_BASE + P->nlocal++;
    if (e->u.comp.iter2)
        e->u.comp.slot_iter2 = LOCAL_BASE + P->nlocal++;
    push_scope(P, e->u.comp.accu, e->u.comp.slot_accu);
    push_scope(P, e->u.comp.iter, e->u.comp.slot_iter);
    if (e->u.comp.iter2)
        push_scope(P, e->u.comp.iter2, e->u.comp.slot_iter2);
    plan(P, e->u.comp.cond);
    plan(P, e->u.comp.step);
    P->nsc = mark + 1;
    plan(P, e->u.comp.result);
    P->nsc = mark;
    e->op = CEL_OP_COMP;
}

static void plan(struct planner *P, struct cel_expr *e)
{
    if (!e || P->err)
        return;
    switch (e->kind) {
    case CEL_E_LIT:
        e->op = CEL_OP_CONST;
        break;
    case CEL_E_IDENT:
        plan_ident(P, e);
        break;
    case CEL_E_SELECT:
        plan_select(P, e);
        break;
    case CEL_E_CALL:
        plan_call(P, e);
        break;
    case CEL_E_LIST:
        plan_list(P, e);
        break;
    case CEL_E_MAP:
        plan_map(P, e);
        break;
    case CEL_E_COMP:
        plan_comp(P, e);
        break;
    case CEL_E_STRUCT:
        ks__cel_issue(P->is, P->src, e->off, "unknown type: %s", e->u.map.type_name);
        P->err = -EINVAL;
        break;
    default:
        ks__cel_issue(P->is, P->src, e->off, "unsupported expression");
        P->err = -EINVAL;
        break;
    }
}

/* Local slots come after the globals. */
static void fix_slots(struct planner *P, struct cel_expr *e)
{
    if (!e)
        return;
    uint32_t base = P->nglobals;
    switch (e->kind) {
    case CEL_E_IDENT:
        if (e->op == CEL_OP_VAR && e->u.ident.slot >= LOCAL_BASE)
            e->u.ident.slot = e->u.ident.slot - LOCAL_BASE + base;
        break;
    case CEL_E_SELECT:
        fix_slots(P, e->u.sel.operand);
        break;
    case CEL_E_CALL:
        for (uint32_t i = 0; i < e->u.call.nargs; i++)
            fix_slots(P, e->u.call.args[i]);
        break;
    case CEL_E_LIST:
        for (uint32_t i = 0; i < e->u.list.n; i++)
            fix_slots(P, e->u.list.elems[i]);
        break;
    case CEL_E_MAP:
        for (uint32_t i = 0; i < e->u.map.n; i++) {
            fix_slots(P, e->u.map.e[i].key);
            fix_slots(P, e->u.map.e[i].value);
        }
        break;
    case CEL_E_COMP:
        e->u.comp.slot_accu = e->u.comp.slot_accu - LOCAL_BASE + base;
        e->u.comp.slot_iter = e->u.comp.slot_iter - LOCAL_BASE + base;
        if (e->u.comp.iter2)
            e->u.comp.slot_iter2 = e->u.comp.slot_iter2 - LOCAL_BASE + base;
        fix_slots(P, e->u.comp.range);
        fix_slots(P, e->u.comp.init);
        fix_slots(P, e->u.comp.cond);
        fix_slots(P, e->u.comp.step);
        fix_slots(P, e->u.comp.result);
        break;
    default:
        break;
    }
}

int ks__cel_plan(struct ks_cel_program *p, const struct cel_source *src, struct cel_issues *is, bool checked)
{
    struct planner P = {
        .p = p,
        .src = src,
        .is = is,
        .checked = checked,
        .fold = !(p->flags & KS_CEL_COMPILE_NO_FOLD),
    };
    p->checked = checked;
    plan(&P, p->root);
    int rc = P.err;
    if (!rc) {
        fix_slots(&P, p->root);
        p->nglobals = P.nglobals;
        p->nslots = P.nglobals + P.nlocal;
        p->global_names = ks__cel_alloc(&p->arena, (P.nglobals ? P.nglobals : 1) * sizeof(char *));
        if (!p->global_names)
            rc = -ENOMEM;
        else if (P.nglobals)
            memcpy(p->global_names, P.globals, P.nglobals * sizeof(char *));
    }
    ks_cel_scratch_destroy(P.scratch);
    free(P.sc);
    free(P.globals);
    return rc;
}
