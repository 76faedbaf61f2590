/*
 * cel_parse.c - the CEL parser: cel-spec's grammar (cel-go parser/gen/CEL.g4) by recursive
 * descent, building the tree cel-go's parser visitor builds (parser/parser.go, helper.go) and
 * expanding the macros at parse time (parser/macro.go, ext/bindings.go, cel/library.go's
 * optMap and optFlatMap).
 *
 * What it keeps of cel-go:
 *   - node locations: an operator or call at its operator token or '(' , a select at its '.',
 *     an index at its '[', a literal or identifier at its first token; macro expansions at the
 *     macro call;
 *   - && and || chains as balanced trees, "-1" as a negative literal but "--1" as 1, an even
 *     run of '!' or '-' dropped, reserved identifiers rejected, literal range errors ("invalid
 *     int literal"), string escapes (parser/unescape.go) with their error texts;
 *   - the limits: 100,000 code points; a grammar rule nested more than 250 deep ("expression
 *     recursion limit exceeded: 250", counted per rule the way ANTLR's left-recursive rules
 *     enter themselves); a visited chain deeper than 250 ("max recursion depth exceeded").
 * What differs: ANTLR recovers from a syntax error and may report several; this parser
 * reports the first one in ANTLR's words ("mismatched input ')' expecting {...}",
 * "extraneous input 'b' expecting <EOF>") and stops.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel_lex.h"

#define MAX_DEPTH      250
#define MAX_CODEPOINTS 100000

enum rule { R_EXPR, R_OR, R_AND, R_REL, R_CALC, R_UNARY, R_MEMBER, R_PRIMARY, R_LIST, R_NRULES };

struct parser {
    struct cel_arena *a;
    const struct cel_source *src;
    struct cel_issues *is;
    const struct cel_parse_opts *opts;
    struct cel_token *t;
    uint32_t nt, pos;
    uint32_t next_id;
    int depth[R_NRULES];
    int visit_depth;
    int err; /* 0, -EINVAL (reported), -ENOMEM */
    jmp_buf jb;
};

static const char *EXPR_START = "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, "
                                "NUM_UINT, STRING, BYTES, IDENTIFIER}";

_Noreturn static void fail(struct parser *P, int err)
{
    P->err = err;
    longjmp(P->jb, 1);
}

static void *palloc(struct parser *P, size_t n)
{
    void *p = ks__cel_zalloc(P->a, n);
    if (!p)
        fail(P, -ENOMEM);
    return p;
}

static const struct cel_token *cur(struct parser *P)
{
    return &P->t[P->pos];
}
static const struct cel_token *peek(struct parser *P, uint32_t k)
{
    uint32_t i = P->pos + k;
    return &P->t[i < P->nt ? i : P->nt - 1];
}
static bool is(struct parser *P, int kind)
{
    return P->t[P->pos].kind == kind;
}
static const struct cel_token *take(struct parser *P)
{
    const struct cel_token *t = &P->t[P->pos];
    if (t->kind != TK_EOF)
        P->pos++;
    return t;
}

/* The text of a token as ANTLR prints it in messages. */
static void tok_text(struct parser *P, const struct cel_token *t, char *buf, size_t cap)
{
    if (t->kind == TK_EOF) {
        snprintf(buf, cap, "<EOF>");
        return;
    }
    snprintf(buf, cap, "%.*s", (int)(t->end - t->start), P->src->text + t->start);
}

_Noreturn static void syntax_error_at(struct parser *P, const struct cel_token *t, const char *fmt,
                                      const char *a1, const char *a2)
{
    char msg[512];
    snprintf(msg, sizeof(msg), fmt, a1, a2);
    ks__cel_issue(P->is, P->src, t->cp, "Syntax error: %s", msg);
    fail(P, -EINVAL);
}

/* Could @k start an expression? */
static bool starts_expr(int k)
{
    switch (k) {
    case TK_LBRACKET:
    case TK_LBRACE:
    case TK_LPAREN:
    case TK_DOT:
    case TK_MINUS:
    case TK_NOT:
    case TK_TRUE:
    case TK_FALSE:
    case TK_NULL:
    case TK_FLOAT:
    case TK_INT:
    case TK_UINT:
    case TK_STRING:
    case TK_BYTES:
    case TK_IDENT:
        return true;
    default:
        return false;
    }
}

/* The current token cannot start an expression: ANTLR's "mismatched" or "extraneous" input. */
_Noreturn static void expected_expr(struct parser *P)
{
    char buf[256];
    const struct cel_token *t = cur(P);
    tok_text(P, t, buf, sizeof(buf));
    if (t->kind != TK_EOF && starts_expr(peek(P, 1)->kind))
        syntax_error_at(P, t, "extraneous input '%s' expecting %s", buf, EXPR_START);
    syntax_error_at(P, t, "mismatched input '%s' expecting %s", buf, EXPR_START);
}

static void expect(struct parser *P, int kind, const char *what)
{
    if (is(P, kind)) {
        take(P);
        return;
    }
    char buf[256];
    tok_text(P, cur(P), buf, sizeof(buf));
    syntax_error_at(P, cur(P), "mismatched input '%s' expecting %s", buf, what);
}

static void enter(struct parser *P, enum rule r)
{
    if (++P->depth[r] > MAX_DEPTH) {
        ks__cel_issue(P->is, P->src, UINT32_MAX, "expression recursion limit exceeded: %d", MAX_DEPTH);
        fail(P, -EINVAL);
    }
}
static void leave(struct parser *P, enum rule r, int n)
{
    P->depth[r] -= n;
}

/* ---- node construction (parser/helper.go) ----------------------------------------------------------- */

static struct cel_expr *node(struct parser *P, int kind, uint32_t off)
{
    struct cel_expr *e = palloc(P, sizeof(*e));
    e->kind = (uint8_t)kind;
    e->id = P->next_id++;
    e->off = off;
    return e;
}

static const char *pstrn(struct parser *P, const char *s, size_t n)
{
    char *p = ks__cel_strndup(P->a, s, n);
    if (!p)
        fail(P, -ENOMEM);
    return p;
}

static struct cel_expr *new_ident(struct parser *P, uint32_t off, const char *name)
{
    struct cel_expr *e = node(P, CEL_E_IDENT, off);
    e->u.ident.name = name;
    return e;
}

static struct cel_expr *new_lit(struct parser *P, uint32_t off, struct ks_cel_value v)
{
    struct cel_expr *e = node(P, CEL_E_LIT, off);
    e->u.lit = v;
    return e;
}

