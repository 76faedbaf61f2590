/*
 * proto_tree.c - a decoded protobuf message as the tree its JSON form parses to.
 *
 * One walk over the message's descriptor, for every kind: the tree is what
 * kube/json_tree.c builds from the object's JSON (keys are the JSON field names, strings
 * quoted scalars, numbers and booleans plain scalars), so the manifest decoders read
 * either and land in the same structs. What JSON would not show is left out, as
 * kube/proto/runtime.proto lays down: a plain scalar that is zero (Go's `omitempty`), an
 * unset `oneof opt_*`, an empty repeated field, a NULL message. Special shapes:
 *   - Time: RFC 3339 in seconds; with no seconds it is Go's zero time (JSON null): omitted.
 *   - MicroTime: RFC 3339 with six fractional digits, as metav1.MicroTime marshals.
 *   - Quantity: its string ("0" when empty); IntOrString: intVal plain, or strVal when type is 1.
 *   - A repeated `...Entry` field: a map; a key given twice keeps its last value (Go's map).
 *   - A `<name>_inline` message field: its fields join the enclosing map (Go's inline struct).
 * Bytes fields are not shown (JSON's base64 of them is never read). Scalar strings point
 * into the message; everything else is allocated in the caller's arena. The schema has no
 * recursive message, so the walk's depth is the schema's; a guard stops at 64 all the same.
 */
#include "proto_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { KS_PROTO_MAX_DEPTH = 64 };

struct conv {
    struct ks_arena *arena;
    const char *file;
    struct ks_error *err;
    int depth;
};

static void *arena_alloc(void *ctx, size_t size)
{
    return ks_arena_alloc(ctx, size ? size : 1);
}

static void arena_free(void *ctx, void *ptr)
{
    (void)ctx;
    (void)ptr; /* freed with the arena */
}

ProtobufCAllocator ks__proto_arena_allocator(struct ks_arena *arena)
{
    return (ProtobufCAllocator){.alloc = arena_alloc, .free = arena_free, .allocator_data = arena};
}

static struct ks_yaml_node *scalar_ref(struct conv *c, const char *s, size_t len, int plain)
{
    struct ks_yaml_node *n = ks_arena_alloc(c->arena, sizeof(*n));
    if (!n)
        return NULL;
    n->kind = KS_YAML_SCALAR;
    n->line = 1;
    n->plain = plain;
    n->str = s;
    n->len = len;
    return n;
}

