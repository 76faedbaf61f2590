/*
 * test_index_parts.c - a class's positions split by a label's value
 * (ksched/internal/index_parts.h) against brute force: random values (absent labels and
 * "" among them), feasibility and totals with few distinct values, random updates and
 * hidden positions; after each, per partition what windows from random starts hold, the
 * targets before every prefix, and the r-th target in window order, walked one position
 * at a time.
 */
#include "ksched/internal/index_parts.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NMAX 600

struct world {
    uint32_t n, key;
    struct ks_node nodes[NMAX];
    struct ks_label labels[NMAX];
    struct ks_node_snap recs[NMAX];
    struct ks_snap_chunk chunks[(NMAX + KS_SNAP_CHUNK - 1) / KS_SNAP_CHUNK];
    struct ks_snap_chunk *chunk_ptrs[(NMAX + KS_SNAP_CHUNK - 1) / KS_SNAP_CHUNK];
    struct ks_snapshot snap;
    /* the model */
    uint32_t value[NMAX]; /* KS_INDEX_PART_ABSENT: no label */
    bool feasible[NMAX], poison[NMAX], hidden[NMAX];
    int32_t score[NMAX];
};

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static uint32_t below(uint64_t *rng, uint32_t n)
{
    return (uint32_t)(next(rng) % n);
}

/* Position @i's node carries value @v of the key (KS_INDEX_PART_ABSENT: no label). */
static void label(struct world *w, uint32_t i, uint32_t v)
{
    w->value[i] = v;
    w->labels[i] = (struct ks_label){.key = w->key, .value = v};
    w->nodes[i].meta.labels = (struct ks_labels){.n = v != KS_INDEX_PART_ABSENT, .items = &w->labels[i]};
}

static void world_init(struct world *w, uint32_t n, uint32_t nvalues, uint64_t *rng)
{
    memset(w, 0, sizeof(*w));
    cr_assert_eq(ks_api_init(), 0);
    w->n = n;
    w->key = ks_intern("topology.kubernetes.io/zone");
    uint32_t values[8];
    char name[16];
    for (uint32_t v = 0; v < nvalues && v < 8; v++) {
        snprintf(name, sizeof(name), "zone-%u", v);
        values[v] = ks_intern(name);
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t pick = below(rng, nvalues + 2);
        label(w, i, pick < nvalues ? values[pick] : pick == nvalues ? KS_INDEX_PART_ABSENT : KS_ID_EMPTY);
        w->recs[i].node = &w->nodes[i];
        w->recs[i].flags = KS_SNAP_HAS_NODE;
        w->chunks[i / KS_SNAP_CHUNK].nodes[i % KS_SNAP_CHUNK] = &w->recs[i];
    }
    uint32_t nchunks = (n + KS_SNAP_CHUNK - 1) / KS_SNAP_CHUNK;
    for (uint32_t c = 0; c < nchunks; c++)
        w->chunk_ptrs[c] = &w->chunks[c];
    w->snap = (struct ks_snapshot){.nnodes = n, .nchunks = nchunks, .chunks = w->chunk_ptrs};
}

static void put_random(struct world *w, uint32_t i, uint64_t *rng)
{
    w->feasible[i] = below(rng, 4) != 0;
    w->score[i] = (int32_t)below(rng, 4);
    w->poison[i] = below(rng, 20) == 0;
}

/* Position @p's partition index in @parts. */
static uint32_t part_of(const struct ks_index_parts *parts, const struct world *w, uint32_t p)
{
    for (uint32_t k = 0; k < parts->nparts; k++) {
        if (parts->value[k] == w->value[p])
            return k;
    }
    cr_assert_fail("position %u: value %u in no partition", p, w->value[p]);
    return 0;
}

static bool visible(const struct world *w, uint32_t p)
{
    return w->feasible[p] && !w->hidden[p];
}

static void check_window(const struct world *w, const struct ks_index_parts *parts,
                         const struct ks_index_window *win, uint64_t *rng)
{
    struct ks_index_tree_node got[KS_INDEX_PARTS_MAX], exp[KS_INDEX_PARTS_MAX];
    ks_index_parts_window(parts, win, got);
    for (uint32_t k = 0; k < parts->nparts; k++)
        exp[k] = (struct ks_index_tree_node){.best = KS_INDEX_NO_SCORE};
    for (uint32_t o = 0; o < win->processed; o++) {
        uint32_t p = (win->start + o) % w->n, k = part_of(parts, w, p);
        exp[k].npoison += w->poison[p] && !w->hidden[p];
        if (!visible(w, p))
            continue;
        exp[k].nfeasible++;
        if (w->score[p] > exp[k].best) {
            exp[k].best = w->score[p];
            exp[k].ties = 0;
        }
        exp[k].ties += w->score[p] == exp[k].best;
    }
    int32_t target[KS_INDEX_PARTS_MAX];
    uint32_t total = 0;
    for (uint32_t k = 0; k < parts->nparts; k++) {
        cr_assert_eq(got[k].nfeasible, exp[k].nfeasible, "partition %u: feasible", k);
        cr_assert_eq(got[k].npoison, exp[k].npoison, "partition %u: poisoned", k);
        cr_assert_eq(got[k].best, exp[k].best, "partition %u: best %d, walked %d", k, got[k].best,
                     exp[k].best);
        if (exp[k].nfeasible)
            cr_assert_eq(got[k].ties, exp[k].ties, "partition %u: ties", k);
        bool take = exp[k].nfeasible && below(rng, 2);
        target[k] = take ? exp[k].best : KS_INDEX_NO_SCORE;
        total += take ? exp[k].ties : 0;
    }
    /* the targets in window order, walked */
    uint32_t order[NMAX], m = 0, len = below(rng, win->processed + 1), before = 0;
    for (uint32_t o = 0; o < win->processed; o++) {
        uint32_t p = (win->start + o) % w->n;
        if (visible(w, p) && target[part_of(parts, w, p)] == w->score[p]) {
            order[m++] = p;
            before += o < len;
        }
    }
    cr_assert_eq(m, total);
    struct ks_index_parts_count q;
    ks_index_parts_count_init(&q, parts, win, target);
    cr_assert_eq(ks_index_parts_count_before(&q, len), before, "targets before %u", len);
    for (uint32_t r = 0; r < m; r++)
        cr_assert_eq(ks_index_parts_tie(parts, win, target, r), order[r], "tie %u of %u", r, m);
}

