/*
 * test_json_tree.c - JSON text parses into the tree the manifest decoders read: strings
 * unescaped, numbers and literals as plain scalars with their text, lines kept, errors
 * named by line, and objects decoded from JSON equal to the same objects from YAML.
 */
#include <criterion/criterion.h>

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/decode.h"
#include "ksched/internal/json_tree.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct ks_yaml_stream *parse_ok(const char *text)
{
    struct ks_yaml_stream *s = NULL;
    struct ks_error err = {0};
    int rc = ks_json_parse("t.json", text, strlen(text), &s, &err);
    cr_assert_eq(rc, 0, "parse failed: %s:%d: %s", err.file, err.line, err.msg);
    cr_assert_eq(s->ndocs, 1);
    return s;
}

static struct ks_error parse_err(const char *text, size_t len)
{
    struct ks_yaml_stream *s = NULL;
    struct ks_error err = {0};
    int rc = ks_json_parse("bad.json", text, len, &s, &err);
    cr_assert_eq(rc, -EINVAL, "expected -EINVAL for <%.*s>, got %d", (int)len, text, rc);
    cr_assert_null(s);
    cr_assert_str_eq(err.file, "bad.json");
    return err;
}

Test(json_tree, maps_lists_and_lines)
{
    struct ks_yaml_stream *s = parse_ok("{\n"
                                        "  \"a\": {\"b\": [1, \"two\", {\"c\": null}]},\n"
                                        "  \"empty\": {},\n"
                                        "  \"none\": [],\n"
                                        "  \"last\": \"x\"\n"
                                        "}\n");
    const struct ks_yaml_node *root = s->docs[0];
    cr_assert_eq(root->kind, KS_YAML_MAP);
    cr_assert_eq(root->n, 4);
    cr_assert_eq(root->line, 1);
    cr_assert_str_eq(root->pairs[0].key->str, "a");
    cr_assert_eq(root->pairs[0].key->line, 2);
    const struct ks_yaml_node *b = ks_yaml_get(ks_yaml_get(root, "a"), "b");
    cr_assert_eq(b->kind, KS_YAML_SEQ);
    cr_assert_eq(b->n, 3);
    cr_assert_str_eq(b->items[1]->str, "two");
    cr_assert(ks_yaml_is_null(ks_yaml_get(b->items[2], "c")));
    cr_assert_eq(ks_yaml_get(root, "empty")->kind, KS_YAML_MAP);
    cr_assert_eq(ks_yaml_get(root, "empty")->n, 0);
    cr_assert_eq(ks_yaml_get(root, "none")->kind, KS_YAML_SEQ);
    cr_assert_eq(ks_yaml_get(root, "none")->n, 0);
    cr_assert_eq(ks_yaml_get(root, "last")->line, 5);
    ks_yaml_stream_destroy(s);
}

Test(json_tree, top_level_scalars)
{
    struct ks_yaml_stream *s = parse_ok("  42  ");
    cr_assert_eq(s->docs[0]->kind, KS_YAML_SCALAR);
    cr_assert_str_eq(s->docs[0]->str, "42");
    cr_assert_eq(s->docs[0]->plain, 1);
    ks_yaml_stream_destroy(s);
    s = parse_ok("\"str\"");
    cr_assert_str_eq(s->docs[0]->str, "str");
    cr_assert_eq(s->docs[0]->plain, 0);
    ks_yaml_stream_destroy(s);
}

Test(json_tree, string_escapes_become_utf8)
{
    struct ks_yaml_stream *s = parse_ok("{\"s\": \"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t e\\u00e9 z\\u4e2d "
                                        "smile\\ud83d\\ude00 nul\\u0000end\"}");
    const struct ks_yaml_node *v = ks_yaml_get(s->docs[0], "s");
    static const char want[] = "q\" b\\ s/ \b\f\n\r\t e\xc3\xa9 z\xe4\xb8\xad smile\xf0\x9f\x98\x80 nul\0end";
    cr_assert_eq(v->len, sizeof(want) - 1, "len %zu", v->len);
    cr_assert_eq(memcmp(v->str, want, v->len), 0);
    cr_assert_eq(v->str[v->len], '\0');
    cr_assert_eq(v->plain, 0);
    ks_yaml_stream_destroy(s);
}