static struct ks_yaml_node *scalar_fmt(struct conv *c, int plain, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static struct ks_yaml_node *scalar_fmt(struct conv *c, int plain, const char *fmt, ...)
{
    char buf[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(buf))
        return NULL;
    char *s = ks_arena_strndup(c->arena, buf, (size_t)n);
    return s ? scalar_ref(c, s, (size_t)n, plain) : NULL;
}

static int fail(struct conv *c, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(struct conv *c, const char *field, const char *fmt, ...)
{
    char msg[KS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return ks_error_set(c->err, c->file, 1, field, "%s", msg);
}

/* Years 0000-9999: what Go's time.Time marshals to JSON (and the API server can send). */
#define KS_PROTO_MIN_SECONDS (-62167219200LL) /* 0000-01-01T00:00:00Z */
#define KS_PROTO_MAX_SECONDS 253402300799LL   /* 9999-12-31T23:59:59Z */

/* Time/MicroTime: NULL *out (and 0) for the zero time, else its RFC 3339 text. */
static int time_node(struct conv *c, const char *field, bool has_seconds, int64_t seconds, int32_t nanos,
                     bool micro, struct ks_yaml_node **out)
{
    *out = NULL;
    if (!has_seconds && nanos == 0)
        return 0; /* Go's zero time marshals to no bytes */
    if (seconds < KS_PROTO_MIN_SECONDS || seconds > KS_PROTO_MAX_SECONDS || nanos < 0 || nanos > 999999999)
        return fail(c, field, "time out of range: %" PRId64 "s %" PRId32 "ns", seconds, nanos);
    /* civil date from days since 1970 (proleptic Gregorian): gmtime_r varies below year 1900 */
    int64_t days = seconds >= 0 ? seconds / 86400 : -((-seconds + 86399) / 86400);
    int64_t rem = seconds - days * 86400;
    int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097, yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
    int64_t d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9, y = yoe + era * 400 + (m <= 2);
    int hh = (int)(rem / 3600), mm = (int)(rem % 3600 / 60), ss = (int)(rem % 60);
    if (micro)
        *out = scalar_fmt(c, 0, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", (int)y, (int)m, (int)d, hh, mm, ss,
                          (int)(nanos / 1000));
    else
        *out = scalar_fmt(c, 0, "%04d-%02d-%02dT%02d:%02d:%02dZ", (int)y, (int)m, (int)d, hh, mm, ss);
    return *out ? 0 : -ENOMEM;
}

static int message_node(struct conv *c, const ProtobufCMessage *m, const char *field,
                        struct ks_yaml_node **out);

/* A special-shape message as its scalar; 1 when @m is not of a special shape. */
static int special_node(struct conv *c, const ProtobufCMessage *m, const char *field,
                        struct ks_yaml_node **out)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    if (d == &ks__meta__time__descriptor) {
        const Ks__Meta__Time *t = (const Ks__Meta__Time *)m;
        return time_node(c, field, t->opt_seconds_case == KS__META__TIME__OPT_SECONDS_SECONDS, t->seconds,
                         t->nanos, false, out);
    }
    if (d == &ks__meta__micro_time__descriptor) {
        const Ks__Meta__MicroTime *t = (const Ks__Meta__MicroTime *)m;
        return time_node(c, field, t->opt_seconds_case == KS__META__MICRO_TIME__OPT_SECONDS_SECONDS,
                         t->seconds, t->nanos, true, out);
    }
    if (d == &ks__meta__quantity__descriptor) {
        const char *s = ((const Ks__Meta__Quantity *)m)->string;
        if (!s || !s[0])
            s = "0";
        return (*out = scalar_ref(c, s, strlen(s), 0)) ? 0 : -ENOMEM;
    }
    if (d == &ks__meta__int_or_string__descriptor) {
        const Ks__Meta__IntOrString *v = (const Ks__Meta__IntOrString *)m;
        if (v->type == 1)
            *out = scalar_ref(c, v->strval ? v->strval : "", v->strval ? strlen(v->strval) : 0, 0);
        else
            *out = scalar_fmt(c, 1, "%" PRId32, v->intval);
        return *out ? 0 : -ENOMEM;
    }
    return 1;
}

/* The value of one (non-repeated or element) field at @member. *out NULL: nothing to show. */
static int value_node(struct conv *c, const ProtobufCFieldDescriptor *f, const void *member,
                      struct ks_yaml_node **out)
{
    *out = NULL;
    switch (f->type) {
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(char *const *)member;
        *out = scalar_ref(c, s ? s : "", s ? strlen(s) : 0, 0);
        break;
    }
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_ENUM:
        *out = scalar_fmt(c, 1, "%" PRId32, *(const int32_t *)member);
        break;
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        *out = scalar_fmt(c, 1, "%" PRIu32, *(const uint32_t *)member);
        break;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        *out = scalar_fmt(c, 1, "%" PRId64, *(const int64_t *)member);
        break;
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        *out = scalar_fmt(c, 1, "%" PRIu64, *(const uint64_t *)member);
        break;
    case PROTOBUF_C_TYPE_BOOL:
        *out =
            *(const protobuf_c_boolean *)member ? scalar_ref(c, "true", 4, 1) : scalar_ref(c, "false", 5, 1);
        break;
    case PROTOBUF_C_TYPE_FLOAT:
        *out = scalar_fmt(c, 1, "%.9g", (double)*(const float *)member);
        break;
    case PROTOBUF_C_TYPE_DOUBLE:
        *out = scalar_fmt(c, 1, "%.17g", *(const double *)member);
        break;
    case PROTOBUF_C_TYPE_BYTES:
        return 0;
    case PROTOBUF_C_TYPE_MESSAGE: {
        const ProtobufCMessage *m = *(ProtobufCMessage *const *)member;
        if (!m)
            return 0;
        int rc = special_node(c, m, f->name, out);
        return rc <= 0 ? rc : message_node(c, m, f->name, out);
    }
    }
    return *out ? 0 : -ENOMEM;
}

static bool is_zero(const ProtobufCFieldDescriptor *f, const void *member)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(char *const *)member;
        return !s || !s[0];
    }
    case PROTOBUF_C_TYPE_BYTES:
        return ((const ProtobufCBinaryData *)member)->len == 0;
    case PROTOBUF_C_TYPE_MESSAGE:
        return *(ProtobufCMessage *const *)member == NULL;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        return *(const uint64_t *)member == 0;
    case PROTOBUF_C_TYPE_FLOAT:
        return *(const float *)member == 0;
    case PROTOBUF_C_TYPE_DOUBLE:
        return *(const double *)member == 0;
    case PROTOBUF_C_TYPE_BOOL:
        return *(const protobuf_c_boolean *)member == 0;
    default:
        return *(const uint32_t *)member == 0;
    }
}

