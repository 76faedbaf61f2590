/*
 * index_parts.c - a class's positions split by one label's value, with a tree over them
 * partition by partition (include/ksched/internal/index_parts.h).
 *
 * A window of the main tree is one or two position ranges ([start, n) and [0, end - n)
 * after a wrap); a partition's positions are sorted, so each range is one leaf range of
 * the partition, found by two binary searches. The r-th target position in window order
 * is found by a binary search over the window's length: the targets before an offset are
 * a sum over the partitions of one range query each.
 */
#include "ksched/internal/index_parts.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"

#include <errno.h>
#include <stdlib.h>

size_t ks_index_parts_bytes(const struct ks_index_parts *p)
{
    if (!p->tree.t)
        return 0;
    return (size_t)p->n * (sizeof(*p->part) + sizeof(*p->leaf) + sizeof(*p->pos)) +
           2 * (size_t)p->tree.leaves * sizeof(*p->tree.t);
}

void ks_index_parts_destroy(struct ks_index_parts *p)
{
    free(p->part);
    free(p->leaf);
    free(p->pos);
    ks_index_tree_destroy(&p->tree);
    *p = (struct ks_index_parts){.key = KS_ID_NONE};
}

uint32_t ks_index_parts_value_of(const struct ks_node_snap *node, uint32_t key)
{
    uint32_t v;
    if (!node->node || !ks_labels_get(&node->node->meta.labels, key, &v))
        return KS_INDEX_PART_ABSENT;
    return v;
}

/* The partition holding @value, a new one when none does; -1 when all are taken. */
static int part_for(struct ks_index_parts *p, uint32_t value)
{
    for (uint32_t i = 0; i < p->nparts; i++) {
        if (p->value[i] == value)
            return (int)i;
    }
    if (p->nparts == KS_INDEX_PARTS_MAX)
        return -1;
    p->value[p->nparts] = value;
    return (int)p->nparts++;
}

int ks_index_parts_build(struct ks_index_parts *p, uint32_t key, const struct ks_snapshot *snap,
                         const struct ks_index_tree *main)
{
    uint32_t n = main->n;
    if (!p->tree.t || p->n != n) {
        ks_index_parts_destroy(p);
        p->part = malloc((n ? n : 1) * sizeof(*p->part));
        p->leaf = malloc((n ? n : 1) * sizeof(*p->leaf));
        p->pos = malloc((n ? n : 1) * sizeof(*p->pos));
        if (!p->part || !p->leaf || !p->pos || ks_index_tree_init(&p->tree, n) < 0) {
            ks_index_parts_destroy(p);
            return -ENOMEM;
        }
        p->n = n;
    }
    p->key = key;
    p->nparts = 0;
    p->built = false;
    uint32_t count[KS_INDEX_PARTS_MAX] = {0};
    for (uint32_t i = 0; i < n; i++) {
        int k = part_for(p, ks_index_parts_value_of(ks_snapshot_node(snap, i), key));
        if (k < 0) {
            ks_index_parts_destroy(p);
            return -E2BIG;
        }
        p->part[i] = (uint8_t)k;
        count[k]++;
    }
    p->off[0] = 0;
    for (uint32_t k = 0; k < p->nparts; k++)
        p->off[k + 1] = p->off[k] + count[k];
    uint32_t next[KS_INDEX_PARTS_MAX];
    for (uint32_t k = 0; k < p->nparts; k++)
        next[k] = p->off[k];
    for (uint32_t i = 0; i < n; i++) {
        uint32_t l = next[p->part[i]]++;
        p->leaf[i] = l;
        p->pos[l] = i;
        struct ks_index_tree_node x = main->t[main->leaves + i];
        ks_index_tree_put(&p->tree, l, x.nfeasible != 0, x.best, x.npoison != 0);
    }
    ks_index_tree_build(&p->tree);
    p->built = true;
    return 0;
}

bool ks_index_parts_follows(struct ks_index_parts *p, uint32_t pos, const struct ks_node_snap *node)
{
    if (!p->built)
        return false;
    if (p->value[p->part[pos]] == ks_index_parts_value_of(node, p->key))
        return true;
    p->built = false;
    return false;
}

void ks_index_parts_set(struct ks_index_parts *p, uint32_t pos, bool feasible, int32_t score, bool poison)
{
    if (p->built)
        ks_index_tree_set(&p->tree, p->leaf[pos], feasible, score, poison);
}

