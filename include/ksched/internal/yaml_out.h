/*
 * yaml_out.h - a small block-style YAML writer.
 *
 * Writes maps, lists and scalars in the layout sigs.k8s.io/yaml produces (two-space
 * maps, list items at their key's indentation), quoting a scalar only when a plain one
 * would read back as something else (a number, a boolean, null, a flow indicator...).
 * A collection's header line is written lazily, so a collection that ends up empty is
 * printed as `key: {}` or `key: []`.
 *
 * The document is one implicit top-level map: write keys right after ks_yaml_out_init().
 * Every ks_yaml_key_map()/ks_yaml_key_seq()/ks_yaml_item_map() is closed by one
 * ks_yaml_end(). Write errors are sticky and reported by ks_yaml_out_finish().
 *
 * Context: one thread per writer; writes to a caller-owned FILE; allocates nothing.
 */
#ifndef KSCHED_YAML_OUT_H
#define KSCHED_YAML_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define KS_YAML_OUT_DEPTH 32

struct ks_yaml_frame {
    uint8_t seq;     /* a list (else a map) */
    uint8_t item;    /* a map opened as a list item: its first line starts with "- " */
    uint8_t started; /* the header line (key or "- ") has been written */
    uint8_t nlines;  /* lines written inside, saturating */
    int indent;      /* column of this frame's keys, or of its "- " markers */
    const char *key; /* header key, NULL for items and the root */
};

struct ks_yaml_out {
    FILE *fp;
    int depth; /* index of the innermost open frame; 0 is the root map */
    int error; /* 0, or the first failure (-EIO, -EINVAL for misuse) */
    struct ks_yaml_frame stack[KS_YAML_OUT_DEPTH];
};

/* ks_yaml_out_init - start a document (an open top-level map) written to @fp. */
void ks_yaml_out_init(struct ks_yaml_out *o, FILE *fp);

/* ks_yaml_out_finish - check that every collection was closed and nothing failed; 0 or -errno. */
int ks_yaml_out_finish(struct ks_yaml_out *o);

/* Map members: a key with a scalar value, or a key opening a nested collection. */
void ks_yaml_key_str(struct ks_yaml_out *o, const char *key, const char *value);
void ks_yaml_key_int(struct ks_yaml_out *o, const char *key, int64_t value);
void ks_yaml_key_bool(struct ks_yaml_out *o, const char *key, bool value);
void ks_yaml_key_float(struct ks_yaml_out *o, const char *key, double value);
void ks_yaml_key_map(struct ks_yaml_out *o, const char *key);
void ks_yaml_key_seq(struct ks_yaml_out *o, const char *key);

/* List items: a scalar, or a map item. */
void ks_yaml_item_str(struct ks_yaml_out *o, const char *value);
void ks_yaml_item_int(struct ks_yaml_out *o, int64_t value);
void ks_yaml_item_map(struct ks_yaml_out *o);

/* ks_yaml_end - close the innermost collection. */
void ks_yaml_end(struct ks_yaml_out *o);

/* ks_yaml_needs_quotes - a plain scalar @s would not read back as the same string. */
bool ks_yaml_needs_quotes(const char *s);

#endif