struct entry_ref {
    const char *key;
    size_t index;
};

static int cmp_entry(const void *a, const void *b)
{
    const struct entry_ref *x = a, *y = b;
    int r = strcmp(x->key, y->key);
    return r ? r : (x->index < y->index ? -1 : x->index > y->index);
}

/* Repeated map entries as a map sorted by key, the last of equal keys winning. */
static int entries_node(struct conv *c, const ProtobufCFieldDescriptor *f, ProtobufCMessage *const *items,
                        size_t count, struct ks_yaml_node **out)
{
    const ProtobufCMessageDescriptor *d = f->descriptor;
    const ProtobufCFieldDescriptor *kf = protobuf_c_message_descriptor_get_field(d, 1);
    const ProtobufCFieldDescriptor *vf = protobuf_c_message_descriptor_get_field(d, 2);
    struct entry_ref *refs = ks_arena_calloc(c->arena, count, sizeof(*refs));
    struct ks_yaml_node *map = ks_arena_alloc(c->arena, sizeof(*map));
    if (!refs || !map || !kf || !vf)
        return -ENOMEM;
    for (size_t i = 0; i < count; i++) {
        const char *k = *(char *const *)((const char *)items[i] + kf->offset);
        refs[i] = (struct entry_ref){.key = k ? k : "", .index = i};
    }
    qsort(refs, count, sizeof(*refs), cmp_entry);
    map->kind = KS_YAML_MAP;
    map->line = 1;
    if (!(map->pairs = ks_arena_calloc(c->arena, count, sizeof(*map->pairs))))
        return -ENOMEM;
    for (size_t i = 0; i < count; i++) {
        if (i + 1 < count && strcmp(refs[i].key, refs[i + 1].key) == 0)
            continue; /* a later entry has this key */
        const void *member = (const char *)items[refs[i].index] + vf->offset;
        struct ks_yaml_node *key = scalar_ref(c, refs[i].key, strlen(refs[i].key), 0), *value = NULL;
        if (!key)
            return -ENOMEM;
        int rc = value_node(c, vf, member, &value);
        if (rc)
            return rc;
        if (!value && !(value = scalar_ref(c, "null", 4, 1)))
            return -ENOMEM;
        map->pairs[map->n++] = (struct ks_yaml_pair){.key = key, .value = value};
    }
    *out = map;
    return 0;
}

