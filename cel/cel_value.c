/*
 * cel_value.c - CEL values: the module's own lists and maps (and their host-ops tables, so a
 * caller may read them like any host aggregate), optionals, heterogeneous equality, ordering,
 * Go's %v of a value for error texts, runtime types and sizes.
 *
 * Mirrors cel-go common/types: util.go Equal (null equals only null), int.go/uint.go/double.go
 * Equal and Compare with compare.go's cross-type numeric rules (an int and a double compare as
 * doubles unless the double is outside int64's range; NaN equals nothing and cannot be
 * ordered: "NaN values cannot be ordered"), string.go and bytes.go (byte-wise order),
 * list.go and map.go (element-wise equality; a map key found across int, uint and double when
 * the number converts exactly), optional.go. Map literals keep their insertion order.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel_internal.h"

/* ---- the module's own aggregates ------------------------------------------------------------------------
 */

static uint32_t list_size(const void *obj)
{
    return ((const struct cel_list *)obj)->n;
}

static int list_entry(const void *obj, uint32_t i, struct ks_cel_value *key, struct ks_cel_value *value,
                      struct ks_cel_scratch *s)
{
    const struct cel_list *l = obj;
    (void)s;
    if (i >= l->n)
        return -ERANGE;
    if (key)
        *key = ks__cel_int(i);
    if (value)
        *value = l->items[i];
    return 0;
}

static int list_lookup(const void *obj, const struct ks_cel_value *key, struct ks_cel_value *out,
                       struct ks_cel_scratch *s)
{
    const struct cel_list *l = obj;
    (void)s;
    if (key->kind != KS_CEL_INT || key->v.i < 0 || (uint64_t)key->v.i >= l->n)
        return 1;
    *out = l->items[key->v.i];
    return 0;
}

const struct ks_cel_host_ops ks__cel_list_ops = {
    .lookup = list_lookup, .size = list_size, .entry = list_entry};

static uint32_t map_size(const void *obj)
{
    return ((const struct cel_map *)obj)->n;
}

static int map_entry(const void *obj, uint32_t i, struct ks_cel_value *key, struct ks_cel_value *value,
                     struct ks_cel_scratch *s)
{
    const struct cel_map *m = obj;
    (void)s;
    if (i >= m->n)
        return -ERANGE;
    if (key)
        *key = m->keys[i];
    if (value)
        *value = m->vals[i];
    return 0;
}

static bool same_key(const struct ks_cel_value *a, const struct ks_cel_value *b)
{
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case KS_CEL_STRING:
    case KS_CEL_BYTES:
        return a->v.str.len == b->v.str.len && !memcmp(a->v.str.p, b->v.str.p, a->v.str.len);
    case KS_CEL_BOOL:
        return a->v.b == b->v.b;
    case KS_CEL_INT:
        return a->v.i == b->v.i;
    case KS_CEL_UINT:
        return a->v.u == b->v.u;
    case KS_CEL_DOUBLE:
        return a->v.d == b->v.d;
    case KS_CEL_NULL:
        return true;
    default:
        return ks__cel_equal(a, b);
    }
}

static int own_find(const struct cel_map *m, const struct ks_cel_value *key, struct ks_cel_value *out)
{
    for (uint32_t i = 0; i < m->n; i++) {
        if (same_key(&m->keys[i], key)) {
            *out = m->vals[i];
            return 0;
        }
    }
    /* numeric keys are found across int, uint and double when the number converts exactly */
    struct ks_cel_value alt[2];
    int nalt = 0;
    switch (key->kind) {
    case KS_CEL_DOUBLE: {
        double d = key->v.d;
        if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 && (double)(int64_t)d == d)
            alt[nalt++] = ks__cel_int((int64_t)d);
        if (d >= 0 && d < 18446744073709551616.0 && (double)(uint64_t)d == d)
            alt[nalt++] = ks__cel_uint((uint64_t)d);
        break;
    }
    case KS_CEL_INT:
        if (key->v.i >= 0)
            alt[nalt++] = ks__cel_uint((uint64_t)key->v.i);
        break;
    case KS_CEL_UINT:
        if (key->v.u <= INT64_MAX)
            alt[nalt++] = ks__cel_int((int64_t)key->v.u);
        break;
    default:
        break;
    }
    for (int k = 0; k < nalt; k++)
        for (uint32_t i = 0; i < m->n; i++)
            if (same_key(&m->keys[i], &alt[k])) {
                *out = m->vals[i];
                return 0;
            }
    return 1;
}

