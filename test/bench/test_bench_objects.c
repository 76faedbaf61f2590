/*
 * test_bench_objects.c - createAny's workload objects and the pods that belong to them
 * (bench/harness/bench_objects.c, the keys in bench/harness/bench_workload.c): templates
 * expanded ({{.Index}}, {{.Count}}), objects named, numbered and given uids, a Deployment's
 * ReplicaSet as its controller makes it, pods owned and labelled as the ReplicaSet,
 * StatefulSet and ReplicationController controllers make them, the errors with file, line
 * and field, and the workloads bench/workloads/ holds for them.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "bench.h"
#include "bench_test_load.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORKLOADS KS_TEST_DATA_DIR "/../../bench/workloads/"

TestSuite(bench_objects, .init = bench_test_init);

/* Lines 1-58: templates and a createNodes; the ops follow (first op on line 59). */
static const char head[] =
    "name: T\n"
    "podTemplates:\n"
    "  p: {apiVersion: v1, kind: Pod, metadata: {generateName: p-, labels: {tier: web, app: mine}}, spec: "
    "{containers: [{name: c, image: i}]}}\n"
    "objectTemplates:\n"
    "  deploy:\n"
    "    apiVersion: apps/v1\n"
    "    kind: Deployment\n"
    "    metadata: {name: \"web-{{.Index}}\"}\n"
    "    spec: {replicas: 2, selector: {matchLabels: {app: \"web-{{.Index}}\"}}, template: {metadata: "
    "{labels: "
    "{app: \"web-{{.Index}}\"}}}}\n"
    "  rs:\n"
    "    apiVersion: apps/v1\n"
    "    kind: ReplicaSet\n"
    "    metadata: {generateName: rs-}\n"
    "    spec: {replicas: 3, selector: {matchLabels: {app: rs}}, template: {metadata: {labels: {app: rs}}}}\n"
    "  set:\n"
    "    apiVersion: apps/v1\n"
    "    kind: StatefulSet\n"
    "    metadata: {name: \"db-{{.Index}}\"}\n"
    "    spec: {replicas: 2, serviceName: \"db-{{.Index}}\", selector: {matchLabels: {app: "
    "\"db-{{.Index}}\"}}, "
    "template: {metadata: {labels: {app: \"db-{{.Index}}\"}}}}\n"
    "  svc:\n"
    "    apiVersion: v1\n"
    "    kind: Service\n"
    "    metadata: {name: \"db-{{.Index}}\"}\n"
    "    spec: {clusterIP: None, selector: {app: \"db-{{.Index}}\", of: \"{{ .Count }}\"}}\n"
    "  rc:\n"
    "    apiVersion: v1\n"
    "    kind: ReplicationController\n"
    "    metadata: {name: legacy}\n"
    "    spec: {replicas: 1, selector: {app: legacy}}\n"
    "  badsel:\n"
    "    apiVersion: apps/v1\n"
    "    kind: ReplicaSet\n"
    "    metadata: {name: bad}\n"
    "    spec: {selector: {matchLabels: {app: a}}, template: {metadata: {labels: {app: b}}}}\n"
    "  badact:\n"
    "    apiVersion: v1\n"
    "    kind: Service\n"
    "    metadata: {name: \"x-{{.Name}}\"}\n"
    "  baddeploy:\n"
    "    apiVersion: extensions/v1beta1\n"
    "    kind: Deployment\n"
    "    metadata: {name: d}\n"
    "  pod:\n"
    "    apiVersion: v1\n"
    "    kind: Pod\n"
    "    metadata: {name: p}\n"
    "  badreps:\n"
    "    apiVersion: apps/v1\n"
    "    kind: StatefulSet\n"
    "    metadata: {name: s}\n"
    "    spec: {replicas: -1, selector: {matchLabels: {app: s}}}\n"
    "  bigreps:\n"
    "    apiVersion: apps/v1\n"
    "    kind: ReplicaSet\n"
    "    metadata: {name: r}\n"
    "    spec: {replicas: 2147483648, selector: {matchLabels: {app: r}}, template: {metadata: {labels: {app: "
    "r}}}}\n"
    "workloadTemplate:\n"
    "- {opcode: createNodes, count: 1}\n";