Test(json_tree, escaped_keys_are_unescaped_too)
{
    struct ks_yaml_stream *s = parse_ok("{\"a\\u002fb\": 1}");
    cr_assert_not_null(ks_yaml_get(s->docs[0], "a/b"));
    ks_yaml_stream_destroy(s);
}

Test(json_tree, numbers_and_literals_keep_their_text_as_plain_scalars)
{
    struct ks_yaml_stream *s =
        parse_ok("[0, -12, 3.25, 1e3, -2.5E-7, 123456789012345678901234567890, true, false, null, \"7\"]");
    static const char *const want[] = {
        "0", "-12", "3.25", "1e3", "-2.5E-7", "123456789012345678901234567890", "true", "false", "null", "7"};
    const struct ks_yaml_node *seq = s->docs[0];
    cr_assert_eq(seq->n, 10);
    for (int i = 0; i < 10; i++) {
        cr_assert_str_eq(seq->items[i]->str, want[i]);
        cr_assert_eq(seq->items[i]->plain, i < 9, "item %d plain %d", i, seq->items[i]->plain);
    }
    cr_assert(ks_yaml_is_null(seq->items[8]));
    ks_yaml_stream_destroy(s);
}

Test(json_tree, errors_name_the_line)
{
    /* truncated in the middle of a list, on line 3 */
    const char *t = "{\n \"a\": [1,\n 2,";
    struct ks_error e = parse_err(t, strlen(t));
    cr_assert_eq(e.line, 3, "line %d: %s", e.line, e.msg);
    cr_assert(strstr(e.msg, "invalid JSON"), "%s", e.msg);

    /* truncated text ending in a newline still names the last line of text */
    t = "{\"a\":\n\"b\"\n";
    e = parse_err(t, strlen(t));
    cr_assert_eq(e.line, 2, "line %d: %s", e.line, e.msg);

    /* a bad token */
    t = "{\"a\": 1,\n\"b\": tru}\n";
    e = parse_err(t, strlen(t));
    cr_assert_eq(e.line, 2, "line %d: %s", e.line, e.msg);

    /* a truncated string */
    t = "[\"abc";
    e = parse_err(t, strlen(t));
    cr_assert_eq(e.line, 1);

    /* nothing at all, and only whitespace */
    e = parse_err("", 0);
    cr_assert_eq(e.line, 1);
    e = parse_err(" \n ", 3);
    cr_assert_eq(e.line, 2, "line %d", e.line);

    /* trailing garbage, and a second value */
    t = "{}\n{}";
    e = parse_err(t, strlen(t));
    cr_assert_eq(e.line, 2, "line %d: %s", e.line, e.msg);

    /* invalid UTF-8 in a string */
    t = "[\"\xff\"]";
    parse_err(t, strlen(t));

    /* a raw control character in a string */
    t = "[\"a\tb\"]";
    parse_err(t, strlen(t));

    /* a duplicate key */
    t = "{\"a\": 1,\n \"a\": 2}";
    e = parse_err(t, strlen(t));
    cr_assert_eq(e.line, 2);
    cr_assert(strstr(e.msg, "duplicate key \"a\""), "%s", e.msg);
}

static char *nested(int depth)
{
    char *t = malloc((size_t)depth * 2 + 1);
    for (int i = 0; i < depth; i++) {
        t[i] = '[';
        t[depth * 2 - 1 - i] = ']';
    }
    t[depth * 2] = '\0';
    return t;
}

Test(json_tree, nesting_is_limited_to_512)
{
    char *ok = nested(512), *deep = nested(513);
    struct ks_yaml_stream *s = parse_ok(ok);
    ks_yaml_stream_destroy(s);
    struct ks_error e = parse_err(deep, strlen(deep));
    cr_assert(strstr(e.msg, "nesting deeper than 512"), "%s", e.msg);
    cr_assert_eq(e.line, 1);
    free(ok);
    free(deep);
}

/* ---- JSON and YAML give the same objects ---- */

struct text {
    char *p;
    size_t len;
    FILE *f;
};

static int json_literal(const struct ks_yaml_node *n)
{
    if (!n->plain)
        return 0;
    if (!strcmp(n->str, "true") || !strcmp(n->str, "false") || !strcmp(n->str, "null"))
        return 1;
    char *end;
    if (n->len == 0)
        return 0;
    strtod(n->str, &end);
    return *end == '\0' && (n->str[0] == '-' || (n->str[0] >= '0' && n->str[0] <= '9'));
}