static int map_lookup(const void *obj, const struct ks_cel_value *key, struct ks_cel_value *out,
                      struct ks_cel_scratch *s)
{
    (void)s;
    return own_find(obj, key, out);
}

const struct ks_cel_host_ops ks__cel_map_ops = {.lookup = map_lookup, .size = map_size, .entry = map_entry};

uint32_t ks__cel_agg_size(const struct ks_cel_value *v)
{
    if (v->v.host.ops == &ks__cel_list_ops)
        return ((const struct cel_list *)v->v.host.obj)->n;
    if (v->v.host.ops == &ks__cel_map_ops)
        return ((const struct cel_map *)v->v.host.obj)->n;
    if (!v->v.host.ops || !v->v.host.ops->size)
        return 0;
    return v->v.host.ops->size(v->v.host.obj);
}

static struct ks_cel_value host_error(struct cel_ctx *c, int rc)
{
    if (rc == -ENOMEM) {
        c->fatal = -ENOMEM;
        longjmp(c->jb, 1);
    }
    return ks__cel_errf(c, "host object error: %d", rc);
}

struct ks_cel_value ks__cel_list_at(struct cel_ctx *c, const struct ks_cel_value *l, uint32_t i)
{
    if (l->v.host.ops == &ks__cel_list_ops)
        return ((const struct cel_list *)l->v.host.obj)->items[i];
    struct ks_cel_value k, v;
    int rc = l->v.host.ops->entry(l->v.host.obj, i, &k, &v, c->s);
    if (rc)
        return host_error(c, rc);
    return v;
}

struct ks_cel_value ks__cel_map_entry(struct cel_ctx *c, const struct ks_cel_value *m, uint32_t i,
                                      struct ks_cel_value *val)
{
    if (m->v.host.ops == &ks__cel_map_ops) {
        const struct cel_map *mm = m->v.host.obj;
        if (val)
            *val = mm->vals[i];
        return mm->keys[i];
    }
    struct ks_cel_value k, v;
    int rc = m->v.host.ops->entry(m->v.host.obj, i, &k, &v, c->s);
    if (rc)
        return host_error(c, rc);
    if (val)
        *val = v;
    return k;
}

int ks__cel_map_find(struct cel_ctx *c, const struct ks_cel_value *m, const struct ks_cel_value *key,
                     struct ks_cel_value *out)
{
    if (m->v.host.ops == &ks__cel_map_ops)
        return own_find(m->v.host.obj, key, out);
    if (!m->v.host.ops || !m->v.host.ops->lookup)
        return 1;
    int rc = m->v.host.ops->lookup(m->v.host.obj, key, out, c->s);
    if (rc < 0) {
        *out = host_error(c, rc);
        return -1;
    }
    return rc;
}

struct ks_cel_value ks__cel_make_list(struct cel_ctx *c, const struct ks_cel_value *items, uint32_t n)
{
    struct cel_list *l = ks__cel_salloc(c, sizeof(*l));
    l->n = n;
    l->cap = 0;
    l->mutable = false;
    l->items = items;
    struct ks_cel_value v = {.kind = KS_CEL_LIST};
    v.v.host.ops = &ks__cel_list_ops;
    v.v.host.obj = l;
    v.v.host.type = &ks__cel_t_list_dyn;
    return v;
}

struct ks_cel_value ks__cel_make_map(struct cel_ctx *c, const struct ks_cel_value *keys,
                                     const struct ks_cel_value *vals, uint32_t n)
{
    struct cel_map *m = ks__cel_salloc(c, sizeof(*m));
    m->n = n;
    m->cap = 0;
    m->mutable = false;
    m->keys = keys;
    m->vals = vals;
    struct ks_cel_value v = {.kind = KS_CEL_MAP};
    v.v.host.ops = &ks__cel_map_ops;
    v.v.host.obj = m;
    v.v.host.type = &ks__cel_t_map_dyn;
    return v;
}

