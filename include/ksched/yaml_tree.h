/*
 * yaml_tree.h - YAML documents as a small read-only tree with line numbers.
 *
 * libyaml's event parser builds one tree per document of a stream; decoders (manifests,
 * KubeSchedulerConfiguration) walk it and report errors at a node's line. Aliases share
 * the anchored node; a stream whose aliases would expand past a fixed budget is rejected
 * (no "billion laughs"). Everything lives in the stream's arena.
 */
#ifndef KSCHED_YAML_TREE_H
#define KSCHED_YAML_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "ksched/arena.h"
#include "ksched/error.h"

enum ks_yaml_kind {
    KS_YAML_SCALAR,
    KS_YAML_SEQ,
    KS_YAML_MAP,
};

struct ks_yaml_pair;

struct ks_yaml_node {
    enum ks_yaml_kind kind;
    int line;        /* 1-based */
    int plain;       /* scalar written without quotes (so "null", "~", "" may mean null) */
    const char *str; /* scalar text, NUL-terminated */
    size_t len;
    uint32_t n; /* items in a sequence or pairs in a map */
    struct ks_yaml_node **items;
    struct ks_yaml_pair *pairs;
};

struct ks_yaml_pair {
    struct ks_yaml_node *key;
    struct ks_yaml_node *value;
};

struct ks_yaml_stream {
    struct ks_arena arena;
    const char *file; /* name used in errors */
    uint32_t ndocs;
    struct ks_yaml_node **docs; /* NULL entries for empty documents */
};

/*
 * ks_yaml_parse - parse @len bytes of @buf (named @file in errors) into a new stream.
 * Returns 0 and *out, or -EINVAL with @err set (file and line of the syntax error), or
 * -ENOMEM. The caller frees *out with ks_yaml_stream_destroy().
 */
int ks_yaml_parse(const char *file, const char *buf, size_t len, struct ks_yaml_stream **out,
                  struct ks_error *err);

/* ks_yaml_parse_file - read @path and parse it (errors name @path). */
int ks_yaml_parse_file(const char *path, struct ks_yaml_stream **out, struct ks_error *err);

/* ks_yaml_stream_destroy - free the stream and every node. Accepts NULL. */
void ks_yaml_stream_destroy(struct ks_yaml_stream *s);

/* ks_yaml_get - value of @key in map @map, NULL when @map is not a map or lacks @key. */
const struct ks_yaml_node *ks_yaml_get(const struct ks_yaml_node *map, const char *key);

/* ks_yaml_is_null - true for a missing node or a plain null scalar ("", "~", "null", "Null", "NULL"). */
int ks_yaml_is_null(const struct ks_yaml_node *n);

/* ks_yaml_kind_name - "a string", "a list", "a map": for messages. */
const char *ks_yaml_kind_name(const struct ks_yaml_node *n);

#endif
