/*
 * cel_env.c - CEL environments: the declared variables, the type names the language
 * predeclares (int, string, google.protobuf.Timestamp, ...) and the function table built from
 * the standard library's and the enabled libraries' declaration rows.
 *
 * Mirrors cel-go cel/env.go and checker/env.go as Kubernetes' base environment sets them up:
 * the standard library (common/stdlib) with cross-type numeric comparisons, optional types
 * (cel/library.go optionalLib), and the libraries of enum ks_cel_lib. An overload keeps its
 * declaration order within its function: the checker tries them in that order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cel_internal.h"

static int add_var(struct ks_cel_env *env, const char *name, const struct ks_cel_type *type, bool is_type,
                   struct ks_cel_value value)
{
    for (uint32_t i = 0; i < env->nvars; i++)
        if (!strcmp(env->vars[i].name, name))
            return -EEXIST;
    if (env->nvars == env->capvars) {
        uint32_t cap = env->capvars ? env->capvars * 2 : 32;
        struct cel_var *v = realloc(env->vars, cap * sizeof(*v));
        if (!v)
            return -ENOMEM;
        env->vars = v;
        env->capvars = cap;
    }
    char *n = ks__cel_strndup(&env->arena, name, strlen(name));
    if (!n)
        return -ENOMEM;
    env->vars[env->nvars++] = (struct cel_var){.name = n, .type = type, .is_type = is_type, .value = value};
    return 0;
}

static int add_type_name(struct ks_cel_env *env, const char *name, const struct ks_cel_type *t)
{
    const struct ks_cel_type *tt = ks__cel_type_new(&env->arena, KS_CEL_TYPE, t, NULL);
    if (!tt)
        return -ENOMEM;
    return add_var(env, name, tt, true, ks__cel_typev(t));
}

/* Parse "T1, T2 -> R" into an overload. */
static int parse_sig(struct ks_cel_env *env, const struct cel_decl *d, struct cel_overload *o)
{
    char buf[256];
    size_t n = strlen(d->sig);
    if (n >= sizeof(buf))
        return -EINVAL;
    memcpy(buf, d->sig, n + 1);
    char *arrow = strstr(buf, "->");
    if (!arrow)
        return -EINVAL;
    *arrow = 0;
    o->result = ks__cel_type_parse(&env->arena, arrow + 2);
    if (!o->result)
        return -EINVAL;
    /* split the arguments at top-level commas */
    char *s = buf;
    int depth = 0;
    char *start = s;
    o->nargs = 0;
    for (;; s++) {
        if (*s == '(')
            depth++;
        else if (*s == ')')
            depth--;
        if ((*s == ',' && depth == 0) || *s == 0) {
            char save = *s;
            *s = 0;
            char *p = start;
            while (*p == ' ')
                p++;
            if (*p) {
                if (o->nargs == 4)
                    return -EINVAL;
                o->args[o->nargs] = ks__cel_type_parse(&env->arena, p);
                if (!o->args[o->nargs])
                    return -EINVAL;
                o->nargs++;
            }
            if (!save)
                break;
            start = s + 1;
        }
    }
    /* the type parameters used */
    const char *seen[2] = {NULL, NULL};
    int ns = 0;
    const struct ks_cel_type *stack[16];
    int sp = 0;
    for (int i = 0; i < o->nargs; i++)
        stack[sp++] = o->args[i];
    stack[sp++] = o->result;
    while (sp > 0) {
        const struct ks_cel_type *t = stack[--sp];
        if (!t)
            continue;
        if (t->kind == CEL_T_PARAM) {
            bool dup = false;
            for (int i = 0; i < ns; i++)
                dup |= !strcmp(seen[i], t->name);
            if (!dup && ns < 2)
                seen[ns++] = t->name;
            continue;
        }
        if (sp < 14) {
            stack[sp++] = t->p[0];
            stack[sp++] = t->p[1];
        }
    }
    o->params[0] = seen[0];
    o->params[1] = seen[1];
    o->id = d->id;
    o->fn = d->fn;
    o->flags = d->flags;
    o->cost = d->cost;
    o->impl = d->impl;
    return 0;
}

static struct cel_function *find_fn(struct ks_cel_env *env, const char *name)
{
    for (uint32_t i = 0; i < env->nfns; i++)
        if (!strcmp(env->fns[i].name, name))
            return &env->fns[i];
    return NULL;
}

