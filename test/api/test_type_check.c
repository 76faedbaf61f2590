/*
 * test_type_check.c - values against the API's Go types as the API server's JSON decoder
 * takes them (api/type_check.c): the first error in sorted key order, errors of the
 * self-decoding types (Quantity, IntOrString, Time) ending the walk, the decoder's
 * context, and what passes (null anywhere, YAML 1.1 numbers, unknown fields).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "ksched/internal/api_schema.h"
#include "ksched/internal/type_check.h"
#include "ksched/yaml_tree.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static struct ks_error err;

/* Type-check the Pod @yaml; returns ks_type_check's result, err holding the error. */
static int check_pod(const char *yaml)
{
    struct ks_yaml_stream *s;
    struct ks_error perr = {0};
    memset(&err, 0, sizeof(err));
    cr_assert_eq(ks_yaml_parse("p.yaml", yaml, strlen(yaml), &s, &perr), 0, "%s", perr.msg);
    int rc = ks_type_check(s->docs[0], ks_api_schema_root("Pod"), "Pod", "v1", "p.yaml", "", &err);
    ks_yaml_stream_destroy(s);
    return rc;
}

#define POD(body) "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n" body
#define PREFIX    "Pod in version \"v1\" cannot be handled as a Pod: "

Test(type_check, well_typed_values_pass)
{
    cr_expect(
        eq(int,
           check_pod(POD("spec:\n  priority: 1e3\n  hostNetwork: yes\n  nodeSelector: {a: 'b'}\n"
                         "  terminationGracePeriodSeconds: 9223372036854775807\n"
                         "  containers:\n  - name: c\n    resources: {requests: {cpu: 0x10, memory: 1Gi}}\n"
                         "    ports: [{containerPort: 0o17}]\n"
                         "    livenessProbe: {httpGet: {port: http}}\n"
                         "    readinessProbe: {httpGet: {port: 8080}}\n"
                         "status: {startTime: '2024-05-01T08:00:00.5+02:00'}\n")),
           0),
        "%s", err.msg);
}

Test(type_check, null_goes_anywhere_and_unknown_fields_are_not_its_business)
{
    cr_expect(eq(int,
                 check_pod(POD("spec:\n  priority: ~\n  nodeSelector:\n  containers:\n  - name: c\n"
                               "    resources: {requests: {cpu: null}}\n    bogus: [1]\n")),
                 0),
              "%s", err.msg);
}

Test(type_check, wrong_json_type_names_struct_field_path_and_go_type)
{
    cr_assert(eq(int, check_pod(POD("spec:\n  containers: [{name: c, ports: [{containerPort: '80'}]}]\n")),
                 -EINVAL));
    cr_expect(eq(int, err.line, 5));
    cr_expect(eq(str, err.field, "spec.containers[0].ports[0].containerPort"));
    cr_expect(eq(str, err.msg,
                 PREFIX "json: cannot unmarshal string into Go struct field "
                        "ContainerPort.spec.containers.ports.containerPort of type int32"));
}

Test(type_check, named_go_types_and_collections_are_spelled_as_reflect_spells_them)
{
    cr_assert(eq(
        int, check_pod(POD("spec:\n  containers: [{name: c, ports: [{containerPort: 1, protocol: 6}]}]\n")),
        -EINVAL));
    cr_expect(eq(str, err.msg,
                 PREFIX "json: cannot unmarshal number into Go struct field "
                        "ContainerPort.spec.containers.ports.protocol of type v1.Protocol"));
    cr_assert(
        eq(int, check_pod(POD("spec:\n  containers: [{name: c, resources: {requests: [1]}}]\n")), -EINVAL));
    cr_expect(eq(str, err.msg,
                 PREFIX "json: cannot unmarshal array into Go struct field "
                        "ResourceRequirements.spec.containers.resources.requests of type v1.ResourceList"));
    cr_assert(eq(int, check_pod(POD("spec:\n  tolerations: {a: b}\n  containers: [{name: c}]\n")), -EINVAL));
    cr_expect(eq(str, err.msg,
                 PREFIX "json: cannot unmarshal object into Go struct field PodSpec.spec.tolerations of type "
                        "[]v1.Toleration"));
}

Test(type_check, integers_out_of_range_or_with_a_fraction_show_their_number)
{
    cr_assert(eq(int, check_pod(POD("spec:\n  priority: 2147483648\n  containers: [{name: c}]\n")), -EINVAL));
    cr_expect(eq(str, err.msg,
                 PREFIX "json: cannot unmarshal number 2147483648 into Go struct field PodSpec.spec.priority "
                        "of type int32"));
    cr_assert(eq(int, check_pod(POD("spec:\n  priority: 1e21\n  containers: [{name: c}]\n")), -EINVAL));
    cr_expect(eq(str, err.msg,
                 PREFIX
                 "json: cannot unmarshal number 1e+21 into Go struct field PodSpec.spec.priority of type "
                 "int32"));
}

Test(type_check, the_first_error_in_sorted_key_order_wins)
{
    /* written spec first, metadata second: the decoder reads metadata first */
    cr_assert(eq(int,
                 check_pod("apiVersion: v1\nkind: Pod\nspec:\n  priority: 'x'\n  containers: [{name: c}]\n"
                           "metadata:\n  name: p\n  labels: {b: 2, a: 1}\n"),
                 -EINVAL));
    cr_expect(eq(str, err.field, "metadata.labels.a"));
    cr_expect(eq(int, err.line, 8));
}

