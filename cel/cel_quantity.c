/*
 * cel_quantity.c - Kubernetes' quantity library for CEL: quantity(), isQuantity(), sign(),
 * isGreaterThan, isLessThan, compareTo, asApproximateFloat, asInteger, isInteger, add and sub
 * on the kubernetes.Quantity type, over ksched's exact struct ks_quantity (api/quantity.c).
 *
 * Mirrors k8s.io/apiserver/pkg/cel/library/quantity.go and the parts of
 * k8s.io/apimachinery/pkg/api/resource it calls: ParseQuantity's two errors ("quantities must
 * match the regular expression '...'" for a malformed string, "unable to parse quantity's
 * suffix" for an unknown suffix), Cmp (exact), AsInt64 (an exact integer within int64, else
 * "cannot convert value to integer"), AsApproximateFloat64, Add and Sub (exact; an integer
 * operand is a DecimalExponent quantity). sign() is a global function there (sign(q)), and so
 * here. The newer mul, div and divInt are not implemented.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "cel_internal.h"

__extension__ typedef unsigned __int128 u128;

#define IMPL(name)                                                                                           \
    static struct ks_cel_value name(struct cel_ctx *c, const struct cel_expr *e,                             \
                                    const struct ks_cel_value *a, uint32_t n)

static const char ERR_FORMAT[] = "quantities must match the regular expression "
                                 "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

static u128 coef(const struct ks_quantity *q)
{
    return ((u128)q->coef_hi << 64) | q->coef_lo;
}

/* The decimal digits of a quantity's magnitude, most significant first; *exp: of the last digit. */
static int digits(const struct ks_quantity *q, char *d, int64_t *exp)
{
    u128 v = coef(q);
    char tmp[48];
    int n = 0;
    while (v) {
        tmp[n++] = (char)('0' + (int)(v % 10));
        v /= 10;
    }
    for (int i = 0; i < n; i++)
        d[i] = tmp[n - 1 - i];
    *exp = q->exp;
    return n;
}

int ks__cel_quantity_cmp(const struct ks_quantity *a, const struct ks_quantity *b)
{
    if (a->sign != b->sign)
        return a->sign < b->sign ? -1 : 1;
    if (a->sign == 0)
        return 0;
    int mag;
    /* the common case: two 64-bit coefficients whose exponents are close */
    if (!a->huge && !b->huge && !a->coef_hi && !b->coef_hi && a->exp - b->exp <= 18 &&
        b->exp - a->exp <= 18) {
        static const uint64_t p10[19] = {1ULL,
                                         10ULL,
                                         100ULL,
                                         1000ULL,
                                         10000ULL,
                                         100000ULL,
                                         1000000ULL,
                                         10000000ULL,
                                         100000000ULL,
                                         1000000000ULL,
                                         10000000000ULL,
                                         100000000000ULL,
                                         1000000000000ULL,
                                         10000000000000ULL,
                                         100000000000000ULL,
                                         1000000000000000ULL,
                                         10000000000000000ULL,
                                         100000000000000000ULL,
                                         1000000000000000000ULL};
        u128 x = a->coef_lo, y = b->coef_lo;
        if (a->exp > b->exp)
            x *= p10[a->exp - b->exp];
        else
            y *= p10[b->exp - a->exp];
        mag = x < y ? -1 : x > y;
        return a->sign > 0 ? mag : -mag;
    }
    if (a->huge || b->huge) {
        mag = a->huge == b->huge ? 0 : a->huge ? 1 : -1;
    } else {
        char da[48], db[48];
        int64_t ea, eb;
        int na = digits(a, da, &ea), nb = digits(b, db, &eb);
        int64_t oa = na + ea, ob = nb + eb; /* the position of the leading digit */
        if (oa != ob) {
            mag = oa < ob ? -1 : 1;
        } else {
            mag = 0;
            for (int i = 0; i < na || i < nb; i++) {
                char x = i < na ? da[i] : '0', y = i < nb ? db[i] : '0';
                if (x != y) {
                    mag = x < y ? -1 : 1;
                    break;
                }
            }
        }
    }
    return a->sign > 0 ? mag : -mag;
}

