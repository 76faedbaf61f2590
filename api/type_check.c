/*
 * type_check.c - a manifest's values against the Go types of the API (see
 * include/ksched/internal/type_check.h).
 *
 * Mirrors the decoding of a JSON body into a typed object in the API server: sigs.k8s.io/json
 * (encoding/json, case-sensitive), the UnmarshalJSON of resource.Quantity, intstr.IntOrString
 * and metav1.Time, and time.Parse's errors for RFC 3339. What the walk reproduces of the
 * decoder:
 *   - the order: an object's keys in sorted (byte) order, as encoding/json wrote the body
 *     from a map; list items in order;
 *   - the context of an error: the innermost struct whose field is being decoded (its Go
 *     name, "ObjectMeta") and the JSON names of the struct fields from the root
 *     ("metadata.labels": map keys and list indexes are not part of it);
 *   - saved errors: a value of the wrong JSON type, or a number that is not an integer of the
 *     field's size, is recorded if it is the first, and decoding goes on (the value's field
 *     is left zero);
 *   - errors of the types that decode themselves end decoding at once: a Quantity that does
 *     not parse (its own error text), an IntOrString that is neither a string nor an int32 and
 *     a Time that is no string (encoding/json's error for the inner value, given the outer
 *     context), a Time string that is not RFC 3339 (time.Parse's text).
 * JSON null decodes into anything without error. Fields the schema does not know are
 * skipped here (field_check.c reports them).
 *
 * The value's JSON form comes from the YAML layer's conversion (ks_yaml_json_type): a YAML
 * number where a string goes is an error, as the API server sees it after kubectl's
 * conversion, and a float that JSON cannot hold (.inf, .nan) fails that conversion.
 */
#include "ksched/internal/type_check.h"

#include "ksched/internal/api_schema.h"
#include "ksched/quantity.h"
#include "ksched/yaml_tree.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One level of the path: a map key, or (key NULL) a list index; field: a struct field. */
struct frame {
    const struct frame *up;
    const char *key;
    uint32_t index;
    bool field;
};

struct walk {
    const char *kind, *version, *file, *prefix;
    struct ks_error *err;
    bool saved; /* err holds the first saved (non-fatal) error */
    /* keys of the maps being walked, sorted, as a stack of runs */
    const struct ks_yaml_pair **keys;
    uint32_t nkeys, capkeys;
};

enum { WALK_GO = 0, WALK_STOP = 1 };

/* The dotted path down to @f in ksched's spelling ("spec.containers[0].ports[0].hostPort"). */
static size_t put_path(char *buf, size_t len, size_t at, const struct frame *f)
{
    if (!f)
        return at;
    at = put_path(buf, len, at, f->up);
    if (at >= len)
        return at;
    if (!f->key)
        at += (size_t)snprintf(buf + at, len - at, "[%u]", f->index);
    else if (strpbrk(f->key, "./") || !*f->key)
        at += (size_t)snprintf(buf + at, len - at, "[%s]", f->key);
    else
        at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? "." : "", f->key);
    return at;
}

/* The decoder's context: the struct fields' names from the root, dot-separated. */
static size_t put_fields(char *buf, size_t len, size_t at, const struct frame *f)
{
    if (!f)
        return at;
    at = put_fields(buf, len, at, f->up);
    if (f->field && at < len)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? "." : "", f->key);
    return at;
}

/* Record the error at @n under @f: the API server's message around @what. */
static void set_error(struct walk *w, const struct ks_yaml_node *n, const struct frame *f, const char *what)
{
    char path[KS_ERROR_FIELD_MAX];
    size_t at = (size_t)snprintf(path, sizeof(path), "%s", w->prefix);
    if (at && path[at - 1] == '.')
        path[--at] = '\0';
    put_path(path, sizeof(path), at < sizeof(path) ? at : sizeof(path), f);
    w->err->set = 0; /* an error that ends decoding replaces a saved one */
    ks_error_set(w->err, w->file, n->line, path, "%s in version \"%s\" cannot be handled as a %s: %s",
                 w->kind, w->version, w->kind, what);
}

/*
 * encoding/json's UnmarshalTypeError: @value ("number", "string", "number 1.5") could not go
 * into Go type @type; @sname/@f give the context (none: "into Go value of type").
 */
