/*
 * proto_encode.c - a JSON (or YAML) tree of an object as the protobuf message of its kind.
 *
 * The inverse of kube/proto_tree.c, walking the same descriptors: a key of the map names a
 * field of the message (or of a `<name>_inline` message, whose fields JSON shows in the
 * parent); a null value is no value; strings take any scalar, integers and booleans the
 * numbers and booleans of kubectl's YAML-to-JSON conversion (ksched/yaml_tree.h, as the
 * manifest decoders read them); Time and MicroTime take RFC 3339, Quantity any scalar (a
 * number as its JSON text), IntOrString a number or a string; a `...Entry` field takes a
 * map. A key the message lacks fails the encoding unless the caller is lenient: a write
 * must not lose a field silently (the caller then sends JSON), while tests that read a
 * manifest through protobuf only want what ksched reads. Messages and arrays live in the
 * caller's arena; strings point into the tree.
 */
#include "proto_internal.h"

#include "ksched/internal/decode.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { KS_PROTO_ENCODE_MAX_DEPTH = 64 };

struct enc {
    struct ks_arena *arena;
    const char *file;
    struct ks_error *err;
    unsigned flags;
    int depth;
    char path[KS_ERROR_FIELD_MAX];
    size_t plen;
};

static int fail(struct enc *e, const struct ks_yaml_node *at, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(struct enc *e, const struct ks_yaml_node *at, int rc, const char *fmt, ...)
{
    char msg[KS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    ks_error_set(e->err, e->file, at ? at->line : 0, e->path[0] ? e->path : NULL, "%s", msg);
    return rc;
}

static int nomem(struct enc *e)
{
    ks_error_set(e->err, e->file, 0, NULL, "out of memory");
    return -ENOMEM;
}

static size_t push(struct enc *e, const char *name, long index)
{
    size_t old = e->plen;
    int n = index >= 0
                ? snprintf(e->path + e->plen, sizeof(e->path) - e->plen, "[%ld]", index)
                : snprintf(e->path + e->plen, sizeof(e->path) - e->plen, "%s%s", e->plen ? "." : "", name);
    if (n > 0)
        e->plen += (size_t)n < sizeof(e->path) - e->plen ? (size_t)n : sizeof(e->path) - e->plen - 1;
    return old;
}

static void pop(struct enc *e, size_t len)
{
    e->plen = len;
    e->path[len] = '\0';
}

static ProtobufCMessage *new_message(struct enc *e, const ProtobufCMessageDescriptor *d)
{
    ProtobufCMessage *m = ks_arena_alloc(e->arena, d->sizeof_message);
    if (m)
        d->message_init(m);
    return m;
}

static int want_scalar(struct enc *e, const struct ks_yaml_node *n, const char *what)
{
    if (n->kind != KS_YAML_SCALAR)
        return fail(e, n, -EINVAL, "expected %s, found %s", what, ks_yaml_kind_name(n));
    return 0;
}

/* An integer as the API server reads kubectl's JSON of it (0x10 and 1e3 are integers, "80" is not). */
static int integer(struct enc *e, const struct ks_yaml_node *n, int64_t lo, int64_t hi, int64_t *out)
{
    int rc = want_scalar(e, n, "an integer");
    if (rc)
        return rc;
    char text[64], *end = text;
    errno = 0;
    long long v = ks_dec_number_text(n, text, sizeof(text)) == 0 ? strtoll(text, &end, 10) : 0;
    if (!n->plain || errno || end == text || *end || v < lo || v > hi)
        return fail(e, n, -EINVAL, "invalid integer \"%s\"", n->str);
    *out = v;
    return 0;
}

static int encode_message(struct enc *e, const ProtobufCMessageDescriptor *d, const struct ks_yaml_node *n,
                          bool top, ProtobufCMessage **out);

/* Time and MicroTime from RFC 3339 text (the manifest decoders' parser). */
static int encode_time(struct enc *e, const ProtobufCMessageDescriptor *d, const struct ks_yaml_node *n,
                       ProtobufCMessage **out)
{
    int rc = want_scalar(e, n, "an RFC 3339 time");
    if (rc)
        return rc;
    int64_t secs;
    int32_t frac;
    if (ks_rfc3339_parse(n->str, &secs, &frac) < 0)
        return fail(e, n, -EINVAL, "invalid RFC 3339 time \"%s\"", n->str);
    if (!(*out = new_message(e, d)))
        return nomem(e);
    if (d == &ks__meta__time__descriptor) {
        Ks__Meta__Time *t = (Ks__Meta__Time *)*out;
        t->opt_seconds_case = KS__META__TIME__OPT_SECONDS_SECONDS;
        t->seconds = secs;
        t->nanos = frac;
    } else {
        Ks__Meta__MicroTime *t = (Ks__Meta__MicroTime *)*out;
        t->opt_seconds_case = KS__META__MICRO_TIME__OPT_SECONDS_SECONDS;
        t->seconds = secs;
        t->nanos = frac;
    }
    return 0;
}

/* A special-shape message from its scalar; 1 when @d is not special. */
static int encode_special(struct enc *e, const ProtobufCMessageDescriptor *d, const struct ks_yaml_node *n,
                          ProtobufCMessage **out)
{
    int rc;
    if (d == &ks__meta__time__descriptor || d == &ks__meta__micro_time__descriptor)
        return encode_time(e, d, n, out);
    if (d == &ks__meta__quantity__descriptor) {
        if ((rc = want_scalar(e, n, "a quantity")))
            return rc;
        if (!(*out = new_message(e, d)))
            return nomem(e);
        /* a number as the JSON text the API server parsed it from (0x10: "16") */
        char text[64];
        const char *q =
            ks_dec_number_text(n, text, sizeof(text)) == 0 ? ks_arena_strdup(e->arena, text) : n->str;
        if (!q)
            return nomem(e);
        ((Ks__Meta__Quantity *)*out)->string = (char *)q;
        return 0;
    }
    if (d == &ks__meta__int_or_string__descriptor) {
        if ((rc = want_scalar(e, n, "an integer or a string")))
            return rc;
        if (!(*out = new_message(e, d)))
            return nomem(e);
        /* a number is the int form; anything else ("50%", a quoted number) the string form */
        Ks__Meta__IntOrString *v = (Ks__Meta__IntOrString *)*out;
        char text[64], *end = text;
        errno = 0;
        long long x = ks_dec_number_text(n, text, sizeof(text)) == 0 ? strtoll(text, &end, 10) : 0;
        if (end != text && !errno && !*end && x >= INT32_MIN && x <= INT32_MAX) {
            v->intval = (int32_t)x;
        } else {
            v->type = 1;
            v->strval = (char *)n->str;
        }
        return 0;
    }
    return 1;
}

/* One value of field @f (an element when repeated) into @member. */
static int encode_value(struct enc *e, const ProtobufCFieldDescriptor *f, const struct ks_yaml_node *n,
                        void *member)
{
    int64_t v;
    int rc;
    switch (f->type) {
    case PROTOBUF_C_TYPE_STRING:
        if ((rc = want_scalar(e, n, "a string")))
            return rc;
        *(char **)member = (char *)n->str;
        return 0;
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
        if ((rc = integer(e, n, INT32_MIN, INT32_MAX, &v)))
            return rc;
        *(int32_t *)member = (int32_t)v;
        return 0;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        if ((rc = integer(e, n, INT64_MIN, INT64_MAX, &v)))
            return rc;
        *(int64_t *)member = v;
        return 0;
    case PROTOBUF_C_TYPE_BOOL:
        if ((rc = want_scalar(e, n, "true or false")))
            return rc;
        bool truth;
        struct ks_json_number num;
        if (ks_yaml_json_type(n, &truth, &num) != KS_JSON_BOOL)
            return fail(e, n, -EINVAL, "expected true or false, found \"%s\"", n->str);
        *(protobuf_c_boolean *)member = truth;
        return 0;
    case PROTOBUF_C_TYPE_MESSAGE: {
        ProtobufCMessage *m = NULL;
        rc = encode_special(e, f->descriptor, n, &m);
        if (rc == 1)
            rc = encode_message(e, f->descriptor, n, false, &m);
        if (rc == 0)
            *(ProtobufCMessage **)member = m;
        return rc;
    }
    default:
        return fail(e, n, -EINVAL, "a field of protobuf type %d cannot be written", (int)f->type);
    }
}

/* A map node into repeated entries of @f. */
static int encode_entries(struct enc *e, const ProtobufCFieldDescriptor *f, const struct ks_yaml_node *n,
                          ProtobufCMessage *m)
{
    const ProtobufCMessageDescriptor *d = f->descriptor;
    const ProtobufCFieldDescriptor *kf = protobuf_c_message_descriptor_get_field(d, 1);
    const ProtobufCFieldDescriptor *vf = protobuf_c_message_descriptor_get_field(d, 2);
    if (n->kind != KS_YAML_MAP)
        return fail(e, n, -EINVAL, "expected a map, found %s", ks_yaml_kind_name(n));
    ProtobufCMessage **items = ks_arena_calloc(e->arena, n->n ? n->n : 1, sizeof(*items));
    if (!items || !kf || !vf)
        return nomem(e);
    size_t count = 0;
    for (uint32_t i = 0; i < n->n; i++) {
        const struct ks_yaml_pair *p = &n->pairs[i];
        ProtobufCMessage *entry = new_message(e, d);
        int rc;
        if (!entry)
            return nomem(e);
        if ((rc = want_scalar(e, p->key, "a string key")))
            return rc;
        *(char **)((char *)entry + kf->offset) = (char *)p->key->str;
        size_t saved = push(e, p->key->str, -1);
        if (!ks_yaml_is_null(p->value) && (rc = encode_value(e, vf, p->value, (char *)entry + vf->offset)))
            return rc;
        pop(e, saved);
        items[count++] = entry;
    }
    *(size_t *)((char *)m + f->quantifier_offset) = count;
    *(ProtobufCMessage ***)((char *)m + f->offset) = items;
    return 0;
}

static int encode_field(struct enc *e, const ProtobufCFieldDescriptor *f, const struct ks_yaml_node *n,
                        ProtobufCMessage *m)
{
    void *member = (char *)m + f->offset;
    int rc;
    if (f->label != PROTOBUF_C_LABEL_REPEATED) {
        if ((rc = encode_value(e, f, n, member)))
            return rc;
        if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
            *(uint32_t *)((char *)m + f->quantifier_offset) = f->id;
        return 0;
    }
    if (f->type == PROTOBUF_C_TYPE_MESSAGE && ks__proto_is_entry(f->descriptor))
        return encode_entries(e, f, n, m);
    if (n->kind != KS_YAML_SEQ)
        return fail(e, n, -EINVAL, "expected a list, found %s", ks_yaml_kind_name(n));
    size_t size = ks__proto_element_size(f);
    char *array = ks_arena_calloc(e->arena, n->n ? n->n : 1, size);
    if (!array)
        return nomem(e);
    for (uint32_t i = 0; i < n->n; i++) {
        size_t saved = push(e, NULL, (long)i);
        if (ks_yaml_is_null(n->items[i]))
            return fail(e, n->items[i], -EINVAL, "null in a list");
        if ((rc = encode_value(e, f, n->items[i], array + i * size)))
            return rc;
        pop(e, saved);
    }
    *(size_t *)((char *)m + f->quantifier_offset) = n->n;
    *(void **)member = array;
    return 0;
}

/* The field named @key of @m, or of one of its inline messages (created on demand); NULL when none. */
static const ProtobufCFieldDescriptor *find_field(struct enc *e, ProtobufCMessage *m, const char *key,
                                                  ProtobufCMessage **owner, int *rc)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(d, key);
    *rc = 0;
    if (f && !ks__proto_is_inline(f)) {
        *owner = m;
        return f;
    }
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *in = &d->fields[i];
        if (!ks__proto_is_inline(in) || !protobuf_c_message_descriptor_get_field_by_name(in->descriptor, key))
            continue;
        ProtobufCMessage **sub = (ProtobufCMessage **)((char *)m + in->offset);
        if (!*sub && !(*sub = new_message(e, in->descriptor))) {
            *rc = nomem(e);
            return NULL;
        }
        return find_field(e, *sub, key, owner, rc);
    }
    return NULL;
}

