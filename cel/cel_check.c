/*
 * cel_check.c - the CEL type checker: types every node of a parsed expression, resolves
 * identifiers (comprehension variables, declared variables, type names, qualified names such as
 * "a.b" for a select chain), records each call's candidate overloads, and reports cel-go's issues.
 *
 * Mirrors cel-go checker/checker.go (check, checkSelectField, resolveOverload, joinTypes,
 * checkComprehension), checker/types.go (isAssignable with type-parameter substitutions,
 * mostGeneral, substitute) and checker/errors.go (the issue texts). Type parameters of an
 * overload are renamed to fresh variables ("_var0", ...) at each call; the substitutions found
 * while matching are kept only when the match succeeds. Kubernetes' options are applied:
 * homogeneous aggregate literals (unless the program asks for dyn aggregates) and cel-go's
 * literal validators (duration/timestamp/regex literals are validated by the planner, which
 * evaluates them anyway).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel_internal.h"

struct mapping {
    uint32_t n, cap;
    const char **k;
    const struct ks_cel_type **v;
};

struct scope_var {
    const char *name;
    const struct ks_cel_type *type;
};

struct checker {
    struct ks_cel_program *p;
    const struct ks_cel_env *env;
    const struct cel_source *src;
    struct cel_issues *is;
    struct cel_arena *a;
    struct mapping m;
    uint32_t nvar; /* fresh type variables */
    struct scope_var *scope;
    uint32_t nscope, capscope;
    bool dyn_aggregates;
    bool oom;
};

/* ---- substitutions (checker/mapping.go) --------------------------------------------------------------- */

static bool map_copy(struct checker *c, const struct mapping *from, struct mapping *to)
{
    to->n = from->n;
    to->cap = from->n + 8;
    to->k = malloc(to->cap * sizeof(*to->k));
    to->v = malloc(to->cap * sizeof(*to->v));
    if (!to->k || !to->v) {
        free(to->k);
        free(to->v);
        to->k = NULL;
        to->v = NULL;
        to->n = to->cap = 0;
        c->oom = true;
        return false;
    }
    if (from->n) {
        memcpy(to->k, from->k, from->n * sizeof(*to->k));
        memcpy(to->v, from->v, from->n * sizeof(*to->v));
    }
    return true;
}

static void map_free(struct mapping *m)
{
    free(m->k);
    free(m->v);
    m->k = NULL;
    m->v = NULL;
    m->n = m->cap = 0;
}

static const struct ks_cel_type *map_find(const struct mapping *m, const struct ks_cel_type *t)
{
    if (t->kind != CEL_T_PARAM)
        return NULL;
    for (uint32_t i = 0; i < m->n; i++)
        if (!strcmp(m->k[i], t->name))
            return m->v[i];
    return NULL;
}

static void map_add(struct checker *c, struct mapping *m, const struct ks_cel_type *from,
                    const struct ks_cel_type *to)
{
    for (uint32_t i = 0; i < m->n; i++) {
        if (!strcmp(m->k[i], from->name)) {
            m->v[i] = to;
            return;
        }
    }
    if (m->n == m->cap) {
        uint32_t cap = m->cap ? m->cap * 2 : 8;
        const char **k = realloc(m->k, cap * sizeof(*k));
        if (k)
            m->k = k;
        const struct ks_cel_type **v = realloc(m->v, cap * sizeof(*v));
        if (v)
            m->v = v;
        if (!k || !v) {
            c->oom = true;
            return;
        }
        m->cap = cap;
    }
    m->k[m->n] = from->name;
    m->v[m->n++] = to;
}

/* ---- assignability (checker/types.go) --------------------------------------------------------------------
 */

static bool is_dyn(const struct ks_cel_type *t)
{
    return t->kind == KS_CEL_DYN;
}
static bool is_dyn_or_error(const struct ks_cel_type *t)
{
    return t->kind == KS_CEL_DYN || t->kind == KS_CEL_ERROR;
}
static bool is_struct(const struct ks_cel_type *t)
{
    return t->kind == KS_CEL_OBJECT || t->kind == KS_CEL_QUANTITY || t->kind == KS_CEL_SEMVER;
}
static int nparams(const struct ks_cel_type *t)
{
    switch (t->kind) {
    case KS_CEL_LIST:
    case KS_CEL_OPTIONAL:
        return 1;
    case KS_CEL_MAP:
        return 2;
    case KS_CEL_TYPE:
        return t->p[0] ? 1 : 0;
    default:
        return 0;
    }
}