struct ks_cel_value ks__cel_make_opt(struct cel_ctx *c, const struct ks_cel_value *inner)
{
    struct ks_cel_value v = {.kind = KS_CEL_OPTIONAL};
    if (inner) {
        struct cel_opt *o = ks__cel_salloc(c, sizeof(*o));
        o->v = *inner;
        v.v.own = o;
    }
    return v;
}

/* ---- equality and ordering (common/types)
 * ---------------------------------------------------------------------- */

static int cmp_double(double a, double b)
{
    return a < b ? -1 : a > b ? 1 : 0;
}

static int cmp_double_int(double d, int64_t i)
{
    if (d < -9223372036854775808.0)
        return -1;
    if (d > 9223372036854775807.0)
        return 1;
    return cmp_double(d, (double)i);
}

static int cmp_double_uint(double d, uint64_t u)
{
    if (d < 0)
        return -1;
    if (d > 18446744073709551615.0)
        return 1;
    return cmp_double(d, (double)u);
}

static int cmp_int_uint(int64_t i, uint64_t u)
{
    if (i < 0 || u > INT64_MAX)
        return -1;
    return (uint64_t)i < u ? -1 : (uint64_t)i > u ? 1 : 0;
}

static int cmp_bytes(const struct ks_cel_value *a, const struct ks_cel_value *b)
{
    size_t n = a->v.str.len < b->v.str.len ? a->v.str.len : b->v.str.len;
    int r = n ? memcmp(a->v.str.p, b->v.str.p, n) : 0;
    if (r)
        return r < 0 ? -1 : 1;
    return a->v.str.len < b->v.str.len ? -1 : a->v.str.len > b->v.str.len ? 1 : 0;
}

static int cmp_time(const struct ks_cel_value *a, const struct ks_cel_value *b)
{
    if (a->v.time.seconds != b->v.time.seconds)
        return a->v.time.seconds < b->v.time.seconds ? -1 : 1;
    return a->v.time.nanos < b->v.time.nanos ? -1 : a->v.time.nanos > b->v.time.nanos ? 1 : 0;
}

static bool is_num(int k)
{
    return k == KS_CEL_INT || k == KS_CEL_UINT || k == KS_CEL_DOUBLE;
}

/* Numeric comparison across kinds; false when a NaN is involved. */
static bool num_cmp(const struct ks_cel_value *a, const struct ks_cel_value *b, int *r)
{
    if ((a->kind == KS_CEL_DOUBLE && isnan(a->v.d)) || (b->kind == KS_CEL_DOUBLE && isnan(b->v.d)))
        return false;
    switch (a->kind * 16 + b->kind) {
    case KS_CEL_INT * 16 + KS_CEL_INT:
        *r = a->v.i < b->v.i ? -1 : a->v.i > b->v.i;
        return true;
    case KS_CEL_UINT * 16 + KS_CEL_UINT:
        *r = a->v.u < b->v.u ? -1 : a->v.u > b->v.u;
        return true;
    case KS_CEL_DOUBLE * 16 + KS_CEL_DOUBLE:
        *r = cmp_double(a->v.d, b->v.d);
        return true;
    case KS_CEL_INT * 16 + KS_CEL_UINT:
        *r = cmp_int_uint(a->v.i, b->v.u);
        return true;
    case KS_CEL_UINT * 16 + KS_CEL_INT:
        *r = -cmp_int_uint(b->v.i, a->v.u);
        return true;
    case KS_CEL_INT * 16 + KS_CEL_DOUBLE:
        *r = -cmp_double_int(b->v.d, a->v.i);
        return true;
    case KS_CEL_DOUBLE * 16 + KS_CEL_INT:
        *r = cmp_double_int(a->v.d, b->v.i);
        return true;
    case KS_CEL_UINT * 16 + KS_CEL_DOUBLE:
        *r = -cmp_double_uint(b->v.d, a->v.u);
        return true;
    case KS_CEL_DOUBLE * 16 + KS_CEL_UINT:
        *r = cmp_double_uint(a->v.d, b->v.u);
        return true;
    default:
        return false;
    }
}

