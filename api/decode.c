/*
 * decode.c - field decoders shared by every Kubernetes object decoder.
 *
 * Shapes follow the JSON forms of k8s.io/api (a YAML document is decoded as its JSON
 * equivalent, as sigs.k8s.io/yaml does: ksched/yaml_tree.h's ks_yaml_json_type): integers
 * are JSON numbers without fraction or exponent once converted (0x10, 1e3 and 1_000 are
 * integers, "80" is not), booleans YAML 1.1 ones, quantities numbers or strings. The
 * loader has checked every value's type against the API schema first (api/type_check.c),
 * so the decoders' own type messages are for input that skips that check. Label sets and
 * resource lists are sorted by interned id so matching can binary-search or merge.
 */
#include "ksched/internal/decode.h"

#include "ksched/base/intern.h"
#include "ksched/quantity.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void ks_decoder_init(struct ks_decoder *d, const char *file, struct ks_arena *arena, struct ks_error *err)
{
    memset(d, 0, sizeof(*d));
    d->file = file;
    d->arena = arena;
    d->err = err;
}

/*
 * Append @open, the @len bytes at @s and @close (each may be empty) to the path, cut at its
 * end; returns the length before. Every field decoded pushes once: no formatting here.
 */
static size_t path_append(struct ks_decoder *d, char open, const char *s, size_t len, char close)
{
    size_t old = d->plen, room = sizeof(d->path) - 1 - d->plen;
    char *p = d->path + d->plen;
    if (open && room) {
        *p++ = open;
        room--;
    }
    if (len > room)
        len = room;
    memcpy(p, s, len);
    p += len;
    room -= len;
    if (close && room)
        *p++ = close;
    *p = '\0';
    d->plen = (size_t)(p - d->path);
    return old;
}

size_t ks_dec_push(struct ks_decoder *d, const char *field)
{
    return path_append(d, d->plen ? '.' : 0, field, strlen(field), 0);
}

size_t ks_dec_push_index(struct ks_decoder *d, uint32_t i)
{
    char digits[10];
    size_t n = sizeof(digits);
    do
        digits[--n] = (char)('0' + i % 10);
    while ((i /= 10) != 0);
    return path_append(d, '[', digits + n, sizeof(digits) - n, ']');
}

size_t ks_dec_push_key(struct ks_decoder *d, const char *key)
{
    if (strpbrk(key, "./") || !*key)
        return path_append(d, '[', key, strlen(key), ']');
    return ks_dec_push(d, key);
}

void ks_dec_pop(struct ks_decoder *d, size_t len)
{
    d->plen = len;
    d->path[len] = '\0';
}