static struct cel_expr *new_call(struct parser *P, uint32_t off, const char *fn, struct cel_expr *target,
                                 struct cel_expr **args, uint32_t n)
{
    struct cel_expr *e = node(P, CEL_E_CALL, off);
    e->u.call.fn = fn;
    e->u.call.target = target;
    if (target)
        e->flags |= CEL_F_MEMBER;
    e->u.call.args = palloc(P, (n ? n : 1) * sizeof(*args));
    if (n)
        memcpy(e->u.call.args, args, n * sizeof(*args));
    e->u.call.nargs = n;
    return e;
}

static struct cel_expr *call1(struct parser *P, uint32_t off, const char *fn, struct cel_expr *a)
{
    return new_call(P, off, fn, NULL, &a, 1);
}
static struct cel_expr *call2(struct parser *P, uint32_t off, const char *fn, struct cel_expr *a,
                              struct cel_expr *b)
{
    struct cel_expr *v[2] = {a, b};
    return new_call(P, off, fn, NULL, v, 2);
}
static struct cel_expr *call3(struct parser *P, uint32_t off, const char *fn, struct cel_expr *a,
                              struct cel_expr *b, struct cel_expr *c)
{
    struct cel_expr *v[3] = {a, b, c};
    return new_call(P, off, fn, NULL, v, 3);
}

static struct cel_expr *new_list(struct parser *P, uint32_t off, struct cel_expr **elems, uint8_t *opt,
                                 uint32_t n)
{
    struct cel_expr *e = node(P, CEL_E_LIST, off);
    e->u.list.elems = palloc(P, (n ? n : 1) * sizeof(*elems));
    if (n)
        memcpy(e->u.list.elems, elems, n * sizeof(*elems));
    e->u.list.n = n;
    e->u.list.opt = opt;
    return e;
}

static struct cel_expr *new_comp(struct parser *P, uint32_t off, struct cel_expr *range, const char *iter,
                                 const char *accu, struct cel_expr *init, struct cel_expr *cond,
                                 struct cel_expr *step, struct cel_expr *result)
{
    struct cel_expr *e = node(P, CEL_E_COMP, off);
    e->u.comp.range = range;
    e->u.comp.iter = iter;
    e->u.comp.accu = accu;
    e->u.comp.init = init;
    e->u.comp.cond = cond;
    e->u.comp.step = step;
    e->u.comp.result = result;
    return e;
}

/* A deep copy with fresh ids, for macros that use an argument twice (exprHelper.Copy). */
static struct cel_expr *copy_expr(struct parser *P, const struct cel_expr *s)
{
    if (!s)
        return NULL;
    struct cel_expr *e = node(P, s->kind, s->off);
    uint32_t id = e->id;
    *e = *s;
    e->id = id;
    switch (s->kind) {
    case CEL_E_SELECT:
        e->u.sel.operand = copy_expr(P, s->u.sel.operand);
        break;
    case CEL_E_CALL:
        e->u.call.target = copy_expr(P, s->u.call.target);
        e->u.call.args = palloc(P, (s->u.call.nargs ? s->u.call.nargs : 1) * sizeof(*e->u.call.args));
        for (uint32_t i = 0; i < s->u.call.nargs; i++)
            e->u.call.args[i] = copy_expr(P, s->u.call.args[i]);
        break;
    case CEL_E_LIST:
        e->u.list.elems = palloc(P, (s->u.list.n ? s->u.list.n : 1) * sizeof(*e->u.list.elems));
        for (uint32_t i = 0; i < s->u.list.n; i++)
            e->u.list.elems[i] = copy_expr(P, s->u.list.elems[i]);
        break;
    case CEL_E_MAP:
    case CEL_E_STRUCT:
        e->u.map.e = palloc(P, (s->u.map.n ? s->u.map.n : 1) * sizeof(*e->u.map.e));
        for (uint32_t i = 0; i < s->u.map.n; i++) {
            e->u.map.e[i] = s->u.map.e[i];
            e->u.map.e[i].id = P->next_id++;
            e->u.map.e[i].key = copy_expr(P, s->u.map.e[i].key);
            e->u.map.e[i].value = copy_expr(P, s->u.map.e[i].value);
        }
        break;
    case CEL_E_COMP:
        e->u.comp.range = copy_expr(P, s->u.comp.range);
        e->u.comp.init = copy_expr(P, s->u.comp.init);
        e->u.comp.cond = copy_expr(P, s->u.comp.cond);
        e->u.comp.step = copy_expr(P, s->u.comp.step);
        e->u.comp.result = copy_expr(P, s->u.comp.result);
        break;
    default:
        break;
    }
    return e;
}

/* ---- macros (parser/macro.go) ---------------------------------------------------------------------- */

#define ACCU "@result"

_Noreturn static void macro_error(struct parser *P, const struct cel_expr *at, const char *msg)
{
    ks__cel_issue(P->is, P->src, at->off, "%s", msg);
    fail(P, -EINVAL);
}

static const char *iter_name(struct parser *P, struct cel_expr *arg, const char *not_ident)
{
    if (arg->kind != CEL_E_IDENT)
        macro_error(P, arg, not_ident);
    const char *v = arg->u.ident.name;
    if (!strcmp(v, ACCU) || !strcmp(v, "__result__"))
        macro_error(P, arg, "iteration variable overwrites accumulator variable");
    return v;
}

static struct cel_expr *accu_ident(struct parser *P, uint32_t off)
{
    return new_ident(P, off, ACCU);
}

static struct cel_expr *bool_lit(struct parser *P, uint32_t off, bool b)
{
    return new_lit(P, off, ks__cel_bool(b));
}

enum quant { Q_ALL, Q_EXISTS, Q_EXISTS_ONE };

static struct cel_expr *make_quantifier(struct parser *P, enum quant q, uint32_t off, struct cel_expr *target,
                                        struct cel_expr **args)
{
    const char *v = iter_name(P, args[0], "argument must be a simple name");
    struct cel_expr *init, *cond, *step, *result;
    switch (q) {
    case Q_ALL:
        init = bool_lit(P, off, true);
        cond = call1(P, off, "@not_strictly_false", accu_ident(P, off));
        step = call2(P, off, "_&&_", accu_ident(P, off), args[1]);
        result = accu_ident(P, off);
        break;
    case Q_EXISTS:
        init = bool_lit(P, off, false);
        cond = call1(P, off, "@not_strictly_false", call1(P, off, "!_", accu_ident(P, off)));
        step = call2(P, off, "_||_", accu_ident(P, off), args[1]);
        result = accu_ident(P, off);
        break;
    default:
        init = new_lit(P, off, ks__cel_int(0));
        cond = bool_lit(P, off, true);
        step = call3(P, off, "_?_:_", args[1],
                     call2(P, off, "_+_", accu_ident(P, off), new_lit(P, off, ks__cel_int(1))),
                     accu_ident(P, off));
        result = call2(P, off, "_==_", accu_ident(P, off), new_lit(P, off, ks__cel_int(1)));
        break;
    }
    return new_comp(P, off, target, v, ACCU, init, cond, step, result);
}

