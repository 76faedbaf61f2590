/*
 * index_spread.c - PodTopologySpread's ScheduleAnyway score on the index path.
 *
 * The pods of a workload differ, to the scheduler, in the counts of their spread
 * constraints alone; kube-scheduler's default constraints (hostname maxSkew 3, zone
 * maxSkew 5) apply to every pod a Service, ReplicaSet or StatefulSet selects. Such a pod is
 * spread-scored (ksched/sign.h): its class's tree holds the totals of the other plugins,
 * and the spread score is added here, per cycle, as the per-node path would compute it
 * over the window (scoring.go: PreScore over the filtered nodes, Score, NormalizeScore):
 *
 *   - a node's raw score is round(sum over its constraints of cnt * w + maxSkew - 1), cnt
 *     being the pods counted on the node itself (hostname) or in its domain (the other
 *     key, counted over every node by PreScore), w = log(size + 2) with size the window's
 *     feasible nodes (hostname) or its distinct values of the key;
 *   - NormalizeScore maps a raw s to 100 * (max + min - s) / max over the window's
 *     feasible nodes (100 when max is 0), weighed by the plugin's weight.
 *
 * So two nodes of one domain with no counted pod on them get the same spread score: the
 * class's positions are split by the key's value (index_parts.h), and per domain the
 * window's best total of the other plugins, its ties and its feasible count come from
 * one range query each. The few nodes holding counted pods (PreScore's host list) are
 * hidden from the partition tree for the cycle and scored one by one, so the best total
 * is the larger of the domains' and theirs, and the ties are the domains' and theirs,
 * merged in window order (counted from the class tree's ties when the domains that reach
 * the best do so with its best total, which spares a count per domain). Nodes the score
 * would ignore or treat apart (no hostname label; lacking a key when nodes must carry
 * every key) are poisoned when the tree is filled. The draw is select_host.c's: one
 * number when more than one node ties, the tie taken in window order.
 *
 * A window with more than HOSTS_MAX nodes holding counted pods (a workload of thousands
 * of replicas) goes to the per-node path: scoring that many one by one, each hidden and
 * shown again, costs more than evaluating the window (measured at 5,000 nodes with
 * ReplicaSets of 5,000: 1.0 s for 20,000 pods at 256, 1.4 s at 2,048).
 */
#include "index_spread.h"

#include "select_host.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/framework_types.h"

#include <math.h>
#include <stdlib.h>

enum {
    HOSTS_MAX = 256, /* nodes with counted pods in one window, scored one by one */
    CONS_MAX = 8,    /* constraints (at most one per key and action in valid pods) */
};

bool ks__index_spread_poisons(const struct ks_pts_score_state *s, const struct ks_node_snap *node)
{
    if (!node->node)
        return true;
    const struct ks_labels *labels = &node->node->meta.labels;
    for (uint32_t i = 0; i < s->n; i++) {
        if ((s->require_all || s->cons[i].topology_key == s->hostname) &&
            !ks_labels_get(labels, s->cons[i].topology_key, NULL))
            return true;
    }
    return false;
}

/* The raw score of a node of domain @value (KS_INDEX_PART_ABSENT: no label) with @hosted pods on it. */
static int64_t raw_score(const struct ks_pts_score_state *st, const double *weight, uint32_t value,
                         int64_t hosted)
{
    double sum = 0;
    for (uint32_t i = 0; i < st->n; i++) {
        const struct ks_pts_constraint *k = &st->cons[i];
        int64_t cnt = hosted;
        if (k->topology_key != st->hostname) {
            if (value == KS_INDEX_PART_ABSENT)
                continue;
            const struct ks_spread_domain *d = ks_spread_domains_find(&st->counts[i], value);
            cnt = d ? d->count : 0;
        }
        sum += ks_pts_score_for_count(cnt, k->max_skew, weight[i]);
    }
    return (int64_t)round(sum);
}

/* A node with counted pods inside the window. */
struct hosted {
    uint32_t pos;
    uint8_t part;
    int32_t total;  /* the other plugins' */
    uint32_t off;   /* its place in the window */
    uint32_t count; /* the pods counted on it */
    int64_t raw, bonus;
};

struct window_view {
    const struct ks_index_parts *p;
    struct ks_index_tree_node agg[KS_INDEX_PARTS_MAX];
    uint32_t hosted_in[KS_INDEX_PARTS_MAX]; /* per partition: its feasible window nodes with counted pods */
    struct hosted h[HOSTS_MAX];             /* in window order */
    uint32_t nh;
};

static int by_offset(const void *a, const void *b)
{
    uint32_t x = ((const struct hosted *)a)->off, y = ((const struct hosted *)b)->off;
    return (x > y) - (x < y);
}

