/*
 * proto_list.c - a protobuf LIST answer read item by item (the protobuf half of
 * kube/list_scan.c; see kube_internal.h).
 *
 * The answer is "k8s\0", then a runtime.Unknown whose fields come in their numbers' order,
 * as Go's marshaller writes them: typeMeta (1), raw (2), contentEncoding (3), contentType
 * (4). Its raw bytes are the list message: metadata (1, a ListMeta) and one items field (2)
 * per object. The walk reads one field header at a time (tag and length varints) and waits
 * until the field's bytes are all there, except for raw, which it enters: every items field
 * is unpacked alone with the item kind's descriptor (the list descriptor's `items` field)
 * and handed on as its tree, then its bytes are dropped. Other fields are skipped.
 */
#include "proto_internal.h"

#include "kube_internal.h"

#include "ksched/internal/kube_proto.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { P_MAGIC, P_ENVELOPE, P_LIST };

/* A varint at @p (@n bytes there): 1 and *v, *used; 0 when it is not whole yet; -1 when malformed. */
static int varint(const uint8_t *p, size_t n, uint64_t *v, size_t *used)
{
    uint64_t x = 0;
    for (size_t i = 0; i < n && i < 10; i++) {
        x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            *v = x;
            *used = i + 1;
            return 1;
        }
    }
    return n >= 10 ? -1 : 0;
}

static int malformed(const char *file, struct ks_error *err, const char *what)
{
    return ks_error_set(err, file, 1, NULL, "invalid protobuf: %s", what);
}

/* The envelope's typeMeta: the list's kind, whose `items` field gives the item message. */
static int type_meta(struct ks__list_scan *ls, const char *file, const uint8_t *val, size_t len,
                     struct ks_error *err)
{
    Ks__Runtime__TypeMeta *tm = ks__runtime__type_meta__unpack(NULL, len, val);
    if (!tm)
        return malformed(file, err, "a malformed runtime.Unknown typeMeta");
    const ProtobufCMessageDescriptor *d = ks__proto_kind_descriptor(tm->apiversion, tm->kind);
    const ProtobufCFieldDescriptor *items =
        d ? protobuf_c_message_descriptor_get_field_by_name(d, "items") : NULL;
    int rc = 0;
    if (!items || items->type != PROTOBUF_C_TYPE_MESSAGE || items->label != PROTOBUF_C_LABEL_REPEATED)
        rc = ks_error_set(err, file, 1, NULL,
                          "no protobuf list message for kind \"%.64s\" of apiVersion \"%.64s\"", tm->kind,
                          tm->apiversion);
    else {
        ls->list_desc = d;
        ls->item_desc = items->descriptor;
    }
    ks__runtime__type_meta__free_unpacked(tm, NULL);
    return rc;
}

static int list_meta(struct ks__list_scan *ls, const char *file, const uint8_t *val, size_t len,
                     struct ks_error *err)
{
    Ks__Meta__ListMeta *lm = ks__meta__list_meta__unpack(NULL, len, val);
    if (!lm)
        return malformed(file, err, "a malformed ListMeta");
    int rc = ks__set_str(&ls->rv, lm->resourceversion);
    if (rc == 0)
        rc = ks__set_str(&ls->cont, lm->continue_);
    ks__meta__list_meta__free_unpacked(lm, NULL);
    return rc;
}

/* A whole field of the envelope (@field) or of the list (@in_list). */
static int field_value(struct ks__list_scan *ls, const char *file, bool in_list, uint64_t field,
                       const uint8_t *val, size_t len, ks__list_item_fn fn, void *ctx, struct ks_error *err)
{
    if (in_list && field == 1)
        return list_meta(ls, file, val, len, err);
    if (in_list && field == 2) {
        struct ks_yaml_stream *s;
        int rc = ks__proto_parse_message(file, ls->item_desc, val, len, &s, err);
        if (rc)
            return rc;
        rc = fn(ctx, s->docs[0]);
        ks_yaml_stream_destroy(s);
        return rc;
    }
    if (in_list)
        return 0;
    if (field == 1)
        return type_meta(ls, file, val, len, err);
    if (field == 3 && len)
        return ks_error_set(err, file, 1, NULL, "unsupported content encoding \"%.*s\" of a list",
                            (int)(len < 64 ? len : 64), (const char *)val);
    if (field == 4 && len &&
        (len != strlen(KS_PROTO_MEDIA_TYPE) || memcmp(val, KS_PROTO_MEDIA_TYPE, len) != 0))
        return ks_error_set(err, file, 1, NULL, "unsupported content type \"%.*s\" of a list",
                            (int)(len < 64 ? len : 64), (const char *)val);
    return 0;
}

int ks__proto_list_feed(struct ks__list_scan *ls, const char *file, ks__list_item_fn fn, void *ctx,
                        struct ks_error *err)
{
    const uint8_t *buf = (const uint8_t *)ls->buf;
    size_t off = 0;
    int rc = 0;
    while (rc == 0) {
        const uint8_t *p = buf + off;
        size_t n = ls->len - off;
        if (ls->pstate == P_MAGIC) {
            if (n < 4)
                break;
            off += 4; /* checked when the mode was chosen */
            ls->pstate = P_ENVELOPE;
            continue;
        }
        if (ls->pstate == P_LIST && ls->raw_left == 0) {
            ls->pstate = P_ENVELOPE;
            continue;
        }
        uint64_t tag, v = 0;
        size_t a, b = 0;
        int r = varint(p, n, &tag, &a);
        if (r <= 0) {
            rc = r < 0 ? malformed(file, err, "a malformed field tag") : 0;
            break;
        }
        unsigned wt = (unsigned)(tag & 7);
        if (wt == 0 || wt == 2) {
            r = varint(p + a, n - a, &v, &b);
            if (r <= 0) {
                rc = r < 0 ? malformed(file, err, "a malformed varint") : 0;
                break;
            }
        } else if (wt == 1 || wt == 5) {
            b = wt == 1 ? 8 : 4;
        } else {
            rc = malformed(file, err, "an unknown wire type");
            break;
        }
        bool in_list = ls->pstate == P_LIST;
        if (!in_list && tag >> 3 == 2 && wt == 2) { /* raw: walk into the list */
            if (!ls->item_desc) {
                rc = malformed(file, err, "the list's bytes come before its type");
                break;
            }
            off += a + b;
            ls->raw_left = v;
            ls->raw_seen = true;
            ls->pstate = P_LIST;
            continue;
        }
        uint64_t body = wt == 2 ? v : 0;
        if (body > KS__SCAN_MAX) {
            rc = -E2BIG;
            break;
        }
        if (in_list && a + b + body > ls->raw_left) {
            rc = malformed(file, err, "a field runs past the end of the list");
            break;
        }
        if (n < a + b + body)
            break; /* the rest of the field is still to come */
        if (wt == 2)
            rc = field_value(ls, file, in_list, tag >> 3, p + a + b, (size_t)body, fn, ctx, err);
        if (in_list)
            ls->raw_left -= a + b + body;
        off += a + b + (size_t)body;
    }
    if (off > 0) {
        memmove(ls->buf, ls->buf + off, ls->len - off);
        ls->len -= off;
    }
    return rc;
}

int ks__proto_list_finish(struct ks__list_scan *ls, const char *file, struct ks_error *err)
{
    if (ls->pstate == P_LIST && ls->raw_left == 0 && ls->len == 0)
        ls->pstate = P_ENVELOPE;
    if (ls->pstate != P_ENVELOPE || ls->len || !ls->raw_seen)
        return malformed(file, err, "the list ends early");
    return 0;
}
