/*
 * plugin_helpers_spread.h - what PodTopologySpread and SelectorSpread share: the default
 * selector of a pod's workloads, pod counting by selector, node inclusion checks, the
 * counts of matching pods per topology domain kept across scheduling cycles, and the
 * cycle-state layout of PodTopologySpread (read by its tests).
 *
 * Mirrors pkg/scheduler/framework/plugins/helper/spread.go (DefaultSelector),
 * podtopologyspread/common.go (countPodsMatchSelector, matchNodeInclusionPolicies,
 * nodeLabelsMatchSpreadConstraints, mergeLabelSetWithSelector) and pkg/util/node
 * (GetZoneKey).
 *
 * Context: unless a function says otherwise it is pure, allocation-free and lock-free,
 * so Filter and Score may call it from worker threads inside the RCU read section.
 */
#ifndef KSCHED_PLUGIN_HELPERS_SPREAD_H
#define KSCHED_PLUGIN_HELPERS_SPREAD_H

#include <stdbool.h>
#include <stdint.h>

#include "ksched/api_types.h"
#include "ksched/base/arena.h"
#include "ksched/cache_types.h"

struct ks_objects;

/* ---- selectors ------------------------------------------------------------------------------ */

/*
 * The workloads and Services DefaultSelector reads, indexed by name and by selector pair
 * so that a pod's lookups cost O(its labels), not O(the cluster's workloads). One per
 * plugin instance; the scheduling thread alone uses it.
 */
struct ks_spread_owners;

/* ks_spread_owners_create - an empty index. 0 or -ENOMEM. */
int ks_spread_owners_create(struct ks_spread_owners **out);

/* ks_spread_owners_destroy - free @o. Accepts NULL. */
void ks_spread_owners_destroy(struct ks_spread_owners *o);

/*
 * ks_spread_owners_sync - @o made to index @objs as they are now (rebuilt when the
 * ReplicationControllers, ReplicaSets, StatefulSets or Services changed: ksched/loader.h's
 * gen), for the default selector functions below. NULL when @o or @objs is NULL, or out
 * of memory: those functions then scan. Scheduling thread.
 */
const struct ks_spread_owners *ks_spread_owners_sync(struct ks_spread_owners *o,
                                                     const struct ks_objects *objs);

/* ks_spread_owners_current - @o when it indexes @objs as they are now, else NULL. Allocation-free. */
const struct ks_spread_owners *ks_spread_owners_current(const struct ks_spread_owners *o,
                                                        const struct ks_objects *objs);

/*
 * ks_spread_default_selector - helper.DefaultSelector: the selectors of the Services of
 * @pod's namespace that select it (nil selectors skipped), merged with the selector of its
 * controlling ReplicationController, then the requirements of its controlling ReplicaSet
 * or StatefulSet (apps/v1) added. Never NULL: an empty selector (no requirements) means
 * "no workload selects the pod". The merged pairs come sorted by key (labels.Set's
 * selector). @objs may be NULL (no workloads); @ix, when not NULL, is
 * ks_spread_owners_sync()'s index of @objs. The result lives in @arena and may point into
 * @objs. Returns 0 or -ENOMEM. Scheduling thread.
 */
int ks_spread_default_selector(const struct ks_objects *objs, const struct ks_spread_owners *ix,
                               const struct ks_pod *pod, struct ks_arena *arena,
                               const struct ks_label_selector **out);

/*
 * ks_spread_default_selects - whether ks_spread_default_selector() gives @pod a selector
 * with requirements (some workload selects it), without building it: allocation-free.
 */
bool ks_spread_default_selects(const struct ks_objects *objs, const struct ks_spread_owners *ix,
                               const struct ks_pod *pod);

/*
 * ks_spread_match_label_keys - the selector of @c for a pod labelled @labels: with
 * matchLabelKeys, the pod's values of those keys become In requirements in front of the
 * constraint's own (mergeLabelSetWithSelector); a nil selector stays nil. *out is
 * c->selector itself when nothing is merged. Returns 0 or -ENOMEM (@arena).
 */
int ks_spread_match_label_keys(const struct ks_spread_constraint *c, const struct ks_labels *labels,
                               struct ks_arena *arena, const struct ks_label_selector **out);