/* Equality of two aggregates' elements without an evaluation context (host entries read directly). */
static bool agg_at(const struct ks_cel_value *l, uint32_t i, struct ks_cel_value *k, struct ks_cel_value *v)
{
    return l->v.host.ops->entry(l->v.host.obj, i, k, v, NULL) == 0;
}

bool ks__cel_equal(const struct ks_cel_value *a, const struct ks_cel_value *b)
{
    if (a->kind == KS_CEL_NULL || b->kind == KS_CEL_NULL)
        return a->kind == b->kind;
    if (is_num(a->kind) && is_num(b->kind)) {
        int r;
        return num_cmp(a, b, &r) && r == 0;
    }
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case KS_CEL_BOOL:
        return a->v.b == b->v.b;
    case KS_CEL_STRING:
    case KS_CEL_BYTES:
        return a->v.str.len == b->v.str.len && !memcmp(a->v.str.p, b->v.str.p, a->v.str.len);
    case KS_CEL_DURATION:
    case KS_CEL_TIMESTAMP:
        return cmp_time(a, b) == 0;
    case KS_CEL_TYPE:
        return !strcmp(ks__cel_type_name(a->v.type), ks__cel_type_name(b->v.type));
    case KS_CEL_QUANTITY:
        return ks__cel_quantity_cmp(&a->v.q, &b->v.q) == 0;
    case KS_CEL_SEMVER:
        return ks__cel_semver_cmp(a, b) == 0;
    case KS_CEL_OPTIONAL: {
        const struct cel_opt *x = a->v.own, *y = b->v.own;
        if (!x || !y)
            return !x && !y;
        return ks__cel_equal(&x->v, &y->v);
    }
    case KS_CEL_LIST: {
        uint32_t n = ks__cel_agg_size(a);
        if (n != ks__cel_agg_size(b))
            return false;
        for (uint32_t i = 0; i < n; i++) {
            struct ks_cel_value k, x, y;
            if (!agg_at(a, i, &k, &x) || !agg_at(b, i, &k, &y) || !ks__cel_equal(&x, &y))
                return false;
        }
        return true;
    }
    case KS_CEL_MAP: {
        uint32_t n = ks__cel_agg_size(a);
        if (n != ks__cel_agg_size(b))
            return false;
        for (uint32_t i = 0; i < n; i++) {
            struct ks_cel_value k, x, y;
            if (!agg_at(a, i, &k, &x))
                return false;
            int rc = b->v.host.ops == &ks__cel_map_ops ? own_find(b->v.host.obj, &k, &y)
                                                       : b->v.host.ops->lookup(b->v.host.obj, &k, &y, NULL);
            if (rc != 0 || !ks__cel_equal(&x, &y))
                return false;
        }
        return true;
    }
    case KS_CEL_OBJECT:
        return a->v.host.obj == b->v.host.obj && a->v.host.ops == b->v.host.ops;
    default:
        return false;
    }
}

int ks__cel_compare(struct cel_ctx *c, const struct ks_cel_value *a, const struct ks_cel_value *b,
                    struct ks_cel_value *err)
{
    if (is_num(a->kind) && is_num(b->kind)) {
        int r;
        if (!num_cmp(a, b, &r)) {
            *err = ks__cel_errf(c, "NaN values cannot be ordered");
            return 2;
        }
        return r;
    }
    if (a->kind == b->kind) {
        switch (a->kind) {
        case KS_CEL_BOOL:
            return a->v.b == b->v.b ? 0 : a->v.b ? 1 : -1;
        case KS_CEL_STRING:
        case KS_CEL_BYTES:
            return cmp_bytes(a, b);
        case KS_CEL_DURATION:
        case KS_CEL_TIMESTAMP:
            return cmp_time(a, b);
        default:
            break;
        }
    }
    *err = ks__cel_err_overload();
    return 2;
}

