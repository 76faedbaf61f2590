/*
 * test_podgroup_decode.c - PodGroup and Workload (scheduling.k8s.io/v1beta1) decoded with the
 * API server's validation (api/decode_podgroup.c): what scheduling reads, and the first
 * error of each invalid object with its path, under v1.37's gates.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/decode.h"
#include "ksched/internal/features.h"
#include "ksched/loader.h"
#include "ksched/workload_types.h"

#include <errno.h>
#include <string.h>

static void init(void)
{
    cr_assert_eq(ks_api_init(), 0);
}

TestSuite(podgroup_decode, .init = init);

#define PG(spec)                                                                                             \
    "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: pg, namespace: ns}\n" spec

static int decode_pg(const char *text, struct ks_pod_group **out, struct ks_error *err)
{
    struct ks_yaml_stream *st;
    cr_assert_eq(ks_yaml_parse("pg.yaml", text, strlen(text), &st, err), 0, "%s", err->msg);
    int rc = ks_decode_pod_group("pg.yaml", st->docs[0], out, err);
    ks_yaml_stream_destroy(st);
    return rc;
}

static int decode_wl(const char *text, struct ks_workload **out, struct ks_error *err)
{
    struct ks_yaml_stream *st;
    cr_assert_eq(ks_yaml_parse("wl.yaml", text, strlen(text), &st, err), 0, "%s", err->msg);
    int rc = ks_decode_workload("wl.yaml", st->docs[0], out, err);
    ks_yaml_stream_destroy(st);
    return rc;
}

Test(podgroup_decode, a_gang_and_a_basic_group)
{
    struct ks_pod_group *pg = NULL;
    struct ks_error err = {0};

    cr_assert_eq(
        decode_pg(PG("spec:\n  workloadRef: {workloadName: train, templateName: workers}\n"
                     "  schedulingPolicy: {gang: {minCount: 4}}\n  priority: 100\n"
                     "status:\n  conditions:\n  - {type: PodGroupInitiallyScheduled, status: 'True', "
                     "reason: Scheduled, message: ok, observedGeneration: 2}\n"),
                  &pg, &err),
        0, "%s: %s", err.field, err.msg);
    cr_expect_eq(pg->spec.policy, KS_POD_GROUP_GANG);
    cr_expect_eq(pg->spec.min_count, 4);
    cr_expect_eq(pg->spec.topology_key, KS_ID_NONE);
    cr_expect_not(pg->spec.disrupt_all);
    cr_expect(pg->spec.has_priority);
    cr_expect_eq(pg->spec.priority, 100);
    cr_expect_str_eq(pg->workload_name, "train");
    cr_expect_str_eq(pg->template_name, "workers");
    cr_assert_eq(pg->nconditions, 1);
    cr_expect_str_eq(pg->conditions[0].type, "PodGroupInitiallyScheduled");
    cr_expect_str_eq(pg->conditions[0].status, "True");
    cr_expect_eq(pg->conditions[0].observed_generation, 2);
    ks_pod_group_destroy(pg);

    cr_assert_eq(
        decode_pg(PG("spec:\n  schedulingPolicy: {basic: {}}\n  disruptionMode: {all: {}}\n"), &pg, &err), 0,
        "%s: %s", err.field, err.msg);
    cr_expect_eq(pg->spec.policy, KS_POD_GROUP_BASIC);
    cr_expect_eq(pg->spec.min_count, 1);
    cr_expect(pg->spec.disrupt_all);
    ks_pod_group_destroy(pg);
}

static void pg_fails(const char *text, const char *field, const char *msg)
{
    struct ks_pod_group *pg = NULL;
    struct ks_error err = {0};
    cr_assert_eq(decode_pg(text, &pg, &err), -EINVAL, "%s", text);
    cr_expect_str_eq(err.field, field, "%s", text);
    cr_expect_str_eq(err.msg, msg, "%s", text);
    cr_expect_null(pg);
}

Test(podgroup_decode, invalid_groups_fail_with_the_api_servers_first_error)
{
    pg_fails(PG(""), "spec.schedulingPolicy", "Invalid value: \"\": must specify one of: `basic`, `gang`");
    pg_fails(PG("spec:\n  schedulingPolicy: {basic: {}, gang: {minCount: 2}}\n"), "spec.schedulingPolicy",
             "Invalid value: \"{basic, gang}\": must specify exactly one of: `basic`, `gang`");
    pg_fails(PG("spec:\n  schedulingPolicy: {gang: {}}\n"), "spec.schedulingPolicy.gang.minCount",
             "Required value");
    pg_fails(PG("spec:\n  schedulingPolicy: {gang: {minCount: -2}}\n"), "spec.schedulingPolicy.gang.minCount",
             "Invalid value: -2: must be greater than or equal to 1");
    pg_fails(
        PG("spec:\n  schedulingPolicy: {basic: {}}\n  schedulingConstraints: {topology: [{key: rack}]}\n"),
        "spec.schedulingConstraints", "Forbidden");
    pg_fails(PG("spec:\n  parentCompositePodGroupName: parent\n  schedulingPolicy: {basic: {}}\n"),
             "spec.parentCompositePodGroupName", "Forbidden");
    pg_fails(PG("spec:\n  schedulingPolicy: {basic: {}}\n  preemptionPolicy: Never\n"),
             "spec.preemptionPolicy", "Forbidden");
    pg_fails(PG("spec:\n  workloadRef: {workloadName: train}\n  schedulingPolicy: {basic: {}}\n"),
             "spec.workloadRef.templateName", "Required value");
    pg_fails(PG("spec:\n  schedulingPolicy: {basic: {}}\n  disruptionMode: {}\n"), "spec.disruptionMode",
             "Invalid value: \"\": must specify one of: `single`, `all`");
    pg_fails(PG("spec:\n  schedulingPolicy: {basic: {}}\n  priority: 1000000001\n"), "spec.priority",
             "Invalid value: 1000000001: must be less than or equal to 1000000000");
    pg_fails(
        "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: Bad_Name}\n"
        "spec: {schedulingPolicy: {basic: {}}}\n",
        "metadata.name",
        "Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
        "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
        "regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
}

/* An absent spec or policy is reported at a line of the input (the document's, the spec's), never line 0. */
Test(podgroup_decode, a_missing_spec_or_policy_is_reported_at_a_line_of_the_input)
{
    struct ks_pod_group *pg = NULL;
    struct ks_error err = {0};
    cr_assert_eq(
        decode_pg("apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g}\n", &pg, &err),
        -EINVAL);
    cr_expect_eq(err.line, 1);
    err = (struct ks_error){0};
    cr_assert_eq(decode_pg("apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g}\n"
                           "spec:\n  priority: 3\n",
                           &pg, &err),
                 -EINVAL);
    cr_expect_eq(err.line, 5);
    cr_expect_str_eq(err.field, "spec.schedulingPolicy");
}

