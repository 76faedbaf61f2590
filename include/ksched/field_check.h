/*
 * field_check.h - a manifest's fields against the Kubernetes API schema, as the API
 * server's field validation (kubectl --validate) checks them.
 *
 * A document's YAML tree is walked against its kind's schema (include/ksched/internal/api_schema.h):
 * a key that the schema does not define where it stands is an unknown field; a key written
 * twice in one map (kept by the YAML layer with KS_YAML_KEEP_DUPLICATES, the later value
 * winning) is a duplicate field. What the caller does with them is its --validate mode.
 */
#ifndef KSCHED_FIELD_CHECK_H
#define KSCHED_FIELD_CHECK_H

#include <stdint.h>

struct ks_yaml_node;

/* kubectl's --validate: what becomes of unknown and duplicate fields. */
enum ks_validation {
    KS_VALIDATE_WARN,   /* each is a warning; the object loads (a duplicate's later value wins) */
    KS_VALIDATE_STRICT, /* the first is an error: nothing loads */
    KS_VALIDATE_IGNORE, /* nothing is checked or said */
};

/*
 * ks_validation_parse - kubectl's --validate values: "strict" (or "true"), "warn",
 * "ignore" (or "false"). Returns 0 and *out, or -EINVAL.
 */
int ks_validation_parse(const char *s, enum ks_validation *out);

/*
 * Called once per unknown or duplicate field, in document order within each map (a map's
 * duplicates after its other fields): @line is the key's, @path the field's path after the
 * walk's prefix ("spec.containers[0].resouces"), @msg "unknown field \"resouces\"" or
 * "duplicate field \"name\"". A nonzero return stops the walk and is returned by it.
 */
typedef int (*ks_field_issue_fn)(void *ctx, int line, const char *path, const char *msg);

/*
 * ks_field_check - walk @doc against schema node @root (ks_api_schema_root()), calling
 * @issue for each problem; paths start with @prefix ("" or "items[3]."). Returns 0, or the
 * first nonzero value @issue returned. Allocates nothing; any thread; recursion is bounded
 * by the YAML layer's nesting limit.
 */
int ks_field_check(const struct ks_yaml_node *doc, int64_t root, const char *prefix, ks_field_issue_fn issue,
                   void *ctx);

#endif
