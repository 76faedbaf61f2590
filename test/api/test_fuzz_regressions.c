/*
 * test_fuzz_regressions.c - every bug the libFuzzer targets (test/fuzz) found, as a unit
 * test: the input that crashed (or broke the error contract) must now load, or fail with
 * a clear file:line: field: message and no object. The same inputs are kept as
 * test/fuzz/corpus/<target>/crash-<what>; docs/fuzzing.md lists each with its fix.
 */
#include <criterion/criterion.h>

#include "ksched/api.h"
#include "ksched/loader.h"
#include "ksched/quantity.h"
#include "ksched/yaml_tree.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static void init(void)
{
    cr_assert_eq(ks_api_init(), 0);
}

TestSuite(fuzz_regressions, .init = init);

static struct ks_objects *load_ok(const char *yaml)
{
    struct ks_objects *objs = NULL;
    struct ks_error err = {0};
    int rc = ks_objects_load_buffer("fuzz.yaml", yaml, strlen(yaml), &objs, &err);
    cr_assert_eq(rc, 0, "load failed: %s:%d: %s: %s\n%s", err.file, err.line, err.field, err.msg, yaml);
    return objs;
}

static void load_fails(const char *yaml, int line, const char *field, const char *msg)
{
    struct ks_objects *objs = NULL;
    struct ks_error err = {0};
    int rc = ks_objects_load_buffer("fuzz.yaml", yaml, strlen(yaml), &objs, &err);
    cr_assert_eq(rc, -EINVAL, "load returned %d, want -EINVAL\n%s", rc, yaml);
    cr_assert_null(objs);
    cr_assert_str_eq(err.file, "fuzz.yaml");
    cr_assert_eq(err.line, line, "line %d, want %d (%s: %s)", err.line, line, err.field, err.msg);
    cr_assert_str_eq(err.field, field, "field \"%s\", want \"%s\" (%s)", err.field, field, err.msg);
    cr_assert(strstr(err.msg, msg), "message \"%s\" lacks \"%s\"", err.msg, msg);
}

#define POD_WITH_START_TIME(t)                                                                               \
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\nstatus:\n"            \
    "  startTime: \"" t "\"\n"

static int64_t start_time_of(const char *yaml)
{
    struct ks_objects *objs = load_ok(yaml);
    cr_assert_eq(ks_objects_count(objs, POD), 1u);
    int64_t t = ks_objects_pods(objs)[0]->start_time;
    ks_objects_destroy(objs);
    return t;
}

/* fuzz_json crash-start-time-year-8774: seconds * 1e9 overflowed int64 (UBSan). */
Test(fuzz_regressions, start_time_past_2262_saturates)
{
    cr_assert_eq(start_time_of(POD_WITH_START_TIME("8774-05-01T08:00:00Z")), INT64_MAX);
    cr_assert_eq(start_time_of(POD_WITH_START_TIME("9999-12-31T23:59:59.999999999+14:00")), INT64_MAX);
    int64_t early = start_time_of(POD_WITH_START_TIME("0000-01-01T00:00:00Z"));
    cr_assert_eq(early, KS_TIME_NONE + 1, "got %lld", (long long)early);
    /* inside the range nothing changes: 2262-04-11T23:47:16.854775807Z is INT64_MAX exactly */
    cr_assert_eq(start_time_of(POD_WITH_START_TIME("2262-04-11T23:47:16.854775807Z")), INT64_MAX);
    cr_assert_eq(start_time_of(POD_WITH_START_TIME("2262-04-11T23:47:16.854775806Z")), INT64_MAX - 1);
    cr_assert_eq(start_time_of(POD_WITH_START_TIME("1970-01-01T00:00:01Z")), 1000000000);
}

/* Found while fixing the above: Go's time.Parse rejects days a month lacks and second 60. */
Test(fuzz_regressions, start_time_day_must_exist)
{
    /* the API server's time.Parse errors */
    load_fails(POD_WITH_START_TIME("2023-02-29T00:00:00Z"), 7, "status.startTime",
               "parsing time \"2023-02-29T00:00:00Z\": day out of range");
    load_fails(POD_WITH_START_TIME("2024-04-31T00:00:00Z"), 7, "status.startTime", "day out of range");
    load_fails(POD_WITH_START_TIME("2024-01-01T00:00:60Z"), 7, "status.startTime",
               "parsing time \"2024-01-01T00:00:60Z\": second out of range");
    cr_assert_eq(start_time_of(POD_WITH_START_TIME("2024-02-29T00:00:00Z")), 1709164800ll * 1000000000);
    cr_assert_eq(start_time_of(POD_WITH_START_TIME("2000-02-29T00:00:00Z")), 951782400ll * 1000000000);
    load_fails(POD_WITH_START_TIME("1900-02-29T00:00:00Z"), 7, "status.startTime", "day out of range");
}

/* The entry points the fuzz targets drive: ks_object_decode() decodes one document of any kind. */
Test(fuzz_regressions, object_decode_one_document)
{
    static const char yaml[] = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\n"
                               "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: 3}\n";
    struct ks_yaml_stream *s = NULL;
    struct ks_error err = {0};
    cr_assert_eq(ks_yaml_parse("x.yaml", yaml, sizeof(yaml) - 1, &s, &err), 0);
    enum ks_kind kind;
    void *obj = NULL;
    cr_assert_eq(ks_object_decode("x.yaml", s->docs[0], &kind, &obj, &err), 0, "%s", err.msg);
    cr_assert_eq(kind, KS_KIND_NODE);
    cr_assert_str_eq(((struct ks_node *)obj)->meta.name, "n1");
    ks_object_destroy(kind, obj);

    obj = (void *)1;
    cr_assert_eq(ks_object_decode("x.yaml", s->docs[1], &kind, &obj, &err), -EINVAL);
    cr_assert_null(obj);
    cr_assert_eq(err.line, 8);
    cr_assert_str_eq(err.field, "spec.containers");
    ks_yaml_stream_destroy(s);
}