#define FIRST_OP_LINE 59

static int load_ops(const char *ops, struct ks_bench_workload **out, struct ks_error *err)
{
    return load_parts(head, ops, BENCH_TEST_TAIL, out, err);
}

static uint32_t id(const char *s)
{
    return ks_intern(s);
}

/* The value of label @key in @labels, or NULL. */
static const char *label(const struct ks_labels *labels, const char *key)
{
    uint32_t v;
    return ks_labels_get(labels, id(key), &v) ? ks_intern_str(v) : NULL;
}

/* Whether @sel selects the labels key1=value1 (and key2=value2 when given). */
static bool selects(const struct ks_label_selector *sel, const char *k1, const char *v1, const char *k2,
                    const char *v2)
{
    struct ks_label l[2] = {{id(k1), id(v1)}, {k2 ? id(k2) : 0, k2 ? id(v2) : 0}};
    if (k2 && l[1].key < l[0].key) {
        struct ks_label t = l[0];
        l[0] = l[1];
        l[1] = t;
    }
    struct ks_labels set = {k2 ? 2 : 1, l};
    return ks_label_selector_matches(sel, &set);
}

Test(bench_objects, objects_are_expanded_named_numbered_and_given_uids)
{
    struct ks_bench_workload *w = NULL;
    struct ks_error err = {0};
    int rc = load_ops("- {opcode: createAny, template: svc, count: 2, namespace: apps}\n"
                      "- {opcode: createAny, template: set, count: 2, namespace: apps}\n"
                      "- {opcode: createAny, template: rs, countParam: $n}\n"
                      "- {opcode: createAny, template: deploy, count: 1, namespace: apps}\n"
                      "- {opcode: createAny, template: rc}\n",
                      &w, &err);
    cr_assert_eq(rc, 0, "%s:%d: %s: %s", err.file, err.line, err.field, err.msg);
    const struct ks_bench_op *ops = w->ops;
    cr_expect_eq(ops[1].object_kind, KS_KIND_SERVICE);
    cr_expect_eq(ops[2].object_kind, KS_KIND_STATEFUL_SET);
    cr_expect_eq(ops[3].object_kind, KS_KIND_REPLICA_SET);
    cr_expect_not(ops[3].deployment);
    cr_expect_eq(ops[4].object_kind, KS_KIND_REPLICA_SET, "a Deployment's objects are its ReplicaSets");
    cr_expect(ops[4].deployment);
    cr_expect_eq(ops[5].object_kind, KS_KIND_REPLICATION_CONTROLLER);
    cr_expect_not(ops[5].numbered);
    cr_expect_eq(ops[2].object_ns, id("apps"));
    cr_expect_eq(ops[3].object_ns, id("default"));

    struct ks_objects *objs = calloc(1, sizeof(*objs));
    struct ks_bench_owners made[6] = {0};
    static const int64_t counts[] = {0, 2, 2, 2, 1, 1};
    for (int i = 1; i <= 5; i++)
        cr_assert_eq(ks_bench_create_any(&ops[i], w->file, 0, counts[i], objs, &made[i], &err), 0,
                     "op %d: %s:%d: %s: %s", i, err.file, err.line, err.field, err.msg);
    /* a second op of the template goes on from where the first stopped */
    cr_assert_eq(ks_bench_create_any(&ops[3], w->file, 2, 2, objs, &made[0], &err), 0, "%s", err.msg);

    cr_assert_eq(objs->of[KS_KIND_SERVICE].n, 2);
    for (int i = 0; i < 2; i++) {
        const struct ks_service *svc = objs->of[KS_KIND_SERVICE].items[i];
        char want[16];
        snprintf(want, sizeof(want), "db-%d", i);
        cr_expect(eq(str, (char *)svc->meta.name, want), "a name that holds {{.Index}} names the object");
        cr_expect_eq(svc->meta.namespace_id, id("apps"));
        cr_expect(svc->has_selector);
        cr_expect(eq(str, (char *)label(&svc->selector, "app"), want));
        cr_expect(eq(str, (char *)label(&svc->selector, "of"), "2"), "{{.Count}} is the op's count");
        cr_expect_null(svc->meta.uid, "only owners get uids");
    }
    cr_assert_eq(objs->of[KS_KIND_STATEFUL_SET].n, 2);
    const struct ks_stateful_set *s0 = objs->of[KS_KIND_STATEFUL_SET].items[0],
                                 *s1 = objs->of[KS_KIND_STATEFUL_SET].items[1];
    cr_expect(eq(str, (char *)s1->meta.name, "db-1"));
    cr_expect(selects(s1->selector, "app", "db-1", NULL, NULL));
    cr_expect_not(selects(s1->selector, "app", "db-0", NULL, NULL));
    cr_assert_not_null(s0->meta.uid);
    cr_assert_not_null(s1->meta.uid);
    cr_expect_eq(strlen(s0->meta.uid), 36, "%s", s0->meta.uid);
    cr_expect_eq(s0->meta.uid[14], '4', "a version 4 UUID: %s", s0->meta.uid);
    cr_expect(ne(str, (char *)s0->meta.uid, (char *)s1->meta.uid));
    cr_expect_eq(made[2].n, 2);
    cr_expect_eq(made[2].pods, 4);
    cr_expect_eq(made[2].items[1].first, 2);
    cr_expect_eq(made[2].items[1].replicas, 2);
    cr_expect(eq(str, (char *)made[2].items[1].uid, (char *)s1->meta.uid));
    cr_expect_eq(strncmp(made[2].items[1].revision, "db-1-", 5), 0, "%s", made[2].items[1].revision);

    /* ReplicaSets: rs-0, rs-1 (generateName), then the second op's rs-2, rs-3; the Deployment's last */
    cr_assert_eq(objs->of[KS_KIND_REPLICA_SET].n, 5);
    static const char *const rs_names[] = {"rs-0", "rs-1", NULL, "rs-2", "rs-3"};
    for (int i = 0; i < 5; i++) {
        const struct ks_replica_set *rs = objs->of[KS_KIND_REPLICA_SET].items[i];
        if (!rs_names[i])
            continue;
        cr_expect(eq(str, (char *)rs->meta.name, (char *)rs_names[i]));
        cr_expect_eq(rs->meta.namespace_id, id("default"));
        cr_expect_eq(rs->meta.nowners, 0);
    }
    cr_expect_eq(made[3].pods, 6, "two ReplicaSets of three");

    /* the Deployment's ReplicaSet: <deployment>-<pod-template-hash>, controlled by the Deployment */
    const struct ks_replica_set *drs = objs->of[KS_KIND_REPLICA_SET].items[2];
    cr_assert_eq(strncmp(drs->meta.name, "web-0-", 6), 0, "%s", drs->meta.name);
    const char *hash = drs->meta.name + 6;
    cr_expect_gt(strlen(hash), 5);
    cr_expect_eq(strspn(hash, "bcdfghjklmnpqrstvwxz2456789"), strlen(hash), "safe-encoded: %s", hash);
    cr_expect_eq(drs->meta.namespace_id, id("apps"));
    cr_expect(eq(str, (char *)label(&drs->meta.labels, "pod-template-hash"), (char *)hash));
    cr_expect(eq(str, (char *)label(&drs->meta.labels, "app"), "web-0"));
    cr_expect(selects(drs->selector, "app", "web-0", "pod-template-hash", hash));
    cr_expect_not(selects(drs->selector, "app", "web-0", NULL, NULL), "the selector requires the hash");
    cr_assert_eq(drs->meta.nowners, 1);
    const struct ks_owner_ref *ref = &drs->meta.owners[0];
    cr_expect(eq(str, (char *)ref->api_version, "apps/v1"));
    cr_expect(eq(str, (char *)ref->kind, "Deployment"));
    cr_expect(eq(str, (char *)ref->name, "web-0"));
    cr_expect(ref->controller);
    cr_assert_not_null(ref->uid);
    cr_expect(ne(str, (char *)ref->uid, (char *)drs->meta.uid));
    cr_expect_eq(made[4].n, 1);
    cr_expect(eq(str, (char *)made[4].items[0].name, (char *)drs->meta.name));

    const struct ks_replication_controller *rcobj = objs->of[KS_KIND_REPLICATION_CONTROLLER].items[0];
    cr_expect(eq(str, (char *)rcobj->meta.name, "legacy"));
    cr_expect_eq(made[5].pods, 1);

    /* the same objects get the same uids in every run */
    struct ks_objects *again = calloc(1, sizeof(*again));
    cr_assert_eq(ks_bench_create_any(&ops[2], w->file, 0, 2, again, NULL, &err), 0);
    const struct ks_stateful_set *a1 = again->of[KS_KIND_STATEFUL_SET].items[1];
    cr_expect(eq(str, (char *)a1->meta.uid, (char *)s1->meta.uid));

    for (int i = 0; i < 6; i++)
        ks_bench_owners_release(&made[i]);
    ks_objects_destroy(again);
    ks_objects_destroy(objs);
    ks_bench_workload_destroy(w);
}

