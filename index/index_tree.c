/*
 * index_tree.c - the signature index's position tree (include/ksched/internal/index_tree.h): a
 * segment tree over node positions whose nodes hold (best total, ties, feasible count).
 *
 * The window it computes is the one engine/find_nodes.c evaluates, written as counts:
 * with F feasible positions before @start and A from @start on, the window ends at the
 * want-th feasible position from @start - the (F + want)-th overall when A >= want, else
 * the (want - A)-th after wrapping - found by descending on the feasible counts; with
 * fewer than want feasible positions in all, it is every position. Its best total and
 * ties combine the ranges [start, end) (and [0, wrapped end) after a wrap); every node of
 * a range holds at most the range's best, which is what lets the r-th tie be found by
 * counting ties down one path.
 */
#include "ksched/internal/index_tree.h"

#include <errno.h>
#include <stdlib.h>

static const struct ks_index_tree_node empty = {.best = KS_INDEX_NO_SCORE};

static struct ks_index_tree_node combine(struct ks_index_tree_node a, struct ks_index_tree_node b)
{
    struct ks_index_tree_node r;
    if (a.best == b.best) {
        r.best = a.best;
        r.ties = a.ties + b.ties;
    } else {
        r = a.best > b.best ? a : b;
    }
    r.nfeasible = a.nfeasible + b.nfeasible;
    r.npoison = a.npoison + b.npoison;
    return r;
}

int ks_index_tree_init(struct ks_index_tree *t, uint32_t n)
{
    *t = (struct ks_index_tree){0};
    if (n > UINT32_C(1) << 30)
        return -ENOMEM;
    uint32_t leaves = 1;
    while (leaves < n)
        leaves <<= 1;
    struct ks_index_tree_node *nodes = malloc(2 * (size_t)leaves * sizeof(*nodes));
    if (!nodes)
        return -ENOMEM;
    *t = (struct ks_index_tree){.n = n, .leaves = leaves, .t = nodes};
    ks_index_tree_clear(t);
    return 0;
}

void ks_index_tree_clear(struct ks_index_tree *t)
{
    if (!t->t)
        return;
    for (uint32_t i = 0; i < 2 * t->leaves; i++)
        t->t[i] = empty;
}

void ks_index_tree_destroy(struct ks_index_tree *t)
{
    free(t->t);
    *t = (struct ks_index_tree){0};
}

static struct ks_index_tree_node leaf(bool feasible, int32_t score, bool poison)
{
    struct ks_index_tree_node x =
        feasible ? (struct ks_index_tree_node){.best = score, .ties = 1, .nfeasible = 1} : empty;
    x.npoison = poison;
    return x;
}

static bool same(struct ks_index_tree_node a, struct ks_index_tree_node b)
{
    return a.best == b.best && a.ties == b.ties && a.nfeasible == b.nfeasible && a.npoison == b.npoison;
}

/*
 * An ancestor whose summary comes out unchanged leaves every ancestor above it unchanged:
 * the walk stops there (a node that stays infeasible for the class costs one comparison).
 */
void ks_index_tree_set(struct ks_index_tree *t, uint32_t i, bool feasible, int32_t score, bool poison)
{
    uint32_t v = t->leaves + i;
    struct ks_index_tree_node x = leaf(feasible, score, poison);
    if (same(t->t[v], x))
        return;
    t->t[v] = x;
    for (v >>= 1; v; v >>= 1) {
        x = combine(t->t[2 * v], t->t[2 * v + 1]);
        if (same(t->t[v], x))
            return;
        t->t[v] = x;
    }
}

void ks_index_tree_put(struct ks_index_tree *t, uint32_t i, bool feasible, int32_t score, bool poison)
{
    t->t[t->leaves + i] = leaf(feasible, score, poison);
}

void ks_index_tree_build(struct ks_index_tree *t)
{
    for (uint32_t v = t->leaves - 1; v >= 1; v--)
        t->t[v] = combine(t->t[2 * v], t->t[2 * v + 1]);
}

uint32_t ks_index_tree_feasible(const struct ks_index_tree *t)
{
    return t->t ? t->t[1].nfeasible : 0;
}

