/*
 * yaml_tree.h - YAML documents as a small read-only tree with line numbers.
 *
 * libyaml's event parser builds one tree per document of a stream; decoders (manifests,
 * KubeSchedulerConfiguration) walk it and report errors at a node's line. Aliases share
 * the anchored node; a document whose aliases would produce more nodes than its text holds
 * (beyond a floor of 4 million) is rejected (no "billion laughs"), a document without
 * aliases never is. Everything lives in the stream's arena.
 */
#ifndef KSCHED_YAML_TREE_H
#define KSCHED_YAML_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ksched/base/arena.h"
#include "ksched/base/error.h"

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
    uint32_t ndup;   /* map parsed with KS_YAML_KEEP_DUPLICATES: repeated keys, in pairs[n .. n+ndup) */
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
 * Returns 0 and *out, or -EINVAL with @err set (file and line of the syntax error; for a
 * document whose aliases expand too far, "document too large once aliases are expanded" at
 * the alias that took it past the floor), or -ENOMEM. The caller frees *out with
 * ks_yaml_stream_destroy().
 */
int ks_yaml_parse(const char *file, const char *buf, size_t len, struct ks_yaml_stream **out,
                  struct ks_error *err);

/*
 * ks_yaml_parse_flags - ks_yaml_parse() with KS_YAML_* @flags. KS_YAML_KEEP_DUPLICATES: a
 * key repeated in a map is no error; the later value wins (pairs[0 .. n) hold each key once,
 * at its first place, with its last value) and each repetition (its key, the value it
 * replaced) follows in pairs[n .. n+ndup), for field validation to report.
 */
enum { KS_YAML_KEEP_DUPLICATES = 1u };
int ks_yaml_parse_flags(const char *file, const char *buf, size_t len, unsigned flags,
                        struct ks_yaml_stream **out, struct ks_error *err);

/*
 * ks__yaml_parse_floor - ks_yaml_parse() with @alias_floor in place of the 4 million nodes
 * any document's aliases may produce (tests probe the bound with small documents).
 */
int ks__yaml_parse_floor(const char *file, const char *buf, size_t len, uint64_t alias_floor,
                         struct ks_yaml_stream **out, struct ks_error *err);

/*
 * ks_yaml_parse_file - read @path and parse it (errors name @path). @path "-" reads
 * standard input to its end (kubectl's convention), named ks_yaml_file_name("-") in errors.
 */
int ks_yaml_parse_file(const char *path, struct ks_yaml_stream **out, struct ks_error *err);

/* ks_yaml_parse_file_flags - ks_yaml_parse_file() with ks_yaml_parse_flags()'s @flags. */
int ks_yaml_parse_file_flags(const char *path, unsigned flags, struct ks_yaml_stream **out,
                             struct ks_error *err);

/*
 * struct ks_yaml_sink - what ks_yaml_parse_each() hands over, in input order; a callback
 * returning a negative errno (with the error set) stops the parse, which returns it.
 * @item: an element of a document's top-level `items` sequence (the value of key "items" in
 *   a root map: a List's object), complete, @index its place in the sequence. Items are
 *   handed over from the first one while the document has no anchor; an element holding one,
 *   and every later element, stays in the document. The nodes are reused after the call.
 * @doc: a complete document (NULL or a null scalar when empty) whose `items` sequence lacks
 *   the @nitems items already handed over. The nodes are freed after the call.
 * Both are called on the parsing thread, one at a time.
 */
struct ks_yaml_sink {
    int (*item)(void *ctx, const struct ks_yaml_node *item, uint32_t index);
    int (*doc)(void *ctx, const struct ks_yaml_node *doc, uint32_t nitems);
    void *ctx;
};

/*
 * ks_yaml_parse_each - ks_yaml_parse_flags() that hands each document, and each object of a
 * List as soon as it is parsed, to @sink instead of keeping them: memory holds one document
 * (of a List, one object) at a time. Returns 0, a callback's value, or -EINVAL with @err set
 * (as ks_yaml_parse) / -ENOMEM; what was handed over before a failure stays handed over.
 */
int ks_yaml_parse_each(const char *file, const char *buf, size_t len, unsigned flags,
                       const struct ks_yaml_sink *sink, struct ks_error *err);