/* ks_spread_selector_equal - same requirements in the same order (NULL equals only NULL). */
bool ks_spread_selector_equal(const struct ks_label_selector *a, const struct ks_label_selector *b);

/*
 * ks_spread_count_pods - countPodsMatchSelector: pods on @node in namespace @ns, not
 * terminating, that @sel matches; 0 for a nil or empty selector.
 */
uint32_t ks_spread_count_pods(const struct ks_node_snap *node, const struct ks_label_selector *sel,
                              uint32_t ns);

/*
 * ks_spread_node_count - ks_spread_count_pods(), read from @node's counts when @sel_id
 * names the cache's tracked copy of (@ns, @sel) and the record carries the cache's counts
 * (ks_node_snap_sel_count); KS_ID_NONE, or a record without counts, counts the pods.
 * The caller passes an id only for a snapshot whose records all count it
 * (ks_cache_selector_track's ready generation).
 */
uint32_t ks_spread_node_count(const struct ks_node_snap *node, const struct ks_label_selector *sel,
                              uint32_t ns, uint32_t sel_id);

/*
 * The selectors a plugin had the cache count (ks_cache_selector_track, internal/cache.h)
 * in its last cycles, with their ids, so that a cycle need not ask the cache. One per
 * plugin instance; the scheduling thread alone uses it.
 */
#define KS_SPREAD_TRACKED 8
struct ks_spread_tracker {
    struct ks_spread_tracked {
        struct ks_arena arena; /* sel's copy */
        const struct ks_label_selector *sel;
        uint32_t ns, id;
        uint64_t ready;
        uint64_t
            empty_at; /* the snapshot no record of which holds a pod it matches (tracked then), 0: none */
    } slot[KS_SPREAD_TRACKED];
    uint32_t next;
};

struct ks_cache;

/*
 * ks_spread_counted_id - the id that ks_spread_node_count() reads (@ns, @sel) by in the
 * records of @snap (a snapshot of @cache), or KS_ID_NONE when they do not all count it yet
 * (the cycle that first uses a selector) or on ENOMEM: the pods are then counted one by one.
 * Has the cache track a selector @t does not know. *@empty (may be NULL) says whether no
 * record of @snap holds a pod the selector matches, as known when the cache started
 * tracking it during @snap (a new workload's selector): its counts are then 0 without
 * reading a record. Scheduling thread.
 */
uint32_t ks_spread_counted_id(struct ks_spread_tracker *t, struct ks_cache *cache,
                              const struct ks_snapshot *snap, uint32_t ns,
                              const struct ks_label_selector *sel, bool *empty);

/* ks_spread_tracker_destroy - free what @t holds (not @t itself). */
void ks_spread_tracker_destroy(struct ks_spread_tracker *t);

/* ks_spread_selector_copy - a deep copy of @s in @a (NULL stays NULL); NULL on ENOMEM. */
const struct ks_label_selector *ks_spread_selector_copy(struct ks_arena *a,
                                                        const struct ks_label_selector *s);

/* ---- node inclusion ------------------------------------------------------------------------- */

/* ks_spread_affinity_matches - nodeaffinity.GetRequiredNodeAffinity(@pod).Match(@node). */
bool ks_spread_affinity_matches(const struct ks_pod *pod, const struct ks_node *node);

/* ks_spread_taints_tolerated - no NoSchedule/NoExecute taint of @node is untolerated by @pod. */
bool ks_spread_taints_tolerated(const struct ks_pod *pod, const struct ks_node *node);

/*
 * ks_spread_zone_key - utilnode.GetZoneKey as a pair of ids: the zone (the beta
 * failure-domain label first, else topology.kubernetes.io/zone) and the region (likewise);
 * false when both are empty ("no zone").
 */
bool ks_spread_zone_key(const struct ks_node *node, uint32_t *region, uint32_t *zone);

/*
 * ks_spread_log - the natural logarithm as Go's math.Log computes it (the fdlibm
 * algorithm, which kube-scheduler's topologyNormalizingWeight uses); it differs from the C
 * library's log() in the last bit for some arguments (log(3) among them). @x > 0.
 */
