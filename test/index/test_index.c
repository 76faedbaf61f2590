/*
 * test_index.c - the signature index's classes and change log (index/index.c): classes
 * found by owner and key, a tree only from the second sighting, the positions a class
 * must revisit after the versions it did not see (each once), rebuilds after a new order,
 * a missed version or too many changes, and the bounds on trees and classes.
 */
#include "ksched/internal/index.h"

#include <criterion/criterion.h>
#include <stdio.h>

/* A version as ks_index_observe reads it: generations and the changed positions. */
static struct ks_snapshot version(uint64_t gen, uint64_t prev, uint64_t order, const uint32_t *changed,
                                  uint32_t n)
{
    return (struct ks_snapshot){.generation = gen,
                                .prev_generation = prev,
                                .order_generation = order,
                                .changed = changed,
                                .nchanged = n};
}

static struct ks_index *mk(void)
{
    struct ks_index *ix = NULL;
    cr_assert_eq(ks_index_create(&ix), 0);
    return ix;
}

static int owner_a, owner_b;

Test(index, classes_by_owner_and_key_and_a_tree_from_the_second_sighting)
{
    struct ks_index *ix = mk();
    struct ks_index_class *c = ks_index_lookup(ix, &owner_a, "abc", 3);
    cr_assert(c);
    cr_expect(!ks_index_worth_tree(c), "one pod of a class is not worth a tree");
    cr_expect_eq(ks_index_lookup(ix, &owner_a, "abc", 3), c);
    cr_expect(ks_index_worth_tree(c));
    cr_expect_neq(ks_index_lookup(ix, &owner_b, "abc", 3), c, "another profile, another class");
    cr_expect_neq(ks_index_lookup(ix, &owner_a, "abd", 3), c);
    cr_expect_neq(ks_index_lookup(ix, &owner_a, "ab", 2), c);
    static const uint8_t long_key[KS_INDEX_KEY_MAX + 1];
    cr_expect_not_null(ks_index_lookup(ix, &owner_a, long_key, KS_INDEX_KEY_MAX));
    cr_expect_null(ks_index_lookup(ix, &owner_a, long_key, KS_INDEX_KEY_MAX + 1),
                   "a longer key is not indexed");
    uint32_t classes, trees;
    ks_index_counts(ix, &classes, &trees);
    cr_expect_eq(classes, 5u);
    cr_expect_eq(trees, 0u);
    ks_index_destroy(ix);
}

Test(index, a_class_that_keeps_missing_rests)
{
    struct ks_index *ix = mk();
    struct ks_index_class *c = ks_index_lookup(ix, &owner_a, "k", 1);
    ks_index_lookup(ix, &owner_a, "k", 1);
    cr_assert(ks_index_worth_tree(c));
    for (int i = 0; i < KS_INDEX_MISSES - 1; i++)
        ks_index_outcome(c, false);
    ks_index_outcome(c, true); /* an answer resets the count */
    for (int i = 0; i < KS_INDEX_MISSES - 1; i++)
        ks_index_outcome(c, false);
    cr_expect(ks_index_worth_tree(c), "%d misses in a row are not enough", KS_INDEX_MISSES - 1);
    ks_index_outcome(c, false);
    for (int i = 0; i < KS_INDEX_REST; i++)
        cr_expect(!ks_index_worth_tree(c), "resting at lookup %d", i);
    cr_expect(ks_index_worth_tree(c), "tried again");
    ks_index_destroy(ix);
}

/* An index that observed version 10 (order 10) and a class whose tree of 100 positions reflects it. */
static struct ks_index_class *built_class(struct ks_index *ix)
{
    struct ks_snapshot v1 = version(10, 0, 10, NULL, 0);
    ks_index_observe(ix, &v1);
    struct ks_index_class *c = ks_index_lookup(ix, &owner_a, "k", 1);
    const uint32_t *pos;
    cr_assert_eq(ks_index_pending(ix, c, 100, &pos), KS_INDEX_REBUILD, "a new tree is built whole");
    cr_assert_eq(c->tree.n, 100u);
    ks_index_synced(ix, c);
    return c;
}

