/*
 * test_yaml_tree.c - the alias bound (relative to the document's own size, above a floor)
 * and ks_yaml_parse_each(): a List's items handed over one at a time, documents in order,
 * anchors keeping items in their document.
 */
#include <criterion/criterion.h>

#include "ksched/yaml_tree.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(yaml_tree);

/* "k: &a [x × @width]" then @naliases "- *a" lines under "l:", plus @filler plain scalars under "f:". */
static char *alias_doc(int width, int naliases, int filler)
{
    size_t cap = 64 + (size_t)width * 3 + (size_t)naliases * 8 + (size_t)filler * 5;
    char *s = malloc(cap), *p = s;
    p += sprintf(p, "k: &a [");
    for (int i = 0; i < width; i++)
        p += sprintf(p, "%sx", i ? "," : "");
    p += sprintf(p, "]\nl:\n");
    for (int i = 0; i < naliases; i++)
        p += sprintf(p, "- *a\n");
    p += sprintf(p, "f:\n");
    for (int i = 0; i < filler; i++)
        p += sprintf(p, "- y\n");
    return s;
}

/* Parse @text with @floor: 0, or -EINVAL with the message checked. */
static int parse_floor(const char *text, uint64_t floor, struct ks_error *err)
{
    struct ks_yaml_stream *s = NULL;
    int rc = ks__yaml_parse_floor("t.yaml", text, strlen(text), floor, &s, err);
    cr_assert_eq(rc == 0, s != NULL);
    ks_yaml_stream_destroy(s);
    return rc;
}

Test(yaml_tree, alias_bomb_is_refused_at_the_alias_past_the_floor)
{
    const char *bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                       "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                       "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                       "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                       "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
                       "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
                       "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n";
    struct ks_yaml_stream *s = NULL;
    struct ks_error err = {0};
    cr_assert_eq(ks_yaml_parse("bomb.yaml", bomb, strlen(bomb), &s, &err), -EINVAL);
    cr_assert_null(s);
    cr_expect_str_eq(err.msg, "document too large once aliases are expanded");
    cr_expect_eq(err.line, 7, "line %d", err.line); /* g's aliases pass 4 million */
}

