/*
 * index.h - the signature index: per class of pods the scheduler cannot tell apart (one
 * profile, one signature - ksched/sign.h - and the same PreFilter/PreScore skips), a
 * position tree (index_tree.h) over the snapshot's nodes holding whether each node is
 * feasible for the class and its total of the scores that need no normalisation.
 *
 * The index keeps the trees current without re-evaluating the cluster: it follows every
 * snapshot version (ks_index_observe) and logs the positions whose record changed; a
 * class, when next used, re-evaluates only the positions logged since it last was
 * (ks_index_pending), or every position when the node order changed, a version was
 * missed, or so much changed that a rebuild costs less. The evaluation itself (running
 * the profile's Filter and Score for one pod of the class) is the caller's
 * (engine/index_path.c): the index only stores and answers.
 *
 * A class whose pods preempt also gets a candidate tree (preempt_tree.h): per position,
 * DefaultPreemption's verdict for the class, kept against the same change log with its own
 * cursor (ks_index_preempt_pending) and given up with the class's tree.
 *
 * Classes are created on first sight, without a tree; the tree is built on the second
 * pod of the class, so pods that share their signature with no other pod cost a lookup
 * and nothing more. The classes with trees are bounded by memory (KS_INDEX_TREE_BUDGET),
 * the least recently used giving its tree up first; classes without trees are bounded
 * in number, the oldest forgotten first.
 *
 * Ownership: the index owns its classes (one array), their keys and trees. Context: one thread (the
 * scheduling thread), inside the RCU read section holding the snapshot it is given;
 * nothing here locks.
 */
#ifndef KSCHED_INDEX_H
#define KSCHED_INDEX_H

#include <stdbool.h>
#include <stdint.h>

#include "ksched/cache_types.h"
#include "ksched/internal/index_parts.h"
#include "ksched/internal/index_tree.h"
#include "ksched/internal/preempt_tree.h"
#include "ksched/status_types.h"

/* Bytes of position trees the index keeps at most (every class's tree together). */
#define KS_INDEX_TREE_BUDGET (32u << 20)

struct ks_index;

/*
 * The longest key a class holds (signature and skip masks); a longer one is not indexed.
 * Classes live in one array made with the index, so meeting a new class allocates nothing.
 */
#define KS_INDEX_KEY_MAX 512

/*
 * What a class's tree knows of the positions no pod of the class fits: each one's Filter
 * status, kept as one of a few distinct statuses (groups) with the count of positions
 * holding it, so that a cycle no node fits reads its FitError's histogram and its
 * candidates for preemption without filtering a node. Feasible and poisoned positions
 * belong to no group. Allocated with the tree; emptied when the tree is rebuilt.
 */
#define KS_INDEX_GROUPS   16
#define KS_INDEX_NO_GROUP UINT16_MAX
struct ks_index_groups {
    uint32_t n;   /* groups in use (a group whose count fell to 0 stays) */
    bool full;    /* a status found no group: the class answers no cycle without a feasible node */
    uint16_t *of; /* per position: its group, KS_INDEX_NO_GROUP for none */
    uint32_t count[KS_INDEX_GROUPS];
    struct ks_status status[KS_INDEX_GROUPS];
};

struct ks_index_class {
    struct ks_index_tree tree;     /* t NULL: not built (or given up) */
    struct ks_index_groups groups; /* of NULL with the tree */
    /* DefaultPreemption's verdicts for the class (preempt_tree.h): t NULL until a pod of it preempts */
    struct ks_preempt_tree preempt;
    /* the positions split by a spread constraint's key (index_parts.h): built on the first cycle that needs
     * it */
    struct ks_index_parts parts;
    uint64_t preempt_epoch, preempt_seq; /* what the candidate tree reflects, as epoch and seq */
    uint64_t epoch;                      /* the index's epoch the tree was built in */
    uint64_t seq;                        /* the change log's sequence the tree reflects */
    uint64_t used;                       /* the index's clock when last looked up */
    uint32_t sightings;                  /* lookups since created */
    uint32_t misses;                     /* cycles in a row the tree could not answer (ks_index_outcome) */
    uint32_t resting;                    /* lookups left before the class is tried again after many misses */
    struct ks_index_class *next;         /* hash chain */
    uint64_t hash;
    const void *owner; /* the profile's framework */
    uint32_t keylen;
    uint8_t key[KS_INDEX_KEY_MAX]; /* signature, then the skip masks */
};

/* ks_index_create - an empty index. 0 or -ENOMEM. */
int ks_index_create(struct ks_index **out);

/* ks_index_destroy - free the index and every class. Accepts NULL. */
void ks_index_destroy(struct ks_index *ix);