Test(type_check, an_error_of_a_self_decoding_type_ends_decoding_and_wins)
{
    cr_assert(eq(int,
                 check_pod("apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {a: 1}}\n"
                           "spec:\n  containers: [{name: c, resources: {limits: {cpu: 1Gb}}}]\n"),
                 -EINVAL));
    cr_expect(eq(str, err.field, "spec.containers[0].resources.limits.cpu"));
    cr_expect(eq(str, err.msg,
                 PREFIX "quantities must match the regular expression "
                        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"));
    cr_assert(eq(int, check_pod(POD("spec:\n  containers: [{name: c, resources: {limits: {cpu: 1Ge}}}]\n")),
                 -EINVAL));
    cr_expect(eq(str, err.msg, PREFIX "unable to parse quantity's suffix"));
}

Test(type_check, int_or_string_and_time_report_the_inner_value_with_the_outer_context)
{
    cr_assert(eq(
        int, check_pod(POD("spec:\n  containers: [{name: c, livenessProbe: {tcpSocket: {port: true}}}]\n")),
        -EINVAL));
    cr_expect(eq(str, err.msg,
                 PREFIX "json: cannot unmarshal bool into Go struct field "
                        "TCPSocketAction.spec.containers.livenessProbe.tcpSocket.port of type int32"));
    cr_assert(eq(int, check_pod(POD("status: {startTime: 1}\n")), -EINVAL));
    cr_expect(eq(str, err.msg,
                 PREFIX
                 "json: cannot unmarshal number into Go struct field PodStatus.status.startTime of type "
                 "string"));
    cr_assert(eq(int, check_pod(POD("status: {startTime: '2024-05-01T08:00'}\n")), -EINVAL));
    cr_expect(eq(str, err.msg,
                 PREFIX "parsing time \"2024-05-01T08:00\" as \"2006-01-02T15:04:05Z07:00\": cannot parse "
                        "\"\" as \":\""));
    cr_assert(eq(int, check_pod(POD("status: {startTime: '2024-05-01T08:00:00Zoops'}\n")), -EINVAL));
    cr_expect(eq(str, err.msg, PREFIX "parsing time \"2024-05-01T08:00:00Zoops\": extra text: \"oops\""));
    cr_assert(eq(int, check_pod(POD("status: {startTime: '2024-05-01T25:00:00Z'}\n")), -EINVAL));
    cr_expect(eq(str, err.msg, PREFIX "parsing time \"2024-05-01T25:00:00Z\": hour out of range"));
}

/* time.Parse(time.RFC3339, ...)'s errors, element by element (Go's time package). */
Test(type_check, rfc3339_errors_name_the_element_that_failed)
{
    static const struct {
        const char *text, *msg; /* msg NULL: it parses */
    } cases[] = {
        {"24-05-01T08:00:00Z",
         " as \"2006-01-02T15:04:05Z07:00\": cannot parse \"24-05-01T08:00:00Z\" as \"2006\""},
        {"2024/05/01T08:00:00Z",
         " as \"2006-01-02T15:04:05Z07:00\": cannot parse \"/05/01T08:00:00Z\" as \"-\""},
        {"2024-5-01T08:00:00Z",
         " as \"2006-01-02T15:04:05Z07:00\": cannot parse \"5-01T08:00:00Z\" as \"01\""},
        {"2024-13-01T08:00:00Z", ": month out of range"},
        {"2024-05-01 08:00:00Z", " as \"2006-01-02T15:04:05Z07:00\": cannot parse \" 08:00:00Z\" as \"T\""},
        {"2024-05-01T8:00:00Z", NULL},
        {"2024-05-01T08:60:00Z", ": minute out of range"},
        {"2024-05-01T08:00:00+0100",
         " as \"2006-01-02T15:04:05Z07:00\": cannot parse \"+0100\" as \"Z07:00\""},
        {"2024-05-01T08:00:00.Z", " as \"2006-01-02T15:04:05Z07:00\": cannot parse \".Z\" as \"Z07:00\""},
        {"2024-05-01T08:00:00.123+01:00", NULL},
        {"2024-02-29T08:00:00Z", NULL},
        {"2024-06-31T08:00:00Z", ": day out of range"},
        {"2024-06-00T08:00:00Z", ": day out of range"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char yaml[200], want[320];
        snprintf(yaml, sizeof(yaml), POD("status: {startTime: '%s'}\n"), cases[i].text);
        int rc = check_pod(yaml);
        if (!cases[i].msg) {
            cr_expect(eq(int, rc, 0), "%s: %s", cases[i].text, err.msg);
            continue;
        }
        cr_expect(eq(int, rc, -EINVAL), "%s", cases[i].text);
        snprintf(want, sizeof(want), PREFIX "parsing time \"%s\"%s", cases[i].text, cases[i].msg);
        cr_expect(eq(str, err.msg, want));
    }
}

Test(type_check, a_float_json_cannot_hold_fails_the_conversion)
{
    cr_assert(eq(int, check_pod(POD("spec:\n  priority: .inf\n  containers: [{name: c}]\n")), -EINVAL));
    cr_expect(eq(str, err.msg, PREFIX "error converting YAML to JSON: json: unsupported value: +Inf"));
}