/* The feasible nodes of @w with counted pods, in window order; false when more than HOSTS_MAX. */
static bool collect_hosted(struct window_view *v, const struct ks_index_class *c,
                           const struct ks_pts_score_state *st, const struct ks_index_window *w)
{
    uint32_t n = c->tree.n;
    v->nh = 0;
    for (uint32_t k = 0; k < st->hosts.n; k++) {
        uint32_t pos = st->hosts.pos[k];
        if (pos >= n)
            continue;
        uint32_t off = pos >= w->start ? pos - w->start : pos + n - w->start;
        struct ks_index_tree_node leaf = c->tree.t[c->tree.leaves + pos];
        if (off >= w->processed || !leaf.nfeasible)
            continue;
        if (v->nh == HOSTS_MAX)
            return false;
        uint8_t part = v->p->part[pos];
        v->h[v->nh++] = (struct hosted){
            .pos = pos, .part = part, .total = leaf.best, .off = off, .count = st->hosts.count[k]};
        v->hosted_in[part]++;
    }
    qsort(v->h, v->nh, sizeof(v->h[0]), by_offset);
    return true;
}

/* Per constraint, its normalizing weight over the window (initPreScoreState). */
static void window_weights(const struct window_view *v, const struct ks_pts_score_state *st,
                           const struct ks_index_window *w, double *weight)
{
    uint32_t size = 0;
    bool absent = false, empty = false;
    for (uint32_t k = 0; k < v->p->nparts; k++) {
        if (!v->agg[k].nfeasible && !v->hosted_in[k])
            continue;
        size++;
        /* a node lacking the key counts as the value "" */
        absent |= v->p->value[k] == KS_INDEX_PART_ABSENT;
        empty |= v->p->value[k] == KS_ID_EMPTY;
    }
    size -= absent && empty;
    for (uint32_t i = 0; i < st->n; i++)
        weight[i] = ks_pts_weight(st->cons[i].topology_key == st->hostname ? w->nfeasible : size);
}

static int64_t normalized(int64_t raw, int64_t min, int64_t max)
{
    return max == 0 ? KS_MAX_NODE_SCORE : KS_MAX_NODE_SCORE * (max + min - raw) / max;
}

/*
 * Whether the nodes with the best total @best are among the class tree's ties of @w (the
 * best total of the other plugins over all its feasible nodes): every domain that reaches
 * @best does so with that total of the other plugins, and so does every hosted node that
 * reaches it. The nodes with @best are then those ties less the ones of the domains in
 * *@others (a target each, the domains with that total that do not reach @best; *@nothers
 * of them) and less the hosted nodes with that total that do not reach @best.
 */
static bool tops_are_main_ties(const struct window_view *v, const int32_t *target,
                               const struct ks_index_window *w, int64_t best, int32_t *others,
                               uint32_t *nothers)
{
    *nothers = 0;
    for (uint32_t k = 0; k < v->p->nparts; k++) {
        others[k] = KS_INDEX_NO_SCORE;
        if (!v->agg[k].nfeasible)
            continue;
        if (target[k] != KS_INDEX_NO_SCORE && target[k] != w->best)
            return false;
        if (target[k] == KS_INDEX_NO_SCORE && v->agg[k].best == w->best) {
            others[k] = w->best;
            ++*nothers;
        }
    }
    for (uint32_t i = 0; i < v->nh; i++) {
        if (v->h[i].total + v->h[i].bonus == best && v->h[i].total != w->best)
            return false;
    }
    return true;
}

/* The class tree's ties of @w among its first @len positions. */
static uint32_t main_ties_before(const struct ks_index_tree *main, const struct ks_index_window *w,
                                 uint32_t len)
{
    uint32_t end = w->start + len, n = main->n;
    struct ks_index_tree_node a = ks_index_tree_range(main, w->start, end < n ? end : n);
    uint32_t ties = a.best == w->best ? a.ties : 0;
    if (end > n) {
        a = ks_index_tree_range(main, 0, end - n);
        ties += a.best == w->best ? a.ties : 0;
    }
    return ties;
}

/*
 * Tie @r when tops_are_main_ties(): the class tree's ties of @w at its best, less those
 * of the domains in @others and the hosted nodes with that total that do not reach
 * @best. With no such domain, the class tree's tie r counted past those hosted nodes (in
 * window order, each one that comes before the tie moves it one further); else the
 * shortest prefix of the window holding r + 1 of them.
 */
static uint32_t main_tie(const struct window_view *v, const struct ks_index_tree *main,
                         const struct ks_index_window *w, const int32_t *others, uint32_t nothers,
                         int64_t best, uint32_t r)
{
    const struct hosted *skip[HOSTS_MAX];
    uint32_t n = 0;
    for (uint32_t i = 0; i < v->nh; i++) {
        if (v->h[i].total != w->best || v->h[i].total + v->h[i].bonus == best)
            continue;
        skip[n++] = &v->h[i];
    }
    if (!nothers) {
        for (uint32_t j = 0; j < n && main_ties_before(main, w, skip[j]->off) <= r; j++)
            r++;
        return ks_index_tree_tie(main, w, r);
    }
    struct ks_index_parts_count q;
    ks_index_parts_count_init(&q, v->p, w, others);
    uint32_t lo = 1, hi = w->processed;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2, skipped = 0;
        while (skipped < n && skip[skipped]->off < mid)
            skipped++;
        uint32_t ties = main_ties_before(main, w, mid) - ks_index_parts_count_before(&q, mid) - skipped;
        if (ties > r)
            hi = mid;
        else
            lo = mid + 1;
    }
    return (w->start + lo - 1) % main->n;
}

