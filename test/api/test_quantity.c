/*
 * test_quantity.c - api/quantity.c against the behaviour pinned by upstream's tests
 * (k8s.io/apimachinery/pkg/api/resource: quantity_test.go TestQuantityParse, TestQuantityString,
 * TestQuantityParseEmit, TestParseQuantity, TestNegativeValueRoundsAwayFromZero,
 * TestInterpretExponentInt32Bounds; quantity_overflow_test.go accessor rows).
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksched/quantity.h"

#define DSI  KS_QUANTITY_DECIMAL_SI
#define BIN  KS_QUANTITY_BINARY_SI
#define DEXP KS_QUANTITY_DECIMAL_EXPONENT

static struct ks_quantity must_parse(const char *s)
{
    struct ks_quantity q;
    int rc = ks_quantity_parse(s, &q);

    cr_assert_eq(rc, 0, "ks_quantity_parse(\"%s\") = %d, want 0", s, rc);
    return q;
}

static const char *fmt_name(int fmt)
{
    return fmt == DSI ? "DecimalSI" : fmt == BIN ? "BinarySI" : "DecimalExponent";
}

/* q must equal sign(mant) * |mant| * 10^exp exactly, in format fmt. */
static void expect_exact(const char *in, const struct ks_quantity *q, int64_t mant, int64_t exp, int fmt)
{
    uint64_t mag = mant < 0 ? (uint64_t)0 - (uint64_t)mant : (uint64_t)mant;
    int sign = mant < 0 ? -1 : mant > 0;

    if (mag == 0)
        exp = 0;
    while (mag != 0 && mag % 10 == 0) {
        mag /= 10;
        exp++;
    }
    cr_expect_eq(q->sign, sign, "%s: sign %d, want %d", in, q->sign, sign);
    cr_expect_eq(q->huge, 0, "%s: unexpectedly huge", in);
    cr_expect_eq(q->coef_hi, 0, "%s: coef_hi %" PRIu64 ", want 0", in, q->coef_hi);
    cr_expect_eq(q->coef_lo, mag, "%s: coef %" PRIu64 ", want %" PRIu64, in, q->coef_lo, mag);
    cr_expect_eq(q->exp, exp, "%s: exp %" PRId64 ", want %" PRId64, in, q->exp, exp);
    cr_expect_eq(q->fmt, fmt, "%s: format %s, want %s", in, fmt_name(q->fmt), fmt_name(fmt));
}

static void expect_format(const char *in, const struct ks_quantity *q, const char *want)
{
    char buf[KS_QUANTITY_STR_MAX];
    int rc = ks_quantity_format(q, buf, sizeof(buf));

    cr_expect_eq(rc, 0, "format(%s) = %d, want 0", in, rc);
    cr_expect_str_eq(buf, want, "format(%s) = \"%s\", want \"%s\"", in, buf, want);
}

/* ---- parsing --------------------------------------------------------------------------------- */

struct parse_case {
    const char *in;
    int64_t mant;
    int64_t exp;
    int fmt;
};