/* Type.IsAssignableType (the default rule): to <- from. */
static bool type_is_assignable_type(const struct ks_cel_type *to, const struct ks_cel_type *from)
{
    if (to == from || to->kind == KS_CEL_DYN || to->kind == CEL_T_PARAM)
        return true;
    if (to->kind != from->kind)
        return false;
    if (is_struct(to) && strcmp(to->name, from->name))
        return false;
    int n = nparams(to);
    if (n != nparams(from))
        return false;
    for (int i = 0; i < n; i++)
        if (!type_is_assignable_type(to->p[i], from->p[i]))
            return false;
    return true;
}

static bool is_equal_or_less_specific(const struct ks_cel_type *t1, const struct ks_cel_type *t2)
{
    if (is_dyn(t1) || t1->kind == CEL_T_PARAM)
        return true;
    if (is_dyn(t2) || t2->kind == CEL_T_PARAM)
        return false;
    if (t1->kind != t2->kind)
        return false;
    switch (t1->kind) {
    case KS_CEL_OPTIONAL:
    case KS_CEL_LIST:
        return is_equal_or_less_specific(t1->p[0], t2->p[0]);
    case KS_CEL_MAP:
        return is_equal_or_less_specific(t1->p[0], t2->p[0]) && is_equal_or_less_specific(t1->p[1], t2->p[1]);
    case KS_CEL_TYPE:
        return true;
    default:
        return ks__cel_type_exact(t1, t2);
    }
}

static const struct ks_cel_type *most_general(const struct ks_cel_type *t1, const struct ks_cel_type *t2)
{
    return is_equal_or_less_specific(t1, t2) ? t1 : t2;
}

static bool not_referenced_in(const struct mapping *m, const struct ks_cel_type *t,
                              const struct ks_cel_type *w)
{
    if (ks__cel_type_exact(t, w))
        return false;
    switch (w->kind) {
    case CEL_T_PARAM: {
        const struct ks_cel_type *s = map_find(m, w);
        return s ? not_referenced_in(m, t, s) : true;
    }
    case KS_CEL_OPTIONAL:
    case KS_CEL_LIST:
    case KS_CEL_MAP:
    case KS_CEL_TYPE:
        for (int i = 0; i < nparams(w); i++)
            if (!not_referenced_in(m, t, w->p[i]))
                return false;
        return true;
    default:
        return true;
    }
}

static bool internal_is_assignable(struct checker *c, struct mapping *m, const struct ks_cel_type *t1,
                                   const struct ks_cel_type *t2);

/* isValidTypeSubstitution: may the type parameter @t2 stand for @t1? */
static bool valid_subst(struct checker *c, struct mapping *m, const struct ks_cel_type *t1,
                        const struct ks_cel_type *t2, bool *has_sub)
{
    *has_sub = false;
    if (t1->kind == t2->kind && ks__cel_type_exact(t1, t2)) {
        *has_sub = true;
        return true;
    }
    const struct ks_cel_type *s = map_find(m, t2);
    if (s) {
        *has_sub = true;
        if (t1->kind == s->kind && ks__cel_type_exact(t1, s))
            return true;
        if (internal_is_assignable(c, m, t1, s)) {
            const struct ks_cel_type *n = most_general(t1, s);
            if (not_referenced_in(m, t2, n))
                map_add(c, m, t2, n);
            return true;
        }
        return false;
    }
    if (not_referenced_in(m, t2, t1)) {
        map_add(c, m, t2, t1);
        return true;
    }
    return false;
}

static bool null_assignable(const struct ks_cel_type *t)
{
    switch (t->kind) {
    case KS_CEL_OPTIONAL:
    case KS_CEL_OBJECT:
    case KS_CEL_QUANTITY:
    case KS_CEL_SEMVER:
    case KS_CEL_DURATION:
    case KS_CEL_TIMESTAMP:
        return true;
    default:
        return type_is_assignable_type(t, &ks__cel_t_null);
    }
}

static bool internal_is_assignable(struct checker *c, struct mapping *m, const struct ks_cel_type *t1,
                                   const struct ks_cel_type *t2)
{
    bool has;
    if (t2->kind == CEL_T_PARAM) {
        if (valid_subst(c, m, t1, t2, &has))
            return true;
        if (has)
            return false;
    }
    if (t1->kind == CEL_T_PARAM)
        return valid_subst(c, m, t2, t1, &has);
    if (is_dyn_or_error(t1) || is_dyn_or_error(t2))
        return true;
    if (t1->kind == KS_CEL_NULL)
        return null_assignable(t2);
    if (t2->kind == KS_CEL_NULL)
        return null_assignable(t1);
    switch (t1->kind) {
    case KS_CEL_BOOL:
    case KS_CEL_BYTES:
    case KS_CEL_DOUBLE:
    case KS_CEL_INT:
    case KS_CEL_STRING:
    case KS_CEL_UINT:
    case KS_CEL_DURATION:
    case KS_CEL_TIMESTAMP:
    case KS_CEL_OBJECT:
    case KS_CEL_QUANTITY:
    case KS_CEL_SEMVER:
        return type_is_assignable_type(t2, t1);
    case KS_CEL_TYPE:
        return t2->kind == KS_CEL_TYPE;
    case KS_CEL_OPTIONAL:
    case KS_CEL_LIST:
    case KS_CEL_MAP: {
        if (t1->kind != t2->kind)
            return false;
        for (int i = 0; i < nparams(t1); i++)
            if (!internal_is_assignable(c, m, t1->p[i], t2->p[i]))
                return false;
        return true;
    }
    default:
        return false;
    }
}

