/*
 * bench_workload.c - workload files of `ksched bench` (bench/workloads/NAME.yaml).
 *
 * Modelled on kube-scheduler's test/integration/scheduler_perf performance-config.yaml:
 *
 *   name: SchedulingBasic
 *   defaultPodTemplate: default            # defaultPodTemplatePath
 *   workloadTemplate:                      # opcodes run in order
 *   - opcode: createNodes                  # the generated cluster (--nodes)
 *     countParam: $initNodes
 *   - opcode: createPods                   # scheduled to completion, not measured
 *     countParam: $initPods
 *   - opcode: createPods                   # the measured pods
 *     countParam: $measurePods
 *     collectMetrics: true
 *   podTemplates:                          # v1 Pods (upstream config/templates)
 *     default: {apiVersion: v1, kind: Pod, metadata: {generateName: pod-}, spec: ...}
 *   workloads:                             # sizes: params bound to the template's $params
 *   - name: 5000Nodes
 *     labels: [performance]
 *     params: {initNodes: 5000, initPods: 1000, measurePods: 10000}
 *
 * Opcodes: createNodes (countParam/count; labelNodePrepareStrategy {labelKey,
 * labelValues}, or ksched's {labelKey, labelValuePrefix, nodesPerValue}: node i labelled
 * <prefix><i / nodesPerValue>, racks of consecutive nodes; nodeTemplate: a name in
 * nodeTemplates instead of generated nodes),
 * createPods (countParam/count, podTemplate, namespace, collectMetrics, expect: Bound |
 * Unschedulable | Settled for --check, skipWaitToCompletion, steadyState with
 * totalPods/totalPodsParam, owners), churn (mode: recreate, number, intervalPods: the
 * measured cycles between two churn steps, podTemplate, nodeTemplate), createAny
 * (template: a name in objectTemplates, upstream's templatePath; namespace; count or
 * countParam: that many objects, numbered), and those of scheduler_perf's Dynamic Resource
 * Allocation workloads (test/integration/scheduler_perf/dra): createResourceDriver
 * (driverName, nodes: a pattern of node names, maxClaimsPerNode or maxClaimsPerNodeParam:
 * devices per node, deviceAttributes and deviceCapacity: ksched's, the values devices take
 * in turn instead of upstream's fixed ones) and allocResourceClaims (namespace).
 * Keys are checked strictly: a typo is an error with file and line, never a silently
 * different benchmark; a key of the new opcodes on an opcode that does not take it is one
 * too.
 *
 *   - opcode: createResourceDriver         # one ResourceSlice per matching node
 *     driverName: test-driver.cdi.k8s.io
 *     nodes: scheduler-perf-dra-*
 *     maxClaimsPerNodeParam: $maxClaimsPerNode
 *     deviceAttributes:                    # device d of the k-th node: values[(k*max + d) % n]
 *       model: {string: [A100, H100, L4]}
 *       dra.example.com/numa: {int: [0, 1]}
 *     deviceCapacity:
 *       memory: [40Gi, 80Gi, 24Gi]
 *   - opcode: createAny                    # objectTemplates: DeviceClass, ResourceClaimTemplate,
 *     template: resourceclaimtemplate      # ResourceClaim, ResourceSlice (resource.k8s.io/v1)
 *     namespace: test
 *   - opcode: createPods                   # upstream's steady state: count pods at a time, each
 *     count: 10                            # batch deleted with its claims once bound; ksched
 *     steadyState: true                    # runs totalPods pods where upstream runs for a
 *     totalPodsParam: $measurePods         # duration
 *     collectMetrics: true
 *
 * createAny makes any object the loader decodes but Nodes and Pods (Services, ReplicaSets,
 * StatefulSets, ReplicationControllers, PodDisruptionBudgets, the DRA kinds...) and apps/v1
 * Deployments, whose objects are the ReplicaSets their controller makes (a Deployment makes
 * no pods by itself). A scalar of its template may hold {{.Index}} (the object's index: the
 * objects of one template are numbered across the ops that make them) and {{.Count}} (the
 * op's count), upstream's text/template fields, quoted when they begin it. With count or
 * countParam object i is named <generateName><i> or <name>-<i> (unless metadata.name holds
 * {{.Index}}), else it is the one object metadata.name names. createPods' `owners: NAME`
 * (ksched's) makes its pods those of the objects the last createAny of template NAME before
 * it made (ReplicaSets, Deployments' ReplicaSets, StatefulSets, ReplicationControllers),
 * in blocks of each object's spec.replicas: each pod gets the object's pod-template labels,
 * its controlling ownerReference and the name its controller gives (bench_objects.c):
 *
 *   - opcode: createAny                    # Deployment web-<i> (name "web-{{.Index}}",
 *     template: deployment                 # replicas 30, labels app: "web-{{.Index}}"): its
 *     countParam: $deployments             # ReplicaSet web-<i>-<pod-template-hash>
 *     namespace: apps
 *   - opcode: createPods                   # 30 pods of each ReplicaSet in turn, named
 *     countParam: $measurePods             # web-<i>-<hash>-<5 characters>
 *     owners: deployment
 *     collectMetrics: true
 *
 * Beyond upstream: createPods may name a list, `podTemplates: [a, b, c]`, instead of one
 * podTemplate; its pods take the templates in turn (a, b, c, a, b, c, ...), so pods of
 * several kinds (the Jobs of SchedulingJobs) arrive interleaved as a busy cluster's do,
 * where upstream's createPods ops would queue every pod of one kind before the next. A name
 * may repeat to give its template a larger share.
 *
 * createPods' persistentVolumeTemplate and persistentVolumeClaimTemplate name objectTemplates
 * entries (upstream's persistentVolumeTemplatePath and persistentVolumeClaimTemplatePath, as
 * testutils' CreatePodWithPersistentVolume makes them): pod k of op i gets a claim
 * pvc-<i>-<k> in its namespace, bound to a volume <namespace>-vol-<i>-<k> whose claimRef is
 * that claim (both phase Bound), and that claim as its only volume, named "vol".
 *
 * Also ksched's: a workload's `featureGates` (gate: bool, applied over --feature-gates, as
 * scheduler_perf's per-workload featureGates), and createPods' `podGroupSizes: [8, 64]`: the
 * pods whose template has spec.schedulingGroup form gangs of those sizes in turn, each with a
 * PodGroup of that minCount made by the harness, and `podGroupTopologyKeys: ["", rack]`: the
 * topology constraint of the gangs' PodGroups in turn ("": none); `expectBoundGangs: N` has
 * --check require that exactly N of them were bound (every gang is checked whole either way).
 *
 * Every template gets a metadata.name if it has none (the decoder requires one; the bench
 * replaces it per object), added to the stream's own tree.
 */
#include "bench.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/dra_check.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct wl_parser {
    struct ks_bench_workload *w;
    struct ks_error *err;
    const struct ks_yaml_node *pod_templates;
    const struct ks_yaml_node *node_templates;
    const struct ks_yaml_node *object_templates;
};

