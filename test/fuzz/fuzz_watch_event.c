/*
 * fuzz_watch_event.c - libFuzzer target: a watch stream as a kube-apiserver sends it, the
 * way an informer reads it (kube/informer.c): bytes arrive in arbitrary chunks, the
 * scanner (ks__watch_scan_feed, kube/watch_scan.c) frames them into values, each value is
 * parsed (ks_json_parse, kube/json_tree.c) and an ADDED/MODIFIED/DELETED event's "object"
 * is decoded by the watched kind's decoder (api/decode*.c), whatever its "kind" field says.
 *
 * Input: byte 0 picks the watched kind (mod KS_KIND_COUNT), byte 1 the chunk size (1 to
 * 64 bytes, or 0: everything at once), the rest is the stream.
 *
 * Checked beyond sanitizers: framing does not depend on how the stream is chunked (the
 * same values and junk lines as feeding it whole), and the failure contract of
 * fuzz_common.h for the parser and the decoder on each value.
 */
#include "fuzz_common.h"

#include "../../kube/kube_internal.h"
#include "ksched/internal/json_tree.h"
#include "ksched/loader.h"
#include "ksched/yaml_tree.h"

#define KS_FUZZ_JSON "watch.json"

KS_FUZZ_INITIALIZE_API()

enum { MAX_VALUES = 256 };

struct framed {
    size_t len;
    uint64_t hash;
    bool junk;
};

/* What the scanner handed on, to compare two chunkings. */
struct framing {
    enum ks_kind kind;
    int decode; /* parse and decode each value (only on the first pass) */
    uint32_t n;
    struct framed v[MAX_VALUES];
};

static uint64_t fnv(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

static int is_object_event(const struct ks_yaml_node *type)
{
    return type && type->kind == KS_YAML_SCALAR &&
           (!strcmp(type->str, "ADDED") || !strcmp(type->str, "MODIFIED") || !strcmp(type->str, "DELETED"));
}

static void decode_value(enum ks_kind kind, const char *text, size_t len)
{
    struct ks_yaml_stream *s = NULL;
    struct ks_error err = {0};
    int rc = ks_json_parse(KS_FUZZ_JSON, text, len, &s, &err);

    ks_fuzz_check_result(rc, s, &err, KS_FUZZ_JSON, (const uint8_t *)text, len);
    if (rc)
        return;
    const struct ks_yaml_node *ev = s->docs[0], *obj = ks_yaml_get(ev, "object");
    if (is_object_event(ks_yaml_get(ev, "type")) && obj && obj->kind == KS_YAML_MAP) {
        void *o = NULL;
        struct ks_error derr = {0};
        rc = ks_object_decode_as(KS_FUZZ_JSON, obj, kind, &o, &derr); /* as the informer decodes */
        ks_fuzz_check_result(rc, o, &derr, KS_FUZZ_JSON, (const uint8_t *)text, len);
        ks_object_destroy(kind, o);
    }
    ks_yaml_stream_destroy(s);
}

static int on_value(void *ctx, const char *text, size_t len, bool junk)
{
    struct framing *f = ctx;
    if (f->n < MAX_VALUES)
        f->v[f->n++] = (struct framed){len, fnv(text, len), junk};
    if (f->decode && !junk)
        decode_value(f->kind, text, len);
    return 0;
}

static void feed(struct framing *f, const char *stream, size_t len, size_t chunk)
{
    struct ks__watch_scan w = {0};
    int rc = 0;
    for (size_t off = 0; off < len && rc == 0; off += chunk) {
        size_t n = len - off < chunk ? len - off : chunk;
        rc = ks__watch_scan_feed(&w, stream + off, n, on_value, f);
    }
    ks_fuzz_check(rc == 0 || rc == -ENOMEM, "scan rc %d", rc);
    ks__watch_scan_free(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct framing whole, chunked;
    if (size < 2)
        return 0;
    enum ks_kind kind = (enum ks_kind)(data[0] % KS_KIND_COUNT);
    size_t chunk = data[1] % 65;
    const char *stream = (const char *)data + 2;
    size_t len = size - 2;

    whole = (struct framing){.kind = kind, .decode = 1};
    feed(&whole, stream, len, len ? len : 1);
    if (chunk) {
        chunked = (struct framing){.kind = kind};
        feed(&chunked, stream, len, chunk);
        ks_fuzz_check(chunked.n == whole.n, "%u values in chunks of %zu, %u at once", chunked.n, chunk,
                      whole.n);
        for (uint32_t i = 0; i < whole.n; i++)
            ks_fuzz_check(chunked.v[i].len == whole.v[i].len && chunked.v[i].hash == whole.v[i].hash &&
                              chunked.v[i].junk == whole.v[i].junk,
                          "value %u framed differently in chunks of %zu", i, chunk);
    }
    ks_fuzz_recycle();
    return 0;
}