/* isAssignable with the checker's substitutions, kept on success. */
static bool assignable(struct checker *c, const struct ks_cel_type *t1, const struct ks_cel_type *t2)
{
    struct mapping m;
    if (!map_copy(c, &c->m, &m))
        return false;
    if (internal_is_assignable(c, &m, t1, t2)) {
        map_free(&c->m);
        c->m = m;
        return true;
    }
    map_free(&m);
    return false;
}

static bool assignable_list(struct checker *c, const struct ks_cel_type **l1, const struct ks_cel_type **l2,
                            int n)
{
    struct mapping m;
    if (!map_copy(c, &c->m, &m))
        return false;
    for (int i = 0; i < n; i++) {
        if (!internal_is_assignable(c, &m, l1[i], l2[i])) {
            map_free(&m);
            return false;
        }
    }
    map_free(&c->m);
    c->m = m;
    return true;
}

static const struct ks_cel_type *mk(struct checker *c, int kind, const struct ks_cel_type *p0,
                                    const struct ks_cel_type *p1)
{
    const struct ks_cel_type *t = ks__cel_type_new(c->a, kind, p0, p1);
    if (!t) {
        c->oom = true;
        return &ks__cel_t_error;
    }
    return t;
}

static const struct ks_cel_type *substitute(struct checker *c, const struct mapping *m,
                                            const struct ks_cel_type *t, bool param_to_dyn)
{
    const struct ks_cel_type *s = map_find(m, t);
    if (s)
        return substitute(c, m, s, param_to_dyn);
    if (param_to_dyn && t->kind == CEL_T_PARAM)
        return &ks__cel_t_dyn;
    switch (t->kind) {
    case KS_CEL_OPTIONAL:
    case KS_CEL_LIST: {
        const struct ks_cel_type *e = substitute(c, m, t->p[0], param_to_dyn);
        return e == t->p[0] ? t : mk(c, t->kind, e, NULL);
    }
    case KS_CEL_MAP: {
        const struct ks_cel_type *k = substitute(c, m, t->p[0], param_to_dyn);
        const struct ks_cel_type *v = substitute(c, m, t->p[1], param_to_dyn);
        return k == t->p[0] && v == t->p[1] ? t : mk(c, KS_CEL_MAP, k, v);
    }
    case KS_CEL_TYPE:
        if (t->p[0]) {
            const struct ks_cel_type *e = substitute(c, m, t->p[0], param_to_dyn);
            return e == t->p[0] ? t : mk(c, KS_CEL_TYPE, e, NULL);
        }
        return t;
    default:
        return t;
    }
}

static const struct ks_cel_type *new_var(struct checker *c)
{
    char name[32];
    snprintf(name, sizeof(name), "_var%u", c->nvar++);
    const struct ks_cel_type *t = ks__cel_type_param(c->a, name);
    if (!t) {
        c->oom = true;
        return &ks__cel_t_dyn;
    }
    return t;
}

/* Rename an overload's type parameters to fresh variables. */
static const struct ks_cel_type *rename_params(struct checker *c, const struct ks_cel_type *t,
                                               const char *const *from, const struct ks_cel_type **to, int n)
{
    if (!t)
        return t;
    if (t->kind == CEL_T_PARAM) {
        for (int i = 0; i < n; i++)
            if (!strcmp(t->name, from[i]))
                return to[i];
        return t;
    }
    int np = nparams(t);
    if (np == 0)
        return t;
    const struct ks_cel_type *a0 = rename_params(c, t->p[0], from, to, n);
    const struct ks_cel_type *a1 = np > 1 ? rename_params(c, t->p[1], from, to, n) : NULL;
    if (a0 == t->p[0] && a1 == t->p[1])
        return t;
    return mk(c, t->kind, a0, a1);
}

/* ---- issues (checker/errors.go)
 * ------------------------------------------------------------------------------ */

static void type_mismatch(struct checker *c, uint32_t off, const struct ks_cel_type *want,
                          const struct ks_cel_type *got)
{
    struct cel_sb a = {0}, b = {0};
    ks__cel_type_format(&a, want);
    ks__cel_type_format(&b, got);
    ks__cel_issue(c->is, c->src, off, "expected type '%s' but found '%s'", a.p ? a.p : "", b.p ? b.p : "");
    ks__cel_sb_free(&a);
    ks__cel_sb_free(&b);
}