/* The controlling ownerReference of @pod. */
static const struct ks_owner_ref *controller_of(const struct ks_pod *pod)
{
    for (uint32_t i = 0; i < pod->meta.nowners; i++) {
        if (pod->meta.owners[i].controller)
            return &pod->meta.owners[i];
    }
    return NULL;
}

Test(bench_objects, owned_pods_are_made_as_their_controllers_make_them)
{
    struct ks_bench_workload *w = NULL;
    struct ks_error err = {0};
    int rc = load_ops("- {opcode: createAny, template: deploy, count: 2}\n"
                      "- {opcode: createPods, count: 4, podTemplate: p, owners: deploy}\n"
                      "- {opcode: createAny, template: set, count: 1, namespace: apps}\n"
                      "- {opcode: createPods, count: 2, podTemplate: p, owners: set, namespace: apps}\n"
                      "- {opcode: createAny, template: rc}\n"
                      "- {opcode: createPods, count: 1, podTemplate: p, owners: rc}\n",
                      &w, &err);
    cr_assert_eq(rc, 0, "%s:%d: %s: %s", err.file, err.line, err.field, err.msg);
    cr_expect_eq(w->ops[2].owner_op, 1);
    cr_expect_eq(w->ops[4].owner_op, 3);
    cr_expect_eq(w->ops[6].owner_op, 5);
    cr_expect_eq(w->ops[7].owner_op, -1);

    struct ks_objects *objs = calloc(1, sizeof(*objs));
    struct ks_bench_owners made[7] = {0};
    for (int i = 1; i <= 5; i += 2)
        cr_assert_eq(ks_bench_create_any(&w->ops[i], w->file, 0, i == 1 ? 2 : 1, objs, &made[i], &err), 0,
                     "%s", err.msg);
    struct ks_arena scratch = {0};
    struct ks_pod *pods[4];
    char seen[4][64];

    /* a Deployment's ReplicaSet's pods: two each, in blocks */
    for (uint64_t k = 0; k < 4; k++) {
        const struct ks_bench_owner *o = &made[1].items[k / 2];
        cr_assert_eq(ks_bench_owned_pod(&w->ops[2], w->file, &made[1], k, &scratch, &pods[k], &err), 0,
                     "%s: %s", err.field, err.msg);
        ks_arena_reset(&scratch);
        const struct ks_pod *pod = pods[k];
        size_t len = strlen(o->name);
        cr_expect_eq(strncmp(pod->meta.name, o->name, len), 0, "%s of %s", pod->meta.name, o->name);
        cr_expect_eq(pod->meta.name[len], '-');
        cr_expect_eq(strlen(pod->meta.name + len + 1), 5, "%s", pod->meta.name);
        snprintf(seen[k], sizeof(seen[k]), "%s", pod->meta.name);
        for (uint64_t j = 0; j < k; j++)
            cr_expect(ne(str, seen[j], seen[k]));
        cr_expect_eq(pod->meta.namespace_id, id("default"));
        const char *app = k < 2 ? "web-0" : "web-1";
        cr_expect(eq(str, (char *)label(&pod->meta.labels, "app"), (char *)app), "the owner's labels win");
        cr_expect(eq(str, (char *)label(&pod->meta.labels, "tier"), "web"), "the template's stay");
        cr_expect(eq(str, (char *)label(&pod->meta.labels, "pod-template-hash"), (char *)(o->name + 6)));
        const struct ks_replica_set *rs = objs->of[KS_KIND_REPLICA_SET].items[k / 2];
        cr_expect(ks_label_selector_matches(rs->selector, &pod->meta.labels), "its ReplicaSet selects it");
        const struct ks_owner_ref *ref = controller_of(pod);
        cr_assert_not_null(ref);
        cr_expect_eq(pod->meta.nowners, 1);
        cr_expect(eq(str, (char *)ref->api_version, "apps/v1"));
        cr_expect(eq(str, (char *)ref->kind, "ReplicaSet"));
        cr_expect(eq(str, (char *)ref->name, (char *)rs->meta.name));
        cr_expect(eq(str, (char *)ref->uid, (char *)rs->meta.uid));
        cr_expect_eq(pod->node_name, KS_ID_EMPTY);
    }
    for (int k = 0; k < 4; k++)
        ks_pod_put(pods[k]);
    /* a fifth pod has no owner: two ReplicaSets of two */
    cr_expect_eq(ks_bench_owned_pod(&w->ops[2], w->file, &made[1], 4, &scratch, &pods[0], &err), -EINVAL);
    cr_expect_eq(err.line, FIRST_OP_LINE + 1);
    cr_expect(eq(str, err.field, "owners"));
    cr_expect_not_null(strstr(err.msg, "the 2 objects of deploy take 4 pods"), "%s", err.msg);
    ks_arena_reset(&scratch);

    /* a StatefulSet's: <set>-<ordinal>, with the pod-name, pod-index and revision labels */
    for (uint64_t k = 0; k < 2; k++) {
        err = (struct ks_error){0};
        cr_assert_eq(ks_bench_owned_pod(&w->ops[4], w->file, &made[3], k, &scratch, &pods[k], &err), 0, "%s",
                     err.msg);
        ks_arena_reset(&scratch);
        const struct ks_pod *pod = pods[k];
        char want[16], idx[8];
        snprintf(want, sizeof(want), "db-0-%d", (int)k);
        snprintf(idx, sizeof(idx), "%d", (int)k);
        cr_expect(eq(str, (char *)pod->meta.name, want));
        cr_expect_eq(pod->meta.namespace_id, id("apps"));
        cr_expect(eq(str, (char *)label(&pod->meta.labels, "statefulset.kubernetes.io/pod-name"), want));
        cr_expect(eq(str, (char *)label(&pod->meta.labels, "apps.kubernetes.io/pod-index"), idx));
        cr_expect(eq(str, (char *)label(&pod->meta.labels, "controller-revision-hash"),
                     (char *)made[3].items[0].revision));
        cr_expect(eq(str, (char *)label(&pod->meta.labels, "app"), "db-0"));
        const struct ks_owner_ref *ref = controller_of(pod);
        cr_assert_not_null(ref);
        cr_expect(eq(str, (char *)ref->kind, "StatefulSet"));
        cr_expect(eq(str, (char *)ref->name, "db-0"));
        ks_pod_put(pods[k]);
    }

    /* a ReplicationController's: v1, its selector's labels */
    cr_assert_eq(ks_bench_owned_pod(&w->ops[6], w->file, &made[5], 0, &scratch, &pods[0], &err), 0, "%s",
                 err.msg);
    const struct ks_owner_ref *ref = controller_of(pods[0]);
    cr_assert_not_null(ref);
    cr_expect(eq(str, (char *)ref->api_version, "v1"));
    cr_expect(eq(str, (char *)ref->kind, "ReplicationController"));
    cr_expect(eq(str, (char *)label(&pods[0]->meta.labels, "app"), "legacy"));
    cr_expect_eq(strncmp(pods[0]->meta.name, "legacy-", 7), 0, "%s", pods[0]->meta.name);
    ks_pod_put(pods[0]);

    ks_arena_destroy(&scratch);
    for (int i = 0; i < 7; i++)
        ks_bench_owners_release(&made[i]);
    ks_objects_destroy(objs);
    ks_bench_workload_destroy(w);
}

