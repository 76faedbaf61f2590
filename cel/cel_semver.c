/*
 * cel_semver.c - Kubernetes' semver library for CEL (library.SemverLib at version 1):
 * semver(s[, normalize]), isSemver(s[, normalize]), major, minor, patch, isGreaterThan,
 * isLessThan and compareTo on the kubernetes.Semver type.
 *
 * Mirrors k8s.io/apiserver/pkg/cel/library/semverlib.go and the parser it uses,
 * github.com/blang/semver/v4 Parse (MAJOR.MINOR.PATCH with no leading zeros, dot-separated
 * pre-release identifiers, build metadata checked then dropped; its error texts, such as
 * "No Major.Minor.Patch elements found" or "Invalid character(s) found in major number \"x\"")
 * and Version.Compare (numbers, then pre-release: a release is greater than its
 * pre-releases, numeric identifiers are less than alphanumeric ones). Normalization drops a
 * leading "v", leading zeros and completes a short version with zeros.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cel_internal.h"

#define IMPL(name)                                                                                           \
    static struct ks_cel_value name(struct cel_ctx *c, const struct cel_expr *e,                             \
                                    const struct ks_cel_value *a, uint32_t n)

static bool only(const char *s, size_t n, bool alnum)
{
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        bool ok = (ch >= '0' && ch <= '9') ||
                  (alnum && ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '-'));
        if (!ok)
            return false;
    }
    return true;
}

/* Go's %q of a string (ASCII printable kept, others escaped). */
static void goquote(char *out, size_t cap, const char *s, size_t n)
{
    size_t o = 0;
    if (cap < 4)
        return;
    out[o++] = '"';
    for (size_t i = 0; i < n && o + 6 < cap; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\') {
            out[o++] = '\\';
            out[o++] = (char)ch;
        } else if (ch >= 0x20 && ch < 0x7f) {
            out[o++] = (char)ch;
        } else if (ch >= 0x80) {
            out[o++] = (char)ch;
        } else {
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", ch);
        }
    }
    out[o++] = '"';
    out[o] = 0;
}

/* strconv.ParseUint(s, 10, 64) */
static int parse_u64(const char *s, size_t n, uint64_t *v, char *err, size_t errlen)
{
    uint64_t x = 0;
    if (n == 0) {
        snprintf(err, errlen, "strconv.ParseUint: parsing \"\": invalid syntax");
        return -EINVAL;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (x > (UINT64_MAX - d) / 10) {
            snprintf(err, errlen, "strconv.ParseUint: parsing \"%.*s\": value out of range", (int)n, s);
            return -ERANGE;
        }
        x = x * 10 + d;
    }
    *v = x;
    return 0;
}

