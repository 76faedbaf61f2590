/*
 * cel_strings.c - the strings extension library at the version Kubernetes enables
 * (ext.Strings(ext.StringsVersion(2))): charAt, indexOf, lastIndexOf, lowerAscii, upperAscii,
 * replace, split, substring, trim, join and strings.quote.
 *
 * Mirrors cel-go ext/strings.go: indexes count code points; "index out of range: N" and
 * "invalid substring range. start: S, end: E" are its errors; replace and split are Go's
 * strings.Replace and strings.SplitN (an empty separator splits into code points; a limit of
 * 0 gives no parts); trim is strings.TrimSpace (Unicode white space); the ASCII case
 * functions leave other characters alone; join fails on a non-string element ("join: invalid
 * input: x"). format() is not implemented (see the module's report).
 */
#include <string.h>

#include "cel_internal.h"

#define IMPL(name)                                                                                           \
    static struct ks_cel_value name(struct cel_ctx *c, const struct cel_expr *e,                             \
                                    const struct ks_cel_value *a, uint32_t n)

/* The code points of a string, decoded into scratch (invalid bytes read as U+FFFD, one each). */
static int32_t *runes(struct cel_ctx *c, const struct ks_cel_value *s, size_t *count)
{
    size_t len = s->v.str.len;
    int32_t *r = ks__cel_salloc(c, (len ? len : 1) * sizeof(*r));
    size_t k = 0;
    for (size_t i = 0; i < len;) {
        size_t l = 1;
        int32_t cp = (unsigned char)s->v.str.p[i];
        if (cp >= 0x80) {
            cp = ks__cel_utf8_decode(s->v.str.p + i, len - i, &l);
            if (cp < 0)
                cp = 0xfffd;
        }
        r[k++] = cp;
        i += l;
    }
    *count = k;
    return r;
}

static struct ks_cel_value from_runes(struct cel_ctx *c, const int32_t *r, size_t n)
{
    char *p = ks__cel_salloc(c, n * 4 + 1);
    size_t o = 0;
    for (size_t i = 0; i < n; i++)
        o += ks__cel_utf8_encode((uint32_t)r[i], p + o);
    return ks__cel_str(KS_CEL_STRING, p, o);
}

static struct ks_cel_value range_error(struct cel_ctx *c, int64_t i)
{
    return ks__cel_errf(c, "index out of range: %lld", (long long)i);
}

IMPL(char_at)
{
    (void)e;
    (void)n;
    size_t len;
    int32_t *r = runes(c, &a[0], &len);
    int64_t i = a[1].v.i;
    if (i < 0 || (uint64_t)i > len)
        return range_error(c, i);
    if ((size_t)i == len)
        return ks__cel_str(KS_CEL_STRING, "", 0);
    return from_runes(c, r + i, 1);
}

static bool match_at(const int32_t *r, const int32_t *sub, size_t m)
{
    for (size_t j = 0; j < m; j++)
        if (r[j] != sub[j])
            return false;
    return true;
}

IMPL(index_of)
{
    (void)e;
    int64_t off = n == 3 ? a[2].v.i : 0;
    if (a[1].v.str.len == 0)
        return ks__cel_int(off);
    size_t len, m;
    int32_t *r = runes(c, &a[0], &len);
    int32_t *sub = runes(c, &a[1], &m);
    if (off < 0)
        return range_error(c, off);
    if ((uint64_t)off >= len)
        return ks__cel_int(-1);
    for (size_t i = (size_t)off; i + m <= len; i++)
        if (match_at(r + i, sub, m))
            return ks__cel_int((int64_t)i);
    return ks__cel_int(-1);
}

