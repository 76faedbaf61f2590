/*
 * test_list_scan.c - LIST answers read item by item (kube/list_scan.c, kube/proto_list.c):
 * JSON and protobuf lists fed in pieces of every size give the same items and metadata as
 * the whole answer; strings with brackets, scalar items, metadata after the items; what is
 * malformed or cut short is an error; the buffer holds one item, not the list.
 */
#include <criterion/criterion.h>

#include "../../kube/kube_internal.h"

#include "ksched/internal/json_tree.h"
#include "ksched/internal/kube_proto.h"
#include "ksched/yaml_tree.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct items {
    char names[64][64];
    int n;
};

static int collect(void *ctx, const struct ks_yaml_node *item)
{
    struct items *it = ctx;
    cr_assert_lt(it->n, 64);
    const struct ks_yaml_node *name = ks_yaml_get(ks_yaml_get(item, "metadata"), "name");
    if (item->kind != KS_YAML_MAP)
        snprintf(it->names[it->n++], sizeof(it->names[0]), "<%s %s>", ks_yaml_kind_name(item),
                 item->kind == KS_YAML_SCALAR ? item->str : "");
    else
        snprintf(it->names[it->n++], sizeof(it->names[0]), "%s", name ? name->str : "?");
    return 0;
}

/* Feed @len bytes of @text in pieces of @step; returns finish's code, with the metadata. */
static int scan(const char *text, size_t len, size_t step, struct items *it, char rv[64], char cont[64],
                size_t *max_buf)
{
    struct ks__list_scan ls = {0};
    struct ks_error err = {0};
    int rc = 0;
    memset(it, 0, sizeof(*it));
    *max_buf = 0;
    for (size_t off = 0; off < len && rc == 0; off += step) {
        size_t n = len - off < step ? len - off : step;
        rc = ks__list_scan_feed(&ls, "list", text + off, n, collect, it, &err);
        if (ls.len > *max_buf)
            *max_buf = ls.len;
    }
    const char *r = "", *c = "";
    if (rc == 0)
        rc = ks__list_scan_finish(&ls, "list", &r, &c, &err);
    snprintf(rv, 64, "%s", r);
    snprintf(cont, 64, "%s", c);
    ks__list_scan_free(&ls);
    return rc;
}

/* @list (items a, b, c; resourceVersion 42, continue c1) read in pieces of every size */
static void expect_abc_in_every_split(const char *list, size_t len)
{
    for (size_t step = 1; step <= len; step++) {
        struct items it;
        char rv[64], cont[64];
        size_t max_buf;
        cr_assert_eq(scan(list, len, step, &it, rv, cont, &max_buf), 0, "step %zu", step);
        cr_assert_eq(it.n, 3, "step %zu: %d items", step, it.n);
        cr_assert_str_eq(it.names[0], "a");
        cr_assert_str_eq(it.names[1], "b");
        cr_assert_str_eq(it.names[2], "c");
        cr_assert_str_eq(rv, "42");
        cr_assert_str_eq(cont, "c1");
    }
}

#define POD(name, extra) "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"ns\"" extra "}}"

Test(list_scan, json_in_pieces_of_every_size)
{
    static const char list[] =
        "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"42\",\"continue\":"
        "\"c1\"},"
        "\"items\":[" POD("a", ",\"annotations\":{\"x\":\"}]{[\\\"items\\\":[\"}") ",\n  " POD(
            "b", "") "," POD("c", ",\"labels\":{\"items\":\"[\"}") "]}\n";
    expect_abc_in_every_split(list, sizeof(list) - 1);
}

Test(list_scan, json_metadata_after_the_items_and_other_keys)
{
    static const char list[] = "{\"items\":[" POD("a", "") "],\"kind\":\"PodList\",\"itemsNot\":[1,2],"
                                                           "\"metadata\":{\"resourceVersion\":\"7\"}}";
    struct items it;
    char rv[64], cont[64];
    size_t max_buf;
    cr_assert_eq(scan(list, sizeof(list) - 1, 5, &it, rv, cont, &max_buf), 0);
    cr_assert_eq(it.n, 1, "only the items array's values are items");
    cr_assert_str_eq(rv, "7");
    cr_assert_str_eq(cont, "");
}

Test(list_scan, json_items_that_are_not_objects_are_handed_on)
{
    static const char list[] = "{\"metadata\":{},\"items\":[null, 12 ,\"s]\",[1],true]}";
    struct items it;
    char rv[64], cont[64];
    size_t max_buf;
    cr_assert_eq(scan(list, sizeof(list) - 1, 1, &it, rv, cont, &max_buf), 0);
    cr_assert_eq(it.n, 5);
    cr_assert_str_eq(it.names[0], "<a scalar null>");
    cr_assert_str_eq(it.names[1], "<a scalar 12>");
    cr_assert_str_eq(it.names[2], "<a scalar s]>");
    cr_assert_str_eq(it.names[3], "<a list >");
    cr_assert_str_eq(it.names[4], "<a scalar true>");
}