/* Positions [l, r) combined. */
static struct ks_index_tree_node range(const struct ks_index_tree *t, uint32_t l, uint32_t r)
{
    if (!t->t)
        return empty;
    struct ks_index_tree_node acc = empty;
    for (l += t->leaves, r += t->leaves; l < r; l >>= 1, r >>= 1) {
        if (l & 1)
            acc = combine(acc, t->t[l++]);
        if (r & 1)
            acc = combine(acc, t->t[--r]);
    }
    return acc;
}

/* The position of the @k-th (from 1, k <= feasible positions) feasible position. */
static uint32_t kth_feasible(const struct ks_index_tree *t, uint32_t k)
{
    uint32_t v = 1;
    while (v < t->leaves) {
        uint32_t left = t->t[2 * v].nfeasible;
        if (k <= left) {
            v = 2 * v;
        } else {
            k -= left;
            v = 2 * v + 1;
        }
    }
    return v - t->leaves;
}

void ks_index_tree_window(const struct ks_index_tree *t, uint32_t start, uint32_t want,
                          struct ks_index_window *w)
{
    uint32_t n = t->n, total = ks_index_tree_feasible(t);
    *w = (struct ks_index_window){.best = KS_INDEX_NO_SCORE};
    if (n == 0)
        return;
    w->start = start;
    if (total < want) {
        w->processed = n;
        w->nfeasible = total;
    } else {
        uint32_t before = range(t, 0, start).nfeasible, from_start = total - before;
        uint32_t last =
            from_start >= want ? kth_feasible(t, before + want) : kth_feasible(t, want - from_start);
        w->processed = last >= start ? last - start + 1 : n - start + last + 1;
        w->nfeasible = want;
    }
    uint32_t end = start + w->processed;
    struct ks_index_tree_node a = range(t, start, end < n ? end : n);
    if (end > n)
        a = combine(a, range(t, 0, end - n));
    w->best = a.best;
    w->ties = a.ties;
    w->npoison = a.npoison;
}

/*
 * The @k-th (from 0, counted down as ties pass) position of [l, r) with total @best, in
 * node @v covering [lo, hi); UINT32_MAX when it is not in there. No position of [l, r)
 * has a total above @best.
 */
static uint32_t nth_tie(const struct ks_index_tree *t, uint32_t v, uint32_t lo, uint32_t hi, uint32_t l,
                        uint32_t r, int32_t best, uint32_t *k)
{
    const struct ks_index_tree_node *x = &t->t[v];
    if (hi <= l || r <= lo || x->best < best)
        return UINT32_MAX;
    if (l <= lo && hi <= r) { /* inside: its best is @best, and each child's is at most that */
        if (*k >= x->ties) {
            *k -= x->ties;
            return UINT32_MAX;
        }
        while (v < t->leaves) {
            const struct ks_index_tree_node *left = &t->t[2 * v];
            uint32_t ties = left->best == best ? left->ties : 0;
            if (*k < ties) {
                v = 2 * v;
            } else {
                *k -= ties;
                v = 2 * v + 1;
            }
        }
        return v - t->leaves;
    }
    uint32_t mid = lo + (hi - lo) / 2;
    uint32_t p = nth_tie(t, 2 * v, lo, mid, l, r, best, k);
    return p != UINT32_MAX ? p : nth_tie(t, 2 * v + 1, mid, hi, l, r, best, k);
}

uint32_t ks_index_tree_tie(const struct ks_index_tree *t, const struct ks_index_window *w, uint32_t r)
{
    uint32_t n = t->n, end = w->start + w->processed, first_end = end < n ? end : n;
    struct ks_index_tree_node a = range(t, w->start, first_end);
    uint32_t first = a.best == w->best ? a.ties : 0;
    if (r < first)
        return nth_tie(t, 1, 0, t->leaves, w->start, first_end, w->best, &r);
    r -= first;
    return nth_tie(t, 1, 0, t->leaves, 0, end - n, w->best, &r);
}

struct ks_index_tree_node ks_index_tree_range(const struct ks_index_tree *t, uint32_t l, uint32_t r)
{
    return range(t, l, r);
}

uint32_t ks_index_tree_nth(const struct ks_index_tree *t, uint32_t l, uint32_t r, int32_t best, uint32_t k)
{
    if (l >= r || !t->t)
        return UINT32_MAX;
    return nth_tie(t, 1, 0, t->leaves, l, r, best, &k);
}
