/*
 * quantity.c - Kubernetes resource quantities: ParseQuantity, Value/MilliValue and the
 * canonical text (see include/ksched/quantity.h).
 *
 * Mirrors k8s.io/apimachinery/pkg/api/resource: quantity.go (parseQuantityString, ParseQuantity,
 * CanonicalizeBytes, ScaledValue), suffix.go (the suffix table and the e/E exponent rule),
 * amount.go, math.go and scale_int.go (rounding away from zero, saturation at the int64 rails).
 *
 * Upstream stores a quantity either as an int64 with a decimal scale (its fast path) or as an
 * arbitrary-precision inf.Dec; both hold the same exact value, so this file works on the exact
 * value itself, kept as sign * coef * 10^exp with a 128-bit coef:
 *
 *   - parsing keeps every digit at or above 10^-9 and folds the digits below into a sticky
 *     bit, which is upstream's "round up to 1n, away from zero" done without a big integer;
 *   - a BinarySI number times 2^b is computed exactly in units of 1n (the fraction digits are
 *     folded right to left, so arbitrarily long fractions need no big integer either) and
 *     capped at INT64_MAX in magnitude like upstream;
 *   - a DecimalSI or exponent value with more significant digits than 128 bits hold is at
 *     least 3.4e29, far outside every int64 projection, so it is only marked huge; so is
 *     one (at least 1e2147483648) whose canonical text would not fit KS_QUANTITY_STR_MAX.
 *
 * Invariants of a parsed struct ks_quantity: sign == 0 iff the value is 0 (then coef == 0 and
 * exp == 0); otherwise coef % 10 != 0 and exp >= -9, unless huge is set.
 *
 * Where upstream has known defects this file does the arithmetic right instead: exponents near
 * +-2^31 combined with fraction digits wrap upstream's int32 scale (and can make it compute a
 * 2^31-digit number); here positions are int64 and the value is exact.
 */
#include "ksched/quantity.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#if !defined(__SIZEOF_INT128__)
#error "api/quantity.c needs a compiler with unsigned __int128"
#endif

__extension__ typedef unsigned __int128 u128;

#define U128_MAX       (~(u128)0)
#define NANO_EXP       (-9)                     /* parsed values are multiples of 10^NANO_EXP */
#define NANO_PER_UNIT  1000000000u              /* 10^-NANO_EXP */
#define U128_MAX_POW10 38                       /* 10^38 < 2^128 < 10^39 */
#define MAX_EXP3       ((int64_t)INT32_MAX - 1) /* the largest multiple of 3 an e<N> can express */

/* ---- 128-bit helpers ------------------------------------------------------------------ */

static u128 coef_of(const struct ks_quantity *q)
{
    return ((u128)q->coef_hi << 64) | q->coef_lo;
}

static void set_coef(struct ks_quantity *q, u128 c)
{
    q->coef_hi = (uint64_t)(c >> 64);
    q->coef_lo = (uint64_t)c;
}

/* 10^n into *out; false when n is outside [0, 38] and the power does not fit. */
static bool pow10_u128(int64_t n, u128 *out)
{
    u128 p = 1;

    if (n < 0 || n > U128_MAX_POW10)
        return false;
    while (n-- > 0)
        p *= 10;
    *out = p;
    return true;
}

static bool mul_u128(u128 a, u128 b, u128 *out)
{
    if (a != 0 && b > U128_MAX / a)
        return false;
    *out = a * b;
    return true;
}

/* Moves trailing decimal zeros of *c into *exp. */
static void strip_zeros(u128 *c, int64_t *exp)
{
    if (*c == 0) {
        *exp = 0;
        return;
    }
    while (*c % 10 == 0) {
        *c /= 10;
        (*exp)++;
    }
}

/* ---- scanning (parseQuantityString) ----------------------------------------------------- */

/* The pieces of "[+-] zeros num [. den] suffix"; num has its leading zeros stripped. */
struct scan {
    bool negative;
    bool has_digit; /* the number part holds at least one digit, zeros included */
    const char *num;
    size_t num_len;
    const char *den;
    size_t den_len;
    const char *suf;
    size_t suf_len;
};

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* The letters upstream lets into a suffix before its optional signed digits. */
static bool is_suffix_letter(char c)
{
    static const char letters[] = "eEinumkKMGTP";

    return memchr(letters, c, sizeof(letters) - 1) != NULL;
}

