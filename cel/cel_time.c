/*
 * cel_time.c - CEL timestamps and durations: parsing and printing as Go does, arithmetic with
 * cel-go's overflow checks, and the getters (getFullYear ... getMilliseconds) in UTC or in a
 * time zone given as an IANA name or a fixed offset ("+05:30").
 *
 * Mirrors cel-go common/types/timestamp.go, duration.go and overflow.go, and common/stdlib's
 * time zone handling (inTimeZone): a duration is Go's time.Duration (int64 nanoseconds,
 * parsed by time.ParseDuration, printed as the seconds with no trailing zeros and an "s");
 * a timestamp is parsed as time.RFC3339 (fractional seconds allowed) and printed as
 * RFC3339Nano in UTC, and must lie in years 0001 to 9999 ("timestamp overflow"). Time zones
 * are read from the system's TZif files (/usr/share/zoneinfo), as Go's time.LoadLocation
 * does; its error is "unknown time zone NAME".
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel_internal.h"

#define IMPL(name)                                                                                           \
    struct ks_cel_value name(struct cel_ctx *c, const struct cel_expr *e, const struct ks_cel_value *a,      \
                             uint32_t n)
#define UNUSED_ARGS                                                                                          \
    (void)c;                                                                                                 \
    (void)e;                                                                                                 \
    (void)n;                                                                                                 \
    (void)a

#define NS_PER_S 1000000000LL

static int64_t dur_ns(const struct ks_cel_value *v)
{
    return v->v.time.seconds * NS_PER_S + v->v.time.nanos;
}

static struct ks_cel_value make_dur(int64_t ns)
{
    struct ks_cel_value v = {.kind = KS_CEL_DURATION};
    v.v.time.seconds = ns / NS_PER_S;
    v.v.time.nanos = (int32_t)(ns % NS_PER_S);
    return v;
}

static struct ks_cel_value make_ts(int64_t sec, int32_t nsec)
{
    struct ks_cel_value v = {.kind = KS_CEL_TIMESTAMP};
    v.v.time.seconds = sec;
    v.v.time.nanos = nsec;
    return v;
}

static struct ks_cel_value err_overflow(void)
{
    return ks__cel_str(KS_CEL_ERROR, "integer overflow", 16);
}

static struct ks_cel_value err_ts_overflow(void)
{
    return ks__cel_str(KS_CEL_ERROR, "timestamp overflow", 18);
}

/* ---- durations: time.ParseDuration and Duration seconds text ---------------------------------------------
 */

int ks__cel_parse_duration(const char *s, size_t n, int64_t *nanos)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+')) {
        neg = s[i] == '-';
        i++;
    }
    if (i == n - 1 && s[i] == '0') {
        *nanos = 0;
        return 0;
    }
    if (i == n)
        return -EINVAL;
    uint64_t total = 0;
    while (i < n) {
        uint64_t v = 0, f = 0;
        double scale = 1;
        if (!(s[i] == '.' || (s[i] >= '0' && s[i] <= '9')))
            return -EINVAL;
        size_t pl = i;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (v > (UINT64_MAX >> 1) / 10)
                return -ERANGE;
            v = v * 10 + (uint64_t)(s[i] - '0');
            if (v > (UINT64_MAX >> 1))
                return -ERANGE;
            i++;
        }
        bool pre = i != pl;
        bool post = false;
        if (i < n && s[i] == '.') {
            i++;
            size_t pf = i;
            bool overflow = false;
            while (i < n && s[i] >= '0' && s[i] <= '9') {
                if (!overflow) {
                    if (f > (UINT64_MAX >> 1) / 10) {
                        overflow = true;
                    } else {
                        f = f * 10 + (uint64_t)(s[i] - '0');
                        scale *= 10;
                    }
                }
                i++;
            }
            post = i != pf;
        }
        if (!pre && !post)
            return -EINVAL;
        size_t us = i;
        while (i < n && s[i] != '.' && !(s[i] >= '0' && s[i] <= '9'))
            i++;
        size_t ul = i - us;
        if (ul == 0)
            return -EINVAL;
        const char *u = s + us;
        uint64_t unit;
        if (ul == 2 && !memcmp(u, "ns", 2))
            unit = 1;
        else if ((ul == 2 && !memcmp(u, "us", 2)) || (ul == 3 && !memcmp(u, "\xc2\xb5s", 3)) ||
                 (ul == 3 && !memcmp(u, "\xce\xbcs", 3)))
            unit = 1000;
        else if (ul == 2 && !memcmp(u, "ms", 2))
            unit = 1000000;
        else if (ul == 1 && u[0] == 's')
            unit = 1000000000;
        else if (ul == 1 && u[0] == 'm')
            unit = 60ULL * 1000000000;
        else if (ul == 1 && u[0] == 'h')
            unit = 3600ULL * 1000000000;
        else
            return -EINVAL;
        if (v > (1ULL << 63) / unit)
            return -ERANGE;
        v *= unit;
        if (f > 0) {
            v += (uint64_t)((double)f * ((double)unit / scale));
            if (v > (1ULL << 63))
                return -ERANGE;
        }
        total += v;
        if (total > (1ULL << 63))
            return -ERANGE;
    }
    if (neg) {
        *nanos = (int64_t)(0 - total);
        return 0;
    }
    if (total > (uint64_t)INT64_MAX)
        return -ERANGE;
    *nanos = (int64_t)total;
    return 0;
}