static struct cel_expr *make_map(struct parser *P, uint32_t off, struct cel_expr *target,
                                 struct cel_expr **args, uint32_t n)
{
    const char *v = iter_name(P, args[0], "argument is not an identifier");
    struct cel_expr *filter = n == 3 ? args[1] : NULL;
    struct cel_expr *fn = n == 3 ? args[2] : args[1];
    struct cel_expr *init = new_list(P, off, NULL, NULL, 0);
    struct cel_expr *cond = bool_lit(P, off, true);
    struct cel_expr *step = call2(P, off, "_+_", accu_ident(P, off), new_list(P, off, &fn, NULL, 1));
    if (filter)
        step = call3(P, off, "_?_:_", filter, step, accu_ident(P, off));
    return new_comp(P, off, target, v, ACCU, init, cond, step, accu_ident(P, off));
}

static struct cel_expr *make_filter(struct parser *P, uint32_t off, struct cel_expr *target,
                                    struct cel_expr **args)
{
    const char *v = iter_name(P, args[0], "argument is not an identifier");
    struct cel_expr *init = new_list(P, off, NULL, NULL, 0);
    struct cel_expr *cond = bool_lit(P, off, true);
    struct cel_expr *step = call2(P, off, "_+_", accu_ident(P, off), new_list(P, off, &args[0], NULL, 1));
    step = call3(P, off, "_?_:_", args[1], step, accu_ident(P, off));
    return new_comp(P, off, target, v, ACCU, init, cond, step, accu_ident(P, off));
}

/* optMap / optFlatMap (cel/library.go) and cel.bind (ext/bindings.go): a comprehension over []. */
static struct cel_expr *make_let(struct parser *P, uint32_t off, const char *var, struct cel_expr *init,
                                 struct cel_expr *result)
{
    return new_comp(P, off, new_list(P, off, NULL, NULL, 0), "#unused", var, init, bool_lit(P, off, false),
                    new_ident(P, off, var), result);
}

static struct cel_expr *make_opt_map(struct parser *P, uint32_t off, struct cel_expr *target,
                                     struct cel_expr **args, bool flat)
{
    if (args[0]->kind != CEL_E_IDENT)
        macro_error(P, args[0],
                    flat ? "optFlatMap() variable name must be a simple identifier"
                         : "optMap() variable name must be a simple identifier");
    struct cel_expr *has = new_call(P, off, "hasValue", target, NULL, 0);
    struct cel_expr *val = new_call(P, off, "value", copy_expr(P, target), NULL, 0);
    struct cel_expr *body = make_let(P, off, args[0]->u.ident.name, val, args[1]);
    if (!flat)
        body = call1(P, off, "optional.of", body);
    struct cel_expr *none = new_call(P, off, "optional.none", NULL, NULL, 0);
    return call3(P, off, "_?_:_", has, body, none);
}

/* The two-variable comprehensions (cel-go ext/comprehensions.go, as Kubernetes enables them). */
static struct cel_expr *make_comp2(struct parser *P, uint32_t off, const char *fn, struct cel_expr *target,
                                   struct cel_expr **args, uint32_t n)
{
    const char *v1 = iter_name(P, args[0], "argument must be a simple name");
    if (args[1]->kind != CEL_E_IDENT)
        macro_error(P, args[1], "argument must be a simple name");
    const char *v2 = args[1]->u.ident.name;
    if (!strcmp(v1, v2)) {
        char msg[300];
        snprintf(msg, sizeof(msg), "duplicate variable name: %s", v1);
        macro_error(P, args[1], msg);
    }
    iter_name(P, args[1], "argument must be a simple name");
    struct cel_expr *init, *cond, *step, *result;
    if (!strcmp(fn, "all") || !strcmp(fn, "exists") || !strcmp(fn, "existsOne") ||
        !strcmp(fn, "exists_one")) {
        struct cel_expr *shifted[2] = {args[0], args[2]};
        struct cel_expr *e = make_quantifier(P,
                                             !strcmp(fn, "all")      ? Q_ALL
                                             : !strcmp(fn, "exists") ? Q_EXISTS
                                                                     : Q_EXISTS_ONE,
                                             off, target, shifted);
        e->u.comp.iter2 = v2;
        return e;
    }
    struct cel_expr *filter = n == 4 ? args[2] : NULL;
    struct cel_expr *fnx = n == 4 ? args[3] : args[2];
    if (!strcmp(fn, "transformList")) {
        init = new_list(P, off, NULL, NULL, 0);
        step = call2(P, off, "_+_", accu_ident(P, off), new_list(P, off, &fnx, NULL, 1));
    } else {
        struct cel_expr *m = node(P, CEL_E_MAP, off);
        init = m;
        if (!strcmp(fn, "transformMap"))
            step = call3(P, off, "cel.@mapInsert", accu_ident(P, off), new_ident(P, off, v1), fnx);
        else
            step = call2(P, off, "cel.@mapInsert", accu_ident(P, off), fnx);
    }
    if (filter)
        step = call3(P, off, "_?_:_", filter, step, accu_ident(P, off));
    cond = bool_lit(P, off, true);
    result = accu_ident(P, off);
    struct cel_expr *e = new_comp(P, off, target, v1, ACCU, init, cond, step, result);
    e->u.comp.iter2 = v2;
    return e;
}