static int fail(struct wl_parser *p, const struct ks_yaml_node *at, const char *field, const char *fmt,
                const char *arg)
{
    return ks_error_set(p->err, p->w->file, at ? at->line : 0, field, fmt, arg);
}

static int strict(struct wl_parser *p, const struct ks_yaml_node *map, const char *what,
                  const char *const *fields)
{
    if (!map || map->kind != KS_YAML_MAP)
        return fail(p, map, what, "must be a map, not %s", ks_yaml_kind_name(map));
    for (uint32_t i = 0; i < map->n; i++) {
        const struct ks_yaml_node *k = map->pairs[i].key;
        bool known = false;
        for (const char *const *f = fields; *f && !known; f++)
            known = k->kind == KS_YAML_SCALAR && strcmp(k->str, *f) == 0;
        if (!known)
            return fail(p, k, what, "unknown field \"%s\"", k->kind == KS_YAML_SCALAR ? k->str : "?");
    }
    return 0;
}

static int scalar(struct wl_parser *p, const struct ks_yaml_node *n, const char *field, const char **out)
{
    if (!n)
        return 0;
    if (n->kind != KS_YAML_SCALAR)
        return fail(p, n, field, "must be a string, not %s", ks_yaml_kind_name(n));
    *out = n->str;
    return 0;
}

static int integer(struct wl_parser *p, const struct ks_yaml_node *n, const char *field, int64_t min,
                   int64_t *out)
{
    if (!n)
        return 0;
    char *end;
    errno = 0;
    long long v = n->kind == KS_YAML_SCALAR ? strtoll(n->str, &end, 10) : 0;
    if (n->kind != KS_YAML_SCALAR || errno || end == n->str || *end || v < min)
        return fail(p, n, field, "must be an integer >= %s", min ? "1" : "0");
    *out = v;
    return 0;
}

static int boolean(struct wl_parser *p, const struct ks_yaml_node *n, const char *field, bool *out)
{
    if (!n)
        return 0;
    if (n->kind == KS_YAML_SCALAR && (strcmp(n->str, "true") == 0 || strcmp(n->str, "false") == 0)) {
        *out = n->str[0] == 't';
        return 0;
    }
    return fail(p, n, field, "must be true or false%s", "");
}

/* Give @doc (a template) a metadata.name when it has none. */
static int ensure_name(struct wl_parser *p, struct ks_yaml_node *doc)
{
    struct ks_arena *a = &p->w->stream->arena;
    struct ks_yaml_node *meta = (struct ks_yaml_node *)ks_yaml_get(doc, "metadata");
    if (meta && meta->kind != KS_YAML_MAP)
        return fail(p, meta, "metadata", "must be a map, not %s", ks_yaml_kind_name(meta));
    if (meta && ks_yaml_get(meta, "name"))
        return 0;
    struct ks_yaml_node *key = ks_arena_calloc(a, 2, sizeof(*key));
    if (!key)
        return -ENOMEM;
    struct ks_yaml_node *val = key + 1;
    *key = (struct ks_yaml_node){.kind = KS_YAML_SCALAR, .line = doc->line, .plain = 1};
    *val = *key;
    if (!meta) {
        key->str = "metadata";
        key->len = strlen(key->str);
        if (!(meta = ks_arena_calloc(a, 1, sizeof(*meta))))
            return -ENOMEM;
        *meta = (struct ks_yaml_node){.kind = KS_YAML_MAP, .line = doc->line};
        struct ks_yaml_pair *pairs = ks_arena_calloc(a, doc->n + 1, sizeof(*pairs));
        if (!pairs)
            return -ENOMEM;
        memcpy(pairs, doc->pairs, doc->n * sizeof(*pairs));
        pairs[doc->n] = (struct ks_yaml_pair){key, meta};
        doc->pairs = pairs;
        doc->n++;
        if (!(key = ks_arena_calloc(a, 2, sizeof(*key))))
            return -ENOMEM;
        val = key + 1;
        *key = (struct ks_yaml_node){.kind = KS_YAML_SCALAR, .line = doc->line, .plain = 1};
        *val = *key;
    }
    key->str = "name";
    key->len = 4;
    val->str = KS_BENCH_TEMPLATE_NAME;
    val->len = strlen(val->str);
    struct ks_yaml_pair *pairs = ks_arena_calloc(a, meta->n + 1, sizeof(*pairs));
    if (!pairs)
        return -ENOMEM;
    if (meta->n)
        memcpy(pairs, meta->pairs, meta->n * sizeof(*pairs));
    pairs[meta->n] = (struct ks_yaml_pair){key, val};
    meta->pairs = pairs;
    meta->n++;
    return 0;
}

/* The template @name from @templates (a map of kind @kind), checked and named. */
static int template(struct wl_parser *p, const struct ks_yaml_node *templates, const struct ks_yaml_node *ref,
                    const char *field, const char *kind, const struct ks_yaml_node **out)
{
    const char *name = NULL;
    int rc;
    if ((rc = scalar(p, ref, field, &name)) || !name)
        return rc;
    struct ks_yaml_node *t = (struct ks_yaml_node *)ks_yaml_get(templates, name);
    if (!t)
        return fail(p, ref, field, "no template named \"%s\"", name);
    const struct ks_yaml_node *k = ks_yaml_get(t, "kind");
    if (!k || k->kind != KS_YAML_SCALAR || strcmp(k->str, kind) != 0)
        return fail(p, t, field, "template must be a v1 %s", kind);
    if ((rc = ensure_name(p, t)))
        return rc;
    *out = t;
    return 0;
}

/* createPods' podTemplates: a list of names in podTemplates, each pod taking the next. */
static int pod_template_list(struct wl_parser *p, const struct ks_yaml_node *n, struct ks_bench_op *op)
{
    const struct ks_yaml_node *list = ks_yaml_get(n, "podTemplates");
    char field[32];
    int rc;

    if (!list)
        return 0;
    if (op->code != KS_BENCH_CREATE_PODS)
        return fail(p, list, "podTemplates", "only createPods takes a list of templates%s", "");
    if (ks_yaml_get(n, "podTemplate"))
        return fail(p, list, "podTemplates", "give podTemplate or podTemplates, not both%s", "");
    if (list->kind != KS_YAML_SEQ || list->n == 0)
        return fail(p, list, "podTemplates", "must be a non-empty list of podTemplates names%s", "");
    if (!(op->pod_templates = ks_arena_calloc(&p->w->arena, list->n, sizeof(*op->pod_templates))))
        return -ENOMEM;
    for (uint32_t i = 0; i < list->n; i++) {
        snprintf(field, sizeof(field), "podTemplates[%u]", i);
        if ((rc = template(p, p->pod_templates, list->items[i], field, "Pod", &op->pod_templates[i])))
            return rc;
    }
    op->npod_templates = list->n;
    op->pod_template = op->pod_templates[0];
    return 0;
}

