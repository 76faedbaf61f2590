/*
 * test_bench_workload.c - workload files of `ksched bench` (bench/harness/bench_workload.c):
 * createPods' podTemplates list, whose pods take the templates in turn, its errors, and
 * bench/workloads/SchedulingJobs.yaml, ten Jobs' pods interleaved on a cluster whose pools
 * they can reach.
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
#include <unistd.h>

#define JOBS_FILE KS_TEST_DATA_DIR "/../../bench/workloads/SchedulingJobs.yaml"

TestSuite(bench_workload, .init = bench_test_init);

#define POD(name) "  " name ": {apiVersion: v1, kind: Pod, metadata: {generateName: " name "-}}\n"

static const char head[] = "name: T\n"
                           "podTemplates:\n" POD("a") POD("b") POD("c") "workloadTemplate:\n"
                                                                        "- {opcode: createNodes, count: 1}\n";
static const char sizes[] = "workloads:\n- {name: one, params: {n: 1}}\n";

/* @ops (workloadTemplate entries after one createNodes) in a file with templates a, b, c. */
static int load_ops(const char *ops, struct ks_bench_workload **out, struct ks_error *err)
{
    return load_parts(head, ops, sizes, out, err);
}

static const char *template_prefix(const struct ks_bench_op *op, uint64_t k)
{
    return ks_bench_template_prefix(ks_bench_op_pod_template(op, k), "?");
}

Test(bench_workload, pod_templates_are_taken_in_turn)
{
    struct ks_bench_workload *w = NULL;
    struct ks_error err = {0};
    int rc = load_ops("- {opcode: createPods, count: 7, podTemplates: [a, b, c, a]}\n"
                      "- {opcode: createPods, count: 2, podTemplate: b, collectMetrics: true}\n",
                      &w, &err);
    cr_assert_eq(rc, 0, "%s:%d: %s: %s", err.file, err.line, err.field, err.msg);
    cr_assert_eq(w->nops, 3);

    const struct ks_bench_op *mixed = &w->ops[1];
    cr_expect(eq(u32, mixed->npod_templates, 4));
    const char *want[] = {"a-", "b-", "c-", "a-", "a-", "b-", "c-", "a-", "a-"};
    for (uint64_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
        cr_expect(eq(str, (char *)template_prefix(mixed, k), (char *)want[k]), "pod %lu", (unsigned long)k);
    cr_expect_eq(mixed->pod_template, mixed->pod_templates[0], "podTemplate is the first of the list");
    cr_expect_eq(mixed->pod_templates[0], mixed->pod_templates[3], "a repeated name is the same template");

    const struct ks_bench_op *one = &w->ops[2];
    cr_expect(eq(u32, one->npod_templates, 1));
    for (uint64_t k = 0; k < 3; k++)
        cr_expect(eq(str, (char *)template_prefix(one, k), "b-"));
    cr_expect(eq(u32, w->ops[0].npod_templates, 0), "createNodes has no pod template");
    ks_bench_workload_destroy(w);
}

Test(bench_workload, default_pod_template_is_a_list_of_one)
{
    struct ks_bench_workload *w = NULL;
    struct ks_error err = {0};
    char text[2048];
    snprintf(text, sizeof(text), "defaultPodTemplate: c\n%s%s%s", head,
             "- {opcode: createPods, count: 2, collectMetrics: true}\n", sizes);
    cr_assert_eq(load_text(text, &w, &err), 0, "%s", err.msg);
    cr_expect(eq(u32, w->ops[1].npod_templates, 1));
    cr_expect(eq(str, (char *)template_prefix(&w->ops[1], 5), "c-"));
    ks_bench_workload_destroy(w);
}

Test(bench_workload, pod_template_list_errors_name_line_and_field)
{
    static const struct {
        const char *ops, *field, *msg;
        int line; /* of the op (its podTemplates value is on the same line) */
    } cases[] = {
        {"- {opcode: createPods, count: 1, podTemplate: a, podTemplates: [b], collectMetrics: true}\n",
         "podTemplates", "give podTemplate or podTemplates, not both", 0},
        {"- {opcode: createPods, count: 1, podTemplates: [a, nope], collectMetrics: true}\n",
         "podTemplates[1]", "no template named \"nope\"", 0},
        {"- {opcode: createPods, count: 1, podTemplates: [], collectMetrics: true}\n", "podTemplates",
         "must be a non-empty list of podTemplates names", 0},
        {"- {opcode: createPods, count: 1, podTemplates: a, collectMetrics: true}\n", "podTemplates",
         "must be a non-empty list of podTemplates names", 0},
        {"- {opcode: createPods, count: 1, podTemplates: [a, [b]], collectMetrics: true}\n",
         "podTemplates[1]", "must be a string", 0},
        {"- {opcode: createNodes, count: 1, podTemplates: [a]}\n"
         "- {opcode: createPods, count: 1, podTemplate: a, collectMetrics: true}\n",
         "podTemplates", "only createPods takes a list of templates", 0},
    };
    int first_op_line = 8; /* after head's lines */
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ks_bench_workload *w = NULL;
        struct ks_error err = {0};
        int rc = load_ops(cases[i].ops, &w, &err);
        expect_load_error(i, rc, w, &err, cases[i].field, cases[i].msg, first_op_line + cases[i].line);
    }
}

