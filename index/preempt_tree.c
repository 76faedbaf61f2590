/*
 * preempt_tree.c - the candidate tree (include/ksched/internal/preempt_tree.h): a segment tree over
 * node positions whose nodes hold counts by kind and the best candidate of their range.
 *
 * The window is written as counts, as the position tree's is (index_tree.c): with C
 * candidates before @start and A from @start on, it ends at the want-th candidate from
 * @start - the (C + want)-th overall when A >= want, else the (want - A)-th after wrapping -
 * found by descending on the candidate counts. Its summary combines [start, end) with
 * [0, wrapped end), the first range winning ties, as a left child wins them over a right.
 */
#include "ksched/internal/preempt_tree.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

static const struct ks_preempt_tree_node empty = {.best_pos = KS_PT_NONE, .latest_start = INT64_MIN};

/* Whether @a ranks before @b (strictly) in pickOneNodeForPreemption's order. */
static bool better(const struct ks_preempt_rank *a, const struct ks_preempt_rank *b)
{
    if (a->top_priority != b->top_priority)
        return a->top_priority < b->top_priority;
    if (a->priority_sum != b->priority_sum)
        return a->priority_sum < b->priority_sum;
    if (a->nvictims != b->nvictims)
        return a->nvictims < b->nvictims;
    return a->start > b->start;
}

/* @a's range, then @b's: @a's best stands unless @b's is strictly better. */
static struct ks_preempt_tree_node combine(const struct ks_preempt_tree_node *a,
                                           const struct ks_preempt_tree_node *b)
{
    struct ks_preempt_tree_node r = *a;
    if (b->best_pos != KS_PT_NONE && (a->best_pos == KS_PT_NONE || better(&b->best, &a->best))) {
        r.best_pos = b->best_pos;
        r.best = b->best;
    }
    r.npotential += b->npotential;
    r.ncandidates += b->ncandidates;
    r.nunknown += b->nunknown;
    r.nvolatile += b->nvolatile;
    if (b->latest_start > r.latest_start)
        r.latest_start = b->latest_start;
    return r;
}

int ks_preempt_tree_init(struct ks_preempt_tree *t, uint32_t n)
{
    *t = (struct ks_preempt_tree){0};
    if (n > UINT32_C(1) << 30)
        return -ENOMEM;
    uint32_t leaves = 1;
    while (leaves < n)
        leaves <<= 1;
    struct ks_preempt_tree_node *nodes = malloc(2 * (size_t)leaves * sizeof(*nodes));
    if (!nodes)
        return -ENOMEM;
    for (uint32_t i = 0; i < 2 * leaves; i++)
        nodes[i] = empty;
    *t = (struct ks_preempt_tree){.n = n, .leaves = leaves, .t = nodes};
    return 0;
}

void ks_preempt_tree_destroy(struct ks_preempt_tree *t)
{
    free(t->t);
    *t = (struct ks_preempt_tree){0};
}

size_t ks_preempt_tree_bytes(const struct ks_preempt_tree *t)
{
    return t->t ? 2 * (size_t)t->leaves * sizeof(*t->t) : 0;
}

static struct ks_preempt_tree_node leaf(uint32_t i, enum ks_preempt_leaf kind,
                                        const struct ks_preempt_rank *rank)
{
    struct ks_preempt_tree_node x = empty;
    x.npotential = kind != KS_PT_NOT_POTENTIAL;
    x.nunknown = kind == KS_PT_UNKNOWN;
    x.nvolatile = kind == KS_PT_VOLATILE;
    if (kind == KS_PT_CANDIDATE) {
        x.ncandidates = 1;
        x.best_pos = i;
        x.best = *rank;
        if (rank->start != KS_PREEMPT_START_NOW)
            x.latest_start = rank->start;
    }
    return x;
}

void ks_preempt_tree_put(struct ks_preempt_tree *t, uint32_t i, enum ks_preempt_leaf kind,
                         const struct ks_preempt_rank *rank)
{
    t->t[t->leaves + i] = leaf(i, kind, rank);
}

