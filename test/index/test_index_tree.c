/*
 * test_index_tree.c - the signature index's position tree against brute force: random
 * feasibility and totals (few distinct totals, so ties are common), random updates, and
 * after each, windows from random starts for random numbers of wanted nodes, walked one
 * position at a time as engine/find_nodes.c walks them; trees built position by position
 * and in bulk.
 */
#include "ksched/internal/index_tree.h"

#include <criterion/criterion.h>
#include <stdlib.h>

struct model {
    uint32_t n;
    bool feasible[300];
    int32_t score[300];
    bool poison[300];
};

/* The window by walking: positions from @start, wrapping, until @want feasible ones. */
static void walk(const struct model *m, uint32_t start, uint32_t want, struct ks_index_window *w,
                 uint32_t *ties)
{
    *w = (struct ks_index_window){.start = start, .best = KS_INDEX_NO_SCORE};
    for (uint32_t i = 0; i < m->n && w->nfeasible < want; i++) {
        uint32_t p = (start + i) % m->n;
        w->processed++;
        w->npoison += m->poison[p];
        if (!m->feasible[p])
            continue;
        w->nfeasible++;
        if (m->score[p] > w->best) {
            w->best = m->score[p];
            w->ties = 0;
        }
        if (m->score[p] == w->best)
            ties[w->ties++] = p;
    }
}

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static void check_windows(const struct ks_index_tree *t, const struct model *m, uint64_t *rng)
{
    for (int q = 0; q < 8; q++) {
        uint32_t start = (uint32_t)(next(rng) % m->n), want = 1 + (uint32_t)(next(rng) % (m->n + 2));
        struct ks_index_window got, exp;
        uint32_t ties[300];
        ks_index_tree_window(t, start, want, &got);
        walk(m, start, want, &exp, ties);
        cr_assert_eq(got.processed, exp.processed, "n %u start %u want %u: processed %u, walked %u", m->n,
                     start, want, got.processed, exp.processed);
        cr_assert_eq(got.nfeasible, exp.nfeasible, "n %u start %u want %u", m->n, start, want);
        cr_assert_eq(got.best, exp.best, "n %u start %u want %u: best %d, walked %d", m->n, start, want,
                     got.best, exp.best);
        cr_assert_eq(got.ties, exp.ties, "n %u start %u want %u: %u ties, walked %u", m->n, start, want,
                     got.ties, exp.ties);
        cr_assert_eq(got.npoison, exp.npoison, "n %u start %u want %u: %u poisoned, walked %u", m->n, start,
                     want, got.npoison, exp.npoison);
        for (uint32_t r = 0; r < exp.ties; r++)
            cr_assert_eq(ks_index_tree_tie(t, &got, r), ties[r],
                         "n %u start %u want %u: tie %u at %u, walked %u", m->n, start, want, r,
                         ks_index_tree_tie(t, &got, r), ties[r]);
    }
}

Test(index_tree, windows_and_ties_match_a_walk_after_random_updates)
{
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    for (int round = 0; round < 200; round++) {
        struct model m = {.n = 1 + (uint32_t)(next(&rng) % 300)};
        struct ks_index_tree t;
        cr_assert_eq(ks_index_tree_init(&t, m.n), 0);
        uint32_t density = (uint32_t)(next(&rng) % 100); /* percent feasible, 0..99 */
        bool bulk = round % 2; /* half the trees built with put + build, half set by set */
        for (uint32_t i = 0; i < m.n; i++) {
            m.feasible[i] = next(&rng) % 100 < density;
            m.score[i] = (int32_t)(next(&rng) % 4) * 50;
            m.poison[i] = next(&rng) % 16 == 0;
            if (bulk)
                ks_index_tree_put(&t, i, m.feasible[i], m.score[i], m.poison[i]);
            else
                ks_index_tree_set(&t, i, m.feasible[i], m.score[i], m.poison[i]);
        }
        if (bulk)
            ks_index_tree_build(&t);
        check_windows(&t, &m, &rng);
        for (int u = 0; u < 20; u++) {
            uint32_t i = (uint32_t)(next(&rng) % m.n);
            m.feasible[i] = next(&rng) % 2;
            m.score[i] = (int32_t)(next(&rng) % 4) * 50;
            m.poison[i] = next(&rng) % 16 == 0;
            ks_index_tree_set(&t, i, m.feasible[i], m.score[i], m.poison[i]);
            uint32_t total = 0;
            for (uint32_t k = 0; k < m.n; k++)
                total += m.feasible[k];
            cr_assert_eq(ks_index_tree_feasible(&t), total);
            check_windows(&t, &m, &rng);
        }
        ks_index_tree_destroy(&t);
    }
}

Test(index_tree, no_positions_and_none_feasible)
{
    struct ks_index_tree t;
    struct ks_index_window w;
    cr_assert_eq(ks_index_tree_init(&t, 0), 0);
    ks_index_tree_window(&t, 0, 1, &w);
    cr_expect_eq(w.processed, 0u);
    cr_expect_eq(w.ties, 0u);
    ks_index_tree_destroy(&t);
    ks_index_tree_destroy(&t); /* a destroyed tree is empty */

    cr_assert_eq(ks_index_tree_init(&t, 5), 0);
    ks_index_tree_window(&t, 3, 2, &w);
    cr_expect_eq(w.processed, 5u, "no feasible node: every position is evaluated");
    cr_expect_eq(w.nfeasible, 0u);
    cr_expect_eq(w.best, KS_INDEX_NO_SCORE);
    ks_index_tree_destroy(&t);
}