/* resource.ParseQuantity: 0, or 1 for a malformed string, 2 for an unknown suffix. */
static int parse(const char *s, size_t n, struct ks_quantity *q)
{
    if (n == 0)
        return 1;
    size_t i = 0;
    if (s[0] == '+' || s[0] == '-')
        i++;
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    while (i < n && strchr("eEinumkKMGTP", s[i]) && s[i])
        i++;
    if (i < n && (s[i] == '+' || s[i] == '-'))
        i++;
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++;
    if (i != n)
        return 1;
    return ks_quantity_parse_n(s, n, q) ? 2 : 0;
}

static struct ks_cel_value make_q(const struct ks_quantity *q)
{
    struct ks_cel_value v = {.kind = KS_CEL_QUANTITY};
    v.v.q = *q;
    return v;
}

IMPL(to_quantity)
{
    (void)e;
    (void)n;
    struct ks_quantity q;
    int rc = parse(a[0].v.str.p, a[0].v.str.len, &q);
    if (rc == 1)
        return ks__cel_errf(c, "%s", ERR_FORMAT);
    if (rc == 2)
        return ks__cel_errf(c, "unable to parse quantity's suffix");
    return make_q(&q);
}

IMPL(is_quantity)
{
    (void)c;
    (void)e;
    (void)n;
    struct ks_quantity q;
    return ks__cel_bool(parse(a[0].v.str.p, a[0].v.str.len, &q) == 0);
}

IMPL(q_sign)
{
    (void)c;
    (void)e;
    (void)n;
    return ks__cel_int(a[0].v.q.sign);
}

IMPL(q_greater)
{
    (void)c;
    (void)e;
    (void)n;
    return ks__cel_bool(ks__cel_quantity_cmp(&a[0].v.q, &a[1].v.q) == 1);
}

IMPL(q_less)
{
    (void)c;
    (void)e;
    (void)n;
    return ks__cel_bool(ks__cel_quantity_cmp(&a[0].v.q, &a[1].v.q) == -1);
}

IMPL(q_compare)
{
    (void)c;
    (void)e;
    (void)n;
    return ks__cel_int(ks__cel_quantity_cmp(&a[0].v.q, &a[1].v.q));
}

IMPL(q_float)
{
    (void)c;
    (void)e;
    (void)n;
    const struct ks_quantity *q = &a[0].v.q;
    if (q->huge)
        return ks__cel_double(q->sign > 0 ? INFINITY : -INFINITY);
    double v = (double)coef(q);
    v = q->exp >= 0 ? v * pow(10, (double)q->exp) : v / pow(10, (double)-q->exp);
    return ks__cel_double(q->sign < 0 ? -v : v);
}

/* AsInt64: an exact integer within int64. */
static bool as_int(const struct ks_quantity *q, int64_t *out)
{
    if (q->sign == 0) {
        *out = 0;
        return true;
    }
    if (q->huge || q->exp < 0 || q->exp > 19)
        return false;
    u128 v = coef(q);
    for (int64_t i = 0; i < q->exp; i++) {
        if (v > ((u128)1 << 64))
            return false;
        v *= 10;
    }
    if (q->sign > 0) {
        if (v > (u128)INT64_MAX)
            return false;
        *out = (int64_t)v;
    } else {
        if (v > (u128)INT64_MAX + 1)
            return false;
        *out = (int64_t)(0 - (uint64_t)v);
    }
    return true;
}

IMPL(q_as_int)
{
    (void)e;
    (void)n;
    int64_t v;
    if (!as_int(&a[0].v.q, &v))
        return ks__cel_errf(c, "cannot convert value to integer");
    return ks__cel_int(v);
}

IMPL(q_is_int)
{
    (void)c;
    (void)e;
    (void)n;
    int64_t v;
    return ks__cel_bool(as_int(&a[0].v.q, &v));
}

/* A quantity from a sign, a 128-bit magnitude and an exponent, normalised (no trailing zeros). */
static struct ks_quantity normal(int sign, u128 mag, int64_t exp, uint8_t fmt)
{
    struct ks_quantity q = {0};
    q.fmt = fmt;
    if (mag == 0)
        return q;
    while (mag % 10 == 0) {
        mag /= 10;
        exp++;
    }
    q.sign = (int8_t)sign;
    q.coef_lo = (uint64_t)mag;
    q.coef_hi = (uint64_t)(mag >> 64);
    q.exp = exp;
    return q;
}