void ks_preempt_tree_build(struct ks_preempt_tree *t)
{
    for (uint32_t v = t->leaves - 1; v >= 1; v--)
        t->t[v] = combine(&t->t[2 * v], &t->t[2 * v + 1]);
}

void ks_preempt_tree_set(struct ks_preempt_tree *t, uint32_t i, enum ks_preempt_leaf kind,
                         const struct ks_preempt_rank *rank)
{
    uint32_t v = t->leaves + i;
    t->t[v] = leaf(i, kind, rank);
    for (v >>= 1; v; v >>= 1)
        t->t[v] = combine(&t->t[2 * v], &t->t[2 * v + 1]);
}

uint32_t ks_preempt_tree_potential(const struct ks_preempt_tree *t)
{
    return t->t ? t->t[1].npotential : 0;
}

/* Positions [l, r) combined, in order. */
static struct ks_preempt_tree_node range(const struct ks_preempt_tree *t, uint32_t l, uint32_t r)
{
    struct ks_preempt_tree_node left = empty, right = empty;
    for (l += t->leaves, r += t->leaves; l < r; l >>= 1, r >>= 1) {
        if (l & 1)
            left = combine(&left, &t->t[l++]);
        if (r & 1)
            right = combine(&t->t[--r], &right);
    }
    return combine(&left, &right);
}

enum count { POTENTIAL, CANDIDATES, UNKNOWN };

static uint32_t count_of(const struct ks_preempt_tree_node *x, enum count c)
{
    return c == POTENTIAL ? x->npotential : c == CANDIDATES ? x->ncandidates : x->nunknown;
}

/* The position of the @k-th (from 0, < the root's count) position counted by @c. */
static uint32_t kth(const struct ks_preempt_tree *t, enum count c, uint32_t k)
{
    uint32_t v = 1;
    while (v < t->leaves) {
        uint32_t left = count_of(&t->t[2 * v], c);
        if (k < left) {
            v = 2 * v;
        } else {
            k -= left;
            v = 2 * v + 1;
        }
    }
    return v - t->leaves;
}

/* The @k-th (from 0) position counted by @c from @from on, wrapping; the root holds more than @k. */
static uint32_t kth_from(const struct ks_preempt_tree *t, enum count c, uint32_t from, uint32_t k)
{
    struct ks_preempt_tree_node head = range(t, 0, from);
    uint32_t before = count_of(&head, c);
    uint32_t total = count_of(&t->t[1], c);
    return kth(t, c, (uint32_t)(((uint64_t)before + k) % total));
}

uint32_t ks_preempt_tree_nth_potential(const struct ks_preempt_tree *t, uint32_t from, uint32_t k)
{
    return kth_from(t, POTENTIAL, from, k);
}

void ks_preempt_tree_window(const struct ks_preempt_tree *t, uint32_t start, uint32_t want,
                            struct ks_preempt_window *w)
{
    uint32_t n = t->n;
    *w = (struct ks_preempt_window){.best_pos = KS_PT_NONE, .latest_start = INT64_MIN};
    if (n == 0)
        return;
    w->start = start;
    if (t->t[1].ncandidates < want) {
        w->processed = n;
    } else {
        uint32_t last = kth_from(t, CANDIDATES, start, want - 1);
        w->processed = last >= start ? last - start + 1 : n - start + last + 1;
    }
    uint32_t end = start + w->processed;
    struct ks_preempt_tree_node a = range(t, start, end < n ? end : n);
    if (end > n) {
        struct ks_preempt_tree_node b = range(t, 0, end - n);
        a = combine(&a, &b);
    }
    w->ncandidates = a.ncandidates;
    w->nunknown = a.nunknown;
    w->nvolatile = a.nvolatile;
    w->best_pos = a.best_pos;
    w->best = a.best;
    w->latest_start = a.latest_start;
}

uint32_t ks_preempt_tree_first_unknown(const struct ks_preempt_tree *t, const struct ks_preempt_window *w)
{
    return kth_from(t, UNKNOWN, w->start, 0);
}