/* ---- the keys of an op -------------------------------------------------------------------------- */

#define OP(code) (1u << (code))
#define OLD_OPS  (OP(KS_BENCH_CREATE_NODES) | OP(KS_BENCH_CREATE_PODS) | OP(KS_BENCH_CHURN))

/*
 * Every key an op may have, with the opcodes that take it. The first three opcodes take each
 * other's keys (a key that means nothing to them is ignored, as it always was); the keys that
 * came with the DRA opcodes, and those opcodes, are held to their own.
 */
static const struct {
    const char *key;
    unsigned ops;
} op_key_table[] = {
    {"opcode", ~0u},
    {"countParam", OLD_OPS | OP(KS_BENCH_CREATE_ANY)},
    {"count", OLD_OPS | OP(KS_BENCH_CREATE_ANY)},
    {"podTemplate", OLD_OPS},
    {"podTemplates", OLD_OPS},
    {"nodeTemplate", OLD_OPS},
    {"namespace", OLD_OPS | OP(KS_BENCH_CREATE_ANY) | OP(KS_BENCH_ALLOC_RESOURCE_CLAIMS)},
    {"collectMetrics", OLD_OPS},
    {"expect", OLD_OPS},
    {"labelNodePrepareStrategy", OLD_OPS},
    {"mode", OLD_OPS},
    {"number", OLD_OPS},
    {"intervalPods", OLD_OPS},
    {"steadyState", OP(KS_BENCH_CREATE_PODS)},
    {"skipWaitToCompletion", OP(KS_BENCH_CREATE_PODS)},
    {"totalPods", OP(KS_BENCH_CREATE_PODS)},
    {"totalPodsParam", OP(KS_BENCH_CREATE_PODS)},
    {"driverName", OP(KS_BENCH_CREATE_RESOURCE_DRIVER)},
    {"nodes", OP(KS_BENCH_CREATE_RESOURCE_DRIVER)},
    {"maxClaimsPerNode", OP(KS_BENCH_CREATE_RESOURCE_DRIVER)},
    {"maxClaimsPerNodeParam", OP(KS_BENCH_CREATE_RESOURCE_DRIVER)},
    {"deviceAttributes", OP(KS_BENCH_CREATE_RESOURCE_DRIVER)},
    {"deviceCapacity", OP(KS_BENCH_CREATE_RESOURCE_DRIVER)},
    {"template", OP(KS_BENCH_CREATE_ANY)},
    {"podGroupSizes", OP(KS_BENCH_CREATE_PODS)},
    {"podGroupTopologyKeys", OP(KS_BENCH_CREATE_PODS)},
    {"expectBoundGangs", OP(KS_BENCH_CREATE_PODS)},
    {"persistentVolumeTemplate", OP(KS_BENCH_CREATE_PODS)},
    {"persistentVolumeClaimTemplate", OP(KS_BENCH_CREATE_PODS)},
    {"owners", OP(KS_BENCH_CREATE_PODS)},
};

/*
 * An unknown key @key of an op. Upstream's template keys name files (podTemplatePath,
 * templatePath, ...); this harness's are the same names without "Path" and name entries of
 * the workload file's podTemplates, nodeTemplates or objectTemplates: such a key says which.
 */
static int unknown_key(struct wl_parser *p, const struct ks_yaml_node *k, const char *key)
{
    size_t len = strlen(key), nkeys = sizeof(op_key_table) / sizeof(op_key_table[0]);
    if (len > 4 && strcmp(key + len - 4, "Path") == 0) {
        for (size_t j = 0; j < nkeys; j++) {
            if (strlen(op_key_table[j].key) == len - 4 && strncmp(op_key_table[j].key, key, len - 4) == 0)
                return ks_error_set(p->err, p->w->file, k->line, "workloadTemplate",
                                    "unknown field \"%s\": templates are inline here, name one with \"%s\"",
                                    key, op_key_table[j].key);
        }
    }
    return fail(p, k, "workloadTemplate", "unknown field \"%s\"", key);
}

/* Every key of op @n is known (@code < 0), or taken by opcode @code (named @opcode). */
static int op_keys(struct wl_parser *p, const struct ks_yaml_node *n, int code, const char *opcode)
{
    if (!n || n->kind != KS_YAML_MAP)
        return fail(p, n, "workloadTemplate", "must be a map, not %s", ks_yaml_kind_name(n));
    for (uint32_t i = 0; i < n->n; i++) {
        const struct ks_yaml_node *k = n->pairs[i].key;
        const char *key = k->kind == KS_YAML_SCALAR ? k->str : "?";
        size_t j = 0, nkeys = sizeof(op_key_table) / sizeof(op_key_table[0]);
        while (j < nkeys && (k->kind != KS_YAML_SCALAR || strcmp(op_key_table[j].key, key) != 0))
            j++;
        if (j == nkeys)
            return unknown_key(p, k, key);
        if (code >= 0 && !(op_key_table[j].ops & OP((unsigned)code))) {
            char msg[128];
            snprintf(msg, sizeof(msg), "does not apply to opcode %s", opcode);
            return fail(p, k, key, "%s", msg);
        }
    }
    return 0;
}

/* A $param reference @text (of @field at @at) as the param's name. */
static int param_name(struct wl_parser *p, const struct ks_yaml_node *at, const char *field, const char *text,
                      const char **out)
{
    if (text[0] != '$' || !text[1])
        return fail(p, at, field, "must be $name, not \"%s\"", text);
    *out = text + 1;
    return 0;
}

/* One of @list's scalars, or @list itself when a scalar: the values of a device attribute. */
static int attr_values(struct wl_parser *p, const struct ks_yaml_node *list, const char *field,
                       enum ks_device_attr_kind kind, struct ks_bench_device_attr *out)
{
    bool one = list && list->kind == KS_YAML_SCALAR;
    uint32_t n = one ? 1 : list && list->kind == KS_YAML_SEQ ? list->n : 0;

    if (n == 0)
        return fail(p, list, field, "must be a value or a non-empty list of values%s", "");
    if (!(out->values = ks_arena_calloc(&p->w->arena, n, sizeof(*out->values))))
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++) {
        const struct ks_yaml_node *v = one ? list : list->items[i];
        int rc;
        if ((rc = scalar(p, v, field, &out->values[i])))
            return rc;
        char *end;
        errno = 0;
        if (kind == KS_ATTR_INT && (strtoll(v->str, &end, 10), errno || end == v->str || *end))
            return fail(p, v, field, "must be an integer, not \"%s\"", v->str);
        if (kind == KS_ATTR_BOOL && strcmp(v->str, "true") != 0 && strcmp(v->str, "false") != 0)
            return fail(p, v, field, "must be true or false, not \"%s\"", v->str);
    }
    out->nvalues = n;
    return 0;
}

