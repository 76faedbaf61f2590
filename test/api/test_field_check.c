/*
 * test_field_check.c - manifests checked against the Kubernetes API schema as the API
 * server's field validation checks them (api/field_check.c), the kinds the loader skips or
 * refuses (api/api_kinds.c, api/load_filter.c) and the --validate modes of the loader.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "ksched/api.h"
#include "ksched/field_check.h"
#include "ksched/internal/api_schema.h"
#include "ksched/loader.h"
#include "ksched/yaml_tree.h"

#include "fakes/load_text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_ISSUES 16

struct issues {
    int n;
    int stop_after; /* 0: never */
    int line[MAX_ISSUES];
    char path[MAX_ISSUES][KS_ERROR_FIELD_MAX];
    char msg[MAX_ISSUES][KS_ERROR_MSG_MAX];
};

static int collect(void *ctx, int line, const char *path, const char *msg)
{
    struct issues *is = ctx;
    if (is->n < MAX_ISSUES) {
        is->line[is->n] = line;
        snprintf(is->path[is->n], sizeof(is->path[0]), "%s", path);
        snprintf(is->msg[is->n], sizeof(is->msg[0]), "%s", msg);
    }
    is->n++;
    return is->stop_after && is->n >= is->stop_after ? -EINVAL : 0;
}

/* Check the one document @yaml as @kind, with @prefix; the problems land in @is. */
static int check(const char *yaml, const char *kind, const char *prefix, struct issues *is)
{
    struct ks_yaml_stream *s;
    struct ks_error err = {0};
    cr_assert_eq(ks_yaml_parse_flags("t.yaml", yaml, strlen(yaml), KS_YAML_KEEP_DUPLICATES, &s, &err), 0,
                 "%s:%d: %s", err.file, err.line, err.msg);
    cr_assert_eq(s->ndocs, 1);
    int64_t root = ks_api_schema_root(kind);
    cr_assert_geq(root, 0, "no schema for %s", kind);
    int rc = ks_field_check(s->docs[0], root, prefix, collect, is);
    ks_yaml_stream_destroy(s);
    return rc;
}

static const char pod_head[] = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\n";

Test(field_check, clean_pod_has_no_issue)
{
    struct issues is = {0};
    check("apiVersion: v1\n"
          "kind: Pod\n"
          "metadata:\n"
          "  name: p\n"
          "  labels: {app.kubernetes.io/name: web, anything-goes: x}\n"
          "  annotations: {kubectl.kubernetes.io/last-applied-configuration: '{}'}\n"
          "  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: u, controller: true}]\n"
          "  managedFields:\n"
          "  - manager: kubectl\n"
          "    operation: Apply\n"
          "    fieldsType: FieldsV1\n"
          "    fieldsV1: {'f:spec': {'f:containers': {'k:{\"name\":\"c\"}': {'.': {}}}}}\n"
          "spec:\n"
          "  nodeSelector: {disktype: ssd}\n"
          "  containers:\n"
          "  - name: c\n"
          "    image: x\n"
          "    resources: {requests: {cpu: 100m, example.com/gpu: 1}, limits: {memory: 1Gi}}\n"
          "    ports: [{containerPort: 80, hostPort: 8080}]\n"
          "  tolerations: [{key: k, operator: Exists, effect: NoExecute, tolerationSeconds: 30}]\n"
          "  affinity:\n"
          "    nodeAffinity:\n"
          "      requiredDuringSchedulingIgnoredDuringExecution:\n"
          "        nodeSelectorTerms: [{matchExpressions: [{key: a, operator: In, values: [b]}]}]\n"
          "status:\n"
          "  phase: Running\n"
          "  conditions: [{type: Ready, status: 'True', lastTransitionTime: null}]\n"
          "  containerStatuses: [{name: c, ready: true, restartCount: 0, image: x, imageID: y,\n"
          "                       state: {running: {startedAt: '2026-01-01T00:00:00Z'}}}]\n",
          "Pod", "", &is);
    cr_expect(eq(int, is.n, 0), "first: %s: %s", is.path[0], is.msg[0]);
}

