/*
 * test_cel_data.c - the CEL test-data runner (see cel_case.h) and the data-driven tests: the
 * cel-spec conformance cases (data/conformance.txt) and Kubernetes' library test tables
 * (data/k8s_*.txt), each through the public ksched/internal/cel.h API.
 */
#include "cel/cel_case.h"

#include <criterion/criterion.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksched/internal/cel.h"

#ifndef KS_TEST_DATA_DIR
#define KS_TEST_DATA_DIR "test/data"
#endif

/* Decode a JSON string at *p (after the opening quote) into a malloc'd buffer. */
static char *json_string(const char *p, size_t *len)
{
    size_t cap = strlen(p) + 1, n = 0;
    char *out = malloc(cap * 4 + 1);
    if (!out)
        return NULL;
    if (*p != '"') {
        free(out);
        return NULL;
    }
    p++;
    while (*p && *p != '"') {
        if (*p != '\\') {
            out[n++] = *p++;
            continue;
        }
        p++;
        switch (*p) {
        case 'n':
            out[n++] = '\n';
            break;
        case 't':
            out[n++] = '\t';
            break;
        case 'r':
            out[n++] = '\r';
            break;
        case 'b':
            out[n++] = '\b';
            break;
        case 'f':
            out[n++] = '\f';
            break;
        case 'u': {
            unsigned cp = (unsigned)strtoul((char[]){p[1], p[2], p[3], p[4], 0}, NULL, 16);
            p += 4;
            if (cp >= 0xd800 && cp < 0xdc00 && p[1] == '\\' && p[2] == 'u') {
                unsigned lo = (unsigned)strtoul((char[]){p[3], p[4], p[5], p[6], 0}, NULL, 16);
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                p += 6;
            }
            if (cp < 0x80) {
                out[n++] = (char)cp;
            } else if (cp < 0x800) {
                out[n++] = (char)(0xc0 | (cp >> 6));
                out[n++] = (char)(0x80 | (cp & 0x3f));
            } else if (cp < 0x10000) {
                out[n++] = (char)(0xe0 | (cp >> 12));
                out[n++] = (char)(0x80 | ((cp >> 6) & 0x3f));
                out[n++] = (char)(0x80 | (cp & 0x3f));
            } else {
                out[n++] = (char)(0xf0 | (cp >> 18));
                out[n++] = (char)(0x80 | ((cp >> 12) & 0x3f));
                out[n++] = (char)(0x80 | ((cp >> 6) & 0x3f));
                out[n++] = (char)(0x80 | (cp & 0x3f));
            }
            break;
        }
        default:
            out[n++] = *p;
            break;
        }
        p++;
    }
    out[n] = 0;
    *len = n;
    return out;
}

/* A type from its text: int, uint, double, bool, string, bytes, null, dyn, duration, timestamp,
 * list(T), map(K, V), optional(T), quantity, semver. */
static const struct ks_cel_type *parse_type(struct ks_cel_env *env, const char **ps)
{
    const char *s = *ps;
    while (*s == ' ')
        s++;
    const char *st = s;
    while ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_' || *s == '.')
        s++;
    size_t n = (size_t)(s - st);
    const struct ks_cel_type *args[2] = {NULL, NULL};
    int na = 0;
    if (*s == '(') {
        s++;
        for (;;) {
            args[na++] = parse_type(env, &s);
            while (*s == ' ')
                s++;
            if (*s == ',') {
                s++;
                continue;
            }
            if (*s == ')')
                s++;
            break;
        }
    }
    *ps = s;
    static const struct {
        const char *n;
        enum ks_cel_kind k;
    } prims[] = {{"int", KS_CEL_INT},           {"uint", KS_CEL_UINT},
                 {"double", KS_CEL_DOUBLE},     {"bool", KS_CEL_BOOL},
                 {"string", KS_CEL_STRING},     {"bytes", KS_CEL_BYTES},
                 {"null", KS_CEL_NULL},         {"dyn", KS_CEL_DYN},
                 {"duration", KS_CEL_DURATION}, {"timestamp", KS_CEL_TIMESTAMP},
                 {"quantity", KS_CEL_QUANTITY}, {"semver", KS_CEL_SEMVER},
                 {"type", KS_CEL_TYPE}};
    for (size_t i = 0; i < sizeof(prims) / sizeof(prims[0]); i++)
        if (strlen(prims[i].n) == n && !strncmp(prims[i].n, st, n))
            return ks_cel_type_kind(env, prims[i].k);
    if (n == 4 && !strncmp(st, "list", 4) && na == 1)
        return ks_cel_type_list(env, args[0]);
    if (n == 3 && !strncmp(st, "map", 3) && na == 2)
        return ks_cel_type_map(env, args[0], args[1]);
    if (n == 8 && !strncmp(st, "optional", 8) && na == 1)
        return ks_cel_type_optional(env, args[0]);
    return NULL;
}