size_t ks__cel_fmt_duration(char *buf, size_t cap, int64_t sec, int32_t nsec)
{
    /* FormatFloat(d.Seconds(), 'f', -1, 64): Seconds() = float64(sec) + float64(nsec)/1e9 */
    double d = (double)sec + (double)nsec / 1e9;
    char tmp[64];
    /* the shortest digits that read back */
    int prec;
    for (prec = 0; prec < 30; prec++) {
        snprintf(tmp, sizeof(tmp), "%.*f", prec, d);
        if (strtod(tmp, NULL) == d)
            break;
    }
    if (strcmp(tmp, "-0") == 0)
        snprintf(tmp, sizeof(tmp), "0");
    return (size_t)snprintf(buf, cap, "%ss", tmp);
}

/* ---- calendar
 * ------------------------------------------------------------------------------------------------ */

/* Days since 1970-01-01 of a civil date (H. Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t yy = (int64_t)yoe + era * 400;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yy + (*m <= 2);
}

static bool is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static unsigned days_in_month(int64_t y, unsigned m)
{
    static const unsigned dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : dm[m - 1];
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

/* ---- timestamps: time.Parse(time.RFC3339) and RFC3339Nano
 * ---------------------------------------------------- */

static bool digits(const char *s, size_t n, size_t at, size_t k, int *out)
{
    if (at + k > n)
        return false;
    int v = 0;
    for (size_t i = 0; i < k; i++) {
        char ch = s[at + i];
        if (ch < '0' || ch > '9')
            return false;
        v = v * 10 + (ch - '0');
    }
    *out = v;
    return true;
}

int ks__cel_parse_timestamp(const char *s, size_t n, int64_t *sec, int32_t *nsec)
{
    int Y, M, D, h, m, sc;
    if (!digits(s, n, 0, 4, &Y) || n < 5 || s[4] != '-' || !digits(s, n, 5, 2, &M) || n < 8 || s[7] != '-' ||
        !digits(s, n, 8, 2, &D) || n < 11 || s[10] != 'T' || !digits(s, n, 11, 2, &h) || n < 14 ||
        s[13] != ':' || !digits(s, n, 14, 2, &m) || n < 17 || s[16] != ':' || !digits(s, n, 17, 2, &sc))
        return -EINVAL;
    size_t i = 19;
    int32_t frac = 0;
    if (i < n && (s[i] == '.' || s[i] == ',')) {
        i++;
        size_t st = i;
        int64_t scale = 100000000;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            frac += (int32_t)((s[i] - '0') * scale);
            scale /= 10;
            i++;
        }
        if (i == st || i - st > 9)
            return -EINVAL;
    }
    if (M < 1 || M > 12 || D < 1 || (unsigned)D > days_in_month(Y, (unsigned)M) || h > 23 || m > 59 ||
        sc > 59)
        return -EINVAL;
    int64_t off = 0;
    if (i < n && s[i] == 'Z') {
        i++;
    } else if (i < n && (s[i] == '+' || s[i] == '-')) {
        int oh, om;
        if (!digits(s, n, i + 1, 2, &oh) || i + 3 >= n || s[i + 3] != ':' || !digits(s, n, i + 4, 2, &om))
            return -EINVAL;
        if (oh > 24 || om > 60)
            return -EINVAL;
        off = (oh * 3600 + om * 60) * (s[i] == '-' ? -1 : 1);
        i += 6;
    } else {
        return -EINVAL;
    }
    if (i != n)
        return -EINVAL;
    int64_t days = days_from_civil(Y, (unsigned)M, (unsigned)D);
    *sec = days * 86400 + h * 3600 + m * 60 + sc - off;
    *nsec = frac;
    return 0;
}