/*
 * The window's best total and the draw over the nodes with it, the hosted nodes hidden
 * from the partition tree: per domain its best total plus its spread score, and each
 * hosted node with its own.
 */
static uint32_t pick(struct window_view *v, const struct ks_index_tree *main, const struct ks_index_window *w,
                     const int64_t *bonus, uint64_t *rng)
{
    const struct ks_index_parts *p = v->p;
    int64_t best = INT64_MIN;
    for (uint32_t k = 0; k < p->nparts; k++) {
        if (v->agg[k].nfeasible && v->agg[k].best + bonus[k] > best)
            best = v->agg[k].best + bonus[k];
    }
    for (uint32_t i = 0; i < v->nh; i++)
        best = v->h[i].total + v->h[i].bonus > best ? v->h[i].total + v->h[i].bonus : best;
    int32_t target[KS_INDEX_PARTS_MAX];
    uint32_t ties = 0, nh = 0;
    for (uint32_t k = 0; k < p->nparts; k++) {
        bool tops = v->agg[k].nfeasible && v->agg[k].best + bonus[k] == best;
        target[k] = tops ? v->agg[k].best : KS_INDEX_NO_SCORE;
        ties += tops ? v->agg[k].ties : 0;
    }
    /* the hosted nodes with the best total, in window order */
    struct hosted *tied[HOSTS_MAX];
    for (uint32_t i = 0; i < v->nh; i++) {
        if (v->h[i].total + v->h[i].bonus == best)
            tied[nh++] = &v->h[i];
    }
    uint32_t r = ties + nh > 1 ? ks__draw(rng, ties + nh) : 0;
    /* the cheaper count: the class tree's ties less a few domains', or the domains' own */
    int32_t others[KS_INDEX_PARTS_MAX];
    uint32_t nothers, ntops = 0;
    for (uint32_t k = 0; k < p->nparts; k++)
        ntops += target[k] != KS_INDEX_NO_SCORE;
    if (tops_are_main_ties(v, target, w, best, others, &nothers) && (nothers == 0 || nothers + 1 < ntops))
        return main_tie(v, main, w, others, nothers, best, r);
    /* tie r in window order: a hosted node, or the domains' tie r less the hosted ones before it */
    struct ks_index_parts_count q;
    ks_index_parts_count_init(&q, p, w, target);
    uint32_t before = 0;
    for (uint32_t j = 0; j < nh; j++) {
        uint32_t at = ks_index_parts_count_before(&q, tied[j]->off) + j;
        if (at == r)
            return tied[j]->pos;
        before += at < r;
    }
    return ks_index_parts_tie(p, w, target, r - before);
}

bool ks__index_spread_host(struct ks_index *ix, struct ks_index_class *c, const struct ks_snapshot *snap,
                           const struct ks_pts_score_state *st, int64_t weight, uint32_t key,
                           const struct ks_index_window *w, uint64_t *rng, uint32_t *pos)
{
    if (st->n > CONS_MAX || (!c->parts.built && ks_index_split(ix, c, key, snap) < 0))
        return false;
    struct window_view v;
    v.p = &c->parts;
    uint32_t np = c->parts.nparts;
    for (uint32_t k = 0; k < np; k++)
        v.hosted_in[k] = 0;
    if (!collect_hosted(&v, c, st, w))
        return false;
    for (uint32_t i = 0; i < v.nh; i++)
        ks_index_parts_hide(&c->parts, v.h[i].pos, true, &c->tree);
    ks_index_parts_window(&c->parts, w, v.agg);

    double wt[CONS_MAX];
    window_weights(&v, st, w, wt);
    int64_t raw0[KS_INDEX_PARTS_MAX], bonus[KS_INDEX_PARTS_MAX], min = INT64_MAX, max = 0;
    for (uint32_t k = 0; k < np; k++) {
        raw0[k] = raw_score(st, wt, c->parts.value[k], 0);
        if (v.agg[k].nfeasible) {
            min = raw0[k] < min ? raw0[k] : min;
            max = raw0[k] > max ? raw0[k] : max;
        }
    }
    for (uint32_t i = 0; i < v.nh; i++) {
        v.h[i].raw = raw_score(st, wt, c->parts.value[v.h[i].part], v.h[i].count);
        min = v.h[i].raw < min ? v.h[i].raw : min;
        max = v.h[i].raw > max ? v.h[i].raw : max;
    }
    for (uint32_t k = 0; k < np; k++)
        bonus[k] = weight * normalized(raw0[k], min, max);
    for (uint32_t i = 0; i < v.nh; i++)
        v.h[i].bonus = weight * normalized(v.h[i].raw, min, max);
    *pos = pick(&v, &c->tree, w, bonus, rng);
    for (uint32_t i = 0; i < v.nh; i++)
        ks_index_parts_hide(&c->parts, v.h[i].pos, false, &c->tree);
    return true;
}
