/*
 * cache_types.h - the immutable node snapshot Filter and Score workers read.
 *
 * The cache (cache/) owns mutable per-node aggregates (upstream's NodeInfo) and publishes
 * a struct ks_snapshot with RCU before each scheduling cycle. A snapshot is never changed
 * once published: a node whose aggregates move gets a new struct ks_node_snap, and the
 * next snapshot version shares every unchanged record (and every chunk of record pointers
 * that holds no changed node) with the previous one. Readers hold the RCU read lock for as
 * long as they use a snapshot or anything reachable from it, pods and nodes included.
 *
 * Mirrors pkg/scheduler/framework/types.go (NodeInfo) and backend/cache/snapshot.go.
 */
#ifndef KSCHED_CACHE_TYPES_H
#define KSCHED_CACHE_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ksched/api_types.h"
#include "ksched/base/rcu.h"

/* One image on a node and how many nodes of the cluster have it (ImageStateSummary). */
struct ks_image_state {
    uint32_t name; /* interned, as the kubelet reported it */
    int64_t size_bytes;
    uint32_t num_nodes;
};

/*
 * The pods on a node that a tracked label selector matches (ks_cache_selector_track,
 * internal/cache.h): the selector's id and the count, never 0.
 */
struct ks_sel_count {
    uint32_t id;
    uint32_t count;
};

/*
 * One node as Filter and Score see it. The first 64 bytes are all that the default
 * filters and scores read of a node for a pod without ports, volumes, scalar resources,
 * a nodeName or images to compare (on a big cluster each cycle's records come from
 * memory, so a line less per node is a tenth of a cycle): allocatable, requested and
 * non-zero requested cpu and memory and the pod count (NodeResourcesFit,
 * NodeResourcesBalancedAllocation), the flags (NodeUnschedulable), the taint summary
 * (TaintToleration) and the image count (ImageLocality). The second line holds the node
 * object, the name, ephemeral storage, scalar requests and ports; the rest is read by the
 * plugins that need it. Arrays point into the same allocation as the record.
 *
 * generation: the cache's generation of the node when the record was built, drawn from
 * one monotonic counter that every change to any node advances. Two records with the
 * same non-zero generation are therefore the same record (same content); 0 marks a
 * record the cache did not build (derived for dry runs, built by tests), which no
 * generation comparison may trust.
 */
struct ks_node_snap {
    /* hot: every evaluated node */
    int64_t alloc_milli_cpu;
    int64_t alloc_memory;
    int64_t req_milli_cpu;
    int64_t req_memory;
    int64_t nonzero_milli_cpu; /* requested with 100m / 200Mi defaults, for scoring */
    int64_t nonzero_memory;
    int32_t alloc_pods;
    uint32_t npods;
    uint16_t flags;   /* KS_SNAP_*; KS_SNAP_HAS_NODE set means node is not NULL */
    uint16_t taints;  /* KS_SNAP_TAINTS_* summary of node->taints, 0: unknown */
    uint32_t nimages; /* images: on this line so ImageLocality's test of it costs no miss */

    /* pods with names, ephemeral storage, scalars, ports; the node object */
    const struct ks_node *node; /* labels, taints, allocatable scalars, images, conditions */
    uint64_t generation;        /* see above */
    uint32_t name;              /* interned node name */
    uint32_t nreq_scalar;
    int64_t alloc_ephemeral;
    int64_t req_ephemeral;
    uint32_t nports;
    uint32_t npvc_refs;
    const struct ks_resource_item *req_scalar; /* requested scalar resources, sorted by name */
    const struct ks_host_port *ports;
    const struct ks_pod *const *pods; /* assumed pods included */
    uint32_t naffinity_pods;          /* pods with any (anti-)affinity term */
    uint32_t nanti_affinity_pods;     /* pods with required anti-affinity */
    const struct ks_pod *const *affinity_pods;
    const struct ks_pod *const *anti_affinity_pods;
    const struct ks_image_state *images;
    const uint32_t *pvc_refs;      /* interned "namespace/claim" of PVCs used by the node's pods, sorted */
    const uint32_t *taint_reasons; /* per node->taints[i]: interned "node(s) had untolerated taint {k: v}" */
    /* with KS_SNAP_SEL_COUNTS: per tracked selector matching some of pods, their count; sorted by id */
    uint32_t nsel_counts;
    const struct ks_sel_count *sel_counts;
};

/* the fields every evaluated node reads share one cache line */
#ifndef __cplusplus
_Static_assert(offsetof(struct ks_node_snap, nimages) + sizeof(uint32_t) <= 64, "hot fields past 64 bytes");
#endif

#define KS_SNAP_UNSCHEDULABLE 0x1u /* node.spec.unschedulable */
#define KS_SNAP_HAS_NODE      0x2u /* the node object exists (false for pods left on a deleted node) */
#define KS_SNAP_SEL_COUNTS    0x4u /* sel_counts is the cache's count of pods (unset: derived, or by a test) */

