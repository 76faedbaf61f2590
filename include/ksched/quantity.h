/*
 * quantity.h - Kubernetes resource quantities ("100m", "1.5Gi", "1e3"): parsing, the integer
 * projections plugins use (Value, MilliValue) and the canonical text form.
 *
 * Mirrors k8s.io/apimachinery/pkg/api/resource (quantity.go, suffix.go, amount.go, math.go,
 * scale_int.go). Every function here is pure: callable from any thread, never blocks, never
 * allocates. A struct ks_quantity is a plain value; copy it freely.
 */
#ifndef KSCHED_QUANTITY_H
#define KSCHED_QUANTITY_H

#include <stddef.h>
#include <stdint.h>

/* The notation a quantity was written in; it decides the suffix family of its canonical text. */
enum ks_quantity_fmt {
    KS_QUANTITY_DECIMAL_SI = 0,   /* "", n u m k M G T P E */
    KS_QUANTITY_BINARY_SI,        /* Ki Mi Gi Ti Pi Ei */
    KS_QUANTITY_DECIMAL_EXPONENT, /* e<N> or E<N> */
};

/* Buffer size that always holds ks_quantity_format() output, terminating NUL included. */
#define KS_QUANTITY_STR_MAX 64

/*
 * An exact decimal: sign * coef * 10^exp, with coef = coef_hi:coef_lo as an unsigned 128-bit
 * integer. Treat the fields as read-only; only ks_quantity_parse() builds them. A zeroed struct
 * is the quantity 0.
 *
 * After parsing: coef has no trailing decimal zero, exp >= -9 (values are rounded up, away from
 * zero, to a multiple of 1n as upstream does), sign is 0 exactly when the value is 0, and a
 * BinarySI magnitude never exceeds INT64_MAX (upstream caps it). A DecimalSI or exponent value
 * whose significant digits do not fit 128 bits (magnitude above about 3.4e29), or whose
 * canonical text would not fit KS_QUANTITY_STR_MAX (some values of 1e2147483648 and up), sets huge: its
 * sign stays exact, the integer projections saturate as they would anyway, and
 * ks_quantity_format() refuses it with -ERANGE.
 */
struct ks_quantity {
    uint64_t coef_lo;
    uint64_t coef_hi;
    int64_t exp;
    int8_t sign;  /* -1, 0 or 1 */
    uint8_t fmt;  /* enum ks_quantity_fmt */
    uint8_t huge; /* 1: too many significant digits to keep; coef and exp are meaningless */
};

/*
 * ks_quantity_parse - parse a NUL-terminated quantity string, like resource.ParseQuantity.
 *
 * Grammar: [+-] [digits] [. [digits]] suffix, where suffix is one of "" n u m k M G T P E
 * (DecimalSI), Ki Mi Gi Ti Pi Ei (BinarySI), or e/E followed by a signed integer within
 * +-2147483647 (DecimalExponent). Like upstream, a number without any digit reads as 0 ("+",
 * "-.", "m", "Ki") except with Pi, Ei or an exponent below -9, and the empty string is invalid.
 * No whitespace is allowed anywhere; upstream's JSON and YAML decoders trim it before parsing,
 * so a caller reading such documents must trim too. Negative values parse; rejecting them for
 * requests is the caller's business.
 *
 * Returns 0 and fills *out, or -EINVAL (out untouched) when s is NULL or not a quantity.
 */
int ks_quantity_parse(const char *s, struct ks_quantity *out);

/*
 * ks_quantity_parse_n - ks_quantity_parse() on the n bytes at s, which need not be
 * NUL-terminated (a byte 0 inside them makes the input invalid).
 */
int ks_quantity_parse_n(const char *s, size_t n, struct ks_quantity *out);

/*
 * ks_quantity_value - the value as an int64, like Quantity.Value(): fractions round away from
 * zero ("1m" -> 1, "1.5" -> 2, "-1.5" -> -2) and values outside int64 saturate to INT64_MAX or
 * INT64_MIN, as upstream does since its overflow fixes.
 */
int64_t ks_quantity_value(const struct ks_quantity *q);

/*
 * ks_quantity_milli_value - the value in thousandths as an int64, like Quantity.MilliValue():
 * ceil(q * 1000) away from zero, saturating like ks_quantity_value().
 */
int64_t ks_quantity_milli_value(const struct ks_quantity *q);

/*
 * ks_quantity_value_checked - ks_quantity_value() that also reports saturation (upstream's
 * AsScaledInt64(0)). Stores the possibly saturated value in *out; returns 0, or -ERANGE when
 * the value did not fit an int64.
 */
int ks_quantity_value_checked(const struct ks_quantity *q, int64_t *out);

/*
 * ks_quantity_milli_value_checked - ks_quantity_milli_value() that also reports saturation
 * (upstream's AsMilliInt64). Returns 0, or -ERANGE when the milli value did not fit an int64.
 */
int ks_quantity_milli_value_checked(const struct ks_quantity *q, int64_t *out);

/* ks_quantity_sign - -1, 0 or 1, like Quantity.Sign(). */
int ks_quantity_sign(const struct ks_quantity *q);

/*
 * ks_quantity_cmp - -1, 0 or 1 as @a is less than, equal to or greater than @b, exactly
 * (Quantity.Cmp). A huge quantity is larger in magnitude than any other; two of the same
 * sign compare equal.
 */
int ks_quantity_cmp(const struct ks_quantity *a, const struct ks_quantity *b);

/*
 * ks_quantity_add, ks_quantity_sub - *@a += @b, *@a -= @b, exactly (Quantity.Add, Sub). @a
 * keeps its format, or takes @b's when @a is zero. Returns 0, or -ERANGE (and @a is left
 * unchanged) when either is huge or the exact result needs more than 128 bits of digits.
 */
int ks_quantity_add(struct ks_quantity *a, const struct ks_quantity *b);
int ks_quantity_sub(struct ks_quantity *a, const struct ks_quantity *b);

/*
 * ks_quantity_format - write the canonical text of q into buf, as upstream's CanonicalizeBytes
 * builds it: the largest suffix that keeps the number an integer ("1.5Gi" -> "1536Mi", "0.1" ->
 * "100m", "1000" -> "1k", "1e3" -> "1e3"); BinarySI falls back to DecimalSI below 1024 or when
 * fractional; DecimalSI past "E" or below "n" falls back to the e<N> form ("1000E" -> "1e21").
 *
 * Upstream's String() additionally echoes the original input for some inputs that already look
 * canonical ("+1", "1.", "1E3", "1.500" print themselves there); this function always returns
 * the canonical form, which is what String() gives for every value not taken verbatim.
 *
 * Returns 0; -ENOSPC when len is too small (KS_QUANTITY_STR_MAX always suffices; buf then holds
 * "" when len > 0); -ERANGE for a huge quantity (or a hand-built one with an absurd exp);
 * -EINVAL for NULL arguments.
 */
int ks_quantity_format(const struct ks_quantity *q, char *buf, size_t len);

#endif /* KSCHED_QUANTITY_H */