Test(bench_objects, errors_name_line_and_field)
{
    static const struct {
        const char *ops, *field, *msg;
        int line;
    } cases[] = {
        {"- {opcode: createPods, count: 1, podTemplate: p, owners: rs}\n", "owners",
         "no createAny op of template \"rs\" comes before this op", FIRST_OP_LINE},
        {"- {opcode: createAny, template: svc, count: 1}\n"
         "- {opcode: createPods, count: 1, podTemplate: p, owners: svc}\n",
         "owners", "a Service owns no pods", FIRST_OP_LINE + 1},
        {"- {opcode: createAny, template: rs, count: 1, namespace: a}\n"
         "- {opcode: createPods, count: 1, podTemplate: p, owners: rs, namespace: b}\n",
         "namespace", "the pods of owners are in their owners' namespace, \"a\"", FIRST_OP_LINE + 1},
        {"- {opcode: createAny, template: rs, count: 1}\n"
         "- {opcode: createPods, count: 1, podTemplate: p, owners: rs, steadyState: true, totalPods: 2}\n",
         "owners", "a steadyState createPods has no owners", FIRST_OP_LINE + 1},
        {"- {opcode: createAny, template: rs, count: 1}\n"
         "- {opcode: churn, intervalPods: 1, podTemplate: p, owners: rs}\n",
         "owners", "does not apply to opcode churn", FIRST_OP_LINE + 1},
        {"- {opcode: createAny, template: badsel}\n", "spec.template.metadata.labels",
         "`selector` does not match template `labels`", 34},
        {"- {opcode: createAny, template: badact}\n", "template",
         "unsupported template action in \"x-{{.Name}}\" (only {{.Index}} and {{.Count}})", 38},
        {"- {opcode: createAny, template: baddeploy}\n", "apiVersion",
         "a Deployment is apps/v1, not \"extensions/v1beta1\"", 40},
        {"- {opcode: createAny, template: pod}\n", "template",
         "createAny makes no Pod: createNodes and createPods do", 45},
        {"- {opcode: createAny, template: badreps}\n", "spec.replicas", "must be an integer >= 0, not \"-1\"",
         51},
        {"- {opcode: createAny, template: bigreps}\n", "spec.replicas",
         "must be at most 2147483647 (int32), not 2147483648", 56},
        {"- {opcode: createAny, template: rs, owners: rs}\n", "owners", "does not apply to opcode createAny",
         FIRST_OP_LINE},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ks_bench_workload *w = NULL;
        struct ks_error err = {0};
        int rc = load_ops(cases[i].ops, &w, &err);
        cr_expect_not_null(strstr(err.file, "ksched-workload-"), "case %zu: %s", i, err.file);
        expect_load_error(i, rc, w, &err, cases[i].field, cases[i].msg, cases[i].line);
    }
}