IMPL(last_index_of)
{
    (void)e;
    size_t len, m;
    int32_t *r = runes(c, &a[0], &len);
    if (a[1].v.str.len == 0)
        return ks__cel_int(n == 3 ? a[2].v.i : (int64_t)len);
    int64_t off;
    if (n == 3) {
        off = a[2].v.i;
    } else {
        if (a[0].v.str.len < a[1].v.str.len)
            return ks__cel_int(-1);
        off = (int64_t)len - 1;
    }
    int32_t *sub = runes(c, &a[1], &m);
    if (off < 0)
        return range_error(c, off);
    if ((uint64_t)off >= len)
        return ks__cel_int(-1);
    if (off > (int64_t)len - (int64_t)m)
        off = (int64_t)len - (int64_t)m;
    for (int64_t i = off; i >= 0; i--)
        if (match_at(r + i, sub, m))
            return ks__cel_int(i);
    return ks__cel_int(-1);
}

static struct ks_cel_value ascii_case(struct cel_ctx *c, const struct ks_cel_value *s, bool upper)
{
    size_t len;
    int32_t *r = runes(c, s, &len);
    for (size_t i = 0; i < len; i++) {
        if (upper && r[i] >= 'a' && r[i] <= 'z')
            r[i] -= 32;
        else if (!upper && r[i] >= 'A' && r[i] <= 'Z')
            r[i] += 32;
    }
    return from_runes(c, r, len);
}

IMPL(lower_ascii)
{
    (void)e;
    (void)n;
    return ascii_case(c, &a[0], false);
}

IMPL(upper_ascii)
{
    (void)e;
    (void)n;
    return ascii_case(c, &a[0], true);
}

/* The byte length of the UTF-8 sequence at p[0..n) as Go's range loop steps (1 for an invalid byte). */
static size_t step(const char *p, size_t n)
{
    size_t l = 1;
    if ((unsigned char)p[0] >= 0x80)
        ks__cel_utf8_decode(p, n, &l);
    return l;
}

/* strings.Replace(s, old, new, limit) */
IMPL(replace)
{
    (void)e;
    int64_t limit = n == 4 ? a[3].v.i : -1;
    const char *s = a[0].v.str.p, *old = a[1].v.str.p;
    size_t sl = a[0].v.str.len, ol = a[1].v.str.len;
    if (limit == 0)
        return a[0];
    struct cel_ssb b = {.c = c};
    size_t i = 0;
    int64_t done = 0;
    if (ol == 0) {
        /* before the first code point and after each one */
        for (;;) {
            if (limit >= 0 && done >= limit) {
                ks__cel_ssb_putn(&b, s + i, sl - i);
                break;
            }
            ks__cel_ssb_putn(&b, a[2].v.str.p, a[2].v.str.len);
            done++;
            if (i >= sl)
                break;
            size_t l = step(s + i, sl - i);
            ks__cel_ssb_putn(&b, s + i, l);
            i += l;
        }
        return ks__cel_ssb_value(&b, KS_CEL_STRING);
    }
    while (i <= sl) {
        const char *hit = (limit < 0 || done < limit) && sl - i >= ol ? memmem(s + i, sl - i, old, ol) : NULL;
        if (!hit) {
            ks__cel_ssb_putn(&b, s + i, sl - i);
            break;
        }
        ks__cel_ssb_putn(&b, s + i, (size_t)(hit - (s + i)));
        ks__cel_ssb_putn(&b, a[2].v.str.p, a[2].v.str.len);
        i = (size_t)(hit - s) + ol;
        done++;
    }
    if (done == 0)
        return a[0];
    return ks__cel_ssb_value(&b, KS_CEL_STRING);
}

