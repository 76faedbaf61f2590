/* bench_json_jsonc.c - the json-c candidate of bench_json_libs.c. */
#include "bench_json_libs.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

static struct ks_yaml_node *from_jsonc(struct ks_arena *a, struct json_object *o)
{
    switch (json_object_get_type(o)) {
    case json_type_object: {
        struct ks_yaml_node *n = tree_node(a, KS_YAML_MAP);
        n->n = (uint32_t)json_object_object_length(o);
        n->pairs = ks_arena_calloc(a, n->n ? n->n : 1, sizeof(*n->pairs));
        uint32_t i = 0;
        json_object_object_foreach(o, key, val)
        {
            n->pairs[i].key = tree_scalar(a, key, strlen(key), 0);
            n->pairs[i++].value = from_jsonc(a, val);
        }
        return n;
    }
    case json_type_array: {
        struct ks_yaml_node *n = tree_node(a, KS_YAML_SEQ);
        n->n = (uint32_t)json_object_array_length(o);
        n->items = ks_arena_calloc(a, n->n ? n->n : 1, sizeof(*n->items));
        for (uint32_t i = 0; i < n->n; i++)
            n->items[i] = from_jsonc(a, json_object_array_get_idx(o, i));
        return n;
    }
    case json_type_string:
        return tree_scalar(a, json_object_get_string(o), (size_t)json_object_get_string_len(o), 0);
    case json_type_null:
        return tree_scalar(a, "null", 4, 1);
    default: { /* numbers and booleans: json-c keeps a number's text for doubles only */
        const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
        return tree_scalar(a, s, strlen(s), 1);
    }
    }
}

double ks_bench_run_jsonc(const char *p, size_t len, int decode)
{
    double t0 = ks_bench_now_ms();
    struct json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
    struct json_object *o = json_tokener_parse_ex(tok, p, (int)len);
    if (!o)
        abort();
    struct ks_arena a = KS_ARENA_INIT;
    struct ks_yaml_node *root = from_jsonc(&a, o);
    json_object_put(o);
    if (decode)
        ks_bench_decode_items(root);
    ks_arena_destroy(&a);
    json_tokener_free(tok);
    return ks_bench_now_ms() - t0;
}
