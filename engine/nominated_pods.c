/*
 * nominated_pods.c - the nominated pods of the Filter path (RunFilterPluginsWithNominatedPods
 * in framework/runtime/framework.go), for engine/find_nodes.c and engine/index_path.c.
 *
 * Before the parallel Filter, the scheduling thread builds, for each node with pods
 * nominated to it of at least the pod's priority, the node as if they ran there and a cycle
 * state with their AddPod applied (ks__nominated_prepare); the workers then filter such a
 * node twice - with them, and if that passes, without them - and every other node once
 * (ks__filter_node). Without nominations nothing is built or looked up.
 */
#include "framework_metrics.h"
#include "scheduler_internal.h"

#include "ksched/api.h"
#include "ksched/internal/nominator.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void ks__nominations_release(struct ks_nominated_scratch *nom)
{
    for (uint32_t i = 0; i < nom->npods; i++)
        ks_pod_put(nom->pods[i]);
    nom->npods = 0;
    nom->n = 0;
}

void ks__nominated_free(struct ks_nominated_scratch *nom)
{
    ks__nominations_release(nom);
    for (uint32_t i = 0; i < nom->cap; i++)
        ks_cycle_state_destroy(&nom->nodes[i].cs);
    free(nom->nodes);
    free(nom->pods);
    free(nom->pod_nodes);
    free(nom->sort);
    free(nom->spare);
    ks_arena_destroy(&nom->arena);
    memset(nom, 0, sizeof(*nom));
}