/*
 * ks_index_observe - @snap is the version the cycle reads: log the positions it changed
 * since the version observed before, or, when it does not follow that version with the
 * same node order, start a new epoch (every tree is rebuilt on its next use).
 */
void ks_index_observe(struct ks_index *ix, const struct ks_snapshot *snap);

/*
 * ks_index_touch - position @pos (< the observed version's node count) changed for another
 * reason than its record (pods nominated to its node): its entries are evaluated again,
 * as if its record had changed. ks_index_touch_all: every position.
 */
void ks_index_touch(struct ks_index *ix, uint32_t pos);
void ks_index_touch_all(struct ks_index *ix);

/*
 * ks_index_lookup - the class of (@owner non-NULL, @key of @len bytes), made when unknown
 * (in the slot of the oldest class when all are taken); NULL when @len exceeds
 * KS_INDEX_KEY_MAX. Counts a sighting; a class seen once is not worth a tree yet
 * (ks_index_worth_tree). Allocation-free.
 */
struct ks_index_class *ks_index_lookup(struct ks_index *ix, const void *owner, const void *key, uint32_t len);

/*
 * ks_index_worth_tree - whether @c has been seen often enough to build (or keep) its tree,
 * and is not resting: a class whose tree failed to answer KS_INDEX_MISSES cycles in a row
 * (poisoned windows, no feasible node) sits out its next KS_INDEX_REST lookups, so a class
 * the index cannot serve costs its cycles little.
 */
#define KS_INDEX_MISSES 4
#define KS_INDEX_REST   64
bool ks_index_worth_tree(struct ks_index_class *c);

/* ks_index_outcome - whether @c's tree answered the cycle it was consulted for. */
void ks_index_outcome(struct ks_index_class *c, bool answered);

/*
 * ks_index_pending - what @c's tree needs to reflect the last observed version over @n
 * positions. Returns KS_INDEX_REBUILD when every position must be evaluated (the tree
 * then has @n positions, all infeasible and in no group, and is the caller's to fill with
 * ks_index_tree_put + ks_index_tree_build and ks_index_status); else the number of
 * positions to re-evaluate (ks_index_tree_set and ks_index_status each), listed once each in *@positions
 * (valid until the next call). -ENOMEM (as a negative int64) when a tree could not be allocated. The caller
 * then calls ks_index_synced.
 */
#define KS_INDEX_REBUILD INT64_MAX
int64_t ks_index_pending(struct ks_index *ix, struct ks_index_class *c, uint32_t n,
                         const uint32_t **positions);

/*
 * ks_index_preempt_pending - the same for @c's candidate tree (made on first use, with
 * @n positions all not potential, and given up with the class's tree), which must then
 * reflect the version the class's tree does: KS_INDEX_REBUILD (every position to set
 * again), or the positions changed since it last did in *@positions. The candidate tree
 * counts as synced once this returns; the caller sets the positions before reading it.
 * -ENOMEM when the tree could not be allocated.
 */
int64_t ks_index_preempt_pending(struct ks_index *ix, struct ks_index_class *c, uint32_t n,
                                 const uint32_t **positions);

/*
 * ks_index_status - position @pos (< the tree's n) of @c now has Filter status @st, or,
 * with @st NULL, none (feasible, or poisoned). Equal statuses (code, plugin, reasons)
 * share a group. Allocation-free.
 */
void ks_index_status(struct ks_index_class *c, uint32_t pos, const struct ks_status *st);

/*
 * ks_index_unschedulable_plugins - the plugins (bit per profile slot) that rejected some
 * position of @c.
 */
uint64_t ks_index_unschedulable_plugins(const struct ks_index_class *c);

/*
 * ks_index_split - split @c's positions by label @key over @snap (index_parts.h) from
 * @c's tree as it stands (current, over @snap's positions), counted in the trees' budget;
 * the split is given up with the tree, and a rebuild of the tree marks it not built.
 * 0, -E2BIG (too many values: @c is not split) or -ENOMEM.
 */
int ks_index_split(struct ks_index *ix, struct ks_index_class *c, uint32_t key,
                   const struct ks_snapshot *snap);

/* ks_index_current - whether @c's tree reflects the last observed version over @n positions. */
bool ks_index_current(const struct ks_index *ix, const struct ks_index_class *c, uint32_t n);

/* ks_index_synced - @c's tree now reflects the last observed version. */
void ks_index_synced(struct ks_index *ix, struct ks_index_class *c);

/* ks_index_drop - forget @c's tree (its entries could not be evaluated); the class stays. */
void ks_index_drop(struct ks_index *ix, struct ks_index_class *c);

/* Introspection (tests, metrics): classes known, and those holding a tree. */
void ks_index_counts(const struct ks_index *ix, uint32_t *classes, uint32_t *trees);

#endif