/*
 * fuzz_quantity crash-exponent-past-int32-after-zeros: "010200e2147483647" is 102e2147483649
 * once the trailing zeros move into the exponent, and the canonical text "102e2147483649"
 * did not parse back (e<N> stops at INT32_MAX). The coefficient now keeps the zeros.
 */
Test(fuzz_regressions, quantity_canonical_text_reads_back_near_max_exponent)
{
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"010200e2147483647", "102000e2147483646"},
        {"-10e2147483647", "-100e2147483646"},
        {"10000000000000000000000000000000000000e2147483647",
         "100000000000000000000000000000000000000e2147483646"},
        {"1e2147483647", "10e2147483646"},
        {"99999999999999999999999999999999999999e2147483647",
         "999999999999999999999999999999999999990e2147483646"},
        {"1000e2147483645", "100e2147483646"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ks_quantity q, back;
        char buf[KS_QUANTITY_STR_MAX];
        cr_assert_eq(ks_quantity_parse(cases[i].in, &q), 0, "%s", cases[i].in);
        cr_assert_eq(ks_quantity_format(&q, buf, sizeof(buf)), 0, "%s", cases[i].in);
        cr_expect_str_eq(buf, cases[i].want, "%s", cases[i].in);
        cr_assert_eq(ks_quantity_parse(buf, &back), 0, "\"%s\" (from %s) does not parse", buf, cases[i].in);
        cr_expect(back.coef_lo == q.coef_lo && back.coef_hi == q.coef_hi && back.exp == q.exp &&
                      back.sign == q.sign,
                  "\"%s\" reads back as another value", buf);
    }
}

/*
 * fuzz_json crash-requests-sum-overflow: a container whose memory limit (so its request)
 * saturates at INT64_MAX plus an init container's or the overhead's memory overflowed the
 * sum in api/resources.c (UBSan). Sums now saturate: the pod needs more than any node has.
 */
Test(fuzz_regressions, pod_requests_sum_saturates)
{
    struct ks_objects *objs =
        load_ok("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                "  initContainers:\n"
                "  - {name: sidecar, restartPolicy: Always, resources: {requests: {memory: 1Gi}}}\n"
                "  containers:\n"
                "  - {name: a, resources: {limits: {memory: 1e30, example.com/gpu: 1e30}}}\n"
                "  - {name: b, resources: {requests: {memory: 1Gi, example.com/gpu: 1e30}}}\n"
                "  overhead: {memory: 1Gi, cpu: 50m}\n");
    const struct ks_pod *pod = ks_objects_pods(objs)[0];
    cr_expect_eq(pod->requests.memory, INT64_MAX, "memory %lld", (long long)pod->requests.memory);
    cr_expect_eq(pod->requests.milli_cpu, 50);
    cr_assert_eq(pod->requests.nscalar, 1u);
    cr_expect_eq(pod->requests.scalar[0].value, INT64_MAX);
    ks_objects_destroy(objs);
}

/*
 * fuzz_quantity crash-exponent-too-long-to-print: "02" + 66 zeros + "e2147483647" is
 * 2e2147483713, whose readable text needs 67 coefficient zeros, more than
 * KS_QUANTITY_STR_MAX holds; it printed "200e2147483712", which does not parse. Such a
 * value is now huge: sign kept, projections saturate, format refuses it.
 */
Test(fuzz_regressions, quantity_unprintable_exponent_is_huge)
{
    char in[128], buf[KS_QUANTITY_STR_MAX];
    struct ks_quantity q;
    snprintf(in, sizeof(in), "-02%0*de2147483647", 66, 0);
    cr_assert_eq(ks_quantity_parse(in, &q), 0);
    cr_expect_eq(q.huge, 1);
    cr_expect_eq(ks_quantity_sign(&q), -1);
    cr_expect_eq(ks_quantity_value(&q), INT64_MIN);
    cr_expect_eq(ks_quantity_format(&q, buf, sizeof(buf)), -ERANGE);
    /* the longest that still fits (sign included) stays exact: 39 digits + 12 zeros + "e2147483646" */
    const char *c39 = "100000000000000000000000000000000000001";
    snprintf(in, sizeof(in), "%s%0*de2147483647", c39, 11, 0);
    cr_assert_eq(ks_quantity_parse(in, &q), 0);
    cr_expect_eq(q.huge, 0);
    cr_assert_eq(ks_quantity_format(&q, buf, sizeof(buf)), 0);
    cr_expect_eq(strlen(buf), 39 + 12 + 11, "%s", buf);
    snprintf(in, sizeof(in), "%s%0*de2147483647", c39, 12, 0);
    cr_assert_eq(ks_quantity_parse(in, &q), 0);
    cr_expect_eq(q.huge, 1);
}

/*
 * A sequence or mapping used as a map key has no text: sorting an object's keys for the type
 * check compared it with memcmp(NULL, ...) (UBSan). It now sorts first and is an unknown field.
 */
Test(fuzz_regressions, a_key_without_text_sorts_first)
{
    struct ks_objects *objs = load_ok("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
                                      "spec: {? [a]: 1, containers: [{name: c}], ? {k: v}: 2}\n");
    cr_assert_eq(ks_objects_count(objs, POD), 1u);
    ks_objects_destroy(objs);
}