Test(index, a_class_revisits_each_changed_position_once)
{
    struct ks_index *ix = mk();
    struct ks_index_class *c = built_class(ix);
    const uint32_t *pos;
    cr_expect_eq(ks_index_pending(ix, c, 100, &pos), 0, "nothing changed");

    static const uint32_t ch2[] = {3, 5}, ch3[] = {3, 7};
    struct ks_snapshot v2 = version(11, 10, 10, ch2, 2), v3 = version(12, 11, 10, ch3, 2);
    ks_index_observe(ix, &v2);
    ks_index_observe(ix, &v3);
    ks_index_observe(ix, &v3); /* the same version again changes nothing */
    int64_t k = ks_index_pending(ix, c, 100, &pos);
    cr_assert_eq(k, 3, "3, 5, 3, 7: three positions");
    bool seen[100] = {0};
    for (int64_t i = 0; i < k; i++) {
        cr_expect(!seen[pos[i]], "position %u listed twice", pos[i]);
        seen[pos[i]] = true;
    }
    cr_expect(seen[3] && seen[5] && seen[7]);
    ks_index_synced(ix, c);
    cr_expect_eq(ks_index_pending(ix, c, 100, &pos), 0);
    ks_index_destroy(ix);
}

Test(index, a_new_order_or_a_missed_version_rebuilds)
{
    struct ks_index *ix = mk();
    struct ks_index_class *c = built_class(ix);
    const uint32_t *pos;

    struct ks_snapshot v2 = version(11, 10, 11, NULL, 0); /* nodes added or removed */
    ks_index_observe(ix, &v2);
    cr_expect_eq(ks_index_pending(ix, c, 101, &pos), KS_INDEX_REBUILD);
    cr_expect_eq(c->tree.n, 101u);
    ks_index_synced(ix, c);

    static const uint32_t ch[] = {1};
    struct ks_snapshot v4 = version(13, 12, 11, ch, 1); /* version 12 was never observed */
    ks_index_observe(ix, &v4);
    cr_expect_eq(ks_index_pending(ix, c, 101, &pos), KS_INDEX_REBUILD, "changes may have been missed");
    ks_index_synced(ix, c);

    uint32_t many[40];
    for (uint32_t i = 0; i < 40; i++)
        many[i] = i;
    struct ks_snapshot v5 = version(14, 13, 11, many, 40);
    ks_index_observe(ix, &v5);
    cr_expect_eq(ks_index_pending(ix, c, 101, &pos), KS_INDEX_REBUILD, "a quarter changed: rebuild");
    ks_index_destroy(ix);
}

Test(index, trees_stay_within_the_budget_least_recently_used_first)
{
    struct ks_index *ix = mk();
    uint32_t n = 1u << 17; /* 2 x 2^17 nodes of 16 bytes and a group per position: 4.25 MiB per tree */
    size_t per_tree = 2 * (size_t)n * sizeof(struct ks_index_tree_node) + (size_t)n * sizeof(uint16_t);
    uint32_t fit = (uint32_t)(KS_INDEX_TREE_BUDGET / per_tree);
    struct ks_index_class *cls[64];
    const uint32_t *pos;
    cr_assert(fit + 4 <= 64);
    for (uint32_t i = 0; i < fit + 4; i++) {
        char key[16];
        int len = snprintf(key, sizeof(key), "class-%u", i);
        cls[i] = ks_index_lookup(ix, &owner_a, key, (uint32_t)len);
        cr_assert_eq(ks_index_pending(ix, cls[i], n, &pos), KS_INDEX_REBUILD);
        ks_index_synced(ix, cls[i]);
    }
    uint32_t trees;
    ks_index_counts(ix, NULL, &trees);
    cr_expect_eq(trees, fit, "%u trees kept, %u fit", trees, fit);
    cr_expect(!cls[0]->tree.t, "the least recently used gave its tree up");
    cr_expect(cls[fit + 3]->tree.t);
    cr_expect_eq(ks_index_pending(ix, cls[0], n, &pos), KS_INDEX_REBUILD, "and rebuilds it when used again");
    ks_index_destroy(ix);
}