struct kase {
    char *name;
    unsigned flags;
    bool check_only, exact, unchecked;
    unsigned libs;
    char *decl_name[8], *decl_type[8];
    char *bind_name[8], *bind_expr[8];
    int ndecl, nbind;
    char *expr;
    size_t expr_len;
    char *value;
    char *error;
    bool want_error;
    long long cost, maxcost, limit;
    char *skip;
};

static void kase_free(struct kase *k)
{
    free(k->name);
    for (int i = 0; i < k->ndecl; i++) {
        free(k->decl_name[i]);
        free(k->decl_type[i]);
    }
    for (int i = 0; i < k->nbind; i++) {
        free(k->bind_name[i]);
        free(k->bind_expr[i]);
    }
    free(k->expr);
    free(k->value);
    free(k->error);
    free(k->skip);
    memset(k, 0, sizeof(*k));
}

/* Evaluate a value expression in an env without variables. */
static int eval_value(struct ks_cel_env *env, const char *text, struct ks_cel_scratch *s,
                      struct ks_cel_value *out, char *err, size_t errlen, struct ks_cel_program **keep)
{
    struct ks_cel_program *p;
    char *msg;
    *keep = NULL;
    int rc = ks_cel_compile_flags(env, text, strlen(text), KS_CEL_COMPILE_DYN_AGGREGATES, &p, &msg);
    if (rc) {
        snprintf(err, errlen, "%s", msg ? msg : "compile failed");
        free(msg);
        return rc;
    }
    rc = ks_cel_eval(p, NULL, 0, s, 0, out, NULL, err, errlen);
    /* the value lives in the scratch and the program (its constants): both stay until the case ends */
    *keep = p;
    return rc;
}

