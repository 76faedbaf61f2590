/*
 * cache.h - cluster state for scheduling: nodes, pods, assumed pods, and the snapshot.
 *
 * Mirrors pkg/scheduler/backend/cache (cache.go, node_tree.go, snapshot.go). The cache
 * keeps per-node aggregates (requested resources, host ports, pods with affinity, PVC
 * reference counts, image states, a generation) and publishes an immutable struct
 * ks_snapshot (cache_types.h) with RCU: ks_cache_refresh() copies only the nodes whose
 * generation moved since the last version, shares everything else, and retires the
 * previous version through ks_rcu_call().
 *
 * Ownership: the cache owns every node added to it and one reference (ks_pod_get) to
 * every pod it holds: add and update take over the caller's reference, assume takes one
 * of its own (the caller keeps its pod). Nodes and references are released only once no
 * published snapshot can reach them. A call that fails takes nothing over.
 *
 * Context: mutations may come from any thread; they are serialised by the cache's mutex
 * (KS_LOCK_CACHE, a leaf of the lock order in ksched/base/lock.h: no other lock is taken under it).
 * ks_cache_refresh() is called by the scheduling thread. Snapshot readers take the RCU
 * read lock (ksched/base/rcu.h), load ks_cache_snapshot(), and use it and everything reachable
 * from it (nodes, pods) until they unlock; readers never block writers.
 */
#ifndef KSCHED_CACHE_H
#define KSCHED_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "ksched/api_types.h"
#include "ksched/cache_types.h"

struct ks_cache;

/* ks_cache_create - an empty cache. 0 or -ENOMEM. */
int ks_cache_create(struct ks_cache **out);

/* ks_cache_destroy - free the cache, every object it owns and every snapshot. No reader may remain. Accepts
 * NULL. */
void ks_cache_destroy(struct ks_cache *c);

/* Nodes. add/update take ownership of @node (update replaces the node with the same name). -EEXIST / -ENOENT.
 */
int ks_cache_add_node(struct ks_cache *c, struct ks_node *node);
int ks_cache_update_node(struct ks_cache *c, struct ks_node *node);
int ks_cache_remove_node(struct ks_cache *c, uint32_t name);

/*
 * Pods bound to @node. add takes over a reference to @pod; if @pod is currently assumed (same
 * pointer) it is confirmed instead of counted twice; if another object of the same pod
 * (namespace/name) is assumed, that assumption is replaced. update replaces the object
 * of the same pod (it may move nodes). remove forgets the pod of that namespace/name.
 * Errors: -EEXIST (already added), -ENOENT.
 */
int ks_cache_add_pod(struct ks_cache *c, struct ks_pod *pod, uint32_t node);
int ks_cache_update_pod(struct ks_cache *c, struct ks_pod *pod, uint32_t node);
int ks_cache_remove_pod(struct ks_cache *c, const struct ks_pod *pod);

/*
 * ks_cache_confirm_pod - the binding of the assumed @pod succeeded: ks_cache_add_pod(),
 * but only while this very object is still assumed on @node. -ENOENT (nothing taken over)
 * when it was forgotten, removed (deleted, evicted as a preemption victim) or replaced by
 * the informer's bound version meanwhile: the binder's news is stale, and adding the pod
 * back would resurrect a deleted pod on its node for ever.
 */
int ks_cache_confirm_pod(struct ks_cache *c, struct ks_pod *pod, uint32_t node);

/*
 * Assumed pods (scheduling thread): assume accounts @pod on @node before binding;
 * forget undoes it (binding failed). An assumed pod stays until it is confirmed
 * (ks_cache_confirm_pod, ks_cache_add_pod of its bound object), forgotten or removed, as
 * upstream's cache with durationToExpireAssumedPod 0.
 */
int ks_cache_assume_pod(struct ks_cache *c, const struct ks_pod *pod, uint32_t node);
int ks_cache_forget_pod(struct ks_cache *c, const struct ks_pod *pod);
bool ks_cache_is_assumed(struct ks_cache *c, const struct ks_pod *pod);

/*
 * ks_cache_hide_pod - leave @pod (namespace/name) out of its node's aggregates and of the
 * records the next ks_cache_refresh() publishes, as upstream's preemption removes pods from
 * its snapshot for a what-if; the pod keeps its place (and its order among its node's pods)
 * in the cache. 0, -ENOENT (unknown), -EALREADY (hidden), or -ENOMEM with nothing changed.
 * ks_cache_unhide_pod puts one back (-ENOENT when it is not hidden); ks_cache_unhide_all
 * every one. Neither allocates nor fails. A hidden pod that is removed, forgotten or replaced
 * (update, add of an assumed pod) is hidden no more: the new object is accounted as usual.
 * Context: the scheduling thread hides and unhides, within one scheduling cycle.
 */
int ks_cache_hide_pod(struct ks_cache *c, const struct ks_pod *pod);
int ks_cache_unhide_pod(struct ks_cache *c, const struct ks_pod *pod);
void ks_cache_unhide_all(struct ks_cache *c);

/* ks_cache_pod_node - the node @pod (namespace/name) is on or assumed on, KS_ID_NONE when unknown. */
uint32_t ks_cache_pod_node(struct ks_cache *c, const struct ks_pod *pod);

/*
 * ks_cache_pod_binding - ks_cache_pod_node() and, in *@assumed, ks_cache_is_assumed(),
 * both read under one lock. A binder thread may confirm or forget an assumption at any
 * moment: a caller that decides on both facts must read them here, not in two calls.
 */
