/*
 * config_decode.h - decoding helpers shared by the configuration loader and the plugins'
 * .args_parse.
 *
 * They extend the object decoder of ksched/internal/decode.h (path tracking, typed fields) with
 * what KubeSchedulerConfiguration needs on top: upstream decodes it strictly, so an
 * unknown field is an error; args may carry their own apiVersion and kind; durations are
 * Go duration strings; resource lists and utilization shapes are shared by several
 * plugins' args, as are their validation messages and YAML output.
 *
 * Messages mimic upstream's field errors after the path: "Invalid value: 101: not in
 * valid range [0, 100]", "Required value", "Duplicate value: \"x\"", "Unsupported value:
 * \"x\": supported values: ...", "Forbidden: ...", and strict decoding's
 * "unknown field \"x\"".
 *
 * Context: configuration load (one thread); allocation goes to the decoder's arena.
 */
#ifndef KSCHED_CONFIG_DECODE_H
#define KSCHED_CONFIG_DECODE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "ksched/config_types.h"
#include "ksched/internal/decode.h"
#include "ksched/internal/yaml_out.h"
#include "ksched/plugin_args.h"

/* ks_cfg_strict - @map must be a map whose keys are all in @fields (NULL-terminated). */
int ks_cfg_strict(struct ks_decoder *d, const struct ks_yaml_node *map, const char *const *fields);

/*
 * ks_cfg_fail_at - record an error on the current path extended by @field (NULL: the
 * current path), at @node's line (or @line when @node is NULL). Returns -EINVAL.
 */
int ks_cfg_fail_at(struct ks_decoder *d, const struct ks_yaml_node *node, int line, const char *field,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * ks_cfg_args_begin - the common start of an args_parse: @args (NULL or null means no
 * args) must be a map whose keys are apiVersion, kind or one of @fields; apiVersion, when
 * present, must be a configuration version (it then decides the version the args are
 * read as, as upstream decodes nested args by their own apiVersion) and kind must be
 * @kind. *version is the version to read the args as (@api_version when not given).
 */
int ks_cfg_args_begin(struct ks_decoder *d, const struct ks_yaml_node *args, const char *kind,
                      const char *api_version, const char *const *fields, enum ks_config_version *version);

/*
 * KS_DEFINE_ARGS_OPS - define a plugin's static args_parse and args_destroy for an args
 * struct @type that embeds `struct ks_arena arena`: args_parse allocates a zeroed @type,
 * runs decode(decoder, node, api_version, args) with the decoder allocating into the
 * args' own arena (decode sets defaults, decodes and validates), and frees it all on
 * failure; args_destroy frees the arena and the struct.
 */
#define KS_DEFINE_ARGS_OPS(type, decode)                                                                     \
    static void args_destroy(void *args)                                                                     \
    {                                                                                                        \
        type *a = args;                                                                                      \
        if (!a)                                                                                              \
            return;                                                                                          \
        ks_arena_destroy(&a->arena);                                                                         \
        free(a);                                                                                             \
    }                                                                                                        \
    static int args_parse(const struct ks_yaml_node *node, const char *api_version, const char *file,        \
                          void **out, struct ks_error *err)                                                  \
    {                                                                                                        \
        struct ks_decoder d;                                                                                 \
        type *a = calloc(1, sizeof(*a));                                                                     \
        int rc;                                                                                              \
        if (!a)                                                                                              \
            return -ENOMEM;                                                                                  \
        ks_decoder_init(&d, file, &a->arena, err);                                                           \
        if ((rc = decode(&d, node, api_version, a))) {                                                       \
            args_destroy(a);                                                                                 \
            return rc;                                                                                       \
        }                                                                                                    \
        *out = a;                                                                                            \
        return 0;                                                                                            \
    }

/*
 * KS_DEFINE_PLAIN_ARGS_OPS - KS_DEFINE_ARGS_OPS for a plain args struct @type (no arena,
 * nothing it points to): decode runs with a scratch arena freed before args_parse
 * returns, and args_destroy is free().
 */
#define KS_DEFINE_PLAIN_ARGS_OPS(type, decode)                                                               \
    static void args_destroy(void *args)                                                                     \
    {                                                                                                        \
        free(args);                                                                                          \
    }                                                                                                        \
    static int args_parse(const struct ks_yaml_node *node, const char *api_version, const char *file,        \
                          void **out, struct ks_error *err)                                                  \
    {                                                                                                        \
        struct ks_arena scratch = KS_ARENA_INIT;                                                             \
        struct ks_decoder d;                                                                                 \
        type *a = calloc(1, sizeof(*a));                                                                     \
        int rc;                                                                                              \
        if (!a)                                                                                              \
            return -ENOMEM;                                                                                  \
        ks_decoder_init(&d, file, &scratch, err);                                                            \
        rc = decode(&d, node, api_version, a);                                                               \
        ks_arena_destroy(&scratch);                                                                          \
        if (rc) {                                                                                            \
            free(a);                                                                                         \
            return rc;                                                                                       \
        }                                                                                                    \
        *out = a;                                                                                            \
        return 0;                                                                                            \
    }

/*
 * ks_cfg_resources - decode the list @key of {name, weight} into *out (arena), leaving
 * *n and *out alone when absent. *seq is the list node (NULL when absent), so callers can
 * point validation errors at an item.
 */
int ks_cfg_resources(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, uint32_t *n,
                     struct ks_resource_spec **out, const struct ks_yaml_node **seq);

/* ks_cfg_default_resources - cpu and memory with weight 1 (defaultResourceSpec). 0 or -ENOMEM. */
int ks_cfg_default_resources(struct ks_arena *a, uint32_t *n, struct ks_resource_spec **out);

/* ks_cfg_shape - decode the list @key of {utilization, score}; *seq as for ks_cfg_resources. */
int ks_cfg_shape(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, uint32_t *n,
                 struct ks_shape_point **out, const struct ks_yaml_node **seq);

/*
 * ks_cfg_check_shape - upstream's validateFunctionShape with the path at the shape: at
 * least one point, utilization strictly increasing, utilization 0..100, score 0..10.
 * @seq is the list node (for lines), @line the line to use when it is absent.
 */
int ks_cfg_check_shape(struct ks_decoder *d, const struct ks_yaml_node *seq, int line, uint32_t n,
                       const struct ks_shape_point *shape);

/*
 * ks_cfg_qualified_name - check @s as a label key (IsQualifiedName); on failure writes
 * upstream's reason to @why and returns false.
 */
bool ks_cfg_qualified_name(const char *s, char *why, size_t len);

/*
 * ks_cfg_duration - a Go duration string ("15s", "1m30s", "100ms") at @key into
 * nanoseconds, as metav1.Duration decodes; missing or null leaves *ns alone.
 */
int ks_cfg_duration(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, int64_t *ns);

/* ks_cfg_format_duration - @ns as Go's Duration.String() ("15s", "1m0s", "1.5s", "0s"). */
void ks_cfg_format_duration(int64_t ns, char *buf, size_t len);

/* ks_cfg_item_field - the node of @field inside item @i of list @seq, NULL when absent (for error lines). */
const struct ks_yaml_node *ks_cfg_item_field(const struct ks_yaml_node *seq, uint32_t i, const char *field);

/* Output of the shared shapes, as lists under @key. */
void ks_cfg_print_resources(struct ks_yaml_out *o, const char *key, uint32_t n,
                            const struct ks_resource_spec *r);
void ks_cfg_print_shape(struct ks_yaml_out *o, const char *key, uint32_t n, const struct ks_shape_point *s);

#endif