/* blang/semver Parse. */
static int parse(const char *s, size_t n, struct ks_cel_value *out, char *err, size_t errlen)
{
    char q[96];
    if (n == 0) {
        snprintf(err, errlen, "Version string empty");
        return -EINVAL;
    }
    const char *d1 = memchr(s, '.', n);
    const char *d2 = d1 ? memchr(d1 + 1, '.', (size_t)(s + n - d1 - 1)) : NULL;
    if (!d1 || !d2) {
        snprintf(err, errlen, "No Major.Minor.Patch elements found");
        return -EINVAL;
    }
    const char *parts[2] = {s, d1 + 1};
    size_t lens[2] = {(size_t)(d1 - s), (size_t)(d2 - d1 - 1)};
    const char *names[2] = {"major", "minor"};
    const char *caps[2] = {"Major", "Minor"};
    uint64_t nums[3];
    for (int i = 0; i < 2; i++) {
        goquote(q, sizeof(q), parts[i], lens[i]);
        if (!only(parts[i], lens[i], false)) {
            snprintf(err, errlen, "Invalid character(s) found in %s number %s", names[i], q);
            return -EINVAL;
        }
        if (lens[i] > 1 && parts[i][0] == '0') {
            snprintf(err, errlen, "%s number must not contain leading zeroes %s", caps[i], q);
            return -EINVAL;
        }
        if (parse_u64(parts[i], lens[i], &nums[i], err, errlen))
            return -EINVAL;
    }
    const char *p = d2 + 1;
    size_t pl = (size_t)(s + n - p);
    const char *build = memchr(p, '+', pl);
    size_t patch_len = build ? (size_t)(build - p) : pl;
    const char *pre = memchr(p, '-', patch_len);
    const char *pre_end = p + patch_len;
    if (pre)
        patch_len = (size_t)(pre - p);
    goquote(q, sizeof(q), p, patch_len);
    if (!only(p, patch_len, false)) {
        snprintf(err, errlen, "Invalid character(s) found in patch number %s", q);
        return -EINVAL;
    }
    if (patch_len > 1 && p[0] == '0') {
        snprintf(err, errlen, "Patch number must not contain leading zeroes %s", q);
        return -EINVAL;
    }
    if (parse_u64(p, patch_len, &nums[2], err, errlen))
        return -EINVAL;
    if (pre) {
        const char *it = pre + 1;
        for (;;) {
            const char *dot = memchr(it, '.', (size_t)(pre_end - it));
            size_t l = dot ? (size_t)(dot - it) : (size_t)(pre_end - it);
            goquote(q, sizeof(q), it, l);
            if (l == 0) {
                snprintf(err, errlen, "Prerelease is empty");
                return -EINVAL;
            }
            if (only(it, l, false)) {
                uint64_t x;
                if (l > 1 && it[0] == '0') {
                    snprintf(err, errlen, "Numeric PreRelease version must not contain leading zeroes %s", q);
                    return -EINVAL;
                }
                if (parse_u64(it, l, &x, err, errlen))
                    return -EINVAL;
            } else if (!only(it, l, true)) {
                snprintf(err, errlen, "Invalid character(s) found in prerelease %s", q);
                return -EINVAL;
            }
            if (!dot)
                break;
            it = dot + 1;
        }
    }
    if (build) {
        const char *it = build + 1, *end = s + n;
        for (;;) {
            const char *dot = memchr(it, '.', (size_t)(end - it));
            size_t l = dot ? (size_t)(dot - it) : (size_t)(end - it);
            if (l == 0) {
                snprintf(err, errlen, "Build meta data is empty");
                return -EINVAL;
            }
            if (!only(it, l, true)) {
                goquote(q, sizeof(q), it, l);
                snprintf(err, errlen, "Invalid character(s) found in build meta data %s", q);
                return -EINVAL;
            }
            if (!dot)
                break;
            it = dot + 1;
        }
    }
    out->kind = KS_CEL_SEMVER;
    out->v.semver.major = nums[0];
    out->v.semver.minor = nums[1];
    out->v.semver.patch = nums[2];
    out->v.semver.pre = pre ? pre + 1 : NULL;
    out->v.semver.pre_len = pre ? (size_t)(pre_end - pre - 1) : 0;
    return 0;
}

/* normalizeAndParse: the text rewritten into @buf (scratch), then parsed. */
static int normalize_parse(struct cel_ctx *c, const char *s, size_t n, struct ks_cel_value *out, char *err,
                           size_t errlen)
{
    if (n && s[0] == 'v') {
        s++;
        n--;
    }
    const char *parts[3];
    size_t lens[3];
    int np = 0;
    size_t start = 0;
    for (size_t i = 0; i <= n && np < 3; i++) {
        if (np < 2 && i < n && s[i] == '.') {
            parts[np] = s + start;
            lens[np++] = i - start;
            start = i + 1;
        } else if (i == n) {
            parts[np] = s + start;
            lens[np++] = n - start;
        }
    }
    if (np < 3 && np > 0 &&
        (memchr(parts[np - 1], '+', lens[np - 1]) || memchr(parts[np - 1], '-', lens[np - 1]))) {
        snprintf(err, errlen, "short version cannot contain PreRelease/Build meta data");
        return -EINVAL;
    }
    char *buf = ks__cel_salloc(c, n + 8);
    size_t o = 0;
    for (int i = 0; i < 3; i++) {
        if (i)
            buf[o++] = '.';
        if (i >= np) {
            buf[o++] = '0';
            continue;
        }
        const char *p = parts[i];
        size_t l = lens[i];
        if (l > 1) {
            while (l && p[0] == '0') {
                p++;
                l--;
            }
            if (l == 0 || !(p[0] >= '0' && p[0] <= '9'))
                buf[o++] = '0';
        }
        memcpy(buf + o, p, l);
        o += l;
    }
    return parse(buf, o, out, err, errlen);
}

IMPL(to_semver)
{
    (void)e;
    char err[256];
    struct ks_cel_value v;
    int rc = n == 2 && a[1].v.b ? normalize_parse(c, a[0].v.str.p, a[0].v.str.len, &v, err, sizeof(err))
                                : parse(a[0].v.str.p, a[0].v.str.len, &v, err, sizeof(err));
    if (rc)
        return ks__cel_errf(c, "%s", err);
    return v;
}

IMPL(is_semver)
{
    (void)e;
    char err[256];
    struct ks_cel_value v;
    int rc = n == 2 && a[1].v.b ? normalize_parse(c, a[0].v.str.p, a[0].v.str.len, &v, err, sizeof(err))
                                : parse(a[0].v.str.p, a[0].v.str.len, &v, err, sizeof(err));
    return ks__cel_bool(rc == 0);
}