/* ---- SchedulingJobs ------------------------------------------------------------------------- */

static const struct ks_bench_op *measured(const struct ks_bench_workload *w)
{
    for (uint32_t i = 0; i < w->nops; i++) {
        if (w->ops[i].collect_metrics)
            return &w->ops[i];
    }
    cr_fatal("no measured op");
    return NULL;
}

static struct ks_pod *decode(const struct ks_bench_workload *w, const struct ks_bench_op *op, uint64_t k)
{
    struct ks_pod *pod = NULL;
    struct ks_error err = {0};
    char name[64];
    snprintf(name, sizeof(name), "p-%lu", (unsigned long)k);
    int rc = ks_bench_pod(ks_bench_op_pod_template(op, k), w->file, name, op->namespace, &pod, &err);
    cr_assert_eq(rc, 0, "%s:%d: %s: %s", err.file, err.line, err.field, err.msg);
    return pod;
}

static const char *label(const struct ks_labels *l, const char *key)
{
    uint32_t v;
    return ks_labels_get(l, ks_intern(key), &v) ? ks_intern_str(v) : NULL;
}

Test(bench_workload, scheduling_jobs_pods_are_ten_jobs_interleaved)
{
    struct ks_bench_workload *w = NULL;
    struct ks_error err = {0};
    cr_assert_eq(ks_bench_workload_load(JOBS_FILE, &w, &err), 0, "%s:%d: %s: %s", err.file, err.line,
                 err.field, err.msg);
    cr_expect(eq(str, (char *)w->name, "SchedulingJobs"));
    const struct ks_bench_op *op = measured(w);
    cr_assert_eq(op->npod_templates, 10);

    const char *jobs[10];
    int64_t cpu[10], memory[10];
    uint32_t selectors = 0, tolerating = 0;
    for (uint64_t k = 0; k < 30; k++) {
        struct ks_pod *pod = decode(w, op, k);
        cr_assert_eq(pod->meta.nowners, 1, "pod %lu", (unsigned long)k);
        const struct ks_owner_ref *o = &pod->meta.owners[0];
        cr_expect(eq(str, (char *)o->api_version, "batch/v1"));
        cr_expect(eq(str, (char *)o->kind, "Job"));
        cr_expect(o->controller, "the Job is the pod's controller");
        cr_expect(o->uid && o->uid[0]);
        const char *job = label(&pod->meta.labels, "batch.kubernetes.io/job-name");
        cr_assert(job && strcmp(job, o->name) == 0, "labelled with its Job's name");
        if (k < 10) {
            /* pod 1 of every Job, then pod 2 of every Job... */
            for (uint64_t j = 0; j < k; j++)
                cr_expect(strcmp(jobs[j], job) != 0, "pods %lu and %lu are both of %s", (unsigned long)j,
                          (unsigned long)k, job);
            jobs[k] = ks_intern_str(ks_intern(job));
            cpu[k] = pod->requests.milli_cpu;
            memory[k] = pod->requests.memory;
            selectors += pod->node_selector.n > 0;
            tolerating += pod->ntolerations > 0;
        } else {
            cr_expect(eq(str, (char *)job, (char *)jobs[k % 10]), "pod %lu", (unsigned long)k);
        }
        ks_pod_put(pod);
    }
    for (int i = 0; i < 10; i++) {
        for (int j = 0; j < i; j++)
            cr_expect(cpu[i] != cpu[j] || memory[i] != memory[j], "%s and %s request the same", jobs[i],
                      jobs[j]);
    }
    cr_expect_geq(selectors, 3, "some Jobs select a pool");
    cr_expect_geq(tolerating, 3, "some Jobs tolerate a pool's taint");
    ks_bench_workload_destroy(w);
}

