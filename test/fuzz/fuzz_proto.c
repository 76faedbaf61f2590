/*
 * fuzz_proto.c - libFuzzer target: Kubernetes' protobuf encoding as ksched reads it
 * (include/ksched/internal/kube_proto.h, kube/proto_*.c): a LIST or GET body (the "k8s\0" envelope
 * around runtime.Unknown, protobuf-c unpacking, the generic message-to-tree walk) and a
 * watch stream (length-prefixed frames in arbitrary chunks, each a WatchEvent whose object
 * is enveloped again), each object then decoded by the watched kind's decoder as the
 * informer decodes it; and the way back (a tree encoded to protobuf, as writes are).
 *
 * Input: byte 0 picks the mode (mod 3: 0 a body, 1 a watch stream, 2 encode-decode of
 * the tree a body gave), byte 1 the kind items are decoded as (mod KS_KIND_COUNT), byte 2
 * the chunk size of a stream (1 to 64, or 0: everything at once); the rest is the bytes.
 *
 * Checked beyond sanitizers: the failure contract of fuzz_common.h (file, line 1, a
 * message; no half-built tree or object); a stream is framed the same whatever the
 * chunking; a tree that a body gave encodes again (leniently) and reads back to a tree of
 * the same shape.
 */
#include "fuzz_common.h"

#include "../../kube/kube_internal.h"
#include "ksched/internal/kube_proto.h"
#include "ksched/loader.h"
#include "ksched/yaml_tree.h"

#define KS_FUZZ_PB "body.pb"

KS_FUZZ_INITIALIZE_API()

enum { MAX_FRAMES = 256 };

static void decode_object(enum ks_kind kind, const struct ks_yaml_node *obj, const uint8_t *buf, size_t len)
{
    if (!obj || obj->kind != KS_YAML_MAP)
        return;
    void *o = NULL;
    struct ks_error err = {0};
    int rc = ks_object_decode_as(KS_FUZZ_PB, obj, kind, &o, &err);
    ks_fuzz_check_result(rc, o, &err, KS_FUZZ_PB, buf, len);
    ks_object_destroy(kind, o);
}

/* Same shape: kinds, map keys and scalar texts, recursively. */
static int same_shape(const struct ks_yaml_node *a, const struct ks_yaml_node *b)
{
    if (!a || !b || a->kind != b->kind || a->n != b->n)
        return a == b;
    if (a->kind == KS_YAML_SCALAR)
        return strcmp(a->str, b->str) == 0;
    for (uint32_t i = 0; i < a->n; i++) {
        if (a->kind == KS_YAML_SEQ ? !same_shape(a->items[i], b->items[i])
                                   : !same_shape(a->pairs[i].value, ks_yaml_get(b, a->pairs[i].key->str)))
            return 0;
    }
    return 1;
}

static void body(int mode, enum ks_kind kind, const uint8_t *buf, size_t len)
{
    struct ks_yaml_stream *s = NULL;
    struct ks_error err = {0};
    int rc = ks_proto_parse(KS_FUZZ_PB, buf, len, &s, &err);
    ks_fuzz_check_result(rc, s, &err, KS_FUZZ_PB, buf, len);
    if (rc)
        return;
    const struct ks_yaml_node *root = s->docs[0], *items = ks_yaml_get(root, "items");
    if (items && items->kind == KS_YAML_SEQ) {
        for (uint32_t i = 0; i < items->n; i++)
            decode_object(kind, items->items[i], buf, len);
    } else {
        decode_object(kind, root, buf, len);
    }
    if (mode == 2) {
        char *out = NULL;
        size_t olen = 0;
        struct ks_error e2 = {0};
        rc = ks_proto_encode(KS_FUZZ_PB, root, NULL, NULL, KS_PROTO_ENCODE_LENIENT, &out, &olen, &e2);
        ks_fuzz_check(rc == 0 || rc == -ENOMEM, "a decoded tree does not encode again: %d %s: %s", rc,
                      e2.field, e2.msg);
        if (rc == 0) {
            struct ks_yaml_stream *back = NULL;
            struct ks_error e3 = {0};
            rc = ks_proto_parse(KS_FUZZ_PB, out, olen, &back, &e3);
            ks_fuzz_check(rc == 0 || rc == -ENOMEM, "a re-encoded tree does not parse: %s", e3.msg);
            ks_fuzz_check(rc != 0 || same_shape(root, back->docs[0]), "the tree changed through protobuf");
            ks_yaml_stream_destroy(back);
        }
        free(out);
    }
    ks_yaml_stream_destroy(s);
}

struct framing {
    enum ks_kind kind;
    int decode;
    uint32_t n;
    size_t lens[MAX_FRAMES];
};

static int on_frame(void *ctx, const char *text, size_t len, bool junk)
{
    struct framing *f = ctx;
    ks_fuzz_check(!junk, "a protobuf frame reported as junk");
    if (f->n < MAX_FRAMES)
        f->lens[f->n++] = len;
    if (!f->decode)
        return 0;
    struct ks_yaml_stream *s = NULL;
    struct ks_error err = {0};
    int rc = ks_proto_parse_watch_event(KS_FUZZ_PB, text, len, &s, &err);
    ks_fuzz_check_result(rc, s, &err, KS_FUZZ_PB, (const uint8_t *)text, len);
    if (rc == 0) {
        const struct ks_yaml_node *type = ks_yaml_get(s->docs[0], "type");
        ks_fuzz_check(type && type->kind == KS_YAML_SCALAR, "an event without its type");
        decode_object(f->kind, ks_yaml_get(s->docs[0], "object"), (const uint8_t *)text, len);
    }
    ks_yaml_stream_destroy(s);
    return 0;
}

static void feed(struct framing *f, const char *stream, size_t len, size_t chunk)
{
    struct ks__watch_scan w = {.typed = true, .framed = true};
    int rc = 0;
    for (size_t off = 0; off < len && rc == 0; off += chunk)
        rc = ks__watch_scan_feed(&w, stream + off, len - off < chunk ? len - off : chunk, on_frame, f);
    ks_fuzz_check(rc == 0 || rc == -ENOMEM || rc == -E2BIG, "scan rc %d", rc);
    ks__watch_scan_free(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct framing whole, chunked;
    if (size < 3)
        return 0;
    int mode = data[0] % 3;
    enum ks_kind kind = (enum ks_kind)(data[1] % KS_KIND_COUNT);
    size_t chunk = data[2] % 65;
    const uint8_t *buf = data + 3;
    size_t len = size - 3;

    if (mode != 1) {
        body(mode, kind, buf, len);
    } else {
        whole = (struct framing){.kind = kind, .decode = 1};
        feed(&whole, (const char *)buf, len, len ? len : 1);
        if (chunk) {
            chunked = (struct framing){.kind = kind};
            feed(&chunked, (const char *)buf, len, chunk);
            ks_fuzz_check(chunked.n == whole.n, "%u frames in chunks of %zu, %u at once", chunked.n, chunk,
                          whole.n);
            for (uint32_t i = 0; i < whole.n; i++)
                ks_fuzz_check(chunked.lens[i] == whole.lens[i], "frame %u cut differently in chunks of %zu",
                              i, chunk);
        }
    }
    ks_fuzz_recycle();
    return 0;
}
