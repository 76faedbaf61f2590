/*
 * test_podgroup_status.c - the PodGroupInitiallyScheduled condition `ksched serve` writes after
 * a PodGroup cycle (serve/serve_podgroup.c), as updatePodGroupCondition and
 * util.PatchPodGroupStatus of kube-scheduler v1.37 write it: a two-way strategic merge patch
 * of the status, observedGeneration the object's generation, nothing when nothing changes,
 * never from True back to False.
 */
#include <criterion/criterion.h>

#include "serve.h"

#include "ksched/internal/scheduler.h"
#include "ksched/workload_types.h"

#include <stdlib.h>
#include <string.h>

#define NOW (INT64_C(1700000000) * 1000000000)

static struct ks_group_attempt outcome(bool ok, bool error, const char *message)
{
    return (struct ks_group_attempt){.name = "g", .ok = ok, .error = error, .message = message};
}

Test(podgroup_status, first_condition_is_added_whole)
{
    struct ks_pod_group pg = {.generation = 1};
    struct ks_group_attempt g = outcome(false, false,
                                        "pod group is unschedulable, minCount (3) cannot be "
                                        "satisfied: 2 scheduled, 0 remaining");
    size_t len;
    char *p = ks_serve_pod_group_patch(&pg, &g, NOW, &len);
    cr_assert_not_null(p);
    cr_expect_str_eq(
        p, "{\"status\":{\"$setElementOrder/conditions\":[{\"type\":\"PodGroupInitiallyScheduled\"}],"
           "\"conditions\":[{\"lastTransitionTime\":\"2023-11-14T22:13:20Z\",\"message\":\"pod group is "
           "unschedulable, minCount (3) cannot be satisfied: 2 scheduled, 0 remaining\","
           "\"observedGeneration\":1,\"reason\":\"Unschedulable\",\"status\":\"False\","
           "\"type\":\"PodGroupInitiallyScheduled\"}]}}");
    free(p);
}

Test(podgroup_status, only_what_changed_is_sent)
{
    struct ks_pod_group_condition conds[] = {
        {.type = "Other", .status = "True"},
        {.type = "PodGroupInitiallyScheduled",
         .status = "False",
         .reason = "Unschedulable",
         .message = "m1",
         .observed_generation = 2},
    };
    struct ks_pod_group pg = {.generation = 2, .nconditions = 2, .conditions = conds};
    size_t len;
    struct ks_group_attempt g = outcome(false, false, "m1");
    cr_expect_null(ks_serve_pod_group_patch(&pg, &g, NOW, &len), "nothing changes");

    g = outcome(false, false, "m2");
    char *p = ks_serve_pod_group_patch(&pg, &g, NOW, &len);
    cr_assert_not_null(p);
    cr_expect_str_eq(p, "{\"status\":{\"$setElementOrder/conditions\":[{\"type\":\"Other\"},{\"type\":"
                        "\"PodGroupInitiallyScheduled\"}],\"conditions\":[{\"message\":\"m2\",\"type\":"
                        "\"PodGroupInitiallyScheduled\"}]}}");
    free(p);

    /* an error: the reason, not the status, changes */
    g = outcome(false, true, "m1");
    p = ks_serve_pod_group_patch(&pg, &g, NOW, &len);
    cr_assert_not_null(p);
    cr_expect_str_eq(
        p, "{\"status\":{\"$setElementOrder/conditions\":[{\"type\":\"Other\"},{\"type\":"
           "\"PodGroupInitiallyScheduled\"}],\"conditions\":[{\"reason\":\"SchedulerError\",\"type\":"
           "\"PodGroupInitiallyScheduled\"}]}}");
    free(p);

    /* scheduled: status, reason, message and the transition time; a new generation is observed */
    pg.generation = 3;
    g = outcome(true, false, NULL);
    p = ks_serve_pod_group_patch(&pg, &g, NOW, &len);
    cr_assert_not_null(p);
    cr_expect_str_eq(
        p, "{\"status\":{\"$setElementOrder/conditions\":[{\"type\":\"Other\"},{\"type\":"
           "\"PodGroupInitiallyScheduled\"}],\"conditions\":[{\"lastTransitionTime\":"
           "\"2023-11-14T22:13:20Z\",\"message\":\"\",\"observedGeneration\":3,\"reason\":\"Scheduled\","
           "\"status\":\"True\",\"type\":\"PodGroupInitiallyScheduled\"}]}}");
    free(p);
}

Test(podgroup_status, scheduled_once_stays_scheduled)
{
    struct ks_pod_group_condition cond = {
        .type = "PodGroupInitiallyScheduled", .status = "True", .reason = "Scheduled", .message = ""};
    struct ks_pod_group pg = {.generation = 1, .nconditions = 1, .conditions = &cond};
    struct ks_group_attempt g = outcome(false, false, "pod group is unschedulable");
    size_t len;
    cr_expect_null(ks_serve_pod_group_patch(&pg, &g, NOW, &len), "no regression from True");
    g = outcome(true, false, NULL);
    char *p = ks_serve_pod_group_patch(&pg, &g, NOW, &len);
    cr_assert_not_null(p, "observedGeneration 0 -> 1");
    cr_expect_not_null(strstr(p, "\"observedGeneration\":1"));
    cr_expect_null(strstr(p, "lastTransitionTime"));
    free(p);
}
