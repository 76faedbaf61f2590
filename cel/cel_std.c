/*
 * cel_std.c - the CEL standard library: operators, size, the type conversions, string tests
 * and the declaration table the environment builds its overloads from.
 *
 * Mirrors cel-go common/stdlib/standard.go (the functions, their overload ids and signatures,
 * in declaration order) and the value methods of common/types behind them: checked integer
 * arithmetic ("integer overflow", "unsigned integer overflow", "division by zero", "modulus by
 * zero"), conversions with strconv's syntax and cel-go's texts ("type conversion error from
 * 'string' to 'int'", "invalid UTF-8 in bytes, cannot convert to string"), string size in code
 * points. Kubernetes enables cross-type numeric comparisons, so the mixed int/uint/double
 * orderings are declared. Timestamp and duration functions are in cel_time.c, matches in
 * cel_regex_lib.c.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

static struct ks_cel_value err_int_overflow(void)
{
    return ks__cel_str(KS_CEL_ERROR, "integer overflow", 16);
}
static struct ks_cel_value err_uint_overflow(void)
{
    return ks__cel_str(KS_CEL_ERROR, "unsigned integer overflow", 25);
}

static struct ks_cel_value conv_error(struct cel_ctx *c, int from, int to)
{
    const char *fs = ks__cel_type_name(ks__cel_type_prim(from));
    const char *ts = ks__cel_type_name(ks__cel_type_prim(to));
    return ks__cel_errf(c, "type conversion error from '%s' to '%s'", fs, ts);
}

/* ---- logic and arithmetic
 * --------------------------------------------------------------------------------------- */

IMPL(logical_not)
{
    UNUSED_ARGS;
    if (a[0].kind != KS_CEL_BOOL)
        return ks__cel_err_overload();
    return ks__cel_bool(!a[0].v.b);
}

IMPL(add_int64)
{
    UNUSED_ARGS;
    int64_t r;
    if (__builtin_add_overflow(a[0].v.i, a[1].v.i, &r))
        return err_int_overflow();
    return ks__cel_int(r);
}
IMPL(sub_int64)
{
    UNUSED_ARGS;
    int64_t r;
    if (__builtin_sub_overflow(a[0].v.i, a[1].v.i, &r))
        return err_int_overflow();
    return ks__cel_int(r);
}
IMPL(mul_int64)
{
    UNUSED_ARGS;
    int64_t r;
    if (__builtin_mul_overflow(a[0].v.i, a[1].v.i, &r))
        return err_int_overflow();
    return ks__cel_int(r);
}
IMPL(div_int64)
{
    UNUSED_ARGS;
    if (a[1].v.i == 0)
        return ks__cel_str(KS_CEL_ERROR, "division by zero", 16);
    if (a[0].v.i == INT64_MIN && a[1].v.i == -1)
        return err_int_overflow();
    return ks__cel_int(a[0].v.i / a[1].v.i);
}
IMPL(mod_int64)
{
    UNUSED_ARGS;
    if (a[1].v.i == 0)
        return ks__cel_str(KS_CEL_ERROR, "modulus by zero", 15);
    if (a[0].v.i == INT64_MIN && a[1].v.i == -1)
        return err_int_overflow();
    return ks__cel_int(a[0].v.i % a[1].v.i);
}
IMPL(neg_int64)
{
    UNUSED_ARGS;
    if (a[0].v.i == INT64_MIN)
        return err_int_overflow();
    return ks__cel_int(-a[0].v.i);
}
IMPL(add_uint64)
{
    UNUSED_ARGS;
    uint64_t r;
    if (__builtin_add_overflow(a[0].v.u, a[1].v.u, &r))
        return err_uint_overflow();
    return ks__cel_uint(r);
}
IMPL(sub_uint64)
{
    UNUSED_ARGS;
    if (a[1].v.u > a[0].v.u)
        return err_uint_overflow();
    return ks__cel_uint(a[0].v.u - a[1].v.u);
}
IMPL(mul_uint64)
{
    UNUSED_ARGS;
    uint64_t r;
    if (__builtin_mul_overflow(a[0].v.u, a[1].v.u, &r))
        return err_uint_overflow();
    return ks__cel_uint(r);
}
IMPL(div_uint64)
{
    UNUSED_ARGS;
    if (a[1].v.u == 0)
        return ks__cel_str(KS_CEL_ERROR, "division by zero", 16);
    return ks__cel_uint(a[0].v.u / a[1].v.u);
}
IMPL(mod_uint64)
{
    UNUSED_ARGS;
    if (a[1].v.u == 0)
        return ks__cel_str(KS_CEL_ERROR, "modulus by zero", 15);
    return ks__cel_uint(a[0].v.u % a[1].v.u);
}
IMPL(add_double)
{
    UNUSED_ARGS;
    return ks__cel_double(a[0].v.d + a[1].v.d);
}
IMPL(sub_double)
{
    UNUSED_ARGS;
    return ks__cel_double(a[0].v.d - a[1].v.d);
}
IMPL(mul_double)
{
    UNUSED_ARGS;
    return ks__cel_double(a[0].v.d * a[1].v.d);
}
IMPL(div_double)
{
    UNUSED_ARGS;
    return ks__cel_double(a[0].v.d / a[1].v.d);
}
IMPL(neg_double)
{
    UNUSED_ARGS;
    return ks__cel_double(-a[0].v.d);
}

