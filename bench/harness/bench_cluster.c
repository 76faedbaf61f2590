/*
 * bench_cluster.c - the objects of a benchmark: generated nodes built in memory, and pods
 * and nodes instantiated from a workload's v1 templates through the loader's decoders.
 *
 * Generated nodes stand in for scheduler_perf's node-default.yaml, with eight times its cpu
 * and memory (cpu 32, memory 256Gi, pods 110): they are built field by field, as the decoder
 * would leave them (labels and resource lists sorted by interned id, alloc derived by
 * ks_node_finish), because decoding 50,000 identical YAML nodes would only measure the
 * decoder. Templates are decoded once per object so every pod is a real decoder product;
 * the workload loader gave each template a metadata.name, which is replaced here by the
 * generated one (upstream's generateName).
 */
#include "bench.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/decode.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NODE_MILLI_CPU 32000
#define NODE_MEMORY    (256LL << 30)
#define NODE_PODS      110

static int cmp_label(const void *a, const void *b)
{
    uint32_t x = ((const struct ks_label *)a)->key, y = ((const struct ks_label *)b)->key;
    return (x > y) - (x < y);
}

static int cmp_item(const void *a, const void *b)
{
    uint32_t x = ((const struct ks_resource_item *)a)->name, y = ((const struct ks_resource_item *)b)->name;
    return (x > y) - (x < y);
}

struct ks_node *ks_bench_node(const char *name, uint32_t index, const struct ks_bench_op *op)
{
    static uint32_t zones[10];
    char zone[16];
    struct ks_node *n = calloc(1, sizeof(*n));
    if (!n)
        return NULL;
    if (!zones[index % 10]) {
        snprintf(zone, sizeof(zone), "zone-%u", index % 10);
        zones[index % 10] = ks_intern(zone);
    }
    n->meta.name = ks_arena_strdup(&n->arena, name);
    n->meta.creation_time = KS_TIME_NONE;
    n->meta.deletion_time = KS_TIME_NONE;
    n->name_id = ks_intern(name);

    struct ks_label *labels = ks_arena_calloc(&n->arena, 3, sizeof(*labels));
    struct ks_resource_item *alloc = ks_arena_calloc(&n->arena, 3, sizeof(*alloc));
    struct ks_node_condition *ready = ks_arena_calloc(&n->arena, 1, sizeof(*ready));
    if (!n->meta.name || n->name_id == KS_ID_NONE || zones[index % 10] == KS_ID_NONE || !labels || !alloc ||
        !ready)
        goto err;

    uint32_t nlabels = 0;
    labels[nlabels++] = (struct ks_label){ks_wk.hostname_label, n->name_id};
    labels[nlabels++] = (struct ks_label){ks_wk.zone_label, zones[index % 10]};
    if (op && op->label_key != KS_ID_NONE && (op->nlabel_values || op->nodes_per_value)) {
        /* labelNodePrepareStrategy: replace the label when it is one of ours, else add it */
        struct ks_label l = {op->label_key, KS_ID_NONE};
        if (op->nodes_per_value) {
            char value[128];
            snprintf(value, sizeof(value), "%s%u", op->label_prefix, index / op->nodes_per_value);
            if ((l.value = ks_intern(value)) == KS_ID_NONE)
                goto err;
        } else {
            l.value = op->label_values[index % op->nlabel_values];
        }
        uint32_t i = 0;
        while (i < nlabels && labels[i].key != l.key)
            i++;
        labels[i] = l;
        nlabels += i == nlabels;
    }
    qsort(labels, nlabels, sizeof(*labels), cmp_label);
    n->meta.labels = (struct ks_labels){nlabels, labels};

    alloc[0] = (struct ks_resource_item){ks_wk.cpu, NODE_MILLI_CPU};
    alloc[1] = (struct ks_resource_item){ks_wk.memory, NODE_MEMORY};
    alloc[2] = (struct ks_resource_item){ks_wk.pods, NODE_PODS};
    qsort(alloc, 3, sizeof(*alloc), cmp_item);
    n->allocatable = (struct ks_resource_list){3, alloc};
    n->capacity = n->allocatable;
    *ready = (struct ks_node_condition){.type = "Ready", .status = "True"};
    n->conditions = ready;
    n->nconditions = 1;
    if (ks_node_finish(n) < 0)
        goto err;
    return n;
err:
    ks_node_destroy(n);
    return NULL;
}

