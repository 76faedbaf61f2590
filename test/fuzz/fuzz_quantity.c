/*
 * fuzz_quantity.c - libFuzzer target: resource.Quantity text through ks_quantity_parse_n()
 * and everything that reads a parsed quantity (api/quantity.c).
 *
 * Checked beyond sanitizers: parse_n and parse of the same NUL-free text agree; a parsed
 * value keeps the invariants quantity.h states (sign 0 exactly for 0, coef without a
 * trailing decimal zero, exp >= -9, BinarySI within int64); the checked projections agree
 * with the saturating ones; the canonical text parses back to the same value.
 */
#include "fuzz_common.h"

#include "ksched/quantity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same_value(const struct ks_quantity *a, const struct ks_quantity *b)
{
    return a->sign == b->sign && a->coef_lo == b->coef_lo && a->coef_hi == b->coef_hi && a->exp == b->exp &&
           a->huge == b->huge;
}

static void check_projections(const struct ks_quantity *q)
{
    int64_t v, mv;
    int rc = ks_quantity_value_checked(q, &v);
    ks_fuzz_check(rc == 0 || rc == -ERANGE, "value_checked rc %d", rc);
    ks_fuzz_check(v == ks_quantity_value(q), "value_checked %lld != value %lld", (long long)v,
                  (long long)ks_quantity_value(q));
    rc = ks_quantity_milli_value_checked(q, &mv);
    ks_fuzz_check(rc == 0 || rc == -ERANGE, "milli_value_checked rc %d", rc);
    ks_fuzz_check(mv == ks_quantity_milli_value(q), "milli_value_checked %lld != milli_value %lld",
                  (long long)mv, (long long)ks_quantity_milli_value(q));
    int sign = ks_quantity_sign(q);
    ks_fuzz_check(sign == q->sign, "sign %d vs field %d", sign, q->sign);
    /* rounding away from zero keeps the sign of every non-zero value */
    ks_fuzz_check(sign == 0 ? v == 0 && mv == 0 : (v > 0) == (sign > 0) && (mv > 0) == (sign > 0) && v && mv,
                  "sign %d but value %lld milli %lld", sign, (long long)v, (long long)mv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ks_quantity q, q2;
    const char *s = (const char *)data;
    int rc = ks_quantity_parse_n(s, size, &q);

    ks_fuzz_check(rc == 0 || rc == -EINVAL, "parse_n rc %d", rc);
    if (!memchr(data, 0, size)) {
        char *z = malloc(size + 1);
        if (!z)
            return 0;
        memcpy(z, data, size);
        z[size] = '\0';
        int rc2 = ks_quantity_parse(z, &q2);
        free(z);
        ks_fuzz_check(rc2 == rc, "parse rc %d but parse_n rc %d", rc2, rc);
        ks_fuzz_check(rc || same_value(&q, &q2), "parse and parse_n disagree");
    }
    if (rc)
        return 0;

    ks_fuzz_check(q.sign >= -1 && q.sign <= 1 && q.fmt <= KS_QUANTITY_DECIMAL_EXPONENT, "bad sign/fmt");
    if (!q.huge) {
        int zero = q.coef_lo == 0 && q.coef_hi == 0;
        ks_fuzz_check(zero == (q.sign == 0), "sign %d for coef zero=%d", q.sign, zero);
        /* coef mod 10, with 2^64 = 6 (mod 10) */
        ks_fuzz_check(zero || ((q.coef_hi % 10) * 6 + q.coef_lo % 10) % 10 != 0, "coef has a trailing zero");
        ks_fuzz_check(q.exp >= -9, "exp %lld below -9", (long long)q.exp);
    }
    check_projections(&q);

    char buf[KS_QUANTITY_STR_MAX];
    rc = ks_quantity_format(&q, buf, sizeof(buf));
    ks_fuzz_check(rc == 0 || (rc == -ERANGE && q.huge), "format rc %d (huge %d)", rc, q.huge);
    if (rc)
        return 0;
    ks_fuzz_check(memchr(buf, 0, sizeof(buf)) != NULL, "format without NUL");
    rc = ks_quantity_parse(buf, &q2);
    ks_fuzz_check(rc == 0, "canonical text \"%s\" does not parse", buf);
    ks_fuzz_check(same_value(&q, &q2), "canonical text \"%s\" parses to another value", buf);

    /* a too small buffer is refused cleanly */
    size_t need = strlen(buf) + 1;
    char small[KS_QUANTITY_STR_MAX];
    rc = ks_quantity_format(&q, small, need - 1);
    ks_fuzz_check(rc == -ENOSPC && (need - 1 == 0 || small[0] == '\0'), "format into %zu bytes rc %d",
                  need - 1, rc);
    return 0;
}