/* strings.SplitN(s, sep, limit) */
IMPL(split)
{
    (void)e;
    int64_t limit = n == 3 ? a[2].v.i : -1;
    if (limit == 0)
        return ks__cel_make_list(c, NULL, 0);
    const char *s = a[0].v.str.p, *sep = a[1].v.str.p;
    size_t sl = a[0].v.str.len, pl = a[1].v.str.len;
    uint32_t cap = 8, cnt = 0;
    struct ks_cel_value *items = ks__cel_salloc(c, cap * sizeof(*items));
#define PUSH(p, l)                                                                                           \
    do {                                                                                                     \
        if (cnt == cap) {                                                                                    \
            struct ks_cel_value *ni = ks__cel_salloc(c, cap * 2 * sizeof(*ni));                              \
            memcpy(ni, items, cnt * sizeof(*ni));                                                            \
            items = ni;                                                                                      \
            cap *= 2;                                                                                        \
        }                                                                                                    \
        items[cnt++] = ks__cel_str(KS_CEL_STRING, (p), (l));                                                 \
    } while (0)
    if (pl == 0) {
        size_t i = 0;
        while (i < sl) {
            if (limit > 0 && (int64_t)cnt == limit - 1) {
                PUSH(s + i, sl - i);
                i = sl;
                break;
            }
            size_t l = step(s + i, sl - i);
            PUSH(s + i, l);
            i += l;
        }
        return ks__cel_make_list(c, items, cnt);
    }
    size_t i = 0;
    for (;;) {
        const char *hit = NULL;
        if (!(limit > 0 && (int64_t)cnt == limit - 1) && sl - i >= pl)
            hit = memmem(s + i, sl - i, sep, pl);
        if (!hit) {
            PUSH(s + i, sl - i);
            break;
        }
        PUSH(s + i, (size_t)(hit - (s + i)));
        i = (size_t)(hit - s) + pl;
    }
#undef PUSH
    return ks__cel_make_list(c, items, cnt);
}

IMPL(substring)
{
    (void)e;
    size_t len;
    int32_t *r = runes(c, &a[0], &len);
    int64_t start = a[1].v.i, end = n == 3 ? a[2].v.i : (int64_t)len;
    if (n == 3 && start > end)
        return ks__cel_errf(c, "invalid substring range. start: %lld, end: %lld", (long long)start,
                            (long long)end);
    if (start < 0 || (uint64_t)start > len)
        return range_error(c, start);
    if (end < 0 || (uint64_t)end > len)
        return range_error(c, end);
    return from_runes(c, r + start, (size_t)(end - start));
}

static bool is_space(int32_t r)
{
    switch (r) {
    case '\t':
    case '\n':
    case '\v':
    case '\f':
    case '\r':
    case ' ':
    case 0x85:
    case 0xa0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202f:
    case 0x205f:
    case 0x3000:
        return true;
    default:
        return r >= 0x2000 && r <= 0x200a;
    }
}

IMPL(trim)
{
    (void)e;
    (void)n;
    const char *s = a[0].v.str.p;
    size_t len = a[0].v.str.len, i = 0, j = len;
    while (i < len) {
        size_t l;
        int32_t cp = ks__cel_utf8_decode(s + i, len - i, &l);
        if (cp < 0 || !is_space(cp))
            break;
        i += l;
    }
    while (j > i) {
        /* back up to the start of the last sequence */
        size_t k = j - 1;
        while (k > i && ((unsigned char)s[k] & 0xc0) == 0x80 && j - k < 4)
            k--;
        size_t l;
        int32_t cp = ks__cel_utf8_decode(s + k, j - k, &l);
        if (cp < 0 || k + l != j || !is_space(cp))
            break;
        j = k;
    }
    (void)c;
    return ks__cel_str(KS_CEL_STRING, s + i, j - i);
}

IMPL(join)
{
    (void)e;
    struct cel_ssb b = {.c = c};
    uint32_t sz = ks__cel_agg_size(&a[0]);
    for (uint32_t i = 0; i < sz; i++) {
        struct ks_cel_value x = ks__cel_list_at(c, &a[0], i);
        if (x.kind != KS_CEL_STRING) {
            struct cel_sb t = {0};
            ks__cel_value_fmt(&t, &x);
            struct ks_cel_value r = ks__cel_errf(c, "join: invalid input: %s", t.p ? t.p : "");
            ks__cel_sb_free(&t);
            return r;
        }
        if (i && n == 2)
            ks__cel_ssb_putn(&b, a[1].v.str.p, a[1].v.str.len);
        ks__cel_ssb_putn(&b, x.v.str.p, x.v.str.len);
    }
    return ks__cel_ssb_value(&b, KS_CEL_STRING);
}