int ks_dec_fail(struct ks_decoder *d, const struct ks_yaml_node *node, int line, const char *fmt, ...)
{
    char msg[KS_ERROR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return ks_error_set(d->err, d->file, node ? node->line : line, d->path, "%s", msg);
}

int ks_dec_nomem(struct ks_decoder *d)
{
    ks_error_set(d->err, d->file, 0, d->path, "out of memory");
    return -ENOMEM;
}

/* Look @key up; returns the field node, or NULL when missing or null. Pushes the path. */
static const struct ks_yaml_node *field(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key,
                                        size_t *saved)
{
    *saved = ks_dec_push(d, key);
    const struct ks_yaml_node *n = ks_yaml_get(map, key);
    return ks_yaml_is_null(n) ? NULL : n;
}

static int expect(struct ks_decoder *d, const struct ks_yaml_node *n, enum ks_yaml_kind kind)
{
    static const char *const want[] = {"a string", "a list", "a map"};
    if (n->kind != kind)
        return ks_dec_fail(d, n, 0, "expected %s, found %s", want[kind], ks_yaml_kind_name(n));
    return 0;
}

/* The field @key, which must be of @kind; *out as for ks_dec_map. */
static int node_field(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key,
                      enum ks_yaml_kind kind, const struct ks_yaml_node **out)
{
    size_t saved;
    const struct ks_yaml_node *n = field(d, map, key, &saved);
    int rc = n ? expect(d, n, kind) : 0;
    if (rc == 0) {
        *out = n;
        ks_dec_pop(d, saved);
    }
    return rc;
}

int ks_dec_map(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key,
               const struct ks_yaml_node **out)
{
    return node_field(d, map, key, KS_YAML_MAP, out);
}

int ks_dec_seq(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key,
               const struct ks_yaml_node **out)
{
    return node_field(d, map, key, KS_YAML_SEQ, out);
}

int ks_dec_list(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, size_t elem_size,
                uint32_t *n, void **items, ks_dec_item_fn item, void *ctx)
{
    const struct ks_yaml_node *seq = NULL;
    int rc = ks_dec_seq(d, map, key, &seq);
    if (rc || !seq)
        return rc;
    char *out = ks_arena_calloc(d->arena, seq->n ? seq->n : 1, elem_size);
    if (!out)
        return ks_dec_nomem(d);
    size_t saved = ks_dec_push(d, key);
    for (uint32_t i = 0; i < seq->n; i++) {
        size_t s2 = ks_dec_push_index(d, i);
        if ((rc = expect(d, seq->items[i], KS_YAML_MAP)) ||
            (rc = item(d, seq->items[i], out + i * elem_size, ctx)))
            return rc;
        ks_dec_pop(d, s2);
    }
    ks_dec_pop(d, saved);
    *n = seq->n;
    memcpy(items, &out, sizeof(out)); /* *items has the caller's element pointer type */
    return 0;
}

int ks_dec_object(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, size_t size,
                  void **out, ks_dec_item_fn fn, void *ctx)
{
    const struct ks_yaml_node *n = NULL;
    int rc = ks_dec_map(d, map, key, &n);
    if (rc || !n)
        return rc;
    size_t saved = ks_dec_push(d, key);
    void *obj = ks_arena_alloc(d->arena, size);
    if (!obj)
        return ks_dec_nomem(d);
    if ((rc = fn(d, n, obj, ctx)))
        return rc;
    ks_dec_pop(d, saved);
    memcpy(out, &obj, sizeof(obj)); /* *out has the caller's object pointer type */
    return 0;
}

int ks_dec_required(struct ks_decoder *d, const struct ks_yaml_node *at, const char *field)
{
    size_t s = ks_dec_push(d, field);
    int rc = ks_dec_fail(d, at, 0, "Required value");
    ks_dec_pop(d, s);
    return rc;
}

/* A scalar field: @parse decodes its (scalar) node into @out when present and not null. */
static int scalar_field(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key,
                        int (*parse)(struct ks_decoder *d, const struct ks_yaml_node *n, void *out),
                        void *out)
{
    size_t saved;
    const struct ks_yaml_node *n = field(d, map, key, &saved);
    int rc;
    if (n && ((rc = expect(d, n, KS_YAML_SCALAR)) || (rc = parse(d, n, out))))
        return rc;
    ks_dec_pop(d, saved);
    return 0;
}

static int parse_string(struct ks_decoder *d, const struct ks_yaml_node *n, void *out)
{
    /* the tree is freed after loading: strings are copied into the object's arena */
    if (!(*(const char **)out = ks_arena_strndup(d->arena, n->str, n->len)))
        return ks_dec_nomem(d);
    return 0;
}

int ks_dec_string(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, const char **out)
{
    return scalar_field(d, map, key, parse_string, out);
}

static int scalar_id(struct ks_decoder *d, const struct ks_yaml_node *n, uint32_t *out)
{
    int rc = expect(d, n, KS_YAML_SCALAR);
    if (rc)
        return rc;
    if ((*out = ks_intern_n(n->str, n->len)) == KS_ID_NONE)
        return ks_dec_nomem(d);
    return 0;
}

static int parse_id(struct ks_decoder *d, const struct ks_yaml_node *n, void *out)
{
    return scalar_id(d, n, out);
}

int ks_dec_id(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, uint32_t *out)
{
    return scalar_field(d, map, key, parse_id, out);
}

int ks_dec_number_text(const struct ks_yaml_node *n, char *buf, size_t len)
{
    struct ks_json_number num;
    if (ks_yaml_json_type(n, NULL, &num) != KS_JSON_NUMBER)
        return -EINVAL;
    return ks_json_number_text(&num, buf, len);
}

/* An integer in [@lo, @hi]: a JSON number without fraction or exponent once converted. */
static int parse_int(struct ks_decoder *d, const struct ks_yaml_node *n, int64_t lo, int64_t hi, int64_t *out)
{
    struct ks_json_number num;
    int64_t v;
    if (!n->plain)
        return ks_dec_fail(d, n, 0, "expected an integer, found the string \"%s\"", n->str);
    if (ks_yaml_json_type(n, NULL, &num) != KS_JSON_NUMBER || !ks_json_number_int(&num, &v) || v < lo ||
        v > hi)
        return ks_dec_fail(d, n, 0, "invalid integer \"%s\" (want %" PRId64 "..%" PRId64 ")", n->str, lo, hi);
    *out = v;
    return 0;
}

static int parse_int32(struct ks_decoder *d, const struct ks_yaml_node *n, void *out)
{
    int64_t v;
    int rc = parse_int(d, n, INT32_MIN, INT32_MAX, &v);
    if (rc == 0)
        *(int32_t *)out = (int32_t)v;
    return rc;
}

static int parse_int64(struct ks_decoder *d, const struct ks_yaml_node *n, void *out)
{
    return parse_int(d, n, INT64_MIN, INT64_MAX, out);
}

int ks_dec_int32(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, int32_t *out)
{
    return scalar_field(d, map, key, parse_int32, out);
}

int ks_dec_int64(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, int64_t *out)
{
    return scalar_field(d, map, key, parse_int64, out);
}

static int parse_bool(struct ks_decoder *d, const struct ks_yaml_node *n, void *out)
{
    struct ks_json_number num;
    if (ks_yaml_json_type(n, out, &num) != KS_JSON_BOOL)
        return ks_dec_fail(d, n, 0, "expected true or false, found \"%s\"", n->str);
    return 0;
}

int ks_dec_bool(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, bool *out)
{
    return scalar_field(d, map, key, parse_bool, out);
}

static int digits(const char **p, int count, int *out)
{
    int v = 0;
    for (int i = 0; i < count; i++, (*p)++) {
        if (**p < '0' || **p > '9')
            return -1;
        v = v * 10 + (**p - '0');
    }
    *out = v;
    return 0;
}

int ks_rfc3339_parse(const char *s, int64_t *secs_out, int32_t *nanos_out)
{
    int y, mo, da, h, mi, se, oh = 0, om = 0;
    int64_t frac = 0, scale = 1000000000;
    const char *p = s;

    if (digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' || digits(&p, 2, &da))
        return -1;
    if ((*p != 'T' && *p != 't' && *p != ' ') || (p++, digits(&p, 2, &h)) || *p++ != ':' ||
        digits(&p, 2, &mi) || *p++ != ':' || digits(&p, 2, &se))
        return -1;
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return -1;
        for (; *p >= '0' && *p <= '9'; p++) {
            if (scale > 1) {
                scale /= 10;
                frac += (*p - '0') * scale;
            }
        }
    }
    int sign = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        sign = *p++ == '-' ? -1 : 1;
        if (digits(&p, 2, &oh) || *p++ != ':' || digits(&p, 2, &om))
            return -1;
    } else {
        return -1;
    }
    /* Go's time.Parse: the day must exist in its month, seconds stop at 59 */
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (*p || mo < 1 || mo > 12 || da < 1 || da > mdays[mo - 1] || h > 23 || mi > 59 || se > 59)
        return -1;
    if (mo == 2 && da == 29 && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)))
        return -1;
    /* days from civil (proleptic Gregorian) */
    int yy = y - (mo <= 2);
    int era = (yy >= 0 ? yy : yy - 399) / 400;
    int yoe = yy - era * 400;
    int doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + da - 1;
    int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    int64_t days = (int64_t)era * 146097 + doe - 719468;
    *secs_out = days * 86400 + h * 3600 + mi * 60 + se - sign * (oh * 3600 + om * 60);
    *nanos_out = (int32_t)frac;
    return 0;
}