static bool run_case(struct kase *k, char *why, size_t whylen, bool *text_mismatch)
{
    bool ok = false;
    struct ks_cel_env *env = NULL, *venv = NULL;
    struct ks_cel_scratch *s = NULL, *vs = NULL, *bind_s[8] = {NULL};
    struct ks_cel_program *bind_p[8] = {NULL}, *want_p = NULL;
    struct ks_cel_program *p = NULL;
    char *msg = NULL;
    char err[1024] = "";
    *text_mismatch = false;
    cr_assert_eq(ks_cel_env_create(k->libs, &env), 0);
    cr_assert_eq(ks_cel_env_create(k->libs, &venv), 0);
    cr_assert_eq(ks_cel_scratch_create(&s), 0);
    cr_assert_eq(ks_cel_scratch_create(&vs), 0);
    for (int i = 0; i < k->ndecl; i++) {
        const char *t = k->decl_type[i];
        const struct ks_cel_type *ty = parse_type(env, &t);
        if (!ty) {
            snprintf(why, whylen, "bad type %s", k->decl_type[i]);
            goto out;
        }
        ks_cel_env_declare(env, k->decl_name[i], ty);
    }
    struct ks_cel_binding binds[8];
    for (int i = 0; i < k->nbind; i++) {
        binds[i].name = k->bind_name[i];
        /* each binding's value lives in its own scratch until the case ends */
        cr_assert_eq(ks_cel_scratch_create(&bind_s[i]), 0);
        if (eval_value(venv, k->bind_expr[i], bind_s[i], &binds[i].value, err, sizeof(err), &bind_p[i])) {
            snprintf(why, whylen, "binding %s: %s", k->bind_name[i], err);
            goto out;
        }
    }
    unsigned flags = k->flags;
    int rc = ks_cel_compile_flags(env, k->expr, k->expr_len, flags, &p, &msg);
    if (rc) {
        if (k->want_error) {
            ok = true;
            if (k->error && *k->error && (!msg || !strstr(msg, k->error))) {
                *text_mismatch = true;
                snprintf(why, whylen, "%s", msg ? msg : "");
            }
            if (k->exact && *text_mismatch) {
                ok = false;
                snprintf(why, whylen, "compile error text: got %s, want %s", msg ? msg : "", k->error);
            }
        } else {
            snprintf(why, whylen, "compile failed: %s", msg ? msg : "");
        }
        goto out;
    }
    if (k->check_only) {
        ok = !k->want_error;
        if (!ok)
            snprintf(why, whylen, "compiled, wanted an error");
        goto out;
    }
    if (k->maxcost >= 0) {
        uint64_t mc = ks_cel_program_max_cost(p);
        if (mc != (uint64_t)k->maxcost) {
            snprintf(why, whylen, "max cost %" PRIu64 ", want %lld", mc, k->maxcost);
            goto out;
        }
    }
    struct ks_cel_value result;
    uint64_t cost = 0;
    rc = ks_cel_eval(p, binds, (uint32_t)k->nbind, s, k->limit > 0 ? (uint64_t)k->limit : 0, &result, &cost,
                     err, sizeof(err));
    if (rc) {
        if (k->want_error) {
            ok = true;
            if (k->error && *k->error && !strstr(err, k->error)) {
                *text_mismatch = true;
                snprintf(why, whylen, "%s", err);
            }
            if (k->exact && *text_mismatch) {
                ok = false;
                snprintf(why, whylen, "eval error text: got \"%s\", want \"%s\"", err, k->error);
            }
        } else {
            snprintf(why, whylen, "eval failed: %s", err);
        }
        goto out;
    }
    if (k->cost >= 0 && cost != (uint64_t)k->cost) {
        snprintf(why, whylen, "cost %" PRIu64 ", want %lld", cost, k->cost);
        goto out;
    }
    char got[1024];
    ks_cel_value_format(&result, got, sizeof(got));
    if (k->want_error) {
        snprintf(why, whylen, "got %s, wanted error %s", got, k->error ? k->error : "");
        goto out;
    }
    if (!k->value) {
        ok = true;
        goto out;
    }
    struct ks_cel_value want;
    if (eval_value(venv, k->value, vs, &want, err, sizeof(err), &want_p)) {
        snprintf(why, whylen, "expected value %s: %s", k->value, err);
        goto out;
    }
    char wbuf[1024];
    ks_cel_value_format(&want, wbuf, sizeof(wbuf));
    if (strcmp(got, wbuf)) {
        snprintf(why, whylen, "got %s, want %s", got, wbuf);
        goto out;
    }
    ok = true;
out:
    free(msg);
    ks_cel_program_destroy(p);
    ks_cel_scratch_destroy(s);
    for (int i = 0; i < 8; i++) {
        ks_cel_scratch_destroy(bind_s[i]);
        ks_cel_program_destroy(bind_p[i]);
    }
    ks_cel_program_destroy(want_p);
    ks_cel_scratch_destroy(vs);
    ks_cel_env_destroy(env);
    ks_cel_env_destroy(venv);
    return ok;
}

static char *arg_string(const char *p)
{
    size_t n;
    while (*p == ' ')
        p++;
    return json_string(p, &n);
}