static void check_all(struct world *w, struct ks_index_tree *main, struct ks_index_parts *parts,
                      uint64_t *rng)
{
    for (int q = 0; q < 6; q++) {
        struct ks_index_window win;
        ks_index_tree_window(main, below(rng, w->n), 1 + below(rng, w->n + 2), &win);
        check_window(w, parts, &win, rng);
    }
}

static void run_seed(uint64_t seed, uint32_t n, uint32_t nvalues)
{
    struct world *w = calloc(1, sizeof(*w));
    uint64_t rng = seed * 0x9E3779B97F4A7C15ull + 1;
    struct ks_index_tree main;
    struct ks_index_parts parts = {.key = KS_ID_NONE};

    cr_assert(w);
    world_init(w, n, nvalues, &rng);
    cr_assert_eq(ks_index_tree_init(&main, n), 0);
    for (uint32_t i = 0; i < n; i++) {
        put_random(w, i, &rng);
        ks_index_tree_put(&main, i, w->feasible[i], w->score[i], w->poison[i]);
    }
    ks_index_tree_build(&main);
    cr_assert_eq(ks_index_parts_build(&parts, w->key, &w->snap, &main), 0);
    cr_assert(parts.built);
    check_all(w, &main, &parts, &rng);
    for (int round = 0; round < 40; round++) {
        /* a few positions change entries; a few are hidden, then shown again */
        for (int u = 0; u < 5; u++) {
            uint32_t i = below(&rng, n);
            put_random(w, i, &rng);
            ks_index_tree_set(&main, i, w->feasible[i], w->score[i], w->poison[i]);
            cr_assert(ks_index_parts_follows(&parts, i, &w->recs[i]));
            ks_index_parts_set(&parts, i, w->feasible[i], w->score[i], w->poison[i]);
        }
        uint32_t hide[4];
        for (int h = 0; h < 4; h++) {
            hide[h] = below(&rng, n);
            w->hidden[hide[h]] = true;
            ks_index_parts_hide(&parts, hide[h], true, &main);
        }
        check_all(w, &main, &parts, &rng);
        for (int h = 0; h < 4; h++) {
            w->hidden[hide[h]] = false;
            ks_index_parts_hide(&parts, hide[h], false, &main);
        }
        check_all(w, &main, &parts, &rng);
        /* a node moves to another value: the split no longer holds until built again */
        if (round % 10 == 9) {
            uint32_t i = below(&rng, n), was = w->value[i];
            label(w, i, was == KS_INDEX_PART_ABSENT ? KS_ID_EMPTY : KS_INDEX_PART_ABSENT);
            cr_assert_not(ks_index_parts_follows(&parts, i, &w->recs[i]));
            cr_assert_not(parts.built);
            cr_assert_eq(ks_index_parts_build(&parts, w->key, &w->snap, &main), 0);
            check_all(w, &main, &parts, &rng);
        }
    }
    ks_index_parts_destroy(&parts);
    ks_index_tree_destroy(&main);
    free(w);
}

Test(index_parts, windows_and_targets_match_a_walk)
{
    for (uint64_t seed = 1; seed <= 12; seed++)
        run_seed(seed, 1 + (uint32_t)(seed * 47 % NMAX), 1 + (uint32_t)(seed % 6));
}

Test(index_parts, one_value_and_absent_labels)
{
    run_seed(21, 300, 1);
    run_seed(22, 1, 1);
}

/* More values than partitions: the class is not split, and nothing is held. */
Test(index_parts, too_many_values)
{
    static struct world w;
    uint64_t rng = 7;
    struct ks_index_tree main;
    struct ks_index_parts parts = {.key = KS_ID_NONE};
    char name[16];

    world_init(&w, KS_INDEX_PARTS_MAX + 1, 1, &rng);
    for (uint32_t i = 0; i < w.n; i++) {
        snprintf(name, sizeof(name), "z%u", i);
        label(&w, i, ks_intern(name));
    }
    cr_assert_eq(ks_index_tree_init(&main, w.n), 0);
    cr_assert_eq(ks_index_parts_build(&parts, w.key, &w.snap, &main), -E2BIG);
    cr_assert_not(parts.built);
    cr_assert_eq(ks_index_parts_bytes(&parts), 0);
    ks_index_tree_destroy(&main);
}