/* Does @pod fit @node's labels (its nodeSelector) and taints (its tolerations)? */
static bool reaches(const struct ks_pod *pod, const struct ks_node *node)
{
    for (uint32_t i = 0; i < pod->node_selector.n; i++) {
        const struct ks_label *l = &pod->node_selector.items[i];
        uint32_t v;
        if (!ks_labels_get(&node->meta.labels, l->key, &v) || v != l->value)
            return false;
    }
    for (uint32_t t = 0; t < node->ntaints; t++) {
        bool tolerated = false;
        for (uint32_t i = 0; i < pod->ntolerations && !tolerated; i++)
            tolerated = ks_toleration_tolerates(&pod->tolerations[i], &node->taints[t]);
        if (!tolerated)
            return false;
    }
    return true;
}

/* Every Job reaches some node of the cluster; every tainted pool is reached by some Job. */
Test(bench_workload, scheduling_jobs_pools_match_the_jobs)
{
    struct ks_bench_workload *w = NULL;
    struct ks_error err = {0};
    cr_assert_eq(ks_bench_workload_load(JOBS_FILE, &w, &err), 0, "%s", err.msg);
    const struct ks_bench_op *op = measured(w);

    /* one node of each kind the createNodes ops make: each label value, each template */
    struct ks_node *nodes[16];
    uint32_t n = 0, ntainted = 0;
    for (uint32_t i = 0; i < w->nops; i++) {
        const struct ks_bench_op *c = &w->ops[i];
        if (c->code != KS_BENCH_CREATE_NODES)
            continue;
        if (c->node_template) {
            cr_assert_lt(n, 16);
            cr_assert_eq(ks_bench_node_from(c->node_template, w->file, "pool", &nodes[n], &err), 0, "%s",
                         err.msg);
            cr_expect_gt(nodes[n]->ntaints, 0, "a pool of its own is tainted");
            ntainted += nodes[n]->ntaints > 0;
            n++;
            continue;
        }
        for (uint32_t v = 0; v < (c->nlabel_values ? c->nlabel_values : 1); v++) {
            cr_assert_lt(n, 16);
            nodes[n] = ks_bench_node("general", v, c);
            cr_assert_not_null(nodes[n]);
            n++;
        }
    }
    cr_assert_geq(ntainted, 2);

    bool reached[16] = {0};
    for (uint64_t k = 0; k < op->npod_templates; k++) {
        struct ks_pod *pod = decode(w, op, k);
        bool any = false;
        for (uint32_t i = 0; i < n; i++) {
            if (reaches(pod, nodes[i]))
                any = reached[i] = true;
        }
        cr_expect(any, "template %lu (%s): no node fits its nodeSelector and taints", (unsigned long)k,
                  ks_bench_template_prefix(ks_bench_op_pod_template(op, k), "?"));
        ks_pod_put(pod);
    }
    for (uint32_t i = 0; i < n; i++) {
        cr_expect(reached[i], "no Job reaches node %u (%s)", i, label(&nodes[i]->meta.labels, "nodepool"));
        ks_node_destroy(nodes[i]);
    }
    ks_bench_workload_destroy(w);
}

/* ---- createPods' volume templates (PreemptionPVs) -------------------------------------------- */

#define PVS_FILE KS_TEST_DATA_DIR "/../../bench/workloads/PreemptionPVs.yaml"