size_t ks__cel_fmt_timestamp(char *buf, size_t cap, int64_t sec, int32_t nsec)
{
    int64_t days = floor_div(sec, 86400);
    int64_t rem = sec - days * 86400;
    int64_t y;
    unsigned mo, d;
    civil_from_days(days, &y, &mo, &d);
    char frac[16] = "";
    if (nsec) {
        snprintf(frac, sizeof(frac), ".%09d", nsec);
        size_t l = strlen(frac);
        while (frac[l - 1] == '0')
            frac[--l] = 0;
    }
    return (size_t)snprintf(buf, cap, "%04" PRId64 "-%02u-%02uT%02d:%02d:%02d%sZ", y, mo, d,
                            (int)(rem / 3600), (int)(rem / 60 % 60), (int)(rem % 60), frac);
}

IMPL(ks__cel_string_to_duration)
{
    UNUSED_ARGS;
    int64_t ns;
    if (ks__cel_parse_duration(a[0].v.str.p, a[0].v.str.len, &ns))
        return ks__cel_errf(c, "type conversion error from 'string' to 'google.protobuf.Duration'");
    return make_dur(ns);
}

IMPL(ks__cel_string_to_timestamp)
{
    UNUSED_ARGS;
    int64_t sec;
    int32_t nsec;
    if (ks__cel_parse_timestamp(a[0].v.str.p, a[0].v.str.len, &sec, &nsec))
        return ks__cel_errf(c, "type conversion error from 'string' to 'google.protobuf.Timestamp'");
    if (sec < CEL_MIN_UNIX_TIME || sec > CEL_MAX_UNIX_TIME)
        return err_ts_overflow();
    return make_ts(sec, nsec);
}

IMPL(ks__cel_int_to_timestamp)
{
    UNUSED_ARGS;
    if (a[0].v.i < CEL_MIN_UNIX_TIME || a[0].v.i > CEL_MAX_UNIX_TIME)
        return err_ts_overflow();
    return make_ts(a[0].v.i, 0);
}

/* timestamp + duration, with addTimeDurationChecked's range rules */
static struct ks_cel_value ts_add(const struct ks_cel_value *t, int64_t dns)
{
    int64_t sec = t->v.time.seconds, nsec = t->v.time.nanos;
    int64_t s2 = dns / NS_PER_S, n2 = dns % NS_PER_S;
    if (__builtin_add_overflow(sec, s2, &sec))
        return err_overflow();
    nsec += n2;
    if (nsec < 0 || nsec >= NS_PER_S) {
        sec += nsec / NS_PER_S;
        nsec -= (nsec / NS_PER_S) * NS_PER_S;
        if (nsec < 0) {
            sec--;
            nsec += NS_PER_S;
        }
    }
    if (sec < CEL_MIN_UNIX_TIME || sec > CEL_MAX_UNIX_TIME)
        return err_ts_overflow();
    return make_ts(sec, (int32_t)nsec);
}

IMPL(ks__cel_add_time)
{
    UNUSED_ARGS;
    if (a[0].kind == KS_CEL_DURATION && a[1].kind == KS_CEL_DURATION) {
        int64_t r;
        if (__builtin_add_overflow(dur_ns(&a[0]), dur_ns(&a[1]), &r))
            return err_overflow();
        return make_dur(r);
    }
    if (a[0].kind == KS_CEL_TIMESTAMP)
        return ts_add(&a[0], dur_ns(&a[1]));
    return ts_add(&a[1], dur_ns(&a[0]));
}

IMPL(ks__cel_sub_time)
{
    UNUSED_ARGS;
    if (a[0].kind == KS_CEL_DURATION) {
        int64_t r;
        if (__builtin_sub_overflow(dur_ns(&a[0]), dur_ns(&a[1]), &r))
            return err_overflow();
        return make_dur(r);
    }
    if (a[1].kind == KS_CEL_DURATION) {
        int64_t d = dur_ns(&a[1]);
        if (d == INT64_MIN)
            return err_overflow();
        return ts_add(&a[0], -d);
    }
    int64_t s, tsec, r;
    if (__builtin_sub_overflow(a[0].v.time.seconds, a[1].v.time.seconds, &s) ||
        __builtin_mul_overflow(s, NS_PER_S, &tsec) ||
        __builtin_add_overflow(tsec, (int64_t)a[0].v.time.nanos - a[1].v.time.nanos, &r))
        return err_overflow();
    return make_dur(r);
}

