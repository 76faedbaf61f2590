/*
 * cache_internal.h - private types of the scheduler cache (only the cache/ sources include it).
 *
 * The mutable side, guarded by ks_cache.lock:
 *   struct pod_entry   one per pod key (namespace/name), upstream's podState; the per-pod
 *                      facts the node aggregates need (host ports, PVC keys, affinity
 *                      flags) are computed once, outside the lock, when the entry is made.
 *   struct node_info   upstream's NodeInfo: the node object (NULL for a node deleted while
 *                      pods remain) and the aggregates of its pods, plus a generation that
 *                      moves on every change.
 *   struct node_tree   upstream's nodeTree: zones in order of first appearance, nodes of a
 *                      zone in insertion order; gives the snapshot's node order.
 *   struct image_state cluster-wide image summary (size, number of nodes that have it).
 *
 * The published side: struct snap_version wraps one struct ks_snapshot; records and
 * chunks are shared between versions and freed through the garbage list of the last
 * version that could reach them (snapshot.c).
 */
#ifndef KSCHED_CACHE_INTERNAL_H
#define KSCHED_CACHE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ksched/api_types.h"
#include "ksched/base/arena.h"
#include "ksched/base/lock.h"
#include "ksched/cache_types.h"
#include "ksched/internal/cache.h"

#define KS__NO_INDEX UINT32_MAX

/* ---- growable arrays -------------------------------------------------------------------- */

/* ---- pods -------------------------------------------------------------------------------- */

struct node_info;

struct pod_entry {
    struct pod_entry *hnext;  /* pod table chain */
    uint64_t hash;            /* of (namespace, name) */
    const struct ks_pod *pod; /* one reference is the entry's (handed over, or taken by assume) */
    struct node_info *ni;     /* the node the pod is accounted on */
    uint32_t node;            /* its name */
    uint32_t slot;            /* index in ni->pods */
    uint32_t aff_slot;        /* index in ni->aff (has_affinity) */
    uint32_t anti_slot;       /* index in ni->anti (has_anti_affinity) */
    bool assumed;
    bool hidden;                     /* left out of its node's aggregates and record (ks_cache_hide_pod) */
    bool has_affinity;               /* any pod affinity or anti-affinity (upstream podWithAffinity) */
    bool has_anti_affinity;          /* required anti-affinity terms (podWithRequiredAntiAffinity) */
    struct pod_entry *anext, *aprev; /* list of assumed pods */
    struct pod_entry *xnext, *xprev; /* list of hidden pods */
    uint32_t nports;
    uint32_t npvcs;
    struct ks_host_port *ports; /* containers' host ports, hostIP defaulted; same allocation */
    uint32_t *pvcs;             /* interned "namespace/claim" per PVC or ephemeral volume */
    uint32_t *label_pos;        /* per pod label: the entry's place in that label's list (pod_labels.c) */
    /* the tracked selectors the pod matches (selector_counts.c): sel_inline, or an allocation */
    uint32_t nsel, cap_sel;
    uint32_t *sel;
    uint32_t sel_inline[2];
};

/* ks__pod_entry_free - free @e and its selector list (the pod reference is not the entry's to drop). */
void ks__pod_entry_free(struct pod_entry *e);

/* pod_table.c: (namespace, name) -> entry; chained, grows at load factor 1. */
struct pod_table {
    struct pod_entry **buckets;
    uint32_t mask;
    uint32_t n;
};

/* ks__pod_table_init - the first buckets, so that inserts never fail. 0 or -ENOMEM. */
int ks__pod_table_init(struct pod_table *t);
uint64_t ks__pod_key_hash(uint32_t ns, const char *name);
struct pod_entry *ks__pod_table_find(const struct pod_table *t, uint32_t ns, const char *name, uint64_t hash);
void ks__pod_table_insert(struct pod_table *t, struct pod_entry *e);
void ks__pod_table_remove(struct pod_table *t, struct pod_entry *e);
void ks__pod_table_destroy(struct pod_table *t);