Test(yaml_tree, a_deep_bomb_saturates_instead_of_wrapping)
{
    /* 40 levels of 10 aliases: 10^40 nodes, far past 2^64 */
    size_t cap = 40 * 64 + 64;
    char *text = malloc(cap), *p = text;
    p += sprintf(p, "l0: &l0 [x, x]\n");
    for (int i = 1; i < 40; i++)
        p += sprintf(p, "l%d: &l%d [*l%d,*l%d,*l%d,*l%d,*l%d,*l%d,*l%d,*l%d,*l%d,*l%d]\n", i, i, i - 1, i - 1,
                     i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
    struct ks_error err = {0};
    cr_expect_eq(parse_floor(text, 4000000, &err), -EINVAL);
    cr_expect_str_eq(err.msg, "document too large once aliases are expanded");
    free(text);
}

Test(yaml_tree, aliases_may_produce_up_to_the_floor)
{
    /* an anchor of 10 nodes (the sequence and 9 scalars) aliased 10 times: 100 nodes */
    char *at = alias_doc(9, 10, 0), *past = alias_doc(9, 11, 0);
    struct ks_error err = {0};
    cr_expect_eq(parse_floor(at, 100, &err), 0, "%s", err.msg);
    memset(&err, 0, sizeof(err));
    cr_expect_eq(parse_floor(past, 100, &err), -EINVAL);
    cr_expect_str_eq(err.msg, "document too large once aliases are expanded");
    cr_expect_eq(err.line, 13, "line %d", err.line); /* the 11th alias */
    free(at);
    free(past);
}

Test(yaml_tree, past_the_floor_aliases_may_produce_as_many_nodes_as_the_text_holds)
{
    /* 1,000 nodes from aliases: refused beside ~30 nodes of text, accepted beside ~1,030 */
    char *small = alias_doc(9, 100, 0), *large = alias_doc(9, 100, 1000);
    struct ks_error err = {0};
    cr_expect_eq(parse_floor(small, 100, &err), -EINVAL);
    memset(&err, 0, sizeof(err));
    cr_expect_eq(parse_floor(large, 100, &err), 0, "%s", err.msg);
    free(small);
    free(large);
}

Test(yaml_tree, a_document_without_aliases_is_never_too_large)
{
    /* 1,000 nodes against a floor of 10: only nodes aliases produce count */
    char *text = alias_doc(9, 0, 1000);
    struct ks_error err = {0};
    cr_expect_eq(parse_floor(text, 10, &err), 0, "%s", err.msg);
    free(text);
}

Test(yaml_tree, each_document_is_bounded_on_its_own)
{
    /* 60 alias nodes per document against a floor of 100: fine per document, not summed */
    char *one = alias_doc(9, 6, 0);
    size_t len = strlen(one);
    char *text = malloc(3 * (len + 8));
    sprintf(text, "%s---\n%s---\n%s", one, one, one);
    struct ks_error err = {0};
    cr_expect_eq(parse_floor(text, 100, &err), 0, "%s", err.msg);
    free(one);
    free(text);
}

/* ---- ks_yaml_parse_each ---- */

struct seen {
    char log[2048];
    size_t len;
    int fail_at_item; /* -1: never */
    struct ks_error *err;
};

static void say(struct seen *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    s->len += (size_t)vsnprintf(s->log + s->len, sizeof(s->log) - s->len, fmt, ap);
    va_end(ap);
}

static const char *name_of(const struct ks_yaml_node *n)
{
    const struct ks_yaml_node *v = ks_yaml_get(n, "name");
    return v && v->kind == KS_YAML_SCALAR ? v->str : "?";
}

static int on_item(void *ctx, const struct ks_yaml_node *item, uint32_t index)
{
    struct seen *s = ctx;
    if ((int)index == s->fail_at_item)
        return ks_error_set(s->err, "t.yaml", item->line, NULL, "%s", "stop");
    say(s, "item %s@%u ", name_of(item), (unsigned)index);
    return 0;
}

static int on_doc(void *ctx, const struct ks_yaml_node *doc, uint32_t nitems)
{
    struct seen *s = ctx;
    if (!doc) {
        say(s, "empty/%u ", (unsigned)nitems);
        return 0;
    }
    const struct ks_yaml_node *items = ks_yaml_get(doc, "items");
    say(s, "doc %s/%u", name_of(doc), (unsigned)nitems);
    for (uint32_t i = 0; items && items->kind == KS_YAML_SEQ && i < items->n; i++)
        say(s, "+%s", name_of(items->items[i]));
    say(s, " ");
    return 0;
}

static int each(const char *text, struct seen *s, struct ks_error *err)
{
    const struct ks_yaml_sink sink = {on_item, on_doc, s};
    s->err = err;
    return ks_yaml_parse_each("t.yaml", text, strlen(text), KS_YAML_KEEP_DUPLICATES, &sink, err);
}

Test(yaml_tree, each_hands_over_items_then_their_document_in_order)
{
    const char *text = "name: d1\n"
                       "---\n"
                       "name: list\n"
                       "items:\n"
                       "- {name: a}\n"
                       "- {name: b, nested: {items: [{name: no}]}}\n"
                       "- c\n"
                       "---\n"
                       "---\n"
                       "[{items: [{name: no}]}]\n";
    struct seen s = {.fail_at_item = -1};
    struct ks_error err = {0};
    cr_assert_eq(each(text, &s, &err), 0, "%s", err.msg);
    cr_expect_str_eq(s.log, "doc d1/0 item a@0 item b@1 item ?@2 doc list/3 doc ?/0 doc ?/0 ");
}

Test(yaml_tree, an_anchor_keeps_its_item_and_the_later_ones_in_the_document)
{
    const char *text = "items:\n"
                       "- {name: a}\n"
                       "- {name: b, x: &x [1, 2]}\n"
                       "- {name: c, y: *x}\n"
                       "name: list\n";
    struct seen s = {.fail_at_item = -1};
    struct ks_error err = {0};
    cr_assert_eq(each(text, &s, &err), 0, "%s", err.msg);
    cr_expect_str_eq(s.log, "item a@0 doc list/1+b+c ");
}

Test(yaml_tree, a_sink_error_stops_the_parse)
{
    const char *text = "items: [{name: a}, {name: b}, {name: c}]\n---\nname: never\n";
    struct seen s = {.fail_at_item = 1};
    struct ks_error err = {0};
    cr_assert_eq(each(text, &s, &err), -EINVAL);
    cr_expect_str_eq(err.msg, "stop");
    cr_expect_str_eq(s.log, "item a@0 ");
}

Test(yaml_tree, a_second_items_key_cannot_replace_handed_over_items)
{
    const char *text = "items: [{name: a}]\nitems: [{name: b}]\n";
    struct seen s = {.fail_at_item = -1};
    struct ks_error err = {0};
    cr_assert_eq(each(text, &s, &err), -EINVAL);
    cr_expect_str_eq(err.msg, "duplicate key \"items\" in map");
    cr_expect_eq(err.line, 2);
}

Test(yaml_tree, each_refuses_a_bomb_before_handing_over_its_document)
{
    const char *text = "items:\n"
                       "- {name: a}\n"
                       "- a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                       "  b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                       "  c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                       "  d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                       "  e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
                       "  f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
                       "  g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n";
    struct seen s = {.fail_at_item = -1};
    struct ks_error err = {0};
    cr_assert_eq(each(text, &s, &err), -EINVAL);
    cr_expect_str_eq(err.msg, "document too large once aliases are expanded");
    cr_expect_str_eq(s.log, "item a@0 "); /* the item with the anchors was never handed over */
}

Test(yaml_tree, each_reads_a_file_and_names_it_in_errors)
{
    char path[] = "/tmp/ks_yaml_each_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("items: [{name: a}]\nname: l\n---\nbad: [\n", f);
    fclose(f);
    struct seen s = {.fail_at_item = -1};
    struct ks_error err = {0};
    const struct ks_yaml_sink sink = {on_item, on_doc, &s};
    s.err = &err;
    cr_expect_eq(ks_yaml_parse_file_each(path, 0, &sink, &err), -EINVAL);
    cr_expect_str_eq(err.file, path);
    cr_expect(strstr(err.msg, "invalid YAML"), "%s", err.msg);
    cr_expect_str_eq(s.log, "item a@0 doc l/1 ");
    remove(path);
}