Test(index, classes_are_bounded_the_oldest_forgotten)
{
    struct ks_index *ix = mk();
    char key[16];
    for (uint32_t i = 0; i < 5000; i++) {
        int len = snprintf(key, sizeof(key), "c%u", i);
        cr_assert(ks_index_lookup(ix, &owner_a, key, (uint32_t)len));
    }
    uint32_t classes;
    ks_index_counts(ix, &classes, NULL);
    cr_expect_eq(classes, 1024u);
    int len = snprintf(key, sizeof(key), "c%u", 4999u);
    cr_expect(ks_index_worth_tree(ks_index_lookup(ix, &owner_a, key, (uint32_t)len)),
              "a recent class is kept");
    len = snprintf(key, sizeof(key), "c%u", 0u);
    cr_expect(!ks_index_worth_tree(ks_index_lookup(ix, &owner_a, key, (uint32_t)len)),
              "the oldest was forgotten: seen anew");
    ks_index_destroy(ix);
}

static struct ks_status status_of(enum ks_code code, uint16_t plugin, uint32_t reason)
{
    struct ks_status st = {.code = code, .plugin = plugin, .nreasons = 1};
    st.reasons[0] = reason;
    return st;
}

/* Positions' statuses: equal ones share a group, counts follow every change, a rebuild empties them. */
Test(index, statuses_grouped_and_counted_per_position)
{
    struct ks_index *ix = mk();
    struct ks_index_class *c = ks_index_lookup(ix, &owner_a, "g", 1);
    const uint32_t *pos;
    cr_assert_eq(ks_index_pending(ix, c, 10, &pos), KS_INDEX_REBUILD);
    cr_expect_eq(c->groups.n, 0u);
    struct ks_status cpu = status_of(KS_UNSCHEDULABLE, 1, 7),
                     taint = status_of(KS_UNSCHEDULABLE_AND_UNRESOLVABLE, 3, 9);
    for (uint32_t p = 0; p < 10; p++)
        ks_index_status(c, p, p < 6 ? &cpu : &taint);
    cr_expect_eq(c->groups.n, 2u);
    cr_expect_eq(c->groups.count[0], 6u);
    cr_expect_eq(c->groups.count[1], 4u);
    cr_expect_eq(c->groups.of[7], 1u);
    cr_expect_eq(ks_index_unschedulable_plugins(c), (1ull << 1) | (1ull << 3));

    /* a position that becomes feasible leaves its group; one that changes status moves */
    ks_index_status(c, 0, NULL);
    ks_index_status(c, 9, &cpu);
    cr_expect_eq(c->groups.of[0], KS_INDEX_NO_GROUP);
    cr_expect_eq(c->groups.count[0], 6u);
    cr_expect_eq(c->groups.count[1], 3u);
    /* another reason, plugin or code is another group */
    struct ks_status other = cpu;
    other.plugin = 2;
    ks_index_status(c, 1, &other);
    cr_expect_eq(c->groups.n, 3u);
    for (uint32_t p = 2; p < 9; p++)
        ks_index_status(c, p, NULL);
    cr_expect_eq(ks_index_unschedulable_plugins(c), (1ull << 1) | (1ull << 2), "emptied groups do not count");

    /* more distinct statuses than groups: the class says so */
    for (uint32_t k = 0; k < KS_INDEX_GROUPS; k++) {
        struct ks_status st = status_of(KS_UNSCHEDULABLE, 4, 100 + k);
        ks_index_status(c, 2, &st);
    }
    cr_expect(c->groups.full);
    ks_index_synced(ix, c);

    /* a rebuild starts over */
    struct ks_snapshot v = version(5, 0, 5, NULL, 0);
    ks_index_observe(ix, &v);
    cr_assert_eq(ks_index_pending(ix, c, 10, &pos), KS_INDEX_REBUILD);
    cr_expect(!c->groups.full);
    cr_expect_eq(c->groups.n, 0u);
    cr_expect_eq(c->groups.of[1], KS_INDEX_NO_GROUP);
    ks_index_destroy(ix);
}