IMPL(quote)
{
    (void)e;
    (void)n;
    struct cel_ssb b = {.c = c};
    const char *s = a[0].v.str.p;
    size_t len = a[0].v.str.len;
    ks__cel_ssb_putc(&b, '"');
    for (size_t i = 0; i < len;) {
        size_t l;
        int32_t cp = ks__cel_utf8_decode(s + i, len - i, &l);
        if (cp < 0) {
            ks__cel_ssb_putn(&b, "\xef\xbf\xbd", 3);
            i += l;
            continue;
        }
        const char *esc = NULL;
        switch (cp) {
        case '\a':
            esc = "\\a";
            break;
        case '\b':
            esc = "\\b";
            break;
        case '\f':
            esc = "\\f";
            break;
        case '\n':
            esc = "\\n";
            break;
        case '\r':
            esc = "\\r";
            break;
        case '\t':
            esc = "\\t";
            break;
        case '\v':
            esc = "\\v";
            break;
        case '\\':
            esc = "\\\\";
            break;
        case '"':
            esc = "\\\"";
            break;
        default:
            break;
        }
        if (esc)
            ks__cel_ssb_putn(&b, esc, 2);
        else
            ks__cel_ssb_putn(&b, s + i, l);
        i += l;
    }
    ks__cel_ssb_putc(&b, '"');
    return ks__cel_ssb_value(&b, KS_CEL_STRING);
}

#define MEM CEL_OVL_MEMBER
/* Kubernetes' CostEstimator prices these by name (library/cost.go); the others cost 1. */
const struct cel_decl ks__cel_strings_decls[] = {
    {"charAt", "string_char_at_int", MEM, 0, "string, int -> string", char_at},
    {"indexOf", "string_index_of_string", MEM, CEL_COST_TRAVERSE0, "string, string -> int", index_of},
    {"indexOf", "string_index_of_string_int", MEM, CEL_COST_TRAVERSE0, "string, string, int -> int",
     index_of},
    {"lastIndexOf", "string_last_index_of_string", MEM, CEL_COST_TRAVERSE0, "string, string -> int",
     last_index_of},
    {"lastIndexOf", "string_last_index_of_string_int", MEM, CEL_COST_TRAVERSE0, "string, string, int -> int",
     last_index_of},
    {"lowerAscii", "string_lower_ascii", MEM, CEL_COST_STR0, "string -> string", lower_ascii},
    {"replace", "string_replace_string_string", MEM, CEL_COST_STR0_X2, "string, string, string -> string",
     replace},
    {"replace", "string_replace_string_string_int", MEM, CEL_COST_STR0_X2,
     "string, string, string, int -> string", replace},
    {"split", "string_split_string", MEM, CEL_COST_STR0_X2, "string, string -> list(string)", split},
    {"split", "string_split_string_int", MEM, CEL_COST_STR0_X2, "string, string, int -> list(string)", split},
    {"substring", "string_substring_int", MEM, CEL_COST_STR0, "string, int -> string", substring},
    {"substring", "string_substring_int_int", MEM, CEL_COST_STR0, "string, int, int -> string", substring},
    {"trim", "string_trim", MEM, CEL_COST_STR0, "string -> string", trim},
    {"upperAscii", "string_upper_ascii", MEM, CEL_COST_STR0, "string -> string", upper_ascii},
    {"strings.quote", "strings_quote", 0, CEL_COST_STR0, "string -> string", quote},
    {"join", "list_join", MEM, CEL_COST_RESULT_X2, "list(string) -> string", join},
    {"join", "list_join_string", MEM, CEL_COST_RESULT_X2, "list(string), string -> string", join},
    {NULL, NULL, 0, 0, NULL, NULL},
};