/* TestQuantityParse's table, value for value. */
static const struct parse_case upstream_parse_cases[] = {
    {"0", 0, 0, DSI},
    {"0n", 0, 0, DSI},
    {"0u", 0, 0, DSI},
    {"0m", 0, 0, DSI},
    {"0Ki", 0, 0, BIN},
    {"0k", 0, 0, DSI},
    {"0Mi", 0, 0, BIN},
    {"0M", 0, 0, DSI},
    {"0Gi", 0, 0, BIN},
    {"0G", 0, 0, DSI},
    {"0Ti", 0, 0, BIN},
    {"0T", 0, 0, DSI},
    {"1", 1, 0, DSI},
    {"1Ki", 1024, 0, BIN},
    {"8Ki", 8 * 1024, 0, BIN},
    {"7Mi", 7 * 1024 * 1024, 0, BIN},
    {"6Gi", 6LL << 30, 0, BIN},
    {"5Ti", 5LL << 40, 0, BIN},
    {"4Pi", 4LL << 50, 0, BIN},
    {"3Ei", 3LL << 60, 0, BIN},
    {"10Ti", 10LL << 40, 0, BIN},
    {"100Ti", 100LL << 40, 0, BIN},
    {"5n", 5, -9, DSI},
    {"4u", 4, -6, DSI},
    {"3m", 3, -3, DSI},
    {"9", 9, 0, DSI},
    {"8k", 8, 3, DSI},
    {"50k", 5, 4, DSI},
    {"7M", 7, 6, DSI},
    {"6G", 6, 9, DSI},
    {"5T", 5, 12, DSI},
    {"40T", 4, 13, DSI},
    {"300T", 3, 14, DSI},
    {"2P", 2, 15, DSI},
    {"1E", 1, 18, DSI},
    {"1E-3", 1, -3, DEXP},
    {"1e3", 1, 3, DEXP},
    {"1E6", 1, 6, DEXP},
    {"1e9", 1, 9, DEXP},
    {"1E12", 1, 12, DEXP},
    {"1e15", 1, 15, DEXP},
    {"1E18", 1, 18, DEXP},
    {"1e14", 1, 14, DEXP},
    {"1e13", 1, 13, DEXP},
    {"100.035k", 100035, 0, DSI},
    {"0.001", 1, -3, DSI},
    {"0.0005k", 5, -1, DSI},
    {"0.005", 5, -3, DSI},
    {"0.05", 5, -2, DSI},
    {"0.5", 5, -1, DSI},
    {"0.00050k", 5, -1, DSI},
    {"0.00500", 5, -3, DSI},
    {"0.05000", 5, -2, DSI},
    {"0.50000", 5, -1, DSI},
    {"0.5e0", 5, -1, DEXP},
    {"0.5e-1", 5, -2, DEXP},
    {"0.5e-2", 5, -3, DEXP},
    {"10.035M", 10035, 3, DSI},
    {"1.2e3", 12, 2, DEXP},
    {"1.3E+6", 13, 5, DEXP},
    {"1.40e9", 14, 8, DEXP},
    {"1.53E12", 153, 10, DEXP},
    {"1.6e15", 16, 14, DEXP},
    {"1.7E18", 17, 17, DEXP},
    {"9.01", 901, -2, DSI},
    {"8.1k", 81, 2, DSI},
    {"7.123456M", 7123456, 0, DSI},
    {"6.987654321G", 6987654321, 0, DSI},
    {"5.444T", 5444, 9, DSI},
    {"40.1T", 401, 11, DSI},
    {"300.2T", 3002, 11, DSI},
    {"2.5P", 25, 14, DSI},
    {"1.01E", 101, 16, DSI},
    /* things that saturate or round */
    {"3.001n", 4, -9, DSI},
    {"1.1E-9", 2, -9, DEXP},
    {"0.0000000001", 1, -9, DSI},
    {"0.0000000005", 1, -9, DSI},
    {"0.00000000050", 1, -9, DSI},
    {"0.5e-9", 1, -9, DEXP},
    {"0.9n", 1, -9, DSI},
    {"0.00000012345", 124, -9, DSI},
    {"0.00000012354", 124, -9, DSI},
    {"9Ei", INT64_MAX, 0, BIN},
    {"9223372036854775807Ki", INT64_MAX, 0, BIN},
    {"12E", 12, 18, DSI},
    /* fractional binary */
    {"100.035Ki", 10243584, -2, BIN},
    {"0.5Mi", 512 * 1024, 0, BIN},
    {"0.05Gi", 536870912, -1, BIN},
    {"0.025Ti", 274877906944, -1, BIN},
    /* "things written by trolls" */
    {"0.000000000001Ki", 2, -9, DSI},
    {".001", 1, -3, DSI},
    {".0001k", 100, -3, DSI},
    {"1.", 1, 0, DSI},
    {"1.G", 1, 9, DSI},
};

Test(quantity, parses_upstream_table)
{
    for (size_t i = 0; i < sizeof(upstream_parse_cases) / sizeof(upstream_parse_cases[0]); i++) {
        const struct parse_case *c = &upstream_parse_cases[i];
        struct ks_quantity q = must_parse(c->in);

        expect_exact(c->in, &q, c->mant, c->exp, c->fmt);
    }
}

Test(quantity, parses_upstream_table_with_explicit_sign)
{
    char buf[64];

    for (size_t i = 0; i < sizeof(upstream_parse_cases) / sizeof(upstream_parse_cases[0]); i++) {
        const struct parse_case *c = &upstream_parse_cases[i];
        struct ks_quantity q;

        snprintf(buf, sizeof(buf), "-%s", c->in);
        q = must_parse(buf);
        expect_exact(buf, &q, -c->mant, c->exp, c->fmt);

        snprintf(buf, sizeof(buf), "+%s", c->in);
        q = must_parse(buf);
        expect_exact(buf, &q, c->mant, c->exp, c->fmt);
    }
}

Test(quantity, parses_binary_suffixes)
{
    static const struct parse_case cases[] = {
        {"1Ki", 1LL << 10, 0, BIN},  {"1Mi", 1LL << 20, 0, BIN},    {"1Gi", 1LL << 30, 0, BIN},
        {"1Ti", 1LL << 40, 0, BIN},  {"1Pi", 1LL << 50, 0, BIN},    {"1Ei", 1LL << 60, 0, BIN},
        {"7Ei", 7LL << 60, 0, BIN},  {"1.5Gi", 3LL << 29, 0, BIN},  {"1536Mi", 1536LL << 20, 0, BIN},
        {".5Ki", 512, 0, BIN},       {"0.0005Ki", 512, -3, DSI},    {"8Ei", INT64_MAX, 0, BIN},
        {"20Ei", INT64_MAX, 0, BIN}, {"-20Ei", -INT64_MAX, 0, BIN},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ks_quantity q = must_parse(cases[i].in);

        expect_exact(cases[i].in, &q, cases[i].mant, cases[i].exp, cases[i].fmt);
    }
}