/* ---- time zones
 * ---------------------------------------------------------------------------------------------------- */

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const unsigned char *p)
{
    return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

/* POSIX TZ rule date: Mm.w.d, Jn or n; the second of the year (UTC-less, local) it starts. */
static bool rule_date(const char **ps, int *kind, int *a1, int *a2, int *a3)
{
    const char *s = *ps;
    if (*s == 'M') {
        *kind = 'M';
        *a1 = (int)strtol(s + 1, (char **)&s, 10);
        if (*s++ != '.')
            return false;
        *a2 = (int)strtol(s, (char **)&s, 10);
        if (*s++ != '.')
            return false;
        *a3 = (int)strtol(s, (char **)&s, 10);
    } else if (*s == 'J') {
        *kind = 'J';
        *a1 = (int)strtol(s + 1, (char **)&s, 10);
    } else {
        *kind = 'n';
        *a1 = (int)strtol(s, (char **)&s, 10);
    }
    *ps = s;
    return true;
}

static long parse_hms(const char **ps)
{
    const char *s = *ps;
    int sign = 1;
    if (*s == '+' || *s == '-') {
        sign = *s == '-' ? -1 : 1;
        s++;
    }
    long h = strtol(s, (char **)&s, 10), m = 0, sec = 0;
    if (*s == ':') {
        m = strtol(s + 1, (char **)&s, 10);
        if (*s == ':')
            sec = strtol(s + 1, (char **)&s, 10);
    }
    *ps = s;
    return sign * (h * 3600 + m * 60 + sec);
}

static const char *skip_name(const char *s)
{
    if (*s == '<') {
        while (*s && *s != '>')
            s++;
        return *s ? s + 1 : s;
    }
    while ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z'))
        s++;
    return s;
}

/* The day of the year (0-based) a rule date falls on in @year. */
static int rule_yday(int64_t year, int kind, int a1, int a2, int a3)
{
    if (kind == 'J') {
        int d = a1 - 1;
        if (is_leap(year) && a1 >= 60)
            d++;
        return d;
    }
    if (kind == 'n')
        return a1;
    /* Mm.w.d: the w-th day d of month m (w = 5: the last) */
    int64_t first = days_from_civil(year, (unsigned)a1, 1);
    int wd = (int)(((first % 7) + 11) % 7); /* 1970-01-01 was a Thursday (4) */
    int day = (a3 - wd + 7) % 7 + 1 + (a2 - 1) * 7;
    while ((unsigned)day > days_in_month(year, (unsigned)a1))
        day -= 7;
    return (int)(days_from_civil(year, (unsigned)a1, (unsigned)day) - days_from_civil(year, 1, 1));
}

/* The UTC offset a POSIX TZ string gives at @t, or false when it cannot be read. */
static bool posix_offset(const char *tz, int64_t t, long *off)
{
    const char *s = skip_name(tz);
    long std = -parse_hms(&s);
    if (!*s) {
        *off = std;
        return true;
    }
    s = skip_name(s);
    long dst = std + 3600;
    if (*s && *s != ',')
        dst = -parse_hms(&s);
    if (*s != ',')
        return false;
    s++;
    int k1, b1 = 0, c1 = 0, d1 = 0, k2, b2 = 0, c2 = 0, d2 = 0;
    long t1 = 7200, t2 = 7200;
    if (!rule_date(&s, &k1, &b1, &c1, &d1))
        return false;
    if (*s == '/') {
        s++;
        t1 = parse_hms(&s);
    }
    if (*s++ != ',')
        return false;
    if (!rule_date(&s, &k2, &b2, &c2, &d2))
        return false;
    if (*s == '/') {
        s++;
        t2 = parse_hms(&s);
    }
    int64_t y;
    unsigned m, d;
    civil_from_days(floor_div(t + std, 86400), &y, &m, &d);
    int64_t ystart = days_from_civil(y, 1, 1) * 86400;
    int64_t start = ystart + (int64_t)rule_yday(y, k1, b1, c1, d1) * 86400 + t1 - std;
    int64_t end = ystart + (int64_t)rule_yday(y, k2, b2, c2, d2) * 86400 + t2 - dst;
    bool in_dst = start < end ? (t >= start && t < end) : !(t >= end && t < start);
    *off = in_dst ? dst : std;
    return true;
}

/* A TZif file's transitions, types and footer (of the 64-bit body when the file has one). */
struct tzif {
    const unsigned char *times, *idx, *types, *footer, *end;
    uint32_t timecnt, typecnt;
    int tsize; /* bytes per transition time: 4 or 8 */
};

/* The counts of the TZif header at @h, and the size of the body they describe with times of @tsize bytes. */
static size_t tzif_header(const unsigned char *h, int tsize, struct tzif *z)
{
    uint32_t isutc = be32(h + 20), isstd = be32(h + 24), leap = be32(h + 28), charcnt = be32(h + 40);
    z->timecnt = be32(h + 32);
    z->typecnt = be32(h + 36);
    z->tsize = tsize;
    return (size_t)z->timecnt * (size_t)(tsize + 1) + (size_t)z->typecnt * 6 + charcnt +
           (size_t)leap * (size_t)(tsize + 4) + isstd + isutc;
}

/* Parse the TZif file in @buf (@n bytes) into @z: false when it is not one or is cut short. */
static bool tzif_parse(const unsigned char *buf, size_t n, struct tzif *z)
{
    if (n < 44 || memcmp(buf, "TZif", 4))
        return false;
    const unsigned char *h = buf;
    size_t body = tzif_header(h, 4, z);
    /* skip the v1 body to the 64-bit one when present */
    if (buf[4] >= '2' && 44 + body + 44 <= n) {
        h = buf + 44 + body;
        body = tzif_header(h, 8, z);
    }
    if ((size_t)(h + 44 - buf) + body > n || z->typecnt == 0)
        return false;
    z->times = h + 44;
    z->idx = z->times + (size_t)z->timecnt * (size_t)z->tsize;
    z->types = z->idx + z->timecnt;
    z->footer = h + 44 + body;
    z->end = buf + n;
    return true;
}

static int64_t tzif_time(const struct tzif *z, uint32_t i)
{
    return z->tsize == 8 ? be64(z->times + (size_t)i * 8) : (int32_t)be32(z->times + (size_t)i * 4);
}

/* The offset at @t of the 64-bit body's footer (a POSIX TZ rule): false when there is none that applies. */
static bool tzif_footer_offset(const struct tzif *z, int64_t t, long *off)
{
    if (z->tsize != 8 || z->footer + 1 >= z->end || z->footer[0] != '\n')
        return false;
    char tz[128];
    size_t k = 0;
    for (const unsigned char *q = z->footer + 1; q < z->end && *q != '\n' && k + 1 < sizeof(tz); q++)
        tz[k++] = (char)*q;
    tz[k] = 0;
    return k && posix_offset(tz, t, off);
}

/* The UTC offset at @t: the last transition's type (the footer's rule past the last one). */
static long tzif_offset(const struct tzif *z, int64_t t)
{
    int type = -1;
    long off;
    for (uint32_t i = 0; i < z->timecnt && tzif_time(z, i) <= t; i++)
        type = z->idx[i];
    if (z->timecnt > 0 && type >= 0 && (uint32_t)type < z->typecnt) {
        if (t >= tzif_time(z, z->timecnt - 1) && tzif_footer_offset(z, t, &off))
            return off;
        return (int32_t)be32(z->types + (size_t)type * 6);
    }
    /* before the first transition (or none): the first standard-time type */
    uint32_t first = 0;
    while (first < z->typecnt && z->types[first * 6 + 4])
        first++;
    if (first == z->typecnt)
        first = 0;
    if (z->timecnt == 0 && tzif_footer_offset(z, t, &off))
        return off;
    return (int32_t)be32(z->types + (size_t)first * 6);
}

/* The whole of file @path in a buffer of the caller's (*@n bytes); NULL when it cannot be read. */
static unsigned char *read_whole(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    unsigned char *buf = NULL;
    size_t cap = 0;
    *n = 0;
    for (;;) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 8192;
            unsigned char *nb = realloc(buf, cap);
            if (!nb)
                break;
            buf = nb;
        }
        size_t r = fread(buf + *n, 1, cap - *n, f);
        if (!r)
            break;
        *n += r;
    }
    fclose(f);
    return buf;
}