Test(field_check, unknown_at_root_nested_and_in_lists)
{
    char yaml[1024];
    snprintf(yaml, sizeof(yaml),
             "%s"
             "spek: {}\n"
             "spec:\n"
             "  nodeSelecter: {zone: b}\n"
             "  containers:\n"
             "  - name: c\n"
             "  - name: d\n"
             "    resouces: {requests: {cpu: '3'}}\n"
             "    requests: {cpu: '3'}\n",
             pod_head);
    struct issues is = {0};
    cr_assert_eq(check(yaml, "Pod", "", &is), 0);
    cr_assert(eq(int, is.n, 4));
    cr_expect(eq(str, is.path[0], "spek"));
    cr_expect(eq(str, is.msg[0], "unknown field \"spek\""));
    cr_expect(eq(int, is.line[0], 4));
    cr_expect(eq(str, is.path[1], "spec.nodeSelecter"));
    cr_expect(eq(int, is.line[1], 6));
    cr_expect(eq(str, is.path[2], "spec.containers[1].resouces"));
    cr_expect(eq(str, is.msg[2], "unknown field \"resouces\""));
    cr_expect(eq(int, is.line[2], 10));
    cr_expect(eq(str, is.path[3], "spec.containers[1].requests"));
}

Test(field_check, fields_are_case_sensitive)
{
    char yaml[256];
    snprintf(yaml, sizeof(yaml), "%sspec: {containers: [{name: c, Image: x}]}\n", pod_head);
    struct issues is = {0};
    check(yaml, "Pod", "", &is);
    cr_assert(eq(int, is.n, 1));
    cr_expect(eq(str, is.path[0], "spec.containers[0].Image"));
}

Test(field_check, prefix_names_the_list_item)
{
    char yaml[256];
    snprintf(yaml, sizeof(yaml), "%sspec: {containers: [{name: c, resouces: {}}]}\n", pod_head);
    struct issues is = {0};
    check(yaml, "Pod", "items[3].", &is);
    cr_assert(eq(int, is.n, 1));
    cr_expect(eq(str, is.path[0], "items[3].spec.containers[0].resouces"));
}

Test(field_check, free_key_maps_and_free_objects_are_not_checked)
{
    /* labels, capacity and allocatable take any key */
    struct issues is = {0};
    check("apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {a: b, c.d/e: f}}\n"
          "status:\n"
          "  capacity: {cpu: '4', hugepages-2Mi: '0', example.com/foo: '1'}\n"
          "  allocatable: {cpu: '4'}\n"
          "  images: [{names: [a, b], sizeBytes: 10}]\n"
          "  nodeInfo: {kubeletVersion: v1.36.0}\n",
          "Node", "", &is);
    cr_expect(eq(int, is.n, 0), "first: %s: %s", is.path[0], is.msg[0]);
}

Test(field_check, map_values_follow_their_schema)
{
    /* StorageClass.parameters is map[string]string; PVC resources.requests map of Quantity;
     * a PV's spec.csi.volumeAttributes map: all free keys */
    struct issues is = {0};
    check("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: s}\nprovisioner: p\n"
          "parameters: {type: gp3, fsType: ext4}\nallowedTopologies:\n"
          "- matchLabelExpressions: [{key: zone, values: [a]}]\n"
          "  matchLabelExpresions: []\n",
          "StorageClass", "", &is);
    cr_assert(eq(int, is.n, 1));
    cr_expect(eq(str, is.path[0], "allowedTopologies[0].matchLabelExpresions"));
}

Test(field_check, duplicates_anywhere)
{
    char yaml[512];
    snprintf(yaml, sizeof(yaml),
             "%s"
             "spec:\n"
             "  containers: [{name: c, image: x}]\n"
             "  nodeName: a\n"
             "  nodeName: b\n"
             "metadata: {name: q}\n",
             "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels: {a: b, a: c}\n");
    struct issues is = {0};
    check(yaml, "Pod", "", &is);
    /* a map's own duplicates come after its other fields; the value a duplicate replaced is
     * walked for duplicates of its own, as the API server's YAML decoding finds them too */
    cr_assert(eq(int, is.n, 3));
    cr_expect(eq(str, is.path[0], "spec.nodeName"));
    cr_expect(eq(str, is.msg[0], "duplicate field \"nodeName\""));
    cr_expect(eq(int, is.line[0], 9));
    cr_expect(eq(str, is.path[1], "metadata"));
    cr_expect(eq(int, is.line[1], 10));
    cr_expect(eq(str, is.path[2], "metadata.labels.a"));
    cr_expect(eq(int, is.line[2], 5));
}

Test(field_check, a_nonzero_answer_stops_the_walk)
{
    char yaml[256];
    snprintf(yaml, sizeof(yaml), "%sa: 1\nb: 2\nc: 3\n", pod_head);
    struct issues is = {.stop_after = 2};
    cr_expect(eq(int, check(yaml, "Pod", "", &is), -EINVAL));
    cr_expect(eq(int, is.n, 2));
}