/* RFC 3339 (metav1.Time) to unix nanoseconds. */
static int parse_rfc3339(const char *s, int64_t *out)
{
    int64_t secs, frac;
    int32_t nanos;
    if (ks_rfc3339_parse(s, &secs, &nanos) < 0)
        return -1;
    frac = nanos;
    /*
     * Unix nanoseconds span the years 1677-2262; a valid time outside saturates (one above
     * KS_TIME_NONE at the low end) so that it still orders before or after every other.
     */
    int64_t ns;
    if (__builtin_mul_overflow(secs, (int64_t)1000000000, &ns) || __builtin_add_overflow(ns, frac, &ns))
        ns = secs < 0 ? KS_TIME_NONE + 1 : INT64_MAX;
    *out = ns == KS_TIME_NONE ? KS_TIME_NONE + 1 : ns;
    return 0;
}

static int parse_time(struct ks_decoder *d, const struct ks_yaml_node *n, void *out)
{
    if (parse_rfc3339(n->str, out) < 0)
        return ks_dec_fail(d, n, 0, "invalid RFC 3339 time \"%s\"", n->str);
    return 0;
}

int ks_dec_time(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, int64_t *out)
{
    return scalar_field(d, map, key, parse_time, out);
}

static int cmp_label(const void *a, const void *b)
{
    const struct ks_label *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key;
}