/*
 * ks__pod_entry_make - a fresh entry for @pod on @node with its ports, PVC keys and
 * affinity flags computed (interns PVC keys: call outside the cache lock). NULL on ENOMEM.
 */
struct pod_entry *ks__pod_entry_make(const struct ks_pod *pod, uint32_t node, uint32_t any_ip);

/* ---- nodes ------------------------------------------------------------------------------- */

struct image_state {
    struct image_state *hnext;
    uint32_t name;
    uint32_t num_nodes;
    bool linked;        /* in the image table (false while a new summary is only prepared) */
    int64_t size_bytes; /* as reported by the first node that had it, as upstream */
};

struct ni_image {
    uint32_t name;
    int64_t size_bytes; /* this node's report (used when it creates the summary) */
    struct image_state *st;
};

/*
 * What the cache derives from a node object, computed outside the lock when the node is
 * added or updated: its zone key, the interned taint reasons, its images deduplicated.
 */
struct node_prep {
    uint32_t region, zone; /* upstream GetZoneKey as a pair: (EMPTY, EMPTY) is "" */
    uint32_t ntaints;
    uint32_t nimages;
    uint32_t *taint_reasons;
    struct ni_image *images; /* sorted by name, unique */
};

struct node_prep *ks__node_prep_make(const struct ks_node *node, uint32_t beta_zone, uint32_t beta_region);

struct node_info {
    /* first cache line: what lookups and an O(N) relist of the snapshot touch */
    struct node_info *hnext; /* node table chain */
    uint32_t name;
    uint32_t dirty_idx;                 /* index in ks_cache.dirty, KS__NO_INDEX when clean */
    const struct ks_node_snap *rec;     /* record in the latest version; NULL when not in the tree */
    const struct ks_node_snap *new_rec; /* built by the refresh in progress */
    uint32_t snap_idx;                  /* position in the latest version's order */
    bool pub_aff, pub_anti;             /* rec has (anti-)affinity pods: flips without reading rec */
    struct ks_node *node;               /* NULL: deleted while pods remain (not in the tree or snapshot) */
    struct node_prep *prep;             /* derived from node; NULL with it */
    uint64_t generation;

    int64_t req_milli_cpu, req_memory, req_ephemeral;
    int64_t nonzero_milli_cpu, nonzero_memory;
    uint32_t nscalar, cap_scalar;
    struct ks_resource_item *scalar; /* sorted by name; no zero entries */

    uint32_t npods, cap_pods;
    struct pod_entry **pods; /* upstream order: append, swap-remove */
    uint32_t naff, cap_aff;
    struct pod_entry **aff;
    uint32_t nanti, cap_anti;
    struct pod_entry **anti;
    uint32_t nports, cap_ports;
    struct ks_host_port *ports; /* a set (HostPortInfo), sorted by port, protocol, ip */
    uint32_t npvcs, cap_pvcs;
    struct ks_sel_count *pvcs; /* claims in use (interned id) and their pods, sorted by id */
    /*
     * Hidden entries stay in pods/aff/anti (their order kept) but out of every aggregate and
     * out of the record. What they would add back is counted here, so that every reservation
     * also leaves room for them and ks__ni_unhide_pod() never allocates.
     */
    uint32_t nhidden, nhidden_aff, nhidden_anti;
    uint32_t hidden_ports, hidden_pvcs, hidden_scalar, hidden_sel;
    /* per tracked selector matching some of the pods (hidden ones left out): the count; sorted by id */
    uint32_t nselc, cap_selc;
    struct ks_sel_count *selc;
};

/* node_info.c */

/* PVC use counts in a sorted array with room for one more: true when the key appeared / went away. */
bool ks__pvc_count_add(struct ks_sel_count *v, uint32_t *n, uint32_t id);
bool ks__pvc_count_remove(struct ks_sel_count *v, uint32_t *n, uint32_t id);
int ks__ni_reserve_pod(struct node_info *ni, const struct pod_entry *e);
void ks__ni_add_pod(struct node_info *ni, struct pod_entry *e);
void ks__ni_remove_pod(struct node_info *ni, struct pod_entry *e);
/* Take @e (on @ni, not hidden) out of the aggregates and the record, and put it back; no allocation. */
void ks__ni_hide_pod(struct node_info *ni, struct pod_entry *e);
void ks__ni_unhide_pod(struct node_info *ni, struct pod_entry *e);
void ks__ni_free(struct node_info *ni);
void ks__node_prep_free(struct node_prep *p);