/* The UTC offset of zone @name at @t (TZif from /usr/share/zoneinfo): 0, or -ENOENT. */
static int zone_offset(const char *name, size_t len, int64_t t, long *off)
{
    if (len == 0 || (len == 3 && !memcmp(name, "UTC", 3))) {
        *off = 0;
        return 0;
    }
    if (len > 200 || name[0] == '/' || memmem(name, len, "..", 2) || memchr(name, 0, len))
        return -ENOENT;
    char path[256];
    snprintf(path, sizeof(path), "/usr/share/zoneinfo/%.*s", (int)len, name);
    size_t n;
    unsigned char *buf = read_whole(path, &n);
    struct tzif z;
    int rc = -ENOENT;
    if (buf && tzif_parse(buf, n, &z)) {
        *off = tzif_offset(&z, t);
        rc = 0;
    }
    free(buf);
    return rc;
}

/* strconv.Atoi */
static bool atoi_go(const char *s, size_t n, long *out)
{
    if (n == 0)
        return false;
    size_t i = 0;
    bool neg = false;
    if (s[0] == '+' || s[0] == '-') {
        neg = s[0] == '-';
        i = 1;
        if (n == 1)
            return false;
    }
    long v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9' || v > 100000000)
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = neg ? -v : v;
    return true;
}