/*
 * ks_node_snap.taints: a summary of node->taints, so that taint checks on untainted nodes
 * never leave the record for the node object. 0 (records not built by the cache) means
 * unknown: readers then look at node->taints.
 */
#define KS_SNAP_TAINTS_KNOWN  0x1u /* the two bits below are valid */
#define KS_SNAP_TAINTS_HARD   0x2u /* some taint has effect NoSchedule or NoExecute */
#define KS_SNAP_TAINTS_PREFER 0x4u /* some taint has effect PreferNoSchedule */

#define KS_SNAP_CHUNK_SHIFT 8
#define KS_SNAP_CHUNK       (1u << KS_SNAP_CHUNK_SHIFT)

/*
 * KS_SNAP_CHUNK record pointers; shared between snapshot versions while unchanged.
 *
 * generation: the generation of the snapshot version that created the chunk (0: not
 * built by the cache, e.g. by a test; never to be trusted). A chunk is never changed once
 * published: a version that changes any pointer of a chunk makes a new chunk, and a chunk
 * is only carried over to the next version at the same index. Every version draws its
 * generation fresh from the cache's monotonic counter, so at one chunk index a non-zero
 * generation names exactly one chunk: if chunks[i]->generation is what a reader saw at
 * index i in an earlier version, the 256 positions i * KS_SNAP_CHUNK... hold the very same
 * records (same pointers, same record generations). Per-node count caches rely on this
 * to skip a whole unchanged chunk without reading its records (plugin_helpers_memo.h).
 */
struct ks_snap_chunk {
    uint64_t generation;
    const struct ks_node_snap *nodes[KS_SNAP_CHUNK];
};

struct ks_snapshot_garbage;

/*
 * One published version. Node i (in upstream's nodeTree order: zones round-robin) is
 * chunks[i >> KS_SNAP_CHUNK_SHIFT]->nodes[i & (KS_SNAP_CHUNK - 1)].
 */
struct ks_snapshot {
    struct ks_rcu_head rcu;
    uint64_t generation; /* unique per version, above every record generation it holds */
    /*
     * How this version differs from the one it replaced (generation prev_generation, 0 for
     * the first): order_generation is the generation of the version that last changed the
     * node order (set, zones, positions), so two versions with the same order_generation
     * hold the same node at every position. When order_generation is the previous one's,
     * changed[0..nchanged) are the positions whose record this version replaced (in no
     * particular order); every other position holds the previous version's record.
     */
    uint64_t prev_generation;
    uint64_t order_generation;
    uint32_t nchanged;
    const uint32_t *changed;
    uint32_t nnodes;
    uint32_t nchunks;
    struct ks_snap_chunk *const *chunks;
    uint32_t naffinity_nodes; /* indices of nodes with affinity pods (HavePodsWithAffinityList) */
    uint32_t nanti_affinity_nodes;
    const uint32_t *affinity_nodes;
    const uint32_t *anti_affinity_nodes;
    struct ks_snapshot_garbage *garbage; /* what the next version replaced: freed with this one */
    /* ks_snapshot_find(): open addressing, slot = name << 32 | index, UINT64_MAX when empty */
    uint32_t find_mask;
    uint32_t npvcs_in_use;
    const uint64_t *find_table;
    const uint32_t *pvcs_in_use; /* interned "namespace/claim" used by any cached pod (assumed too), sorted */
    /*
     * When priorities_known (a version the cache built): no pod on a node of this version
     * has a priority below min_pod_priority (INT32_MAX when no pod has been cached), so
     * preemption by a pod of at most that priority finds no victim anywhere.
     */
    bool priorities_known;
    int32_t min_pod_priority;
};

/* ks_snapshot_node - node @i of @s. Context: inside the RCU read section that loaded @s. */
static inline const struct ks_node_snap *ks_snapshot_node(const struct ks_snapshot *s, uint32_t i)
{
    return s->chunks[i >> KS_SNAP_CHUNK_SHIFT]->nodes[i & (KS_SNAP_CHUNK - 1)];
}

/* ks_sel_count_find - the index of the first of the @n counts of @v (sorted by id) whose id is not below @id.
 */
static inline uint32_t ks_sel_count_find(const struct ks_sel_count *v, uint32_t n, uint32_t id)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (v[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/*
 * ks_node_snap_sel_count - the pods on @r that tracked selector @id matches (namespace,
 * terminating pods and all, as the cache counts them): false when @r carries no counts
 * (a record the cache did not build); 0 for a selector none of its pods matches. Any thread.
 */
static inline bool ks_node_snap_sel_count(const struct ks_node_snap *r, uint32_t id, uint32_t *count)
{
    if (!(r->flags & KS_SNAP_SEL_COUNTS))
        return false;
    uint32_t i = ks_sel_count_find(r->sel_counts, r->nsel_counts, id);
    *count = i < r->nsel_counts && r->sel_counts[i].id == id ? r->sel_counts[i].count : 0;
    return true;
}

#endif