static int add_decls(struct ks_cel_env *env, const struct cel_decl *d)
{
    for (; d->fn; d++) {
        struct cel_overload *o = ks__cel_zalloc(&env->arena, sizeof(*o));
        if (!o)
            return -ENOMEM;
        int rc = parse_sig(env, d, o);
        if (rc)
            return rc;
        struct cel_function *f = find_fn(env, d->fn);
        if (!f) {
            struct cel_function *nf = realloc(env->fns, (env->nfns + 1) * sizeof(*nf));
            if (!nf)
                return -ENOMEM;
            env->fns = nf;
            f = &env->fns[env->nfns++];
            *f = (struct cel_function){.name = d->fn};
        }
        const struct cel_overload **v = ks__cel_alloc(&env->arena, (f->n + 1) * sizeof(*v));
        if (!v)
            return -ENOMEM;
        if (f->n)
            memcpy(v, f->ovls, f->n * sizeof(*v));
        v[f->n++] = o;
        f->ovls = v;
    }
    return 0;
}

int ks_cel_env_create(unsigned libs, struct ks_cel_env **out)
{
    struct ks_cel_env *env = calloc(1, sizeof(*env));
    if (!env)
        return -ENOMEM;
    env->libs = libs;
    int rc = add_decls(env, ks__cel_std_decls);
    if (!rc)
        rc = add_decls(env, ks__cel_time_decls);
    if (!rc)
        rc = add_decls(env, ks__cel_opt_decls);
    if (!rc)
        rc = add_decls(env, ks__cel_comprev2_decls);
    if (!rc && (libs & KS_CEL_LIB_STRINGS))
        rc = add_decls(env, ks__cel_strings_decls);
    if (!rc && (libs & KS_CEL_LIB_LISTS))
        rc = add_decls(env, ks__cel_lists_decls);
    if (!rc && (libs & KS_CEL_LIB_REGEX))
        rc = add_decls(env, ks__cel_regex_decls);
    if (!rc && (libs & KS_CEL_LIB_QUANTITY))
        rc = add_decls(env, ks__cel_quantity_decls);
    if (!rc && (libs & KS_CEL_LIB_SEMVER))
        rc = add_decls(env, ks__cel_semver_decls);
    if (!rc && (libs & KS_CEL_LIB_SETS))
        rc = add_decls(env, ks__cel_sets_decls);
    if (rc)
        goto err_decls;
    static const struct {
        const char *name;
        int kind;
    } names[] = {
        {"bool", KS_CEL_BOOL},     {"bytes", KS_CEL_BYTES},
        {"double", KS_CEL_DOUBLE}, {"google.protobuf.Duration", KS_CEL_DURATION},
        {"int", KS_CEL_INT},       {"null_type", KS_CEL_NULL},
        {"string", KS_CEL_STRING}, {"google.protobuf.Timestamp", KS_CEL_TIMESTAMP},
        {"type", KS_CEL_TYPE},     {"uint", KS_CEL_UINT},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !rc; i++)
        rc = add_type_name(env, names[i].name, ks__cel_type_prim(names[i].kind));
    if (!rc)
        rc = add_type_name(env, "list", &ks__cel_t_list_dyn);
    if (!rc)
        rc = add_type_name(env, "map", &ks__cel_t_map_dyn);
    if (!rc)
        rc = add_type_name(env, "optional_type", &ks__cel_t_optional_dyn);
    if (rc)
        goto err_decls;
    *out = env;
    return 0;
err_decls:
    ks_cel_env_destroy(env);
    return rc == -ENOMEM ? -ENOMEM : -EINVAL;
}

void ks_cel_env_destroy(struct ks_cel_env *env)
{
    if (!env)
        return;
    free(env->vars);
    free(env->fns);
    ks__cel_arena_free(&env->arena);
    free(env);
}

int ks_cel_env_declare(struct ks_cel_env *env, const char *name, const struct ks_cel_type *type)
{
    if (!env || !name || !type)
        return -EINVAL;
    return add_var(env, name, type, false, ks__cel_null());
}

const struct cel_function *ks__cel_env_function(const struct ks_cel_env *env, const char *name)
{
    if (name[0] == '.')
        name++;
    for (uint32_t i = 0; i < env->nfns; i++)
        if (!strcmp(env->fns[i].name, name))
            return &env->fns[i];
    return NULL;
}

const struct cel_var *ks__cel_env_var(const struct ks_cel_env *env, const char *name)
{
    if (name[0] == '.')
        name++;
    for (uint32_t i = 0; i < env->nvars; i++)
        if (!strcmp(env->vars[i].name, name))
            return &env->vars[i];
    return NULL;
}
