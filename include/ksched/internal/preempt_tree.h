/*
 * preempt_tree.h - the signature index's candidate tree: for one class of pods (index.h),
 * per node position in the snapshot's order, what DefaultPreemption's dry run finds on that
 * node for a preemptor of the class, so that a preempting cycle reads the nodes its dry run
 * would try, the candidates among them and pickOneNodeForPreemption's choice in O(log n)
 * instead of trying numCandidates nodes and comparing them (engine/preemption_indexed.c).
 *
 * A position is one of:
 *   - not potential: its Filter status is not Unschedulable, so the dry run skips it;
 *   - unknown: potential, its verdict not computed since its node last changed;
 *   - failed: potential, SelectVictimsOnNode found no victims that make room;
 *   - a candidate, with its rank (ks_preempt_rank);
 *   - volatile: potential, with a verdict the tree cannot stand for (a plugin error, victims
 *     whose order depends on "now").
 * The tree is for dry runs without PodDisruptionBudgets: every candidate is one without
 * violations, so the dry run stops at the numCandidates-th candidate.
 *
 * One segment tree of 2 x leaves nodes (leaves: the power of two >= n), each holding its
 * range's counts of potential, candidate, unknown and volatile positions, its best
 * candidate (the first in position order among equals) and the latest start time among
 * its candidates. The counts double as prefix counts: a descent finds the k-th position of
 * a kind.
 *
 * Context: one thread at a time (the scheduling thread); queries neither allocate nor lock.
 */
#ifndef KSCHED_PREEMPT_TREE_H
#define KSCHED_PREEMPT_TREE_H

#include <stddef.h>
#include <stdint.h>

/* A rank's start when every victim lacks a start time: "now", later than any start. */
#define KS_PREEMPT_START_NOW INT64_MAX

/*
 * pickOneNodeForPreemption's criteria for a candidate without PDB violations, in order:
 * the lowest highest-victim priority, the smallest sum of victim priorities (each shifted
 * by 2^31), the fewest victims, the latest start of the highest-priority victims.
 */
struct ks_preempt_rank {
    int32_t top_priority;
    uint32_t nvictims;
    int64_t priority_sum;
    int64_t start; /* KS_PREEMPT_START_NOW: none of the victims has a start time */
};

enum ks_preempt_leaf {
    KS_PT_NOT_POTENTIAL,
    KS_PT_UNKNOWN,
    KS_PT_FAILED,
    KS_PT_CANDIDATE,
    KS_PT_VOLATILE,
};

#define KS_PT_NONE UINT32_MAX /* no position */

struct ks_preempt_tree_node {
    uint32_t npotential, ncandidates, nunknown, nvolatile;
    uint32_t best_pos; /* the best candidate (first among equals), KS_PT_NONE for none */
    struct ks_preempt_rank best;
    int64_t latest_start; /* the latest start other than "now" among the candidates, INT64_MIN for none */
};

struct ks_preempt_tree {
    uint32_t n;      /* positions */
    uint32_t leaves; /* the power of two >= n (1 when n is 0) */
    struct ks_preempt_tree_node *t;
};

/* ks_preempt_tree_init - @n positions, none potential. 0 or -ENOMEM (then @t holds nothing). */
int ks_preempt_tree_init(struct ks_preempt_tree *t, uint32_t n);

/* ks_preempt_tree_destroy - free @t's nodes. Accepts a zeroed or destroyed tree. */
void ks_preempt_tree_destroy(struct ks_preempt_tree *t);

/* ks_preempt_tree_bytes - what @t's nodes take. */
size_t ks_preempt_tree_bytes(const struct ks_preempt_tree *t);

/*
 * ks_preempt_tree_set - position @i (< n) is @kind (@rank read for a candidate only).
 * ks_preempt_tree_put / ks_preempt_tree_build - the same for many positions: put writes the
 * leaf alone, build then recomputes every inner node.
 */
void ks_preempt_tree_set(struct ks_preempt_tree *t, uint32_t i, enum ks_preempt_leaf kind,
                         const struct ks_preempt_rank *rank);
void ks_preempt_tree_put(struct ks_preempt_tree *t, uint32_t i, enum ks_preempt_leaf kind,
                         const struct ks_preempt_rank *rank);
void ks_preempt_tree_build(struct ks_preempt_tree *t);

/* ks_preempt_tree_potential - potential positions in all. */
uint32_t ks_preempt_tree_potential(const struct ks_preempt_tree *t);

/*
 * ks_preempt_tree_nth_potential - the @k-th (from 0, < potential positions) potential
 * position counted from position @from (< n) on, wrapping after n - 1.
 */
uint32_t ks_preempt_tree_nth_potential(const struct ks_preempt_tree *t, uint32_t from, uint32_t k);

/* The positions a dry run tries from a start (ks_preempt_tree_window). */
struct ks_preempt_window {
    uint32_t start;       /* the first position */
    uint32_t processed;   /* positions through the want-th candidate, or all n */
    uint32_t ncandidates; /* candidates among them */
    uint32_t nunknown;    /* unknown positions among them */
    uint32_t nvolatile;   /* volatile positions among them */
    uint32_t best_pos;    /* their best candidate, the first in window order among equals */
    struct ks_preempt_rank best;
    int64_t latest_start; /* the latest start other than "now" among their candidates */
};

/*
 * ks_preempt_tree_window - the positions from @start (< n) in order, wrapping after n - 1,
 * until @want (>= 1) candidates are taken or every position is: how many, what they hold,
 * and their best candidate. Unknown positions count as not candidates.
 */
void ks_preempt_tree_window(const struct ks_preempt_tree *t, uint32_t start, uint32_t want,
                            struct ks_preempt_window *w);

/* ks_preempt_tree_first_unknown - the first unknown position of @w in window order (w->nunknown > 0). */
uint32_t ks_preempt_tree_first_unknown(const struct ks_preempt_tree *t, const struct ks_preempt_window *w);

#endif