static int cmp_u64(uint64_t a, uint64_t b)
{
    return a < b ? -1 : a > b;
}

int ks__cel_semver_cmp(const struct ks_cel_value *a, const struct ks_cel_value *b)
{
    int r = cmp_u64(a->v.semver.major, b->v.semver.major);
    if (!r)
        r = cmp_u64(a->v.semver.minor, b->v.semver.minor);
    if (!r)
        r = cmp_u64(a->v.semver.patch, b->v.semver.patch);
    if (r)
        return r;
    size_t la = a->v.semver.pre_len, lb = b->v.semver.pre_len;
    if (!la || !lb)
        return la == lb ? 0 : la == 0 ? 1 : -1;
    const char *pa = a->v.semver.pre, *pb = b->v.semver.pre, *ea = pa + la, *eb = pb + lb;
    while (pa < ea && pb < eb) {
        const char *da = memchr(pa, '.', (size_t)(ea - pa)), *db = memchr(pb, '.', (size_t)(eb - pb));
        size_t na = da ? (size_t)(da - pa) : (size_t)(ea - pa),
               nb = db ? (size_t)(db - pb) : (size_t)(eb - pb);
        bool numa = only(pa, na, false), numb = only(pb, nb, false);
        int c;
        if (numa && numb) {
            uint64_t x = 0, y = 0;
            for (size_t i = 0; i < na; i++)
                x = x * 10 + (uint64_t)(pa[i] - '0');
            for (size_t i = 0; i < nb; i++)
                y = y * 10 + (uint64_t)(pb[i] - '0');
            c = cmp_u64(x, y);
        } else if (numa != numb) {
            c = numa ? -1 : 1;
        } else {
            size_t m = na < nb ? na : nb;
            c = memcmp(pa, pb, m);
            c = c < 0 ? -1 : c > 0 ? 1 : na < nb ? -1 : na > nb;
        }
        if (c)
            return c;
        pa += na + (da ? 1 : 0);
        pb += nb + (db ? 1 : 0);
        if (!da || !db) {
            if (da || db)
                return da ? 1 : -1;
            return 0;
        }
    }
    return 0;
}

IMPL(sv_major)
{
    (void)c;
    (void)e;
    (void)n;
    return ks__cel_int((int64_t)a[0].v.semver.major);
}
IMPL(sv_minor)
{
    (void)c;
    (void)e;
    (void)n;
    return ks__cel_int((int64_t)a[0].v.semver.minor);
}
IMPL(sv_patch)
{
    (void)c;
    (void)e;
    (void)n;
    return ks__cel_int((int64_t)a[0].v.semver.patch);
}
IMPL(sv_greater)
{
    (void)c;
    (void)e;
    (void)n;
    return ks__cel_bool(ks__cel_semver_cmp(&a[0], &a[1]) == 1);
}
IMPL(sv_less)
{
    (void)c;
    (void)e;
    (void)n;
    return ks__cel_bool(ks__cel_semver_cmp(&a[0], &a[1]) == -1);
}
IMPL(sv_compare)
{
    (void)c;
    (void)e;
    (void)n;
    return ks__cel_int(ks__cel_semver_cmp(&a[0], &a[1]));
}

#define MEM CEL_OVL_MEMBER
#define S   "kubernetes.Semver"
const struct cel_decl ks__cel_semver_decls[] = {
    {"semver", "string_to_semver", 0, CEL_COST_STR0, "string -> " S, to_semver},
    {"semver", "string_bool_to_semver", 0, CEL_COST_STR0, "string, bool -> " S, to_semver},
    {"isSemver", "is_semver_string", 0, CEL_COST_STR0, "string -> bool", is_semver},
    {"isSemver", "is_semver_string_bool", 0, CEL_COST_STR0, "string, bool -> bool", is_semver},
    {"isGreaterThan", "semver_is_greater_than", MEM, 0, S ", " S " -> bool", sv_greater},
    {"isLessThan", "semver_is_less_than", MEM, 0, S ", " S " -> bool", sv_less},
    {"compareTo", "semver_compare_to", MEM, 0, S ", " S " -> int", sv_compare},
    {"major", "semver_major", MEM, 0, S " -> int", sv_major},
    {"minor", "semver_minor", MEM, 0, S " -> int", sv_minor},
    {"patch", "semver_patch", MEM, 0, S " -> int", sv_patch},
    {NULL, NULL, 0, 0, NULL, NULL},
};