/*
 * The map @n into a new arena array with one element of @size bytes per pair, decoded by
 * @fn. The path stays at the map; @fn may extend it (restored after each pair).
 */
static int pairs(struct ks_decoder *d, const struct ks_yaml_node *n, size_t size, uint32_t *count,
                 void **items, int (*fn)(struct ks_decoder *d, const struct ks_yaml_pair *p, void *elem))
{
    int rc = expect(d, n, KS_YAML_MAP);
    if (rc)
        return rc;
    char *out = ks_arena_calloc(d->arena, n->n ? n->n : 1, size);
    if (!out)
        return ks_dec_nomem(d);
    for (uint32_t i = 0; i < n->n; i++) {
        size_t s2 = d->plen;
        if ((rc = fn(d, &n->pairs[i], out + i * size)))
            return rc;
        ks_dec_pop(d, s2);
    }
    *count = n->n;
    memcpy(items, &out, sizeof(out)); /* *items has the caller's element pointer type */
    return 0;
}

static int label_pair(struct ks_decoder *d, const struct ks_yaml_pair *p, void *elem)
{
    struct ks_label *l = elem;
    int rc = scalar_id(d, p->key, &l->key);
    if (rc)
        return rc;
    ks_dec_push_key(d, p->key->str);
    if (ks_yaml_is_null(p->value))
        l->value = KS_ID_EMPTY;
    else if ((rc = scalar_id(d, p->value, &l->value)))
        return rc;
    return 0;
}

struct pairs_ctx {
    ks_dec_pair_fn fn;
    void *ctx;
    char *out;
    size_t size;
};

int ks_dec_pairs(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, size_t elem_size,
                 uint32_t *n, void **items, ks_dec_pair_fn fn, void *ctx)
{
    size_t saved;
    const struct ks_yaml_node *m = field(d, map, key, &saved);
    int rc;

    if (!m)
        goto done;
    if ((rc = expect(d, m, KS_YAML_MAP)))
        return rc;
    char *out = ks_arena_calloc(d->arena, m->n ? m->n : 1, elem_size);
    if (!out)
        return ks_dec_nomem(d);
    for (uint32_t i = 0; i < m->n; i++) {
        size_t s2 = d->plen;
        if ((rc = expect(d, m->pairs[i].key, KS_YAML_SCALAR)) ||
            (rc = fn(d, m->pairs[i].key, m->pairs[i].value, out + i * elem_size, ctx)))
            return rc;
        ks_dec_pop(d, s2);
    }
    *n = m->n;
    memcpy(items, &out, sizeof(out)); /* *items has the caller's element pointer type */
done:
    ks_dec_pop(d, saved);
    return 0;
}

size_t ks_dec_push_map_key(struct ks_decoder *d, const char *key)
{
    size_t prev = d->plen;
    int w = snprintf(d->path + d->plen, sizeof(d->path) - d->plen, "[%s]", key);
    if (w > 0)
        d->plen = d->plen + (size_t)w < sizeof(d->path) ? d->plen + (size_t)w : sizeof(d->path) - 1;
    return prev;
}

size_t ks_go_quote(char *buf, size_t len, const char *s, size_t n)
{
    size_t o = 0;

#define PUT(c)                                                                                               \
    do {                                                                                                     \
        if (o + 1 < len)                                                                                     \
            buf[o] = (c);                                                                                    \
        o++;                                                                                                 \
    } while (0)
    PUT('"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            PUT('\\');
            PUT((char)c);
        } else if (c == '\n') {
            PUT('\\');
            PUT('n');
        } else if (c == '\t') {
            PUT('\\');
            PUT('t');
        } else if (c == '\r') {
            PUT('\\');
            PUT('r');
        } else if (c < 0x20 || c == 0x7f) {
            static const char hex[] = "0123456789abcdef";
            PUT('\\');
            PUT('x');
            PUT(hex[c >> 4]);
            PUT(hex[c & 15]);
        } else {
            PUT((char)c);
        }
    }
    PUT('"');
#undef PUT
    if (len)
        buf[o < len ? o : len - 1] = '\0';
    return o;
}

int ks_dec_invalid(struct ks_decoder *d, const struct ks_yaml_node *n, const char *at, const char *value,
                   const char *detail)
{
    char q[KS_ERROR_MSG_MAX / 2];

    if (at)
        ks_dec_push(d, at);
    ks_go_quote(q, sizeof(q), value, strlen(value));
    return ks_dec_fail(d, n, 0, "Invalid value: %s: %s", q, detail);
}

