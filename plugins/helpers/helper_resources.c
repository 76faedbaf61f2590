/*
 * helper_resources.c - reading requested and allocatable resources for the resource
 * plugins (NodeResourcesFit, NodeResourcesBalancedAllocation).
 *
 * Mirrors the parts of pkg/scheduler/framework/plugins/noderesources/resource_allocation.go
 * that both plugins share (calculatePodResourceRequest, calculateResourceAllocatableRequest)
 * and v1helper.IsExtendedResourceName. A resource's kind is resolved once at init, so the
 * per-node reads are field loads for cpu, memory and ephemeral storage and a binary search
 * of two short sorted arrays for scalar resources.
 *
 * Invariants relied on: pod and node scalar lists hold only scalar resource names
 * (ks_pod_finish(), ks_node_finish()), sorted by interned id.
 *
 * Context: any thread; allocation-free. ks_is_extended_resource_name() compares strings and
 * is meant for init and PreFilter only.
 */
#include "ksched/api.h"
#include "ksched/plugin_helpers.h"

#include <string.h>

/* ---- names ---------------------------------------------------------------------------------- */

static bool lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool any_alnum(char c)
{
    return lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

/* IsDNS1123Subdomain over @len bytes (the length limit is checked by the caller). */
static bool dns_subdomain(const char *s, size_t len)
{
    size_t start = 0;

    for (size_t i = 0; i <= len; i++) {
        if (i < len && s[i] != '.') {
            if (!lower_alnum(s[i]) && s[i] != '-')
                return false;
            continue;
        }
        if (i == start || !lower_alnum(s[start]) || !lower_alnum(s[i - 1]))
            return false;
        start = i + 1;
    }
    return true;
}

/* The name part of IsQualifiedName: 1..63 characters of [-A-Za-z0-9_.], alphanumeric at both ends. */
static bool qualified_name_part(const char *s, size_t len)
{
    if (len == 0 || len > 63 || !any_alnum(s[0]) || !any_alnum(s[len - 1]))
        return false;
    for (size_t i = 1; i + 1 < len; i++) {
        if (!any_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return false;
    }
    return true;
}

bool ks_is_extended_resource_name(const char *name)
{
    static const char requests_prefix[] = "requests.";
    const char *slash = strchr(name, '/');

    /* native: no domain, or a *kubernetes.io/ domain; quota names are never extended */
    if (!slash || strstr(name, "kubernetes.io/") ||
        strncmp(name, requests_prefix, sizeof(requests_prefix) - 1) == 0)
        return false;
    if (strchr(slash + 1, '/'))
        return false;
    /* "requests.<name>" must be a qualified name: "requests.<domain>" a DNS subdomain */
    size_t domain = (size_t)(slash - name);
    if (domain + sizeof(requests_prefix) - 1 > 253 || !dns_subdomain(name, domain))
        return false;
    return qualified_name_part(slash + 1, strlen(slash + 1));
}

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