/*
 * Splits s like parseQuantityString: sign, leading zeros, integer digits, an optional '.' and
 * fraction digits, then a suffix made of suffix letters, one optional sign and digits, which
 * must reach the end of the input.
 */
static int scan_quantity(const char *s, size_t n, struct scan *sc)
{
    size_t pos = 0;

    memset(sc, 0, sizeof(*sc));
    if (pos < n && (s[pos] == '+' || s[pos] == '-'))
        sc->negative = s[pos++] == '-';
    while (pos < n && s[pos] == '0') {
        sc->has_digit = true;
        pos++;
    }
    sc->num = s + pos;
    while (pos < n && is_digit(s[pos]))
        pos++;
    sc->num_len = (size_t)(s + pos - sc->num);
    if (pos < n && s[pos] == '.') {
        sc->den = s + ++pos;
        while (pos < n && is_digit(s[pos]))
            pos++;
        sc->den_len = (size_t)(s + pos - sc->den);
    }
    if (sc->num_len || sc->den_len)
        sc->has_digit = true;

    sc->suf = s + pos;
    while (pos < n && is_suffix_letter(s[pos]))
        pos++;
    if (pos < n && (s[pos] == '+' || s[pos] == '-'))
        pos++;
    while (pos < n && is_digit(s[pos]))
        pos++;
    if (pos != n)
        return -EINVAL;
    sc->suf_len = (size_t)(s + n - sc->suf);
    return 0;
}

/* ---- suffixes (suffix.go) ----------------------------------------------------------------- */

struct suffix_def {
    const char *text;
    uint8_t fmt;
    int8_t exp; /* power of 10 for DecimalSI, power of 2 for BinarySI */
};

static const struct suffix_def suffixes[] = {
    {"", KS_QUANTITY_DECIMAL_SI, 0},   {"n", KS_QUANTITY_DECIMAL_SI, -9}, {"u", KS_QUANTITY_DECIMAL_SI, -6},
    {"m", KS_QUANTITY_DECIMAL_SI, -3}, {"k", KS_QUANTITY_DECIMAL_SI, 3},  {"M", KS_QUANTITY_DECIMAL_SI, 6},
    {"G", KS_QUANTITY_DECIMAL_SI, 9},  {"T", KS_QUANTITY_DECIMAL_SI, 12}, {"P", KS_QUANTITY_DECIMAL_SI, 15},
    {"E", KS_QUANTITY_DECIMAL_SI, 18}, {"Ki", KS_QUANTITY_BINARY_SI, 10}, {"Mi", KS_QUANTITY_BINARY_SI, 20},
    {"Gi", KS_QUANTITY_BINARY_SI, 30}, {"Ti", KS_QUANTITY_BINARY_SI, 40}, {"Pi", KS_QUANTITY_BINARY_SI, 50},
    {"Ei", KS_QUANTITY_BINARY_SI, 60},
};

/* DecimalSI suffixes by (exponent + 9) / 3, for exponents -9..18. */
static const char *const decimal_si_text[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};

/* BinarySI suffixes by power of 1024, 1..6. */
static const char *const binary_si_text[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};

/*
 * The e/E exponent: Go's strconv.ParseInt syntax (one optional sign, then at least one digit)
 * with the value limited to [-INT32_MAX, INT32_MAX], as upstream enforces since it stopped
 * truncating exponents to int32.
 */
static int parse_exponent(const char *s, size_t n, int32_t *out)
{
    bool negative = false;
    int64_t v = 0;
    size_t i = 0;

    if (i < n && (s[i] == '+' || s[i] == '-'))
        negative = s[i++] == '-';
    if (i == n)
        return -EINVAL;
    for (; i < n; i++) {
        if (!is_digit(s[i]))
            return -EINVAL;
        v = v * 10 + (s[i] - '0');
        if (v > INT32_MAX)
            return -EINVAL;
    }
    *out = (int32_t)(negative ? -v : v);
    return 0;
}