/* deviceAttributes (@capacity false: name -> {string|int|bool|version: values}) or deviceCapacity. */
static int device_attrs(struct wl_parser *p, const struct ks_yaml_node *map, bool capacity,
                        struct ks_bench_op *op)
{
    static const char *const kinds[] = {[KS_ATTR_INT] = "int",
                                        [KS_ATTR_BOOL] = "bool",
                                        [KS_ATTR_STRING] = "string",
                                        [KS_ATTR_VERSION] = "version"};
    const char *what = capacity ? "deviceCapacity" : "deviceAttributes";
    struct ks_bench_device_attr *attrs;
    int rc;

    if (!map)
        return 0;
    if (map->kind != KS_YAML_MAP || map->n == 0)
        return fail(p, map, what, "must be a non-empty map of names to values%s", "");
    if (!(attrs = ks_arena_calloc(&p->w->arena, map->n, sizeof(*attrs))))
        return -ENOMEM;
    for (uint32_t i = 0; i < map->n; i++) {
        const struct ks_yaml_node *val = map->pairs[i].value;
        struct ks_bench_device_attr *a = &attrs[i];
        char field[320];
        if ((rc = scalar(p, map->pairs[i].key, what, &a->name)))
            return rc;
        snprintf(field, sizeof(field), "%s.%s", what, a->name);
        if (capacity) {
            if ((rc = attr_values(p, val, field, KS_ATTR_STRING, a)))
                return rc;
            continue;
        }
        if (!val || val->kind != KS_YAML_MAP || val->n != 1 || val->pairs[0].key->kind != KS_YAML_SCALAR)
            return fail(p, val ? val : map->pairs[i].key, field,
                        "must be a map of one type (string, int, bool, version) to values%s", "");
        const char *type = val->pairs[0].key->str;
        size_t t = 0;
        while (t < sizeof(kinds) / sizeof(kinds[0]) && strcmp(kinds[t], type) != 0)
            t++;
        if (t == sizeof(kinds) / sizeof(kinds[0]))
            return fail(p, val->pairs[0].key, field,
                        "unknown attribute type \"%s\" (string, int, bool, version)", type);
        a->kind = (enum ks_device_attr_kind)t;
        snprintf(field + strlen(field), sizeof(field) - strlen(field), ".%s", type);
        if ((rc = attr_values(p, val->pairs[0].value, field, a->kind, a)))
            return rc;
    }
    if (capacity) {
        op->capacity = attrs;
        op->ncapacity = map->n;
    } else {
        op->attrs = attrs;
        op->nattrs = map->n;
    }
    op->own_devices = true;
    return 0;
}

/* Whether objects of @kind own pods (createPods' owners). */
static bool owns_pods(enum ks_kind kind)
{
    return kind == KS_KIND_REPLICA_SET || kind == KS_KIND_STATEFUL_SET ||
           kind == KS_KIND_REPLICATION_CONTROLLER;
}

/*
 * createAny's template: an object of objectTemplates that the op can make (any kind the
 * loader decodes but a Node or a Pod, or an apps/v1 Deployment), its first object decoded
 * now, so that a bad template is an error of the file before anything runs.
 */
static int object_template(struct wl_parser *p, const struct ks_yaml_node *n, struct ks_bench_op *op)
{
    const struct ks_yaml_node *ref = ks_yaml_get(n, "template");
    const char *name = NULL;
    int rc;

    if ((rc = scalar(p, ref, "template", &name)))
        return rc;
    if (!name)
        return fail(p, n, "template", "Required value: a name in objectTemplates%s", "");
    struct ks_yaml_node *t = (struct ks_yaml_node *)ks_yaml_get(p->object_templates, name);
    if (!t)
        return fail(p, ref, "template", "no object template named \"%s\"", name);
    if (t->kind != KS_YAML_MAP)
        return fail(p, t, "template", "must be a map, not %s", ks_yaml_kind_name(t));
    const struct ks_yaml_node *k = ks_yaml_get(t, "kind"), *v = ks_yaml_get(t, "apiVersion");
    op->template_name = name;
    op->deployment = k && k->kind == KS_YAML_SCALAR && strcmp(k->str, "Deployment") == 0;
    if (op->deployment && (!v || v->kind != KS_YAML_SCALAR || strcmp(v->str, "apps/v1") != 0))
        return fail(p, v ? v : t, "apiVersion", "a Deployment is apps/v1, not \"%s\"",
                    v && v->kind == KS_YAML_SCALAR ? v->str : "");
    if (k && k->kind == KS_YAML_SCALAR && (strcmp(k->str, "Pod") == 0 || strcmp(k->str, "Node") == 0))
        return fail(p, k, "template", "createAny makes no %s: createNodes and createPods do", k->str);
    if ((rc = ks_bench_template_check(t, p->w->file, "template", p->err)))
        return rc;
    if (!op->numbered && !ks_yaml_get(ks_yaml_get(t, "metadata"), "name"))
        return fail(p, ref, "template",
                    "the one object of createAny without count is named by metadata.name%s", "");
    if ((rc = ensure_name(p, t)))
        return rc;
    const struct ks_yaml_node *doc = NULL;
    enum ks_kind kind = KS_KIND_REPLICA_SET; /* a Deployment's objects: its ReplicaSets */
    void *obj = NULL;
    if ((rc = ks_bench_template_expand(&p->w->arena, t, 0, 1, &doc)))
        return rc;
    rc = op->deployment ? ks_object_decode_as(p->w->file, doc, kind, &obj, p->err)
                        : ks_object_decode(p->w->file, doc, &kind, &obj, p->err);
    if (rc == 0)
        rc = ks_dra_check_object(NULL, p->w->file, "", kind, obj, p->err);
    uint32_t ns = obj ? ((const struct ks_object_meta *)obj)->namespace_id : KS_ID_EMPTY;
    if (obj)
        ks_object_destroy(kind, obj);
    if (rc < 0)
        return rc;
    if (ns == KS_ID_EMPTY && op->namespace)
        return fail(p, ks_yaml_get(n, "namespace"), "namespace", "a %s has no namespace", ks_kind_name(kind));
    if (ns != KS_ID_EMPTY && op->namespace && (ns = ks_intern(op->namespace)) == KS_ID_NONE)
        return -ENOMEM;
    op->object_kind = kind;
    op->object_ns = ns;
    op->object_template = t;
    if (!owns_pods(kind))
        return 0;
    /* an owner's whole way once: its uid, a Deployment's ReplicaSet, its selector against its labels */
    struct ks_objects *objs = calloc(1, sizeof(*objs));
    struct ks_bench_owners made = {0};
    rc = objs ? ks_bench_create_any(op, p->w->file, 0, 1, objs, &made, p->err) : -ENOMEM;
    ks_bench_owners_release(&made);
    ks_objects_destroy(objs);
    return rc;
}

/*
 * createPods' owners: the objects of the last createAny op of that template before this op,
 * which must be of a kind that owns pods, in the namespace the op's pods are in.
 */