static int repeated_node(struct conv *c, const ProtobufCFieldDescriptor *f, const void *array, size_t count,
                         struct ks_yaml_node **out)
{
    if (f->type == PROTOBUF_C_TYPE_MESSAGE && ks__proto_is_entry(f->descriptor))
        return entries_node(c, f, array, count, out);
    struct ks_yaml_node *seq = ks_arena_alloc(c->arena, sizeof(*seq));
    if (!seq || !(seq->items = ks_arena_calloc(c->arena, count, sizeof(*seq->items))))
        return -ENOMEM;
    seq->kind = KS_YAML_SEQ;
    seq->line = 1;
    for (size_t i = 0; i < count; i++) {
        struct ks_yaml_node *item = NULL;
        int rc = value_node(c, f, (const char *)array + i * ks__proto_element_size(f), &item);
        if (rc)
            return rc;
        if (!item && !(item = scalar_ref(c, "null", 4, 1))) /* a zero Time in a list */
            return -ENOMEM;
        seq->items[seq->n++] = item;
    }
    *out = seq;
    return 0;
}

/* How many pairs @d's fields can give at most (inline messages' fields counted in). */
static uint32_t max_pairs(const ProtobufCMessageDescriptor *d, int depth)
{
    uint32_t n = 0;
    for (unsigned i = 0; i < d->n_fields; i++)
        n += ks__proto_is_inline(&d->fields[i]) && depth < 8 ? max_pairs(d->fields[i].descriptor, depth + 1)
                                                             : 1;
    return n;
}

static int add_pairs(struct conv *c, const ProtobufCMessage *m, struct ks_yaml_node *map)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        const char *member = (const char *)m + f->offset;
        struct ks_yaml_node *value = NULL;
        int rc;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t count = *(const size_t *)((const char *)m + f->quantifier_offset);
            if (count == 0)
                continue;
            rc = repeated_node(c, f, *(void *const *)member, count, &value);
        } else {
            if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
                if (*(const uint32_t *)((const char *)m + f->quantifier_offset) != f->id)
                    continue;
            } else if (is_zero(f, member)) {
                continue;
            }
            if (ks__proto_is_inline(f)) {
                const ProtobufCMessage *sub = *(ProtobufCMessage *const *)member;
                if (sub && (rc = add_pairs(c, sub, map)))
                    return rc;
                continue;
            }
            rc = value_node(c, f, member, &value);
        }
        if (rc)
            return rc;
        if (!value)
            continue;
        struct ks_yaml_node *key = scalar_ref(c, f->name, strlen(f->name), 0);
        if (!key)
            return -ENOMEM;
        map->pairs[map->n++] = (struct ks_yaml_pair){.key = key, .value = value};
    }
    return 0;
}

static int message_node(struct conv *c, const ProtobufCMessage *m, const char *field,
                        struct ks_yaml_node **out)
{
    if (c->depth >= KS_PROTO_MAX_DEPTH)
        return fail(c, field, "messages nested deeper than %d", KS_PROTO_MAX_DEPTH);
    struct ks_yaml_node *map = ks_arena_alloc(c->arena, sizeof(*map));
    uint32_t cap = max_pairs(m->descriptor, 0);
    if (!map || !(map->pairs = ks_arena_calloc(c->arena, cap ? cap : 1, sizeof(*map->pairs))))
        return -ENOMEM;
    map->kind = KS_YAML_MAP;
    map->line = 1;
    c->depth++;
    int rc = add_pairs(c, m, map);
    c->depth--;
    if (rc == 0)
        *out = map;
    return rc;
}

int ks__proto_to_tree(struct ks_arena *arena, const ProtobufCMessage *msg, const char *file,
                      struct ks_yaml_node **out, struct ks_error *err)
{
    struct conv c = {.arena = arena, .file = file, .err = err};
    *out = NULL;
    int rc = message_node(&c, msg, NULL, out);
    if (rc == -ENOMEM)
        ks_error_set(err, file, 0, NULL, "out of memory");
    return rc;
}
