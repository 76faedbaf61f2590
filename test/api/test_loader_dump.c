/*
 * test_loader_dump.c - what a cluster dump needs from the loader: objects that bound pods name
 * and the input lacks are summed up in one note, not errors; a pending pod's missing claim is
 * left to the scheduler; priority comes from spec.priority whatever the class; a List's
 * objects, loaded as they are parsed, keep their input order among other documents.
 */
#include <criterion/criterion.h>

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/loader.h"

#include <errno.h>
#include <string.h>

static void init(void)
{
    cr_assert_eq(ks_api_init(), 0);
}

TestSuite(loader_dump, .init = init);

#define POD(name, extra)                                                                                     \
    "apiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: ns}\n"                                 \
    "spec:\n  containers: [{name: c}]\n" extra

/* the same pod as an item of a List's items; @extra: spec fields indented by four */
#define ITEM(name, extra)                                                                                    \
    "- apiVersion: v1\n  kind: Pod\n  metadata: {name: " name ", namespace: ns}\n"                           \
    "  spec:\n    containers: [{name: c}]\n" extra

#define CLAIM(claim) "  volumes: [{name: v, persistentVolumeClaim: {claimName: " claim "}}]\n"

static struct ks_objects *load_ok(const char *yaml)
{
    struct ks_objects *objs = NULL;
    struct ks_error err = {0};
    int rc = ks_objects_load_buffer("dump.yaml", yaml, strlen(yaml), &objs, &err);
    cr_assert_eq(rc, 0, "load failed: %s:%d: %s: %s", err.file, err.line, err.field, err.msg);
    return objs;
}

static const struct ks_pod *pod(const struct ks_objects *objs, uint32_t i)
{
    cr_assert_lt(i, ks_objects_count(objs, POD));
    return ks_objects_pods(objs)[i];
}

Test(loader_dump, bound_pods_missing_objects_make_one_note)
{
    /* clang-format off */
    static const char yaml[] =
        POD("a", "  nodeName: n1\n" CLAIM("data-a"))
        "---\n"
        POD("b", "  nodeName: n1\n  priorityClassName: gold\n"
                 "  volumes:\n"
                 "  - {name: v, persistentVolumeClaim: {claimName: data-a}}\n"
                 "  - {name: w, persistentVolumeClaim: {claimName: data-b}}\n")
        "---\n"
        POD("c", "  nodeName: n1\n" CLAIM("here"))
        "---\n"
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: here, namespace: ns}\n"
        "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n";
    /* clang-format on */
    struct ks_objects *objs = load_ok(yaml);
    cr_expect_eq(ks_objects_count(objs, POD), 3);
    cr_assert_eq(objs->nnotes, 1);
    /* two pods, three distinct objects (data-a twice), the first in input order */
    cr_expect_str_eq(objs->notes[0], "2 bound pods name objects the input lacks, kept as bound: "
                                     "PersistentVolumeClaim \"ns/data-a\" (and 2 more)");
    cr_expect_eq(pod(objs, 1)->priority, 0); /* an unknown class and no spec.priority */
    ks_objects_destroy(objs);
}

Test(loader_dump, one_missing_object_is_named_alone)
{
    struct ks_objects *objs = load_ok(POD("a", "  nodeName: n1\n  priorityClassName: gold\n"));
    cr_assert_eq(objs->nnotes, 1);
    cr_expect_str_eq(objs->notes[0],
                     "1 bound pod names an object the input lacks, kept as bound: PriorityClass \"gold\"");
    ks_objects_destroy(objs);
}

Test(loader_dump, a_pending_pods_missing_claim_is_the_schedulers_business)
{
    struct ks_objects *objs = load_ok(POD("p", CLAIM("data-p")));
    cr_expect_eq(ks_objects_count(objs, POD), 1);
    cr_expect_eq(objs->nnotes, 0);
    ks_objects_destroy(objs);
}

Test(loader_dump, spec_priority_is_enough_without_the_class)
{
    struct ks_objects *objs =
        load_ok(POD("p", "  priority: 1000000\n  priorityClassName: high\n") "---\n" POD(
            "b", "  nodeName: n1\n  priority: 7\n  priorityClassName: high\n"));
    cr_expect_eq(pod(objs, 0)->priority, 1000000);
    cr_expect_eq(pod(objs, 1)->priority, 7);
    cr_expect_eq(objs->nnotes, 0); /* the scheduler reads spec.priority only */
    ks_objects_destroy(objs);
}

Test(loader_dump, a_pending_pod_of_an_unknown_class_without_priority_is_refused)
{
    const char *yaml = POD("p", "  priorityClassName: gold\n");
    struct ks_objects *objs = NULL;
    struct ks_error err = {0};
    cr_expect_eq(ks_objects_load_buffer("dump.yaml", yaml, strlen(yaml), &objs, &err), -EINVAL);
    cr_expect_null(objs);
    cr_expect_str_eq(err.field, "spec.priorityClassName");
    cr_expect_str_eq(err.msg, "no PriorityClass with name gold was found");
}

Test(loader_dump, finished_pods_are_not_checked)
{
    struct ks_objects *objs =
        load_ok(POD("p", "  priorityClassName: gold\n" CLAIM("gone") "status: {phase: Succeeded}\n"));
    cr_expect_eq(objs->nnotes, 0);
    ks_objects_destroy(objs);
}

Test(loader_dump, list_objects_keep_input_order)
{
    /* kubectl's key order (items before kind), a List between documents, a List with an
     * anchor (its objects from there on load with the document) */
    /* clang-format off */
    static const char yaml[] =
        POD("a", "")
        "---\napiVersion: v1\nitems:\n" ITEM("b", "") ITEM("c", "") "kind: List\nmetadata: {}\n"
        "---\n" POD("d", "")
        "---\napiVersion: v1\nkind: PodList\nitems:\n"
        ITEM("e", "    nodeSelector: &sel {disk: ssd}\n")
        ITEM("f", "    nodeSelector: *sel\n");
    /* clang-format on */
    struct ks_objects *objs = load_ok(yaml);
    const char *want[] = {"a", "b", "c", "d", "e", "f"};
    cr_assert_eq(ks_objects_count(objs, POD), 6);
    for (uint32_t i = 0; i < 6; i++)
        cr_expect_str_eq(pod(objs, i)->meta.name, want[i]);
    cr_expect_eq(pod(objs, 5)->node_selector.n, 1);
    ks_objects_destroy(objs);
}

Test(loader_dump, list_item_errors_name_their_index)
{
    static const char yaml[] = "apiVersion: v1\nitems:\n" ITEM("a", "")
        ITEM("b", "") "- apiVersion: v1\n  kind: Pod\n  metadata: {}\n"
                      "kind: List\n";
    struct ks_objects *objs = NULL;
    struct ks_error err = {0};
    cr_expect_eq(ks_objects_load_buffer("dump.yaml", yaml, strlen(yaml), &objs, &err), -EINVAL);
    cr_expect_str_eq(err.field, "items[2].metadata.name");
}

Test(loader_dump, only_a_list_has_items)
{
    static const char yaml[] = "apiVersion: v1\nitems:\n" ITEM(
        "a", "") "kind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: c}]}\n";
    struct ks_objects *objs = NULL;
    struct ks_error err = {0};
    cr_expect_eq(ks_objects_load_buffer("dump.yaml", yaml, strlen(yaml), &objs, &err), -EINVAL);
    cr_expect_null(objs);
    cr_expect_eq(err.line, 3); /* where the items start */
    cr_expect_str_eq(err.field, "items");
    cr_expect_str_eq(err.msg, "a Pod has no items (only a List has)");
}