static void undeclared(struct checker *c, uint32_t off, const char *name)
{
    ks__cel_issue(c->is, c->src, off, "undeclared reference to '%s' (in container '')", name);
}

/* ---- scopes
 * ------------------------------------------------------------------------------------------------------- */

static void push_var(struct checker *c, const char *name, const struct ks_cel_type *t)
{
    if (c->nscope == c->capscope) {
        uint32_t cap = c->capscope ? c->capscope * 2 : 16;
        struct scope_var *v = realloc(c->scope, cap * sizeof(*v));
        if (!v) {
            c->oom = true;
            return;
        }
        c->scope = v;
        c->capscope = cap;
    }
    c->scope[c->nscope++] = (struct scope_var){.name = name, .type = t};
}

static const struct ks_cel_type *lookup_local(struct checker *c, const char *name)
{
    for (uint32_t i = c->nscope; i-- > 0;)
        if (!strcmp(c->scope[i].name, name))
            return c->scope[i].type;
    return NULL;
}

/* ---- the checker
 * ---------------------------------------------------------------------------------------------- */

static void check(struct checker *c, struct cel_expr *e);

static const struct ks_cel_type *lit_type(const struct ks_cel_value *v)
{
    return ks__cel_type_prim(v->kind);
}

/* The qualified name of an ident/select chain ("a.b.c"), or false. */
static bool qualified_name(struct checker *c, const struct cel_expr *e, struct cel_sb *b)
{
    if (e->kind == CEL_E_IDENT) {
        ks__cel_sb_puts(b, e->u.ident.name);
        return true;
    }
    if (e->kind == CEL_E_SELECT && !(e->flags & CEL_F_TEST_ONLY)) {
        if (!qualified_name(c, e->u.sel.operand, b))
            return false;
        ks__cel_sb_puts(b, ".");
        ks__cel_sb_puts(b, e->u.sel.field);
        return true;
    }
    return false;
}

/* Resolve an identifier name: comprehension variables, then the environment. */
static bool resolve_ident(struct checker *c, struct cel_expr *e, const char *name)
{
    const struct ks_cel_type *t = name[0] != '.' ? lookup_local(c, name) : NULL;
    if (t) {
        e->type = t;
        return true;
    }
    const struct cel_var *v = ks__cel_env_var(c->env, name);
    if (!v)
        return false;
    e->type = v->type;
    return true;
}

static void check_ident(struct checker *c, struct cel_expr *e)
{
    if (resolve_ident(c, e, e->u.ident.name))
        return;
    e->type = &ks__cel_t_error;
    undeclared(c, e->off, e->u.ident.name);
}

static const struct ks_cel_type *select_field(struct checker *c, struct cel_expr *e, struct cel_expr *operand,
                                              const char *field, bool optional)
{
    check(c, operand);
    const struct ks_cel_type *ot = substitute(c, &c->m, operand->type, false);
    bool is_opt = false;
    if (ot->kind == KS_CEL_OPTIONAL) {
        ot = ot->p[0];
        is_opt = true;
    }
    const struct ks_cel_type *r = &ks__cel_t_error;
    switch (ot->kind) {
    case KS_CEL_MAP:
        r = ot->p[1];
        break;
    case KS_CEL_OBJECT:
    case KS_CEL_QUANTITY:
    case KS_CEL_SEMVER: {
        const struct ks_cel_field_decl *f = ot->nfields ? ks__cel_type_field(ot, field, strlen(field)) : NULL;
        if (f)
            r = f->type;
        else
            ks__cel_issue(c->is, c->src, e->off, "undefined field '%s'", field);
        break;
    }
    case CEL_T_PARAM:
        assignable(c, &ks__cel_t_dyn, ot);
        r = &ks__cel_t_dyn;
        break;
    default:
        if (!is_dyn_or_error(ot)) {
            struct cel_sb b = {0};
            ks__cel_type_format(&b, ot);
            ks__cel_issue(c->is, c->src, e->off, "type '%s' does not support field selection",
                          b.p ? b.p : "");
            ks__cel_sb_free(&b);
        }
        r = &ks__cel_t_dyn;
        break;
    }
    if (is_opt || optional)
        return mk(c, KS_CEL_OPTIONAL, r, NULL);
    return r;
}