/* ks__ni_build_record - one allocation holding the record and its arrays; NULL on ENOMEM. */
struct ks_node_snap *ks__ni_build_record(const struct node_info *ni);

/* ---- node tree (node_tree.c) ----------------------------------------------------------------- */

struct tree_zone {
    uint32_t region, zone;
    uint32_t n, cap;
    struct node_info **nodes;
};

struct node_tree {
    uint32_t nzones, cap_zones;
    struct tree_zone *zones; /* in order of first appearance */
    uint32_t nnodes;
    uint32_t map_mask;
    uint32_t *map; /* open addressing (region, zone) -> zone index + 1; 0 empty */
};

/* ks__tree_add - append @ni to zone (region, zone). 0, or -ENOMEM with the tree unchanged. */
int ks__tree_add(struct node_tree *t, struct node_info *ni, uint32_t region, uint32_t zone);
void ks__tree_remove(struct node_tree *t, struct node_info *ni, uint32_t region, uint32_t zone);
/*
 * ks__tree_list - write the t->nnodes nodes round-robin over zones into @out; @active is
 * scratch for t->nzones indices.
 */
void ks__tree_list(const struct node_tree *t, struct node_info **out, uint32_t *active);
void ks__tree_destroy(struct node_tree *t);

/* ---- snapshot versions and garbage (snapshot.c) ------------------------------------------- */

enum gc_kind {
    KS_GC_FREE,  /* free() */
    KS_GC_POD,   /* ks_pod_put(): the reference an entry held */
    KS_GC_NODE,  /* ks_node_destroy() */
    KS_GC_CHUNK, /* a struct ks_snap_chunk, back to the cache's chunk pool */
};

/*
 * Chunks no version references any more, for the next versions to reuse: the RCU
 * callbacks push them (any thread), the refresh takes the whole stack at once into its own
 * list (under the cache lock), so no pop races a push. A reused chunk is recently touched
 * memory, where a fresh allocation of the size is usually a page the process never wrote.
 * A pooled chunk's generation field holds the link to the next. Freed when the cache is.
 */
struct chunk_pool {
    _Atomic(struct ks_snap_chunk *) pushed;
    struct ks_snap_chunk *taken; /* the refresh's: guarded by the cache lock */
};

struct gc_item {
    void *p;
    enum gc_kind kind;
};

struct ks_snapshot_garbage {
    uint32_t n, cap;
    struct gc_item items[];
};

/* Garbage that fits here (the usual refresh: one record, one chunk) needs no allocation. */
#define KS_GC_INLINE 6

struct snap_version {
    struct ks_snapshot pub;  /* pub.garbage: what did not fit inline */
    struct chunk_pool *pool; /* where its KS_GC_CHUNK garbage goes */
    uint32_t ngc_inline;
    struct gc_item gc_inline[KS_GC_INLINE];
    struct ks_snap_chunk *chunks[]; /* pub.chunks points here */
};

/* ---- tracked selectors (selector_counts.c) -------------------------------------------------- */

/* One tracked selector (selector_counts.c); its requirements and values follow it in one allocation. */
struct tracked_sel {
    struct tracked_sel *hnext; /* chain by content */
    struct tracked_sel *knext; /* chain by the requirement it is filed under, or the scan list */
    uint64_t hash;             /* ks__sel_hash */
    uint32_t id, ns;
    uint32_t key,
        value;      /* filed under: (key, value) of an In, (key, KS_ID_NONE) of an Exists; key NONE: scan */
    uint64_t ready; /* ks_cache_selector_track's *ready */
    size_t bytes;   /* this allocation */
    struct ks_label_selector sel;
};