int ks_bench_pod(const struct ks_yaml_node *tmpl, const char *file, const char *name, const char *namespace,
                 struct ks_pod **out, struct ks_error *err)
{
    struct ks_pod *pod;
    int rc = ks_decode_pod(file, tmpl, &pod, err);
    if (rc < 0)
        return rc;
    if (!(pod->meta.name = ks_arena_strdup(&pod->arena, name)))
        goto nomem;
    if (namespace && (pod->meta.namespace_id = ks_intern(namespace)) == KS_ID_NONE)
        goto nomem;
    *out = pod;
    return 0;
nomem:
    ks_pod_destroy(pod);
    return -ENOMEM;
}

int ks_bench_pod_volume(const struct ks_bench_op *op, const char *file, uint32_t opi, uint32_t k,
                        struct ks_pod *pod, struct ks_objects *objs, struct ks_error *err)
{
    const char *ns = ks_intern_str(pod->meta.namespace_id);
    struct ks_persistent_volume_claim *pvc = NULL;
    struct ks_persistent_volume *pv = NULL;
    enum ks_kind kc = KS_KIND_PVC, kv = KS_KIND_PV;
    char claim[64], volume[320];
    int rc;

    snprintf(claim, sizeof(claim), "pvc-%u-%u", opi, k);
    snprintf(volume, sizeof(volume), "%s-vol-%u-%u", ns, opi, k);
    if ((rc = ks_object_decode_as(file, op->pvc_template, kc, (void **)&pvc, err)) < 0 ||
        (rc = ks_object_decode_as(file, op->pv_template, kv, (void **)&pv, err)) < 0)
        goto out;
    rc = -ENOMEM;
    struct ks_volume *v = ks_arena_calloc(&pod->arena, 1, sizeof(*v));
    pvc->meta.namespace_id = pod->meta.namespace_id;
    if (!v || !(pvc->meta.name = ks_arena_strdup(&pvc->arena, claim)) ||
        !(pvc->volume_name = ks_arena_strdup(&pvc->arena, volume)) ||
        !(pv->meta.name = ks_arena_strdup(&pv->arena, volume)) ||
        !(pv->claim_namespace = ks_arena_strdup(&pv->arena, ns)) ||
        !(pv->claim_name = ks_arena_strdup(&pv->arena, claim)) ||
        !(v->source = ks_arena_strdup(&pod->arena, claim)))
        goto out;
    pvc->phase = "Bound";
    pv->phase = "Bound";
    if (pv->csi_driver)
        pv->csi_volume_handle = pv->meta.name;
    if (ks_objects_push(objs, KS_KIND_PVC, pvc) < 0)
        goto out;
    pvc = NULL; /* the set's now */
    if (ks_objects_push(objs, KS_KIND_PV, pv) < 0) {
        /* the claim goes with the volume it names */
        ks_object_destroy(KS_KIND_PVC, objs->of[KS_KIND_PVC].items[--objs->of[KS_KIND_PVC].n]);
        goto out;
    }
    pv = NULL;
    v->name = "vol";
    v->kind = KS_VOLUME_PVC;
    pod->volumes = v;
    pod->nvolumes = 1;
    rc = 0;
out:
    ks_object_destroy(KS_KIND_PVC, pvc);
    ks_object_destroy(KS_KIND_PV, pv);
    return rc;
}

int ks_bench_node_from(const struct ks_yaml_node *tmpl, const char *file, const char *name,
                       struct ks_node **out, struct ks_error *err)
{
    const struct ks_yaml_node *meta = ks_yaml_get(tmpl, "metadata");
    const struct ks_yaml_node *own = ks_yaml_get(meta, "name");
    bool rename = ks_yaml_get(meta, "generateName") || !own || strcmp(own->str, KS_BENCH_TEMPLATE_NAME) == 0;
    struct ks_node *node;
    int rc = ks_decode_node(file, tmpl, &node, err);
    if (rc < 0)
        return rc;
    if (rename) {
        if (!(node->meta.name = ks_arena_strdup(&node->arena, name)) ||
            (node->name_id = ks_intern(name)) == KS_ID_NONE) {
            ks_node_destroy(node);
            return -ENOMEM;
        }
    }
    *out = node;
    return 0;
}

const char *ks_bench_template_prefix(const struct ks_yaml_node *tmpl, const char *dflt)
{
    const struct ks_yaml_node *gen = ks_yaml_get(ks_yaml_get(tmpl, "metadata"), "generateName");
    return gen && gen->kind == KS_YAML_SCALAR ? gen->str : dflt;
}