/* Expand a macro, or NULL when @fn with these arguments is not one. */
static struct cel_expr *expand_macro(struct parser *P, uint32_t off, const char *fn, struct cel_expr *target,
                                     struct cel_expr **args, uint32_t n)
{
    if (!target) {
        if (n == 1 && !strcmp(fn, "has")) {
            if (args[0]->kind != CEL_E_SELECT)
                macro_error(P, args[0], "invalid argument to has() macro");
            struct cel_expr *e = node(P, CEL_E_SELECT, off);
            e->u.sel = args[0]->u.sel;
            e->flags |= CEL_F_TEST_ONLY;
            return e;
        }
        return NULL;
    }
    if ((n == 3 && (!strcmp(fn, "all") || !strcmp(fn, "exists") || !strcmp(fn, "existsOne") ||
                    !strcmp(fn, "exists_one"))) ||
        ((n == 3 || n == 4) &&
         (!strcmp(fn, "transformList") || !strcmp(fn, "transformMap") || !strcmp(fn, "transformMapEntry"))))
        return make_comp2(P, off, fn, target, args, n);
    if (n == 2 && !strcmp(fn, "all"))
        return make_quantifier(P, Q_ALL, off, target, args);
    if (n == 2 && !strcmp(fn, "exists"))
        return make_quantifier(P, Q_EXISTS, off, target, args);
    if (n == 2 && (!strcmp(fn, "exists_one") || !strcmp(fn, "existsOne")))
        return make_quantifier(P, Q_EXISTS_ONE, off, target, args);
    if ((n == 2 || n == 3) && !strcmp(fn, "map"))
        return make_map(P, off, target, args, n);
    if (n == 2 && !strcmp(fn, "filter"))
        return make_filter(P, off, target, args);
    if (n == 2 && !strcmp(fn, "optMap"))
        return make_opt_map(P, off, target, args, false);
    if (n == 2 && !strcmp(fn, "optFlatMap"))
        return make_opt_map(P, off, target, args, true);
    if (n == 3 && !strcmp(fn, "bind") && P->opts->bindings && target->kind == CEL_E_IDENT &&
        !strcmp(target->u.ident.name, "cel")) {
        if (args[0]->kind != CEL_E_IDENT)
            macro_error(P, args[0], "cel.bind() variable names must be simple identifiers");
        return make_let(P, off, args[0]->u.ident.name, args[1], args[2]);
    }
    return NULL;
}

static struct cel_expr *call_or_macro(struct parser *P, uint32_t off, const char *fn, struct cel_expr *target,
                                      struct cel_expr **args, uint32_t n)
{
    struct cel_expr *e = expand_macro(P, off, fn, target, args, n);
    if (e)
        return e;
    return new_call(P, off, fn, target, args, n);
}

/* ---- literals (parser/unescape.go) ------------------------------------------------------------------- */

_Noreturn static void lit_error(struct parser *P, const struct cel_token *t, const char *msg)
{
    ks__cel_issue(P->is, P->src, t->cp, "%s", msg);
    fail(P, -EINVAL);
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return c - 'A' + 10;
}

/* Unescape the text of a string or bytes token (without the b prefix). */
static struct ks_cel_value unquote(struct parser *P, const struct cel_token *t, const char *s, size_t n,
                                   bool bytes)
{
    /* newlines are normalised first: \r\n and \r become \n */
    char *norm = palloc(P, n + 1);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\r') {
            norm[m++] = '\n';
            if (i + 1 < n && s[i + 1] == '\n')
                i++;
        } else {
            norm[m++] = s[i];
        }
    }
    s = norm;
    n = m;
    bool raw = false;
    if (s[0] == 'r' || s[0] == 'R') {
        raw = true;
        s++;
        n--;
    }
    if (n >= 6 && s[0] == s[1] && s[1] == s[2]) {
        s += 3;
        n -= 6;
    } else {
        s += 1;
        n -= 2;
    }
    int kind = bytes ? KS_CEL_BYTES : KS_CEL_STRING;
    if (raw || !memchr(s, '\\', n))
        return ks__cel_str(kind, s, n);
    char *out = palloc(P, n * 4 + 1);
    size_t o = 0;
    size_t i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if (c != '\\') {
            if (c >= 0x80) {
                size_t len;
                int32_t cp = ks__cel_utf8_decode(s + i, n - i, &len);
                o += ks__cel_utf8_encode(cp < 0 ? 0xfffd : (uint32_t)cp, out + o);
                i += len;
            } else {
                out[o++] = (char)c;
                i++;
            }
            continue;
        }
        if (i + 1 >= n)
            lit_error(P, t, "unable to unescape string, found '\\' as last character");
        char e = s[i + 1];
        i += 2;
        uint32_t v = 0;
        bool encode = false;
        switch (e) {
        case 'a':
            v = '\a';
            break;
        case 'b':
            v = '\b';
            break;
        case 'f':
            v = '\f';
            break;
        case 'n':
            v = '\n';
            break;
        case 'r':
            v = '\r';
            break;
        case 't':
            v = '\t';
            break;
        case 'v':
            v = '\v';
            break;
        case '\\':
            v = '\\';
            break;
        case '\'':
            v = '\'';
            break;
        case '"':
            v = '"';
            break;
        case '`':
            v = '`';
            break;
        case '?':
            v = '?';
            break;
        case 'x':
        case 'X':
        case 'u':
        case 'U': {
            size_t k = (e == 'x' || e == 'X') ? 2 : e == 'u' ? 4 : 8;
            encode = !((e == 'x' || e == 'X') && bytes);
            if ((e == 'u' || e == 'U') && bytes)
                lit_error(P, t, "unable to unescape string");
            if (i + k > n)
                lit_error(P, t, "unable to unescape string");
            for (size_t j = 0; j < k; j++) {
                int h = (unsigned char)s[i + j];
                if (!((h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F')))
                    lit_error(P, t, "unable to unescape string");
                v = v << 4 | (uint32_t)hexval(h);
            }
            i += k;
            if (!bytes && (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)))
                lit_error(P, t, "invalid unicode code point");
            break;
        }
        case '0':
        case '1':
        case '2':
        case '3':
            if (i + 2 > n)
                lit_error(P, t, "unable to unescape octal sequence in string");
            v = (uint32_t)(e - '0');
            for (int j = 0; j < 2; j++) {
                char d = s[i + j];
                if (d < '0' || d > '7')
                    lit_error(P, t, "unable to unescape octal sequence in string");
                v = v * 8 + (uint32_t)(d - '0');
            }
            i += 2;
            encode = !bytes;
            break;
        default:
            lit_error(P, t, "unable to unescape string");
        }
        if (v < 0x80 || !encode)
            out[o++] = (char)v;
        else
            o += ks__cel_utf8_encode(v, out + o);
    }
    return ks__cel_str(kind, out, o);
}