/* Upstream's interpret: the fixed suffixes first, then e/E with an exponent. */
static int interpret_suffix(const char *s, size_t n, uint8_t *fmt, int32_t *exp)
{
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        if (strlen(suffixes[i].text) == n && memcmp(suffixes[i].text, s, n) == 0) {
            *fmt = suffixes[i].fmt;
            *exp = suffixes[i].exp;
            return 0;
        }
    }
    if (n > 1 && (s[0] == 'e' || s[0] == 'E')) {
        *fmt = KS_QUANTITY_DECIMAL_EXPONENT;
        return parse_exponent(s + 1, n - 1, exp);
    }
    return -EINVAL;
}

/* ---- building the value (ParseQuantity) ------------------------------------------------------ */

/* The k-th digit of num followed by den. */
static int digit_at(const struct scan *sc, size_t k)
{
    return (k < sc->num_len ? sc->num[k] : sc->den[k - sc->num_len]) - '0';
}

/*
 * Whether the canonical text of c * 10^exp (c > 0 without trailing zeros) fits
 * KS_QUANTITY_STR_MAX and reads back. The parser's e<N> stops at INT32_MAX, so past MAX_EXP3
 * ks_quantity_format() writes the rest of the exponent as coefficient zeros; a value that
 * would need more zeros than fit is kept as huge instead.
 */
static bool text_fits(u128 c, int64_t exp)
{
    if (exp <= MAX_EXP3 + 2)
        return true;
    int64_t digits = 0;
    for (; c; c /= 10)
        digits++;
    return digits + (exp - MAX_EXP3) + (int64_t)sizeof("-e2147483646") <= KS_QUANTITY_STR_MAX;
}

/*
 * DecimalSI and DecimalExponent: value = num.den * 10^x, rounded up (away from zero) to a
 * multiple of 10^-9. The digit k sits at position top - k.
 */
static void build_decimal(const struct scan *sc, int32_t x, struct ks_quantity *q)
{
    const size_t ndigits = sc->num_len + sc->den_len;
    const int64_t top = (int64_t)sc->num_len - 1 + x;
    int64_t pending = 0; /* zeros seen since the last non-zero kept digit */
    int64_t last = 0;    /* position of the last non-zero kept digit */
    bool sticky = false; /* a non-zero digit below 10^-9 was dropped */
    u128 c = 0, scale;
    size_t k;

    for (k = 0; k < ndigits && top - (int64_t)k >= NANO_EXP; k++) {
        int d = digit_at(sc, k);

        if (d == 0) {
            pending += c != 0;
            continue;
        }
        if (!pow10_u128(pending + 1, &scale) || !mul_u128(c, scale, &c) || c > U128_MAX - (u128)d)
            goto huge;
        c += (u128)d;
        pending = 0;
        last = top - (int64_t)k;
    }
    for (; k < ndigits && !sticky; k++)
        sticky = digit_at(sc, k) != 0;

    if (sticky) {
        /* Add one unit of 10^-9 to the value truncated at 10^-9. */
        if (c != 0 && (!pow10_u128(last - NANO_EXP, &scale) || !mul_u128(c, scale, &c)))
            goto huge;
        if (c == U128_MAX)
            goto huge;
        c += 1;
        last = NANO_EXP;
    }
    q->exp = last;
    strip_zeros(&c, &q->exp);
    if (c != 0 && !text_fits(c, q->exp))
        goto huge;
    set_coef(q, c);
    return;
huge:
    q->huge = 1;
    set_coef(q, 0);
    q->exp = 0;
}

/*
 * BinarySI: value = num.den * 2^b, computed exactly in units of 10^-9 and rounded up, then
 * capped at INT64_MAX like upstream (which only caps this format).
 */
