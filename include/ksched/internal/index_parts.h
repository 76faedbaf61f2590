/*
 * index_parts.h - a class's positions split by the value of one node label (its
 * partitions: the topology domains of a spread constraint's key), with a second position
 * tree whose leaves run partition by partition, each partition's positions in snapshot
 * order. It answers, for a window of the class's main tree (index_tree.h), each
 * partition's best total, ties and feasible count inside the window, and the r-th
 * position, in window order, among the positions whose total is a target set per
 * partition: what a score that adds one amount per domain to the tree's totals needs to
 * pick a host as the per-node path would (engine/index_spread.c).
 *
 * The partition tree mirrors the main tree leaf for leaf: the caller sets both
 * (ks_index_parts_set after ks_index_tree_set), or builds it from the main tree
 * (ks_index_parts_build). A node whose label value moved to another partition, or a
 * value no partition holds, makes the partitions stale (ks_index_parts_follows): they are
 * built again, from the snapshot's labels and the main tree, without evaluating a plugin.
 *
 * Ownership: the class owns its partitions (the arrays and the tree, freed by
 * ks_index_parts_destroy). Context: the scheduling thread, inside the RCU read section
 * holding the snapshot it is given; queries neither allocate nor lock.
 */
#ifndef KSCHED_INDEX_PARTS_H
#define KSCHED_INDEX_PARTS_H

#include <stdbool.h>
#include <stdint.h>

#include "ksched/cache_types.h"
#include "ksched/internal/index_tree.h"

/* Distinct values a class splits its positions into at most (more: the class is not split). */
#define KS_INDEX_PARTS_MAX 64

/* The partition of the nodes that lack the label (its value reads as "" to a counter). */
#define KS_INDEX_PART_ABSENT UINT32_MAX

struct ks_index_parts {
    uint32_t key;                         /* the label (interned); KS_ID_NONE: not split */
    uint32_t n;                           /* positions */
    uint32_t nparts;                      /* partitions in use */
    bool built;                           /* the arrays and the tree stand for the main tree's positions */
    uint32_t value[KS_INDEX_PARTS_MAX];   /* per partition: the label's value, or KS_INDEX_PART_ABSENT */
    uint32_t off[KS_INDEX_PARTS_MAX + 1]; /* partition p's leaves are [off[p], off[p + 1]) */
    uint8_t *part;                        /* [n] per position: its partition */
    uint32_t *leaf;                       /* [n] per position: its leaf in @tree */
    uint32_t *pos;                        /* [n] per leaf: its position */
    struct ks_index_tree tree;            /* leaves in partition order */
};

/* ks_index_parts_bytes - what @p holds on the heap. */
size_t ks_index_parts_bytes(const struct ks_index_parts *p);

/* ks_index_parts_destroy - free what @p holds; it is then empty (not split). Accepts an empty one. */
void ks_index_parts_destroy(struct ks_index_parts *p);

/*
 * ks_index_parts_build - split @snap's positions (as many as @main has) by label @key and
 * copy @main's leaves into the partition tree. 0; -E2BIG when the label has more than
 * KS_INDEX_PARTS_MAX values; -ENOMEM. On failure @p is left empty.
 */
int ks_index_parts_build(struct ks_index_parts *p, uint32_t key, const struct ks_snapshot *snap,
                         const struct ks_index_tree *main);

/* ks_index_parts_value_of - @node's partition value for @key: its label value, or KS_INDEX_PART_ABSENT. */
uint32_t ks_index_parts_value_of(const struct ks_node_snap *node, uint32_t key);

/*
 * ks_index_parts_follows - whether position @pos (< n) still belongs where @p put it, now
 * that it holds @node; when not, @p is marked not built.
 */
bool ks_index_parts_follows(struct ks_index_parts *p, uint32_t pos, const struct ks_node_snap *node);

/* ks_index_parts_set - position @pos's entry, as ks_index_tree_set gave it to the main tree. */
void ks_index_parts_set(struct ks_index_parts *p, uint32_t pos, bool feasible, int32_t score, bool poison);

/*
 * ks_index_parts_hide - take position @pos out of the partition tree (not feasible) for
 * the queries that follow, or, with @hide false, give it back its entry in @main.
 */
void ks_index_parts_hide(struct ks_index_parts *p, uint32_t pos, bool hide, const struct ks_index_tree *main);

/*
 * ks_index_parts_window - per partition, what window @w of the main tree holds of it
 * (best total, ties, feasible count, poisoned count), into @out[nparts].
 */
void ks_index_parts_window(const struct ks_index_parts *p, const struct ks_index_window *w,
                           struct ks_index_tree_node *out);

/*
 * How many of the first positions of window @w have the total @target[their partition]
 * (targets as for ks_index_parts_tie), for many lengths of one window and one set of
 * targets: prepared once
 * (ks_index_parts_count_init: each targeted partition's first leaf in the window, and its
 * targets up to the end of the snapshot when the window wraps), then one leaf search and
 * one range query per targeted partition and length. Valid while @p and @w are.
 */
struct ks_index_parts_cursor {
    uint32_t k;     /* the partition */
    int32_t target; /* its target total */
    uint32_t first; /* its first leaf at or after the window's start */
    uint32_t rest;  /* after a wrap: its targets from first to its last leaf */
};
struct ks_index_parts_count {
    const struct ks_index_parts *p;
    const struct ks_index_window *w;
    uint32_t n;
    struct ks_index_parts_cursor c[KS_INDEX_PARTS_MAX];
};
void ks_index_parts_count_init(struct ks_index_parts_count *q, const struct ks_index_parts *p,
                               const struct ks_index_window *w, const int32_t *target);
uint32_t ks_index_parts_count_before(const struct ks_index_parts_count *q, uint32_t len);

/*
 * ks_index_parts_tie - the position of the @r-th (from 0), in window order, of window @w's
 * positions whose total is @target[their partition] (KS_INDEX_NO_SCORE: none of the
 * partition counts). Each target must be its partition's best in the window (or
 * KS_INDEX_NO_SCORE), and there must be more than @r such positions.
 */
uint32_t ks_index_parts_tie(const struct ks_index_parts *p, const struct ks_index_window *w,
                            const int32_t *target, uint32_t r);

#endif
