/*
 * config_internal.h - state shared by the configuration loader's stages.
 *
 * Loading runs in upstream's order, one file per stage: config_load.c decodes the YAML
 * strictly, config_defaults.c applies the version's defaults (default plugins, default
 * args), config_merge.c merges plugin sets and resolves each profile's extension points
 * as the framework would, config_validate.c holds validation.go's checks. The YAML tree
 * stays alive for the whole load so every stage can point errors at a node's line.
 *
 * Context: one thread, configuration load only.
 */
#ifndef KSCHED_CONFIG_CONFIG_INTERNAL_H
#define KSCHED_CONFIG_CONFIG_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "ksched/internal/config.h"
#include "ksched/internal/decode.h"
#include "ksched/yaml_tree.h"

/* Where a profile came from in the file (all NULL for a defaulted profile). */
struct ks__profile_src {
    const struct ks_yaml_node *node;          /* the profile's map */
    const struct ks_yaml_node *name;          /* schedulerName */
    const struct ks_yaml_node *percentage;    /* percentageOfNodesToScore */
    const struct ks_yaml_node *plugins;       /* plugins (the custom set is nil when NULL) */
    const struct ks_yaml_node *plugin_config; /* pluginConfig list */
    bool has_name;                            /* schedulerName given (even "") */
    struct ks_plugins custom;                 /* the file's plugin sets, before merging */
    const struct ks_yaml_node **args;         /* per pluginConfig entry: its args node or NULL */
};

struct ks__cfg_load {
    struct ks_config *cfg;
    const char *file;
    struct ks_error *err;
    struct ks_decoder dec; /* allocates in cfg->arena */
    const struct ks_yaml_node *doc;
    struct ks__profile_src *src; /* cfg->nprofiles entries */

    /* top-level fields given in the file (nodes for error lines, NULL when absent) */
    const struct ks_yaml_node *parallelism;
    const struct ks_yaml_node *percentage;
    const struct ks_yaml_node *initial_backoff;
    const struct ks_yaml_node *max_backoff;
    const struct ks_yaml_node *enable_profiling;
    const struct ks_yaml_node *enable_contention_profiling;
    const struct ks_yaml_node *leader_elect;
};

/* ks__cfg_line - the line of @n, else of the document (for errors about defaulted values). */
int ks__cfg_line(const struct ks__cfg_load *l, const struct ks_yaml_node *n);

/* ks__cfg_fail - record an error at @line on @field (printf-style path already formatted). */
int ks__cfg_fail(struct ks__cfg_load *l, int line, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* config_load.c: strict decoding of the document into l->cfg and l->src. */
int ks__config_decode(struct ks__cfg_load *l);

/* config_defaults.c */
int ks__config_default_plugins(enum ks_config_version v, struct ks_arena *a, struct ks_plugins *out);
void ks__config_default_scalars(struct ks__cfg_load *l);
int ks__config_default_profiles(struct ks__cfg_load *l);
int ks__config_plugin_config(struct ks__cfg_load *l, uint32_t profile);

/* config_merge.c */
/* ks__config_merge_set - mergePluginSet: @cust over @def into @out (arena); v1beta2 keeps no disabled list.
 */
int ks__config_merge_set(struct ks_arena *a, const struct ks_plugin_set *def,
                         const struct ks_plugin_set *cust, bool keep_disabled, struct ks_plugin_set *out);
int ks__config_merge(struct ks__cfg_load *l, uint32_t profile);
int ks__config_resolve(struct ks__cfg_load *l, uint32_t profile);

/* config_validate.c */
int ks__config_validate(struct ks__cfg_load *l);
int ks__config_check_invalid_name(struct ks__cfg_load *l, const char *name, int line, const char *field);
int ks__config_validate_queue_sorts(struct ks__cfg_load *l);

/* ks__points_of_version - mask of the extension points the version's Plugins struct has. */
unsigned ks__points_of_version(enum ks_config_version v);

#endif
