/*
 * test_selector.c - label lookup, label selectors and node selectors (api/selector.c).
 *
 * Cases follow upstream's tables: labels/selector_test.go (TestSelectorMatches,
 * TestRequirementMatches-style set operators), nodeaffinity/nodeaffinity_test.go
 * (TestNodeSelectorMatch, TestPodMatchesNodeSelectorAndAffinityTerms,
 * TestPreferredSchedulingTermsScore) plus the edge cases of strconv.ParseInt for Gt/Lt.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <stdio.h>
#include <string.h>

#include "fakes/objects.h"
#include "ksched/base/intern.h"

static struct ks_arena arena;

static void setup(void)
{
    cr_assert(eq(int, ks_api_init(), 0));
}

static void teardown(void)
{
    ks_arena_destroy(&arena);
}

TestSuite(selector, .init = setup, .fini = teardown);

static uint32_t id(const char *s)
{
    return ks_intern(s);
}

/* ---- labels ---- */

Test(selector, labels_get_finds_present_keys_only)
{
    struct ks_labels l = ks_fake_labels(&arena, "zone=a, app=web, tier=, kubernetes.io/hostname=n1");
    uint32_t v = 12345;
    cr_assert(ks_labels_get(&l, id("app"), &v));
    cr_assert(eq(u32, v, id("web")));
    cr_assert(ks_labels_get(&l, id("tier"), &v));
    cr_assert(eq(u32, v, KS_ID_EMPTY));
    cr_assert(ks_labels_get(&l, id("kubernetes.io/hostname"), NULL));
    cr_assert(not(ks_labels_get(&l, id("region"), &v)));
    cr_assert(not(ks_labels_get(&l, id("web"), &v)), "values are not keys");

    struct ks_labels empty = {0};
    cr_assert(not(ks_labels_get(&empty, id("app"), &v)));
}

Test(selector, labels_get_on_many_keys)
{
    char spec[4096] = "";
    for (int i = 0; i < 200; i += 2) {
        char kv[32];
        snprintf(kv, sizeof(kv), "%sk%d=v%d", i ? "," : "", i, i);
        strcat(spec, kv);
    }
    struct ks_labels l = ks_fake_labels(&arena, spec);
    for (int i = 0; i < 200; i++) {
        char k[16], want[16];
        snprintf(k, sizeof(k), "k%d", i);
        snprintf(want, sizeof(want), "v%d", i);
        uint32_t v;
        bool found = ks_labels_get(&l, id(k), &v);
        cr_assert(eq(int, found, i % 2 == 0), "key %s", k);
        if (found)
            cr_assert(eq(u32, v, id(want)), "key %s", k);
    }
}

/* ---- label selectors (metav1.LabelSelector) ---- */

struct sel_case {
    const char *selector;
    const char *labels;
    bool want;
};

static void check_label_selector_cases(const struct sel_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct ks_label_selector *sel = ks_fake_selector(&arena, cases[i].selector);
        struct ks_labels l = ks_fake_labels(&arena, cases[i].labels);
        cr_assert(eq(int, ks_label_selector_matches(sel, &l), cases[i].want), "selector \"%s\" on {%s}",
                  cases[i].selector ? cases[i].selector : "(nil)", cases[i].labels);
    }
}