static int owners_key(struct wl_parser *p, const struct ks_yaml_node *n, struct ks_bench_op *op)
{
    const struct ks_yaml_node *at = ks_yaml_get(n, "owners");
    int rc;

    if ((rc = scalar(p, at, "owners", &op->owners)) || !op->owners)
        return rc;
    if (op->steady_state)
        return fail(p, at, "owners", "a steadyState createPods has no owners%s", "");
    int32_t j = (int32_t)(op - p->w->ops);
    while (--j >= 0 &&
           (p->w->ops[j].code != KS_BENCH_CREATE_ANY || strcmp(p->w->ops[j].template_name, op->owners) != 0))
        ;
    if (j < 0)
        return fail(p, at, "owners", "no createAny op of template \"%s\" comes before this op", op->owners);
    const struct ks_bench_op *any = &p->w->ops[j];
    if (!owns_pods(any->object_kind))
        return fail(p, at, "owners",
                    "a %s owns no pods (a ReplicaSet, Deployment, StatefulSet or ReplicationController does)",
                    ks_kind_name(any->object_kind));
    if (op->namespace && ks_intern(op->namespace) != any->object_ns)
        return fail(p, ks_yaml_get(n, "namespace"), "namespace",
                    "the pods of owners are in their owners' namespace, \"%s\"",
                    ks_intern_str(any->object_ns));
    op->owner_op = j;
    return 0;
}

/* The keys of createResourceDriver and createAny. */
static int dra_keys(struct wl_parser *p, const struct ks_yaml_node *n, struct ks_bench_op *op)
{
    const char *param = NULL;
    int rc;

    if (op->code == KS_BENCH_CREATE_ANY)
        return object_template(p, n, op);
    if (op->code != KS_BENCH_CREATE_RESOURCE_DRIVER)
        return 0;
    if ((rc = scalar(p, ks_yaml_get(n, "driverName"), "driverName", &op->driver_name)) ||
        (rc = scalar(p, ks_yaml_get(n, "nodes"), "nodes", &op->nodes)) ||
        (rc = integer(p, ks_yaml_get(n, "maxClaimsPerNode"), "maxClaimsPerNode", 1, &op->max_claims)) ||
        (rc = scalar(p, ks_yaml_get(n, "maxClaimsPerNodeParam"), "maxClaimsPerNodeParam", &param)) ||
        (rc = device_attrs(p, ks_yaml_get(n, "deviceAttributes"), false, op)) ||
        (rc = device_attrs(p, ks_yaml_get(n, "deviceCapacity"), true, op)))
        return rc;
    if (!op->driver_name)
        return fail(p, n, "driverName", "Required value%s", "");
    if (param && (rc = param_name(p, ks_yaml_get(n, "maxClaimsPerNodeParam"), "maxClaimsPerNodeParam", param,
                                  &op->max_claims_param)))
        return rc;
    if (!param && !op->max_claims)
        return fail(p, n, "maxClaimsPerNode", "Required value: maxClaimsPerNode or maxClaimsPerNodeParam%s",
                    "");
    return 0;
}

/* createPods' podGroupSizes: a non-empty list of gang sizes (each at least 1), taken in turn. */
static int group_sizes(struct wl_parser *p, const struct ks_yaml_node *n, struct ks_bench_op *op)
{
    const struct ks_yaml_node *list = ks_yaml_get(n, "podGroupSizes");
    char field[48];
    int rc;

    op->expect_bound_gangs = -1;
    if ((rc = integer(p, ks_yaml_get(n, "expectBoundGangs"), "expectBoundGangs", 0, &op->expect_bound_gangs)))
        return rc;
    if (!list && ks_yaml_get(n, "expectBoundGangs"))
        return fail(p, ks_yaml_get(n, "expectBoundGangs"), "expectBoundGangs", "needs podGroupSizes%s", "");
    if (!list && ks_yaml_get(n, "podGroupTopologyKeys"))
        return fail(p, ks_yaml_get(n, "podGroupTopologyKeys"), "podGroupTopologyKeys",
                    "needs podGroupSizes%s", "");
    if (!list)
        return 0;
    if (list->kind != KS_YAML_SEQ || list->n == 0)
        return fail(p, list, "podGroupSizes", "must be a non-empty list of gang sizes%s", "");
    if (op->steady_state)
        return fail(p, list, "podGroupSizes", "a steadyState createPods makes no pod groups%s", "");
    if (!(op->group_sizes = ks_arena_calloc(&p->w->arena, list->n, sizeof(*op->group_sizes))))
        return -ENOMEM;
    if (!(op->group_size_params = ks_arena_calloc(&p->w->arena, list->n, sizeof(*op->group_size_params))))
        return -ENOMEM;
    for (uint32_t i = 0; i < list->n; i++) {
        const struct ks_yaml_node *item = list->items[i];
        int64_t v = 0;
        snprintf(field, sizeof(field), "podGroupSizes[%u]", i);
        if (item->kind == KS_YAML_SCALAR && item->str[0] == '$') {
            /* a $param: resolved for the size that runs */
            if ((rc = param_name(p, item, field, item->str, &op->group_size_params[i])))
                return rc;
            continue;
        }
        if ((rc = integer(p, item, field, 1, &v)))
            return rc;
        if (v > 100000)
            return fail(p, list->items[i], field, "must be at most 100000%s", "");
        op->group_sizes[i] = (uint32_t)v;
    }
    op->ngroup_sizes = list->n;
    const struct ks_yaml_node *keys = ks_yaml_get(n, "podGroupTopologyKeys");
    if (!keys)
        return 0;
    if (keys->kind != KS_YAML_SEQ || keys->n == 0)
        return fail(p, keys, "podGroupTopologyKeys", "must be a non-empty list of label keys (\"\": none)%s",
                    "");
    if (!(op->group_keys = ks_arena_calloc(&p->w->arena, keys->n, sizeof(*op->group_keys))))
        return -ENOMEM;
    for (uint32_t i = 0; i < keys->n; i++) {
        const char *k = NULL;
        snprintf(field, sizeof(field), "podGroupTopologyKeys[%u]", i);
        if ((rc = scalar(p, keys->items[i], field, &k)))
            return rc;
        op->group_keys[i] = !k || !*k ? KS_ID_NONE : ks_intern(k);
        if (k && *k && op->group_keys[i] == KS_ID_NONE)
            return -ENOMEM;
    }
    op->ngroup_keys = keys->n;
    return 0;
}

