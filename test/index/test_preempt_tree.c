/*
 * test_preempt_tree.c - the candidate tree against brute force: random kinds and ranks
 * (few distinct values, so equal ranks are common and "now" starts appear), random
 * updates, and after each, the dry run's walk as engine/preemption.c does it - from the
 * k-th potential position after a start, wrapping, until the wanted candidates, keeping
 * the first best by pickOneNodeForPreemption's order - compared with the tree's
 * nth_potential, window and first_unknown; trees built position by position and in bulk.
 */
#include "ksched/internal/preempt_tree.h"

#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdlib.h>

#define MAXN 300

struct model {
    uint32_t n;
    enum ks_preempt_leaf kind[MAXN];
    struct ks_preempt_rank rank[MAXN];
};

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* pickOneNodeForPreemption's comparisons, one criterion at a time as ks_preempt_select makes them. */
static bool before(const struct ks_preempt_rank *a, const struct ks_preempt_rank *b)
{
    int64_t ka[4] = {-a->top_priority, -a->priority_sum, -(int64_t)a->nvictims, a->start};
    int64_t kb[4] = {-b->top_priority, -b->priority_sum, -(int64_t)b->nvictims, b->start};
    for (int f = 0; f < 4; f++) {
        if (ka[f] != kb[f])
            return ka[f] > kb[f];
    }
    return false;
}

/* The k-th potential position from @from by walking. */
static uint32_t walk_potential(const struct model *m, uint32_t from, uint32_t k)
{
    for (uint32_t i = 0;; i++) {
        uint32_t p = (from + i) % m->n;
        if (m->kind[p] != KS_PT_NOT_POTENTIAL && k-- == 0)
            return p;
    }
}

static void walk(const struct model *m, uint32_t start, uint32_t want, struct ks_preempt_window *w,
                 uint32_t *first_unknown)
{
    *w = (struct ks_preempt_window){.start = start, .best_pos = KS_PT_NONE, .latest_start = INT64_MIN};
    *first_unknown = KS_PT_NONE;
    for (uint32_t i = 0; i < m->n && w->ncandidates < want; i++) {
        uint32_t p = (start + i) % m->n;
        w->processed++;
        if (m->kind[p] == KS_PT_UNKNOWN && w->nunknown++ == 0)
            *first_unknown = p;
        w->nvolatile += m->kind[p] == KS_PT_VOLATILE;
        if (m->kind[p] != KS_PT_CANDIDATE)
            continue;
        w->ncandidates++;
        if (m->rank[p].start != KS_PREEMPT_START_NOW && m->rank[p].start > w->latest_start)
            w->latest_start = m->rank[p].start;
        if (w->best_pos == KS_PT_NONE || before(&m->rank[p], &w->best)) {
            w->best_pos = p;
            w->best = m->rank[p];
        }
    }
}

static void random_leaf(struct model *m, uint32_t p, uint64_t *rng)
{
    m->kind[p] = (enum ks_preempt_leaf)(next(rng) % 5);
    int64_t starts[3] = {100, 200, KS_PREEMPT_START_NOW};
    m->rank[p] = (struct ks_preempt_rank){
        .top_priority = (int32_t)(next(rng) % 2),
        .nvictims = 1 + (uint32_t)(next(rng) % 2),
        .priority_sum = (int64_t)(next(rng) % 2),
        .start = starts[next(rng) % 3],
    };
}

static void check(const struct ks_preempt_tree *t, const struct model *m, uint64_t *rng)
{
    uint32_t potential = 0;
    for (uint32_t p = 0; p < m->n; p++)
        potential += m->kind[p] != KS_PT_NOT_POTENTIAL;
    cr_assert_eq(ks_preempt_tree_potential(t), potential);
    for (int q = 0; q < 8; q++) {
        uint32_t from = (uint32_t)(next(rng) % m->n), want = 1 + (uint32_t)(next(rng) % (m->n + 2));
        uint32_t start = from;
        if (potential) {
            uint32_t k = (uint32_t)(next(rng) % potential);
            start = ks_preempt_tree_nth_potential(t, from, k);
            cr_assert_eq(start, walk_potential(m, from, k), "n %u from %u k %u", m->n, from, k);
        }
        struct ks_preempt_window got, exp;
        uint32_t unknown;
        ks_preempt_tree_window(t, start, want, &got);
        walk(m, start, want, &exp, &unknown);
        cr_assert_eq(got.processed, exp.processed, "n %u start %u want %u: processed %u, walked %u", m->n,
                     start, want, got.processed, exp.processed);
        cr_assert_eq(got.ncandidates, exp.ncandidates, "n %u start %u want %u", m->n, start, want);
        cr_assert_eq(got.nunknown, exp.nunknown, "n %u start %u want %u", m->n, start, want);
        cr_assert_eq(got.nvolatile, exp.nvolatile, "n %u start %u want %u", m->n, start, want);
        cr_assert_eq(got.best_pos, exp.best_pos, "n %u start %u want %u: best %u, walked %u", m->n, start,
                     want, got.best_pos, exp.best_pos);
        cr_assert_eq(got.latest_start, exp.latest_start, "n %u start %u want %u", m->n, start, want);
        if (exp.nunknown)
            cr_assert_eq(ks_preempt_tree_first_unknown(t, &got), unknown, "n %u start %u want %u", m->n,
                         start, want);
    }
}

Test(preempt_tree, windows_and_choices_match_the_dry_runs_walk)
{
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    for (uint32_t round = 0; round < 200; round++) {
        struct model m = {.n = 1 + (uint32_t)(next(&rng) % MAXN)};
        struct ks_preempt_tree t;
        cr_assert_eq(ks_preempt_tree_init(&t, m.n), 0);
        bool bulk = round % 2;
        for (uint32_t p = 0; p < m.n; p++) {
            random_leaf(&m, p, &rng);
            if (bulk)
                ks_preempt_tree_put(&t, p, m.kind[p], &m.rank[p]);
            else
                ks_preempt_tree_set(&t, p, m.kind[p], &m.rank[p]);
        }
        if (bulk)
            ks_preempt_tree_build(&t);
        check(&t, &m, &rng);
        for (int u = 0; u < 20; u++) {
            uint32_t p = (uint32_t)(next(&rng) % m.n);
            random_leaf(&m, p, &rng);
            ks_preempt_tree_set(&t, p, m.kind[p], &m.rank[p]);
            check(&t, &m, &rng);
        }
        cr_assert_gt(ks_preempt_tree_bytes(&t), 0);
        ks_preempt_tree_destroy(&t);
        cr_assert_eq(ks_preempt_tree_bytes(&t), 0);
    }
}

Test(preempt_tree, a_new_tree_has_no_potential_position)
{
    struct ks_preempt_tree t;
    struct ks_preempt_window w;
    cr_assert_eq(ks_preempt_tree_init(&t, 5), 0);
    cr_assert_eq(ks_preempt_tree_potential(&t), 0);
    ks_preempt_tree_window(&t, 0, 3, &w);
    cr_assert_eq(w.processed, 5);
    cr_assert_eq(w.ncandidates + w.nunknown + w.nvolatile, 0);
    cr_assert_eq(w.best_pos, KS_PT_NONE);
    ks_preempt_tree_destroy(&t);
    ks_preempt_tree_destroy(&t); /* twice: a destroyed tree is a zeroed one */
}
