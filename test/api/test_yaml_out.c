/*
 * test_yaml_out.c - the block YAML writer: layout of nested maps and lists, empty
 * collections, quoting, misuse, and output that libyaml reads back as written.
 */
#include "ksched/internal/yaml_out.h"
#include "ksched/yaml_tree.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct writer {
    struct ks_yaml_out o;
    FILE *mem;
    char *buf;
    size_t len;
};

static void open_writer(struct writer *w)
{
    w->buf = NULL;
    w->mem = open_memstream(&w->buf, &w->len);
    cr_assert_not_null(w->mem);
    ks_yaml_out_init(&w->o, w->mem);
}

/* Finish and return the text (owned by @w; free with free(w->buf)). */
static const char *close_writer(struct writer *w, int want_rc)
{
    int rc = ks_yaml_out_finish(&w->o);
    cr_assert_eq(rc, want_rc, "finish: got %d, want %d", rc, want_rc);
    fclose(w->mem);
    return w->buf;
}

Test(yaml_out, nested_maps_and_lists_in_kubernetes_layout)
{
    struct writer w;
    open_writer(&w);
    ks_yaml_key_str(&w.o, "kind", "Thing");
    ks_yaml_key_map(&w.o, "meta");
    ks_yaml_key_int(&w.o, "n", -3);
    ks_yaml_key_bool(&w.o, "enabled", true);
    ks_yaml_end(&w.o);
    ks_yaml_key_seq(&w.o, "items");
    ks_yaml_item_map(&w.o);
    ks_yaml_key_str(&w.o, "name", "a");
    ks_yaml_key_seq(&w.o, "tags");
    ks_yaml_item_str(&w.o, "x");
    ks_yaml_item_int(&w.o, 7);
    ks_yaml_end(&w.o);
    ks_yaml_key_map(&w.o, "args");
    ks_yaml_key_float(&w.o, "qps", 12.5);
    ks_yaml_end(&w.o);
    ks_yaml_end(&w.o);
    ks_yaml_item_map(&w.o);
    ks_yaml_key_map(&w.o, "first");
    ks_yaml_key_str(&w.o, "k", "v");
    ks_yaml_end(&w.o);
    ks_yaml_end(&w.o);
    ks_yaml_end(&w.o);
    const char *got = close_writer(&w, 0);
    cr_assert_str_eq(got, "kind: Thing\n"
                          "meta:\n"
                          "  n: -3\n"
                          "  enabled: true\n"
                          "items:\n"
                          "- name: a\n"
                          "  tags:\n"
                          "  - x\n"
                          "  - 7\n"
                          "  args:\n"
                          "    qps: 12.5\n"
                          "- first:\n"
                          "    k: v\n");
    free(w.buf);
}

Test(yaml_out, empty_collections_use_flow_style)
{
    struct writer w;
    open_writer(&w);
    ks_yaml_key_map(&w.o, "m");
    ks_yaml_end(&w.o);
    ks_yaml_key_seq(&w.o, "s");
    ks_yaml_item_map(&w.o);
    ks_yaml_end(&w.o);
    ks_yaml_item_map(&w.o);
    ks_yaml_key_seq(&w.o, "inner");
    ks_yaml_end(&w.o);
    ks_yaml_end(&w.o);
    ks_yaml_end(&w.o);
    ks_yaml_key_seq(&w.o, "e");
    ks_yaml_end(&w.o);
    const char *got = close_writer(&w, 0);
    cr_assert_str_eq(got,
                     "m: {}\n"
                     "s:\n"
                     "- {}\n"
                     "- inner: []\n"
                     "e: []\n",
                     "%s", got);
    free(w.buf);
}

Test(yaml_out, quoting)
{
    static const char *const quoted[] = {
        "",           "true",        "False",     "yes",  "off",   "null", "~",
        "y",          "12",          "-1",        "3.5",  "1e3",   ".5",   "0x1F",
        "2001-12-14", "10:20",       "- a",       "-",    "a: b",  "a #b", "trailing ",
        " leading",   "#x",          "*ref",      "&a",   "!tag",  "{x}",  "[1]",
        "'q'",        "\"q\"",       "%p",        "@a",   "`b`",   "|",    ">",
        "a:",         "line\nbreak", "tab\there", ".inf", "-.inf", ".NaN",
    };
    static const char *const plain[] = {
        "default-scheduler",
        "NodeResourcesFit",
        "kubescheduler.config.k8s.io/v1",
        "15s",
        "a:b",
        "example.com/gpu",
        "-foo",
        "a-b",
        "v1.2.3x",
        "with space",
        "ünïcode",
    };
    for (size_t i = 0; i < sizeof(quoted) / sizeof(quoted[0]); i++)
        cr_assert(ks_yaml_needs_quotes(quoted[i]), "\"%s\" should be quoted", quoted[i]);
    for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
        cr_assert(!ks_yaml_needs_quotes(plain[i]), "\"%s\" should be plain", plain[i]);
}

Test(yaml_out, scalars_read_back_unchanged)
{
    static const char *const values[] = {
        "",          "true",    "12",  "a: b",  "x #y",    "line\nbreak", "q\"uote\\",
        "tab\there", "ctl\x01", "- a", "plain", "ünïcode", "trailing ",
    };
    struct writer w;
    char key[16];
    size_t n = sizeof(values) / sizeof(values[0]);

    open_writer(&w);
    for (size_t i = 0; i < n; i++) {
        snprintf(key, sizeof(key), "k%zu", i);
        ks_yaml_key_str(&w.o, key, values[i]);
    }
    const char *text = close_writer(&w, 0);

    struct ks_yaml_stream *s = NULL;
    struct ks_error err = {0};
    cr_assert_eq(ks_yaml_parse("out.yaml", text, strlen(text), &s, &err), 0, "%s\n%s", err.msg, text);
    cr_assert_eq(s->ndocs, 1);
    for (size_t i = 0; i < n; i++) {
        snprintf(key, sizeof(key), "k%zu", i);
        const struct ks_yaml_node *v = ks_yaml_get(s->docs[0], key);
        cr_assert_not_null(v, "%s missing", key);
        cr_assert_str_eq(v->str, values[i]);
        cr_assert(!v->plain || !ks_yaml_needs_quotes(values[i]));
    }
    ks_yaml_stream_destroy(s);
    free(w.buf);
}

Test(yaml_out, misuse_is_reported)
{
    struct writer w;
    open_writer(&w);
    ks_yaml_item_str(&w.o, "not in a list");
    close_writer(&w, -EINVAL);
    free(w.buf);

    open_writer(&w);
    ks_yaml_key_map(&w.o, "open");
    close_writer(&w, -EINVAL);
    free(w.buf);

    open_writer(&w);
    ks_yaml_end(&w.o);
    close_writer(&w, -EINVAL);
    free(w.buf);
}
