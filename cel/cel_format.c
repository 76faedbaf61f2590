/*
 * cel_format.c - public helpers on values: a CEL text of a value (close to cel-go's
 * types.Format: typed numbers, quoted strings, map entries in a stable order), CEL equality,
 * and the array-backed list callers build bindings from.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel_internal.h"

static uint32_t array_size(const void *obj)
{
    return ((const struct ks_cel_array *)obj)->n;
}

static int array_entry(const void *obj, uint32_t i, struct ks_cel_value *key, struct ks_cel_value *value,
                       struct ks_cel_scratch *s)
{
    const struct ks_cel_array *a = obj;
    (void)s;
    if (i >= a->n)
        return -ERANGE;
    if (key) {
        key->kind = KS_CEL_INT;
        key->v.i = i;
    }
    if (value)
        *value = a->items[i];
    return 0;
}

static int array_lookup(const void *obj, const struct ks_cel_value *key, struct ks_cel_value *out,
                        struct ks_cel_scratch *s)
{
    const struct ks_cel_array *a = obj;
    (void)s;
    if (key->kind != KS_CEL_INT || key->v.i < 0 || (uint64_t)key->v.i >= a->n)
        return 1;
    *out = a->items[key->v.i];
    return 0;
}

const struct ks_cel_host_ops ks_cel_array_ops = {
    .lookup = array_lookup, .size = array_size, .entry = array_entry};

bool ks_cel_value_equal(const struct ks_cel_value *a, const struct ks_cel_value *b)
{
    return ks__cel_equal(a, b);
}

static void quote(struct cel_sb *b, const char *p, size_t n)
{
    ks__cel_sb_puts(b, "\"");
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)p[i];
        switch (ch) {
        case '"':
            ks__cel_sb_puts(b, "\\\"");
            break;
        case '\\':
            ks__cel_sb_puts(b, "\\\\");
            break;
        case '\n':
            ks__cel_sb_puts(b, "\\n");
            break;
        case '\r':
            ks__cel_sb_puts(b, "\\r");
            break;
        case '\t':
            ks__cel_sb_puts(b, "\\t");
            break;
        default:
            if (ch < 0x20 || ch == 0x7f)
                ks__cel_sb_printf(b, "\\x%02x", ch);
            else
                ks__cel_sb_putn(b, (const char *)&ch, 1);
        }
    }
    ks__cel_sb_puts(b, "\"");
}

static void format(struct cel_sb *b, const struct ks_cel_value *v);

struct entry_text {
    char *k;
    char *v;
};

static int entry_cmp(const void *x, const void *y)
{
    return strcmp(((const struct entry_text *)x)->k, ((const struct entry_text *)y)->k);
}

/* A double as a literal: NaN and the infinities as conversions, a whole number with ".0". */
static void format_double(struct cel_sb *b, double d)
{
    char buf[64];
    if (isnan(d)) {
        ks__cel_sb_puts(b, "double(\"NaN\")");
    } else if (isinf(d)) {
        ks__cel_sb_puts(b, d > 0 ? "double(\"Infinity\")" : "double(\"-Infinity\")");
    } else {
        ks__cel_fmt_double(buf, sizeof(buf), d);
        ks__cel_sb_puts(b, buf);
        if (!strpbrk(buf, ".e"))
            ks__cel_sb_puts(b, ".0");
    }
}

static void format_list(struct cel_sb *b, const struct ks_cel_value *v)
{
    ks__cel_sb_puts(b, "[");
    uint32_t n = ks__cel_agg_size(v);
    for (uint32_t i = 0; i < n; i++) {
        struct ks_cel_value k, x;
        if (v->v.host.ops->entry(v->v.host.obj, i, &k, &x, NULL))
            break;
        if (i)
            ks__cel_sb_puts(b, ", ");
        format(b, &x);
    }
    ks__cel_sb_puts(b, "]");
}