Test(bench_workload, each_measured_pod_of_preemption_pvs_gets_a_bound_claim_of_its_own)
{
    struct ks_bench_workload *w = NULL;
    struct ks_error err = {0};
    cr_assert_eq(ks_bench_workload_load(PVS_FILE, &w, &err), 0, "%s:%d: %s: %s", err.file, err.line,
                 err.field, err.msg);
    const struct ks_bench_op *op = measured(w);
    cr_assert_not_null(op->pv_template);
    cr_assert_not_null(op->pvc_template);
    uint32_t opi = (uint32_t)(op - w->ops);
    struct ks_objects *objs = calloc(1, sizeof(*objs));
    cr_assert_not_null(objs);
    struct ks_pod *pods[2];
    for (uint32_t k = 0; k < 2; k++) {
        pods[k] = decode(w, op, k);
        cr_assert_eq(ks_bench_pod_volume(op, w->file, opi, k, pods[k], objs, &err), 0, "%s", err.msg);
        cr_assert_eq(pods[k]->nvolumes, 1);
        cr_expect(eq(str, (char *)pods[k]->volumes[0].name, "vol"));
        cr_expect_eq(pods[k]->volumes[0].kind, KS_VOLUME_PVC);
    }
    cr_assert_eq(objs->of[KS_KIND_PVC].n, 2);
    cr_assert_eq(objs->of[KS_KIND_PV].n, 2);
    for (uint32_t k = 0; k < 2; k++) {
        const struct ks_persistent_volume_claim *pvc = objs->of[KS_KIND_PVC].items[k];
        const struct ks_persistent_volume *pv = objs->of[KS_KIND_PV].items[k];
        char claim[32], volume[64];
        snprintf(claim, sizeof(claim), "pvc-%u-%u", opi, k);
        snprintf(volume, sizeof(volume), "default-vol-%u-%u", opi, k);
        cr_expect(eq(str, (char *)pods[k]->volumes[0].source, claim));
        cr_expect(eq(str, (char *)pvc->meta.name, claim));
        cr_expect_eq(pvc->meta.namespace_id, pods[k]->meta.namespace_id);
        cr_expect(eq(str, (char *)pvc->volume_name, volume));
        cr_expect(eq(str, (char *)pvc->phase, "Bound"));
        cr_expect(eq(str, (char *)pv->meta.name, volume));
        cr_expect(eq(str, (char *)pv->claim_namespace, "default"));
        cr_expect(eq(str, (char *)pv->claim_name, claim));
        cr_expect(eq(str, (char *)pv->phase, "Bound"));
        ks_pod_put(pods[k]);
    }
    ks_objects_destroy(objs);
    ks_bench_workload_destroy(w);
}

Test(bench_workload, volume_template_errors_name_line_and_field)
{
    static const char objects[] =
        "objectTemplates:\n"
        "  pv: {apiVersion: v1, kind: PersistentVolume, spec: {capacity: {storage: 1Gi}}}\n"
        "  pvc: {apiVersion: v1, kind: PersistentVolumeClaim, spec: {resources: {requests: {storage: "
        "1Gi}}}}\n";
    static const struct {
        const char *op, *field, *msg;
    } cases[] = {
        {"{opcode: createPods, count: 1, podTemplate: a, persistentVolumeTemplate: pv, collectMetrics: true}",
         "persistentVolumeClaimTemplate", "come from two templates"},
        {"{opcode: createPods, count: 1, podTemplate: a, persistentVolumeClaimTemplate: pvc, collectMetrics: "
         "true}",
         "persistentVolumeTemplate", "come from two templates"},
        {"{opcode: createPods, count: 1, podTemplate: a, persistentVolumeTemplate: pvc, "
         "persistentVolumeClaimTemplate: pvc, collectMetrics: true}",
         "persistentVolumeTemplate", "template must be a v1 PersistentVolume"},
        {"{opcode: createPods, count: 1, podTemplate: a, persistentVolumeTemplate: nope, "
         "persistentVolumeClaimTemplate: pvc, collectMetrics: true}",
         "persistentVolumeTemplate", "no template named \"nope\""},
        {"{opcode: createNodes, count: 1, persistentVolumeTemplate: pv}", "persistentVolumeTemplate",
         "does not apply to opcode createNodes"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ks_bench_workload *w = NULL;
        struct ks_error err = {0};
        char text[2048];
        snprintf(text, sizeof(text), "%s%s- %s\n%s", objects, head, cases[i].op, sizes);
        cr_expect_eq(load_text(text, &w, &err), -EINVAL, "case %zu", i);
        cr_expect_null(w);
        cr_expect(eq(str, err.field, (char *)cases[i].field), "case %zu: %s", i, err.field);
        cr_expect_not_null(strstr(err.msg, cases[i].msg), "case %zu: %s", i, err.msg);
        cr_expect_gt(err.line, 0, "case %zu", i);
        ks_bench_workload_destroy(w);
    }
}