/* A YAML tree as pretty-printed JSON: one member or item per line. */
static void to_json(FILE *f, const struct ks_yaml_node *n, int indent)
{
    if (n->kind == KS_YAML_SCALAR) {
        if (json_literal(n)) {
            fputs(n->str, f);
            return;
        }
        fputc('"', f);
        for (size_t i = 0; i < n->len; i++) {
            unsigned char c = (unsigned char)n->str[i];
            if (c == '"' || c == '\\')
                fprintf(f, "\\%c", c);
            else if (c < 0x20)
                fprintf(f, "\\u%04x", c);
            else
                fputc(c, f);
        }
        fputc('"', f);
        return;
    }
    int map = n->kind == KS_YAML_MAP;
    fputc(map ? '{' : '[', f);
    for (uint32_t i = 0; i < n->n; i++) {
        fprintf(f, "%s\n%*s", i ? "," : "", indent + 2, "");
        if (map) {
            to_json(f, n->pairs[i].key, indent + 2);
            fputs(": ", f);
        }
        to_json(f, map ? n->pairs[i].value : n->items[i], indent + 2);
    }
    if (n->n)
        fprintf(f, "\n%*s", indent, "");
    fputc(map ? '}' : ']', f);
}

static void same_tree(const struct ks_yaml_node *y, const struct ks_yaml_node *j, const char *path)
{
    cr_assert_eq(y->kind, j->kind, "%s: kind", path);
    cr_assert_eq(y->n, j->n, "%s: %u vs %u children", path, y->n, j->n);
    if (y->kind == KS_YAML_SCALAR) {
        cr_assert_eq(y->len, j->len, "%s: len", path);
        cr_assert_eq(memcmp(y->str, j->str, y->len), 0, "%s: \"%s\" vs \"%s\"", path, y->str, j->str);
        if (j->plain)
            cr_assert(y->plain, "%s: %s plain only in JSON", path, y->str);
        return;
    }
    for (uint32_t i = 0; i < y->n; i++) {
        char sub[512];
        if (y->kind == KS_YAML_MAP) {
            snprintf(sub, sizeof(sub), "%s.%s", path, y->pairs[i].key->str);
            same_tree(y->pairs[i].key, j->pairs[i].key, sub);
            same_tree(y->pairs[i].value, j->pairs[i].value, sub);
        } else {
            snprintf(sub, sizeof(sub), "%s[%u]", path, i);
            same_tree(y->items[i], j->items[i], sub);
        }
    }
}

static void same_resources(const struct ks_resource_list *a, const struct ks_resource_list *b)
{
    cr_assert_eq(a->n, b->n);
    if (a->n)
        cr_assert_eq(memcmp(a->items, b->items, a->n * sizeof(*a->items)), 0);
}

static void same_meta(const struct ks_object_meta *a, const struct ks_object_meta *b)
{
    cr_assert_str_eq(a->name, b->name);
    cr_assert_eq(a->namespace_id, b->namespace_id);
    cr_assert_eq(!a->uid, !b->uid);
    if (a->uid)
        cr_assert_str_eq(a->uid, b->uid);
    cr_assert_eq(a->labels.n, b->labels.n);
    cr_assert_eq(a->annotations.n, b->annotations.n);
    cr_assert_eq(a->nowners, b->nowners);
    cr_assert_eq(a->creation_time, b->creation_time);
}

static void same_pod(const struct ks_yaml_node *y, const struct ks_yaml_node *j)
{
    struct ks_pod *a, *b;
    struct ks_error ea = {0}, eb = {0};
    cr_assert_eq(ks_decode_pod("y", y, &a, &ea), 0, "%s", ea.msg);
    cr_assert_eq(ks_decode_pod("j", j, &b, &eb), 0, "%s", eb.msg);
    same_meta(&a->meta, &b->meta);
    cr_assert_eq(a->node_name, b->node_name);
    cr_assert_eq(a->scheduler_name, b->scheduler_name);
    cr_assert_eq(a->has_priority, b->has_priority);
    cr_assert_eq(a->priority, b->priority);
    cr_assert_eq(a->ncontainers, b->ncontainers);
    for (uint32_t i = 0; i < a->ncontainers; i++) {
        cr_assert_str_eq(a->containers[i].name, b->containers[i].name);
        cr_assert_eq(a->containers[i].image, b->containers[i].image);
        same_resources(&a->containers[i].requests, &b->containers[i].requests);
        same_resources(&a->containers[i].limits, &b->containers[i].limits);
        cr_assert_eq(a->containers[i].nports, b->containers[i].nports);
    }
    cr_assert_eq(a->ninit_containers, b->ninit_containers);
    cr_assert_eq(a->ntolerations, b->ntolerations);
    cr_assert_eq(a->node_selector.n, b->node_selector.n);
    ks_pod_destroy(a);
    ks_pod_destroy(b);
}