Test(quantity, parses_the_briefs_examples)
{
    static const struct parse_case cases[] = {
        {"1", 1, 0, DSI},     {"1m", 1, -3, DSI},   {"1.5", 15, -1, DSI},  {"0.1", 1, -1, DSI},
        {"100m", 1, -1, DSI}, {"1e3", 1, 3, DEXP},  {"1E-3", 1, -3, DEXP}, {"5M", 5, 6, DSI},
        {"+1", 1, 0, DSI},    {".5", 5, -1, DSI},   {"1.", 1, 0, DSI},     {"-1", -1, 0, DSI},
        {"1e+3", 1, 3, DEXP}, {"1e03", 1, 3, DEXP}, {"1e-0", 1, 0, DEXP},  {"007k", 7, 3, DSI},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ks_quantity q = must_parse(cases[i].in);

        expect_exact(cases[i].in, &q, cases[i].mant, cases[i].exp, cases[i].fmt);
    }
}

Test(quantity, rejects_invalid_input)
{
    static const char *const invalid[] = {
        /* upstream's list */
        "1.1.M",
        "1+1.0M",
        "0.1mi",
        "0.1am",
        "aoeu",
        ".5i",
        "1i",
        "-3.01i",
        "-3.01e-",
        "1e4294967297",
        " 1",
        "1 ",
        /* the brief's list and neighbours */
        "",
        "abc",
        "1.2.3",
        "1Kb",
        "--1",
        "1Zi",
        "1e",
        "1E+",
        "1e+-3",
        "1ee3",
        "1K",
        "1KI",
        "1ki",
        "1mi",
        "1Mi1",
        "+-1",
        "0x10",
        "1_000",
        "1,5",
        "1\n",
        "\t1",
        "1.5e1.5",
        "Non-Numeric",
        "\xc2\xb5",
        /* digit-less numbers that upstream sends down its inf.Dec path */
        "Pi",
        "Ei",
        ".Pi",
        "-Ei",
        "e-10",
        "-.e-10",
        "E-12",
        /* exponents outside [-MaxInt32, MaxInt32] */
        "1e2147483648",
        "1e-2147483648",
        "1E9223372036854775807",
        "1E9223372036854775808",
        "1e6024865272343",
    };

    for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
        struct ks_quantity q = {.sign = 7};
        int rc = ks_quantity_parse(invalid[i], &q);

        cr_expect_eq(rc, -EINVAL, "ks_quantity_parse(\"%s\") = %d, want -EINVAL", invalid[i], rc);
        cr_expect_eq(q.sign, 7, "\"%s\": output written on failure", invalid[i]);
    }
    cr_expect_eq(ks_quantity_parse(NULL, &(struct ks_quantity){0}), -EINVAL);
    cr_expect_eq(ks_quantity_parse("1", NULL), -EINVAL);
}

Test(quantity, accepts_upstreams_digitless_zeros)
{
    /* upstream's int64 fast path reads these as 0; its inf.Dec path (Pi, Ei, e<-9) rejects them */
    static const char *const zeros[] = {"-",  "+",           ".",  "-.", "+.",  "m",    "n",
                                        "k",  "E",           "Ki", "Ti", "-Gi", ".Ki",  "e-9",
                                        "e5", "E2147483647", "00", "-0", "0Pi", "0.Ei", "-.0e-10"};

    for (size_t i = 0; i < sizeof(zeros) / sizeof(zeros[0]); i++) {
        struct ks_quantity q = must_parse(zeros[i]);

        cr_expect_eq(ks_quantity_sign(&q), 0, "\"%s\": sign %d, want 0", zeros[i], ks_quantity_sign(&q));
        cr_expect_eq(ks_quantity_value(&q), 0, "\"%s\": value not 0", zeros[i]);
        expect_format(zeros[i], &q, "0");
    }
}

Test(quantity, exponent_limits_are_plus_minus_max_int32)
{
    struct ks_quantity q = must_parse("1e2147483647");

    cr_expect_eq(ks_quantity_sign(&q), 1);
    cr_expect_eq(ks_quantity_value(&q), INT64_MAX);
    expect_format("1e2147483647", &q, "10e2147483646");

    q = must_parse("1e-2147483647"); /* rounds up to 1n */
    expect_exact("1e-2147483647", &q, 1, -9, DEXP);
    q = must_parse("-1.5e-2147483647"); /* upstream's int32 scale wraps here; the value is -1n */
    expect_exact("-1.5e-2147483647", &q, -1, -9, DEXP);
    q = must_parse("1.5e2147483647");
    expect_format("1.5e2147483647", &q, "15e2147483646");
    q = must_parse("1e0000000000000000000000000005");
    expect_exact("1e0000000000000000000000000005", &q, 1, 5, DEXP);
}

Test(quantity, parse_n_reads_only_n_bytes)
{
    struct ks_quantity q;

    cr_assert_eq(ks_quantity_parse_n("100mXYZ", 4, &q), 0);
    expect_exact("100m", &q, 1, -1, DSI);
    cr_expect_eq(ks_quantity_parse_n("1\0", 2, &q), -EINVAL);
    cr_expect_eq(ks_quantity_parse_n("1", 0, &q), -EINVAL);
}