Test(field_check, list_fields_but_not_its_items)
{
    struct issues is = {0};
    check("apiVersion: v1\nkind: List\nmetadata: {resourceVersion: ''}\nitem: []\n"
          "items: [{apiVersion: v1, kind: Pod, bogus: 1}]\n",
          "List", "", &is);
    cr_assert(eq(int, is.n, 1));
    cr_expect(eq(str, is.path[0], "item"));
}

Test(field_check, every_decoded_kind_has_a_schema)
{
    for (int k = 0; k < KS_KIND_COUNT; k++)
        cr_expect(ks_api_schema_root(ks_kind_name((enum ks_kind)k)) >= 0, "%s",
                  ks_kind_name((enum ks_kind)k));
    cr_expect(ks_api_schema_root("List") >= 0);
    cr_expect(eq(i64, ks_api_schema_root("Deployment"), -1));
}

Test(field_check, validation_values_are_kubectls)
{
    enum ks_validation v = KS_VALIDATE_WARN;
    cr_expect(ks_validation_parse("strict", &v) == 0 && v == KS_VALIDATE_STRICT);
    cr_expect(ks_validation_parse("warn", &v) == 0 && v == KS_VALIDATE_WARN);
    cr_expect(ks_validation_parse("true", &v) == 0 && v == KS_VALIDATE_STRICT);
    cr_expect(ks_validation_parse("ignore", &v) == 0 && v == KS_VALIDATE_IGNORE);
    cr_expect(ks_validation_parse("false", &v) == 0 && v == KS_VALIDATE_IGNORE);
    cr_expect(eq(int, ks_validation_parse("Strict", &v), -EINVAL));
    cr_expect(eq(int, ks_validation_parse("", &v), -EINVAL));
}

/* ---- kinds ---- */

Test(api_kinds, classify)
{
    char want[128];
    cr_expect(eq(int, ks_api_kind_classify("apps/v1", "Deployment", want, sizeof(want)), KS_API_KIND_SERVED));
    cr_expect(eq(int, ks_api_kind_classify("v1", "ConfigMap", NULL, 0), KS_API_KIND_SERVED));
    cr_expect(eq(int, ks_api_kind_classify("events.k8s.io/v1", "Event", NULL, 0), KS_API_KIND_SERVED));
    cr_expect(eq(int, ks_api_kind_classify("v1", "Event", NULL, 0), KS_API_KIND_SERVED));
    cr_expect(eq(int, ks_api_kind_classify("v1", "Pdo", NULL, 0), KS_API_KIND_UNKNOWN));
    cr_expect(eq(int, ks_api_kind_classify("apps/v1", "Pod", want, sizeof(want)), KS_API_KIND_WRONG_VERSION));
    cr_expect(eq(str, want, "v1"));
    cr_expect(
        eq(int, ks_api_kind_classify("v1", "Deployment", want, sizeof(want)), KS_API_KIND_WRONG_VERSION));
    cr_expect(eq(str, want, "apps/v1"));
    cr_expect(eq(int, ks_api_kind_classify("autoscaling/v9", "HorizontalPodAutoscaler", want, sizeof(want)),
                 KS_API_KIND_WRONG_VERSION));
    cr_expect(eq(str, want, "autoscaling/v1 autoscaling/v2"));
    /* groups the built-in API does not serve are custom resources, whatever the kind */
    cr_expect(
        eq(int, ks_api_kind_classify("cert-manager.io/v1", "Certificate", NULL, 0), KS_API_KIND_CUSTOM));
    cr_expect(eq(int, ks_api_kind_classify("example.com/v1", "Deployment", NULL, 0), KS_API_KIND_CUSTOM));
    cr_expect(eq(int, ks_api_kind_classify("gateway.networking.k8s.io/v1", "Gateway", NULL, 0),
                 KS_API_KIND_CUSTOM));
    /* a group that is a prefix of a built-in one is not that group */
    cr_expect(eq(int, ks_api_kind_classify("app/v1", "Deployment", NULL, 0), KS_API_KIND_CUSTOM));
    cr_expect(eq(int, ks_api_kind_classify("appsx/v1", "Deployment", NULL, 0), KS_API_KIND_CUSTOM));
}