static void same_node(const struct ks_yaml_node *y, const struct ks_yaml_node *j)
{
    struct ks_node *a, *b;
    struct ks_error ea = {0}, eb = {0};
    cr_assert_eq(ks_decode_node("y", y, &a, &ea), 0, "%s", ea.msg);
    cr_assert_eq(ks_decode_node("j", j, &b, &eb), 0, "%s", eb.msg);
    same_meta(&a->meta, &b->meta);
    cr_assert_eq(a->unschedulable, b->unschedulable);
    cr_assert_eq(a->ntaints, b->ntaints);
    same_resources(&a->capacity, &b->capacity);
    same_resources(&a->allocatable, &b->allocatable);
    cr_assert_eq(a->nimages, b->nimages);
    cr_assert_eq(a->nconditions, b->nconditions);
    ks_node_destroy(a);
    ks_node_destroy(b);
}

static void same_objects(const struct ks_yaml_node *y, const struct ks_yaml_node *j, int *pods, int *nodes)
{
    const struct ks_yaml_node *kind = ks_yaml_get(y, "kind");
    if (!kind)
        return;
    if (!strcmp(kind->str, "List")) {
        const struct ks_yaml_node *yi = ks_yaml_get(y, "items"), *ji = ks_yaml_get(j, "items");
        for (uint32_t i = 0; i < yi->n; i++)
            same_objects(yi->items[i], ji->items[i], pods, nodes);
    } else if (!strcmp(kind->str, "Pod")) {
        same_pod(y, j);
        (*pods)++;
    } else if (!strcmp(kind->str, "Node")) {
        same_node(y, j);
        (*nodes)++;
    }
}

Test(json_tree, objects_from_json_equal_objects_from_yaml)
{
    struct ks_yaml_stream *ys;
    struct ks_error err = {0};
    int pods = 0, nodes = 0;
    cr_assert_eq(ks_api_init(), 0);
    cr_assert_eq(ks_yaml_parse_file(KS_TEST_DATA_DIR "/good/all-kinds.yaml", &ys, &err), 0, "%s", err.msg);
    for (uint32_t d = 0; d < ys->ndocs; d++) {
        struct text t = {0};
        t.f = open_memstream(&t.p, &t.len);
        to_json(t.f, ys->docs[d], 0);
        fputc('\n', t.f);
        fclose(t.f);
        struct ks_yaml_stream *js = parse_ok(t.p);
        same_tree(ys->docs[d], js->docs[0], "doc");
        same_objects(ys->docs[d], js->docs[0], &pods, &nodes);
        ks_yaml_stream_destroy(js);
        free(t.p);
    }
    cr_assert_geq(pods, 2);
    cr_assert_geq(nodes, 2);
    ks_yaml_stream_destroy(ys);
}

Test(json_tree, decoder_errors_carry_json_lines)
{
    struct ks_yaml_stream *s = parse_ok("{\n"
                                        "  \"metadata\": {\"name\": \"p\"},\n"
                                        "  \"spec\": {\n"
                                        "    \"containers\": [{\"name\": \"c\", \"resources\": {\n"
                                        "      \"requests\": {\"cpu\": \"lots\"}}}]\n"
                                        "  }\n"
                                        "}\n");
    struct ks_pod *pod;
    struct ks_error err = {0};
    cr_assert_eq(ks_api_init(), 0);
    cr_assert_eq(ks_decode_pod("api", s->docs[0], &pod, &err), -EINVAL);
    cr_assert_null(pod);
    cr_assert_eq(err.line, 5, "line %d: %s", err.line, err.msg);
    cr_assert_str_eq(err.field, "spec.containers[0].resources.requests.cpu");
    ks_yaml_stream_destroy(s);
}
