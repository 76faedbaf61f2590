/*
 * test_yaml_json.c - YAML values as the JSON kubectl sends (api/yaml_json.c): go-yaml v2's
 * YAML 1.1 typing of unquoted scalars, encoding/json's number text, and map keys.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "ksched/yaml_tree.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static struct ks_yaml_stream *stream;

static void teardown(void)
{
    ks_yaml_stream_destroy(stream);
    stream = NULL;
}

/* The value of key `v` in the one-line document "v: @text". */
static const struct ks_yaml_node *value_of(const char *text)
{
    char doc[256];
    struct ks_error err = {0};
    ks_yaml_stream_destroy(stream);
    snprintf(doc, sizeof(doc), "v: %s\n", text);
    cr_assert_eq(ks_yaml_parse("t.yaml", doc, strlen(doc), &stream, &err), 0, "%s", err.msg);
    return ks_yaml_get(stream->docs[0], "v");
}

static enum ks_json_type type_of(const char *text, char *number, size_t len)
{
    struct ks_json_number num;
    bool truth;
    enum ks_json_type t = ks_yaml_json_type(value_of(text), &truth, &num);
    if (number) {
        number[0] = '\0';
        if (t == KS_JSON_NUMBER && ks_json_number_text(&num, number, len) < 0)
            strcpy(number, "unsupported");
        if (t == KS_JSON_BOOL)
            strcpy(number, truth ? "true" : "false");
    }
    return t;
}

TestSuite(yaml_json, .fini = teardown);

Test(yaml_json, yaml_1_1_scalars_are_typed_as_go_yaml_v2_types_them)
{
    static const struct {
        const char *yaml;
        enum ks_json_type type;
        const char *json; /* number text, or true/false */
    } cases[] = {
        {"", KS_JSON_NULL, ""},
        {"~", KS_JSON_NULL, ""},
        {"null", KS_JSON_NULL, ""},
        {"NULL", KS_JSON_NULL, ""},
        {"'null'", KS_JSON_STRING, ""},
        {"y", KS_JSON_BOOL, "true"},
        {"Yes", KS_JSON_BOOL, "true"},
        {"ON", KS_JSON_BOOL, "true"},
        {"n", KS_JSON_BOOL, "false"},
        {"NO", KS_JSON_BOOL, "false"},
        {"off", KS_JSON_BOOL, "false"},
        {"False", KS_JSON_BOOL, "false"},
        {"yES", KS_JSON_STRING, ""},
        {"\"yes\"", KS_JSON_STRING, ""},
        {"1", KS_JSON_NUMBER, "1"},
        {"-42", KS_JSON_NUMBER, "-42"},
        {"+7", KS_JSON_NUMBER, "7"},
        {"0x1F", KS_JSON_NUMBER, "31"},
        {"0o17", KS_JSON_NUMBER, "15"},
        {"010", KS_JSON_NUMBER, "8"}, /* a leading 0 is octal */
        {"09", KS_JSON_NUMBER, "9"},  /* not octal: the float form takes it */
        {"0b101", KS_JSON_NUMBER, "5"},
        {"1_000", KS_JSON_NUMBER, "1000"},
        {"1e3", KS_JSON_NUMBER, "1000"},
        {"1.0", KS_JSON_NUMBER, "1"},
        {"1.5", KS_JSON_NUMBER, "1.5"},
        {".5", KS_JSON_NUMBER, "0.5"},
        {"-0.0", KS_JSON_NUMBER, "-0"},
        {"1e21", KS_JSON_NUMBER, "1e+21"},
        {"1e20", KS_JSON_NUMBER, "100000000000000000000"},
        {"0.000001", KS_JSON_NUMBER, "0.000001"},
        {"1.5e-7", KS_JSON_NUMBER, "1.5e-7"},
        {"9223372036854775807", KS_JSON_NUMBER, "9223372036854775807"},
        {"9223372036854775808", KS_JSON_NUMBER, "9223372036854775808"}, /* an unsigned integer */
        {"99999999999999999999", KS_JSON_NUMBER, "100000000000000000000"},
        {".inf", KS_JSON_NUMBER, "unsupported"},
        {"-.Inf", KS_JSON_NUMBER, "unsupported"},
        {".NaN", KS_JSON_NUMBER, "unsupported"},
        {"1e999", KS_JSON_STRING, ""}, /* out of range: go-yaml keeps the text */
        {"1Gi", KS_JSON_STRING, ""},
        {"100m", KS_JSON_STRING, ""},
        {"2024-01-02", KS_JSON_STRING, ""},
        {"1.2.3", KS_JSON_STRING, ""},
        {"0x", KS_JSON_STRING, ""},
        {"'80'", KS_JSON_STRING, ""},
        {"[1]", KS_JSON_ARRAY, ""},
        {"{a: 1}", KS_JSON_OBJECT, ""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char text[64];
        enum ks_json_type t = type_of(cases[i].yaml, text, sizeof(text));
        cr_expect(eq(int, t, cases[i].type), "%s: type %d, want %d", cases[i].yaml, t, cases[i].type);
        if (cases[i].type == KS_JSON_NUMBER || cases[i].type == KS_JSON_BOOL)
            cr_expect(eq(str, text, (char *)cases[i].json), "%s", cases[i].yaml);
    }
}

Test(yaml_json, unquoted_integer_and_boolean_keys_become_their_json_text)
{
    struct ks_error err = {0};
    const char *doc = "labels: {0x10: a, yes: b, 1.5: c, '0x10': d, plain: e}\n";
    cr_assert_eq(ks_yaml_parse("t.yaml", doc, strlen(doc), &stream, &err), 0, "%s", err.msg);
    const struct ks_yaml_node *m = ks_yaml_get(stream->docs[0], "labels");
    cr_assert_eq(m->n, 5);
    cr_expect(eq(str, (char *)m->pairs[0].key->str, "16"));
    cr_expect(eq(str, (char *)m->pairs[1].key->str, "true"));
    cr_expect(eq(str, (char *)m->pairs[2].key->str, "1.5"));
    cr_expect(eq(str, (char *)m->pairs[3].key->str, "0x10"), "a quoted key is a string already");
    cr_expect(eq(str, (char *)m->pairs[4].key->str, "plain"));
}

Test(yaml_json, keys_equal_once_converted_are_duplicates)
{
    struct ks_error err = {0};
    const char *doc = "m: {1: a, 0x1: b}\n";
    cr_expect_eq(ks_yaml_parse("t.yaml", doc, strlen(doc), &stream, &err), -EINVAL);
    cr_expect(strstr(err.msg, "duplicate key \"1\"") != NULL, "%s", err.msg);
}