static void type_error(struct walk *w, const struct ks_yaml_node *n, const struct frame *f, const char *sname,
                       const char *value, const char *type)
{
    char msg[KS_ERROR_MSG_MAX], fields[KS_ERROR_FIELD_MAX];
    fields[0] = '\0';
    put_fields(fields, sizeof(fields), 0, f);
    if (sname)
        snprintf(msg, sizeof(msg), "json: cannot unmarshal %s into Go struct field %s.%s of type %s", value,
                 sname, fields, type);
    else
        snprintf(msg, sizeof(msg), "json: cannot unmarshal %s into Go value of type %s", value, type);
    set_error(w, n, f, msg);
}

static const char *json_name(enum ks_json_type t)
{
    static const char *const names[] = {"null", "bool", "number", "string", "array", "object"};
    return names[t];
}

/* time.Parse's quote(): the text in double quotes, quotes and backslashes escaped. */
static size_t go_quote(char *buf, size_t len, const char *s)
{
    size_t at = 0;
    if (at < len)
        buf[at++] = '"';
    for (; *s && at + 2 < len; s++) {
        if (*s == '"' || *s == '\\')
            buf[at++] = '\\';
        buf[at++] = *s;
    }
    if (at < len)
        buf[at++] = '"';
    buf[at < len ? at : len - 1] = '\0';
    return at;
}

static bool digit(const char *s, size_t i)
{
    return strnlen(s, i + 1) > i && s[i] >= '0' && s[i] <= '9';
}

/* time's getnum: one or two digits (@fixed: exactly two); -1 when bad. */
static int getnum(const char **s, bool fixed)
{
    if (!digit(*s, 0))
        return -1;
    if (!digit(*s, 1)) {
        if (fixed)
            return -1;
        return *(*s)++ - '0';
    }
    int v = ((*s)[0] - '0') * 10 + (*s)[1] - '0';
    *s += 2;
    return v;
}