static void build_binary(const struct scan *sc, int b, struct ks_quantity *q)
{
    const u128 cap = (u128)INT64_MAX * NANO_PER_UNIT;
    const u128 unit = ((u128)1 << b) * NANO_PER_UNIT; /* 2^b in units of 10^-9, below 2^90 */
    u128 r = cap;
    uint64_t whole = 0;

    /* A whole part of 2^(63-b) or more is already past INT64_MAX; so is any 20-digit one. */
    if (sc->num_len <= 19) {
        for (size_t i = 0; i < sc->num_len; i++)
            whole = whole * 10 + (uint64_t)(sc->num[i] - '0');
        if ((whole >> (63 - b)) == 0) {
            /*
             * frac * unit, folded right to left: at every step floor((d * unit + q) / 10) keeps
             * the integer part exactly and any remainder only makes the result inexact.
             */
            u128 fq = 0;
            bool inexact = false;

            for (size_t j = sc->den_len; j-- > 0;) {
                u128 t = (u128)(sc->den[j] - '0') * unit + fq;

                fq = t / 10;
                inexact |= t % 10 != 0;
            }
            r = (u128)whole * unit + fq + (inexact ? 1 : 0);
        }
    }
    if (r > cap)
        r = cap;
    q->exp = NANO_EXP;
    strip_zeros(&r, &q->exp);
    set_coef(q, r);
    /* Upstream switches a BinarySI value strictly between -1 and 1 to DecimalSI. */
    if (r != 0 && q->exp < 0) {
        u128 one;

        if (pow10_u128(-q->exp, &one) && r < one)
            q->fmt = KS_QUANTITY_DECIMAL_SI;
    }
}

int ks_quantity_parse_n(const char *s, size_t n, struct ks_quantity *out)
{
    struct ks_quantity q = {0};
    struct scan sc;
    int32_t exp;

    if (!s || !out || n == 0)
        return -EINVAL;
    if (scan_quantity(s, n, &sc) < 0 || interpret_suffix(sc.suf, sc.suf_len, &q.fmt, &exp) < 0)
        return -EINVAL;
    /*
     * Upstream parses a number without digits ("", ".", "-.") as 0 on its int64 fast path, but
     * fails on its inf.Dec path, which it takes for exponents below -9 and for Pi and Ei.
     */
    if (!sc.has_digit && (q.fmt == KS_QUANTITY_BINARY_SI ? exp >= 50 : exp < NANO_EXP))
        return -EINVAL;

    if (q.fmt == KS_QUANTITY_BINARY_SI)
        build_binary(&sc, exp, &q);
    else
        build_decimal(&sc, exp, &q);
    if (q.huge || coef_of(&q) != 0)
        q.sign = sc.negative ? -1 : 1;
    *out = q;
    return 0;
}

int ks_quantity_parse(const char *s, struct ks_quantity *out)
{
    if (!s)
        return -EINVAL;
    return ks_quantity_parse_n(s, strlen(s), out);
}

/* ---- integer projections (ScaledValue, scaledValue, AsScaledInt64) --------------------------- */

/*
 * ceil(|q| / 10^scale) away from zero with the sign of q, saturated at the int64 rails.
 * Returns 0 or -ERANGE when it saturated.
 */
static int scaled_value(const struct ks_quantity *q, int scale, int64_t *out)
{
    u128 mag, p;
    int64_t shift;

    if (!q || q->sign == 0) {
        *out = 0;
        return 0;
    }
    if (q->huge)
        goto saturate;
    mag = coef_of(q);
    shift = q->exp - scale;
    if (shift >= 0) {
        if (!pow10_u128(shift, &p) || !mul_u128(mag, p, &mag))
            goto saturate;
    } else if (!pow10_u128(-shift, &p)) {
        mag = 1; /* 10^-shift exceeds any 128-bit coefficient: 0 < |q| / 10^scale < 1 */
    } else {
        mag = mag / p + (mag % p != 0);
    }
    if (q->sign > 0 && mag <= (u128)INT64_MAX) {
        *out = (int64_t)mag;
        return 0;
    }
    if (q->sign < 0 && mag <= (u128)INT64_MAX + 1) {
        *out = mag == (u128)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
        return 0;
    }
saturate:
    *out = q->sign > 0 ? INT64_MAX : INT64_MIN;
    return -ERANGE;
}

int ks_quantity_value_checked(const struct ks_quantity *q, int64_t *out)
{
    return scaled_value(q, 0, out);
}