static void check_select(struct checker *c, struct cel_expr *e)
{
    if (!(e->flags & CEL_F_TEST_ONLY)) {
        struct cel_sb b = {0};
        if (qualified_name(c, e, &b) && b.p) {
            const struct cel_var *v = ks__cel_env_var(c->env, b.p);
            /* a comprehension variable shadows a qualified name starting with it */
            struct cel_expr *root = e;
            while (root->kind == CEL_E_SELECT)
                root = root->u.sel.operand;
            if (v && !lookup_local(c, root->u.ident.name)) {
                const char *name = ks__cel_strndup(c->a, b.p, b.len);
                ks__cel_sb_free(&b);
                if (!name) {
                    c->oom = true;
                    return;
                }
                e->kind = CEL_E_IDENT;
                e->u.ident.name = name;
                e->type = v->type;
                return;
            }
        }
        ks__cel_sb_free(&b);
    }
    const struct ks_cel_type *r = select_field(c, e, e->u.sel.operand, e->u.sel.field, false);
    if (e->flags & CEL_F_TEST_ONLY)
        r = &ks__cel_t_bool;
    e->type = substitute(c, &c->m, r, false);
}

static void check_opt_select(struct checker *c, struct cel_expr *e)
{
    struct cel_expr *field = e->u.call.args[1];
    if (field->kind != CEL_E_LIT || field->u.lit.kind != KS_CEL_STRING) {
        ks__cel_issue(c->is, c->src, field->off, "unsupported optional field selection");
        e->type = &ks__cel_t_error;
        return;
    }
    const char *name = ks__cel_strndup(c->a, field->u.lit.v.str.p, field->u.lit.v.str.len);
    if (!name) {
        c->oom = true;
        return;
    }
    field->type = &ks__cel_t_string;
    const struct ks_cel_type *r = select_field(c, e, e->u.call.args[0], name, true);
    e->type = substitute(c, &c->m, r, false);
}

static void format_args(struct checker *c, struct cel_sb *b, const struct ks_cel_type **args, int n,
                        bool member)
{
    int i = 0;
    if (member) {
        ks__cel_type_format(b, substitute(c, &c->m, args[0], true));
        ks__cel_sb_puts(b, ".");
        i = 1;
    }
    ks__cel_sb_puts(b, "(");
    for (int j = i; j < n; j++) {
        if (j > i)
            ks__cel_sb_puts(b, ", ");
        ks__cel_type_format(b, substitute(c, &c->m, args[j], true));
    }
    ks__cel_sb_puts(b, ")");
}

static void resolve_overload(struct checker *c, struct cel_expr *e, const struct cel_function *fn)
{
    bool member = e->flags & CEL_F_MEMBER;
    const struct ks_cel_type *argt[8];
    int n = 0;
    if (member)
        argt[n++] = e->u.call.target->type;
    for (uint32_t i = 0; i < e->u.call.nargs && n < 8; i++)
        argt[n++] = e->u.call.args[i]->type;
    const struct ks_cel_type *result = NULL;
    const struct cel_overload **hits = ks__cel_alloc(c->a, (fn->n ? fn->n : 1) * sizeof(*hits));
    if (!hits) {
        c->oom = true;
        return;
    }
    uint32_t nhits = 0;
    if (!strcmp(fn->name, "_&&_") || !strcmp(fn->name, "_||_")) {
        bool bad = false;
        for (int i = 0; i < n; i++) {
            if (!assignable(c, argt[i], &ks__cel_t_bool)) {
                type_mismatch(c, e->u.call.args[i]->off, &ks__cel_t_bool, argt[i]);
                bad = true;
            }
        }
        hits[0] = fn->ovls[0];
        e->u.call.ovls = hits;
        e->u.call.novls = 1;
        e->type = bad ? &ks__cel_t_error : &ks__cel_t_bool;
        return;
    }
    for (uint32_t i = 0; i < fn->n; i++) {
        const struct cel_overload *o = fn->ovls[i];
        if (((o->flags & CEL_OVL_MEMBER) != 0) != member || o->nargs != n)
            continue;
        const struct ks_cel_type *cand[4];
        const struct ks_cel_type *res = o->result;
        if (o->params[0]) {
            const struct ks_cel_type *to[2];
            int np = o->params[1] ? 2 : 1;
            for (int k = 0; k < np; k++)
                to[k] = new_var(c);
            for (int k = 0; k < n; k++)
                cand[k] = rename_params(c, o->args[k], o->params, to, np);
            res = rename_params(c, res, o->params, to, np);
        } else {
            for (int k = 0; k < n; k++)
                cand[k] = o->args[k];
        }
        if (!assignable_list(c, argt, cand, n))
            continue;
        hits[nhits++] = o;
        const struct ks_cel_type *r = substitute(c, &c->m, res, false);
        if (!result)
            result = r;
        else if (!is_dyn(result) && !ks__cel_type_exact(r, result))
            result = &ks__cel_t_dyn;
    }
    if (!result) {
        struct cel_sb b = {0};
        format_args(c, &b, argt, n, member);
        ks__cel_issue(c->is, c->src, e->off, "found no matching overload for '%s' applied to '%s'", fn->name,
                      b.p ? b.p : "");
        ks__cel_sb_free(&b);
        e->type = &ks__cel_t_error;
        return;
    }
    e->u.call.ovls = hits;
    e->u.call.novls = nhits;
    e->type = result;
}