void cel_case_run_file(const char *file, unsigned default_libs, struct cel_case_stats *st)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/../cel/data/%s", KS_TEST_DATA_DIR, file);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "cannot open %s", path);
    memset(st, 0, sizeof(*st));
    char *line = NULL;
    size_t cap = 0;
    struct kase k = {0};
    bool in = false;
    for (;;) {
        ssize_t r = getline(&line, &cap, f);
        bool end = r < 0;
        if (!end) {
            while (r > 0 && (line[r - 1] == '\n' || line[r - 1] == '\r'))
                line[--r] = 0;
        }
        if (end || !strncmp(line, "test ", 5)) {
            if (in) {
                if (k.skip) {
                    st->skipped++;
                } else {
                    char why[8192] = "";
                    bool tm;
                    st->run++;
                    if (run_case(&k, why, sizeof(why), &tm)) {
                        st->passed++;
                    } else {
                        st->failed++;
                        fprintf(stderr, "FAIL %s: %s\n   expr: %s\n", k.name, why, k.expr);
                    }
                    if (tm) {
                        st->err_text_mismatch++;
                        if (getenv("CEL_SHOW_TEXTS"))
                            fprintf(stderr, "TEXT %s: want \"%s\" got \"%s\"\n", k.name, k.error, why);
                    }
                }
                kase_free(&k);
            }
            if (end)
                break;
            in = true;
            k.name = arg_string(line + 5);
            k.libs = default_libs;
            k.cost = k.maxcost = k.limit = -1;
            continue;
        }
        if (!in || line[0] == '#' || line[0] == 0)
            continue;
        if (!strncmp(line, "flags", 5)) {
            if (strstr(line, "unchecked"))
                k.flags |= KS_CEL_COMPILE_UNCHECKED;
            if (strstr(line, "dyn_aggregates"))
                k.flags |= KS_CEL_COMPILE_DYN_AGGREGATES;
            if (strstr(line, "no_fold"))
                k.flags |= KS_CEL_COMPILE_NO_FOLD;
            if (strstr(line, "bad_presence_error"))
                k.flags |= KS_CEL_COMPILE_BAD_PRESENCE_ERROR;
            if (strstr(line, "check_only"))
                k.check_only = true;
            const char *l = strstr(line, "libs=");
            if (l)
                k.libs = (unsigned)strtoul(l + 5, NULL, 0);
        } else if (!strncmp(line, "decl ", 5) && k.ndecl < 8) {
            const char *p = line + 5;
            size_t n;
            k.decl_name[k.ndecl] = json_string(p, &n);
            p = strchr(p + 1, '"');
            k.decl_type[k.ndecl++] = arg_string(p + 1);
        } else if (!strncmp(line, "bind ", 5) && k.nbind < 8) {
            const char *p = line + 5;
            size_t n;
            k.bind_name[k.nbind] = json_string(p, &n);
            p = strchr(p + 1, '"');
            k.bind_expr[k.nbind++] = arg_string(p + 1);
        } else if (!strncmp(line, "expr ", 5)) {
            const char *p = line + 5;
            k.expr = json_string(p, &k.expr_len);
        } else if (!strncmp(line, "value ", 6)) {
            k.value = arg_string(line + 6);
        } else if (!strncmp(line, "error", 5)) {
            k.want_error = true;
            k.error = line[5] ? arg_string(line + 6) : strdup("");
        } else if (!strcmp(line, "exact")) {
            k.exact = true;
        } else if (!strncmp(line, "cost ", 5)) {
            k.cost = strtoll(line + 5, NULL, 10);
        } else if (!strncmp(line, "maxcost ", 8)) {
            k.maxcost = strtoll(line + 8, NULL, 10);
        } else if (!strncmp(line, "limit ", 6)) {
            k.limit = strtoll(line + 6, NULL, 10);
        } else if (!strncmp(line, "skip", 4)) {
            k.skip = strdup(line);
        }
    }
    free(line);
    fclose(f);
    fprintf(stderr, "%s: %u run, %u passed, %u failed, %u skipped, %u error texts differ\n", file, st->run,
            st->passed, st->failed, st->skipped, st->err_text_mismatch);
}

Test(cel_conformance, simple_testdata)
{
    struct cel_case_stats st;
    cel_case_run_file("conformance.txt", KS_CEL_LIB_KUBERNETES | KS_CEL_LIB_BINDINGS, &st);
    cr_expect_eq(st.failed, 0, "%u of %u conformance cases failed (see stderr)", st.failed, st.run);
}

Test(cel_k8s, library_tables)
{
    struct cel_case_stats st;
    cel_case_run_file("k8s_library.txt", KS_CEL_LIB_KUBERNETES | KS_CEL_LIB_BINDINGS, &st);
    cr_expect_eq(st.failed, 0, "%u of %u Kubernetes library cases failed (see stderr)", st.failed, st.run);
}
