/*
 * config_common.c - what every stage of a configuration's load and its readers share: the
 * names of API versions and extension points, the error of a stage at a line of the file
 * (ks__cfg_fail), and the accessors of a loaded configuration (include/ksched/internal/config.h). It
 * calls no stage, so the stages (config_load.c, config_defaults.c, config_merge.c,
 * config_validate.c) depend on it and not on each other.
 */
#include "config_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const version_names[] = {
#define KS_X(id, text) text,
    KS_CONFIG_VERSION_MAP(KS_X)
#undef KS_X
};

static const char *const point_names[] = {
#define KS_X(id, field, iface) field,
    KS_EXT_POINT_MAP(KS_X)
#undef KS_X
};

static const char *const point_ifaces[] = {
#define KS_X(id, field, iface) iface,
    KS_EXT_POINT_MAP(KS_X)
#undef KS_X
};

const char *ks_config_version_name(enum ks_config_version v)
{
    return (unsigned)v < KS_CONFIG_VERSION_COUNT ? version_names[v] : "?";
}

const char *ks_ext_point_name(enum ks_ext_point p)
{
    return (unsigned)p < KS_EXT_COUNT ? point_names[p] : "?";
}

const char *ks_ext_point_iface(enum ks_ext_point p)
{
    return (unsigned)p < KS_EXT_COUNT ? point_ifaces[p] : "?";
}

int ks_config_version_parse(const char *api_version, enum ks_config_version *out)
{
    for (int v = 0; api_version && v < KS_CONFIG_VERSION_COUNT; v++) {
        if (strcmp(api_version, version_names[v]) == 0) {
            *out = (enum ks_config_version)v;
            return 0;
        }
    }
    return -EINVAL;
}

unsigned ks__points_of_version(enum ks_config_version v)
{
    unsigned all = (1u << KS_EXT_COUNT) - 1;
    /* v1beta2 (1.22) has neither PreEnqueue nor MultiPoint */
    return v == KS_CONFIG_V1BETA2 ? all & ~(KS_EXT_BIT(PRE_ENQUEUE) | KS_EXT_BIT(MULTI_POINT)) : all;
}

int ks__cfg_line(const struct ks__cfg_load *l, const struct ks_yaml_node *n)
{
    if (n)
        return n->line;
    return l->doc ? l->doc->line : 1;
}

int ks__cfg_fail(struct ks__cfg_load *l, int line, const char *field, const char *fmt, ...)
{
    char msg[KS_ERROR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return ks_error_set(l->err, l->file, line, field, "%s", msg);
}

/* ---- accessors -------------------------------------------------------------------------------- */

const struct ks_profile *ks_config_find_profile(const struct ks_config *cfg, const char *scheduler_name)
{
    for (uint32_t i = 0; i < cfg->nprofiles; i++) {
        if (strcmp(cfg->profiles[i].scheduler_name, scheduler_name) == 0)
            return &cfg->profiles[i];
    }
    return NULL;
}

const struct ks_resolved_point *ks_profile_point(const struct ks_profile *prof, enum ks_ext_point point)
{
    return (unsigned)point < KS_EXT_RUN_COUNT ? &prof->resolved[point] : NULL;
}

const void *ks_profile_args(const struct ks_profile *prof, const char *name)
{
    for (uint32_t i = 0; i < prof->nplugin_config; i++) {
        if (strcmp(prof->plugin_config[i].name, name) == 0)
            return prof->plugin_config[i].args;
    }
    return NULL;
}