/* A map with its entries sorted by their keys' text, so that the output does not depend on its order. */
static void format_map(struct cel_sb *b, const struct ks_cel_value *v)
{
    uint32_t n = ks__cel_agg_size(v);
    struct entry_text *e = calloc(n ? n : 1, sizeof(*e));
    if (!e) {
        b->oom = true;
        return;
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct ks_cel_value key, x;
        if (v->v.host.ops->entry(v->v.host.obj, i, &key, &x, NULL))
            break;
        struct cel_sb kb = {0}, vb = {0};
        format(&kb, &key);
        format(&vb, &x);
        e[k].k = kb.p ? kb.p : strdup("");
        e[k].v = vb.p ? vb.p : strdup("");
        k++;
    }
    qsort(e, k, sizeof(*e), entry_cmp);
    ks__cel_sb_puts(b, "{");
    for (uint32_t i = 0; i < k; i++) {
        if (i)
            ks__cel_sb_puts(b, ", ");
        ks__cel_sb_puts(b, e[i].k ? e[i].k : "");
        ks__cel_sb_puts(b, ": ");
        ks__cel_sb_puts(b, e[i].v ? e[i].v : "");
        free(e[i].k);
        free(e[i].v);
    }
    free(e);
    ks__cel_sb_puts(b, "}");
}

static void format(struct cel_sb *b, const struct ks_cel_value *v)
{
    char buf[64];
    switch (v->kind) {
    case KS_CEL_NULL:
        ks__cel_sb_puts(b, "null");
        return;
    case KS_CEL_BOOL:
        ks__cel_sb_puts(b, v->v.b ? "true" : "false");
        return;
    case KS_CEL_INT:
        ks__cel_sb_printf(b, "%" PRId64, v->v.i);
        return;
    case KS_CEL_UINT:
        ks__cel_sb_printf(b, "%" PRIu64 "u", v->v.u);
        return;
    case KS_CEL_DOUBLE:
        format_double(b, v->v.d);
        return;
    case KS_CEL_STRING:
        quote(b, v->v.str.p, v->v.str.len);
        return;
    case KS_CEL_BYTES:
        ks__cel_sb_puts(b, "b\"");
        for (size_t i = 0; i < v->v.str.len; i++)
            ks__cel_sb_printf(b, "\\x%02x", (unsigned char)v->v.str.p[i]);
        ks__cel_sb_puts(b, "\"");
        return;
    case KS_CEL_DURATION:
        ks__cel_fmt_duration(buf, sizeof(buf), v->v.time.seconds, v->v.time.nanos);
        ks__cel_sb_printf(b, "duration(\"%s\")", buf);
        return;
    case KS_CEL_TIMESTAMP:
        ks__cel_fmt_timestamp(buf, sizeof(buf), v->v.time.seconds, v->v.time.nanos);
        ks__cel_sb_printf(b, "timestamp(\"%s\")", buf);
        return;
    case KS_CEL_TYPE:
        ks__cel_sb_puts(b, ks__cel_type_name(v->v.type));
        return;
    case KS_CEL_OPTIONAL:
        if (!v->v.own) {
            ks__cel_sb_puts(b, "optional.none()");
            return;
        }
        ks__cel_sb_puts(b, "optional.of(");
        format(b, &((const struct cel_opt *)v->v.own)->v);
        ks__cel_sb_puts(b, ")");
        return;
    case KS_CEL_QUANTITY: {
        char q[KS_QUANTITY_STR_MAX];
        if (ks_quantity_format(&v->v.q, q, sizeof(q)))
            snprintf(q, sizeof(q), "?");
        ks__cel_sb_printf(b, "quantity(\"%s\")", q);
        return;
    }
    case KS_CEL_SEMVER:
        ks__cel_sb_puts(b, "semver(\"");
        ks__cel_value_fmt(b, v);
        ks__cel_sb_puts(b, "\")");
        return;
    case KS_CEL_ERROR:
        ks__cel_sb_puts(b, "error(");
        quote(b, v->v.str.p, v->v.str.len);
        ks__cel_sb_puts(b, ")");
        return;
    case KS_CEL_LIST:
        format_list(b, v);
        return;
    case KS_CEL_MAP:
        format_map(b, v);
        return;
    case KS_CEL_OBJECT:
        ks__cel_sb_printf(b, "<%s>", v->v.host.type ? ks__cel_type_name(v->v.host.type) : "object");
        return;
    default:
        ks__cel_sb_puts(b, "<?>");
        return;
    }
}

size_t ks_cel_value_format(const struct ks_cel_value *v, char *buf, size_t len)
{
    struct cel_sb b = {0};
    format(&b, v);
    size_t n = b.len;
    if (len) {
        size_t c = n < len - 1 ? n : len - 1;
        if (c && b.p)
            memcpy(buf, b.p, c);
        buf[c] = 0;
    }
    ks__cel_sb_free(&b);
    return n;
}