/*
 * The selectors whose matching pods the cache counts per node: by id, by content (for
 * ks_cache_selector_track), and by one requirement each (for matching a pod): an In with
 * one value files it under (namespace, key, value), else an Exists under (namespace, key,
 * KS_ID_NONE); a selector with neither is on the scan list, tried for every pod.
 */
struct sel_registry {
    uint32_t n, cap;
    struct tracked_sel **by_id;
    uint32_t hmask;
    struct tracked_sel **hbuckets; /* by content; hmask + 1 chains */
    uint32_t kmask;
    struct tracked_sel **kbuckets; /* by (namespace, key, value); kmask + 1 chains */
    struct tracked_sel *scan;
    size_t bytes; /* the selectors' own allocations */
};

uint64_t ks__sel_hash(uint32_t ns, const struct ks_label_selector *sel);
/* ks__sel_find - the tracked copy of (@ns, @sel) with ks__sel_hash @hash, or NULL. */
struct tracked_sel *ks__sel_find(const struct sel_registry *r, uint32_t ns,
                                 const struct ks_label_selector *sel, uint64_t hash);
/* ks__sel_new - a copy of (@ns, @sel), not yet tracked; NULL on ENOMEM. Free it with free(). */
struct tracked_sel *ks__sel_new(uint32_t ns, const struct ks_label_selector *sel, uint64_t hash);
/* ks__sel_reserve - room to insert one more selector; 0 or -ENOMEM. */
int ks__sel_reserve(struct sel_registry *r);
/* ks__sel_insert - track @t (room reserved), giving it the next id. */
void ks__sel_insert(struct sel_registry *r, struct tracked_sel *t);
/* ks__sel_matches - @pod is of @t's namespace, not terminating, and @t matches its labels. */
bool ks__sel_matches(const struct tracked_sel *t, const struct ks_pod *pod);
/* ks__pod_entry_sel_reserve - room for @more ids in @e's list; 0 or -ENOMEM. */
int ks__pod_entry_sel_reserve(struct pod_entry *e, uint32_t more);

/*
 * ks__sel_match_pod - fill @e's list with the tracked selectors its pod matches (a
 * terminating pod matches none). 0, or -ENOMEM with the list empty. Cache lock held.
 */
int ks__sel_match_pod(const struct sel_registry *r, struct pod_entry *e);
void ks__sel_registry_destroy(struct sel_registry *r);

/* node_info.c: the counts of @e's selectors, @sign times, into @ni (room reserved). */
void ks__ni_sel_apply(struct node_info *ni, const struct pod_entry *e, int sign);
/* node_info.c: one more (@sign 1) or less pod that selector @id matches on @ni (room reserved). */
void ks__ni_sel_count(struct node_info *ni, uint32_t id, int sign);

/* ---- pods by label (pod_labels.c) ----------------------------------------------------------- */

struct label_list {
    struct label_list *hnext;
    uint64_t hash;
    uint32_t ns, key, value;
    uint32_t n, cap;
    struct pod_entry **pods;
};

struct label_index {
    bool on;         /* kept from the first tracked selector on */
    uint32_t n;      /* lists */
    uint32_t nempty; /* lists without pods */
    uint32_t mask;
    struct label_list **buckets;
};

/* ks__label_index_find - the pods of (@ns, @key, @value), or NULL. */
struct label_list *ks__label_index_find(const struct label_index *x, uint32_t ns, uint32_t key,
                                        uint32_t value);
/* ks__label_index_reserve - room to add @e (no-op while off); 0 or -ENOMEM. */
int ks__label_index_reserve(struct label_index *x, const struct pod_entry *e);
/* ks__label_index_add / _remove - list and unlist @e (room reserved; no-op while off). */
void ks__label_index_add(struct label_index *x, struct pod_entry *e);
void ks__label_index_remove(struct label_index *x, struct pod_entry *e);
/* ks__label_index_build - turn the index on with every entry of @pods; 0, or -ENOMEM with it off. */
int ks__label_index_build(struct label_index *x, const struct pod_table *pods);
/* ks__label_index_sweep - free the empty lists when they are many. Not while an attach is reserved. */
void ks__label_index_sweep(struct label_index *x);
size_t ks__label_index_bytes(const struct label_index *x);
void ks__label_index_destroy(struct label_index *x);