static void check_call(struct checker *c, struct cel_expr *e)
{
    if (!strcmp(e->u.call.fn, "_?._") && !(e->flags & CEL_F_MEMBER) && e->u.call.nargs == 2) {
        check_opt_select(c, e);
        return;
    }
    for (uint32_t i = 0; i < e->u.call.nargs; i++)
        check(c, e->u.call.args[i]);
    if (!(e->flags & CEL_F_MEMBER)) {
        const struct cel_function *fn = ks__cel_env_function(c->env, e->u.call.fn);
        if (!fn) {
            undeclared(c, e->off, e->u.call.fn);
            e->type = &ks__cel_t_error;
            return;
        }
        resolve_overload(c, e, fn);
        return;
    }
    /* a namespaced function called like a method: sets.contains(a, b), optional.of(x) */
    struct cel_sb b = {0};
    if (qualified_name(c, e->u.call.target, &b) && b.p) {
        ks__cel_sb_puts(&b, ".");
        ks__cel_sb_puts(&b, e->u.call.fn);
        const struct cel_function *fn = b.p ? ks__cel_env_function(c->env, b.p) : NULL;
        if (fn) {
            ks__cel_sb_free(&b);
            e->flags &= (uint8_t)~CEL_F_MEMBER;
            e->u.call.target = NULL;
            e->u.call.fn = fn->name;
            resolve_overload(c, e, fn);
            return;
        }
    }
    ks__cel_sb_free(&b);
    check(c, e->u.call.target);
    const struct cel_function *fn = ks__cel_env_function(c->env, e->u.call.fn);
    if (!fn) {
        e->type = &ks__cel_t_error;
        undeclared(c, e->off, e->u.call.fn);
        return;
    }
    resolve_overload(c, e, fn);
}

static const struct ks_cel_type *join_types(struct checker *c, const struct cel_expr *e,
                                            const struct ks_cel_type *prev, const struct ks_cel_type *cur)
{
    if (!prev)
        return cur;
    if (assignable(c, prev, cur))
        return most_general(prev, cur);
    if (c->dyn_aggregates)
        return &ks__cel_t_dyn;
    type_mismatch(c, e->off, prev, cur);
    return &ks__cel_t_error;
}

static void check_list(struct checker *c, struct cel_expr *e)
{
    const struct ks_cel_type *elem = NULL;
    for (uint32_t i = 0; i < e->u.list.n; i++) {
        struct cel_expr *x = e->u.list.elems[i];
        check(c, x);
        const struct ks_cel_type *t = x->type;
        if (e->u.list.opt && e->u.list.opt[i]) {
            if (t->kind == KS_CEL_OPTIONAL)
                t = t->p[0];
            else if (!is_dyn(t))
                type_mismatch(c, x->off, mk(c, KS_CEL_OPTIONAL, t, NULL), t);
        }
        elem = join_types(c, x, elem, t);
    }
    if (!elem)
        elem = new_var(c);
    e->type = mk(c, KS_CEL_LIST, elem, NULL);
}

static void check_map(struct checker *c, struct cel_expr *e)
{
    const struct ks_cel_type *kt = NULL, *vt = NULL;
    for (uint32_t i = 0; i < e->u.map.n; i++) {
        struct cel_entry *en = &e->u.map.e[i];
        check(c, en->key);
        kt = join_types(c, en->key, kt, en->key->type);
        check(c, en->value);
        const struct ks_cel_type *t = en->value->type;
        if (en->optional) {
            if (t->kind == KS_CEL_OPTIONAL)
                t = t->p[0];
            else if (!is_dyn(t))
                type_mismatch(c, en->value->off, mk(c, KS_CEL_OPTIONAL, t, NULL), t);
        }
        vt = join_types(c, en->value, vt, t);
    }
    if (!kt) {
        kt = new_var(c);
        vt = new_var(c);
    }
    e->type = mk(c, KS_CEL_MAP, kt, vt);
}

