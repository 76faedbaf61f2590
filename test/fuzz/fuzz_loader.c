/*
 * fuzz_loader.c - libFuzzer target: one manifest file (multi-document YAML, `kind: List`)
 * through ks_objects_load_buffer(): libyaml + the tree builder (api/yaml_tree.c), every
 * decoder of KS_KIND_MAP (api/decode*.c), duplicate and cross-object checks (api/loader.c).
 *
 * Checked: the failure contract of fuzz_common.h (a clear error or a whole object set).
 */
#include "fuzz_common.h"

#include "ksched/loader.h"

KS_FUZZ_INITIALIZE_API()

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ks_objects *objs = NULL;
    struct ks_error err = {0};
    int rc = ks_objects_load_buffer(KS_FUZZ_FILE, (const char *)data, size, &objs, &err);

    ks_fuzz_check_result(rc, objs, &err, KS_FUZZ_FILE, data, size);
    for (int k = 0; objs && k < KS_KIND_COUNT; k++) {
        for (uint32_t i = 0; i < objs->of[k].n; i++)
            ks_fuzz_check(objs->of[k].items[i] != NULL, "NULL %s in the set", ks_kind_name((enum ks_kind)k));
    }
    ks_objects_destroy(objs);
    ks_fuzz_recycle();
    return 0;
}
