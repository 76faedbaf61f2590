/*
 * index_tree.h - the position tree of the signature index: for one class of pods (pods
 * the scheduler cannot tell apart), per node position in the snapshot's order, whether
 * the node is feasible and the total of the scores that need no normalisation. It
 * answers what one scheduling cycle asks of a class in O(log n):
 *   - the window upstream's findNodesThatFitPod evaluates from nextStartNodeIndex until it
 *     holds numFeasibleNodesToFind feasible nodes (wrapping around), and the processed
 *     node count that moves the next start;
 *   - the best total in that window and how many of its nodes tie for it;
 *   - the r-th of those ties in window order (selectHost's draw).
 *
 * One segment tree of 2 x leaves nodes (leaves: the power of two >= n), each holding its
 * range's feasible count, best total and ties; an update rewrites one leaf and its
 * ancestors. The feasible counts double as the Fenwick-style prefix counts the window
 * needs (a descent finds the k-th feasible position).
 *
 * Context: any thread; the caller serialises updates with each other and with queries.
 * Queries neither allocate nor lock.
 */
#ifndef KSCHED_INDEX_TREE_H
#define KSCHED_INDEX_TREE_H

#include <stdbool.h>
#include <stdint.h>

/* No feasible node in a range (below every total a feasible node can have). */
#define KS_INDEX_NO_SCORE INT32_MIN

struct ks_index_tree_node {
    int32_t best;       /* the range's best total among its feasible positions, or KS_INDEX_NO_SCORE */
    uint32_t ties;      /* feasible positions of the range with that total */
    uint32_t nfeasible; /* feasible positions of the range */
    uint32_t npoison;   /* positions of the range marked poisoned (feasible or not) */
};

struct ks_index_tree {
    uint32_t n;                   /* positions */
    uint32_t leaves;              /* the power of two >= n (1 when n is 0) */
    struct ks_index_tree_node *t; /* t[1] the root, t[leaves + i] position i */
};

/* ks_index_tree_init - @n positions, none feasible. 0 or -ENOMEM (then @t holds nothing). */
int ks_index_tree_init(struct ks_index_tree *t, uint32_t n);

/* ks_index_tree_clear - every position not feasible again (same size, nothing allocated). */
void ks_index_tree_clear(struct ks_index_tree *t);

/* ks_index_tree_destroy - free @t's nodes. Accepts a zeroed or destroyed tree. */
void ks_index_tree_destroy(struct ks_index_tree *t);

/*
 * ks_index_tree_set - position @i (< n) is feasible with total @score (>= 0), or not
 * feasible; @poison marks a position whose entry the caller cannot vouch for (a window
 * that holds one is not to be answered from the tree).
 */
void ks_index_tree_set(struct ks_index_tree *t, uint32_t i, bool feasible, int32_t score, bool poison);

/*
 * ks_index_tree_put / ks_index_tree_build - the same for many positions: put writes
 * position @i alone, build then recomputes every inner node (O(n) for a whole rebuild).
 * Queries in between see stale ranges.
 */
void ks_index_tree_put(struct ks_index_tree *t, uint32_t i, bool feasible, int32_t score, bool poison);
void ks_index_tree_build(struct ks_index_tree *t);

/* ks_index_tree_feasible - feasible positions in all. */
uint32_t ks_index_tree_feasible(const struct ks_index_tree *t);

/* What one cycle evaluates from a start position (ks_index_tree_window). */
struct ks_index_window {
    uint32_t start;     /* the first position evaluated */
    uint32_t processed; /* positions evaluated: through the last feasible one taken, or all n */
    uint32_t nfeasible; /* feasible positions taken: min(want, feasible positions) */
    int32_t best;       /* their best total, KS_INDEX_NO_SCORE when none */
    uint32_t ties;      /* how many of them have it */
    uint32_t npoison;   /* poisoned positions among the processed ones */
};

/*
 * ks_index_tree_window - the positions evaluated from @start (< n, or any value when n is
 * 0) in order, wrapping after n - 1, until @want (>= 1) feasible ones are taken or every
 * position was evaluated: how many, and the best total among the feasible ones.
 */
void ks_index_tree_window(const struct ks_index_tree *t, uint32_t start, uint32_t want,
                          struct ks_index_window *w);

/* ks_index_tree_tie - the position of tie @r (< w->ties) of window @w, counted in window order. */
uint32_t ks_index_tree_tie(const struct ks_index_tree *t, const struct ks_index_window *w, uint32_t r);

/* ks_index_tree_range - positions [@l, @r) (l <= r <= n) combined: their best, ties, counts. */
struct ks_index_tree_node ks_index_tree_range(const struct ks_index_tree *t, uint32_t l, uint32_t r);

/*
 * ks_index_tree_nth - the position of the @k-th (from 0) position of [@l, @r) with total
 * @best, which no position of the range exceeds; UINT32_MAX when fewer than k + 1 have it.
 */
uint32_t ks_index_tree_nth(const struct ks_index_tree *t, uint32_t l, uint32_t r, int32_t best, uint32_t k);

#endif
