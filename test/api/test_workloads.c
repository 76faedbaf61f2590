/*
 * test_workloads.c - Services, ReplicationControllers, ReplicaSets and StatefulSets load
 * with the selectors default spreading reads (api/decode_workloads.c), with the API
 * server's defaulting (a ReplicationController's selector from its template) and
 * validation (selectors required and not empty).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/loader.h"

#include "fakes/load_text.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static struct ks_objects *objs;

static void load_workloads(void)
{
    const char *path = KS_TEST_DATA_DIR "/good/workloads.yaml";
    struct ks_error err = {0};
    cr_assert_eq(ks_api_init(), 0);
    int rc = ks_objects_load(&path, 1, &objs, &err);
    cr_assert_eq(rc, 0, "load failed: %s:%d: %s: %s", err.file, err.line, err.field, err.msg);
}

static void unload(void)
{
    ks_objects_destroy(objs);
    objs = NULL;
}

static const void *find(enum ks_kind kind, const char *name)
{
    for (uint32_t i = 0; i < objs->of[kind].n; i++) {
        const struct ks_object_meta *m = objs->of[kind].items[i];
        if (strcmp(m->name, name) == 0)
            return m;
    }
    cr_fatal("no %s named %s", ks_kind_name(kind), name);
    return NULL;
}

static const char *label(const struct ks_labels *l, const char *key)
{
    uint32_t v;
    return ks_labels_get(l, ks_intern(key), &v) ? ks_intern_str(v) : NULL;
}

TestSuite(workloads, .init = load_workloads, .fini = unload);

Test(workloads, counts_and_kind_names)
{
    cr_expect(eq(u32, ks_objects_count(objs, SERVICE), 3));
    cr_expect(eq(u32, ks_objects_count(objs, REPLICATION_CONTROLLER), 2));
    cr_expect(eq(u32, ks_objects_count(objs, REPLICA_SET), 1));
    cr_expect(eq(u32, ks_objects_count(objs, STATEFUL_SET), 1));
    cr_expect(eq(str, (char *)ks_kind_name(KS_KIND_SERVICE), "Service"));
    cr_expect(eq(str, (char *)ks_kind_name(KS_KIND_REPLICATION_CONTROLLER), "ReplicationController"));
    cr_expect(eq(str, (char *)ks_kind_name(KS_KIND_REPLICA_SET), "ReplicaSet"));
    cr_expect(eq(str, (char *)ks_kind_name(KS_KIND_STATEFUL_SET), "StatefulSet"));
}

Test(workloads, service_selectors_nil_empty_and_set)
{
    const struct ks_service *web = find(KS_KIND_SERVICE, "web");
    cr_expect(eq(u32, web->meta.namespace_id, ks_intern("shop")));
    cr_expect(web->has_selector);
    cr_expect(eq(u32, web->selector.n, 1));
    cr_expect(eq(str, (char *)label(&web->selector, "app"), "web"));

    const struct ks_service *headless = find(KS_KIND_SERVICE, "headless");
    cr_expect(eq(u32, headless->meta.namespace_id, ks_intern("default")));
    cr_expect(not(headless->has_selector), "a missing selector is nil");

    const struct ks_service *all = find(KS_KIND_SERVICE, "everything");
    cr_expect(all->has_selector, "{} is an empty selector, not a nil one");
    cr_expect(eq(u32, all->selector.n, 0));
}

Test(workloads, replication_controller_selector_defaults_to_template_labels)
{
    const struct ks_replication_controller *rc = find(KS_KIND_REPLICATION_CONTROLLER, "rc-explicit");
    cr_expect(eq(u32, rc->selector.n, 2));
    cr_expect(eq(str, (char *)label(&rc->selector, "tier"), "front"));

    const struct ks_replication_controller *legacy = find(KS_KIND_REPLICATION_CONTROLLER, "rc-defaulted");
    cr_expect(eq(u32, legacy->selector.n, 1));
    cr_expect(eq(str, (char *)label(&legacy->selector, "app"), "legacy"));
}

Test(workloads, replica_set_and_stateful_set_label_selectors)
{
    const struct ks_replica_set *rs = find(KS_KIND_REPLICA_SET, "web-5d8f");
    cr_assert_not_null(rs->selector);
    cr_expect(eq(u32, rs->selector->nreqs, 2));

    struct ks_label items[2] = {{ks_intern("app"), ks_intern("web")},
                                {ks_intern("pod-template-hash"), ks_intern("5d8f")}};
    if (items[0].key > items[1].key) {
        struct ks_label t = items[0];
        items[0] = items[1];
        items[1] = t;
    }
    struct ks_labels pod = {2, items};
    cr_expect(ks_label_selector_matches(rs->selector, &pod));
    struct ks_labels other = {1, &(struct ks_label){ks_intern("app"), ks_intern("web")}};
    cr_expect(not(ks_label_selector_matches(rs->selector, &other)), "the In expression is required");

    const struct ks_stateful_set *ss = find(KS_KIND_STATEFUL_SET, "db");
    cr_assert_not_null(ss->selector);
    cr_expect(eq(u32, ss->selector->nreqs, 1));
    cr_expect(eq(u32, ss->meta.namespace_id, ks_intern("default")));
}

/* Load @yaml from a temporary file; returns the loader's code and fills @err. */
static int load_text(const char *yaml, struct ks_error *err)
{
    struct ks_objects *o = NULL;
    int rc = ks_test_load_text(yaml, KS_VALIDATE_WARN, &o, err);
    ks_objects_destroy(o);
    return rc;
}

Test(workloads, rejects_missing_and_empty_selectors)
{
    static const struct {
        const char *yaml, *field, *msg;
    } cases[] = {
        {"apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: a}\nspec: {replicas: 1}\n", "spec.selector",
         "Required value"},
        {"apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: a}\nspec:\n  selector: {}\n",
         "spec.selector", "Invalid value: {}: empty selector is invalid for deployment"},
        {"apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: a}\n", "spec", "Required value"},
        {"apiVersion: v1\nkind: ReplicationController\nmetadata: {name: a}\nspec:\n  template: {metadata: "
         "{labels: {}}}\n",
         "spec.selector", "Required value"},
        {"apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: a}\nspec:\n  selector:\n    "
         "matchExpressions:\n"
         "    - {key: app, operator: Bogus}\n",
         NULL, NULL},
        {"apiVersion: apps/v1beta2\nkind: StatefulSet\nmetadata: {name: a}\n", NULL,
         "unsupported apiVersion"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ks_error err = {0};
        cr_expect(eq(int, load_text(cases[i].yaml, &err), -EINVAL), "case %zu", i);
        if (cases[i].field)
            cr_expect(eq(str, err.field, (char *)cases[i].field), "case %zu: %s", i, err.msg);
        if (cases[i].msg)
            cr_expect(strstr(err.msg, cases[i].msg) != NULL, "case %zu: %s", i, err.msg);
    }
}
