/*
 * config.h - loading, defaulting, validating and printing KubeSchedulerConfiguration.
 *
 * Loading follows kube-scheduler's order: strict decoding (unknown fields are errors),
 * version-specific defaulting (default plugins merged with the file's, default args for
 * every enabled plugin that has args), validation, then the framework's own checks
 * (unknown plugins, plugins at points they do not implement, duplicates, one queue sort
 * and at least one bind plugin per profile, the same queue sort in every profile, score
 * weight overflow). The first failure is reported as one struct ks_error with the file,
 * the line of the offending YAML node and a dotted field path such as
 * profiles[0].plugins.score.enabled[2].weight.
 *
 * Context: configuration load and printing run on one thread at start-up and allocate.
 * A loaded struct ks_config is immutable and may be read from any thread without locks.
 */
#ifndef KSCHED_CONFIG_H
#define KSCHED_CONFIG_H

#include <stddef.h>

#include "ksched/base/error.h"
#include "ksched/config_types.h"
#include "ksched/internal/yaml_out.h"

/*
 * ks_config_load_file - read, default and validate the configuration in @path ("-":
 * standard input, named STDIN in errors, as ks_yaml_parse_file).
 * Returns 0 and *out (free with ks_config_destroy), -EINVAL with @err set, -ENOMEM, or
 * -errno when the file cannot be read (@err set as well).
 */
int ks_config_load_file(const char *path, struct ks_config **out, struct ks_error *err);

/* ks_config_load_yaml - as ks_config_load_file, from @len bytes at @buf named @file in errors. */
int ks_config_load_yaml(const char *file, const char *buf, size_t len, struct ks_config **out,
                        struct ks_error *err);

/*
 * ks_config_load_default - the configuration kube-scheduler runs without a config file:
 * kubescheduler.config.k8s.io/v1 defaults with the single "default-scheduler" profile.
 * Returns 0 and *out, or -ENOMEM.
 */
int ks_config_load_default(struct ks_config **out);

/* ks_config_destroy - free the configuration and every plugin's args. Accepts NULL. */
void ks_config_destroy(struct ks_config *cfg);

/*
 * ks_config_print - write the effective configuration as YAML, fields in the order of
 * upstream's versioned types, each plugin's defaulted args included. Write errors are
 * left in @out (see ks_yaml_out_finish()).
 */
void ks_config_print(const struct ks_config *cfg, struct ks_yaml_out *out);

/* ks_config_find_profile - the profile named @scheduler_name, or NULL. */
const struct ks_profile *ks_config_find_profile(const struct ks_config *cfg, const char *scheduler_name);

/*
 * ks_profile_point - the plugins the framework runs at @point (not KS_EXT_MULTI_POINT),
 * in order; at KS_EXT_SCORE each carries its effective weight.
 */
const struct ks_resolved_point *ks_profile_point(const struct ks_profile *prof, enum ks_ext_point point);

/* ks_profile_args - the parsed args of plugin @name in @prof, NULL when it has none. */
const void *ks_profile_args(const struct ks_profile *prof, const char *name);

/* Names of enum values: "kubescheduler.config.k8s.io/v1", "preFilter", "PreFilterPlugin". */
const char *ks_config_version_name(enum ks_config_version v);
const char *ks_ext_point_name(enum ks_ext_point p);
const char *ks_ext_point_iface(enum ks_ext_point p);

/* ks_config_version_parse - the version named @api_version; -EINVAL when it is not one ksched reads. */
int ks_config_version_parse(const char *api_version, enum ks_config_version *out);

#endif