/* ---- Value / MilliValue ---------------------------------------------------------------------- */

struct value_case {
    const char *in;
    int64_t value;
    int64_t milli;
};

Test(quantity, value_and_milli_round_away_from_zero)
{
    static const struct value_case cases[] = {
        {"1m", 1, 1},
        {"1.5", 2, 1500},
        {"1.5m", 1, 2},
        {"0.1", 1, 100},
        {"100m", 1, 100},
        {"1n", 1, 1},
        {"-1n", -1, -1},
        {"1Ki", 1024, 1024000},
        {"1.5Gi", 1610612736, 1610612736000},
        {"-1.5m", -1, -2},
        {"999m", 1, 999},
        {"1001m", 2, 1001},
        {"2", 2, 2000},
        /* TestNegativeValueRoundsAwayFromZero */
        {"-.484785E-7466", -1, -1},
        {".484785E-7466", 1, 1},
        {"-.484785E-1", -1, -49},
        {".484785E-1", 1, 49},
        {"-0.0005", -1, -1},
        {"0.0005", 1, 1},
        {"-1500m", -2, -1500},
        {"1500m", 2, 1500},
        {"-9.5000000001Gi", -10200547329, -10200547328108},
        {"9.5000000001Gi", 10200547329, 10200547328108},
        {"-1", -1, -1000},
        {"1", 1, 1000},
        {"0", 0, 0},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ks_quantity q = must_parse(cases[i].in);
        int64_t v = ks_quantity_value(&q), m = ks_quantity_milli_value(&q);

        cr_expect_eq(v, cases[i].value, "Value(%s) = %" PRId64 ", want %" PRId64, cases[i].in, v,
                     cases[i].value);
        cr_expect_eq(m, cases[i].milli, "MilliValue(%s) = %" PRId64 ", want %" PRId64, cases[i].in, m,
                     cases[i].milli);
    }
}

struct accessor_case {
    const char *in;
    int sign;
    int64_t value;
    int64_t milli;
    const char *text;
};