uint32_t ks_cache_pod_binding(struct ks_cache *c, const struct ks_pod *pod, bool *assumed);

/*
 * ks_cache_selector_track - count, per node, the pods of namespace @ns that @sel matches
 * (a spread constraint's selector: PodTopologySpread's countPodsMatchSelector, terminating
 * pods left out) from now on, for the life of the cache. *@id names (@ns, @sel) in the
 * records' sel_counts (ks_node_snap_sel_count, cache_types.h); a selector with the same
 * requirements in the same order, in the same namespace, gets the same id. A record of a
 * snapshot whose generation is at least *@ready counts it; an earlier snapshot's records
 * may lack it. *@ready is 0 - every snapshot's records count it - when no pod the cache
 * holds matched it when it was first tracked and nothing had changed since the last
 * version was published (so no published record holds one either). @sel must have requirements. The first
 * call for a selector walks the cache's pods (under the lock); later ones find it in a hash table. Returns 1
 * when this call started tracking the selector with *@ready 0 - no record of any snapshot holds a pod it
 * matches - else 0; -ENOMEM with nothing tracked. Context: any thread; takes the cache lock.
 */
int ks_cache_selector_track(struct ks_cache *c, uint32_t ns, const struct ks_label_selector *sel,
                            uint32_t *id, uint64_t *ready);

/*
 * ks_cache_selector_stats - the selectors tracked, and the bytes their counting takes:
 * the selectors' copies and tables, the counts kept per node (in the cache; the published
 * records hold as many again), and the pods' lists of the selectors they match.
 */
void ks_cache_selector_stats(struct ks_cache *c, uint32_t *nselectors, size_t *bytes);

/* ks_cache_counts - nodes and pods (assumed included) held. */
void ks_cache_counts(struct ks_cache *c, uint32_t *nodes, uint32_t *pods);

/*
 * ks_cache_sizes - what upstream's cache reports as scheduler_cache_size: nodes (node
 * records, those of deleted nodes that still hold pods included), pods (assumed included),
 * assumed pods. Any out-pointer may be NULL. Takes the cache lock.
 */
void ks_cache_sizes(struct ks_cache *c, uint32_t *nodes, uint32_t *pods, uint32_t *assumed);

/*
 * ks_cache_refresh - publish a snapshot reflecting every mutation so far, refreshing
 * only the nodes changed since the previous version; no-op when nothing changed.
 * Returns the number of node records rebuilt, or -ENOMEM (the previous version stays).
 * Context: the scheduling thread (one caller at a time); takes the cache lock.
 */
int ks_cache_refresh(struct ks_cache *c);

/*
 * ks_cache_check - the cache's invariants (cache/cache_check.c): each node's aggregates
 * (requested and non-zero requested resources, scalars, pod count, affinity lists, host
 * ports, PVC counts, tracked selectors' counts) equal the sums over its pods, and each pod
 * lists exactly the tracked selectors it matches; every pod entry is indexed on the node
 * it names; the assumed list holds exactly the assumed entries; node-less infos hold pods.
 * With KS_CACHE_CHECK_FIT, no node's requests exceed its allocatable (cpu, memory,
 * ephemeral storage, pods, scalars). With KS_CACHE_CHECK_SNAPSHOT, the published snapshot
 * equals the cache for every node not changed since the last refresh (call right after
 * ks_cache_refresh() to compare every node): same nodes in the tree's order, and each
 * record's fields and arrays equal to its node's. Returns the number of violations (0: all
 * hold) with the first described in @msg ("node n3: requested cpu 2500m, sum over its 4
 * pods 2000m"). Also counts assumed pods into *@nassumed when not NULL. Takes the cache
 * lock and an RCU read section: not from inside one.
 */
#define KS_CACHE_CHECK_FIT      0x1u
#define KS_CACHE_CHECK_SNAPSHOT 0x2u
uint32_t ks_cache_check(struct ks_cache *c, unsigned flags, uint32_t *nassumed, char *msg, uint32_t len);

/* ks_cache_snapshot - the current snapshot. Context: inside ks_rcu_read_lock(). Never NULL. */
const struct ks_snapshot *ks_cache_snapshot(struct ks_cache *c);

/* ks_snapshot_find - the record of node @name in @s, NULL when absent. O(1). Context: RCU read section. */
const struct ks_node_snap *ks_snapshot_find(const struct ks_snapshot *s, uint32_t name);

/* ks_snapshot_position - the position of node @name in @s (ks_snapshot_node's index), UINT32_MAX when absent.
 */
uint32_t ks_snapshot_position(const struct ks_snapshot *s, uint32_t name);

/*
 * ks_node_snap_derive - @base as if the pods @add were added to its node and the pods
 * @remove (matched by namespace/name) removed: upstream's NodeInfo clone + AddPod /
 * RemovePod, for Filter with nominated pods and preemption dry runs. The record and its
 * arrays live in @arena and are never published; it shares @base's node object. NULL on
 * ENOMEM. Context: inside the RCU read section that holds @base; takes no cache lock.
 */
struct ks_arena;
const struct ks_node_snap *ks_node_snap_derive(const struct ks_node_snap *base,
                                               const struct ks_pod *const *add, uint32_t nadd,
                                               const struct ks_pod *const *remove, uint32_t nremove,
                                               struct ks_arena *arena);

#endif
