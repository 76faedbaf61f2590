/*
 * cel_program.c - compiling a CEL expression into a program: source positions, parse, check,
 * plan, cost estimate; and the program's accessors.
 *
 * Mirrors cel-go cel/env.go Compile (parse, then check; the issues of the first failing stage
 * are returned, formatted as Issues.String()) followed by env.Program (the planner). A failure
 * of the planner that cel-go reports from Program() (a constant conversion that fails, say)
 * is returned as its bare message, as Kubernetes wraps it ("program instantiation failed: ...").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cel_internal.h"

static int make_source(const char *expr, size_t len, struct cel_source *src)
{
    src->text = expr;
    src->len = len;
    uint32_t n = 0, cap = 16;
    uint32_t *v = malloc(cap * sizeof(*v));
    if (!v)
        return -ENOMEM;
    uint32_t cp = 0;
    for (size_t i = 0; i < len;) {
        size_t l = 1;
        if ((unsigned char)expr[i] >= 0x80)
            ks__cel_utf8_decode(expr + i, len - i, &l);
        bool nl = expr[i] == '\n';
        i += l;
        cp++;
        if (nl) {
            if (n + 1 >= cap) {
                cap *= 2;
                uint32_t *nv = realloc(v, cap * sizeof(*v));
                if (!nv) {
                    free(v);
                    return -ENOMEM;
                }
                v = nv;
            }
            v[n++] = cp;
        }
    }
    v[n++] = cp + 1;
    src->line_starts = v;
    src->nlines = n;
    return 0;
}

int ks_cel_compile_flags(const struct ks_cel_env *env, const char *expr, size_t len, unsigned flags,
                         struct ks_cel_program **out, char **msg)
{
    if (msg)
        *msg = NULL;
    if (!env || !expr || !out)
        return -EINVAL;
    struct ks_cel_program *p = calloc(1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    p->env = env;
    p->flags = flags;
    struct cel_source src;
    int rc = make_source(expr, len, &src);
    if (rc)
        goto err_source;
    struct cel_issues is = {0};
    struct cel_parse_opts po = {.bindings = (env->libs & KS_CEL_LIB_BINDINGS) != 0};
    p->root = ks__cel_parse(&p->arena, &src, &is, &po, &p->next_id);
    rc = is.oom ? -ENOMEM : p->root ? 0 : -EINVAL;
    if (!rc && !(flags & KS_CEL_COMPILE_UNCHECKED))
        rc = ks__cel_check(p, &src, &is);
    /* the estimate reads the checked tree, before the planner rewrites it */
    p->max_cost = UINT64_MAX;
    if (!rc && !(flags & KS_CEL_COMPILE_UNCHECKED))
        p->max_cost = ks__cel_estimate_cost(p);
    if (!rc) {
        if (flags & KS_CEL_COMPILE_UNCHECKED)
            p->type = &ks__cel_t_dyn;
        rc = ks__cel_plan(p, &src, &is, !(flags & KS_CEL_COMPILE_UNCHECKED));
    }
    if (rc == -EINVAL && msg) {
        /* a planner failure with no position is cel-go's Program() error: its bare text */
        if (is.n == 1 && is.v[0].off == UINT32_MAX && p->root && is.v[0].msg &&
            strncmp(is.v[0].msg, "expression ", 11) && strncmp(is.v[0].msg, "max recursion", 13)) {
            *msg = strdup(is.v[0].msg);
        } else {
            *msg = ks__cel_issues_string(&is, &src);
        }
        if (!*msg)
            rc = -ENOMEM;
    }
    ks__cel_issues_free(&is);
    free(src.line_starts);
    if (rc)
        goto err_compile;
    *out = p;
    return 0;
err_compile:
err_source:
    ks_cel_program_destroy(p);
    return rc;
}

int ks_cel_compile(const struct ks_cel_env *env, const char *expr, size_t len, struct ks_cel_program **out,
                   char **msg)
{
    return ks_cel_compile_flags(env, expr, len, 0, out, msg);
}

const struct ks_cel_type *ks_cel_program_type(const struct ks_cel_program *p)
{
    return p->type ? p->type : &ks__cel_t_dyn;
}

uint64_t ks_cel_program_max_cost(const struct ks_cel_program *p)
{
    return p->max_cost;
}

void ks_cel_program_destroy(struct ks_cel_program *p)
{
    if (!p)
        return;
    ks__cel_regex_free_all(p);
    ks__cel_arena_free(&p->arena);
    free(p);
}