static bool leap(int y)
{
    return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

/* The layout's elements after the year, in order: a literal, or a number with its range. */
static const struct rfc3339_elem {
    char lit;         /* the literal, or 0 for a number */
    const char *text; /* the element as the layout writes it */
    bool fixed;       /* a number of exactly two digits */
    int lo, hi;       /* a number's range... */
    const char *name; /* ...and its name in the error (NULL: checked at the end, as the day is) */
} rfc3339_elems[] = {
    {'-', "-", false, 0, 0, NULL},    {0, "01", true, 1, 12, "month"},  {'-', "-", false, 0, 0, NULL},
    {0, "02", true, 0, 99, NULL},     {'T', "T", false, 0, 0, NULL},    {0, "15", false, 0, 23, "hour"},
    {':', ":", false, 0, 0, NULL},    {0, "04", true, 0, 59, "minute"}, {':', ":", false, 0, 0, NULL},
    {0, "05", true, 0, 59, "second"},
};

/* The layout's "2006": four digits, signed; false when @v does not start with them. */
static bool rfc3339_year(const char **v, int *year)
{
    const char *p = *v;
    bool neg = false;
    if (strnlen(p, 4) < 4)
        return false;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    for (*year = 0; p < *v + 4; p++) {
        if (*p < '0' || *p > '9')
            return false;
        *year = *year * 10 + (*p - '0');
    }
    *year = neg ? -*year : *year;
    *v += 4;
    return true;
}

/* The fraction of a second and the layout's "Z07:00"; false when the zone does not parse. */
static bool rfc3339_zone(const char **v)
{
    const char *p = *v;
    if ((*p == '.' || *p == ',') && digit(p, 1)) {
        p++;
        while (digit(p, 0))
            p++;
    }
    *v = p;
    if (*p == 'Z') {
        *v = p + 1;
        return true;
    }
    if (strnlen(p, 6) < 6 || p[3] != ':' || (p[0] != '+' && p[0] != '-') || !digit(p, 1) || !digit(p, 2) ||
        !digit(p, 4) || !digit(p, 5))
        return false;
    *v = p + 6;
    return true;
}

/* time's "cannot parse" error: @s's rest @v did not match the layout's element @elem. */
static int rfc3339_bad(const char *s, const char *v, const char *elem, char *msg, size_t len)
{
    char qv[128], qrest[128], ql[64], qe[32];
    go_quote(qv, sizeof(qv), s);
    go_quote(qrest, sizeof(qrest), v);
    go_quote(ql, sizeof(ql), "2006-01-02T15:04:05Z07:00");
    go_quote(qe, sizeof(qe), elem);
    snprintf(msg, len, "parsing time %s as %s: cannot parse %s as %s", qv, ql, qrest, qe);
    return -1;
}

/* time's range error: @s's element @name is out of range. */
static int rfc3339_range(const char *s, const char *name, char *msg, size_t len)
{
    char qv[128];
    go_quote(qv, sizeof(qv), s);
    snprintf(msg, len, "parsing time %s: %s out of range", qv, name);
    return -1;
}

/*
 * time.Parse(time.RFC3339, @s)'s error into @msg, or 0 when it parses. The layout's
 * elements in turn, as time's general parser takes them.
 */
static int rfc3339_error(const char *s, char *msg, size_t len)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const char *v = s;
    int year, num[sizeof(rfc3339_elems) / sizeof(rfc3339_elems[0])] = {0};

    if (!rfc3339_year(&v, &year))
        return rfc3339_bad(s, v, "2006", msg, len);
    for (size_t i = 0; i < sizeof(rfc3339_elems) / sizeof(rfc3339_elems[0]); i++) {
        const struct rfc3339_elem *e = &rfc3339_elems[i];
        const char *at = v;
        if (e->lit ? *v++ != e->lit : (num[i] = getnum(&v, e->fixed)) < 0)
            return rfc3339_bad(s, at, e->text, msg, len);
        if (!e->lit && e->name && (num[i] < e->lo || num[i] > e->hi))
            return rfc3339_range(s, e->name, msg, len);
    }
    if (!rfc3339_zone(&v))
        return rfc3339_bad(s, v, "Z07:00", msg, len);
    if (*v) {
        char qv[128], qrest[128];
        go_quote(qv, sizeof(qv), s);
        go_quote(qrest, sizeof(qrest), v);
        snprintf(msg, len, "parsing time %s: extra text: %s", qv, qrest);
        return -1;
    }
    int month = num[1], day = num[3];
    if (day < 1 || day > days[month - 1] + (month == 2 && leap(year)))
        return rfc3339_range(s, "day", msg, len);
    return 0;
}

/* resource.ParseQuantity's error for a text that ks_quantity_parse refused. */
static const char *quantity_error(const char *s)
{
    /* the number part parses and the rest is made of suffix characters: the suffix is unknown */
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    const char *num = p;
    while ((*p >= '0' && *p <= '9') || *p == '.')
        p++;
    if (p > num && *s) {
        while (*p && strchr("eEinumkKMGTP", *p))
            p++;
        if (*p == '+' || *p == '-')
            p++;
        while (*p >= '0' && *p <= '9')
            p++;
        if (!*p)
            return "unable to parse quantity's suffix";
    }
    return "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
}

/* Whether the JSON text of @num is an integer of an int32 (@int32) or int64 Go field. */
static bool fits_int(const struct ks_json_number *num, bool int32)
{
    int64_t v;
    return ks_json_number_int(num, &v) && (!int32 || (v >= INT32_MIN && v <= INT32_MAX));
}

/* encoding/json's error for a number @num that does not fit Go type @type: "number 1.5". */
static void number_error(struct walk *w, const struct ks_yaml_node *n, const struct frame *f,
                         const char *sname, const struct ks_json_number *num, const char *type)
{
    char text[64], value[80];
    ks_json_number_text(num, text, sizeof(text));
    snprintf(value, sizeof(value), "number %s", text);
    type_error(w, n, f, sname, value, type);
}

