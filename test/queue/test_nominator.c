/*
 * test_nominator.c - nominations: replace, remove by name, per-node listing with references.
 */
#include <criterion/criterion.h>

#include "fakes/objects.h"
#include "ksched/api.h"
#include "ksched/intern.h"
#include "ksched/nominator.h"

Test(nominator, add_replace_remove_and_list)
{
    cr_assert_eq(ks_api_init(), 0);
    struct ks_nominator *n;
    cr_assert_eq(ks_nominator_create(&n), 0);
    struct ks_pod *a = ks_fake_pod_done(ks_fake_pod("default", "a"));
    struct ks_pod *b = ks_fake_pod_done(ks_fake_pod("default", "b"));
    struct ks_pod *a2 = ks_fake_pod_done(ks_fake_pod("default", "a"));
    a->refs = b->refs = a2->refs = 1;
    uint32_t n1 = ks_intern("n1"), n2 = ks_intern("n2");

    cr_expect_eq(ks_nominator_count(n), 0);
    cr_assert_eq(ks_nominator_add(n, a, n1), 0);
    cr_assert_eq(ks_nominator_add(n, b, n1), 0);
    cr_expect_eq(ks_nominator_count(n), 2);
    cr_expect_eq(ks_nominator_node(n, a), n1);
    /* a new object of the same pod moves the nomination */
    cr_assert_eq(ks_nominator_add(n, a2, n2), 0);
    cr_expect_eq(ks_nominator_count(n), 2);
    cr_expect_eq(ks_nominator_node(n, a), n2);

    const struct ks_pod *out[4];
    cr_expect_eq(ks_nominator_pods(n, n1, out, 4), 1);
    cr_expect_eq(out[0], b);
    cr_expect_eq(b->refs, 3, "the nominator's and the listing's references");
    ks_pod_put(out[0]);
    cr_expect_eq(ks_nominator_pods(n, n2, out, 0), 1, "the count even with no room");

    ks_nominator_remove(n, b);
    cr_expect_eq(ks_nominator_node(n, b), KS_ID_EMPTY);
    cr_expect_eq(b->refs, 1);
    cr_expect_eq(ks_nominator_count(n), 1);
    ks_nominator_destroy(n);
    cr_expect_eq(a2->refs, 1);
    ks_pod_put(a);
    ks_pod_put(b);
    ks_pod_put(a2);
}