/* Exact a + sign_b * b; "huge" when the digits do not fit 128 bits. */
static struct ks_quantity q_add(const struct ks_quantity *x, const struct ks_quantity *y, int ysign)
{
    uint8_t fmt = x->sign == 0 ? y->fmt : x->fmt;
    int ys = y->sign * ysign;
    if (y->sign == 0)
        return *x;
    if (x->sign == 0) {
        struct ks_quantity r = *y;
        r.sign = (int8_t)ys;
        r.fmt = fmt;
        return r;
    }
    if (x->huge || y->huge) {
        struct ks_quantity r = x->huge ? *x : *y;
        if (!x->huge)
            r.sign = (int8_t)ys;
        r.fmt = fmt;
        return r;
    }
    int64_t e = x->exp < y->exp ? x->exp : y->exp;
    u128 a = coef(x), b = coef(y);
    for (int64_t i = e; i < x->exp; i++) {
        if (a > ~(u128)0 / 10)
            goto huge;
        a *= 10;
    }
    for (int64_t i = e; i < y->exp; i++) {
        if (b > ~(u128)0 / 10)
            goto huge;
        b *= 10;
    }
    if (x->sign == ys) {
        if (a > ~(u128)0 - b)
            goto huge;
        return normal(x->sign, a + b, e, fmt);
    }
    if (a >= b)
        return normal(x->sign, a - b, e, fmt);
    return normal(ys, b - a, e, fmt);
huge : {
    struct ks_quantity r = {0};
    r.sign = (int8_t)(ks__cel_quantity_cmp(x, y) >= 0 ? x->sign : ys);
    r.huge = 1;
    r.fmt = fmt;
    return r;
}
}

static struct ks_quantity from_int(int64_t v)
{
    u128 mag = v < 0 ? (u128)(0 - (uint64_t)v) : (u128)v;
    return normal(v < 0 ? -1 : 1, mag, 0, KS_QUANTITY_DECIMAL_EXPONENT);
}

IMPL(q_add_q)
{
    (void)c;
    (void)e;
    (void)n;
    struct ks_quantity r = q_add(&a[0].v.q, &a[1].v.q, 1);
    return make_q(&r);
}

IMPL(q_add_int)
{
    (void)c;
    (void)e;
    (void)n;
    struct ks_quantity y = from_int(a[1].v.i);
    struct ks_quantity r = q_add(&a[0].v.q, &y, 1);
    return make_q(&r);
}

IMPL(q_sub_q)
{
    (void)c;
    (void)e;
    (void)n;
    struct ks_quantity r = q_add(&a[0].v.q, &a[1].v.q, -1);
    return make_q(&r);
}

IMPL(q_sub_int)
{
    (void)c;
    (void)e;
    (void)n;
    struct ks_quantity y = from_int(a[1].v.i);
    struct ks_quantity r = q_add(&a[0].v.q, &y, -1);
    return make_q(&r);
}

#define MEM CEL_OVL_MEMBER
#define Q   "kubernetes.Quantity"
const struct cel_decl ks__cel_quantity_decls[] = {
    {"quantity", "string_to_quantity", 0, CEL_COST_STR0, "string -> " Q, to_quantity},
    {"isQuantity", "is_quantity_string", 0, CEL_COST_STR0, "string -> bool", is_quantity},
    {"sign", "quantity_sign", 0, 0, Q " -> int", q_sign},
    {"isGreaterThan", "quantity_is_greater_than", MEM, 0, Q ", " Q " -> bool", q_greater},
    {"isLessThan", "quantity_is_less_than", MEM, 0, Q ", " Q " -> bool", q_less},
    {"compareTo", "quantity_compare_to", MEM, 0, Q ", " Q " -> int", q_compare},
    {"asApproximateFloat", "quantity_get_float", MEM, 0, Q " -> double", q_float},
    {"asInteger", "quantity_get_int", MEM, 0, Q " -> int", q_as_int},
    {"isInteger", "quantity_is_integer", MEM, 0, Q " -> bool", q_is_int},
    {"add", "quantity_add", MEM, 0, Q ", " Q " -> " Q, q_add_q},
    {"add", "quantity_add_int", MEM, 0, Q ", int -> " Q, q_add_int},
    {"sub", "quantity_sub", MEM, 0, Q ", " Q " -> " Q, q_sub_q},
    {"sub", "quantity_sub_int", MEM, 0, Q ", int -> " Q, q_sub_int},
    {NULL, NULL, 0, 0, NULL, NULL},
};
