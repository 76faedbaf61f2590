/*
 * node_derive.c - a node record as if some pods were added to it or removed from it.
 *
 * What upstream gets by cloning a NodeInfo and calling AddPod / RemovePod: preemption's
 * dry runs remove victims from a node, and Filter with nominated pods adds the pods
 * nominated to it. The derived record shares the base record's node object, images and
 * taint reasons; requested resources move by the pods' requests; pods, affinity lists,
 * host ports (a set, as HostPortInfo) and PVC references are those of the final pod list.
 * Everything lives in the caller's arena; a derived record is never published.
 */
#include "cache_internal.h"

#include "ksched/api.h"
#include "ksched/base/arena.h"
#include "ksched/base/intern.h"

#include <stdlib.h>
#include <string.h>

static bool listed(const struct ks_pod *pod, const struct ks_pod *const *list, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (ks_pod_same_name(pod, list[i]))
            return true;
    }
    return false;
}

/* Add @sign * the pod's scalar requests into the sorted @items (capacity known to suffice). */
static void scalar_apply(struct ks_resource_item *items, uint32_t *n, const struct ks_pod *pod, int64_t sign)
{
    for (uint32_t k = 0; k < pod->requests.nscalar; k++) {
        const struct ks_resource_item *it = &pod->requests.scalar[k];
        uint32_t i = 0;
        while (i < *n && items[i].name < it->name)
            i++;
        if (i < *n && items[i].name == it->name) {
            items[i].value += sign * it->value;
            if (items[i].value == 0) {
                memmove(&items[i], &items[i + 1], (size_t)(*n - i - 1) * sizeof(*items));
                (*n)--;
            }
        } else if (it->value) {
            memmove(&items[i + 1], &items[i], (size_t)(*n - i) * sizeof(*items));
            items[i] = (struct ks_resource_item){it->name, sign * it->value};
            (*n)++;
        }
    }
}

static void account(struct ks_node_snap *r, struct ks_resource_item *scalar, const struct ks_pod *pod,
                    int64_t sign)
{
    r->req_milli_cpu += sign * pod->requests.milli_cpu;
    r->req_memory += sign * pod->requests.memory;
    r->req_ephemeral += sign * pod->requests.ephemeral_storage;
    r->nonzero_milli_cpu += sign * pod->nonzero_milli_cpu;
    r->nonzero_memory += sign * pod->nonzero_memory;
    scalar_apply(scalar, &r->nreq_scalar, pod, sign);
}

static int cmp_port(const void *a, const void *b)
{
    const struct ks_host_port *x = a, *y = b;
    if (x->port != y->port)
        return x->port < y->port ? -1 : 1;
    if (x->protocol != y->protocol)
        return x->protocol < y->protocol ? -1 : 1;
    return x->ip < y->ip ? -1 : x->ip > y->ip;
}

static int cmp_id(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Per-pod facts (ports, PVC keys, affinity flags) of every final pod, collected into @r. */
static int collect(struct ks_node_snap *r, const struct ks_pod **pods, uint32_t n, struct ks_arena *arena)
{
    uint32_t any_ip = ks_intern("0.0.0.0");
    struct pod_entry **entries = calloc(n ? n : 1, sizeof(*entries));
    uint32_t nports = 0, npvcs = 0, naff = 0, nanti = 0;
    int rc = -1;

    if (!entries)
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        if (!(entries[i] = ks__pod_entry_make(pods[i], r->name, any_ip)))
            goto out;
        nports += entries[i]->nports;
        npvcs += entries[i]->npvcs;
        naff += entries[i]->has_affinity;
        nanti += entries[i]->has_anti_affinity;
    }
    struct ks_host_port *ports = ks_arena_calloc(arena, nports ? nports : 1, sizeof(*ports));
    uint32_t *pvcs = ks_arena_calloc(arena, npvcs ? npvcs : 1, sizeof(*pvcs));
    const struct ks_pod **aff = ks_arena_calloc(arena, naff ? naff : 1, sizeof(*aff));
    const struct ks_pod **anti = ks_arena_calloc(arena, nanti ? nanti : 1, sizeof(*anti));
    if (!ports || !pvcs || !aff || !anti)
        goto out;
    nports = npvcs = naff = nanti = 0;
    for (uint32_t i = 0; i < n; i++) {
        memcpy(ports + nports, entries[i]->ports, entries[i]->nports * sizeof(*ports));
        nports += entries[i]->nports;
        memcpy(pvcs + npvcs, entries[i]->pvcs, entries[i]->npvcs * sizeof(*pvcs));
        npvcs += entries[i]->npvcs;
        if (entries[i]->has_affinity)
            aff[naff++] = pods[i];
        if (entries[i]->has_anti_affinity)
            anti[nanti++] = pods[i];
    }
    /* host ports and PVC references are sets */
    qsort(ports, nports, sizeof(*ports), cmp_port);
    uint32_t u = 0;
    for (uint32_t i = 0; i < nports; i++) {
        if (u == 0 || cmp_port(&ports[u - 1], &ports[i]) != 0)
            ports[u++] = ports[i];
    }
    r->nports = u;
    r->ports = ports;
    qsort(pvcs, npvcs, sizeof(*pvcs), cmp_id);
    u = 0;
    for (uint32_t i = 0; i < npvcs; i++) {
        if (u == 0 || pvcs[u - 1] != pvcs[i])
            pvcs[u++] = pvcs[i];
    }
    r->npvc_refs = u;
    r->pvc_refs = pvcs;
    r->naffinity_pods = naff;
    r->affinity_pods = aff;
    r->nanti_affinity_pods = nanti;
    r->anti_affinity_pods = anti;
    rc = 0;
out:
    for (uint32_t i = 0; i < n; i++)
        free(entries[i]);
    free(entries);
    return rc;
}

const struct ks_node_snap *ks_node_snap_derive(const struct ks_node_snap *base,
                                               const struct ks_pod *const *add, uint32_t nadd,
                                               const struct ks_pod *const *remove, uint32_t nremove,
                                               struct ks_arena *arena)
{
    struct ks_node_snap *r = ks_arena_alloc(arena, sizeof(*r));
    const struct ks_pod **pods = ks_arena_calloc(arena, (size_t)base->npods + nadd + 1, sizeof(*pods));
    uint32_t cap_scalar = base->nreq_scalar;
    for (uint32_t i = 0; i < nadd; i++)
        cap_scalar += add[i]->requests.nscalar;
    struct ks_resource_item *scalar = ks_arena_calloc(arena, cap_scalar + 1, sizeof(*scalar));
    if (!r || !pods || !scalar)
        return NULL;
    *r = *base;
    r->generation = 0;                         /* derived: not a version of the cache's node */
    r->flags &= (uint16_t)~KS_SNAP_SEL_COUNTS; /* its pods are not the cache's: readers count them */
    r->nsel_counts = 0;
    r->sel_counts = NULL;
    memcpy(scalar, base->req_scalar, base->nreq_scalar * sizeof(*scalar));
    r->req_scalar = scalar;

    uint32_t n = 0;
    for (uint32_t i = 0; i < base->npods; i++) {
        if (listed(base->pods[i], remove, nremove))
            account(r, scalar, base->pods[i], -1);
        else
            pods[n++] = base->pods[i];
    }
    for (uint32_t i = 0; i < nadd; i++) {
        account(r, scalar, add[i], 1);
        pods[n++] = add[i];
    }
    r->npods = n;
    r->pods = pods;
    return collect(r, pods, n, arena) < 0 ? NULL : r;
}