/* The parse-based rows of quantity_overflow_test.go's accessor baseline (after the fixes). */
Test(quantity, saturates_at_int64_rails_like_upstream)
{
    static const struct accessor_case cases[] = {
        {"9223372036854775807", 1, INT64_MAX, INT64_MAX, "9223372036854775807"},
        {"1E", 1, 1000000000000000000, INT64_MAX, "1E"},
        {"8Ei", 1, INT64_MAX, INT64_MAX, "9223372036854775807"},
        {"-8Ei", -1, -INT64_MAX, INT64_MIN, "-9223372036854775807"},
        {"20Ei", 1, INT64_MAX, INT64_MAX, "9223372036854775807"},
        {"-20Ei", -1, -INT64_MAX, INT64_MIN, "-9223372036854775807"},
        {"9223372036854775808", 1, INT64_MAX, INT64_MAX, "9223372036854775808"},
        {"18446744073709551616", 1, INT64_MAX, INT64_MAX, "18446744073709551616"},
        {"100E", 1, INT64_MAX, INT64_MAX, "100E"},
        {"1000E", 1, INT64_MAX, INT64_MAX, "1e21"},
        {"5000E", 1, INT64_MAX, INT64_MAX, "5e21"},
        {"1e100", 1, INT64_MAX, INT64_MAX, "10e99"},
        {"1e19", 1, INT64_MAX, INT64_MAX, "10e18"},
        {"-9223372036854775808", -1, INT64_MIN, INT64_MIN, "-9223372036854775808"},
        {"-9223372036854775807", -1, INT64_MIN + 1, INT64_MIN, "-9223372036854775807"},
        {"-1e30", -1, INT64_MIN, INT64_MIN, "-1e30"},
        {"-100E", -1, INT64_MIN, INT64_MIN, "-100E"},
        {"-1000E", -1, INT64_MIN, INT64_MIN, "-1e21"},
        {"-9.5Gi", -1, -10200547328, -10200547328000, "-9728Mi"},
        {"-9.5000000001Gi", -1, -10200547329, -10200547328108, "-10200547328107374183n"},
        /* milli boundaries */
        {"9223372036854775.807", 1, 9223372036854776, INT64_MAX, "9223372036854775807m"},
        {"9223372036854775.808", 1, 9223372036854776, INT64_MAX, "9223372036854775808m"},
        {"-9223372036854775.808", -1, -9223372036854776, INT64_MIN, "-9223372036854775808m"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct accessor_case *c = &cases[i];
        struct ks_quantity q = must_parse(c->in);
        int64_t v = ks_quantity_value(&q), m = ks_quantity_milli_value(&q);

        cr_expect_eq(ks_quantity_sign(&q), c->sign, "Sign(%s) = %d, want %d", c->in, ks_quantity_sign(&q),
                     c->sign);
        cr_expect_eq(v, c->value, "Value(%s) = %" PRId64 ", want %" PRId64, c->in, v, c->value);
        cr_expect_eq(m, c->milli, "MilliValue(%s) = %" PRId64 ", want %" PRId64, c->in, m, c->milli);
        expect_format(c->in, &q, c->text);
    }
}

Test(quantity, checked_accessors_report_saturation)
{
    struct ks_quantity q;
    int64_t v;

    q = must_parse("9223372036854775808");
    cr_expect_eq(ks_quantity_value_checked(&q, &v), -ERANGE);
    cr_expect_eq(v, INT64_MAX);
    q = must_parse("-9223372036854775808");
    cr_expect_eq(ks_quantity_value_checked(&q, &v), 0);
    cr_expect_eq(v, INT64_MIN);
    cr_expect_eq(ks_quantity_milli_value_checked(&q, &v), -ERANGE);
    cr_expect_eq(v, INT64_MIN);
    q = must_parse("-9223372036854775.808");
    cr_expect_eq(ks_quantity_milli_value_checked(&q, &v), 0);
    cr_expect_eq(v, INT64_MIN);
    q = must_parse("-9223372036854775.809");
    cr_expect_eq(ks_quantity_milli_value_checked(&q, &v), -ERANGE);
    cr_expect_eq(v, INT64_MIN);
    q = must_parse("9223372036854775.807");
    cr_expect_eq(ks_quantity_milli_value_checked(&q, &v), 0);
    cr_expect_eq(v, INT64_MAX);
    q = must_parse("1E");
    cr_expect_eq(ks_quantity_value_checked(&q, &v), 0);
    cr_expect_eq(v, 1000000000000000000);
    cr_expect_eq(ks_quantity_milli_value_checked(&q, &v), -ERANGE);
    cr_expect_eq(v, INT64_MAX);
}

Test(quantity, integers_round_trip_through_value)
{
    uint64_t x = 0x9e3779b97f4a7c15u;
    char buf[32];

    for (int i = 0; i < 20000; i++) {
        int64_t n, want_milli;
        struct ks_quantity q;

        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        n = (int64_t)(x >> (x % 64));
        if (x & 1)
            n = n == INT64_MIN ? n : -n;
        snprintf(buf, sizeof(buf), "%" PRId64, n);
        q = must_parse(buf);
        cr_assert_eq(ks_quantity_value(&q), n, "Value(%s) = %" PRId64, buf, ks_quantity_value(&q));
        if (__builtin_mul_overflow(n, 1000, &want_milli))
            want_milli = n < 0 ? INT64_MIN : INT64_MAX;
        cr_assert_eq(ks_quantity_milli_value(&q), want_milli, "MilliValue(%s) = %" PRId64, buf,
                     ks_quantity_milli_value(&q));
    }
}

/* ---- canonical text -------------------------------------------------------------------------- */

struct text_case {
    const char *canonical;
    const char *alternate;
};

Test(quantity, formats_upstream_string_table)
{
    /* TestQuantityString: both spellings parse to the value printed as the first one */
    static const struct text_case cases[] = {
        {"1Gi", "1024Mi"},
        {"300Mi", "307200Ki"},
        {"6Ki", NULL},
        {"1001Gi", "1025024Mi"},
        {"1Ti", "1024Gi"},
        {"5", "5000m"},
        {"500m", "0.5"},
        {"1G", "1000M"},
        {"1G", "0.001T"},
        {"1G", "1000000k"},
        {"1m", "1000u"},
        {"80m", NULL},
        {"1080m", "1.08"},
        {"1080m", "1080000000n"},
        {"300M", NULL},
        {"1T", NULL},
        {"1E", NULL},
        {"1e21", "1000E"},
        {"5e21", "5000E"},
        {"1e24", "1000000E"},
        {"10e69", NULL},
        {"20e69", NULL},
        {"1e72", NULL},
        {"1234567M", NULL},
        {"1234567m", NULL},
        {"3k", NULL},
        {"1025", NULL},
        {"0", "00"},
        {"1e9", ".001e12"},
        {"1e-3", "0.001e0"},
        {"1e-9", "1000e-12"},
        {"80e-3", NULL},
        {"300e6", NULL},
        {"1e12", NULL},
        {"1e3", NULL},
        {"3e3", NULL},
        {"1n", NULL},
        {"80n", NULL},
        {"1080n", NULL},
        {"1u", NULL},
        {"80u", NULL},
        {"1080u", NULL},
        {"1180591620717411303424", NULL},
    };
    char neg[64];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ks_quantity q = must_parse(cases[i].canonical);

        expect_format(cases[i].canonical, &q, cases[i].canonical);
        if (cases[i].alternate) {
            q = must_parse(cases[i].alternate);
            expect_format(cases[i].alternate, &q, cases[i].canonical);
        }
        if (strcmp(cases[i].canonical, "0") != 0) {
            snprintf(neg, sizeof(neg), "-%s", cases[i].canonical);
            q = must_parse(neg);
            expect_format(neg, &q, neg);
        }
    }
}