struct civil {
    int64_t year;
    unsigned month, day, yday, wday, hour, min, sec;
    int32_t nsec;
};

/* The civil time of timestamp @t in zone @tz (NULL: UTC), or an error value in *err. */
static bool in_zone(struct cel_ctx *c, const struct ks_cel_value *t, const struct ks_cel_value *tz,
                    struct civil *out, struct ks_cel_value *err)
{
    long off = 0;
    if (tz) {
        const char *s = tz->v.str.p;
        size_t n = tz->v.str.len;
        const char *colon = memchr(s, ':', n);
        if (!colon) {
            if (zone_offset(s, n, t->v.time.seconds, &off)) {
                *err = ks__cel_errf(c, "unknown time zone %.*s", (int)n, s);
                return false;
            }
        } else {
            long hr, mn;
            size_t ci = (size_t)(colon - s);
            if (!atoi_go(s, ci, &hr)) {
                *err = ks__cel_errf(c, "strconv.Atoi: parsing \"%.*s\": invalid syntax", (int)ci, s);
                return false;
            }
            if (!atoi_go(colon + 1, n - ci - 1, &mn)) {
                *err = ks__cel_errf(c, "strconv.Atoi: parsing \"%.*s\": invalid syntax", (int)(n - ci - 1),
                                    colon + 1);
                return false;
            }
            long offm = s[0] == '-' ? hr * 60 - mn : hr * 60 + mn;
            off = offm * 60;
        }
    }
    int64_t local = t->v.time.seconds + off;
    int64_t days = floor_div(local, 86400);
    int64_t rem = local - days * 86400;
    civil_from_days(days, &out->year, &out->month, &out->day);
    out->yday = (unsigned)(days - days_from_civil(out->year, 1, 1));
    out->wday = (unsigned)(((days % 7) + 11) % 7);
    out->hour = (unsigned)(rem / 3600);
    out->min = (unsigned)(rem / 60 % 60);
    out->sec = (unsigned)(rem % 60);
    out->nsec = t->v.time.nanos;
    return true;
}

enum getter { G_YEAR, G_MONTH, G_YDAY, G_MDAY0, G_MDAY1, G_WDAY, G_HOURS, G_MINUTES, G_SECONDS, G_MILLIS };

static struct ks_cel_value get(struct cel_ctx *c, const struct ks_cel_value *a, uint32_t n, enum getter g)
{
    if (a[0].kind == KS_CEL_DURATION) {
        int64_t ns = dur_ns(&a[0]);
        switch (g) {
        case G_HOURS:
            return ks__cel_int(ns / (3600 * NS_PER_S));
        case G_MINUTES:
            return ks__cel_int(ns / (60 * NS_PER_S));
        case G_SECONDS:
            return ks__cel_int(ns / NS_PER_S);
        case G_MILLIS:
            return ks__cel_int(ns / 1000000);
        default:
            return ks__cel_err_overload();
        }
    }
    struct civil cv;
    struct ks_cel_value err;
    if (!in_zone(c, &a[0], n > 1 ? &a[1] : NULL, &cv, &err))
        return err;
    switch (g) {
    case G_YEAR:
        return ks__cel_int(cv.year);
    case G_MONTH:
        return ks__cel_int((int64_t)cv.month - 1);
    case G_YDAY:
        return ks__cel_int(cv.yday);
    case G_MDAY0:
        return ks__cel_int((int64_t)cv.day - 1);
    case G_MDAY1:
        return ks__cel_int(cv.day);
    case G_WDAY:
        return ks__cel_int(cv.wday);
    case G_HOURS:
        return ks__cel_int(cv.hour);
    case G_MINUTES:
        return ks__cel_int(cv.min);
    case G_SECONDS:
        return ks__cel_int(cv.sec);
    default:
        return ks__cel_int(cv.nsec / 1000000);
    }
}