/* ks_yaml_parse_file_each - ks_yaml_parse_each() of the file @path, as ks_yaml_parse_file(). */
int ks_yaml_parse_file_each(const char *path, unsigned flags, const struct ks_yaml_sink *sink,
                            struct ks_error *err);

/* ks_yaml_file_name - the name errors give @path: "STDIN" for "-" (as kubectl), else @path. */
const char *ks_yaml_file_name(const char *path);

/* ks_yaml_stream_destroy - free the stream and every node. Accepts NULL. */
void ks_yaml_stream_destroy(struct ks_yaml_stream *s);

/* ks_yaml_get - value of @key in map @map, NULL when @map is not a map or lacks @key. */
const struct ks_yaml_node *ks_yaml_get(const struct ks_yaml_node *map, const char *key);

/* ks_yaml_is_null - true for a missing node or a plain null scalar ("", "~", "null", "Null", "NULL"). */
int ks_yaml_is_null(const struct ks_yaml_node *n);

/* ks_yaml_kind_name - "a string", "a list", "a map": for messages. */
const char *ks_yaml_kind_name(const struct ks_yaml_node *n);

/*
 * A node as the JSON value kubectl sends for it (api/yaml_json.c): YAML converted as
 * sigs.k8s.io/yaml converts it, go-yaml v2's YAML 1.1 typing of unquoted scalars
 * (yes/on/off are booleans, 0x10 and 010 integers, 1e3 a float), numbers then written by
 * Go's JSON encoder.
 */
enum ks_json_type {
    KS_JSON_NULL,
    KS_JSON_BOOL,
    KS_JSON_NUMBER,
    KS_JSON_STRING,
    KS_JSON_ARRAY,
    KS_JSON_OBJECT,
};

enum ks_json_number_form {
    KS_JSON_INT,   /* i: what go-yaml decodes as int (int64 range) */
    KS_JSON_UINT,  /* u: an integer past INT64_MAX */
    KS_JSON_FLOAT, /* f: a float (NaN and the infinities included) */
};

struct ks_json_number {
    enum ks_json_number_form form;
    int64_t i;
    uint64_t u;
    double f;
};

/*
 * ks_yaml_surely_string - whether scalar @n is a JSON string on its first byte alone: quoted,
 * or plain and starting with none of the bytes that begin go-yaml v2's nulls, booleans and
 * numbers. The check ks_yaml_json_type() makes first; hot walks make it inline.
 */
static inline bool ks_yaml_surely_string(const struct ks_yaml_node *n)
{
    if (n->kind != KS_YAML_SCALAR)
        return false;
    if (!n->plain)
        return true;
    switch (n->str[0]) {
    case '\0':
    case '~':
    case 'y':
    case 'Y':
    case 'n':
    case 'N':
    case 't':
    case 'T':
    case 'f':
    case 'F':
    case 'o':
    case 'O':
    case '.':
    case '+':
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9':
        return false;
    default:
        return true;
    }
}

/*
 * ks_yaml_json_type - what @n (NULL: a missing field, null) is in JSON; for a boolean *@truth
 * (@truth may be NULL), for a number *@num. Any thread; allocates nothing.
 */
enum ks_json_type ks_yaml_json_type(const struct ks_yaml_node *n, bool *truth, struct ks_json_number *num);

/*
 * ks_json_number_text - @num as encoding/json writes it ("80", "1000" for 1e3, "0.5",
 * "1e+21", "1e-7") into @buf of @len bytes: 0, -EDOM for NaN and the infinities (which JSON
 * cannot hold: "json: unsupported value"), -ENOSPC when @buf is too small.
 */
int ks_json_number_text(const struct ks_json_number *num, char *buf, size_t len);

/*
 * ks_json_number_int - whether @num's JSON text is an integer literal that fits int64 (what
 * encoding/json's ParseInt into an int field takes), and its value in *@out. Pure.
 */
bool ks_json_number_int(const struct ks_json_number *num, int64_t *out);

/*
 * ks_yaml_json_key - the JSON object key a map key becomes: an unquoted integer key in
 * decimal ("0x1" -> "1"), a boolean one "true" or "false", any other key its own text;
 * @buf (of @len bytes, 24 are enough) may hold the result.
 */
const char *ks_yaml_json_key(const struct ks_yaml_node *key, char *buf, size_t len);

#endif