IMPL(add_string)
{
    UNUSED_ARGS;
    size_t l0 = a[0].v.str.len, l1 = a[1].v.str.len;
    if (!l0)
        return a[1];
    if (!l1)
        return a[0];
    char *p = ks__cel_salloc(c, l0 + l1);
    memcpy(p, a[0].v.str.p, l0);
    memcpy(p + l0, a[1].v.str.p, l1);
    return ks__cel_str(a[0].kind, p, l0 + l1);
}

IMPL(add_list)
{
    UNUSED_ARGS;
    uint32_t n0 = ks__cel_agg_size(&a[0]), n1 = ks__cel_agg_size(&a[1]);
    if (!n0)
        return a[1];
    if (!n1)
        return a[0];
    struct ks_cel_value *items = ks__cel_salloc(c, (size_t)(n0 + n1) * sizeof(*items));
    for (uint32_t i = 0; i < n0; i++)
        items[i] = ks__cel_list_at(c, &a[0], i);
    for (uint32_t i = 0; i < n1; i++)
        items[n0 + i] = ks__cel_list_at(c, &a[1], i);
    return ks__cel_make_list(c, items, n0 + n1);
}

/* ---- comparisons
 * --------------------------------------------------------------------------------------------------- */

static struct ks_cel_value rel(struct cel_ctx *c, const struct ks_cel_value *a, int want_lt, int want_eq,
                               int want_gt)
{
    struct ks_cel_value err;
    int r = ks__cel_compare(c, &a[0], &a[1], &err);
    if (r == 2)
        return err;
    return ks__cel_bool(r < 0 ? want_lt : r == 0 ? want_eq : want_gt);
}

IMPL(less)
{
    UNUSED_ARGS;
    return rel(c, a, 1, 0, 0);
}
IMPL(less_equals)
{
    UNUSED_ARGS;
    return rel(c, a, 1, 1, 0);
}
IMPL(greater)
{
    UNUSED_ARGS;
    return rel(c, a, 0, 0, 1);
}
IMPL(greater_equals)
{
    UNUSED_ARGS;
    return rel(c, a, 0, 1, 1);
}

/* ---- containers
 * --------------------------------------------------------------------------------------------------- */

