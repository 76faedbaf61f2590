/*
 * type_check.h - a manifest's values against the Go types of the Kubernetes API, as the API
 * server's JSON decoder types them.
 *
 * kubectl converts YAML to JSON (ksched/yaml_tree.h: ks_yaml_json_type) and the API server
 * decodes that JSON into the API's Go structs; a value of the wrong JSON type (a number where
 * a string goes, "80" where an int32 goes, a list where a map goes), an integer out of its
 * range, a malformed quantity, time or int-or-string refuses the whole object. The API
 * server answers "<Kind> in version "<v>" cannot be handled as a <Kind>: <decoder error>",
 * the decoder's error being the first one encoding/json meets: walking the object's keys
 * in sorted order, it keeps the first type error and goes on, and stops at the first error
 * of a type that decodes itself (Quantity, IntOrString, Time), which then wins.
 */
#ifndef KSCHED_TYPE_CHECK_H
#define KSCHED_TYPE_CHECK_H

#include <stdint.h>

#include "ksched/base/error.h"

struct ks_yaml_node;

/*
 * ks_type_check - check @doc against schema node @root (ks_api_schema_root()) of kind @kind
 * at API version @version ("v1" for apps/v1). Returns 0, or -EINVAL with @err set to the
 * error the API server would give, at the offending value's line in @file, its field path
 * ("metadata.labels.tier", after @prefix); -ENOMEM (error set). Nothing below a free-form
 * node or a List's items (checked as objects of their own) is looked at. Any thread; the
 * recursion is bounded by the YAML layer's nesting limit.
 */
int ks_type_check(const struct ks_yaml_node *doc, int64_t root, const char *kind, const char *version,
                  const char *file, const char *prefix, struct ks_error *err);

#endif