static struct cel_expr *parse_number(struct parser *P, const struct cel_token *sign,
                                     const struct cel_token *t)
{
    char buf[512];
    size_t len = t->end - t->start;
    const char *s = P->src->text + t->start;
    uint32_t off = sign ? sign->cp : t->cp;
    if (len + 2 > sizeof(buf)) {
        lit_error(P, sign ? sign : t,
                  t->kind == TK_FLOAT  ? "invalid double literal"
                  : t->kind == TK_UINT ? "invalid uint literal"
                                       : "invalid int literal");
    }
    if (t->kind == TK_FLOAT) {
        snprintf(buf, sizeof(buf), "%s%.*s", sign ? "-" : "", (int)len, s);
        char *end;
        errno = 0;
        double d = strtod(buf, &end);
        if (errno == ERANGE && isinf(d))
            lit_error(P, sign ? sign : t, "invalid double literal");
        return new_lit(P, off, ks__cel_double(d));
    }
    bool hex = len > 2 && s[0] == '0' && s[1] == 'x';
    size_t digits = len - (t->kind == TK_UINT ? 1 : 0) - (hex ? 2 : 0);
    const char *d = s + (hex ? 2 : 0);
    unsigned __int128 v = 0;
    bool over = false;
    for (size_t i = 0; i < digits; i++) {
        v = v * (hex ? 16 : 10) + (unsigned)hexval((unsigned char)d[i]);
        if (v > (unsigned __int128)UINT64_MAX)
            over = true;
    }
    if (t->kind == TK_UINT) {
        if (over)
            lit_error(P, t, "invalid uint literal");
        return new_lit(P, off, ks__cel_uint((uint64_t)v));
    }
    if (over || (!sign && v > (unsigned __int128)INT64_MAX) || (sign && v > (unsigned __int128)INT64_MAX + 1))
        lit_error(P, sign ? sign : t, "invalid int literal");
    int64_t i = sign ? (int64_t)(0 - (uint64_t)v) : (int64_t)v;
    return new_lit(P, off, ks__cel_int(i));
}

/* ---- grammar
 * ------------------------------------------------------------------------------------------------- */

static struct cel_expr *parse_expr(struct parser *P);

static bool reserved(const char *s, size_t n)
{
    static const char *const words[] = {
        "as",  "break", "const",   "continue",  "else", "false",  "for",  "function", "if",   "import", "in",
        "let", "loop",  "package", "namespace", "null", "return", "true", "var",      "void", "while"};
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (strlen(words[i]) == n && !memcmp(words[i], s, n))
            return true;
    return false;
}

static uint32_t parse_args(struct parser *P, struct cel_expr ***out)
{
    /* '(' consumed; exprList? ')' */
    struct cel_expr *buf[16];
    struct cel_expr **v = buf;
    uint32_t n = 0, cap = 16;
    if (!is(P, TK_RPAREN)) {
        for (;;) {
            if (n == cap) {
                struct cel_expr **nv = palloc(P, cap * 2 * sizeof(*nv));
                memcpy(nv, v, n * sizeof(*nv));
                v = nv;
                cap *= 2;
            }
            v[n++] = parse_expr(P);
            if (is(P, TK_COMMA)) {
                take(P);
                continue;
            }
            break;
        }
    }
    if (!is(P, TK_RPAREN)) {
        char b[256];
        tok_text(P, cur(P), b, sizeof(b));
        syntax_error_at(P, cur(P), "mismatched input '%s' expecting %s", b, n ? "{')', ','}" : "')'");
    }
    take(P);
    struct cel_expr **res = palloc(P, (n ? n : 1) * sizeof(*res));
    memcpy(res, v, n * sizeof(*res));
    *out = res;
    return n;
}

/* An identifier after '.', or a backquoted one (unsupported: Kubernetes does not enable it). */
static const char *field_name(struct parser *P, const struct cel_token *dot, uint32_t *len)
{
    const struct cel_token *t = cur(P);
    if (t->kind == TK_IDENT) {
        take(P);
        *len = t->end - t->start;
        return pstrn(P, P->src->text + t->start, t->end - t->start);
    }
    if (t->kind == TK_ESC_IDENT) {
        ks__cel_issue(P->is, P->src, t->cp, "unsupported syntax: '`'");
        fail(P, -EINVAL);
    }
    char b[256];
    tok_text(P, t, b, sizeof(b));
    if (t->kind == TK_TRUE || t->kind == TK_FALSE || t->kind == TK_NULL)
        syntax_error_at(P, t, "mismatched input '%s' expecting %s", b, "IDENTIFIER");
    if (t->kind == TK_EOF)
        syntax_error_at(P, t, "mismatched input '%s' expecting %s", b, "{IDENTIFIER, ESC_IDENTIFIER}");
    char both[300];
    snprintf(both, sizeof(both), ".%s", b);
    (void)dot;
    syntax_error_at(P, t, "no viable alternative at input '%s'%s", both, "");
}

static struct cel_expr *parse_list(struct parser *P, const struct cel_token *open)
{
    enter(P, R_LIST);
    struct cel_expr **v = NULL;
    uint8_t *opt = NULL;
    uint32_t n = 0, cap = 0;
    bool any_opt = false;
    while (!is(P, TK_RBRACKET)) {
        bool o = false;
        if (is(P, TK_QUESTION)) {
            take(P);
            o = true;
            any_opt = true;
        }
        if (!starts_expr(cur(P)->kind))
            expected_expr(P);
        if (n == cap) {
            cap = cap ? cap * 2 : 8;
            struct cel_expr **nv = palloc(P, cap * sizeof(*nv));
            uint8_t *no = palloc(P, cap);
            if (n) {
                memcpy(nv, v, n * sizeof(*nv));
                memcpy(no, opt, n);
            }
            v = nv;
            opt = no;
        }
        opt[n] = o;
        v[n++] = parse_expr(P);
        if (is(P, TK_COMMA)) {
            take(P);
            continue;
        }
        if (!is(P, TK_RBRACKET)) {
            char b[256];
            tok_text(P, cur(P), b, sizeof(b));
            syntax_error_at(P, cur(P), "mismatched input '%s' expecting %s", b, "{']', ','}");
        }
    }
    take(P);
    leave(P, R_LIST, 1);
    return new_list(P, open->cp, v, any_opt ? opt : NULL, n);
}

/* Room for entry @n of @v (grown by doubling in the parse's arena). */
static struct cel_entry *grow_entries(struct parser *P, struct cel_entry *v, uint32_t n, uint32_t *cap)
{
    if (n < *cap)
        return v;
    *cap = *cap ? *cap * 2 : 8;
    struct cel_entry *nv = palloc(P, *cap * sizeof(*nv));
    if (n)
        memcpy(nv, v, n * sizeof(*nv));
    return nv;
}

/* After an entry of a map or message literal: true at ',' (taken), false at '}', else a syntax error. */
static bool next_entry(struct parser *P)
{
    if (is(P, TK_COMMA)) {
        take(P);
        return true;
    }
    if (!is(P, TK_RBRACE)) {
        char b[256];
        tok_text(P, cur(P), b, sizeof(b));
        syntax_error_at(P, cur(P), "mismatched input '%s' expecting %s", b, "{'}', ','}");
    }
    return false;
}