/* A scalar (or a value where a scalar goes) of schema @s: WALK_STOP after an error that ends decoding. */
static int scalar(struct walk *w, const struct ks_yaml_node *n, const struct ks_schema_node *s,
                  const struct frame *f, const char *sname, enum ks_json_type t,
                  const struct ks_json_number *num)
{
    char text[64], msg[KS_ERROR_MSG_MAX];

    if (t == KS_JSON_NUMBER && num->form == KS_JSON_FLOAT && (isnan(num->f) || isinf(num->f))) {
        /* kubectl's conversion cannot write it */
        snprintf(msg, sizeof(msg), "error converting YAML to JSON: json: unsupported value: %s",
                 isnan(num->f) ? "NaN"
                 : num->f > 0  ? "+Inf"
                               : "-Inf");
        set_error(w, n, f, msg);
        return WALK_STOP;
    }
    switch (s->kind) {
    case KS_SCHEMA_STRING:
    case KS_SCHEMA_BYTES:
        if (t != KS_JSON_STRING)
            goto mismatch;
        return WALK_GO;
    case KS_SCHEMA_BOOL:
        if (t != KS_JSON_BOOL)
            goto mismatch;
        return WALK_GO;
    case KS_SCHEMA_INT32:
    case KS_SCHEMA_INT64:
    case KS_SCHEMA_FLOAT64:
        if (t != KS_JSON_NUMBER)
            goto mismatch;
        if (s->kind != KS_SCHEMA_FLOAT64 && !fits_int(num, s->kind == KS_SCHEMA_INT32) && !w->saved) {
            number_error(w, n, f, sname, num, s->go);
            w->saved = true;
        }
        return WALK_GO;
    case KS_SCHEMA_QUANTITY: {
        /* UnmarshalJSON: the raw JSON text (a string's without its quotes), trimmed */
        struct ks_quantity q;
        const char *v = t == KS_JSON_BOOL ? n->str : NULL;
        if (t == KS_JSON_STRING) {
            size_t b = 0, e = n->len;
            while (b < e && n->str[b] == ' ')
                b++;
            while (e > b && n->str[e - 1] == ' ')
                e--;
            if (ks_quantity_parse_n(n->str + b, e - b, &q) == 0)
                return WALK_GO;
            snprintf(text, sizeof(text), "%.*s", (int)(e - b), n->str + b);
            v = text;
        } else if (t == KS_JSON_NUMBER) {
            ks_json_number_text(num, text, sizeof(text)); /* finite: it fits */
            if (ks_quantity_parse(text, &q) == 0)
                return WALK_GO;
            v = text;
        }
        set_error(w, n, f, quantity_error(v ? v : "["));
        return WALK_STOP;
    }
    case KS_SCHEMA_INT_OR_STRING:
        if (t == KS_JSON_STRING || (t == KS_JSON_NUMBER && fits_int(num, true)))
            return WALK_GO;
        if (t == KS_JSON_NUMBER)
            number_error(w, n, f, sname, num, "int32");
        else
            type_error(w, n, f, sname, json_name(t), "int32");
        return WALK_STOP;
    case KS_SCHEMA_TIME:
        if (t != KS_JSON_STRING) {
            type_error(w, n, f, sname, json_name(t), "string");
            return WALK_STOP;
        }
        if (rfc3339_error(n->str, msg, sizeof(msg)) == 0)
            return WALK_GO;
        set_error(w, n, f, msg);
        return WALK_STOP;
    default:
        return WALK_GO;
    }
mismatch:
    if (!w->saved) {
        type_error(w, n, f, sname, json_name(t), s->go);
        w->saved = true;
    }
    return WALK_GO;
}

/* By key bytes; a key without text (a sequence or mapping used as a key) has none and sorts first. */
static int cmp_pair(const struct ks_yaml_pair *x, const struct ks_yaml_pair *y)
{
    size_t n = x->key->len < y->key->len ? x->key->len : y->key->len;
    int c = n && x->key->str && y->key->str ? memcmp(x->key->str, y->key->str, n) : 0;
    return c ? c : (x->key->len > y->key->len) - (x->key->len < y->key->len);
}

static int cmp_key(const void *a, const void *b)
{
    return cmp_pair(*(const struct ks_yaml_pair *const *)a, *(const struct ks_yaml_pair *const *)b);
}

/* The Go struct name of an OBJECT node: "v1.PodSpec" -> "PodSpec". */
static const char *short_name(const char *go)
{
    const char *dot = strrchr(go, '.');
    return dot ? dot + 1 : go;
}

static int walk(struct walk *w, const struct ks_yaml_node *n, uint32_t node, const struct frame *f,
                const char *sname);