/* The workload's featureGates: a map of gate names to booleans, kept as a --feature-gates value. */
static int feature_gates(struct wl_parser *p, const struct ks_yaml_node *n)
{
    char buf[1024];
    size_t len = 0;
    int rc;

    if (!n)
        return 0;
    if (n->kind != KS_YAML_MAP)
        return fail(p, n, "featureGates", "must be a map of gate names to booleans%s", "");
    buf[0] = '\0';
    for (uint32_t i = 0; i < n->n; i++) {
        const struct ks_yaml_node *k = n->pairs[i].key;
        bool on = false;
        if (k->kind != KS_YAML_SCALAR)
            return fail(p, k, "featureGates", "must be a map of gate names to booleans%s", "");
        if ((rc = boolean(p, n->pairs[i].value, k->str, &on)))
            return rc;
        len += (size_t)snprintf(buf + len, len < sizeof(buf) ? sizeof(buf) - len : 0, "%s%s=%s", i ? "," : "",
                                k->str, on ? "true" : "false");
        if (len >= sizeof(buf))
            return fail(p, n, "featureGates", "too many gates%s", "");
    }
    if (!(p->w->feature_gates = ks_arena_strdup(&p->w->arena, buf)))
        return -ENOMEM;
    return 0;
}

/* createPods' steadyState, totalPods/totalPodsParam and skipWaitToCompletion. */
static int steady_keys(struct wl_parser *p, const struct ks_yaml_node *n, struct ks_bench_op *op)
{
    const struct ks_yaml_node *total = ks_yaml_get(n, "totalPods"),
                              *tparam = ks_yaml_get(n, "totalPodsParam");
    const char *param = NULL;
    int rc;

    if ((rc = boolean(p, ks_yaml_get(n, "steadyState"), "steadyState", &op->steady_state)) ||
        (rc = boolean(p, ks_yaml_get(n, "skipWaitToCompletion"), "skipWaitToCompletion", &op->skip_wait)) ||
        (rc = integer(p, total, "totalPods", 1, &op->total)) ||
        (rc = scalar(p, tparam, "totalPodsParam", &param)))
        return rc;
    if (param && (rc = param_name(p, tparam, "totalPodsParam", param, &op->total_param)))
        return rc;
    if (op->steady_state && !total && !tparam)
        return fail(p, n, "totalPods", "Required value: steadyState runs totalPods or totalPodsParam pods%s",
                    "");
    if (!op->steady_state && (total || tparam))
        return fail(p, total ? total : tparam, total ? "totalPods" : "totalPodsParam",
                    "only a steadyState createPods has a total%s", "");
    if (op->skip_wait && (op->steady_state || op->collect_metrics))
        return fail(p, ks_yaml_get(n, "skipWaitToCompletion"), "skipWaitToCompletion",
                    "the measured and steadyState pods are waited for%s", "");
    if (op->steady_state && op->npod_templates > 1)
        return fail(p, ks_yaml_get(n, "podTemplates"), "podTemplates",
                    "a steadyState createPods takes one podTemplate%s", "");
    return 0;
}

/* A v1 object template of @kind, decoded once now so that a bad one is an error of the file. */
static int checked_object(struct wl_parser *p, const struct ks_yaml_node *ref, const char *field,
                          const char *kind, const struct ks_yaml_node **out)
{
    int rc = template(p, p->object_templates, ref, field, kind, out);
    if (rc || !*out)
        return rc;
    enum ks_kind k = KS_KIND_NODE;
    void *obj = NULL;
    rc = ks_object_decode(p->w->file, *out, &k, &obj, p->err);
    if (obj)
        ks_object_destroy(k, obj);
    return rc;
}

/* createPods' persistentVolumeTemplate and persistentVolumeClaimTemplate: both, or neither. */
static int volume_keys(struct wl_parser *p, const struct ks_yaml_node *n, struct ks_bench_op *op)
{
    const struct ks_yaml_node *pv = ks_yaml_get(n, "persistentVolumeTemplate");
    const struct ks_yaml_node *pvc = ks_yaml_get(n, "persistentVolumeClaimTemplate");
    int rc;

    if ((rc = checked_object(p, pv, "persistentVolumeTemplate", "PersistentVolume", &op->pv_template)) ||
        (rc = checked_object(p, pvc, "persistentVolumeClaimTemplate", "PersistentVolumeClaim",
                             &op->pvc_template)))
        return rc;
    if (!pv != !pvc)
        return fail(p, pv ? pv : pvc, pv ? "persistentVolumeClaimTemplate" : "persistentVolumeTemplate",
                    "Required value: a pod's claim and its volume come from two templates%s", "");
    if (pv && op->steady_state)
        return fail(p, pv, "persistentVolumeTemplate", "a steadyState createPods makes no volumes%s", "");
    return 0;
}

static int parse_op(struct wl_parser *p, const struct ks_yaml_node *n, const struct ks_yaml_node *dflt_pod,
                    struct ks_bench_op *op)
{
    const char *opcode = NULL, *param = NULL, *expect = NULL, *mode = NULL;
    int64_t number = 1, interval = 0;
    int rc;