Test(quantity, formats_upstream_parse_emit_table)
{
    /* TestQuantityParseEmit, and the same with a leading '-' */
    static const struct text_case cases[] = {
        {"1Ki", "1Ki"},
        {"1Mi", "1Mi"},
        {"1Gi", "1Gi"},
        {"1024Mi", "1Gi"},
        {"1000M", "1G"},
        {".001Ki", "1024m"},
        {".000001Ki", "1024u"},
        {".000000001Ki", "1024n"},
        {".000000000001Ki", "2n"},
    };
    char in[64], want[64];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ks_quantity q = must_parse(cases[i].canonical);

        expect_format(cases[i].canonical, &q, cases[i].alternate);
        snprintf(in, sizeof(in), "-%s", cases[i].canonical);
        snprintf(want, sizeof(want), "-%s", cases[i].alternate);
        q = must_parse(in);
        expect_format(in, &q, want);
    }
}

Test(quantity, formats_values_near_int64_like_upstream)
{
    /* TestParseQuantity: input -> canonical text (NULL: the input is already canonical) */
    static const struct text_case cases[] = {
        {"-999999999999999999", NULL},
        {"999999999999999999.0", "999999999999999999"},
        {"-999999999999999999.1", "-999999999999999999100m"},
        {"9999999999999999999", NULL},
        {"-1E", NULL},
        {"1000000000000000000", "1E"},
        {"-1.0E", "-1E"},
        {"1000000000000000000.0", "1E"},
        {"-9999999999999999999000m", "-9999999999999999999"},
        {"9999999999999999999.1", "9999999999999999999100m"},
        {"-1.0000000000000000001E", "-1000000000000000000100m"},
        {"1.000000000000000001E", "1000000000000000001"},
        {"1000000000000000001", NULL},
        {"-10E", NULL},
        {"10000000000000000000", "10E"},
        {"-10.0E", "-10E"},
        {"10000000000000000000000m", "10E"},
        {"-10.0000000000000000001E", "-10000000000000000000100m"},
        {"10.000000000000000001E", "10000000000000000001"},
        {"-9223372036854775809", NULL},
        {"9223372036854775806.0", "9223372036854775806"},
        {"-9223372036854775809000m", "-9223372036854775809"},
        {"9223372036854775806.1", "9223372036854775806100m"},
        {"-9223372036854775808", NULL},
        {"9223372036854775807", NULL},
        {"-9223372036854775808.0", "-9223372036854775808"},
        {"9223372036854775807000m", "9223372036854775807"},
        {"-9223372036854775808.1", "-9223372036854775808100m"},
        {"9223372036854775808", NULL},
        {"9223372036854775808.1", "9223372036854775808100m"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ks_quantity q = must_parse(cases[i].canonical);

        expect_format(cases[i].canonical, &q, cases[i].alternate ? cases[i].alternate : cases[i].canonical);
    }
}

Test(quantity, formats_canonical_suffixes)
{
    static const struct text_case cases[] = {
        {"1536Mi", "1536Mi"},  {"1.5Gi", "1536Mi"},
        {"100m", "100m"},      {"1000", "1k"},
        {"0.1", "100m"},       {"1.5", "1500m"},
        {"1.1Ki", "1126400m"}, {"1.5Ki", "1536"},
        {"0.5Ki", "512"},      {"-0.5Ki", "-512"},
        {"2000Ki", "2000Ki"},  {"1024Ki", "1Mi"},
        {"1023Ki", "1023Ki"},  {"1100", "1100"},
        {"10e3", "10e3"},      {"1E3", "1e3"},
        {"+1", "1"},           {"1.", "1"},
        {"1.500", "1500m"},    {"1.001", "1001m"},
        {"007k", "7k"},        {"1e-3", "1e-3"},
        {"0.5e0", "500e-3"},   {"1000e-3", "1"},
        {"7Ei", "7Ei"},        {"100.035Ki", "102435840m"},
        {"1e-10", "1e-9"},     {"1n", "1n"},
        {"0.0005Ki", "512m"},  {"1024", "1024"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ks_quantity q = must_parse(cases[i].canonical);

        expect_format(cases[i].canonical, &q, cases[i].alternate);
    }
}

struct raw_case {
    uint64_t coef_hi, coef_lo;
    int64_t exp;
    int8_t sign;
    uint8_t fmt;
    const char *text;
};

Test(quantity, formats_values_without_a_suffix_like_upstream)
{
    /*
     * TestQuantityString's past-Ei rows, TestBinarySIZeroExponentString and
     * TestQuantityStringBelowNano: values parsing never yields, built by hand.
     */
    static const struct raw_case cases[] = {
        {0, 1, 70, 1, BIN, "10e69"},  {0, 2, 70, 1, BIN, "20e69"},
        {0, 1, 72, 1, BIN, "1e72"},   {64, 0, 0, 1, BIN, "1180591620717411303424"}, /* 2^70 */
        {0, 2, 3, 1, BIN, "2000"},    {0, 2, 3, -1, BIN, "-2000"},
        {0, 1, -12, 1, DSI, "1e-12"}, {0, 1, -10, 1, DSI, "100e-12"},
        {0, 1, 63, 1, DEXP, "1e63"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ks_quantity q = {.coef_hi = cases[i].coef_hi,
                                .coef_lo = cases[i].coef_lo,
                                .exp = cases[i].exp,
                                .sign = cases[i].sign,
                                .fmt = cases[i].fmt};

        expect_format(cases[i].text, &q, cases[i].text);
    }
}

Test(quantity, format_checks_buffer_size)
{
    struct ks_quantity q = must_parse("1.5Gi");
    char buf[KS_QUANTITY_STR_MAX] = "junk";

    cr_expect_eq(ks_quantity_format(&q, buf, 6), -ENOSPC);
    cr_expect_str_eq(buf, "");
    cr_expect_eq(ks_quantity_format(&q, buf, 0), -ENOSPC);
    cr_expect_eq(ks_quantity_format(&q, buf, 7), 0);
    cr_expect_str_eq(buf, "1536Mi");
    cr_expect_eq(ks_quantity_format(NULL, buf, sizeof(buf)), -EINVAL);
    cr_expect_eq(ks_quantity_format(&q, NULL, 8), -EINVAL);
}

Test(quantity, longest_text_fits_str_max)
{
    /* 39-digit coefficient, two padding zeros, and the widest exponent */
    struct ks_quantity q = {
        .coef_hi = UINT64_MAX, .coef_lo = UINT64_MAX, .exp = INT64_MIN + 64, .sign = -1, .fmt = DEXP};
    char buf[KS_QUANTITY_STR_MAX];

    cr_assert_eq(ks_quantity_format(&q, buf, sizeof(buf)), 0);
    cr_expect_lt(strlen(buf), sizeof(buf));
    q.exp = INT64_MIN;
    cr_expect_eq(ks_quantity_format(&q, buf, sizeof(buf)), -ERANGE);
}

Test(quantity, zero_struct_is_zero)
{
    struct ks_quantity q = {0};

    cr_expect_eq(ks_quantity_sign(&q), 0);
    cr_expect_eq(ks_quantity_value(&q), 0);
    cr_expect_eq(ks_quantity_milli_value(&q), 0);
    expect_format("{0}", &q, "0");
}

/* ---- values beyond 128 bits ------------------------------------------------------------------ */

Test(quantity, huge_values_saturate_and_refuse_to_format)
{
    static const char *const huge[] = {
        "123456789012345678901234567890123456789012",
        "1000000000000000000000000000000000000000000000001",
        "340282366920938463463374607431768211455.0000000001", /* 2^128-1 plus a sticky digit */
        "1.00000000000000000000000000000000000000001e60",
    };
    char buf[KS_QUANTITY_STR_MAX + 64];

    for (size_t i = 0; i < sizeof(huge) / sizeof(huge[0]); i++) {
        struct ks_quantity q = must_parse(huge[i]);
        int64_t v;

        cr_expect_eq(q.huge, 1, "%s: not marked huge", huge[i]);
        cr_expect_eq(ks_quantity_sign(&q), 1);
        cr_expect_eq(ks_quantity_value(&q), INT64_MAX);
        cr_expect_eq(ks_quantity_milli_value(&q), INT64_MAX);
        cr_expect_eq(ks_quantity_value_checked(&q, &v), -ERANGE);
        cr_expect_eq(ks_quantity_format(&q, buf, KS_QUANTITY_STR_MAX), -ERANGE);

        snprintf(buf, sizeof(buf), "-%s", huge[i]);
        q = must_parse(buf);
        cr_expect_eq(ks_quantity_sign(&q), -1);
        cr_expect_eq(ks_quantity_value(&q), INT64_MIN);
        cr_expect_eq(ks_quantity_milli_value(&q), INT64_MIN);
    }
}

Test(quantity, long_inputs_stay_exact)
{
    static char in[4096], want[64];
    struct ks_quantity q;

    /* many zeros are not many significant digits */
    in[0] = '1';
    memset(in + 1, '0', 100);
    in[101] = '\0';
    q = must_parse(in);
    cr_expect_eq(q.huge, 0);
    expect_format("1e100 spelled out", &q, "10e99");

    /* a long fraction only leaves a sticky digit behind */
    snprintf(in, sizeof(in), "1.");
    memset(in + 2, '0', 3000);
    snprintf(in + 3002, sizeof(in) - 3002, "1");
    q = must_parse(in);
    expect_format("1.000...0001", &q, "1000000001n");
    snprintf(in + 3002, sizeof(in) - 3002, "1Ki");
    q = must_parse(in);
    expect_format("1.000...0001Ki", &q, "1024000000001n");
    cr_expect_eq(ks_quantity_value(&q), 1025);

    /* leading zeros are not significant either */
    memset(in, '0', 3000);
    snprintf(in + 3000, sizeof(in) - 3000, "42Mi");
    q = must_parse(in);
    expect_format("000...42Mi", &q, "42Mi");

    /* a binary whole part past int64 caps without overflowing */
    memset(in, '9', 200);
    snprintf(in + 200, sizeof(in) - 200, "Ki");
    q = must_parse(in);
    snprintf(want, sizeof(want), "%" PRId64, INT64_MAX);
    expect_format("999...9Ki", &q, want);
    cr_expect_eq(q.huge, 0);
}

/* ---- round trips ----------------------------------------------------------------------------- */

Test(quantity, canonical_text_round_trips)
{
    static const char *const suffix[] = {"",   "n",  "u",  "m",  "k",  "M",  "G",   "T",  "P",   "E",
                                         "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "e-7", "e4", "E29", "e-9"};
    uint64_t x = 0x2545f4914f6cdd1du;

    for (int i = 0; i < 20000; i++) {
        char in[80], text[KS_QUANTITY_STR_MAX], again[KS_QUANTITY_STR_MAX];
        struct ks_quantity q, r;
        unsigned frac;

        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        frac = (unsigned)(x >> 60) % 12;
        snprintf(in, sizeof(in), "%s%" PRIu64 ".%0*u%s", (x & 1) ? "-" : "", (x >> 1) >> (x % 60), (int)frac,
                 (unsigned)(x % 1000000000u) % (frac ? 1000000000u : 1u), suffix[(x >> 8) % 20]);
        if (frac == 0)
            snprintf(in, sizeof(in), "%s%" PRIu64 "%s", (x & 1) ? "-" : "", (x >> 1) >> (x % 60),
                     suffix[(x >> 8) % 20]);
        q = must_parse(in);
        cr_assert_eq(ks_quantity_format(&q, text, sizeof(text)), 0, "format(%s) failed", in);
        r = must_parse(text);
        cr_assert(r.sign == q.sign && r.coef_hi == q.coef_hi && r.coef_lo == q.coef_lo && r.exp == q.exp,
                  "%s -> %s does not parse back to the same value", in, text);
        cr_assert_eq(ks_quantity_format(&r, again, sizeof(again)), 0);
        cr_assert_str_eq(again, text, "%s: %s reformats as %s", in, text, again);
        cr_assert_eq(ks_quantity_value(&r), ks_quantity_value(&q), "%s: Value changed over %s", in, text);
        cr_assert_eq(ks_quantity_milli_value(&r), ks_quantity_milli_value(&q), "%s: MilliValue changed", in);
    }
}

/* Quantity.Cmp, Add and Sub: exact on mixed suffixes and exponents (upstream's TestQuantityCmp, TestAdd). */
Test(quantity, compares_adds_and_subtracts_exactly)
{
    static const struct {
        const char *a, *b;
        int cmp;
        const char *sum, *diff;
    } cases[] = {
        {"1Gi", "1024Mi", 0, "2Gi", "0"},
        {"1", "1000m", 0, "2", "0"},
        {"100m", "0.1", 0, "200m", "0"},
        {"1", "2", -1, "3", "-1"},
        {"2Gi", "1G", 1, "3147483648", "1147483648"},
        {"-1", "1", -1, "0", "-2"},
        {"1e30", "1", 1, "1000000000000000000000000000001", "999999999999999999999999999999"},
        {"1n", "1E", -1, "1000000000000000000000000001n", "-999999999999999999999999999n"},
        {"0", "5Ki", -1, "5Ki", "-5Ki"},
        {"1.5", "1500m", 0, "3", "0"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ks_quantity a = must_parse(cases[i].a), b = must_parse(cases[i].b), s = a, d = a;
        char text[KS_QUANTITY_STR_MAX];

        cr_assert_eq(ks_quantity_cmp(&a, &b), cases[i].cmp, "cmp(%s, %s)", cases[i].a, cases[i].b);
        cr_assert_eq(ks_quantity_cmp(&b, &a), -cases[i].cmp, "cmp(%s, %s)", cases[i].b, cases[i].a);
        cr_assert_eq(ks_quantity_add(&s, &b), 0);
        cr_assert_eq(ks_quantity_format(&s, text, sizeof(text)), 0);
        cr_assert_str_eq(text, cases[i].sum, "%s + %s", cases[i].a, cases[i].b);
        cr_assert_eq(ks_quantity_sub(&d, &b), 0);
        cr_assert_eq(ks_quantity_format(&d, text, sizeof(text)), 0);
        cr_assert_str_eq(text, cases[i].diff, "%s - %s", cases[i].a, cases[i].b);
    }
}

Test(quantity, cmp_orders_values_whose_alignment_overflows)
{
    struct ks_quantity big = must_parse("1e60"), small = must_parse("123456789123456789123456789n"), s = big;

    cr_assert_eq(ks_quantity_cmp(&big, &small), 1);
    cr_assert_eq(ks_quantity_cmp(&small, &big), -1);
    cr_assert_eq(ks_quantity_add(&s, &small), -ERANGE, "the exact sum needs more than 128 bits");
    cr_assert_eq(ks_quantity_cmp(&s, &big), 0, "a failed add leaves its operand unchanged");
}
