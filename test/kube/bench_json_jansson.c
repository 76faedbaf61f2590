/* bench_json_jansson.c - the jansson candidate of bench_json_libs.c. */
#include "bench_json_libs.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

static struct ks_yaml_node *from_jansson(struct ks_arena *a, json_t *o)
{
    char num[64];
    switch (json_typeof(o)) {
    case JSON_OBJECT: {
        struct ks_yaml_node *n = tree_node(a, KS_YAML_MAP);
        n->n = (uint32_t)json_object_size(o);
        n->pairs = ks_arena_calloc(a, n->n ? n->n : 1, sizeof(*n->pairs));
        const char *key;
        json_t *val;
        uint32_t i = 0;
        json_object_foreach(o, key, val)
        {
            n->pairs[i].key = tree_scalar(a, key, strlen(key), 0);
            n->pairs[i++].value = from_jansson(a, val);
        }
        return n;
    }
    case JSON_ARRAY: {
        struct ks_yaml_node *n = tree_node(a, KS_YAML_SEQ);
        n->n = (uint32_t)json_array_size(o);
        n->items = ks_arena_calloc(a, n->n ? n->n : 1, sizeof(*n->items));
        for (uint32_t i = 0; i < n->n; i++)
            n->items[i] = from_jansson(a, json_array_get(o, i));
        return n;
    }
    case JSON_STRING:
        return tree_scalar(a, json_string_value(o), json_string_length(o), 0);
    case JSON_INTEGER:
        snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(o));
        return tree_scalar(a, num, strlen(num), 1);
    case JSON_REAL:
        snprintf(num, sizeof(num), "%.17g", json_real_value(o));
        return tree_scalar(a, num, strlen(num), 1);
    case JSON_TRUE:
        return tree_scalar(a, "true", 4, 1);
    case JSON_FALSE:
        return tree_scalar(a, "false", 5, 1);
    default:
        return tree_scalar(a, "null", 4, 1);
    }
}

double ks_bench_run_jansson(const char *p, size_t len, int decode)
{
    double t0 = ks_bench_now_ms();
    json_error_t e;
    json_t *o = json_loadb(p, len, 0, &e);
    if (!o)
        abort();
    struct ks_arena a = KS_ARENA_INIT;
    struct ks_yaml_node *root = from_jansson(&a, o);
    json_decref(o);
    if (decode)
        ks_bench_decode_items(root);
    ks_arena_destroy(&a);
    return ks_bench_now_ms() - t0;
}