    *op = (struct ks_bench_op){.line = n->line, .label_key = KS_ID_NONE, .owner_op = -1};
    if ((rc = op_keys(p, n, -1, NULL)) || (rc = scalar(p, ks_yaml_get(n, "opcode"), "opcode", &opcode)) ||
        (rc = scalar(p, ks_yaml_get(n, "countParam"), "countParam", &param)) ||
        (rc = integer(p, ks_yaml_get(n, "count"), "count", 0, &op->count)) ||
        (rc = scalar(p, ks_yaml_get(n, "namespace"), "namespace", &op->namespace)) ||
        (rc = boolean(p, ks_yaml_get(n, "collectMetrics"), "collectMetrics", &op->collect_metrics)) ||
        (rc = scalar(p, ks_yaml_get(n, "expect"), "expect", &expect)) ||
        (rc = scalar(p, ks_yaml_get(n, "mode"), "mode", &mode)) ||
        (rc = integer(p, ks_yaml_get(n, "number"), "number", 1, &number)) ||
        (rc = integer(p, ks_yaml_get(n, "intervalPods"), "intervalPods", 1, &interval)) ||
        (rc = template(p, p->pod_templates, ks_yaml_get(n, "podTemplate"), "podTemplate", "Pod",
                       &op->pod_template)) ||
        (rc = template(p, p->node_templates, ks_yaml_get(n, "nodeTemplate"), "nodeTemplate", "Node",
                       &op->node_template)))
        return rc;
    if (!opcode)
        return fail(p, n, "opcode", "Required value%s", "");
    if (strcmp(opcode, "createNodes") == 0) {
        op->code = KS_BENCH_CREATE_NODES;
    } else if (strcmp(opcode, "createPods") == 0) {
        op->code = KS_BENCH_CREATE_PODS;
    } else if (strcmp(opcode, "churn") == 0) {
        op->code = KS_BENCH_CHURN;
    } else if (strcmp(opcode, "createResourceDriver") == 0) {
        op->code = KS_BENCH_CREATE_RESOURCE_DRIVER;
    } else if (strcmp(opcode, "createAny") == 0) {
        op->code = KS_BENCH_CREATE_ANY;
    } else if (strcmp(opcode, "allocResourceClaims") == 0) {
        op->code = KS_BENCH_ALLOC_RESOURCE_CLAIMS;
    } else {
        return fail(p, ks_yaml_get(n, "opcode"), "opcode",
                    "unknown opcode \"%s\" (createNodes, createPods, churn, createResourceDriver, createAny, "
                    "allocResourceClaims)",
                    opcode);
    }
    if ((rc = op_keys(p, n, (int)op->code, opcode)))
        return rc;
    if (param && (rc = param_name(p, ks_yaml_get(n, "countParam"), "countParam", param, &op->count_param)))
        return rc;
    bool pods = op->code == KS_BENCH_CREATE_PODS || op->code == KS_BENCH_CHURN;
    if ((op->code == KS_BENCH_CREATE_NODES || op->code == KS_BENCH_CREATE_PODS) && !op->count_param &&
        !ks_yaml_get(n, "count"))
        return fail(p, n, "count", "Required value: count or countParam%s", "");
    if (op->code == KS_BENCH_CREATE_ANY) {
        op->numbered = op->count_param || ks_yaml_get(n, "count");
        if (!op->numbered)
            op->count = 1;
    }
    if ((rc = pod_template_list(p, n, op)) || (rc = dra_keys(p, n, op)) || (rc = steady_keys(p, n, op)) ||
        (rc = group_sizes(p, n, op)) || (rc = volume_keys(p, n, op)) || (rc = owners_key(p, n, op)))
        return rc;
    if (pods && !op->pod_template)
        op->pod_template = dflt_pod;
    if (pods && !op->pod_template)
        return fail(p, n, "podTemplate", "Required value: no podTemplate and no defaultPodTemplate%s", "");
    if (op->pod_template && !op->pod_templates) {
        if (!(op->pod_templates = ks_arena_calloc(&p->w->arena, 1, sizeof(*op->pod_templates))))
            return -ENOMEM;
        op->pod_templates[0] = op->pod_template;
        op->npod_templates = 1;
    }
    if (!expect || strcmp(expect, "Bound") == 0) {
        op->expect = KS_BENCH_EXPECT_BOUND;
    } else if (strcmp(expect, "Unschedulable") == 0) {
        op->expect = KS_BENCH_EXPECT_UNSCHEDULABLE;
    } else if (strcmp(expect, "Settled") == 0) {
        op->expect = KS_BENCH_EXPECT_SETTLED;
    } else {
        return fail(p, ks_yaml_get(n, "expect"), "expect",
                    "unknown value \"%s\" (Bound, Unschedulable, Settled)", expect);
    }
    if (op->code == KS_BENCH_CHURN) {
        if (mode && strcmp(mode, "recreate") != 0)
            return fail(p, ks_yaml_get(n, "mode"), "mode", "unsupported churn mode \"%s\" (recreate)", mode);
        if (!interval)
            return fail(p, n, "intervalPods", "Required value%s", "");
        op->number = (uint32_t)number;
        op->interval_pods = (uint32_t)interval;
    }
    const struct ks_yaml_node *lnp = ks_yaml_get(n, "labelNodePrepareStrategy");
    if (lnp) {
        static const char *const lfields[] = {"labelKey", "labelValues", "labelValuePrefix", "nodesPerValue",
                                              NULL};
        const struct ks_yaml_node *vals = ks_yaml_get(lnp, "labelValues");
        const char *key = NULL;
        int64_t per = 0;
        if ((rc = strict(p, lnp, "labelNodePrepareStrategy", lfields)) ||
            (rc = scalar(p, ks_yaml_get(lnp, "labelKey"), "labelKey", &key)) ||
            (rc = scalar(p, ks_yaml_get(lnp, "labelValuePrefix"), "labelValuePrefix", &op->label_prefix)) ||
            (rc = integer(p, ks_yaml_get(lnp, "nodesPerValue"), "nodesPerValue", 1, &per)))
            return rc;
        if (key && !vals && op->label_prefix && per) {
            /* node i gets <labelValuePrefix><i / nodesPerValue>: consecutive nodes share a value */
            op->nodes_per_value = (uint32_t)per;
            if ((op->label_key = ks_intern(key)) == KS_ID_NONE)
                return -ENOMEM;
            return 0;
        }
        if (!key || !vals || vals->kind != KS_YAML_SEQ || vals->n == 0 || op->label_prefix || per)
            return fail(p, lnp, "labelNodePrepareStrategy",
                        "needs labelKey and a list of labelValues, or labelKey, labelValuePrefix and "
                        "nodesPerValue%s",
                        "");
        if (!(op->label_values = ks_arena_calloc(&p->w->arena, vals->n, sizeof(*op->label_values))))
            return -ENOMEM;
        for (uint32_t i = 0; i < vals->n; i++) {
            const char *v = NULL;
            if ((rc = scalar(p, vals->items[i], "labelValues", &v)))
                return rc;
            if ((op->label_values[i] = ks_intern(v)) == KS_ID_NONE)
                return -ENOMEM;
        }
        op->nlabel_values = vals->n;
        if ((op->label_key = ks_intern(key)) == KS_ID_NONE)
            return -ENOMEM;
    }
    return 0;
}

static int parse_size(struct wl_parser *p, const struct ks_yaml_node *n, struct ks_bench_size *sz)
{
    static const char *const fields[] = {"name", "labels", "params", NULL};
    const struct ks_yaml_node *labels = ks_yaml_get(n, "labels"), *params = ks_yaml_get(n, "params");
    int rc;

    if ((rc = strict(p, n, "workloads", fields)) ||
        (rc = scalar(p, ks_yaml_get(n, "name"), "name", &sz->name)))
        return rc;
    if (!sz->name)
        return fail(p, n, "workloads.name", "Required value%s", "");
    if (labels) {
        if (labels->kind != KS_YAML_SEQ)
            return fail(p, labels, "labels", "must be a list, not %s", ks_yaml_kind_name(labels));
        if (!(sz->labels = ks_arena_calloc(&p->w->arena, labels->n ? labels->n : 1, sizeof(*sz->labels))))
            return -ENOMEM;
        for (uint32_t i = 0; i < labels->n; i++) {
            if ((rc = scalar(p, labels->items[i], "labels", &sz->labels[i])))
                return rc;
        }
        sz->nlabels = labels->n;
    }
    if (!params || params->kind != KS_YAML_MAP)
        return fail(p, params ? params : n, "params", "Required value: a map of $params%s", "");
    if (!(sz->params = ks_arena_calloc(&p->w->arena, params->n ? params->n : 1, sizeof(*sz->params))))
        return -ENOMEM;
    for (uint32_t i = 0; i < params->n; i++) {
        struct ks_bench_param *pr = &sz->params[i];
        if ((rc = scalar(p, params->pairs[i].key, "params", &pr->name)) ||
            (rc = integer(p, params->pairs[i].value, pr->name, 0, &pr->value)))
            return rc;
    }
    sz->nparams = params->n;
    return 0;
}

