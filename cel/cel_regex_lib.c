/*
 * cel_regex_lib.c - regular expressions in CEL: the standard matches() (a match anywhere in
 * the string) and Kubernetes' regex library find() and findAll(), on the RE2 engine of
 * cel_regex.c.
 *
 * Mirrors cel-go common/types/string.go Match (regexp.MatchString: a bad pattern's error is
 * Go's "error parsing regexp: ..." text) and k8s.io/apiserver/pkg/cel/library/regex.go (find
 * is FindString, findAll is FindAllString with an optional limit, a bad pattern is "Illegal
 * regex: ..."). A literal pattern is compiled once, when the program is planned (cel-go's
 * regex optimizations); a pattern computed at evaluation is compiled at each call, which
 * allocates.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cel_internal.h"
#include "cel_regex.h"

void ks__cel_regex_scratch_destroy(struct ks_cel_scratch *s)
{
    ks_re_scratch_destroy(s->re);
    s->re = NULL;
}

void ks__cel_regex_free_all(struct ks_cel_program *p)
{
    for (uint32_t i = 0; i < p->nregexes; i++)
        ks_re_destroy(p->regexes[i]);
    free(p->regexes);
    p->regexes = NULL;
    p->nregexes = 0;
}

int ks__cel_regex_compile(struct ks_cel_program *p, const char *pat, size_t len, const void **out, char *err,
                          size_t errlen)
{
    struct ks_re *re;
    int rc = ks_re_compile(pat, len, &re, err, errlen);
    if (rc)
        return rc;
    void **v = realloc(p->regexes, (p->nregexes + 1) * sizeof(*v));
    if (!v) {
        ks_re_destroy(re);
        return -ENOMEM;
    }
    p->regexes = v;
    v[p->nregexes++] = re;
    *out = re;
    return 0;
}

static struct ks_re_scratch *scratch(struct cel_ctx *c)
{
    if (!c->s->re && ks_re_scratch_create(&c->s->re)) {
        c->fatal = -ENOMEM;
        longjmp(c->jb, 1);
    }
    return c->s->re;
}

/* The regex of a call: the planned literal, or @pat compiled now (*owned set; NULL with *err). */
static const struct ks_re *regex_of(struct cel_ctx *c, const struct cel_expr *e,
                                    const struct ks_cel_value *pat, struct ks_re **owned, const char *prefix,
                                    struct ks_cel_value *err)
{
    *owned = NULL;
    if (e->u.call.aux)
        return e->u.call.aux;
    char msg[256];
    int rc = ks_re_compile(pat->v.str.p, pat->v.str.len, owned, msg, sizeof(msg));
    if (rc == -ENOMEM) {
        c->fatal = -ENOMEM;
        longjmp(c->jb, 1);
    }
    if (rc) {
        *err = ks__cel_errf(c, "%s%s", prefix, msg);
        return NULL;
    }
    return *owned;
}

struct ks_cel_value ks__cel_matches(struct cel_ctx *c, const struct cel_expr *e, const struct ks_cel_value *a,
                                    uint32_t n)
{
    (void)n;
    if (a[0].kind != KS_CEL_STRING || a[1].kind != KS_CEL_STRING)
        return ks__cel_err_overload();
    struct ks_re *owned;
    struct ks_cel_value err;
    const struct ks_re *re = regex_of(c, e, &a[1], &owned, "", &err);
    if (!re)
        return err;
    size_t st, en;
    bool m = ks_re_find(re, a[0].v.str.p, a[0].v.str.len, 0, &st, &en, scratch(c));
    ks_re_destroy(owned);
    return ks__cel_bool(m);
}

static struct ks_cel_value find(struct cel_ctx *c, const struct cel_expr *e, const struct ks_cel_value *a,
                                uint32_t n)
{
    (void)n;
    struct ks_re *owned;
    struct ks_cel_value err;
    const struct ks_re *re = regex_of(c, e, &a[1], &owned, "Illegal regex: ", &err);
    if (!re)
        return err;
    size_t st, en;
    struct ks_cel_value r = ks__cel_str(KS_CEL_STRING, "", 0);
    if (ks_re_find(re, a[0].v.str.p, a[0].v.str.len, 0, &st, &en, scratch(c)))
        r = ks__cel_str(KS_CEL_STRING, a[0].v.str.p + st, en - st);
    ks_re_destroy(owned);
    return r;
}

/* Go's Regexp.FindAllString: successive non-overlapping matches; an empty match right after a match is
 * dropped. */
static struct ks_cel_value find_all(struct cel_ctx *c, const struct cel_expr *e, const struct ks_cel_value *a,
                                    uint32_t n)
{
    int64_t limit = n == 3 ? a[2].v.i : -1;
    struct ks_re *owned;
    struct ks_cel_value err;
    const struct ks_re *re = regex_of(c, e, &a[1], &owned, "Illegal regex: ", &err);
    if (!re)
        return err;
    const char *s = a[0].v.str.p;
    size_t len = a[0].v.str.len;
    struct ks_cel_value *items = NULL;
    uint32_t cnt = 0, cap = 0;
    size_t pos = 0;
    int64_t prev_end = -1;
    while ((limit < 0 || (int64_t)cnt < limit) && pos <= len) {
        size_t st, en;
        if (!ks_re_find(re, s, len, pos, &st, &en, scratch(c)))
            break;
        bool accept = true;
        if (en == pos) {
            if ((int64_t)st == prev_end)
                accept = false;
            size_t w = 1;
            if (pos < len && (unsigned char)s[pos] >= 0x80)
                ks__cel_utf8_decode(s + pos, len - pos, &w);
            pos += pos < len ? w : 1;
        } else {
            pos = en;
        }
        prev_end = (int64_t)en;
        if (accept) {
            if (cnt == cap) {
                uint32_t ncap = cap ? cap * 2 : 8;
                struct ks_cel_value *ni = ks__cel_salloc(c, ncap * sizeof(*ni));
                if (cnt)
                    memcpy(ni, items, cnt * sizeof(*ni));
                items = ni;
                cap = ncap;
            }
            items[cnt++] = ks__cel_str(KS_CEL_STRING, s + st, en - st);
        }
    }
    ks_re_destroy(owned);
    return ks__cel_make_list(c, items, cnt);
}

#define MEM CEL_OVL_MEMBER
const struct cel_decl ks__cel_regex_decls[] = {
    {"find", "string_find_string", MEM, CEL_COST_MATCHES, "string, string -> string", find},
    {"findAll", "string_find_all_string", MEM, CEL_COST_MATCHES, "string, string -> list(string)", find_all},
    {"findAll", "string_find_all_string_int", MEM, CEL_COST_MATCHES, "string, string, int -> list(string)",
     find_all},
    {NULL, NULL, 0, 0, NULL, NULL},
};