/* An object's pairs in the key order encoding/json wrote them. */
static int object(struct walk *w, const struct ks_yaml_node *n, const struct ks_schema_node *s,
                  const struct frame *f, const char *sname)
{
    uint32_t base = w->nkeys, count = n->n;
    bool sorted = true; /* as kubectl writes YAML: walked in place */
    for (uint32_t i = 1; i < count && sorted; i++)
        sorted = cmp_pair(&n->pairs[i - 1], &n->pairs[i]) < 0;
    if (!sorted && w->nkeys + count > w->capkeys) {
        uint32_t cap = (w->nkeys + count) * 2;
        const struct ks_yaml_pair **k = realloc(w->keys, cap * sizeof(*k));
        if (!k) {
            ks_error_set(w->err, w->file, n->line, NULL, "out of memory");
            return -ENOMEM;
        }
        w->keys = k;
        w->capkeys = cap;
    }
    if (!sorted) {
        for (uint32_t i = 0; i < count; i++)
            w->keys[base + i] = &n->pairs[i];
        w->nkeys += count;
        qsort(w->keys + base, count, sizeof(*w->keys), cmp_key);
    }
    int rc = WALK_GO;
    for (uint32_t i = 0; i < count && rc == WALK_GO; i++) {
        const struct ks_yaml_pair *p = sorted ? &n->pairs[i] : w->keys[base + i];
        if (p->key->kind != KS_YAML_SCALAR)
            continue;
        if (s->kind == KS_SCHEMA_OBJECT) {
            const struct ks_schema_field *fld = ks_schema_field_find(s, p->key->str, p->key->len);
            if (!fld)
                continue; /* unknown: field_check.c's */
            struct frame sub = {f, p->key->str, 0, true};
            rc = walk(w, p->value, fld->node, &sub, short_name(s->go));
        } else {
            struct frame sub = {f, p->key->str, 0, false};
            rc = walk(w, p->value, s->ref, &sub, sname);
        }
    }
    w->nkeys = base;
    return rc;
}

/* @n against schema node @node, under path @f; @sname: the struct of the innermost field. */
static int walk(struct walk *w, const struct ks_yaml_node *n, uint32_t node, const struct frame *f,
                const char *sname)
{
    const struct ks_schema_node *s = &ks_schema_nodes[node];
    if (s->kind == KS_SCHEMA_STRING && n && ks_yaml_surely_string(n))
        return WALK_GO; /* most values */
    struct ks_json_number num = {0};
    enum ks_json_type t = ks_yaml_json_type(n, NULL, &num);

    if (t == KS_JSON_NULL || s->kind == KS_SCHEMA_ANY || s->kind == KS_SCHEMA_SEPARATE)
        return WALK_GO;
    switch (s->kind) {
    case KS_SCHEMA_OBJECT:
    case KS_SCHEMA_MAP:
        if (t != KS_JSON_OBJECT)
            break;
        return object(w, n, s, f, sname);
    case KS_SCHEMA_ARRAY:
        if (t != KS_JSON_ARRAY)
            break;
        for (uint32_t i = 0; i < n->n; i++) {
            struct frame sub = {f, NULL, i, false};
            int rc = walk(w, n->items[i], s->ref, &sub, sname);
            if (rc != WALK_GO)
                return rc;
        }
        return WALK_GO;
    default:
        return scalar(w, n, s, f, sname, t, &num);
    }
    /* a JSON value of another kind where an object, a map or a list goes */
    if (!w->saved) {
        type_error(w, n, f, sname, json_name(t), s->go);
        w->saved = true;
    }
    return WALK_GO;
}

int ks_type_check(const struct ks_yaml_node *doc, int64_t root, const char *kind, const char *version,
                  const char *file, const char *prefix, struct ks_error *err)
{
    if (root < 0 || (uint64_t)root >= ks_schema_nnodes || !doc)
        return 0;
    struct walk w = {
        .kind = kind, .version = version, .file = file, .prefix = prefix ? prefix : "", .err = err};
    int rc = walk(&w, doc, (uint32_t)root, NULL, NULL);
    free(w.keys);
    if (rc < 0)
        return rc;
    return rc == WALK_STOP || w.saved ? -EINVAL : 0;
}
