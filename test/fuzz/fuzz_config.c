/*
 * fuzz_config.c - libFuzzer target: a KubeSchedulerConfiguration file through
 * ks_config_load_yaml() (strict decoding, defaulting, plugin args, validation,
 * framework checks: config/config_*.c) and, when it loads, ks_config_print().
 *
 * Checked beyond sanitizers: the failure contract of fuzz_common.h, and that the printed
 * effective configuration loads again (what `ksched config --print` shows is a configuration
 * ksched accepts) and, except for v1beta2, prints the same text: a fixed point. v1beta2's
 * defaulting keeps no disabled list (upstream's v1beta2 mergePluginSet), so reloading its
 * printout merges the default plugins in again, as upstream would.
 */
#include "fuzz_common.h"

#include "ksched/internal/config.h"

KS_FUZZ_INITIALIZE_API()

/* The printed text of @cfg (malloc'd, *len bytes), NULL when out of memory. */
static char *print(const struct ks_config *cfg, size_t *len)
{
    char *text = NULL;
    FILE *fp = open_memstream(&text, len);
    struct ks_yaml_out out;
    if (!fp)
        return NULL;
    ks_yaml_out_init(&out, fp);
    ks_config_print(cfg, &out);
    int rc = ks_yaml_out_finish(&out);
    if (fclose(fp) != 0 || rc == -ENOMEM) {
        free(text);
        return NULL;
    }
    ks_fuzz_check(rc == 0, "ks_config_print left error %d", rc);
    return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ks_config *cfg = NULL, *again = NULL;
    struct ks_error err = {0};
    char *text = NULL, *text2 = NULL;
    size_t len = 0, len2 = 0;
    int rc = ks_config_load_yaml(KS_FUZZ_FILE, (const char *)data, size, &cfg, &err);

    ks_fuzz_check_result(rc, cfg, &err, KS_FUZZ_FILE, data, size);
    if (rc)
        goto out;
    if (!(text = print(cfg, &len)))
        goto out;
    struct ks_error err2 = {0};
    rc = ks_config_load_yaml("printed.yaml", text, len, &again, &err2);
    if (rc == -ENOMEM)
        goto out;
    ks_fuzz_check(rc == 0, "printed configuration does not load: %s:%d: %s: %s\n%s", err2.file, err2.line,
                  err2.field, err2.msg, text);
    if (cfg->version == KS_CONFIG_V1BETA2 || !(text2 = print(again, &len2)))
        goto out;
    ks_fuzz_check(len == len2 && memcmp(text, text2, len) == 0, "printing is not a fixed point:\n%s\n---\n%s",
                  text, text2);
out:
    free(text);
    free(text2);
    ks_config_destroy(again);
    ks_config_destroy(cfg);
    ks_fuzz_recycle();
    return 0;
}