static void check_struct(struct checker *c, struct cel_expr *e)
{
    const struct cel_var *v = ks__cel_env_var(c->env, e->u.map.type_name);
    const struct ks_cel_type *r = &ks__cel_t_error;
    if (!v) {
        undeclared(c, e->off, e->u.map.type_name);
        e->type = r;
        return;
    }
    if (v->type->kind != KS_CEL_TYPE || !v->is_type) {
        struct cel_sb b = {0};
        ks__cel_type_format(&b, v->type);
        ks__cel_issue(c->is, c->src, e->off, "'%s' is not a type", b.p ? b.p : "");
        ks__cel_sb_free(&b);
    } else if (!v->type->p[0] || v->type->p[0]->kind != KS_CEL_OBJECT) {
        struct cel_sb b = {0};
        ks__cel_type_format(&b, v->type->p[0]);
        ks__cel_issue(c->is, c->src, e->off, "'%s' is not a message type", b.p ? b.p : "");
        ks__cel_sb_free(&b);
    } else {
        r = v->type->p[0];
    }
    e->type = r;
    for (uint32_t i = 0; i < e->u.map.n; i++) {
        struct cel_entry *en = &e->u.map.e[i];
        check(c, en->value);
        const struct ks_cel_type *ft = &ks__cel_t_error;
        if (r->kind == KS_CEL_OBJECT) {
            const struct ks_cel_field_decl *f = ks__cel_type_field(r, en->field, strlen(en->field));
            if (f)
                ft = f->type;
            else
                ks__cel_issue(c->is, c->src, en->off, "undefined field '%s'", en->field);
        }
        const struct ks_cel_type *t = en->value->type;
        if (en->optional) {
            if (t->kind == KS_CEL_OPTIONAL)
                t = t->p[0];
            else if (!is_dyn(t))
                type_mismatch(c, en->value->off, mk(c, KS_CEL_OPTIONAL, t, NULL), t);
        }
        if (!assignable(c, ft, t)) {
            struct cel_sb a = {0}, b = {0};
            ks__cel_type_format(&a, ft);
            ks__cel_type_format(&b, t);
            ks__cel_issue(c->is, c->src, en->off,
                          "expected type of field '%s' is '%s' but provided type is '%s'", en->field,
                          a.p ? a.p : "", b.p ? b.p : "");
            ks__cel_sb_free(&a);
            ks__cel_sb_free(&b);
        }
    }
}

static void assert_type(struct checker *c, const struct cel_expr *e, const struct ks_cel_type *t)
{
    if (!assignable(c, t, e->type))
        type_mismatch(c, e->off, t, e->type);
}

static void check_comp(struct checker *c, struct cel_expr *e)
{
    check(c, e->u.comp.range);
    check(c, e->u.comp.init);
    const struct ks_cel_type *rt = substitute(c, &c->m, e->u.comp.range->type, false);
    const struct ks_cel_type *accu = e->u.comp.init->type;
    uint32_t mark = c->nscope;
    push_var(c, e->u.comp.accu, accu);
    const struct ks_cel_type *vt, *v2 = NULL;
    switch (rt->kind) {
    case KS_CEL_LIST:
        vt = rt->p[0];
        if (e->u.comp.iter2) {
            v2 = vt;
            vt = &ks__cel_t_int;
        }
        break;
    case KS_CEL_MAP:
        vt = rt->p[0];
        if (e->u.comp.iter2)
            v2 = rt->p[1];
        break;
    case KS_CEL_DYN:
    case KS_CEL_ERROR:
    case CEL_T_PARAM:
        assignable(c, &ks__cel_t_dyn, rt);
        vt = &ks__cel_t_dyn;
        v2 = &ks__cel_t_dyn;
        break;
    default: {
        struct cel_sb b = {0};
        ks__cel_type_format(&b, rt);
        ks__cel_issue(
            c->is, c->src, e->u.comp.range->off,
            "expression of type '%s' cannot be range of a comprehension (must be list, map, or dynamic)",
            b.p ? b.p : "");
        ks__cel_sb_free(&b);
        vt = &ks__cel_t_error;
        v2 = &ks__cel_t_error;
        break;
    }
    }
    push_var(c, e->u.comp.iter, vt);
    if (e->u.comp.iter2)
        push_var(c, e->u.comp.iter2, v2);
    check(c, e->u.comp.cond);
    assert_type(c, e->u.comp.cond, &ks__cel_t_bool);
    check(c, e->u.comp.step);
    assert_type(c, e->u.comp.step, accu);
    c->nscope = mark + 1;
    check(c, e->u.comp.result);
    c->nscope = mark;
    e->type = substitute(c, &c->m, e->u.comp.result->type, false);
}

static void check(struct checker *c, struct cel_expr *e)
{
    if (!e || c->oom)
        return;
    switch (e->kind) {
    case CEL_E_LIT:
        e->type = lit_type(&e->u.lit);
        break;
    case CEL_E_IDENT:
        check_ident(c, e);
        break;
    case CEL_E_SELECT:
        check_select(c, e);
        break;
    case CEL_E_CALL:
        check_call(c, e);
        break;
    case CEL_E_LIST:
        check_list(c, e);
        break;
    case CEL_E_MAP:
        check_map(c, e);
        break;
    case CEL_E_STRUCT:
        check_struct(c, e);
        break;
    case CEL_E_COMP:
        check_comp(c, e);
        break;
    default:
        e->type = &ks__cel_t_error;
        break;
    }
    if (!e->type)
        e->type = &ks__cel_t_error;
}