static int parse(struct wl_parser *p, const struct ks_yaml_node *doc)
{
    static const char *const fields[] = {"name",
                                         "description",
                                         "defaultPodTemplate",
                                         "podTemplates",
                                         "nodeTemplates",
                                         "objectTemplates",
                                         "workloadTemplate",
                                         "workloads",
                                         "featureGates",
                                         NULL};
    struct ks_bench_workload *w = p->w;
    const struct ks_yaml_node *ops = ks_yaml_get(doc, "workloadTemplate"),
                              *sizes = ks_yaml_get(doc, "workloads");
    const struct ks_yaml_node *dflt = NULL;
    int rc;

    if ((rc = strict(p, doc, "workload", fields)) ||
        (rc = scalar(p, ks_yaml_get(doc, "name"), "name", &w->name)))
        return rc;
    if (!w->name)
        return fail(p, doc, "name", "Required value%s", "");
    if ((rc = feature_gates(p, ks_yaml_get(doc, "featureGates"))))
        return rc;
    p->pod_templates = ks_yaml_get(doc, "podTemplates");
    p->node_templates = ks_yaml_get(doc, "nodeTemplates");
    p->object_templates = ks_yaml_get(doc, "objectTemplates");
    if ((rc = template(p, p->pod_templates, ks_yaml_get(doc, "defaultPodTemplate"), "defaultPodTemplate",
                       "Pod", &dflt)))
        return rc;
    if (!ops || ops->kind != KS_YAML_SEQ || ops->n == 0)
        return fail(p, ops ? ops : doc, "workloadTemplate", "Required value: a list of opcodes%s", "");
    if (!sizes || sizes->kind != KS_YAML_SEQ || sizes->n == 0)
        return fail(p, sizes ? sizes : doc, "workloads", "Required value: a list of sizes%s", "");
    if (!(w->ops = ks_arena_calloc(&w->arena, ops->n, sizeof(*w->ops))) ||
        !(w->sizes = ks_arena_calloc(&w->arena, sizes->n, sizeof(*w->sizes))))
        return -ENOMEM;
    uint32_t measured = 0, steady = 0;
    for (uint32_t i = 0; i < ops->n; i++) {
        if ((rc = parse_op(p, ops->items[i], dflt, &w->ops[i])))
            return rc;
        measured += w->ops[i].collect_metrics;
        if (w->ops[i].steady_state && steady++)
            return fail(p, ops->items[i], "steadyState", "one createPods per workload may be steadyState%s",
                        "");
    }
    w->nops = ops->n;
    if (measured != 1)
        return fail(p, ops, "workloadTemplate", "exactly one createPods op must have collectMetrics: true%s",
                    "");
    for (uint32_t i = 0; i < sizes->n; i++) {
        if ((rc = parse_size(p, sizes->items[i], &w->sizes[i])))
            return rc;
    }
    w->nsizes = sizes->n;
    return 0;
}

int ks_bench_workload_load(const char *path, struct ks_bench_workload **out, struct ks_error *err)
{
    struct ks_bench_workload *w = calloc(1, sizeof(*w));
    int rc;

    *out = NULL;
    if (!w)
        return -ENOMEM;
    if ((rc = ks_yaml_parse_file(path, &w->stream, err)) < 0)
        goto err;
    w->file = w->stream->file;
    if (w->stream->ndocs != 1 || !w->stream->docs[0]) {
        rc = ks_error_set(err, path, 1, NULL, "a workload file holds exactly one document");
        goto err;
    }
    struct wl_parser p = {.w = w, .err = err};
    if ((rc = parse(&p, w->stream->docs[0])) < 0)
        goto err;
    *out = w;
    return 0;
err:
    ks_bench_workload_destroy(w);
    return rc;
}

void ks_bench_workload_destroy(struct ks_bench_workload *w)
{
    if (!w)
        return;
    ks_arena_destroy(&w->arena);
    ks_yaml_stream_destroy(w->stream);
    free(w);
}

int64_t ks_bench_param(const struct ks_bench_size *size, const char *name, int64_t dflt)
{
    for (uint32_t i = 0; i < size->nparams; i++) {
        if (strcmp(size->params[i].name, name) == 0)
            return size->params[i].value;
    }
    return dflt;
}

const struct ks_yaml_node *ks_bench_op_pod_template(const struct ks_bench_op *op, uint64_t k)
{
    return op->npod_templates ? op->pod_templates[k % op->npod_templates] : op->pod_template;
}

const struct ks_bench_size *ks_bench_size_for(const struct ks_bench_workload *w, uint32_t nodes)
{
    const struct ks_bench_size *best = &w->sizes[0];
    double best_d = -1;
    for (uint32_t i = 0; i < w->nsizes; i++) {
        double n = (double)ks_bench_param(&w->sizes[i], "initNodes", 1);
        double r = n > nodes ? n / (nodes ? nodes : 1) : nodes / (n ? n : 1);
        if (best_d < 0 || r < best_d) {
            best_d = r;
            best = &w->sizes[i];
        }
    }
    return best;
}

/* ---- finding workload files ------------------------------------------------------------------- */

static bool is_dir(const char *path)
{
    DIR *d = opendir(path);
    if (d)
        closedir(d);
    return d != NULL;
}

/* The workloads directory: $KSCHED_BENCH_WORKLOADS, next to the binary's tree, or ./bench/workloads. */
static char *workload_dir(const char *argv0)
{
    const char *env = getenv("KSCHED_BENCH_WORKLOADS");
    if (env && *env)
        return strdup(env);
    char exe[PATH_MAX], path[PATH_MAX + 64];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (len <= 0 && argv0) {
        snprintf(exe, sizeof(exe), "%s", argv0);
        len = (ssize_t)strlen(exe);
    }
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            static const char *const up[] = {"/../bench/workloads", "/../../bench/workloads",
                                             "/../../../bench/workloads"};
            for (size_t i = 0; i < sizeof(up) / sizeof(up[0]); i++) {
                snprintf(path, sizeof(path), "%s%s", exe, up[i]);
                if (is_dir(path))
                    return realpath(path, NULL);
            }
        }
    }
    return strdup("bench/workloads");
}

char *ks_bench_workload_find(const char *name, const char *argv0)
{
    size_t len = strlen(name);
    if (strchr(name, '/') || (len > 5 && strcmp(name + len - 5, ".yaml") == 0))
        return strdup(name);
    char *dir = workload_dir(argv0), *path = NULL;
    if (dir && asprintf(&path, "%s/%s.yaml", dir, name) < 0)
        path = NULL;
    free(dir);
    return path;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void ks_bench_workload_list(FILE *out, const char *argv0)
{
    char *dir = workload_dir(argv0);
    DIR *d = dir ? opendir(dir) : NULL;
    char *names[256];
    size_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) && n < 256) {
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".yaml") == 0 && (names[n] = strndup(e->d_name, len - 5)))
            n++;
    }
    if (d)
        closedir(d);
    qsort(names, n, sizeof(names[0]), cmp_str);
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "%s\n", names[i]);
        free(names[i]);
    }
    free(dir);
}