Test(bench_objects, expansion_copies_only_what_changes)
{
    static const char yaml[] =
        "a: {b: \"x-{{.Index}}\", c: {d: same}, e: [\"{{ .Count }}/{{.Index}}\", f]}\n";
    struct ks_yaml_stream *st = NULL;
    struct ks_error err = {0};
    struct ks_arena a = {0};
    const struct ks_yaml_node *out = NULL;
    cr_assert_eq(ks_yaml_parse("t.yaml", yaml, strlen(yaml), &st, &err), 0, "%s", err.msg);
    const struct ks_yaml_node *doc = st->docs[0];
    cr_assert_eq(ks_bench_template_check(doc, "t.yaml", "template", &err), 0);
    cr_assert_eq(ks_bench_template_expand(&a, doc, 7, 9, &out), 0);
    const struct ks_yaml_node *A = ks_yaml_get(out, "a");
    cr_expect(eq(str, (char *)ks_yaml_get(A, "b")->str, "x-7"));
    cr_expect_eq(ks_yaml_get(A, "b")->len, 3);
    cr_expect(eq(str, (char *)ks_yaml_get(A, "e")->items[0]->str, "9/7"));
    cr_expect_eq(ks_yaml_get(A, "c"), ks_yaml_get(ks_yaml_get(doc, "a"), "c"), "an unchanged map is shared");
    cr_expect_eq(ks_yaml_get(A, "e")->items[1], ks_yaml_get(ks_yaml_get(doc, "a"), "e")->items[1]);
    cr_expect(eq(str, (char *)ks_yaml_get(ks_yaml_get(doc, "a"), "b")->str, "x-{{.Index}}"),
              "the template stays");
    ks_arena_destroy(&a);
    ks_yaml_stream_destroy(st);
}