IMPL(in_list)
{
    UNUSED_ARGS;
    if (a[1].kind != KS_CEL_LIST)
        return ks__cel_err_overload();
    uint32_t sz = ks__cel_agg_size(&a[1]);
    for (uint32_t i = 0; i < sz; i++) {
        struct ks_cel_value x = ks__cel_list_at(c, &a[1], i);
        if (ks__cel_equal(&a[0], &x))
            return ks__cel_bool(true);
    }
    return ks__cel_bool(false);
}

IMPL(in_map)
{
    UNUSED_ARGS;
    if (a[1].kind != KS_CEL_MAP)
        return ks__cel_err_overload();
    const struct ks_cel_host_ops *ops = a[1].v.host.ops;
    if (ops && ops != &ks__cel_map_ops && ops->size && ops->entry) {
        /* a host map: its real keys (its lookup may answer absent keys with a default) */
        uint32_t sz = ops->size(a[1].v.host.obj);
        for (uint32_t i = 0; i < sz; i++) {
            struct ks_cel_value k = ks__cel_map_entry(c, &a[1], i, NULL);
            if (ks__cel_is_err(&k))
                return k;
            if (ks__cel_equal(&k, &a[0]))
                return ks__cel_bool(true);
        }
        return ks__cel_bool(false);
    }
    struct ks_cel_value out;
    int rc = ks__cel_map_find(c, &a[1], &a[0], &out);
    if (rc < 0)
        return out;
    return ks__cel_bool(rc == 0);
}

IMPL(size_string)
{
    UNUSED_ARGS;
    return ks__cel_int((int64_t)ks__cel_utf8_count(a[0].v.str.p, a[0].v.str.len));
}
IMPL(size_bytes)
{
    UNUSED_ARGS;
    return ks__cel_int((int64_t)a[0].v.str.len);
}
IMPL(size_agg)
{
    UNUSED_ARGS;
    return ks__cel_int(ks__cel_agg_size(&a[0]));
}

/* ---- conversions
 * ------------------------------------------------------------------------------------------------------ */

IMPL(identity)
{
    UNUSED_ARGS;
    return a[0];
}

IMPL(type_of)
{
    UNUSED_ARGS;
    return ks__cel_typev(ks__cel_type_of(&a[0]));
}