static struct cel_expr *parse_map(struct parser *P, const struct cel_token *open)
{
    enter(P, R_LIST);
    struct cel_entry *v = NULL;
    uint32_t n = 0, cap = 0;
    while (!is(P, TK_RBRACE)) {
        bool o = false;
        if (is(P, TK_QUESTION)) {
            take(P);
            o = true;
        }
        if (!starts_expr(cur(P)->kind)) {
            char b[256];
            tok_text(P, cur(P), b, sizeof(b));
            syntax_error_at(
                P, cur(P),
                "%s input '%s' expecting {'[', '{', '}', '(', '.', ',', '-', '!', '?', "
                "'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}",
                cur(P)->kind != TK_EOF && starts_expr(peek(P, 1)->kind) ? "extraneous" : "mismatched", b);
        }
        struct cel_expr *k = parse_expr(P);
        const struct cel_token *col = cur(P);
        expect(P, TK_COLON, "':'");
        struct cel_expr *val = parse_expr(P);
        v = grow_entries(P, v, n, &cap);
        v[n].id = P->next_id++;
        v[n].off = col->cp;
        v[n].optional = o;
        v[n].key = k;
        v[n].value = val;
        n++;
        if (!next_entry(P))
            break;
    }
    take(P);
    leave(P, R_LIST, 1);
    struct cel_expr *e = node(P, CEL_E_MAP, open->cp);
    e->u.map.e = v;
    e->u.map.n = n;
    return e;
}

static struct cel_expr *parse_message(struct parser *P, const char *name, const struct cel_token *open)
{
    enter(P, R_LIST);
    struct cel_entry *v = NULL;
    uint32_t n = 0, cap = 0;
    while (!is(P, TK_RBRACE)) {
        bool o = false;
        if (is(P, TK_QUESTION)) {
            take(P);
            o = true;
        }
        const struct cel_token *f = cur(P);
        if (f->kind == TK_ESC_IDENT) {
            ks__cel_issue(P->is, P->src, f->cp, "unsupported syntax: '`'");
            fail(P, -EINVAL);
        }
        if (f->kind != TK_IDENT) {
            char b[256];
            tok_text(P, f, b, sizeof(b));
            syntax_error_at(P, f, "mismatched input '%s' expecting %s", b,
                            "{'}', ',', '?', IDENTIFIER, ESC_IDENTIFIER}");
        }
        take(P);
        const struct cel_token *col = cur(P);
        expect(P, TK_COLON, "':'");
        struct cel_expr *val = parse_expr(P);
        v = grow_entries(P, v, n, &cap);
        v[n].id = P->next_id++;
        v[n].off = col->cp;
        v[n].optional = o;
        v[n].field = pstrn(P, P->src->text + f->start, f->end - f->start);
        v[n].value = val;
        n++;
        if (!next_entry(P))
            break;
    }
    take(P);
    leave(P, R_LIST, 1);
    struct cel_expr *e = node(P, CEL_E_STRUCT, open->cp);
    e->u.map.e = v;
    e->u.map.n = n;
    e->u.map.type_name = name;
    return e;
}

/*
 * A message literal, its name @id and the @k tokens after it ('.' IDENT pairs) not yet taken:
 * the qualified name (with the leading dot of @lead), then the fields from its '{'.
 */
static struct cel_expr *parse_message_literal(struct parser *P, bool lead, const struct cel_token *id,
                                              uint32_t k)
{
    struct cel_sb b = {0};
    if (lead)
        ks__cel_sb_puts(&b, ".");
    ks__cel_sb_putn(&b, P->src->text + id->start, id->end - id->start);
    for (uint32_t j = 0; j < k; j += 2) {
        const struct cel_token *x = peek(P, j + 1);
        ks__cel_sb_puts(&b, ".");
        ks__cel_sb_putn(&b, P->src->text + x->start, x->end - x->start);
    }
    if (b.oom) {
        ks__cel_sb_free(&b);
        fail(P, -ENOMEM);
    }
    const char *name = pstrn(P, b.p, b.len);
    ks__cel_sb_free(&b);
    for (uint32_t j = 0; j < k; j++)
        take(P);
    const struct cel_token *open = take(P);
    return parse_message(P, name, open);
}

/* A primary that starts with an identifier or a leading dot (@t): a message literal, a global call or an
 * identifier. */
static struct cel_expr *parse_ident_primary(struct parser *P, const struct cel_token *t)
{
    bool lead = t->kind == TK_DOT;
    if (lead) {
        take(P);
        if (!is(P, TK_IDENT)) {
            char b[256];
            tok_text(P, cur(P), b, sizeof(b));
            syntax_error_at(P, cur(P), "mismatched input '%s' expecting %s", b, "IDENTIFIER");
        }
    }
    const struct cel_token *id = take(P);
    const char *s = P->src->text + id->start;
    size_t n = id->end - id->start;
    /* a message literal: IDENT ('.' IDENT)* '{' */
    uint32_t k = 0;
    while (peek(P, k)->kind == TK_DOT && peek(P, k + 1)->kind == TK_IDENT)
        k += 2;
    if (peek(P, k)->kind == TK_LBRACE)
        return parse_message_literal(P, lead, id, k);
    if (reserved(s, n)) {
        char b[64];
        snprintf(b, sizeof(b), "%.*s", (int)(n < 40 ? n : 40), s);
        ks__cel_issue(P->is, P->src, lead ? t->cp : id->cp, "reserved identifier: %s", b);
        fail(P, -EINVAL);
    }
    const char *name;
    if (lead) {
        char *q = palloc(P, n + 2);
        q[0] = '.';
        memcpy(q + 1, s, n);
        q[n + 1] = 0;
        name = q;
    } else {
        name = pstrn(P, s, n);
    }
    if (!is(P, TK_LPAREN))
        return new_ident(P, id->cp, name);
    const struct cel_token *open = take(P);
    struct cel_expr **args;
    uint32_t na = parse_args(P, &args);
    return call_or_macro(P, open->cp, name, NULL, args, na);
}

