/*
 * fuzz_json.c - libFuzzer target: an API object as JSON, through ks_json_parse()
 * (kube/json_tree.c) and the loader's decoders (ks_object_decode: api/loader.c,
 * api/decode*.c), the path every object from a kube-apiserver takes.
 *
 * Checked beyond sanitizers: the failure contract of fuzz_common.h for the parser and the
 * decoders, one document per parse, and the tree's shape (maps have scalar keys, no NULL
 * children, lines within the text).
 */
#include "fuzz_common.h"

#include "ksched/internal/json_tree.h"
#include "ksched/loader.h"

#define KS_FUZZ_JSON "fuzz.json"

KS_FUZZ_INITIALIZE_API()

static void check_tree(const struct ks_yaml_node *n, int lines, int depth)
{
    ks_fuzz_check(n != NULL, "NULL node");
    ks_fuzz_check(n->line >= 1 && n->line <= lines, "node line %d of %d", n->line, lines);
    ks_fuzz_check(depth <= 512, "tree deeper than 512");
    switch (n->kind) {
    case KS_YAML_SCALAR:
        ks_fuzz_check(n->str && strlen(n->str) <= n->len, "scalar text");
        break;
    case KS_YAML_SEQ:
        for (uint32_t i = 0; i < n->n; i++)
            check_tree(n->items[i], lines, depth + 1);
        break;
    case KS_YAML_MAP:
        for (uint32_t i = 0; i < n->n; i++) {
            ks_fuzz_check(n->pairs[i].key && n->pairs[i].key->kind == KS_YAML_SCALAR, "map key not a string");
            ks_fuzz_check(!n->pairs[i].key->plain, "JSON key read as a plain scalar");
            check_tree(n->pairs[i].value, lines, depth + 1);
        }
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ks_yaml_stream *s = NULL;
    struct ks_error err = {0};
    int rc = ks_json_parse(KS_FUZZ_JSON, (const char *)data, size, &s, &err);

    ks_fuzz_check_result(rc, s, &err, KS_FUZZ_JSON, data, size);
    if (rc)
        goto out;
    ks_fuzz_check(s->ndocs == 1 && s->docs[0], "%u documents", s->ndocs);
    check_tree(s->docs[0], ks_fuzz_lines(data, size), 0);

    enum ks_kind kind;
    void *obj = NULL;
    struct ks_error derr = {0};
    rc = ks_object_decode(KS_FUZZ_JSON, s->docs[0], &kind, &obj, &derr);
    ks_fuzz_check_result(rc, obj, &derr, KS_FUZZ_JSON, data, size);
    if (obj)
        ks_object_destroy(kind, obj);
out:
    ks_yaml_stream_destroy(s);
    ks_fuzz_recycle();
    return 0;
}