int ks_quantity_milli_value_checked(const struct ks_quantity *q, int64_t *out)
{
    return scaled_value(q, -3, out);
}

int64_t ks_quantity_value(const struct ks_quantity *q)
{
    int64_t v;

    scaled_value(q, 0, &v);
    return v;
}

int64_t ks_quantity_milli_value(const struct ks_quantity *q)
{
    int64_t v;

    scaled_value(q, -3, &v);
    return v;
}

int ks_quantity_sign(const struct ks_quantity *q)
{
    return q ? q->sign : 0;
}

/* ---- arithmetic (Quantity.Cmp, Add, Sub) ------------------------------------------------- */

/*
 * The magnitudes of @a and @b on the smaller of their exponents, into *@ma and *@mb; false
 * when the one with the larger exponent does not fit 128 bits that way (it is then the
 * larger magnitude, and *@a_larger says which one it was).
 */
static bool align(const struct ks_quantity *a, const struct ks_quantity *b, u128 *ma, u128 *mb, int64_t *exp,
                  bool *a_larger)
{
    u128 ca = coef_of(a), cb = coef_of(b), p;
    int64_t ea = a->sign ? a->exp : 0, eb = b->sign ? b->exp : 0;

    *a_larger = ea > eb;
    *exp = ea < eb ? ea : eb;
    if (ea > eb)
        return pow10_u128(ea - eb, &p) && mul_u128(ca, p, ma) && (*mb = cb, true);
    if (eb > ea)
        return pow10_u128(eb - ea, &p) && mul_u128(cb, p, mb) && (*ma = ca, true);
    *ma = ca;
    *mb = cb;
    return true;
}

int ks_quantity_cmp(const struct ks_quantity *a, const struct ks_quantity *b)
{
    u128 ma, mb;
    int64_t exp;
    bool a_larger;
    int mag;

    if (a->sign != b->sign)
        return a->sign < b->sign ? -1 : 1;
    if (a->sign == 0)
        return 0;
    if (a->huge || b->huge)
        mag = a->huge && b->huge ? 0 : a->huge ? 1 : -1;
    else if (!align(a, b, &ma, &mb, &exp, &a_larger))
        mag = a_larger ? 1 : -1;
    else
        mag = ma < mb ? -1 : ma > mb ? 1 : 0;
    return a->sign * mag;
}

/* *@a + @sign_b * |@b| into *@a; -ERANGE (a unchanged) when the digits do not fit. */
static int add_signed(struct ks_quantity *a, const struct ks_quantity *b, int sign_b)
{
    u128 ma, mb, sum;
    int64_t exp;
    bool a_larger;
    int sign;

    if (a->huge || b->huge)
        return -ERANGE;
    if (sign_b == 0)
        return 0;
    if (a->sign == 0) {
        uint8_t fmt = b->fmt;
        *a = *b;
        a->sign = (int8_t)sign_b;
        a->fmt = fmt;
        return 0;
    }
    if (!align(a, b, &ma, &mb, &exp, &a_larger))
        return -ERANGE;
    if (a->sign == sign_b) {
        if (ma > U128_MAX - mb)
            return -ERANGE;
        sum = ma + mb;
        sign = a->sign;
    } else if (ma >= mb) {
        sum = ma - mb;
        sign = a->sign;
    } else {
        sum = mb - ma;
        sign = sign_b;
    }
    strip_zeros(&sum, &exp);
    set_coef(a, sum);
    a->exp = exp;
    a->sign = (int8_t)(sum == 0 ? 0 : sign);
    return 0;
}

int ks_quantity_add(struct ks_quantity *a, const struct ks_quantity *b)
{
    return add_signed(a, b, b->sign);
}

int ks_quantity_sub(struct ks_quantity *a, const struct ks_quantity *b)
{
    return add_signed(a, b, -b->sign);
}

/* ---- canonical text (CanonicalizeBytes) --------------------------------------------------- */

/* Appends the decimal digits of v at p; returns the number of characters written. */
static size_t put_u128(char *p, u128 v)
{
    char rev[40];
    size_t n = 0, i;

    do {
        rev[n++] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v != 0);
    for (i = 0; i < n; i++)
        p[i] = rev[n - 1 - i];
    return n;
}