Test(api_kinds, tables_are_sorted)
{
    for (uint32_t i = 1; i < ks_schema_ngvks; i++)
        cr_expect(strcmp(ks_schema_gvks[i - 1].kind, ks_schema_gvks[i].kind) <= 0, "%u", i);
    for (uint32_t i = 1; i < ks_schema_ngroups; i++)
        cr_expect(strcmp(ks_schema_groups[i - 1], ks_schema_groups[i]) < 0, "%u", i);
    for (uint32_t i = 1; i < ks_schema_nroots; i++)
        cr_expect(strcmp(ks_schema_roots[i - 1].kind, ks_schema_roots[i].kind) < 0, "%u", i);
    for (uint32_t i = 0; i < ks_schema_nnodes; i++) {
        const struct ks_schema_node *n = &ks_schema_nodes[i];
        if (n->kind == KS_SCHEMA_OBJECT) {
            cr_assert(n->ref + n->n <= ks_schema_nfields, "node %u", i);
            for (uint32_t f = n->ref + 1; f < n->ref + n->n; f++) {
                const struct ks_schema_field *a = &ks_schema_fields[f - 1], *b = &ks_schema_fields[f];
                cr_expect(a->len < b->len || (a->len == b->len && memcmp(a->name, b->name, a->len) < 0),
                          "node %u: %s %s", i, a->name, b->name);
            }
        } else if (n->kind == KS_SCHEMA_ARRAY || n->kind == KS_SCHEMA_MAP) {
            cr_expect(n->ref < ks_schema_nnodes, "node %u", i);
        }
    }
}

/* ---- the YAML layer keeps duplicates for the check ---- */

Test(yaml_duplicates, kept_aside_with_the_later_value)
{
    const char *yaml = "a: 1\nb: 2\na: 3\n";
    struct ks_yaml_stream *s;
    struct ks_error err = {0};
    cr_assert_eq(ks_yaml_parse_flags("t", yaml, strlen(yaml), KS_YAML_KEEP_DUPLICATES, &s, &err), 0);
    const struct ks_yaml_node *m = s->docs[0];
    cr_assert(eq(u32, m->n, 2));
    cr_assert(eq(u32, m->ndup, 1));
    cr_expect(eq(str, (char *)ks_yaml_get(m, "a")->str, "3"));
    cr_expect(eq(str, (char *)m->pairs[0].key->str, "a"));
    cr_expect(eq(str, (char *)m->pairs[2].key->str, "a"));
    cr_expect(eq(int, m->pairs[2].key->line, 3));
    cr_expect(eq(str, (char *)m->pairs[2].value->str, "1"));
    ks_yaml_stream_destroy(s);
    /* without the flag a repeated key is an error, as before */
    cr_expect(eq(int, ks_yaml_parse("t", yaml, strlen(yaml), &s, &err), -EINVAL));
    cr_expect(strstr(err.msg, "duplicate key \"a\"") != NULL, "%s", err.msg);
}

/* ---- the loader's --validate modes and skipped kinds ---- */

static void api_init(void)
{
    cr_assert_eq(ks_api_init(), 0);
}

static int load_text(const char *text, enum ks_validation v, struct ks_objects **out, struct ks_error *err)
{
    return ks_test_load_text(text, v, out, err);
}

static const char typo_list[] = "apiVersion: v1\nkind: List\nitems:\n"
                                "- apiVersion: v1\n  kind: Node\n  metadata: {name: n1}\n"
                                "- apiVersion: v1\n  kind: Pod\n  metadata: {name: p}\n"
                                "  spec: {containers: [{name: c, resouces: {}}]}\n"
                                "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  bogus: 1\n";

Test(loader_validate, warn_keeps_the_object_and_the_warning, .init = api_init)
{
    struct ks_objects *o;
    struct ks_error err = {0};
    cr_assert_eq(load_text(typo_list, KS_VALIDATE_WARN, &o, &err), 0, "%s", err.msg);
    cr_expect(eq(u32, ks_objects_count(o, POD), 1));
    cr_assert(eq(u32, o->nwarnings, 1)); /* ConfigMap's fields are not checked: it is skipped */
    cr_expect(strstr(o->warnings[0],
                     ":10: items[1].spec.containers[0].resouces: unknown field \"resouces\"") != NULL,
              "%s", o->warnings[0]);
    cr_assert(eq(u32, o->nnotes, 1));
    cr_expect(
        eq(str, o->notes[0], "skipped 1 object of a kind that does not affect scheduling: ConfigMap (1)"));
    ks_objects_destroy(o);
}

