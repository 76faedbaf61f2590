/*
 * helper_resources.c - reading requested and allocatable resources for the resource
 * plugins (NodeResourcesFit, NodeResourcesBalancedAllocation).
 *
 * Mirrors the parts of pkg/scheduler/framework/plugins/noderesources/resource_allocation.go
 * that both plugins share (calculatePodResourceRequest, calculateResourceAllocatableRequest).
 * A resource's kind is resolved once at init, so the
 * per-node reads are field loads for cpu, memory and ephemeral storage and a binary search
 * of two short sorted arrays for scalar resources.
 *
 * Invariants relied on: pod and node scalar lists hold only scalar resource names
 * (ks_pod_finish(), ks_node_finish()), sorted by interned id.
 *
 * Context: any thread; allocation-free.
 */
#include "ksched/api.h"
#include "ksched/plugin_helpers.h"

int64_t ks_resource_items_find(const struct ks_resource_item *items, uint32_t n, uint32_t name, bool *found)
{
    uint32_t lo = 0, hi = n;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (items[mid].name == name) {
            if (found)
                *found = true;
            return items[mid].value;
        }
        if (items[mid].name < name)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (found)
        *found = false;
    return 0;
}

/* ---- requested and allocatable ---------------------------------------------------------------- */

enum ks_res_kind ks_res_kind_of(uint32_t name)
{
    if (name == ks_wk.cpu)
        return KS_RES_CPU;
    if (name == ks_wk.memory)
        return KS_RES_MEMORY;
    if (name == ks_wk.ephemeral_storage)
        return KS_RES_EPHEMERAL;
    if (name == ks_wk.pods)
        return KS_RES_PODS;
    return KS_RES_SCALAR;
}

int64_t ks_res_pod_request(const struct ks_res_spec *r, bool use_requested, const struct ks_pod *pod)
{
    switch (r->kind) {
    case KS_RES_CPU:
        return use_requested ? pod->requests.milli_cpu : pod->nonzero_milli_cpu;
    case KS_RES_MEMORY:
        return use_requested ? pod->requests.memory : pod->nonzero_memory;
    case KS_RES_EPHEMERAL:
        return pod->requests.ephemeral_storage;
    case KS_RES_PODS:
        return pod->requests.allowed_pods;
    case KS_RES_SCALAR:
        break;
    }
    return ks_resource_items_find(pod->requests.scalar, pod->requests.nscalar, r->name, NULL);
}

int64_t ks_res_alloc_req(const struct ks_res_spec *r, bool use_requested, const struct ks_node_snap *node,
                         int64_t pod_request, int64_t *requested)
{
    switch (r->kind) {
    case KS_RES_CPU:
        *requested = (use_requested ? node->req_milli_cpu : node->nonzero_milli_cpu) + pod_request;
        return node->alloc_milli_cpu;
    case KS_RES_MEMORY:
        *requested = (use_requested ? node->req_memory : node->nonzero_memory) + pod_request;
        return node->alloc_memory;
    case KS_RES_EPHEMERAL:
        *requested = node->req_ephemeral + pod_request;
        return node->alloc_ephemeral;
    case KS_RES_PODS:
        break; /* not a scalar resource: never among the node's allocatable scalars */
    case KS_RES_SCALAR:
        if (pod_request == 0 || !node->node)
            break; /* a scalar resource the pod does not request is left out */
        bool found;
        int64_t alloc =
            ks_resource_items_find(node->node->alloc.scalar, node->node->alloc.nscalar, r->name, &found);
        if (!found)
            break;
        *requested = ks_resource_items_find(node->req_scalar, node->nreq_scalar, r->name, NULL) + pod_request;
        return alloc;
    }
    *requested = 0;
    return 0;
}