Test(selector, nil_selector_matches_nothing_and_empty_matches_everything)
{
    static const struct sel_case cases[] = {
        {NULL, "", false},
        {NULL, "a=b", false},
        {"", "", true},
        {"", "a=b,c=d", true},
    };
    check_label_selector_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

Test(selector, upstream_selector_matches)
{
    /* labels/selector_test.go TestSelectorMatches without the Gt/Lt rows (not label selector operators). */
    static const struct sel_case cases[] = {
        {"", "x=y", true},
        {"x=y", "x=y", true},
        {"x=y,z=w", "x=y,z=w", true},
        {"x!=y,z!=w", "x=z,z=a", true},
        {"notin=in", "notin=in", true},
        {"x", "x=z", true},
        {"!x", "y=z", true},
        {"x=z", "", false},
        {"x=y", "x=z", false},
        {"x=y,z=w", "x=w,z=w", false},
        {"x!=y,z!=w", "x=z,z=w", false},
        {"x", "y=z", false},
        {"!x", "x=z", false},
    };
    check_label_selector_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

Test(selector, set_operators)
{
    static const struct sel_case cases[] = {
        {"x in (y,z)", "x=y", true},
        {"x in (y,z)", "x=z", true},
        {"x in (y,z)", "x=w", false},
        {"x in (y,z)", "", false},
        {"x notin (y,z)", "x=w", true},
        {"x notin (y,z)", "x=y", false},
        /* NotIn is satisfied by an absent key, In is not. */
        {"x notin (y,z)", "a=b", true},
        {"x notin (y,z)", "", true},
        /* the empty string is a value like any other */
        {"x in (,y)", "x=", true},
        {"x=", "x=", true},
        {"x=", "x=y", false},
        {"x notin (a), y in (b), z, !w", "y=b,z=1", true},
        {"x notin (a), y in (b), z, !w", "y=b,z=1,w=2", false},
        {"x notin (a), y in (b), z, !w", "x=a,y=b,z=1", false},
        {"x, x notin (a,b)", "x=c", true},
        {"x, x in (a,b)", "x=c", false},
    };
    check_label_selector_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

Test(selector, requirements_upstream_cannot_build_match_nothing)
{
    static const struct sel_case cases[] = {
        /* In and NotIn need values */
        {"x in ()", "x=y", false},
        {"x notin ()", "x=y", false},
        {"x notin ()", "", false},
        /* Gt and Lt are not metav1.LabelSelector operators */
        {"x>1", "x=2", false},
        {"x<3", "x=2", false},
    };
    check_label_selector_cases(cases, sizeof(cases) / sizeof(cases[0]));

    /* Exists and DoesNotExist take no values. */
    struct ks_label_selector *sel = ks_fake_selector(&arena, "x");
    uint32_t v = id("y");
    sel->reqs[0].values = &v;
    sel->reqs[0].nvalues = 1;
    struct ks_labels l = ks_fake_labels(&arena, "x=y");
    cr_assert(not(ks_label_selector_matches(sel, &l)));
    sel->reqs[0].op = KS_OP_DOES_NOT_EXIST;
    struct ks_labels other = ks_fake_labels(&arena, "a=b");
    cr_assert(not(ks_label_selector_matches(sel, &other)));
}

/* ---- node selectors ---- */

static bool term_matches(const char *exprs, const char *fields, const char *labels, const char *node)
{
    struct ks_node_selector_term t = ks_fake_term(&arena, exprs, fields);
    struct ks_labels l = ks_fake_labels(&arena, labels);
    return ks_node_selector_term_matches(&t, &l, node ? id(node) : KS_ID_EMPTY);
}

Test(selector, gt_lt_compare_label_values_as_integers)
{
    static const struct {
        const char *expr;
        const char *labels;
        bool want;
    } cases[] = {
        /* labels/selector_test.go */
        {"x>1", "x=2", true},
        {"x<1", "x=0", true},
        {"x>1", "x=0", false},
        {"x<1", "x=2", false},
        {"x>1", "x=1", false},
        {"x<1", "x=1", false},
        {"x>1", "y=2", false},
        /* nodeaffinity_test.go: two-digit major and minor version */
        {"kernel-version>0204", "kernel-version=0206", true},
        {"kernel-version<0204", "kernel-version=0206", false},
        /* strconv.ParseInt(value, 10, 64) on the node's value */
        {"x>-5", "x=-3", true},
        {"x<0", "x=-1", true},
        {"x>4", "x=+5", true},
        {"x>-1", "x=-0", true},
        {"x>1", "x=2a", false},
        {"x<100", "x=1.5", false},
        {"x>1", "x=", false},
        {"x<100", "x=+", false},
        {"x<100", "x=-", false},
        {"x<100", "x=0x10", false},
        {"x<100", "x=1_000", false},
        {"x>1", "x=high", false},
        {"x>9223372036854775806", "x=9223372036854775807", true},
        {"x<0", "x=9223372036854775808", false},
        {"x<0", "x=-9223372036854775808", true},
        {"x>0", "x=-9223372036854775809", false},
        {"x>0", "x=99999999999999999999", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        cr_assert(eq(int, term_matches(cases[i].expr, NULL, cases[i].labels, "n1"), cases[i].want),
                  "\"%s\" on {%s}", cases[i].expr, cases[i].labels);
}

Test(selector, term_expressions_are_anded)
{
    /* nodeaffinity_test.go: multiple matchExpressions ANDed */
    cr_assert(term_matches("GPU, GPU notin (AMD,INTER)", NULL, "GPU=NVIDIA-GRID-K1", "n1"));
    cr_assert(not(term_matches("GPU, GPU in (AMD,INTER)", NULL, "GPU=NVIDIA-GRID-K1", "n1")));
    cr_assert(term_matches("mem-type notin (DDR,DDR2)", NULL, "mem-type=DDR3", "n1"));
    cr_assert(term_matches("GPU", NULL, "GPU=NVIDIA-GRID-K1", "n1"));
    cr_assert(term_matches("foo in (bar,value2)", NULL, "foo=bar", "n1"));
    cr_assert(not(term_matches("foo in (value1,value2)", NULL, "foo=bar", "n1")));
    cr_assert(term_matches("foo notin (bar)", NULL, "", "n1"), "NotIn holds on a missing label");
    cr_assert(term_matches("!foo", NULL, "bar=1", "n1"));
}

Test(selector, empty_term_matches_nothing)
{
    cr_assert(not(term_matches(NULL, NULL, "foo=bar", "n1")));
    cr_assert(not(term_matches("", "", "", "n1")));
}

Test(selector, match_fields_compare_the_node_name)
{
    cr_assert(term_matches(NULL, "metadata.name in (node_1)", "", "node_1"));
    cr_assert(not(term_matches(NULL, "metadata.name in (node_1)", "", "node_2")));
    cr_assert(term_matches(NULL, "metadata.name notin (node_1)", "", "node_2"));
    cr_assert(not(term_matches(NULL, "metadata.name notin (node_1)", "", "node_1")));
    cr_assert(term_matches(NULL, "metadata.name=node_1", "", "node_1"));
    cr_assert(term_matches(NULL, "metadata.name!=node_1", "", "node_2"));
    /* one term: fields do not match, expressions do */
    cr_assert(not(term_matches("foo in (bar)", "metadata.name in (node_1)", "foo=bar", "node_2")));
    /* one term: both match */
    cr_assert(term_matches("foo in (bar)", "metadata.name in (node_1)", "foo=bar", "node_1"));
    /* node matches the fields but not the labels */
    cr_assert(not(term_matches("label_1 in (label_1_val)", "metadata.name in (host_1)", "", "host_1")));
    cr_assert(term_matches("label_1 in (label_1_val)", "metadata.name in (host_1)", "label_1=label_1_val",
                           "host_1"));
}

Test(selector, match_fields_edge_cases)
{
    /* In or NotIn with other than one value cannot be built: the term never matches. */
    cr_assert(not(term_matches(NULL, "metadata.name in (host_1,host_2)", "", "host_1")));
    cr_assert(not(term_matches(NULL, "metadata.name notin (host_1,host_2)", "", "host_3")));
    cr_assert(not(term_matches(NULL, "metadata.name in ()", "", "host_1")));
    /* Only In and NotIn are field operators. */
    cr_assert(not(term_matches(NULL, "metadata.name", "", "host_1")));
    cr_assert(not(term_matches(NULL, "!metadata.name", "", "host_1")));
    /* Unknown fields read as "". */
    cr_assert(not(term_matches(NULL, "spec.unschedulable in (false)", "", "host_1")));
    cr_assert(term_matches(NULL, "spec.unschedulable notin (false)", "", "host_1"));
    cr_assert(term_matches(NULL, "spec.unschedulable=", "", "host_1"));
    /* A node without a name has no fields, and upstream then ignores matchFields. */
    cr_assert(term_matches(NULL, "metadata.name in (host_1)", "", NULL));
    cr_assert(not(term_matches("foo", "metadata.name in (host_1)", "", NULL)));
    /* ... but still rejects malformed ones. */
    cr_assert(not(term_matches(NULL, "metadata.name in (a,b)", "", NULL)));
}

Test(selector, malformed_expressions_fail_the_term)
{
    cr_assert(not(term_matches("foo in ()", NULL, "foo=bar", "n1")));
    cr_assert(not(term_matches("foo notin ()", NULL, "foo=bar", "n1")));
    cr_assert(not(term_matches("foo in ()", "metadata.name in (n1)", "foo=bar", "n1")));
}

static bool selector_matches(struct ks_node_selector *sel, const char *labels, const char *node)
{
    struct ks_labels l = ks_fake_labels(&arena, labels);
    return ks_node_selector_matches(sel, &l, id(node));
}

Test(selector, node_selector_ors_terms)
{
    struct ks_node_selector *two =
        KS_FAKE_NODE_SELECTOR(&arena, {"foo in (bar,value2)", NULL}, {"diffkey in (wrong,value2)", NULL});
    cr_assert(selector_matches(two, "foo=bar", "n1"));
    cr_assert(selector_matches(two, "diffkey=wrong", "n1"));
    cr_assert(not(selector_matches(two, "foo=baz", "n1")));

    /* TestNodeSelectorMatch "second term matches" */
    struct ks_node_selector *second = KS_FAKE_NODE_SELECTOR(&arena, {"label_1 in (label_1_val)", NULL},
                                                            {NULL, "metadata.name in (host_1)"});
    cr_assert(selector_matches(second, "", "host_1"));

    /* two terms: fields miss, expressions hit; both miss */
    struct ks_node_selector *fe =
        KS_FAKE_NODE_SELECTOR(&arena, {NULL, "metadata.name in (node_1)"}, {"foo in (bar)", NULL});
    cr_assert(selector_matches(fe, "foo=bar", "node_2"));
    struct ks_node_selector *none = KS_FAKE_NODE_SELECTOR(&arena, {NULL, "metadata.name in (node_1)"},
                                                          {"foo in (not-match-to-bar)", NULL});
    cr_assert(not(selector_matches(none, "foo=bar", "node_2")));
}

Test(selector, node_selector_without_terms_matches_nothing)
{
    struct ks_node_selector *empty = ks_fake_node_selector(&arena, 0, NULL);
    cr_assert(not(selector_matches(empty, "foo=bar", "n1")));
    cr_assert(not(ks_node_selector_matches(NULL, &(struct ks_labels){0}, id("n1"))));
    /* a term with empty matchExpressions is skipped, so nothing matches */
    struct ks_node_selector *empty_term = KS_FAKE_NODE_SELECTOR(&arena, {"", NULL});
    cr_assert(not(selector_matches(empty_term, "foo=bar", "n1")));
}

Test(selector, malformed_term_does_not_hide_a_matching_term)
{
    /* LazyErrorNodeSelector: a term with parse errors is skipped, the others still count. */
    struct ks_node_selector *sel =
        KS_FAKE_NODE_SELECTOR(&arena, {NULL, "metadata.name in (host_1,host_2)"},
                              {"label_1 in (label_1_val)", "metadata.name in (host_1)"}, {"x in ()", NULL});
    cr_assert(selector_matches(sel, "label_1=label_1_val", "host_1"));
    cr_assert(not(selector_matches(sel, "", "host_1")));
}

Test(selector, preferred_terms_score_sums_matching_weights)
{
    /* TestPreferredSchedulingTermsScore "first and third term match": 5 + 11 */
    struct ks_preferred_term terms[] = {
        {5, ks_fake_term(&arena, NULL, "metadata.name in (host_1)")},
        {7, ks_fake_term(&arena, "unknown_label in (unknown_label_val)", NULL)},
        {11, ks_fake_term(&arena, "label_1 in (label_1_val)", NULL)},
    };
    struct ks_labels l = ks_fake_labels(&arena, "label_1=label_1_val");
    int64_t score = 0;
    for (size_t i = 0; i < sizeof(terms) / sizeof(terms[0]); i++) {
        if (ks_node_selector_term_matches(&terms[i].term, &l, id("host_1")))
            score += terms[i].weight;
    }
    cr_assert(eq(i64, score, 16));
}