#define GETTER(name, g)                                                                                      \
    static IMPL(name)                                                                                        \
    {                                                                                                        \
        (void)e;                                                                                             \
        return get(c, a, n, g);                                                                              \
    }
GETTER(get_year, G_YEAR)
GETTER(get_month, G_MONTH)
GETTER(get_yday, G_YDAY)
GETTER(get_mday0, G_MDAY0)
GETTER(get_mday1, G_MDAY1)
GETTER(get_wday, G_WDAY)
GETTER(get_hours, G_HOURS)
GETTER(get_minutes, G_MINUTES)
GETTER(get_seconds, G_SECONDS)
GETTER(get_millis, G_MILLIS)

#define MEM CEL_OVL_MEMBER
const struct cel_decl ks__cel_time_decls[] = {
    {"getFullYear", "timestamp_to_year", MEM, 0, "timestamp -> int", get_year},
    {"getFullYear", "timestamp_to_year_with_tz", MEM, 0, "timestamp, string -> int", get_year},
    {"getMonth", "timestamp_to_month", MEM, 0, "timestamp -> int", get_month},
    {"getMonth", "timestamp_to_month_with_tz", MEM, 0, "timestamp, string -> int", get_month},
    {"getDayOfYear", "timestamp_to_day_of_year", MEM, 0, "timestamp -> int", get_yday},
    {"getDayOfYear", "timestamp_to_day_of_year_with_tz", MEM, 0, "timestamp, string -> int", get_yday},
    {"getDayOfMonth", "timestamp_to_day_of_month", MEM, 0, "timestamp -> int", get_mday0},
    {"getDayOfMonth", "timestamp_to_day_of_month_with_tz", MEM, 0, "timestamp, string -> int", get_mday0},
    {"getDate", "timestamp_to_day_of_month_1_based", MEM, 0, "timestamp -> int", get_mday1},
    {"getDate", "timestamp_to_day_of_month_1_based_with_tz", MEM, 0, "timestamp, string -> int", get_mday1},
    {"getDayOfWeek", "timestamp_to_day_of_week", MEM, 0, "timestamp -> int", get_wday},
    {"getDayOfWeek", "timestamp_to_day_of_week_with_tz", MEM, 0, "timestamp, string -> int", get_wday},
    {"getHours", "timestamp_to_hours", MEM, 0, "timestamp -> int", get_hours},
    {"getHours", "timestamp_to_hours_with_tz", MEM, 0, "timestamp, string -> int", get_hours},
    {"getHours", "duration_to_hours", MEM, 0, "duration -> int", get_hours},
    {"getMinutes", "timestamp_to_minutes", MEM, 0, "timestamp -> int", get_minutes},
    {"getMinutes", "timestamp_to_minutes_with_tz", MEM, 0, "timestamp, string -> int", get_minutes},
    {"getMinutes", "duration_to_minutes", MEM, 0, "duration -> int", get_minutes},
    {"getSeconds", "timestamp_to_seconds", MEM, 0, "timestamp -> int", get_seconds},
    {"getSeconds", "timestamp_to_seconds_with_tz", MEM, 0, "timestamp, string -> int", get_seconds},
    {"getSeconds", "duration_to_seconds", MEM, 0, "duration -> int", get_seconds},
    {"getMilliseconds", "timestamp_to_milliseconds", MEM, 0, "timestamp -> int", get_millis},
    {"getMilliseconds", "timestamp_to_milliseconds_with_tz", MEM, 0, "timestamp, string -> int", get_millis},
    {"getMilliseconds", "duration_to_milliseconds", MEM, 0, "duration -> int", get_millis},
    {NULL, NULL, 0, 0, NULL, NULL},
};