Test(loader_validate, strict_fails_at_the_first, .init = api_init)
{
    struct ks_objects *o = (void *)1;
    struct ks_error err = {0};
    cr_assert_eq(load_text(typo_list, KS_VALIDATE_STRICT, &o, &err), -EINVAL);
    cr_expect(eq(ptr, o, NULL));
    cr_expect(eq(int, err.line, 10));
    cr_expect(eq(str, err.field, "items[1].spec.containers[0].resouces"));
    cr_expect(eq(str, err.msg, "unknown field \"resouces\""));
}

Test(loader_validate, ignore_says_nothing_and_the_later_duplicate_wins, .init = api_init)
{
    struct ks_objects *o;
    struct ks_error err = {0};
    const char *dup = "apiVersion: v1\nkind: Node\nmetadata: {name: a, name: b}\nbogus: 1\n";
    cr_assert_eq(load_text(dup, KS_VALIDATE_IGNORE, &o, &err), 0, "%s", err.msg);
    cr_expect(eq(u32, o->nwarnings, 0));
    cr_assert(eq(u32, ks_objects_count(o, NODE), 1));
    cr_expect(eq(str, (char *)((struct ks_object_meta *)o->of[KS_KIND_NODE].items[0])->name, "b"));
    ks_objects_destroy(o);
    cr_assert_eq(load_text(dup, KS_VALIDATE_WARN, &o, &err), 0, "%s", err.msg);
    cr_assert(eq(u32, o->nwarnings, 2));
    /* in document order: metadata (line 3) comes before bogus */
    cr_expect(strstr(o->warnings[0], ":3: metadata.name: duplicate field \"name\"") != NULL, "%s",
              o->warnings[0]);
    cr_expect(strstr(o->warnings[1], ":4: bogus: unknown field \"bogus\"") != NULL, "%s", o->warnings[1]);
    ks_objects_destroy(o);
}

Test(loader_validate, warnings_past_the_cap_are_counted, .init = api_init)
{
    char text[8192];
    size_t at = (size_t)snprintf(text, sizeof(text), "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n");
    for (int i = 0; i < KS_LOAD_MAX_WARNINGS + 5; i++)
        at += (size_t)snprintf(text + at, sizeof(text) - at, "bogus%d: 1\n", i);
    struct ks_objects *o;
    struct ks_error err = {0};
    cr_assert_eq(load_text(text, KS_VALIDATE_WARN, &o, &err), 0, "%s", err.msg);
    cr_expect(eq(u32, o->nwarnings, KS_LOAD_MAX_WARNINGS + 5));
    cr_expect(strstr(o->warnings[KS_LOAD_MAX_WARNINGS - 1], "bogus19") != NULL, "%s",
              o->warnings[KS_LOAD_MAX_WARNINGS - 1]);
    ks_objects_destroy(o);
}

Test(loader_validate, skipped_kinds_are_summed_up_custom_resources_by_group, .init = api_init)
{
    struct ks_objects *o;
    struct ks_error err = {0};
    cr_assert_eq(load_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\n---\n"
                           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n"
                           "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: b}\n---\n"
                           "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: a}\n---\n"
                           "apiVersion: example.com/v1alpha1\nkind: Certificate\nmetadata: {name: a}\n",
                           KS_VALIDATE_STRICT, &o, &err),
                 0, "%s", err.msg);
    cr_assert(eq(u32, o->nnotes, 1));
    cr_expect(eq(str, o->notes[0],
                 "skipped 5 objects of kinds that do not affect scheduling: Deployment (2), ConfigMap (1), "
                 "Certificate.cert-manager.io (1), Certificate.example.com (1)"));
    ks_objects_destroy(o);
}

Test(loader_validate, unknown_kinds_and_wrong_versions_fail, .init = api_init)
{
    struct ks_objects *o;
    struct ks_error err = {0};
    cr_expect(eq(int,
                 load_text("apiVersion: v1\nkind: Pdo\nmetadata: {name: a}\n", KS_VALIDATE_IGNORE, &o, &err),
                 -EINVAL));
    cr_expect(eq(int, err.line, 2));
    cr_expect(strstr(err.msg, "kind: unsupported kind \"Pdo\" (apiVersion v1)") != NULL, "%s", err.msg);
    memset(&err, 0, sizeof(err));
    cr_expect(eq(int,
                 load_text("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Deployment\n",
                           KS_VALIDATE_IGNORE, &o, &err),
                 -EINVAL));
    cr_expect(eq(int, err.line, 4));
    cr_expect(eq(str, err.msg,
                 "items[0].apiVersion: unsupported apiVersion \"v1\" for kind Deployment (want apps/v1)"));
}