static int encode_message(struct enc *e, const ProtobufCMessageDescriptor *d, const struct ks_yaml_node *n,
                          bool top, ProtobufCMessage **out)
{
    if (n->kind != KS_YAML_MAP)
        return fail(e, n, -EINVAL, "expected a map, found %s", ks_yaml_kind_name(n));
    if (e->depth >= KS_PROTO_ENCODE_MAX_DEPTH)
        return fail(e, n, -EINVAL, "nested deeper than %d", KS_PROTO_ENCODE_MAX_DEPTH);
    ProtobufCMessage *m = new_message(e, d);
    if (!m)
        return nomem(e);
    e->depth++;
    for (uint32_t i = 0; i < n->n; i++) {
        const struct ks_yaml_pair *p = &n->pairs[i];
        int rc;
        if (p->key->kind != KS_YAML_SCALAR)
            return fail(e, p->key, -EINVAL, "a key is %s", ks_yaml_kind_name(p->key));
        if (top && (strcmp(p->key->str, "apiVersion") == 0 || strcmp(p->key->str, "kind") == 0))
            continue;
        size_t saved = push(e, p->key->str, -1);
        ProtobufCMessage *owner = NULL;
        const ProtobufCFieldDescriptor *f = find_field(e, m, p->key->str, &owner, &rc);
        if (rc)
            return rc;
        if (!f) {
            if (!(e->flags & KS__PROTO_LENIENT))
                return fail(e, p->key, -ENOENT, "unknown field \"%s\"", p->key->str);
        } else if (!ks_yaml_is_null(p->value) && (rc = encode_field(e, f, p->value, owner))) {
            return rc;
        }
        pop(e, saved);
    }
    e->depth--;
    *out = m;
    return 0;
}

int ks__proto_from_tree(struct ks_arena *arena, const ProtobufCMessageDescriptor *desc,
                        const struct ks_yaml_node *map, unsigned flags, const char *file,
                        ProtobufCMessage **out, struct ks_error *err)
{
    struct enc e = {.arena = arena, .file = file, .err = err, .flags = flags};
    *out = NULL;
    if (!map)
        return fail(&e, NULL, -EINVAL, "no object");
    return encode_message(&e, desc, map, true, out);
}
