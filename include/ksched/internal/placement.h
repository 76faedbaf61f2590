/*
 * placement.h - topology-aware workload scheduling's placements (KEP-5732,
 * TopologyAwareWorkloadScheduling): the candidate domains of a pod group with a topology
 * constraint, and the scores that choose among the feasible ones.
 *
 * ks_placements_build - TopologyPlacementGenerator: the snapshot's nodes grouped by the value
 * of label @key (nodes without it belong to none), one placement per value, sorted by the
 * value (upstream's order is a Go map's, unordered); with @required (an interned value, not
 * KS_ID_NONE) only that one. O(nodes) when the kept domains still hold, else O(nodes log
 * nodes). 0 or -ENOMEM. Context: RCU read section holding @snap.
 *
 * ks_placement_fit_score - NodeResourcesFit's placement score: MostAllocated over the whole
 * domain, the resources weighted as @w says: for each, what the domain's nodes request
 * (non-zero requests for cpu and memory) plus @add of the group's proposed pods (one per
 * resource of @w), over what they offer, 0-100. A scalar resource the proposed pods do not
 * request is left out, and so is every node's share of a resource it does not offer. Not
 * thread-safe: the running sums are @w's.
 *
 * ks_placement_pods_score - PodGroupPodsCount's normalised score: @count pods of the group
 * (already scheduled + proposed) against the most any candidate placement has, 0-100.
 */
#ifndef KSCHED_PLACEMENT_H
#define KSCHED_PLACEMENT_H

#include <stdint.h>

struct ks_snapshot;
struct ks_pod;
struct ks_res_spec;
struct ks_resource_spec;

/*
 * The placements of one cycle: a view (n, value, first, names, pos) into the domains of every
 * value, kept and reused while the snapshot holds the same nodes at the same positions, each
 * with the value it had (a node's record that changed since is read again).
 */
struct ks_placement_set {
    uint32_t n;            /* placements */
    const uint32_t *value; /* per placement: the label value (interned) */
    const uint32_t *first; /* n + 1 offsets into names and pos */
    const uint32_t *names; /* node names (interned), grouped by placement, sorted within one */
    const uint32_t *pos;   /* the nodes' positions in the snapshot */
    /* the kept domains of every value, and what they were built from */
    uint32_t all_n, key, one_first[2];
    uint64_t order_generation;
    uint32_t *all_value, *all_first, *all_names, *all_pos;
    uint32_t cap_value, cap_first, cap_names, cap_pos, cap_seen, cap_seen_value, nseen;
    uint64_t *seen;       /* per position: the generation of the record the domains were read from */
    uint32_t *seen_value; /* per position: the node's value of key then (KS_ID_NONE: none) */
};

int ks_placements_build(const struct ks_snapshot *snap, uint32_t key, uint32_t required,
                        struct ks_placement_set *ps);
void ks_placement_set_free(struct ks_placement_set *ps);

/*
 * The placement scores' weights, from the profile: NodeResourcesFit's score weight (0: the
 * profile does not score with it) and its scoringStrategy.resources with their weights (cpu
 * and memory 1 when the profile names none), PodGroupPodsCount's 1.
 */
struct ks_placement_weights {
    int64_t fit, pods;
    uint32_t nres;
    struct ks_res_spec *res; /* the resources scored */
    int64_t *sum;            /* 2 x nres: a score's running sums (scratch) */
};

/* ks_placement_weights_init - @fit, and @nres resources of @res (0: cpu and memory, 1 each). 0 or -ENOMEM. */
int ks_placement_weights_init(struct ks_placement_weights *w, int64_t fit, const struct ks_resource_spec *res,
                              uint32_t nres);
void ks_placement_weights_free(struct ks_placement_weights *w);

/* ks_placement_add - add @pod's request of each resource of @w to @add (w->nres; cpu, memory non-zero). */
void ks_placement_add(const struct ks_placement_weights *w, const struct ks_pod *pod, int64_t *add);

/*
 * ks_placement_measure - in one pass over the nodes at @pos of @snap: how many pods of at least
 * @min_cpu / @min_mem fit by cpu, memory and pod count (*@bound), and the fit score with @add
 * requested on top (*@fit, ks_placement_fit_score's).
 */
void ks_placement_measure(const struct ks_snapshot *snap, const struct ks_placement_weights *w,
                          const uint32_t *pos, uint32_t n, int64_t min_cpu, int64_t min_mem,
                          const int64_t *add, uint64_t *bound, int64_t *fit);

int64_t ks_placement_fit_score(const struct ks_snapshot *snap, const struct ks_placement_weights *w,
                               const uint32_t *names, uint32_t n, const int64_t *add);
int64_t ks_placement_pods_score(uint32_t count, uint32_t max_count);

#endif