/* ---- the cache ------------------------------------------------------------------------------- */

enum { KS_CACHE_PRIORITIES = 32 }; /* distinct pod priorities ks_cache.prio tracks */

struct ks_cache {
    struct ks_mutex lock; /* guards everything below; KS_LOCK_CACHE (ksched/base/lock.h) */
    uint64_t generation;  /* last generation handed out; monotonic */

    uint32_t any_ip;      /* "0.0.0.0" */
    uint32_t beta_zone;   /* failure-domain.beta.kubernetes.io/zone */
    uint32_t beta_region; /* failure-domain.beta.kubernetes.io/region */

    /* nodes by name: chained table */
    struct node_info **nbuckets;
    uint32_t nmask;
    uint32_t nnode_infos;

    struct pod_table pods;
    struct pod_entry *assumed; /* list head of assumed entries */
    uint32_t nassumed;         /* entries on that list */
    struct pod_entry *hidden;  /* list head of hidden entries (ks_cache_hide_pod) */
    uint32_t nhidden;          /* entries on that list; the dirty list keeps room for one touch each */

    /* image name -> summary */
    struct image_state **ibuckets;
    uint32_t imask;
    uint32_t nimage_states;

    /* cache-wide PVC use counts (every pod, assumed included), sorted by id */
    uint32_t npvcs, cap_pvcs;
    struct ks_sel_count *pvcs;
    bool pvcs_dirty;

    /*
     * The priorities of the pods attached to node_infos (assumed and hidden ones too) with
     * their counts, sorted by priority; the pods whose priority found no room counted in
     * prio_overflow (ks__cache_min_priority is then INT32_MIN).
     */
    uint32_t nprio, prio_overflow;
    struct prio_count {
        int32_t priority;
        uint32_t n;
    } prio[KS_CACHE_PRIORITIES];

    struct node_tree tree;
    bool order_dirty; /* the tree changed since the last version */

    uint32_t ndirty, cap_dirty;
    struct node_info **dirty; /* changed since the last version; NULL slots are removed infos */

    struct ks_snapshot_garbage *pending; /* unreachable from the cache, maybe from the snapshot; kept */
    struct chunk_pool chunk_pool;

    /* refresh state */
    struct snap_version *current;  /* the latest published version (writer's view) */
    struct ks_snapshot *published; /* what readers load: &current->pub */
    uint32_t cap_order, cap_order_scratch;
    struct node_info **order; /* the latest version's node order */
    uint32_t *order_scratch;
    uint32_t nflips, cap_flips;
    uint32_t *flips;

    struct sel_registry sels;
    struct label_index labels;
};

/*
 * cache_lock - take c->lock, polling it for up to 50 us before sleeping (lock.h): the
 * scheduling thread holds it while it publishes a snapshot, longer than an adaptive mutex
 * spins, and a binder asleep on it would make every unlock a futex wake-up.
 */
static inline void cache_lock(struct ks_cache *c)
{
    ks_mutex_lock_polling(&c->lock, 50000);
}

static inline void cache_unlock(struct ks_cache *c)
{
    ks_mutex_unlock(&c->lock);
}

/*
 * cache.c: ks__cache_min_priority - no pod attached to a node_info has a lower priority
 * (INT32_MAX without pods; INT32_MIN when more distinct priorities than tracked). Cache lock held.
 */
int32_t ks__cache_min_priority(const struct ks_cache *c);

/* snapshot.c */
int ks__gc_reserve(struct ks_cache *c, uint32_t more);
void ks__gc_push(struct ks_cache *c, void *p, enum gc_kind kind);
int ks__snapshot_init(struct ks_cache *c);
int ks__snapshot_refresh(struct ks_cache *c, struct snap_version **retired);
void ks__snapshot_retire(struct snap_version *v);
void ks__snapshot_destroy(struct ks_cache *c);

#endif