double ks_spread_log(double x);

/* ---- topology domains ------------------------------------------------------------------------ */

/* One topology value and its number of matching pods (an entry of TpValueToMatchNum). */
struct ks_spread_domain {
    uint32_t value; /* interned label value; KS_ID_NONE marks a free slot */
    uint32_t nodes; /* eligible nodes in the domain (kept by the counter; 1 in cycle copies) */
    int64_t count;
};

/* A map from topology value to count: open addressing over a power-of-two table. */
struct ks_spread_domains {
    uint32_t n;    /* values present (len(TpValueToMatchNum[i])) */
    uint32_t mask; /* slots - 1 */
    struct ks_spread_domain *slots;
};

/* ks_spread_domains_find - the entry of @value, NULL when absent. Any thread. */
const struct ks_spread_domain *ks_spread_domains_find(const struct ks_spread_domains *d, uint32_t value);

/*
 * ks_spread_domains_add - `map[value] += delta`, creating the entry; growing takes a new
 * table from @arena. *after receives the new count. Returns 0 or -ENOMEM. Scheduling thread.
 */
int ks_spread_domains_add(struct ks_spread_domains *d, struct ks_arena *arena, uint32_t value, int64_t delta,
                          int64_t *after);

/* ks_spread_domains_clone - a copy of @src in @arena. Returns 0 or -ENOMEM. */
int ks_spread_domains_clone(struct ks_spread_domains *dst, const struct ks_spread_domains *src,
                            struct ks_arena *arena);

/* ---- counts of matching pods per domain, kept across cycles -------------------------------------- */

/* Nodes with matching pods: positions in the snapshot (in no particular order) and counts. */
struct ks_spread_hosts {
    uint32_t n;
    uint32_t *pos;
    uint32_t *count;
};

/* One spread constraint as counted over the cluster's nodes. */
struct ks_spread_term {
    uint32_t topology_key;
    const struct ks_label_selector *selector;
    bool honor_affinity; /* nodeAffinityPolicy Honor: only nodes the pod's required affinity selects */
    bool honor_taints;   /* nodeTaintsPolicy Honor: only nodes whose taints the pod tolerates */
    bool per_node;       /* counted per node, not per domain (hostname terms of PreScore): see hosts */
    bool empty;      /* no record of the snapshot holds a pod the selector matches (ks_spread_counted_id) */
    uint32_t sel_id; /* ks_spread_node_count's: the records' counts of selector, or KS_ID_NONE */
};

/*
 * What to count: for each term, over every node of the snapshot, the pods of namespace
 * @ns its selector matches, summed per value of the term's topology key. With
 * @require_all a node lacking any term's key counts for no term (PreFilter, and PreScore
 * outside system defaulting); without, a missing key reads as the value "". A node
 * counts for a term only if it passes the term's inclusion policies, checked against
 * @pod's required node affinity and tolerations; a counted node creates its domain even
 * when it has no matching pod.
 */
struct ks_spread_query {
    uint32_t ns;
    bool require_all;
    const struct ks_pod *pod;
    uint32_t nterms;
    const struct ks_spread_term *terms;
    uint32_t nlisting;       /* 0: count every node; else only these (the cycle's listing) */
    const uint32_t *listing; /* interned node names */
    /*
     * The first per_node term's count of every node with a matching pod (no inclusion
     * policy or key check applies to it), as positions of the snapshot; NULL: not wanted.
     */
    struct ks_spread_hosts *hosts;
};

struct ks_spread_counter;

/*
 * ks_spread_counter_create - a cache of up to @max_entries counted queries
 * (helper_spread_counter.c). Queries that count the nodes alike (same keys, policies, the
 * pod's affinity / tolerations where a policy reads them) share a layout: per node
 * position the domain each term counts it under, kept through a struct ks_node_memo
 * (plugin_helpers_memo.h) that hands it only the positions whose record changed, which it
 * logs. Each query (a layout, the namespace and the selectors; the terms' sel_id is not
 * part of it) keeps the positions holding pods it matches and the sums per domain, and
 * catches up by recounting the logged positions with ks_spread_node_count(); a new query
 * recounts every position, or none when its terms say no pod matches (empty).
 * Returns 0 or -ENOMEM.
 */