/* Room for @cap nominations in @nom's listing arrays. 0 or -ENOMEM. */
static int nominations_reserve(struct ks_nominated_scratch *nom, uint32_t cap)
{
    const struct ks_pod **pods = realloc(nom->pods, cap * sizeof(*pods));
    if (pods)
        nom->pods = pods;
    uint32_t *nodes = realloc(nom->pod_nodes, cap * sizeof(*nodes));
    if (nodes)
        nom->pod_nodes = nodes;
    uint64_t *sort = realloc(nom->sort, cap * sizeof(*sort));
    if (sort)
        nom->sort = sort;
    const struct ks_pod **spare = realloc(nom->spare, cap * sizeof(*spare));
    if (spare)
        nom->spare = spare;
    if (!pods || !nodes || !sort || !spare)
        return -ENOMEM;
    nom->cap_pods = cap;
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int ks__nominations_list(struct ks_scheduler *s, struct ks_nominated_scratch *nom)
{
    for (;;) {
        uint32_t total = ks_nominator_list(s->nominator, nom->pods, nom->pod_nodes, nom->cap_pods);
        if (total <= nom->cap_pods) {
            nom->npods = total;
            break;
        }
        for (uint32_t i = 0; i < nom->cap_pods; i++)
            ks_pod_put(nom->pods[i]);
        if (nominations_reserve(nom, total * 2) < 0)
            return -ENOMEM;
    }
    if (nom->npods == 0)
        return 0;
    /* by node, then by place in the listing: a stable grouping */
    for (uint32_t i = 0; i < nom->npods; i++)
        nom->sort[i] = (uint64_t)nom->pod_nodes[i] << 32 | i;
    qsort(nom->sort, nom->npods, sizeof(*nom->sort), cmp_u64);
    memcpy(nom->spare, nom->pods, nom->npods * sizeof(*nom->pods));
    for (uint32_t i = 0; i < nom->npods; i++) {
        nom->pods[i] = nom->spare[(uint32_t)nom->sort[i]];
        nom->pod_nodes[i] = (uint32_t)(nom->sort[i] >> 32);
    }
    return 0;
}

static struct ks_nominated_node *nominated_slot(struct ks_nominated_scratch *nom)
{
    if (nom->n == nom->cap) {
        uint32_t cap = nom->cap ? nom->cap * 2 : 8;
        struct ks_nominated_node *v = realloc(nom->nodes, cap * sizeof(*v));
        if (!v)
            return NULL;
        for (uint32_t i = nom->cap; i < cap; i++)
            ks_cycle_state_init(&v[i].cs);
        nom->nodes = v;
        nom->cap = cap;
    }
    return &nom->nodes[nom->n];
}

/* The pods nominated to @node into the scratch, as ks__nominations_list lists them. */
static int list_node(struct ks_scheduler *s, struct ks_nominated_scratch *nom, uint32_t node)
{
    for (;;) {
        uint32_t total = ks_nominator_pods(s->nominator, node, nom->pods, nom->cap_pods);
        if (total <= nom->cap_pods) {
            nom->npods = total;
            for (uint32_t i = 0; i < total; i++)
                nom->pod_nodes[i] = node;
            return 0;
        }
        for (uint32_t i = 0; i < nom->cap_pods; i++)
            ks_pod_put(nom->pods[i]);
        if (nominations_reserve(nom, total * 2) < 0)
            return -ENOMEM;
    }
}

int ks__nominated_prepare(struct ks_scheduler *s, struct ks_framework *fw, const struct ks_cycle_state *cs,
                          const struct ks_pod *pod, const struct ks_snapshot *snap, uint32_t only,
                          struct ks_status *st)
{
    struct ks_nominated_scratch *nom = &s->scratch.nom;

    ks__nominations_release(nom);
    if (ks_nominator_count(s->nominator) == 0)
        return KS_SUCCESS;
    if ((only == KS_ID_NONE ? ks__nominations_list(s, nom) : list_node(s, nom, only)) < 0)
        return ks_status_set(st, KS_ERROR, "out of memory");
    ks_arena_reset(&nom->arena);
    for (uint32_t i = 0; i < nom->npods;) {
        uint32_t node = nom->pod_nodes[i], end = i;
        while (end < nom->npods && nom->pod_nodes[end] == node)
            end++;
        /* addGENominatedPods: only pods of at least this pod's priority, and not itself */
        const struct ks_pod **add = ks_arena_calloc(&nom->arena, end - i, sizeof(*add));
        uint32_t nadd = 0;
        if (!add)
            return ks_status_set(st, KS_ERROR, "out of memory");
        for (uint32_t j = i; j < end; j++) {
            if (nom->pods[j]->priority >= pod->priority && !ks_pod_same_name(nom->pods[j], pod))
                add[nadd++] = nom->pods[j];
        }
        i = end;
        const struct ks_node_snap *base = nadd ? ks_snapshot_find(snap, node) : NULL;
        if (!base)
            continue;
        struct ks_nominated_node *nn = nominated_slot(nom);
        if (!nn)
            return ks_status_set(st, KS_ERROR, "out of memory");
        nn->name = node;
        nn->derived = ks_node_snap_derive(base, add, nadd, NULL, 0, &nom->arena);
        if (!nn->derived || ks_cycle_state_clone(fw, cs, &nn->cs) < 0)
            return ks_status_set(st, KS_ERROR, "out of memory");
        for (uint32_t j = 0; j < nadd; j++) {
            int rc = ks_fw_run_add_pod(fw, &nn->cs, pod, add[j], nn->derived, st);
            if (rc != KS_SUCCESS)
                return rc == KS_ERROR ? rc
                                      : ks_status_set(st, KS_ERROR, "running AddPod for a nominated pod");
        }
        nom->n++;
    }
    return KS_SUCCESS;
}

const struct ks_nominated_node *ks__nominated_find(const struct ks_nominated_scratch *nom, uint32_t name)
{
    uint32_t lo = 0, hi = nom->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (nom->nodes[mid].name < name)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < nom->n && nom->nodes[lo].name == name ? &nom->nodes[lo] : NULL;
}

int ks__filter_node(const struct ks_framework *fw, const struct ks_nominated_scratch *nom,
                    const struct ks_cycle_state *cs, const struct ks_pod *pod,
                    const struct ks_node_snap *node, struct ks_status *st, struct ks_fw_tally *t)
{
    const struct ks_nominated_node *nn = nom->n ? ks__nominated_find(nom, node->name) : NULL;
    if (!nn)
        return ks__fw_run_filter_tally(fw, cs, pod, node, st, t);
    /* first with the nominated pods treated as running; if that passes, without them */
    int rc = ks__fw_run_filter_tally(fw, &nn->cs, pod, nn->derived, st, t);
    if (rc != KS_SUCCESS)
        return rc;
    return ks__fw_run_filter_tally(fw, cs, pod, node, st, t);
}