/* The owners of every createPods op with owners in @w take its pods at every size. */
static void pods_fit_owners(const char *file, const struct ks_bench_workload *w)
{
    for (uint32_t s = 0; s < w->nsizes; s++) {
        const struct ks_bench_size *sz = &w->sizes[s];
        for (uint32_t i = 0; i < w->nops; i++) {
            const struct ks_bench_op *op = &w->ops[i];
            if (op->owner_op < 0)
                continue;
            const struct ks_bench_op *any = &w->ops[op->owner_op];
            const struct ks_yaml_node *reps =
                ks_yaml_get(ks_yaml_get(any->object_template, "spec"), "replicas");
            cr_assert_not_null(reps, "%s: the owners say their replicas", file);
            int64_t objects = any->count_param ? ks_bench_param(sz, any->count_param, -1) : any->count;
            int64_t pods = op->count_param ? ks_bench_param(sz, op->count_param, -1) : op->count;
            cr_expect_geq(objects, 0, "%s %s: $%s", file, sz->name, any->count_param);
            cr_expect_geq(pods, 0, "%s %s: $%s", file, sz->name, op->count_param);
            cr_expect_leq(pods, objects * atoll(reps->str), "%s %s: %ld pods for %ld objects of %s", file,
                          sz->name, (long)pods, (long)objects, reps->str);
        }
    }
}