static struct cel_expr *parse_primary(struct parser *P)
{
    enter(P, R_PRIMARY);
    struct cel_expr *e = NULL;
    const struct cel_token *t = cur(P);
    switch (t->kind) {
    case TK_DOT:
    case TK_IDENT:
        e = parse_ident_primary(P, t);
        break;
    case TK_LPAREN:
        take(P);
        e = parse_expr(P);
        if (!is(P, TK_RPAREN)) {
            char b[256];
            tok_text(P, cur(P), b, sizeof(b));
            syntax_error_at(P, cur(P), "mismatched input '%s' expecting %s", b, "')'");
        }
        take(P);
        break;
    case TK_LBRACKET:
        take(P);
        e = parse_list(P, t);
        break;
    case TK_LBRACE:
        take(P);
        e = parse_map(P, t);
        break;
    case TK_MINUS:
        /* only reached for a sign before a number (see parse_unary) */
        take(P);
        e = parse_number(P, t, take(P));
        break;
    case TK_INT:
    case TK_UINT:
    case TK_FLOAT:
        e = parse_number(P, NULL, take(P));
        break;
    case TK_STRING:
        take(P);
        e = new_lit(P, t->cp, unquote(P, t, P->src->text + t->start, t->end - t->start, false));
        break;
    case TK_BYTES:
        take(P);
        e = new_lit(P, t->cp, unquote(P, t, P->src->text + t->start + 1, t->end - t->start - 1, true));
        break;
    case TK_TRUE:
    case TK_FALSE:
        take(P);
        e = new_lit(P, t->cp, ks__cel_bool(t->kind == TK_TRUE));
        break;
    case TK_NULL:
        take(P);
        e = new_lit(P, t->cp, ks__cel_null());
        break;
    default:
        expected_expr(P);
    }
    leave(P, R_PRIMARY, 1);
    return e;
}

static struct cel_expr *parse_member(struct parser *P)
{
    enter(P, R_MEMBER);
    int pushes = 0;
    struct cel_expr *e = parse_primary(P);
    for (;;) {
        const struct cel_token *t = cur(P);
        if (t->kind == TK_DOT) {
            enter(P, R_MEMBER);
            pushes++;
            take(P);
            bool opt = false;
            if (is(P, TK_QUESTION)) {
                take(P);
                opt = true;
            }
            const struct cel_token *idt = cur(P);
            uint32_t flen;
            const char *f = field_name(P, t, &flen);
            if (!opt && is(P, TK_LPAREN)) {
                const struct cel_token *open = take(P);
                struct cel_expr **args;
                uint32_t na = parse_args(P, &args);
                e = call_or_macro(P, open->cp, f, e, args, na);
                continue;
            }
            if (opt) {
                struct cel_expr *fl = new_lit(P, idt->cp, ks__cel_str(KS_CEL_STRING, f, flen));
                e = call2(P, t->cp, "_?._", e, fl);
                continue;
            }
            struct cel_expr *s = node(P, CEL_E_SELECT, t->cp);
            s->u.sel.operand = e;
            s->u.sel.field = f;
            s->u.sel.flen = flen;
            e = s;
            continue;
        }
        if (t->kind == TK_LBRACKET) {
            enter(P, R_MEMBER);
            pushes++;
            take(P);
            bool opt = false;
            if (is(P, TK_QUESTION)) {
                take(P);
                opt = true;
            }
            struct cel_expr *idx = parse_expr(P);
            if (!is(P, TK_RBRACKET)) {
                char b[256];
                tok_text(P, cur(P), b, sizeof(b));
                syntax_error_at(P, cur(P), "mismatched input '%s' expecting %s", b, "']'");
            }
            take(P);
            e = call2(P, t->cp, opt ? "_[?_]" : "_[_]", e, idx);
            continue;
        }
        break;
    }
    leave(P, R_MEMBER, 1 + pushes);
    return e;
}

static struct cel_expr *parse_unary(struct parser *P)
{
    enter(P, R_UNARY);
    struct cel_expr *e;
    const struct cel_token *t = cur(P);
    if (t->kind == TK_NOT || t->kind == TK_MINUS) {
        uint32_t k = 0;
        while (peek(P, k)->kind == t->kind)
            k++;
        int nk = peek(P, k)->kind;
        if (t->kind == TK_MINUS && k == 1 && (nk == TK_INT || nk == TK_FLOAT)) {
            /* "-1": a negative literal inside member (it may be selected from) */
            e = parse_member(P);
        } else {
            for (uint32_t j = 0; j < k; j++)
                take(P);
            if (!starts_expr(cur(P)->kind) || is(P, TK_MINUS) || is(P, TK_NOT)) {
                if (t->kind == TK_MINUS && k > 0 && (is(P, TK_MINUS) || is(P, TK_NOT))) {
                    char b[256];
                    tok_text(P, cur(P), b, sizeof(b));
                    syntax_error_at(P, cur(P), "no viable alternative at input '%s'%s", b, "");
                }
                expected_expr(P);
            }
            struct cel_expr *m = parse_member(P);
            if (k % 2 == 0)
                e = m;
            else
                e = call1(P, t->cp, t->kind == TK_NOT ? "!_" : "-_", m);
        }
    } else {
        e = parse_member(P);
    }
    leave(P, R_UNARY, 1);
    return e;
}

static const char *calc_op(int k, int *prec)
{
    switch (k) {
    case TK_STAR:
        *prec = 2;
        return "_*_";
    case TK_SLASH:
        *prec = 2;
        return "_/_";
    case TK_PERCENT:
        *prec = 2;
        return "_%_";
    case TK_PLUS:
        *prec = 1;
        return "_+_";
    case TK_MINUS:
        *prec = 1;
        return "_-_";
    default:
        return NULL;
    }
}

/* calc[p] of ANTLR's left-recursion rewrite: unary ( {p <= prec}? op calc[prec + 1] )* */
static struct cel_expr *parse_calc(struct parser *P, int p)
{
    enter(P, R_CALC);
    int pushes = 0;
    struct cel_expr *e = parse_unary(P);
    for (;;) {
        int prec;
        const char *op = calc_op(cur(P)->kind, &prec);
        if (!op || prec < p)
            break;
        enter(P, R_CALC);
        pushes++;
        const struct cel_token *t = take(P);
        if (!starts_expr(cur(P)->kind))
            expected_expr(P);
        struct cel_expr *r = parse_calc(P, prec + 1);
        e = call2(P, t->cp, op, e, r);
    }
    leave(P, R_CALC, 1 + pushes);
    return e;
}

static const char *rel_op(int k)
{
    switch (k) {
    case TK_LT:
        return "_<_";
    case TK_LE:
        return "_<=_";
    case TK_GE:
        return "_>=_";
    case TK_GT:
        return "_>_";
    case TK_EQ:
        return "_==_";
    case TK_NE:
        return "_!=_";
    case TK_IN:
        return "@in";
    default:
        return NULL;
    }
}

static struct cel_expr *parse_relation(struct parser *P, int p)
{
    enter(P, R_REL);
    int pushes = 0;
    struct cel_expr *e = parse_calc(P, 0);
    for (;;) {
        const char *op = rel_op(cur(P)->kind);
        if (!op || p > 1)
            break;
        enter(P, R_REL);
        pushes++;
        const struct cel_token *t = take(P);
        if (!starts_expr(cur(P)->kind))
            expected_expr(P);
        struct cel_expr *r = parse_relation(P, 2);
        e = call2(P, t->cp, op, e, r);
    }
    leave(P, R_REL, 1 + pushes);
    return e;
}

