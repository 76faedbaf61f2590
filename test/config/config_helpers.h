/*
 * config_helpers.h - loading configurations from C strings in the config tests.
 *
 * Header-only (static functions) so each test file stands alone. Failing helpers fail
 * the current Criterion test with both the expected and the actual value printed.
 *
 * Context: test code only.
 */
#ifndef KSCHED_TEST_CONFIG_HELPERS_H
#define KSCHED_TEST_CONFIG_HELPERS_H

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksched/base/intern.h"
#include "ksched/internal/config.h"

#define V1_HEADER      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
#define V1BETA3_HEADER "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n"
#define V1BETA2_HEADER "apiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: KubeSchedulerConfiguration\n"

static inline struct ks_config *cfg_load_ok(const char *yaml)
{
    struct ks_config *cfg = NULL;
    struct ks_error err = {0};
    char msg[KS_ERROR_FILE_MAX + KS_ERROR_FIELD_MAX + KS_ERROR_MSG_MAX + 16];
    int rc = ks_config_load_yaml("test.yaml", yaml, strlen(yaml), &cfg, &err);

    ks_error_format(&err, msg, sizeof(msg));
    cr_assert_eq(rc, 0, "load failed (%d): %s\n--- input ---\n%s", rc, msg, yaml);
    return cfg;
}

/* The load must fail at @line on @field with a message containing @msg. */
static inline void cfg_load_fails(const char *yaml, int line, const char *field, const char *msg)
{
    struct ks_config *cfg = NULL;
    struct ks_error err = {0};
    int rc = ks_config_load_yaml("test.yaml", yaml, strlen(yaml), &cfg, &err);

    cr_assert_eq(rc, -EINVAL, "load returned %d, want -EINVAL\n--- input ---\n%s", rc, yaml);
    cr_assert_null(cfg);
    cr_assert_str_eq(err.file, "test.yaml");
    cr_assert_str_eq(err.field, field, "field: got \"%s\", want \"%s\" (message: %s)", err.field, field,
                     err.msg);
    cr_assert_eq(err.line, line, "line: got %d, want %d (%s: %s)", err.line, line, err.field, err.msg);
    cr_assert(strstr(err.msg, msg) != NULL, "message \"%s\" does not contain \"%s\"", err.msg, msg);
}

/* "A B:3 C": the plugins of a resolved point, with weights at the score point. */
static inline void point_str(const struct ks_profile *prof, enum ks_ext_point p, char *buf, size_t len)
{
    const struct ks_resolved_point *rp = ks_profile_point(prof, p);
    size_t off = 0;

    buf[0] = '\0';
    for (uint32_t i = 0; i < rp->n && off < len; i++) {
        int n = rp->items[i].weight
                    ? snprintf(buf + off, len - off, "%s%s:%d", i ? " " : "", rp->items[i].plugin->name,
                               rp->items[i].weight)
                    : snprintf(buf + off, len - off, "%s%s", i ? " " : "", rp->items[i].plugin->name);
        off += n > 0 ? (size_t)n : 0;
    }
}

static inline void assert_point(const struct ks_profile *prof, enum ks_ext_point p, const char *want)
{
    char got[2048];
    point_str(prof, p, got, sizeof(got));
    cr_assert_str_eq(got, want, "%s: got \"%s\", want \"%s\"", ks_ext_point_name(p), got, want);
}

/* "A B:3 C | -D -E": a plugin set, weights where written, disabled names after the bar. */
static inline void set_str(const struct ks_plugin_set *set, char *buf, size_t len)
{
    size_t off = 0;
    int n;

    buf[0] = '\0';
    for (uint32_t i = 0; i < set->nenabled && off < len; i++) {
        const struct ks_plugin_ref *r = &set->enabled[i];
        n = r->has_weight ? snprintf(buf + off, len - off, "%s%s:%d", i ? " " : "", r->name, r->weight)
                          : snprintf(buf + off, len - off, "%s%s", i ? " " : "", r->name);
        off += n > 0 ? (size_t)n : 0;
    }
    if (set->ndisabled && off < len) {
        n = snprintf(buf + off, len - off, "%s|", off ? " " : "");
        off += n > 0 ? (size_t)n : 0;
    }
    for (uint32_t i = 0; i < set->ndisabled && off < len; i++) {
        n = snprintf(buf + off, len - off, " -%s", set->disabled[i].name);
        off += n > 0 ? (size_t)n : 0;
    }
}

static inline void assert_set(const struct ks_plugin_set *set, const char *want)
{
    char got[2048];
    set_str(set, got, sizeof(got));
    cr_assert_str_eq(got, want, "got \"%s\", want \"%s\"", got, want);
}

/* The configuration printed as YAML, malloc'd. */
static inline char *cfg_print(const struct ks_config *cfg)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    struct ks_yaml_out o;

    cr_assert_not_null(mem);
    ks_yaml_out_init(&o, mem);
    ks_config_print(cfg, &o);
    cr_assert_eq(ks_yaml_out_finish(&o), 0);
    fclose(mem);
    return buf;
}

#endif
