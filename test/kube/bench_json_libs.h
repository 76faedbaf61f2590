/* bench_json_libs.h - shared parts of the JSON library comparison (see bench_json_libs.c). */
#ifndef KS_BENCH_JSON_LIBS_H
#define KS_BENCH_JSON_LIBS_H

#include "ksched/yaml_tree.h"

#include <stdlib.h>

double ks_bench_now_ms(void);
/* ks_bench_decode_items - ks_decode_node() every item of a NodeList tree; exits on failure. */
int ks_bench_decode_items(const struct ks_yaml_node *root);
/*
 * Text to tree (and decode when @decode), in ms. json-c and jansson export clashing
 * symbols (json_object_iter_next), so each binary links one of them: weak, NULL when absent.
 */
double ks_bench_run_jsonc(const char *p, size_t len, int decode) __attribute__((weak));
double ks_bench_run_jansson(const char *p, size_t len, int decode) __attribute__((weak));

/* ---- DOM to tree: the work json-c and jansson add on top of their own parse ---- */

static inline struct ks_yaml_node *tree_node(struct ks_arena *a, enum ks_yaml_kind kind)
{
    struct ks_yaml_node *n = ks_arena_alloc(a, sizeof(*n));
    if (!n)
        abort();
    n->kind = kind;
    n->line = 1;
    return n;
}

static inline struct ks_yaml_node *tree_scalar(struct ks_arena *a, const char *s, size_t len, int plain)
{
    struct ks_yaml_node *n = tree_node(a, KS_YAML_SCALAR);
    n->str = ks_arena_strndup(a, s, len);
    n->len = len;
    n->plain = plain;
    return n;
}

#endif
