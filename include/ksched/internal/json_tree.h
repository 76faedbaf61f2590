/*
 * json_tree.h - JSON text as the tree the manifest decoders read (ksched/yaml_tree.h).
 *
 * API objects from a kube-apiserver are JSON. Parsing them into a ks_yaml_stream with one
 * document lets the same decoders (ksched/internal/decode.h) build Pods, Nodes and the rest from
 * either format. Strings are quoted scalars (plain = 0); numbers, true, false and null
 * are plain scalars with their literal text, as a YAML parser would give them. `line` is
 * the 1-based line of the value in the text.
 */
#ifndef KSCHED_JSON_TREE_H
#define KSCHED_JSON_TREE_H

#include <stddef.h>

#include "ksched/base/error.h"
#include "ksched/yaml_tree.h"

/*
 * ks_json_parse - parse @len bytes of @buf (named @file in errors) as one JSON value into a
 * new stream with ndocs = 1. Returns 0 and *out, -EINVAL with @err set (file, line and what
 * was wrong: truncated text, a bad token, nesting deeper than 512), or -ENOMEM. Free *out with
 * ks_yaml_stream_destroy().
 */
int ks_json_parse(const char *file, const char *buf, size_t len, struct ks_yaml_stream **out,
                  struct ks_error *err);

#endif
