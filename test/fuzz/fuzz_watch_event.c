/*
 * fuzz_watch_event.c - libFuzzer target: one watch event line as a kube-apiserver streams
 * it, {"type": ADDED|MODIFIED|DELETED|BOOKMARK|ERROR, "object": {...}}, through
 * ks_json_parse() (kube/json_tree.c) and, for object events, ks_object_decode() (the
 * loader's decoders), as an informer reads it.
 *
 * Checked beyond sanitizers: the failure contract of fuzz_common.h at both steps, and that
 * a decoded object is of the kind its "kind" field names.
 */
#include "fuzz_common.h"

#include "ksched/json_tree.h"
#include "ksched/loader.h"
#include "ksched/yaml_tree.h"

#define KS_FUZZ_JSON "watch.json"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return ks_fuzz_init();
}

static int is_object_event(const struct ks_yaml_node *type)
{
    static const char *const types[] = {"ADDED", "MODIFIED", "DELETED"};
    if (!type || type->kind != KS_YAML_SCALAR)
        return 0;
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        if (strcmp(type->str, types[i]) == 0)
            return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ks_yaml_stream *s = NULL;
    struct ks_error err = {0};
    int rc = ks_json_parse(KS_FUZZ_JSON, (const char *)data, size, &s, &err);

    ks_fuzz_check_result(rc, s, &err, KS_FUZZ_JSON, data, size);
    if (rc || s->docs[0]->kind != KS_YAML_MAP || !is_object_event(ks_yaml_get(s->docs[0], "type")))
        goto out;
    const struct ks_yaml_node *object = ks_yaml_get(s->docs[0], "object");
    if (!object)
        goto out;
    enum ks_kind kind;
    void *obj = NULL;
    struct ks_error derr = {0};
    rc = ks_object_decode(KS_FUZZ_JSON, object, &kind, &obj, &derr);
    ks_fuzz_check_result(rc, obj, &derr, KS_FUZZ_JSON, data, size);
    if (obj) {
        const struct ks_yaml_node *k = ks_yaml_get(object, "kind");
        ks_fuzz_check(k && strcmp(k->str, ks_kind_name(kind)) == 0, "decoded a %s from kind %s",
                      ks_kind_name(kind), k ? k->str : "(none)");
        ks_object_destroy(kind, obj);
    }
out:
    ks_yaml_stream_destroy(s);
    ks_fuzz_recycle();
    return 0;
}
