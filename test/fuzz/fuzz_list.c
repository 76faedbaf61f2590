/*
 * fuzz_list.c - libFuzzer target: a LIST answer as an informer reads it (kube/informer.c):
 * its bytes arrive in arbitrary chunks, the list scanner (ks__list_scan_feed,
 * kube/list_scan.c for JSON, kube/proto_list.c for protobuf) hands on each item whole, the
 * listed kind's decoder decodes it, and the end of the answer yields its metadata.
 *
 * Input: byte 0 picks the listed kind (mod KS_KIND_COUNT), byte 1 the chunk size (1 to 64
 * bytes, or 0: everything at once), the rest is the answer.
 *
 * Checked beyond sanitizers: the items, the outcome and the metadata do not depend on how
 * the answer is chunked (the same as feeding it whole), and the failure contract of
 * fuzz_common.h for the scanner and the decoder on each item.
 */
#include "fuzz_common.h"

#include "../../kube/kube_internal.h"
#include "ksched/loader.h"
#include "ksched/yaml_tree.h"

#define KS_FUZZ_LIST "list"

KS_FUZZ_INITIALIZE_API()

enum { MAX_ITEMS = 256 };

/* What a reading of the answer produced, to compare two chunkings. */
struct reading {
    enum ks_kind kind;
    int decode; /* decode each item (only on the first pass) */
    uint32_t n;
    uint32_t kinds[MAX_ITEMS]; /* each item's node kind and number of pairs */
    int rc;
    char rv[64], cont[64];
};

static int on_item(void *ctx, const struct ks_yaml_node *item)
{
    struct reading *r = ctx;
    if (r->n < MAX_ITEMS)
        r->kinds[r->n] = (uint32_t)item->kind << 24 | (item->kind == KS_YAML_MAP ? item->n : 0);
    r->n++;
    if (r->decode && item->kind == KS_YAML_MAP) {
        void *o = NULL;
        struct ks_error err = {0};
        int rc = ks_object_decode_as(KS_FUZZ_LIST, item, r->kind, &o, &err); /* as the informer decodes */
        ks_fuzz_check(rc == 0 || rc == -EINVAL || rc == -ENOMEM, "decode rc %d", rc);
        ks_fuzz_check(rc != -EINVAL || err.msg[0], "an item rejected without a message");
        ks_object_destroy(r->kind, o);
    }
    return 0;
}

static void read_answer(struct reading *r, const char *answer, size_t len, size_t chunk)
{
    struct ks__list_scan ls = {0};
    struct ks_error err = {0};
    int rc = 0;
    for (size_t off = 0; off < len && rc == 0; off += chunk) {
        size_t n = len - off < chunk ? len - off : chunk;
        rc = ks__list_scan_feed(&ls, KS_FUZZ_LIST, answer + off, n, on_item, r, &err);
    }
    const char *rv = "", *cont = "";
    if (rc == 0)
        rc = ks__list_scan_finish(&ls, KS_FUZZ_LIST, &rv, &cont, &err);
    ks_fuzz_check(rc == 0 || rc == -EINVAL || rc == -ENOMEM || rc == -E2BIG, "scan rc %d", rc);
    ks_fuzz_check(rc != -EINVAL || err.msg[0], "an answer rejected without a message");
    r->rc = rc;
    snprintf(r->rv, sizeof(r->rv), "%s", rv);
    snprintf(r->cont, sizeof(r->cont), "%s", cont);
    ks__list_scan_free(&ls);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct reading whole, chunked;
    if (size < 2)
        return 0;
    enum ks_kind kind = (enum ks_kind)(data[0] % KS_KIND_COUNT);
    size_t chunk = data[1] % 65;
    const char *answer = (const char *)data + 2;
    size_t len = size - 2;

    whole = (struct reading){.kind = kind, .decode = 1};
    read_answer(&whole, answer, len, len ? len : 1);
    if (chunk) {
        chunked = (struct reading){.kind = kind};
        read_answer(&chunked, answer, len, chunk);
        /* an error may come sooner or later in the bytes, but it comes, and every item before it */
        ks_fuzz_check((chunked.rc == 0) == (whole.rc == 0), "rc %d in chunks of %zu, %d at once", chunked.rc,
                      chunk, whole.rc);
        if (whole.rc == 0) {
            ks_fuzz_check(chunked.n == whole.n, "%u items in chunks of %zu, %u at once", chunked.n, chunk,
                          whole.n);
            for (uint32_t i = 0; i < whole.n && i < MAX_ITEMS; i++)
                ks_fuzz_check(chunked.kinds[i] == whole.kinds[i], "item %u differs in chunks of %zu", i,
                              chunk);
            ks_fuzz_check(!strcmp(chunked.rv, whole.rv) && !strcmp(chunked.cont, whole.cont),
                          "metadata differs in chunks of %zu", chunk);
        }
    }
    ks_fuzz_recycle();
    return 0;
}