/* The first leaf of [@lo, @hi) (leaves of one partition) whose position is at least @at, else @hi. */
static uint32_t leaf_at(const struct ks_index_parts *p, uint32_t lo, uint32_t hi, uint32_t at)
{
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (p->pos[mid] < at)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The first leaf of partition @k whose position is at least @at. */
static uint32_t leaf_from(const struct ks_index_parts *p, uint32_t k, uint32_t at)
{
    return leaf_at(p, p->off[k], p->off[k + 1], at);
}

/* Partition @k's positions in [l, r) (l <= r <= n) combined. */
static struct ks_index_tree_node part_range(const struct ks_index_parts *p, uint32_t k, uint32_t l,
                                            uint32_t r)
{
    return ks_index_tree_range(&p->tree, leaf_from(p, k, l), leaf_from(p, k, r));
}

static struct ks_index_tree_node join(struct ks_index_tree_node a, struct ks_index_tree_node b)
{
    struct ks_index_tree_node r = a.best >= b.best ? a : b;
    if (a.best == b.best)
        r.ties = a.ties + b.ties;
    r.nfeasible = a.nfeasible + b.nfeasible;
    r.npoison = a.npoison + b.npoison;
    return r;
}

/* Partition @k over the first @len positions of @w, in window order. */
static struct ks_index_tree_node part_prefix(const struct ks_index_parts *p, uint32_t k,
                                             const struct ks_index_window *w, uint32_t len)
{
    uint32_t end = w->start + len;
    struct ks_index_tree_node a = part_range(p, k, w->start, end < p->n ? end : p->n);
    if (end > p->n)
        a = join(a, part_range(p, k, 0, end - p->n));
    return a;
}

void ks_index_parts_window(const struct ks_index_parts *p, const struct ks_index_window *w,
                           struct ks_index_tree_node *out)
{
    for (uint32_t k = 0; k < p->nparts; k++)
        out[k] = part_prefix(p, k, w, w->processed);
}

void ks_index_parts_hide(struct ks_index_parts *p, uint32_t pos, bool hide, const struct ks_index_tree *main)
{
    struct ks_index_tree_node x = main->t[main->leaves + pos];
    if (hide)
        ks_index_parts_set(p, pos, false, 0, false);
    else
        ks_index_parts_set(p, pos, x.nfeasible != 0, x.best, x.npoison != 0);
}

/* Ties of @a at @target. */
static uint32_t ties_at(struct ks_index_tree_node a, int32_t target)
{
    return a.best == target ? a.ties : 0;
}

void ks_index_parts_count_init(struct ks_index_parts_count *q, const struct ks_index_parts *p,
                               const struct ks_index_window *w, const int32_t *target)
{
    bool wraps = w->start + w->processed > p->n;
    q->p = p;
    q->w = w;
    q->n = 0;
    for (uint32_t k = 0; k < p->nparts; k++) {
        if (target[k] == KS_INDEX_NO_SCORE)
            continue;
        struct ks_index_parts_cursor *c = &q->c[q->n++];
        c->k = k;
        c->target = target[k];
        c->first = leaf_from(p, k, w->start);
        /* after a wrap the window holds every leaf from first on */
        c->rest = wraps ? ties_at(ks_index_tree_range(&p->tree, c->first, p->off[k + 1]), target[k]) : 0;
    }
}

uint32_t ks_index_parts_count_before(const struct ks_index_parts_count *q, uint32_t len)
{
    const struct ks_index_parts *p = q->p;
    uint32_t end = q->w->start + len, sum = 0;
    for (uint32_t i = 0; i < q->n; i++) {
        const struct ks_index_parts_cursor *c = &q->c[i];
        if (end <= p->n) {
            uint32_t x = leaf_at(p, c->first, p->off[c->k + 1], end);
            sum += ties_at(ks_index_tree_range(&p->tree, c->first, x), c->target);
        } else {
            uint32_t x = leaf_at(p, p->off[c->k], c->first, end - p->n);
            sum += c->rest + ties_at(ks_index_tree_range(&p->tree, p->off[c->k], x), c->target);
        }
    }
    return sum;
}

uint32_t ks_index_parts_tie(const struct ks_index_parts *p, const struct ks_index_window *w,
                            const int32_t *target, uint32_t r)
{
    uint32_t one = UINT32_MAX, many = 0;
    for (uint32_t k = 0; k < p->nparts; k++) {
        if (target[k] != KS_INDEX_NO_SCORE) {
            one = k;
            many++;
        }
    }
    if (many == 1) {
        /* one partition: its leaves run in window order, the wrapped range's after the first */
        uint32_t end = w->start + w->processed, first_end = end < p->n ? end : p->n;
        uint32_t l = leaf_from(p, one, w->start), m = leaf_from(p, one, first_end);
        struct ks_index_tree_node a = ks_index_tree_range(&p->tree, l, m);
        uint32_t first = a.best == target[one] ? a.ties : 0;
        uint32_t leaf = r < first ? ks_index_tree_nth(&p->tree, l, m, target[one], r)
                                  : ks_index_tree_nth(&p->tree, p->off[one], leaf_from(p, one, end - p->n),
                                                      target[one], r - first);
        return p->pos[leaf];
    }
    /* the shortest prefix of the window holding r + 1 targets ends with the one sought */
    struct ks_index_parts_count q;
    ks_index_parts_count_init(&q, p, w, target);
    uint32_t lo = 1, hi = w->processed;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ks_index_parts_count_before(&q, mid) > r)
            hi = mid;
        else
            lo = mid + 1;
    }
    return (w->start + lo - 1) % p->n;
}