/* |c * 10^exp| < 1024 (c != 0). */
static bool magnitude_below_1024(u128 c, int64_t exp)
{
    u128 p;

    if (exp > 3)
        return false;
    if (exp >= 0) {
        pow10_u128(exp, &p);
        return c < 1024 && c * p < 1024;
    }
    if (-exp > 35)
        return true; /* 1024 * 10^36 already exceeds every 128-bit c */
    pow10_u128(-exp, &p);
    return c < 1024 * p;
}

/*
 * The base-10 canonical form: the exponent lowered to a multiple of three (the coefficient
 * gains one or two zeros), then the DecimalSI suffix for it, or e<N> for DecimalExponent and
 * for exponents without a DecimalSI suffix.
 */
static size_t put_decimal(char *p, size_t cap, u128 c, int64_t exp, bool decimal_si)
{
    int64_t exp3 = exp - ((exp % 3) + 3) % 3;
    size_t n = put_u128(p, c);

    /*
     * The text must read back, and the parser takes e<N> up to INT32_MAX only: past the last
     * multiple of three below it (a value parsed from "...e2147483647" whose trailing zeros
     * moved into exp), the coefficient keeps the extra zeros instead. Parsing marks a value
     * huge when they would not fit (text_fits); a hand-built exponent keeps its own form.
     */
    if (exp3 > MAX_EXP3 && n + (size_t)(exp - MAX_EXP3) + 12 <= cap)
        exp3 = MAX_EXP3;
    for (int64_t z = exp3; z < exp; z++)
        p[n++] = '0';
    if (decimal_si && exp3 >= -9 && exp3 <= 18) {
        const char *suffix = decimal_si_text[(exp3 + 9) / 3];

        memcpy(p + n, suffix, strlen(suffix));
        return n + strlen(suffix);
    }
    if (exp3 == 0)
        return n;
    return n + (size_t)snprintf(p + n, cap - n, "e%" PRId64, exp3);
}

int ks_quantity_format(const struct ks_quantity *q, char *buf, size_t len)
{
    char tmp[KS_QUANTITY_STR_MAX];
    size_t n = 0;
    u128 c;
    int64_t exp;
    uint8_t fmt;

    if (!q || !buf)
        return -EINVAL;
    if (len > 0)
        buf[0] = '\0';
    /* Parsing never builds exponents this far out; refusing them keeps the arithmetic defined. */
    if (q->huge || q->exp < INT64_MIN + 64 || q->exp > INT64_MAX - 64)
        return -ERANGE;
    c = coef_of(q);
    exp = q->exp;
    fmt = q->fmt;
    strip_zeros(&c, &exp);
    if (q->sign == 0 || c == 0) {
        tmp[n++] = '0';
        goto out;
    }
    if (q->sign < 0)
        tmp[n++] = '-';

    if (fmt == KS_QUANTITY_BINARY_SI) {
        u128 v, p;
        int times = 0;

        /* Below 1024 or fractional: shown as DecimalSI. Past Ei: shown as e<N>. */
        if (magnitude_below_1024(c, exp) || exp < 0) {
            fmt = KS_QUANTITY_DECIMAL_SI;
        } else if (!pow10_u128(exp, &p) || !mul_u128(c, p, &v)) {
            fmt = KS_QUANTITY_DECIMAL_EXPONENT;
        } else {
            while (v % 1024 == 0 && times <= 6) {
                v /= 1024;
                times++;
            }
            if (times > 6) {
                fmt = KS_QUANTITY_DECIMAL_EXPONENT;
            } else {
                n += put_u128(tmp + n, v);
                memcpy(tmp + n, binary_si_text[times], strlen(binary_si_text[times]));
                n += strlen(binary_si_text[times]);
                goto out;
            }
        }
    }
    n += put_decimal(tmp + n, sizeof(tmp) - n, c, exp, fmt == KS_QUANTITY_DECIMAL_SI);
out:
    if (n + 1 > len)
        return -ENOSPC;
    memcpy(buf, tmp, n);
    buf[n] = '\0';
    return 0;
}