/* Final types: every substitution applied, remaining type parameters as dyn. */
static void finish(struct checker *c, struct cel_expr *e)
{
    if (!e)
        return;
    e->type = substitute(c, &c->m, e->type, true);
    switch (e->kind) {
    case CEL_E_SELECT:
        finish(c, e->u.sel.operand);
        break;
    case CEL_E_CALL:
        finish(c, e->u.call.target);
        for (uint32_t i = 0; i < e->u.call.nargs; i++)
            finish(c, e->u.call.args[i]);
        break;
    case CEL_E_LIST:
        for (uint32_t i = 0; i < e->u.list.n; i++)
            finish(c, e->u.list.elems[i]);
        break;
    case CEL_E_MAP:
    case CEL_E_STRUCT:
        for (uint32_t i = 0; i < e->u.map.n; i++) {
            finish(c, e->u.map.e[i].key);
            finish(c, e->u.map.e[i].value);
        }
        break;
    case CEL_E_COMP:
        finish(c, e->u.comp.range);
        finish(c, e->u.comp.init);
        finish(c, e->u.comp.cond);
        finish(c, e->u.comp.step);
        finish(c, e->u.comp.result);
        break;
    default:
        break;
    }
}

/* cel.ValidateHomogeneousAggregateLiterals: literal elements of equivalent types. */
static void validate_homogeneous(struct checker *c, const struct cel_expr *e)
{
    if (!e)
        return;
    switch (e->kind) {
    case CEL_E_SELECT:
        validate_homogeneous(c, e->u.sel.operand);
        break;
    case CEL_E_CALL:
        validate_homogeneous(c, e->u.call.target);
        for (uint32_t i = 0; i < e->u.call.nargs; i++)
            validate_homogeneous(c, e->u.call.args[i]);
        break;
    case CEL_E_LIST: {
        const struct ks_cel_type *first = NULL;
        for (uint32_t i = 0; i < e->u.list.n; i++) {
            const struct cel_expr *x = e->u.list.elems[i];
            validate_homogeneous(c, x);
            const struct ks_cel_type *t = x->type;
            if (e->u.list.opt && e->u.list.opt[i] && t->kind == KS_CEL_OPTIONAL)
                t = t->p[0];
            if (!first) {
                first = t;
            } else if (!ks__cel_type_exact(first, t)) {
                type_mismatch(c, x->off, first, t);
                break;
            }
        }
        break;
    }
    case CEL_E_MAP: {
        const struct ks_cel_type *kt = NULL, *vt = NULL;
        for (uint32_t i = 0; i < e->u.map.n; i++) {
            const struct cel_entry *en = &e->u.map.e[i];
            validate_homogeneous(c, en->key);
            validate_homogeneous(c, en->value);
            const struct ks_cel_type *k = en->key->type, *v = en->value->type;
            if (en->optional && v->kind == KS_CEL_OPTIONAL)
                v = v->p[0];
            if (!kt) {
                kt = k;
                vt = v;
                continue;
            }
            if (!ks__cel_type_exact(kt, k))
                type_mismatch(c, en->key->off, kt, k);
            if (!ks__cel_type_exact(vt, v))
                type_mismatch(c, en->value->off, vt, v);
        }
        break;
    }
    case CEL_E_STRUCT:
        for (uint32_t i = 0; i < e->u.map.n; i++)
            validate_homogeneous(c, e->u.map.e[i].value);
        break;
    case CEL_E_COMP:
        validate_homogeneous(c, e->u.comp.range);
        validate_homogeneous(c, e->u.comp.init);
        validate_homogeneous(c, e->u.comp.step);
        validate_homogeneous(c, e->u.comp.result);
        break;
    default:
        break;
    }
}

int ks__cel_check(struct ks_cel_program *p, const struct cel_source *src, struct cel_issues *is)
{
    struct checker c = {
        .p = p,
        .env = p->env,
        .src = src,
        .is = is,
        .a = &p->arena,
        .dyn_aggregates = (p->flags & KS_CEL_COMPILE_DYN_AGGREGATES) != 0,
    };
    uint32_t before = is->total;
    check(&c, p->root);
    finish(&c, p->root);
    if (is->total == before && !c.dyn_aggregates && !c.oom)
        validate_homogeneous(&c, p->root);
    map_free(&c.m);
    free(c.scope);
    if (c.oom || is->oom)
        return -ENOMEM;
    p->type = p->root->type;
    return is->total == before ? 0 : -EINVAL;
}