int ks_dec_labels(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key,
                  struct ks_labels *out)
{
    size_t saved;
    const struct ks_yaml_node *n = field(d, map, key, &saved);
    int rc;

    if (n) {
        if ((rc = pairs(d, n, sizeof(*out->items), &out->n, (void **)&out->items, label_pair)))
            return rc;
        qsort(out->items, out->n, sizeof(*out->items), cmp_label);
    }
    ks_dec_pop(d, saved);
    return 0;
}

static int annotation_pair(struct ks_decoder *d, const struct ks_yaml_pair *p, void *elem)
{
    struct ks_kv *a = elem;
    int rc;
    ks_dec_push_key(d, p->key->str);
    if ((rc = expect(d, p->key, KS_YAML_SCALAR)) ||
        (!ks_yaml_is_null(p->value) && (rc = expect(d, p->value, KS_YAML_SCALAR))))
        return rc;
    a->key = ks_arena_strndup(d->arena, p->key->str, p->key->len);
    a->value = ks_yaml_is_null(p->value) ? ks_arena_strdup(d->arena, "")
                                         : ks_arena_strndup(d->arena, p->value->str, p->value->len);
    if (!a->key || !a->value)
        return ks_dec_nomem(d);
    return 0;
}

int ks_dec_annotations(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key,
                       struct ks_annotations *out)
{
    size_t saved;
    const struct ks_yaml_node *n = field(d, map, key, &saved);
    int rc;

    if (n && (rc = pairs(d, n, sizeof(*out->items), &out->n, (void **)&out->items, annotation_pair)))
        return rc;
    ks_dec_pop(d, saved);
    return 0;
}

int ks_dec_quantity(const struct ks_yaml_node *n, struct ks_quantity *q)
{
    char text[64];
    if (ks_dec_number_text(n, text, sizeof(text)) == 0)
        return ks_quantity_parse(text, q);
    if (n->kind != KS_YAML_SCALAR)
        return -EINVAL;
    /* resource.Quantity's UnmarshalJSON trims the string */
    size_t b = 0, e = n->len;
    while (b < e && n->str[b] == ' ')
        b++;
    while (e > b && n->str[e - 1] == ' ')
        e--;
    return ks_quantity_parse_n(n->str + b, e - b, q);
}

static int cmp_resource(const void *a, const void *b)
{
    const struct ks_resource_item *x = a, *y = b;
    return x->name < y->name ? -1 : x->name > y->name;
}

static int resource_pair(struct ks_decoder *d, const struct ks_yaml_pair *p, void *elem)
{
    struct ks_resource_item *r = elem;
    struct ks_quantity q;
    int rc = scalar_id(d, p->key, &r->name);
    if (rc)
        return rc;
    ks_dec_push_key(d, p->key->str);
    if (ks_yaml_is_null(p->value) || p->value->kind != KS_YAML_SCALAR)
        return ks_dec_fail(d, p->value, 0, "expected a quantity, found %s", ks_yaml_kind_name(p->value));
    if (ks_dec_quantity(p->value, &q) < 0)
        return ks_dec_fail(d, p->value, 0, "invalid quantity \"%s\"", p->value->str);
    if (ks_quantity_sign(&q) < 0)
        return ks_dec_fail(d, p->value, 0, "must be greater than or equal to 0, found \"%s\"", p->value->str);
    r->value = r->name == ks_intern("cpu") ? ks_quantity_milli_value(&q) : ks_quantity_value(&q);
    return 0;
}

int ks_dec_resources(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key,
                     struct ks_resource_list *out)
{
    size_t saved;
    const struct ks_yaml_node *n = field(d, map, key, &saved);
    int rc;

    if (!n)
        goto done;
    if ((rc = pairs(d, n, sizeof(*out->items), &out->n, (void **)&out->items, resource_pair)))
        return rc;
    qsort(out->items, out->n, sizeof(*out->items), cmp_resource);
    for (uint32_t i = 1; i < out->n; i++) {
        if (out->items[i].name == out->items[i - 1].name)
            return ks_dec_fail(d, n, 0, "duplicate resource \"%s\"", ks_intern_str(out->items[i].name));
    }
done:
    ks_dec_pop(d, saved);
    return 0;
}