/* ---- formatting
 * ----------------------------------------------------------------------------------------------- */

/* The shortest digits of |d| that read back as d: digits in @dig, the decimal exponent in *dp (0.DIG x
 * 10^dp). */
static int shortest_digits(double d, char *dig, int *dp)
{
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof(buf), "%.*e", prec - 1, d);
        if (strtod(buf, NULL) == d || prec == 17)
            break;
    }
    /* buf: d.ddddde[+-]xx */
    int n = 0;
    const char *p = buf;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9')
            dig[n++] = *p;
    int e = atoi(p + 1);
    while (n > 1 && dig[n - 1] == '0')
        n--;
    dig[n] = 0;
    *dp = e + 1;
    return n;
}

size_t ks__cel_fmt_double(char *buf, size_t cap, double d)
{
    if (isnan(d))
        return (size_t)snprintf(buf, cap, "NaN");
    if (isinf(d))
        return (size_t)snprintf(buf, cap, d > 0 ? "+Inf" : "-Inf");
    char out[64];
    size_t o = 0;
    if (signbit(d)) {
        out[o++] = '-';
        d = -d;
    }
    if (d == 0) {
        out[o++] = '0';
        out[o] = 0;
        return (size_t)snprintf(buf, cap, "%s", out);
    }
    char dig[32];
    int dp;
    int nd = shortest_digits(d, dig, &dp);
    int exp = dp - 1;
    /* strconv.FormatFloat(d, 'g', -1, 64): an exponent below 1e-4 and from 1e6 on */
    if (exp < -4 || exp >= 6) {
        out[o++] = dig[0];
        if (nd > 1) {
            out[o++] = '.';
            for (int i = 1; i < nd; i++)
                out[o++] = dig[i];
        }
        o += (size_t)snprintf(out + o, sizeof(out) - o, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
        return (size_t)snprintf(buf, cap, "%s", out);
    }
    if (dp <= 0) {
        out[o++] = '0';
        out[o++] = '.';
        for (int i = 0; i < -dp; i++)
            out[o++] = '0';
        for (int i = 0; i < nd; i++)
            out[o++] = dig[i];
    } else {
        for (int i = 0; i < dp; i++)
            out[o++] = i < nd ? dig[i] : '0';
        if (nd > dp) {
            out[o++] = '.';
            for (int i = dp; i < nd; i++)
                out[o++] = dig[i];
        }
    }
    out[o] = 0;
    return (size_t)snprintf(buf, cap, "%s", out);
}

void ks__cel_value_fmt(struct cel_sb *b, const struct ks_cel_value *v)
{
    char buf[64];
    switch (v->kind) {
    case KS_CEL_NULL:
        ks__cel_sb_puts(b, "NULL_VALUE");
        break;
    case KS_CEL_BOOL:
        ks__cel_sb_puts(b, v->v.b ? "true" : "false");
        break;
    case KS_CEL_INT:
        ks__cel_sb_printf(b, "%" PRId64, v->v.i);
        break;
    case KS_CEL_UINT:
        ks__cel_sb_printf(b, "%" PRIu64, v->v.u);
        break;
    case KS_CEL_DOUBLE:
        ks__cel_fmt_double(buf, sizeof(buf), v->v.d);
        ks__cel_sb_puts(b, buf);
        break;
    case KS_CEL_STRING:
        ks__cel_sb_putn(b, v->v.str.p, v->v.str.len);
        break;
    case KS_CEL_BYTES:
        ks__cel_sb_puts(b, "[");
        for (size_t i = 0; i < v->v.str.len; i++)
            ks__cel_sb_printf(b, i ? " %u" : "%u", (unsigned char)v->v.str.p[i]);
        ks__cel_sb_puts(b, "]");
        break;
    case KS_CEL_DURATION:
        ks__cel_fmt_duration(buf, sizeof(buf), v->v.time.seconds, v->v.time.nanos);
        ks__cel_sb_puts(b, buf);
        break;
    case KS_CEL_TIMESTAMP:
        ks__cel_fmt_timestamp(buf, sizeof(buf), v->v.time.seconds, v->v.time.nanos);
        ks__cel_sb_puts(b, buf);
        break;
    case KS_CEL_TYPE:
        ks__cel_sb_puts(b, ks__cel_type_name(v->v.type));
        break;
    case KS_CEL_OPTIONAL:
        if (!v->v.own) {
            ks__cel_sb_puts(b, "optional.none()");
        } else {
            ks__cel_sb_puts(b, "optional(");
            ks__cel_value_fmt(b, &((const struct cel_opt *)v->v.own)->v);
            ks__cel_sb_puts(b, ")");
        }
        break;
    case KS_CEL_LIST: {
        ks__cel_sb_puts(b, "[");
        uint32_t n = ks__cel_agg_size(v);
        for (uint32_t i = 0; i < n; i++) {
            struct ks_cel_value k, x;
            if (!agg_at(v, i, &k, &x))
                break;
            if (i)
                ks__cel_sb_puts(b, ", ");
            ks__cel_value_fmt(b, &x);
        }
        ks__cel_sb_puts(b, "]");
        break;
    }
    case KS_CEL_MAP: {
        ks__cel_sb_puts(b, "{");
        uint32_t n = ks__cel_agg_size(v);
        for (uint32_t i = 0; i < n; i++) {
            struct ks_cel_value k, x;
            if (!agg_at(v, i, &k, &x))
                break;
            if (i)
                ks__cel_sb_puts(b, ", ");
            ks__cel_value_fmt(b, &k);
            ks__cel_sb_puts(b, ": ");
            ks__cel_value_fmt(b, &x);
        }
        ks__cel_sb_puts(b, "}");
        break;
    }
    case KS_CEL_QUANTITY: {
        char q[KS_QUANTITY_STR_MAX];
        if (ks_quantity_format(&v->v.q, q, sizeof(q)) == 0)
            ks__cel_sb_puts(b, q);
        break;
    }
    case KS_CEL_SEMVER:
        ks__cel_sb_printf(b, "%" PRIu64 ".%" PRIu64 ".%" PRIu64, v->v.semver.major, v->v.semver.minor,
                          v->v.semver.patch);
        if (v->v.semver.pre_len)
            ks__cel_sb_printf(b, "-%.*s", (int)v->v.semver.pre_len, v->v.semver.pre);
        break;
    case KS_CEL_ERROR:
        ks__cel_sb_putn(b, v->v.str.p, v->v.str.len);
        break;
    default:
        ks__cel_sb_puts(b, "<object>");
        break;
    }
}

const struct ks_cel_type *ks__cel_type_of(const struct ks_cel_value *v)
{
    switch (v->kind) {
    case KS_CEL_LIST:
        return &ks__cel_t_list_dyn;
    case KS_CEL_MAP:
        return &ks__cel_t_map_dyn;
    case KS_CEL_OPTIONAL:
        return &ks__cel_t_optional_dyn;
    case KS_CEL_OBJECT:
        return v->v.host.type ? v->v.host.type : &ks__cel_t_dyn;
    default:
        return ks__cel_type_prim(v->kind);
    }
}

uint64_t ks__cel_actual_size(const struct ks_cel_value *v)
{
    switch (v->kind) {
    case KS_CEL_STRING: {
        /* ASCII: the byte length; otherwise count the code points */
        unsigned char high = 0;
        for (size_t i = 0; i < v->v.str.len; i++)
            high |= (unsigned char)v->v.str.p[i];
        if (high < 0x80)
            return v->v.str.len;
        return ks__cel_utf8_count(v->v.str.p, v->v.str.len);
    }
    case KS_CEL_BYTES:
        return v->v.str.len;
    case KS_CEL_LIST:
    case KS_CEL_MAP:
        return ks__cel_agg_size(v);
    case KS_CEL_OPTIONAL:
        if (v->v.own)
            return ks__cel_actual_size(&((const struct cel_opt *)v->v.own)->v);
        return 1;
    default:
        return 1;
    }
}