/* strconv.ParseInt(s, 10, 64) */
static bool parse_int(const char *s, size_t n, int64_t *out)
{
    if (n == 0)
        return false;
    bool neg = false;
    size_t i = 0;
    if (s[0] == '+' || s[0] == '-') {
        neg = s[0] == '-';
        i = 1;
    }
    if (i == n)
        return false;
    uint64_t v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        if (v > (UINT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (neg) {
        if (v > (uint64_t)INT64_MAX + 1)
            return false;
        *out = (int64_t)(0 - v);
    } else {
        if (v > (uint64_t)INT64_MAX)
            return false;
        *out = (int64_t)v;
    }
    return true;
}

/* strconv.ParseUint(s, 10, 64) */
static bool parse_uint(const char *s, size_t n, uint64_t *out)
{
    if (n == 0)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

static bool ieq(const char *s, size_t n, const char *w)
{
    size_t m = strlen(w);
    if (n != m)
        return false;
    for (size_t i = 0; i < n; i++) {
        char x = s[i];
        if (x >= 'A' && x <= 'Z')
            x = (char)(x - 'A' + 'a');
        if (x != w[i])
            return false;
    }
    return true;
}

/* strconv.ParseFloat(s, 64): decimal or hex (with a p exponent), inf, infinity, nan. */
static bool parse_float(const char *s, size_t n, double *out)
{
    char buf[128];
    if (n == 0 || n >= sizeof(buf))
        return false;
    size_t i = 0;
    if (s[0] == '+' || s[0] == '-')
        i = 1;
    if (ieq(s + i, n - i, "inf") || ieq(s + i, n - i, "infinity")) {
        *out = s[0] == '-' ? -INFINITY : INFINITY;
        return true;
    }
    if (ieq(s + i, n - i, "nan") && i == 0) {
        *out = NAN;
        return true;
    }
    size_t j = i;
    bool hex = n - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X');
    size_t digits = 0;
    if (hex) {
        j += 2;
        /* underscores are allowed between digits with a base prefix */
        while (j < n && (isxdigit((unsigned char)s[j]) || s[j] == '_'))
            digits += s[j++] != '_';
        if (j < n && s[j] == '.') {
            j++;
            while (j < n && (isxdigit((unsigned char)s[j]) || s[j] == '_'))
                digits += s[j++] != '_';
        }
        if (!digits || j >= n || (s[j] != 'p' && s[j] != 'P'))
            return false;
        j++;
    } else {
        while (j < n && s[j] >= '0' && s[j] <= '9') {
            j++;
            digits++;
        }
        if (j < n && s[j] == '.') {
            j++;
            while (j < n && s[j] >= '0' && s[j] <= '9') {
                j++;
                digits++;
            }
        }
        if (!digits)
            return false;
        if (j == n)
            goto ok;
        if (s[j] != 'e' && s[j] != 'E')
            return false;
        j++;
    }
    if (j < n && (s[j] == '+' || s[j] == '-'))
        j++;
    if (j == n)
        return false;
    while (j < n && s[j] >= '0' && s[j] <= '9')
        j++;
    if (j != n)
        return false;
ok:;
    size_t k = 0;
    for (size_t x = 0; x < n; x++)
        if (s[x] != '_')
            buf[k++] = s[x];
    buf[k] = 0;
    errno = 0;
    double d = strtod(buf, NULL);
    if (errno == ERANGE && isinf(d))
        return false;
    *out = d;
    return true;
}

IMPL(string_to_int)
{
    UNUSED_ARGS;
    int64_t v;
    if (!parse_int(a[0].v.str.p, a[0].v.str.len, &v))
        return conv_error(c, KS_CEL_STRING, KS_CEL_INT);
    return ks__cel_int(v);
}
IMPL(string_to_uint)
{
    UNUSED_ARGS;
    uint64_t v;
    if (!parse_uint(a[0].v.str.p, a[0].v.str.len, &v))
        return conv_error(c, KS_CEL_STRING, KS_CEL_UINT);
    return ks__cel_uint(v);
}
IMPL(string_to_double)
{
    UNUSED_ARGS;
    double d;
    if (!parse_float(a[0].v.str.p, a[0].v.str.len, &d))
        return conv_error(c, KS_CEL_STRING, KS_CEL_DOUBLE);
    return ks__cel_double(d);
}
IMPL(string_to_bool)
{
    UNUSED_ARGS;
    static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const f[] = {"0", "f", "F", "FALSE", "false", "False"};
    for (int i = 0; i < 6; i++) {
        if (strlen(t[i]) == a[0].v.str.len && !memcmp(t[i], a[0].v.str.p, a[0].v.str.len))
            return ks__cel_bool(true);
        if (strlen(f[i]) == a[0].v.str.len && !memcmp(f[i], a[0].v.str.p, a[0].v.str.len))
            return ks__cel_bool(false);
    }
    return conv_error(c, KS_CEL_STRING, KS_CEL_BOOL);
}
IMPL(string_to_bytes)
{
    UNUSED_ARGS;
    return ks__cel_str(KS_CEL_BYTES, a[0].v.str.p, a[0].v.str.len);
}
IMPL(bytes_to_string)
{
    UNUSED_ARGS;
    if (!ks__cel_utf8_valid(a[0].v.str.p, a[0].v.str.len))
        return ks__cel_errf(c, "invalid UTF-8 in bytes, cannot convert to string");
    return ks__cel_str(KS_CEL_STRING, a[0].v.str.p, a[0].v.str.len);
}

static struct ks_cel_value scratch_text(struct cel_ctx *c, const char *buf, size_t len)
{
    char *p = ks__cel_salloc(c, len ? len : 1);
    memcpy(p, buf, len);
    return ks__cel_str(KS_CEL_STRING, p, len);
}

IMPL(int_to_string)
{
    UNUSED_ARGS;
    char buf[32];
    int l = snprintf(buf, sizeof(buf), "%" PRId64, a[0].v.i);
    return scratch_text(c, buf, (size_t)l);
}
IMPL(uint_to_string)
{
    UNUSED_ARGS;
    char buf[32];
    int l = snprintf(buf, sizeof(buf), "%" PRIu64, a[0].v.u);
    return scratch_text(c, buf, (size_t)l);
}
IMPL(double_to_string)
{
    UNUSED_ARGS;
    char buf[64];
    size_t l = ks__cel_fmt_double(buf, sizeof(buf), a[0].v.d);
    return scratch_text(c, buf, l);
}
IMPL(bool_to_string)
{
    UNUSED_ARGS;
    return a[0].v.b ? ks__cel_str(KS_CEL_STRING, "true", 4) : ks__cel_str(KS_CEL_STRING, "false", 5);
}
IMPL(duration_to_string)
{
    UNUSED_ARGS;
    char buf[64];
    size_t l = ks__cel_fmt_duration(buf, sizeof(buf), a[0].v.time.seconds, a[0].v.time.nanos);
    return scratch_text(c, buf, l);
}
IMPL(timestamp_to_string)
{
    UNUSED_ARGS;
    char buf[64];
    size_t l = ks__cel_fmt_timestamp(buf, sizeof(buf), a[0].v.time.seconds, a[0].v.time.nanos);
    return scratch_text(c, buf, l);
}

IMPL(double_to_int)
{
    UNUSED_ARGS;
    double d = a[0].v.d;
    if (isinf(d) || isnan(d) || d <= -9223372036854775808.0 || d >= 9223372036854775807.0)
        return err_int_overflow();
    return ks__cel_int((int64_t)d);
}
IMPL(uint_to_int)
{
    UNUSED_ARGS;
    if (a[0].v.u > INT64_MAX)
        return err_int_overflow();
    return ks__cel_int((int64_t)a[0].v.u);
}
IMPL(duration_to_int)
{
    UNUSED_ARGS;
    return ks__cel_int(a[0].v.time.seconds * 1000000000 + a[0].v.time.nanos);
}
IMPL(timestamp_to_int)
{
    UNUSED_ARGS;
    return ks__cel_int(a[0].v.time.seconds);
}
IMPL(double_to_uint)
{
    UNUSED_ARGS;
    double d = a[0].v.d;
    if (isinf(d) || isnan(d) || d < 0 || d >= 18446744073709551616.0)
        return err_uint_overflow();
    return ks__cel_uint((uint64_t)d);
}
IMPL(int_to_uint)
{
    UNUSED_ARGS;
    if (a[0].v.i < 0)
        return err_uint_overflow();
    return ks__cel_uint((uint64_t)a[0].v.i);
}
IMPL(int_to_double)
{
    UNUSED_ARGS;
    return ks__cel_double((double)a[0].v.i);
}
IMPL(uint_to_double)
{
    UNUSED_ARGS;
    return ks__cel_double((double)a[0].v.u);
}
IMPL(int_to_duration)
{
    UNUSED_ARGS;
    return conv_error(c, KS_CEL_INT, KS_CEL_DURATION);
}

/* ---- strings
 * ---------------------------------------------------------------------------------------------------------
 */

static bool has_sub(const struct ks_cel_value *s, const struct ks_cel_value *sub)
{
    size_t n = s->v.str.len, m = sub->v.str.len;
    if (m == 0)
        return true;
    if (m > n)
        return false;
    return memmem(s->v.str.p, n, sub->v.str.p, m) != NULL;
}

IMPL(contains_string)
{
    UNUSED_ARGS;
    if (a[0].kind != KS_CEL_STRING || a[1].kind != KS_CEL_STRING)
        return ks__cel_err_overload();
    return ks__cel_bool(has_sub(&a[0], &a[1]));
}
IMPL(starts_with)
{
    UNUSED_ARGS;
    if (a[0].kind != KS_CEL_STRING || a[1].kind != KS_CEL_STRING)
        return ks__cel_err_overload();
    size_t m = a[1].v.str.len;
    return ks__cel_bool(m <= a[0].v.str.len && !memcmp(a[0].v.str.p, a[1].v.str.p, m));
}
IMPL(ends_with)
{
    UNUSED_ARGS;
    if (a[0].kind != KS_CEL_STRING || a[1].kind != KS_CEL_STRING)
        return ks__cel_err_overload();
    size_t m = a[1].v.str.len, l = a[0].v.str.len;
    return ks__cel_bool(m <= l && !memcmp(a[0].v.str.p + l - m, a[1].v.str.p, m));
}

/* ---- the table
 * ------------------------------------------------------------------------------------------------------ */

#define NS  CEL_OVL_NONSTRICT
#define TR  CEL_OVL_TRAIT
#define MEM CEL_OVL_MEMBER

#define REL(fn, pre, impl)                                                                                   \
    {fn, pre "_bool", TR, 0, "bool, bool -> bool", impl},                                                    \
        {fn, pre "_int64", TR, 0, "int, int -> bool", impl},                                                 \
        {fn, pre "_int64_double", TR, 0, "int, double -> bool", impl},                                       \
        {fn, pre "_int64_uint64", TR, 0, "int, uint -> bool", impl},                                         \
        {fn, pre "_uint64", TR, 0, "uint, uint -> bool", impl},                                              \
        {fn, pre "_uint64_double", TR, 0, "uint, double -> bool", impl},                                     \
        {fn, pre "_uint64_int64", TR, 0, "uint, int -> bool", impl},                                         \
        {fn, pre "_double", TR, 0, "double, double -> bool", impl},                                          \
        {fn, pre "_double_int64", TR, 0, "double, int -> bool", impl},                                       \
        {fn, pre "_double_uint64", TR, 0, "double, uint -> bool", impl},                                     \
        {fn, pre "_string", TR, CEL_COST_MIN_SIZE, "string, string -> bool", impl},                          \
        {fn, pre "_bytes", TR, CEL_COST_MIN_SIZE, "bytes, bytes -> bool", impl},                             \
        {fn, pre "_timestamp", TR, 0, "timestamp, timestamp -> bool", impl},                                 \
    {                                                                                                        \
        fn, pre "_duration", TR, 0, "duration, duration -> bool", impl                                       \
    }

/* Implemented by the evaluator itself (cel_eval.c); their impl is never called. */
IMPL(special)
{
    UNUSED_ARGS;
    (void)a;
    return ks__cel_err_overload();
}

struct ks_cel_value ks__cel_sub_time(struct cel_ctx *c, const struct cel_expr *e,
                                     const struct ks_cel_value *a, uint32_t n);
struct ks_cel_value ks__cel_string_to_duration(struct cel_ctx *c, const struct cel_expr *e,
                                               const struct ks_cel_value *a, uint32_t n);
struct ks_cel_value ks__cel_string_to_timestamp(struct cel_ctx *c, const struct cel_expr *e,
                                                const struct ks_cel_value *a, uint32_t n);
struct ks_cel_value ks__cel_int_to_timestamp(struct cel_ctx *c, const struct cel_expr *e,
                                             const struct ks_cel_value *a, uint32_t n);

const struct cel_decl ks__cel_std_decls[] = {
    {"_?_:_", "conditional", NS, 0, "bool, A, A -> A", special},
    {"_&&_", "logical_and", NS, 0, "bool, bool -> bool", special},
    {"_||_", "logical_or", NS, 0, "bool, bool -> bool", special},
    {"!_", "logical_not", TR, 0, "bool -> bool", logical_not},
    {"@not_strictly_false", "not_strictly_false", NS, 0, "bool -> bool", special},
    {"_==_", "equals", 0, CEL_COST_MIN_SIZE, "A, A -> bool", special},
    {"_!=_", "not_equals", 0, CEL_COST_MIN_SIZE, "A, A -> bool", special},
    {"_+_", "add_bytes", TR, CEL_COST_SUM_SIZE, "bytes, bytes -> bytes", add_string},
    {"_+_", "add_double", TR, 0, "double, double -> double", add_double},
    {"_+_", "add_duration_duration", TR, 0, "duration, duration -> duration", ks__cel_add_time},
    {"_+_", "add_duration_timestamp", TR, 0, "duration, timestamp -> timestamp", ks__cel_add_time},
    {"_+_", "add_timestamp_duration", TR, 0, "timestamp, duration -> timestamp", ks__cel_add_time},
    {"_+_", "add_int64", TR, 0, "int, int -> int", add_int64},
    {"_+_", "add_list", TR, 0, "list(A), list(A) -> list(A)", add_list},
    {"_+_", "add_string", TR, CEL_COST_SUM_SIZE, "string, string -> string", add_string},
    {"_+_", "add_uint64", TR, 0, "uint, uint -> uint", add_uint64},
    {"_/_", "divide_double", TR, 0, "double, double -> double", div_double},
    {"_/_", "divide_int64", TR, 0, "int, int -> int", div_int64},
    {"_/_", "divide_uint64", TR, 0, "uint, uint -> uint", div_uint64},
    {"_%_", "modulo_int64", TR, 0, "int, int -> int", mod_int64},
    {"_%_", "modulo_uint64", TR, 0, "uint, uint -> uint", mod_uint64},
    {"_*_", "multiply_double", TR, 0, "double, double -> double", mul_double},
    {"_*_", "multiply_int64", TR, 0, "int, int -> int", mul_int64},
    {"_*_", "multiply_uint64", TR, 0, "uint, uint -> uint", mul_uint64},
    {"-_", "negate_double", TR, 0, "double -> double", neg_double},
    {"-_", "negate_int64", TR, 0, "int -> int", neg_int64},
    {"_-_", "subtract_double", TR, 0, "double, double -> double", sub_double},
    {"_-_", "subtract_duration_duration", TR, 0, "duration, duration -> duration", ks__cel_sub_time},
    {"_-_", "subtract_int64", TR, 0, "int, int -> int", sub_int64},
    {"_-_", "subtract_timestamp_duration", TR, 0, "timestamp, duration -> timestamp", ks__cel_sub_time},
    {"_-_", "subtract_timestamp_timestamp", TR, 0, "timestamp, timestamp -> duration", ks__cel_sub_time},
    {"_-_", "subtract_uint64", TR, 0, "uint, uint -> uint", sub_uint64},
    REL("_<_", "less", less),
    REL("_<=_", "less_equals", less_equals),
    REL("_>_", "greater", greater),
    REL("_>=_", "greater_equals", greater_equals),
    {"_[_]", "index_list", TR, 0, "list(A), int -> A", special},
    {"_[_]", "index_map", TR, 0, "map(A, B), A -> B", special},
    {"@in", "in_list", TR, CEL_COST_IN_LIST, "A, list(A) -> bool", in_list},
    {"@in", "in_map", TR, 0, "A, map(A, B) -> bool", in_map},
    {"size", "size_bytes", TR, 0, "bytes -> int", size_bytes},
    {"size", "bytes_size", MEM | TR, 0, "bytes -> int", size_bytes},
    {"size", "size_list", TR, 0, "list(A) -> int", size_agg},
    {"size", "list_size", MEM | TR, 0, "list(A) -> int", size_agg},
    {"size", "size_map", TR, 0, "map(A, B) -> int", size_agg},
    {"size", "map_size", MEM | TR, 0, "map(A, B) -> int", size_agg},
    {"size", "size_string", TR, 0, "string -> int", size_string},
    {"size", "string_size", MEM | TR, 0, "string -> int", size_string},
    {"type", "type", 0, 0, "A -> type(A)", type_of},
    {"bool", "bool_to_bool", 0, 0, "bool -> bool", identity},
    {"bool", "string_to_bool", 0, 0, "string -> bool", string_to_bool},
    {"bytes", "bytes_to_bytes", 0, 0, "bytes -> bytes", identity},
    {"bytes", "string_to_bytes", 0, CEL_COST_STR0, "string -> bytes", string_to_bytes},
    {"double", "double_to_double", 0, 0, "double -> double", identity},
    {"double", "int64_to_double", 0, 0, "int -> double", int_to_double},
    {"double", "string_to_double", 0, 0, "string -> double", string_to_double},
    {"double", "uint64_to_double", 0, 0, "uint -> double", uint_to_double},
    {"duration", "duration_to_duration", 0, 0, "duration -> duration", identity},
    {"duration", "int64_to_duration", 0, 0, "int -> duration", int_to_duration},
    {"duration", "string_to_duration", 0, 0, "string -> duration", ks__cel_string_to_duration},
    {"dyn", "to_dyn", 0, 0, "A -> dyn", identity},
    {"int", "int64_to_int64", 0, 0, "int -> int", identity},
    {"int", "double_to_int64", 0, 0, "double -> int", double_to_int},
    {"int", "duration_to_int64", 0, 0, "duration -> int", duration_to_int},
    {"int", "string_to_int64", 0, 0, "string -> int", string_to_int},
    {"int", "timestamp_to_int64", 0, 0, "timestamp -> int", timestamp_to_int},
    {"int", "uint64_to_int64", 0, 0, "uint -> int", uint_to_int},
    {"string", "string_to_string", 0, 0, "string -> string", identity},
    {"string", "bool_to_string", 0, 0, "bool -> string", bool_to_string},
    {"string", "bytes_to_string", 0, CEL_COST_STR0, "bytes -> string", bytes_to_string},
    {"string", "double_to_string", 0, 0, "double -> string", double_to_string},
    {"string", "duration_to_string", 0, 0, "duration -> string", duration_to_string},
    {"string", "int64_to_string", 0, 0, "int -> string", int_to_string},
    {"string", "timestamp_to_string", 0, 0, "timestamp -> string", timestamp_to_string},
    {"string", "uint64_to_string", 0, 0, "uint -> string", uint_to_string},
    {"timestamp", "timestamp_to_timestamp", 0, 0, "timestamp -> timestamp", identity},
    {"timestamp", "int64_to_timestamp", 0, 0, "int -> timestamp", ks__cel_int_to_timestamp},
    {"timestamp", "string_to_timestamp", 0, 0, "string -> timestamp", ks__cel_string_to_timestamp},
    {"uint", "uint64_to_uint64", 0, 0, "uint -> uint", identity},
    {"uint", "double_to_uint64", 0, 0, "double -> uint", double_to_uint},
    {"uint", "int64_to_uint64", 0, 0, "int -> uint", int_to_uint},
    {"uint", "string_to_uint64", 0, 0, "string -> uint", string_to_uint},
    {"contains", "contains_string", MEM, CEL_COST_CONTAINS, "string, string -> bool", contains_string},
    {"endsWith", "ends_with_string", MEM, CEL_COST_STR0, "string, string -> bool", ends_with},
    {"startsWith", "starts_with_string", MEM, CEL_COST_STR0, "string, string -> bool", starts_with},
    {"matches", "matches", TR, 0, "string, string -> bool", ks__cel_matches},
    {"matches", "matches_string", MEM | TR, CEL_COST_MATCHES, "string, string -> bool", ks__cel_matches},
    {NULL, NULL, 0, 0, NULL, NULL},
};