static int cmp_id(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* A list of scalars into ids (sorted when @sort) or strings. */
static int scalar_list(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, uint32_t *n,
                       uint32_t **ids, const char ***strs, bool sort)
{
    size_t saved;
    const struct ks_yaml_node *s = field(d, map, key, &saved);
    int rc;

    if (!s)
        goto done;
    if ((rc = expect(d, s, KS_YAML_SEQ)))
        return rc;
    if (ids && !(*ids = ks_arena_calloc(d->arena, s->n ? s->n : 1, sizeof(**ids))))
        return ks_dec_nomem(d);
    if (strs && !(*strs = ks_arena_calloc(d->arena, s->n ? s->n : 1, sizeof(**strs))))
        return ks_dec_nomem(d);
    for (uint32_t i = 0; i < s->n; i++) {
        size_t s2 = ks_dec_push_index(d, i);
        if ((rc = expect(d, s->items[i], KS_YAML_SCALAR)))
            return rc;
        if (ids && (rc = scalar_id(d, s->items[i], &(*ids)[i])))
            return rc;
        if (strs && !((*strs)[i] = ks_arena_strndup(d->arena, s->items[i]->str, s->items[i]->len)))
            return ks_dec_nomem(d);
        ks_dec_pop(d, s2);
    }
    *n = s->n;
    if (ids && sort)
        qsort(*ids, *n, sizeof(**ids), cmp_id);
done:
    ks_dec_pop(d, saved);
    return 0;
}

int ks_dec_id_list(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, uint32_t *n,
                   uint32_t **out)
{
    return scalar_list(d, map, key, n, out, NULL, false);
}

int ks_dec_id_set(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, uint32_t *n,
                  uint32_t **out)
{
    return scalar_list(d, map, key, n, out, NULL, true);
}

int ks_dec_string_list(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, uint32_t *n,
                       const char ***out)
{
    return scalar_list(d, map, key, n, NULL, out, false);
}

struct enum_out {
    const char *const *names;
    int *index;
};

static int parse_enum(struct ks_decoder *d, const struct ks_yaml_node *n, void *out)
{
    const struct enum_out *e = out;
    const char *const *names = e->names;
    int i;
    for (i = 0; names[i]; i++) {
        if (strcmp(names[i], n->str) == 0)
            break;
    }
    if (!names[i]) {
        char allowed[256] = "";
        for (int j = 0; names[j]; j++) {
            if (!names[j][0])
                continue;
            size_t l = strlen(allowed);
            snprintf(allowed + l, sizeof(allowed) - l, "%s\"%s\"", l ? ", " : "", names[j]);
        }
        return ks_dec_fail(d, n, 0, "unsupported value \"%s\": supported values: %s", n->str, allowed);
    }
    *e->index = i;
    return 0;
}

int ks_dec_enum(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key,
                const char *const *names, int *out)
{
    struct enum_out e = {.names = names, .index = out};
    return scalar_field(d, map, key, parse_enum, &e);
}

/* ---- selectors ---------------------------------------------------------------------------- */

static const char *const op_names[] = {
#define KS_X(name, text) text,
    KS_SELECTOR_OP_MAP(KS_X)
#undef KS_X
        NULL,
};

/* One requirement {key, operator, values}; @node_ops allows Gt and Lt. */
static int requirement(struct ks_decoder *d, const struct ks_yaml_node *n, bool node_ops,
                       struct ks_requirement *r)
{
    int op = -1, rc;
    if ((rc = expect(d, n, KS_YAML_MAP)))
        return rc;
    r->key = KS_ID_NONE;
    if ((rc = ks_dec_id(d, n, "key", &r->key)) || (rc = ks_dec_enum(d, n, "operator", op_names, &op)))
        return rc;
    if (r->key == KS_ID_NONE)
        return ks_dec_required(d, n, "key");
    if (op < 0)
        return ks_dec_required(d, n, "operator");
    if (!node_ops && op > KS_OP_DOES_NOT_EXIST) {
        ks_dec_push(d, "operator");
        return ks_dec_fail(d, ks_yaml_get(n, "operator"), 0, "%s is not a valid label selector operator",
                           op_names[op]);
    }
    r->op = (enum ks_selector_op)op;
    if ((rc = scalar_list(d, n, "values", &r->nvalues, &r->values, NULL, true)))
        return rc;
    size_t s = ks_dec_push(d, "values");
    const struct ks_yaml_node *vn = ks_yaml_get(n, "values");
    switch (r->op) {
    case KS_OP_IN:
    case KS_OP_NOT_IN:
        if (r->nvalues == 0)
            return ks_dec_fail(d, vn ? vn : n, 0, "must be specified when `operator` is 'In' or 'NotIn'");
        break;
    case KS_OP_EXISTS:
    case KS_OP_DOES_NOT_EXIST:
        if (r->nvalues != 0)
            return ks_dec_fail(d, vn, 0,
                               "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
        break;
    case KS_OP_GT:
    case KS_OP_LT: {
        char *end;
        const char *v = r->nvalues == 1 ? ks_intern_str(r->values[0]) : "";
        errno = 0;
        r->number = strtoll(v, &end, 10);
        if (r->nvalues != 1)
            return ks_dec_fail(d, vn ? vn : n, 0,
                               "must be specified single value when `operator` is 'Lt' or 'Gt'");
        /* as Go's strconv.ParseInt: an optional sign, then digits only */
        if (errno || end == v || *end || !(v[0] == '-' || v[0] == '+' || (v[0] >= '0' && v[0] <= '9')))
            return ks_dec_fail(d, vn, 0, "invalid integer \"%s\" for `operator` '%s'", v, op_names[r->op]);
        break;
    }
    }
    ks_dec_pop(d, s);
    return 0;
}

static int requirements(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, bool node_ops,
                        uint32_t extra, uint32_t *n, struct ks_requirement **out)
{
    const struct ks_yaml_node *seq = NULL;
    int rc = ks_dec_seq(d, map, key, &seq);
    if (rc)
        return rc;
    uint32_t count = seq ? seq->n : 0;
    *out = ks_arena_calloc(d->arena, count + extra ? count + extra : 1, sizeof(**out));
    if (!*out)
        return ks_dec_nomem(d);
    size_t saved = ks_dec_push(d, key);
    for (uint32_t i = 0; i < count; i++) {
        size_t s2 = ks_dec_push_index(d, i);
        if ((rc = requirement(d, seq->items[i], node_ops, &(*out)[extra + i])))
            return rc;
        ks_dec_pop(d, s2);
    }
    ks_dec_pop(d, saved);
    *n = extra + count;
    return 0;
}

static int label_selector(struct ks_decoder *d, const struct ks_yaml_node *sel, void *elem, void *ctx)
{
    struct ks_label_selector *s = elem;
    const struct ks_yaml_node *ml = NULL;
    int rc;

    (void)ctx;
    if ((rc = ks_dec_map(d, sel, "matchLabels", &ml)))
        return rc;
    /* matchLabels become In requirements with one value, ahead of matchExpressions */
    uint32_t nml = ml ? ml->n : 0;
    if ((rc = requirements(d, sel, "matchExpressions", false, nml, &s->nreqs, &s->reqs)))
        return rc;
    if (nml) {
        struct ks_labels labels = {0};
        if ((rc = ks_dec_labels(d, sel, "matchLabels", &labels)))
            return rc;
        for (uint32_t i = 0; i < labels.n; i++) {
            struct ks_requirement *r = &s->reqs[i];
            r->key = labels.items[i].key;
            r->op = KS_OP_IN;
            r->nvalues = 1;
            r->values = &labels.items[i].value;
        }
    }
    return 0;
}

int ks_dec_label_selector(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key,
                          struct ks_label_selector **out)
{
    return ks_dec_object(d, map, key, sizeof(**out), (void **)out, label_selector, NULL);
}

int ks_dec_node_selector_term(struct ks_decoder *d, const struct ks_yaml_node *node,
                              struct ks_node_selector_term *out)
{
    int rc = expect(d, node, KS_YAML_MAP);
    if (rc || (rc = requirements(d, node, "matchExpressions", true, 0, &out->nexprs, &out->exprs)) ||
        (rc = requirements(d, node, "matchFields", true, 0, &out->nfields, &out->fields)))
        return rc;
    for (uint32_t i = 0; i < out->nfields; i++) {
        if (out->fields[i].key != ks_intern("metadata.name")) {
            size_t s = ks_dec_push(d, "matchFields");
            ks_dec_push_index(d, i);
            ks_dec_push(d, "key");
            rc = ks_dec_fail(d, node, 0, "not a valid field selector key \"%s\"",
                             ks_intern_str(out->fields[i].key));
            ks_dec_pop(d, s);
            return rc;
        }
        if (out->fields[i].op != KS_OP_IN && out->fields[i].op != KS_OP_NOT_IN) {
            size_t s = ks_dec_push(d, "matchFields");
            ks_dec_push_index(d, i);
            ks_dec_push(d, "operator");
            rc = ks_dec_fail(d, node, 0, "not a valid selector operator \"%s\"", op_names[out->fields[i].op]);
            ks_dec_pop(d, s);
            return rc;
        }
        if (out->fields[i].nvalues != 1) {
            size_t s = ks_dec_push(d, "matchFields");
            ks_dec_push_index(d, i);
            ks_dec_push(d, "values");
            rc = ks_dec_fail(
                d, node, 0,
                "must be only one value when `operator` is 'In' or 'NotIn' for node field selector");
            ks_dec_pop(d, s);
            return rc;
        }
    }
    return 0;
}

static int node_selector_term(struct ks_decoder *d, const struct ks_yaml_node *node, void *elem, void *ctx)
{
    (void)ctx;
    return ks_dec_node_selector_term(d, node, elem);
}

static int node_selector(struct ks_decoder *d, const struct ks_yaml_node *sel, void *elem, void *ctx)
{
    struct ks_node_selector *s = elem;
    const struct ks_yaml_node *terms = NULL;
    int rc;

    (void)ctx;
    if ((rc = ks_dec_seq(d, sel, "nodeSelectorTerms", &terms)))
        return rc;
    if (!terms || terms->n == 0) {
        ks_dec_push(d, "nodeSelectorTerms");
        return ks_dec_fail(d, sel, 0, "must have at least one node selector term");
    }
    return ks_dec_list(d, sel, "nodeSelectorTerms", sizeof(*s->terms), &s->nterms, (void **)&s->terms,
                       node_selector_term, NULL);
}

int ks_dec_node_selector(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key,
                         struct ks_node_selector **out)
{
    return ks_dec_object(d, map, key, sizeof(**out), (void **)out, node_selector, NULL);
}

/* ---- metadata ------------------------------------------------------------------------------ */

static int owner_ref(struct ks_decoder *d, const struct ks_yaml_node *on, void *elem, void *ctx)
{
    struct ks_owner_ref *o = elem;
    int rc;
    (void)ctx;
    if ((rc = ks_dec_string(d, on, "apiVersion", &o->api_version)) ||
        (rc = ks_dec_string(d, on, "kind", &o->kind)) || (rc = ks_dec_string(d, on, "name", &o->name)) ||
        (rc = ks_dec_string(d, on, "uid", &o->uid)) ||
        (rc = ks_dec_bool(d, on, "controller", &o->controller)))
        return rc;
    return 0;
}

int ks_dec_meta(struct ks_decoder *d, const struct ks_yaml_node *doc, bool namespaced,
                struct ks_object_meta *out)
{
    const struct ks_yaml_node *m = NULL;
    int rc;

    out->creation_time = KS_TIME_NONE;
    out->deletion_time = KS_TIME_NONE;
    out->namespace_id = namespaced ? ks_intern("default") : KS_ID_EMPTY;
    out->line = doc->line;
    if ((rc = ks_dec_map(d, doc, "metadata", &m)))
        return rc;
    if (!m) {
        ks_dec_push(d, "metadata.name");
        return ks_dec_fail(d, doc, 0, "Required value: name is required");
    }
    size_t saved = ks_dec_push(d, "metadata");
    if ((rc = ks_dec_string(d, m, "name", &out->name)))
        return rc;
    if (ks_yaml_get(m, "name"))
        out->line = ks_yaml_get(m, "name")->line;
    if (!out->name || !out->name[0]) {
        ks_dec_push(d, "name");
        return ks_dec_fail(d, m, 0, "Required value: name is required");
    }
    if (namespaced) {
        uint32_t ns = KS_ID_EMPTY;
        if ((rc = ks_dec_id(d, m, "namespace", &ns)))
            return rc;
        if (ns != KS_ID_EMPTY)
            out->namespace_id = ns;
    }
    if ((rc = ks_dec_string(d, m, "uid", &out->uid)) ||
        (rc = ks_dec_string(d, m, "resourceVersion", &out->resource_version)) ||
        (rc = ks_dec_labels(d, m, "labels", &out->labels)) ||
        (rc = ks_dec_annotations(d, m, "annotations", &out->annotations)) ||
        (rc = ks_dec_time(d, m, "creationTimestamp", &out->creation_time)) ||
        (rc = ks_dec_time(d, m, "deletionTimestamp", &out->deletion_time)) ||
        (rc = ks_dec_list(d, m, "ownerReferences", sizeof(*out->owners), &out->nowners, (void **)&out->owners,
                          owner_ref, NULL)))
        return rc;
    ks_dec_pop(d, saved);
    return 0;
}