Test(bench_objects, the_workloads_load_and_their_pods_fit_their_owners)
{
    static const char *const files[] = {"SchedulingDeployments", "SchedulingStatefulSets"};
    for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
        char path[512];
        struct ks_bench_workload *w = NULL;
        struct ks_error err = {0};
        snprintf(path, sizeof(path), WORKLOADS "%s.yaml", files[f]);
        cr_assert_eq(ks_bench_workload_load(path, &w, &err), 0, "%s:%d: %s: %s", err.file, err.line,
                     err.field, err.msg);
        pods_fit_owners(files[f], w);
        bool smoke = false, fast = false;
        for (uint32_t s = 0; s < w->nsizes; s++) {
            for (uint32_t l = 0; l < w->sizes[s].nlabels; l++) {
                smoke |= strcmp(w->sizes[s].labels[l], "smoke") == 0 &&
                         ks_bench_param(&w->sizes[s], "initNodes", 0) == 100;
                fast |= strcmp(w->sizes[s].labels[l], "fast") == 0 &&
                        ks_bench_param(&w->sizes[s], "initNodes", 0) == 500;
            }
        }
        cr_expect(smoke, "%s: a smoke size at 100 nodes (bench/smoke.sh runs it)", files[f]);
        cr_expect(fast, "%s: a fast size at 500 nodes", files[f]);
        ks_bench_workload_destroy(w);
    }
}