/* A chain of && or || as cel-go's balanced tree (helper.go logicManager). */
static struct cel_expr *balanced(struct parser *P, const char *fn, struct cel_expr **terms, uint32_t *ops,
                                 int lo, int hi)
{
    int mid = (lo + hi + 1) / 2;
    struct cel_expr *l = mid == lo ? terms[mid] : balanced(P, fn, terms, ops, lo, mid - 1);
    struct cel_expr *r = mid == hi ? terms[mid + 1] : balanced(P, fn, terms, ops, mid + 1, hi);
    return call2(P, ops[mid], fn, l, r);
}

static struct cel_expr *parse_logic(struct parser *P, bool is_or)
{
    enter(P, is_or ? R_OR : R_AND);
    struct cel_expr *first = is_or ? parse_logic(P, false) : parse_relation(P, 0);
    int tk = is_or ? TK_OR : TK_AND;
    if (!is(P, tk)) {
        leave(P, is_or ? R_OR : R_AND, 1);
        return first;
    }
    uint32_t n = 1, cap = 8;
    struct cel_expr **terms = palloc(P, cap * sizeof(*terms));
    uint32_t *ops = palloc(P, cap * sizeof(*ops));
    terms[0] = first;
    while (is(P, tk)) {
        const struct cel_token *t = take(P);
        if (!starts_expr(cur(P)->kind))
            expected_expr(P);
        if (n == cap) {
            struct cel_expr **nt = palloc(P, cap * 2 * sizeof(*nt));
            uint32_t *no = palloc(P, cap * 2 * sizeof(*no));
            memcpy(nt, terms, n * sizeof(*nt));
            memcpy(no, ops, n * sizeof(*no));
            terms = nt;
            ops = no;
            cap *= 2;
        }
        ops[n - 1] = t->cp;
        terms[n++] = is_or ? parse_logic(P, false) : parse_relation(P, 0);
    }
    leave(P, is_or ? R_OR : R_AND, 1);
    return balanced(P, is_or ? "_||_" : "_&&_", terms, ops, 0, (int)n - 2);
}

static struct cel_expr *parse_expr(struct parser *P)
{
    enter(P, R_EXPR);
    if (!starts_expr(cur(P)->kind))
        expected_expr(P);
    struct cel_expr *c = parse_logic(P, true);
    if (is(P, TK_QUESTION)) {
        const struct cel_token *q = take(P);
        if (!starts_expr(cur(P)->kind))
            expected_expr(P);
        struct cel_expr *a = parse_logic(P, true);
        expect(P, TK_COLON, "':'");
        if (!starts_expr(cur(P)->kind))
            expected_expr(P);
        struct cel_expr *b = parse_expr(P);
        c = call3(P, q->cp, "_?_:_", c, a, b);
    }
    leave(P, R_EXPR, 1);
    return c;
}

/* The visitor's depth: ternaries, relations, arithmetic, selects, member calls and indexes nest. */
static int visit_depth(const struct cel_expr *e)
{
    if (!e)
        return 0;
    int self = 0, d = 0;
    switch (e->kind) {
    case CEL_E_SELECT:
        self = 1;
        d = visit_depth(e->u.sel.operand);
        break;
    case CEL_E_CALL: {
        const char *f = e->u.call.fn;
        if (e->flags & CEL_F_MEMBER)
            self = 1;
        else if (!strcmp(f, "_?_:_") || !strcmp(f, "_[_]") || !strcmp(f, "_[?_]") || !strcmp(f, "_?._") ||
                 (f[0] == '_' && strcmp(f, "_&&_") && strcmp(f, "_||_")) || !strcmp(f, "@in"))
            self = 1;
        d = visit_depth(e->u.call.target);
        for (uint32_t i = 0; i < e->u.call.nargs; i++) {
            int x = visit_depth(e->u.call.args[i]);
            if (x > d)
                d = x;
        }
        break;
    }
    case CEL_E_LIST:
        for (uint32_t i = 0; i < e->u.list.n; i++) {
            int x = visit_depth(e->u.list.elems[i]);
            if (x > d)
                d = x;
        }
        break;
    case CEL_E_MAP:
    case CEL_E_STRUCT:
        for (uint32_t i = 0; i < e->u.map.n; i++) {
            int x = visit_depth(e->u.map.e[i].key);
            int y = visit_depth(e->u.map.e[i].value);
            if (x > d)
                d = x;
            if (y > d)
                d = y;
        }
        break;
    case CEL_E_COMP: {
        const struct cel_expr *parts[] = {e->u.comp.range, e->u.comp.init, e->u.comp.step, e->u.comp.result};
        for (int i = 0; i < 4; i++) {
            int x = visit_depth(parts[i]);
            if (x > d)
                d = x;
        }
        break;
    }
    default:
        break;
    }
    return self + d;
}

struct cel_expr *ks__cel_parse(struct cel_arena *arena, const struct cel_source *src, struct cel_issues *is,
                               const struct cel_parse_opts *o, uint32_t *next_id)
{
    struct parser P = {.a = arena, .src = src, .is = is, .opts = o, .next_id = 1};
    struct parser *PP = &P;
    size_t ncp = ks__cel_utf8_count(src->text, src->len);
    if (ncp > MAX_CODEPOINTS) {
        ks__cel_issue(is, src, UINT32_MAX, "expression code point size exceeds limit: size: %zu, limit %d",
                      ncp, MAX_CODEPOINTS);
        return NULL;
    }
    uint32_t before = is->total;
    P.t = ks__cel_lex(arena, src, is, &P.nt);
    if (!P.t) {
        is->oom = true;
        return NULL;
    }
    struct cel_expr *root = NULL;
    if (setjmp(P.jb) == 0) {
        root = parse_expr(PP);
        if (cur(PP)->kind != TK_EOF) {
            char b[256];
            tok_text(&P, cur(&P), b, sizeof(b));
            syntax_error_at(&P, cur(&P), "%s input '%s' expecting <EOF>",
                            peek(&P, 1)->kind == TK_EOF ? "extraneous" : "mismatched", b);
        }
        if (visit_depth(root) > MAX_DEPTH) {
            ks__cel_issue(is, src, UINT32_MAX, "max recursion depth exceeded");
            root = NULL;
        }
    } else {
        root = NULL;
        if (P.err == -ENOMEM)
            is->oom = true;
    }
    free(P.t);
    if (is->total != before)
        root = NULL;
    *next_id = P.next_id;
    return root;
}