Test(list_scan, json_that_is_not_a_whole_list_fails)
{
    static const char *const bad[] = {
        "{\"metadata\":{},\"items\":[" POD("a", "") ",", /* cut short */
        "{\"metadata\":{},\"items\":5}",                 /* items not a list */
        "[1,2]",                                         /* not an object */
        "{\"items\":[{\"a\":}]}",                        /* a malformed item */
        "{\"items\":[]}}",                               /* closes too much */
        "",                                              /* nothing */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct items it;
        char rv[64], cont[64];
        size_t max_buf;
        cr_expect_eq(scan(bad[i], strlen(bad[i]), 3, &it, rv, cont, &max_buf), -EINVAL, "%s", bad[i]);
    }
}

static int collect_count(void *ctx, const struct ks_yaml_node *item)
{
    (void)item;
    ++*(int *)ctx;
    return 0;
}

Test(list_scan, json_holds_one_item_not_the_list)
{
    char *list = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&list, &len);
    fputs("{\"metadata\":{\"resourceVersion\":\"9\"},\"items\":[", f);
    for (int i = 0; i < 2000; i++)
        fprintf(f, "%s{\"metadata\":{\"name\":\"p%04d\",\"namespace\":\"ns\"},\"spec\":{\"nodeName\":\"n\"}}",
                i ? "," : "", i);
    fputs("]}", f);
    fclose(f);
    struct ks__list_scan ls = {0};
    struct ks_error err = {0};
    int count = 0;
    size_t max_buf = 0;
    for (size_t off = 0; off < len; off += 4096) {
        size_t n = len - off < 4096 ? len - off : 4096;
        cr_assert_eq(ks__list_scan_feed(&ls, "list", list + off, n, collect_count, &count, &err), 0);
        if (ls.len > max_buf)
            max_buf = ls.len;
    }
    const char *rv, *cont;
    cr_assert_eq(ks__list_scan_finish(&ls, "list", &rv, &cont, &err), 0);
    cr_expect_eq(count, 2000);
    cr_expect_leq(max_buf, 4096 + 100, "%zu bytes buffered of a %zu-byte list", max_buf, len);
    cr_expect_leq(ls.shell_len, 64, "the shell: %s", ls.shell);
    ks__list_scan_free(&ls);
    free(list);
}

/* The enveloped protobuf of @json (a list with apiVersion and kind). */
static char *encode(const char *json, size_t *len)
{
    struct ks_yaml_stream *s;
    struct ks_error err = {0};
    char *out;
    cr_assert_eq(ks_json_parse("list", json, strlen(json), &s, &err), 0, "%s", err.msg);
    cr_assert_eq(ks_proto_encode("list", s->docs[0], NULL, NULL, 0, &out, len, &err), 0, "%s", err.msg);
    ks_yaml_stream_destroy(s);
    return out;
}

#define PODLIST(items)                                                                                       \
    "{\"apiVersion\":\"v1\",\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"42\",\"continue\":"     \
    "\"c1\"},"                                                                                               \
    "\"items\":[" items "]}"

Test(list_scan, protobuf_in_pieces_of_every_size)
{
    size_t len;
    char *list =
        encode(PODLIST(POD("a", ",\"labels\":{\"k\":\"v\"}") "," POD("b", "") "," POD("c", "")), &len);
    expect_abc_in_every_split(list, len);
    free(list);
}

Test(list_scan, protobuf_items_decode_as_the_whole_list_does)
{
    size_t len;
    char *list = encode(PODLIST(POD("a", ",\"labels\":{\"k\":\"v\"}")), &len);
    struct ks_yaml_stream *whole;
    struct ks_error err = {0};
    cr_assert_eq(ks_proto_parse("list", list, len, &whole, &err), 0, "%s", err.msg);
    const struct ks_yaml_node *want = ks_yaml_get(whole->docs[0], "items")->items[0];
    struct ks__list_scan ls = {0};
    struct items it = {0};
    cr_assert_eq(ks__list_scan_feed(&ls, "list", list, len, collect, &it, &err), 0, "%s", err.msg);
    const char *rv, *cont;
    cr_assert_eq(ks__list_scan_finish(&ls, "list", &rv, &cont, &err), 0, "%s", err.msg);
    cr_assert_eq(it.n, 1);
    cr_assert_str_eq(ks_yaml_get(ks_yaml_get(ks_yaml_get(want, "metadata"), "labels"), "k")->str, "v");
    ks__list_scan_free(&ls);
    ks_yaml_stream_destroy(whole);
    free(list);
}

Test(list_scan, protobuf_cut_short_or_not_a_list_fails)
{
    size_t len;
    char *list = encode(PODLIST(POD("a", "") "," POD("b", "")), &len);
    for (size_t cut = 1; cut < len; cut++) {
        struct items it;
        char rv[64], cont[64];
        size_t max_buf;
        cr_assert_eq(scan(list, cut, 7, &it, rv, cont, &max_buf), -EINVAL, "cut at %zu of %zu", cut, len);
    }
    free(list);
    char *pod = encode("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"}}", &len);
    struct items it;
    char rv[64], cont[64];
    size_t max_buf;
    cr_expect_eq(scan(pod, len, len, &it, rv, cont, &max_buf), -EINVAL, "a Pod is not a list");
    free(pod);
}