int ks_spread_counter_create(uint32_t max_entries, struct ks_spread_counter **out);

/* ks_spread_counter_destroy - free the cache (drops its pod references). Accepts NULL. */
void ks_spread_counter_destroy(struct ks_spread_counter *c);

/*
 * ks_spread_counter_count - count @q over @snap into @out[q->nterms] (tables in @arena
 * holding the values of counted nodes; skipped terms get empty tables with room to grow).
 * O(nodes / 256) chunk checks plus O(256 * changed chunks) record checks plus O(changed
 * nodes) recounts plus O(domains) copying (a query met for the first time: O(nodes)
 * recounts, none when its selectors match nothing); with a listing, O(listed nodes) for
 * the copy instead (the entry still counts every node).
 * Returns 0 or -ENOMEM. Context: the scheduling thread (one caller per counter), inside
 * the RCU read section that loaded @snap; may allocate.
 */
int ks_spread_counter_count(struct ks_spread_counter *c, const struct ks_snapshot *snap,
                            const struct ks_spread_query *q, struct ks_arena *arena,
                            struct ks_spread_domains *out);

/* ---- PodTopologySpread cycle state ------------------------------------------------------------- */

/* criticalPaths: [0] always holds the minimum match count, [1] a count at least as large. */
struct ks_spread_paths {
    uint32_t value[2];
    int64_t num[2];
};

/* ks_spread_paths_init - both paths {"" , MaxInt32}, as newCriticalPaths. */
void ks_spread_paths_init(struct ks_spread_paths *p);

/* ks_spread_paths_update - criticalPaths.update(@value, @num). */
void ks_spread_paths_update(struct ks_spread_paths *p, uint32_t value, int64_t num);

/* One constraint as the plugin evaluates it (topologySpreadConstraint). */
struct ks_pts_constraint {
    int32_t max_skew;
    uint32_t topology_key;
    const struct ks_label_selector *selector; /* NULL: nil, matches nothing */
    int32_t min_domains;                      /* 1 when not set */
    bool honor_affinity;
    bool honor_taints;
    bool self_match; /* the incoming pod's labels match the selector (Filter's selfMatchNum) */
    uint32_t sel_id; /* the cache's counts of (namespace, selector) for this cycle, or KS_ID_NONE */
    bool sel_empty;  /* the selector matches no pod of the cycle's snapshot (ks_spread_counted_id) */
};

/* preFilterState: DoNotSchedule constraints, matching pods per domain, critical paths. */
struct ks_pts_filter_state {
    uint32_t n;
    struct ks_pts_constraint *cons;
    struct ks_spread_domains *counts; /* [n] */
    struct ks_spread_paths *paths;    /* [n] */
};

/* preScoreState: ScheduleAnyway constraints and the counts Score reads. */
struct ks_pts_score_state {
    uint32_t n;
    bool require_all;  /* nodes without every key are ignored (IgnoredNodes) */
    uint32_t ns;       /* the pod's namespace */
    uint32_t hostname; /* interned kubernetes.io/hostname */
    struct ks_pts_constraint *cons;
    struct ks_spread_domains *counts; /* [n]; empty for hostname constraints */
    double *weight;                   /* [n] topologyNormalizingWeight */
    struct ks_spread_hosts hosts;     /* the nodes with pods the hostname constraint counts (none: n 0) */
};

/* topologyNormalizingWeight for a key with @size values among the scored nodes. */
static inline double ks_pts_weight(uint32_t size)
{
    return ks_spread_log((double)size + 2);
}

/* scoreForCount: one constraint's part of a node's raw Score, @cnt pods in its domain. */
static inline double ks_pts_score_for_count(int64_t cnt, int32_t max_skew, double weight)
{
    return (double)cnt * weight + (double)(max_skew - 1);
}

/* The plugin's cycle-state slot. */
struct ks_pts_cycle {
    struct ks_pts_filter_state *filter; /* NULL before PreFilter */
    struct ks_pts_score_state *score;   /* NULL before PreScore */
};

#endif
