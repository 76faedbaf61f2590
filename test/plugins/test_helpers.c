/*
 * test_helpers.c - the shared plugin helpers (plugins/helpers/helper_*.c).
 *
 * Cases from upstream's helper/normalize_score_test.go (TestDefaultNormalizeScore) and
 * noderesources/requested_to_capacity_ratio_test.go (TestBrokenLinearFunction), plus
 * extended resource names as v1helper.IsExtendedResourceName classifies them.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "ksched/api.h"
#include "ksched/plugin_helpers.h"

TestSuite(pluginhelpers);

Test(pluginhelpers, upstream_default_normalize_score)
{
    static const struct {
        bool reverse;
        int64_t scores[4], want[4];
    } cases[] = {
        {false, {1, 2, 3, 4}, {25, 50, 75, 100}},    {true, {1, 2, 3, 4}, {75, 50, 25, 0}},
        {false, {1000, 10, 20, 30}, {100, 1, 2, 3}}, {true, {1000, 10, 20, 30}, {0, 99, 98, 97}},
        {false, {1, 1, 1, 1}, {100, 100, 100, 100}}, {false, {1000, 1, 1, 1}, {100, 0, 0, 0}},
        {true, {0, 1, 1, 1}, {100, 0, 0, 0}},        {false, {0, 0, 0, 0}, {0, 0, 0, 0}},
        {true, {0, 0, 0, 0}, {100, 100, 100, 100}},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        int64_t s[4];
        for (int i = 0; i < 4; i++)
            s[i] = cases[c].scores[i];
        ks_default_normalize_score(100, cases[c].reverse, s, 4);
        for (int i = 0; i < 4; i++)
            cr_expect(eq(i64, s[i], cases[c].want[i]), "case_%zu[%d]", c, i);
    }
}

Test(pluginhelpers, normalize_no_scores)
{
    ks_default_normalize_score(100, true, NULL, 0);
}

Test(pluginhelpers, normalize_ops_are_the_default_normalization)
{
    int64_t fwd[4] = {1000, 10, 20, 30}, rev[4] = {1000, 10, 20, 30};
    const int64_t want_fwd[4] = {100, 1, 2, 3}, want_rev[4] = {0, 99, 98, 97};
    struct ks_status st = {0};
    cr_assert(eq(int, ks_normalize_score_default(NULL, NULL, NULL, NULL, fwd, 4, &st), KS_SUCCESS));
    cr_assert(eq(int, ks_normalize_score_reverse(NULL, NULL, NULL, NULL, rev, 4, &st), KS_SUCCESS));
    for (int i = 0; i < 4; i++) {
        cr_expect(eq(i64, fwd[i], want_fwd[i]), "default[%d]", i);
        cr_expect(eq(i64, rev[i], want_rev[i]), "reverse[%d]", i);
    }
}

Test(pluginhelpers, status_reject_sets_one_reason)
{
    struct ks_status st = {.code = KS_SUCCESS, .plugin = 3, .nreasons = 2};
    cr_assert(eq(int, ks_status_reject(&st, KS_UNSCHEDULABLE, 42), KS_UNSCHEDULABLE));
    cr_expect(eq(int, st.code, KS_UNSCHEDULABLE));
    cr_expect(eq(u16, st.nreasons, 1));
    cr_expect(eq(u32, st.reasons[0], 42));
    cr_expect(eq(u16, st.plugin, 3), "the framework stamps the plugin, not the helper");
}

Test(pluginhelpers, upstream_broken_linear_function)
{
    static const struct ks_fn_point s1[] = {{10, 1}, {90, 9}};
    static const struct ks_fn_point s2[] = {{0, 2}, {40, 10}, {100, 0}};
    static const struct ks_fn_point s3[] = {{0, 2}, {40, 2}, {100, 2}};
    static const struct {
        const struct ks_fn_point *shape;
        uint32_t n;
        int64_t p, want;
    } cases[] = {
        {s1, 2, -10, 1}, {s1, 2, 0, 1},   {s1, 2, 9, 1},   {s1, 2, 10, 1},  {s1, 2, 15, 1},  {s1, 2, 19, 1},
        {s1, 2, 20, 2},  {s1, 2, 89, 8},  {s1, 2, 90, 9},  {s1, 2, 99, 9},  {s1, 2, 100, 9}, {s1, 2, 110, 9},
        {s2, 3, -10, 2}, {s2, 3, 0, 2},   {s2, 3, 20, 6},  {s2, 3, 30, 8},  {s2, 3, 40, 10}, {s2, 3, 70, 5},
        {s2, 3, 100, 0}, {s2, 3, 110, 0}, {s3, 3, -10, 2}, {s3, 3, 0, 2},   {s3, 3, 20, 2},  {s3, 3, 30, 2},
        {s3, 3, 40, 2},  {s3, 3, 70, 2},  {s3, 3, 100, 2}, {s3, 3, 110, 2},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
        cr_expect(eq(i64, ks_broken_linear(cases[c].shape, cases[c].n, cases[c].p), cases[c].want), "p=%lld",
                  (long long)cases[c].p);
}

Test(pluginhelpers, extended_resource_names)
{
    static const struct {
        const char *name;
        bool want;
    } cases[] = {
        {"example.com/aaa", true},
        {"nvidia.com/gpu", true},
        {"cpu", false},
        {"hugepages-2Mi", false},
        {"kubernetes.io/something", false},
        {"subdomain.kubernetes.io/something", false},
        {"requests.example.com/foo", false},
        {"example.com/a/b", false},
        {"Example.com/foo", false},
        {"example.com/", false},
        {"/foo", false},
        {"example.com/-foo", false},
        {"example.com/foo_bar.baz", true},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
        cr_expect(eq(int, ks_is_extended_resource_name(cases[c].name), cases[c].want), "%s", cases[c].name);
}