#define WL(spec)                                                                                             \
    "apiVersion: scheduling.k8s.io/v1beta1\nkind: Workload\nmetadata: {name: train, namespace: ns}\n" spec

static void wl_fails(const char *text, const char *field, const char *msg)
{
    struct ks_workload *w = NULL;
    struct ks_error err = {0};
    cr_assert_eq(decode_wl(text, &w, &err), -EINVAL, "%s", text);
    cr_expect_str_eq(err.field, field, "%s", text);
    cr_expect_str_eq(err.msg, msg, "%s", text);
}

Test(podgroup_decode, workloads_and_their_templates)
{
    struct ks_workload *w = NULL;
    struct ks_error err = {0};

    cr_assert_eq(decode_wl(WL("spec:\n  controllerRef: {apiGroup: batch, kind: Job, name: train}\n"
                              "  podGroupTemplates:\n  - {name: leader, schedulingPolicy: {basic: {}}}\n"
                              "  - {name: workers, schedulingPolicy: {gang: {minCount: 8}}}\n"),
                           &w, &err),
                 0, "%s: %s", err.field, err.msg);
    cr_assert_eq(w->ntemplates, 2);
    cr_expect_str_eq(w->templates[1].name, "workers");
    cr_expect_eq(w->templates[1].spec.min_count, 8);
    cr_expect(w->has_controller);
    cr_expect_str_eq(w->controller_kind, "Job");
    ks_workload_destroy(w);

    wl_fails(WL("spec: {}\n"), "spec",
             "Invalid value: \"\": must specify one of: `podGroupTemplates`, `compositePodGroupTemplates`");
    wl_fails(WL("spec:\n  podGroupTemplates:\n  - {name: a, schedulingPolicy: {basic: {}}}\n"
                "  - {name: a, schedulingPolicy: {basic: {}}}\n"),
             "spec.podGroupTemplates[1].name", "Duplicate value: \"a\"");
    wl_fails(WL("spec:\n  podGroupTemplates:\n  - {name: a, schedulingPolicy: {basic: {}}, priority: 1}\n"
                "  - {name: b, schedulingPolicy: {basic: {}}}\n"),
             "spec", "Invalid value: null: detected multiple priority configurations");
    wl_fails(WL("spec:\n  podGroupTemplates:\n  - {name: A, schedulingPolicy: {basic: {}}}\n"),
             "spec.podGroupTemplates[0].name",
             "Invalid value: \"A\": a lowercase RFC 1123 label must consist of lower case alphanumeric "
             "characters or "
             "'-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
             "regex used "
             "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
    wl_fails(WL("spec:\n  controllerRef: {kind: Job}\n  podGroupTemplates:\n"
                "  - {name: a, schedulingPolicy: {basic: {}}}\n"),
             "spec.controllerRef.name", "Required value");
}

/* A pod's spec.schedulingGroup: ignored with GenericWorkload off (v1.37's default), read and validated on. */
#define MEMBER(group)                                                                                        \
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec:\n  containers: [{name: c, image: " \
    "x}]\n  schedulingGroup: " group "\n"

static int decode_pod(const char *text, struct ks_pod **out, struct ks_error *err)
{
    struct ks_yaml_stream *st;
    void *obj = NULL;
    cr_assert_eq(ks_yaml_parse("pod.yaml", text, strlen(text), &st, err), 0, "%s", err->msg);
    int rc = ks_object_decode_as("pod.yaml", st->docs[0], KS_KIND_POD, &obj, err);
    ks_yaml_stream_destroy(st);
    *out = obj;
    return rc;
}

Test(podgroup_decode, a_pods_scheduling_group_needs_the_gate)
{
    struct ks_pod *pod = NULL;
    struct ks_error err = {0};

    cr_assert_eq(decode_pod(MEMBER("{podGroupName: trainers}"), &pod, &err), 0, "%s", err.msg);
    cr_expect_null(pod->scheduling_group);
    ks_pod_destroy(pod);
    ks__features_force(KS_FEATURE_GENERIC_WORKLOAD, true);
    cr_assert_eq(decode_pod(MEMBER("{podGroupName: trainers}"), &pod, &err), 0, "%s", err.msg);
    cr_expect_str_eq(pod->scheduling_group, "trainers");
    ks_pod_destroy(pod);
    cr_expect_eq(decode_pod(MEMBER("{}"), &pod, &err), -EINVAL);
    cr_expect_str_eq(err.field, "spec.schedulingGroup.podGroupName");
    cr_expect_str_eq(err.msg, "Required value");
    cr_expect_eq(decode_pod(MEMBER("{podGroupName: Trainers}"), &pod, &err), -EINVAL);
    cr_expect_str_eq(err.field, "spec.schedulingGroup.podGroupName");
    ks_features_reset();
}

/* The loader decodes PodGroups and Workloads with the gate on, and skips them with it off. */
Test(podgroup_decode, the_loader_reads_groups_only_with_the_gate)
{
    static const char text[] = PG("spec: {schedulingPolicy: {gang: {minCount: 2}}}\n");
    static const char typed[] = PG("spec: {schedulingPolicy: {gang: {minCount: two}}}\n");
    struct ks_objects *objs = NULL;
    struct ks_error err = {0};

    cr_assert_eq(ks_objects_load_buffer("pg.yaml", text, strlen(text), &objs, &err), 0, "%s", err.msg);
    cr_expect_eq(objs->of[KS_KIND_POD_GROUP].n, 0);
    cr_expect_eq(objs->nnotes, 1);
    ks_objects_destroy(objs);
    ks__features_force(KS_FEATURE_GENERIC_WORKLOAD, true);
    cr_assert_eq(ks_objects_load_buffer("pg.yaml", text, strlen(text), &objs, &err), 0, "%s", err.msg);
    cr_assert_eq(objs->of[KS_KIND_POD_GROUP].n, 1);
    const struct ks_pod_group *pg = objs->of[KS_KIND_POD_GROUP].items[0];
    cr_expect_eq(pg->spec.min_count, 2);
    ks_objects_destroy(objs);
    cr_expect_eq(ks_objects_load_buffer("pg.yaml", typed, strlen(typed), &objs, &err), -EINVAL);
    cr_expect_not_null(strstr(err.msg, "cannot unmarshal string into Go struct field"), "%s", err.msg);
    ks_features_reset();
}
