/*
 * test_toleration.c - tolerations against taints (api/toleration.c).
 *
 * Cases follow upstream's core/v1/toleration_test.go (TestTolerationToleratesTaint, the
 * Equal/Exists rows) and component-helpers scheduling/corev1/helpers_test.go
 * (TestFindMatchingUntoleratedTaint), plus the empty-key and empty-effect rules.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "fakes/objects.h"
#include "ksched/base/intern.h"

static void setup(void)
{
    cr_assert(eq(int, ks_api_init(), 0));
}

TestSuite(toleration, .init = setup);

struct tol_case {
    const char *what;
    struct {
        const char *key, *op, *value, *effect;
    } tol;
    const char *taint;
    bool want;
};

static void check(const struct tol_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct tol_case *c = &cases[i];
        struct ks_toleration tol = ks_fake_toleration(c->tol.key, c->tol.op, c->tol.value, c->tol.effect);
        struct ks_taint taint = ks_fake_taint(c->taint);
        cr_assert(eq(int, ks_toleration_tolerates(&tol, &taint), c->want), "%s", c->what);
    }
}

Test(toleration, upstream_tolerates_taint)
{
    static const struct tol_case cases[] = {
        {"same key and effect, Exists, taint without value",
         {"foo", "Exists", "", "NoSchedule"},
         "foo:NoSchedule",
         true},
        {"same key and effect, Exists, taint with a value",
         {"foo", "Exists", "", "NoSchedule"},
         "foo=bar:NoSchedule",
         true},
        {"empty key with Exists matches every key",
         {"", "Exists", "", "NoSchedule"},
         "foo=bar:NoSchedule",
         true},
        {"same key, effect and value, Equal",
         {"foo", "Equal", "bar", "NoSchedule"},
         "foo=bar:NoSchedule",
         true},
        {"same key and effect, other value, Equal",
         {"foo", "Equal", "value1", "NoSchedule"},
         "foo=value2:NoSchedule",
         false},
        {"same key and value, other effect, Equal",
         {"foo", "Equal", "bar", "NoSchedule"},
         "foo=bar:NoExecute",
         false},
    };
    check(cases, sizeof(cases) / sizeof(cases[0]));
}

Test(toleration, effect_key_and_operator_rules)
{
    static const struct tol_case cases[] = {
        {"empty effect matches NoSchedule", {"foo", "Equal", "bar", ""}, "foo=bar:NoSchedule", true},
        {"empty effect matches PreferNoSchedule",
         {"foo", "Equal", "bar", ""},
         "foo=bar:PreferNoSchedule",
         true},
        {"empty effect matches NoExecute", {"foo", "Equal", "bar", ""}, "foo=bar:NoExecute", true},
        {"empty key and effect with Exists tolerates everything",
         {"", "Exists", "", ""},
         "any=thing:NoExecute",
         true},
        {"empty operator means Equal", {"foo", "", "bar", "NoSchedule"}, "foo=bar:NoSchedule", true},
        {"empty operator means Equal, other value",
         {"foo", "", "bar", "NoSchedule"},
         "foo=baz:NoSchedule",
         false},
        {"Equal with empty value matches an empty taint value",
         {"foo", "Equal", "", "NoSchedule"},
         "foo:NoSchedule",
         true},
        {"Equal with empty value does not match a value",
         {"foo", "Equal", "", "NoSchedule"},
         "foo=bar:NoSchedule",
         false},
        {"other key", {"foo", "Exists", "", ""}, "bar:NoSchedule", false},
        {"PreferNoSchedule toleration does not cover NoSchedule",
         {"foo", "Exists", "", "PreferNoSchedule"},
         "foo:NoSchedule",
         false},
        /* Validation forbids an empty key with Equal, but ToleratesTaint itself only compares values. */
        {"empty key with Equal compares values only", {"", "Equal", "bar", ""}, "foo=bar:NoSchedule", true},
        {"empty key with Equal, other value", {"", "Equal", "bar", ""}, "foo=baz:NoSchedule", false},
    };
    check(cases, sizeof(cases) / sizeof(cases[0]));
}

static bool always(enum ks_taint_effect e)
{
    (void)e;
    return true;
}

static bool never(enum ks_taint_effect e)
{
    (void)e;
    return false;
}

static bool no_execute(enum ks_taint_effect e)
{
    return e == KS_EFFECT_NO_EXECUTE;
}

/* The filter TaintToleration's Filter uses. */
static bool schedule_or_execute(enum ks_taint_effect e)
{
    return e == KS_EFFECT_NO_SCHEDULE || e == KS_EFFECT_NO_EXECUTE;
}

Test(toleration, upstream_find_matching_untolerated_taint)
{
    struct ks_toleration foo_ns = ks_fake_toleration("foo", "Exists", "", "NoSchedule");
    struct ks_toleration foo_ne = ks_fake_toleration("foo", "Exists", "", "NoExecute");

    /* empty tolerations tolerate empty taints */
    cr_assert(eq(ptr, (void *)ks_find_untolerated_taint(NULL, 0, NULL, 0, always), NULL));
    /* non-empty tolerations tolerate empty taints */
    cr_assert(eq(ptr, (void *)ks_find_untolerated_taint(NULL, 0, &foo_ns, 1, always), NULL));

    /* tolerations match all taints */
    struct ks_taint foo = ks_fake_taint("foo:NoSchedule");
    cr_assert(eq(ptr, (void *)ks_find_untolerated_taint(&foo, 1, &foo_ns, 1, always), NULL));

    /* tolerations don't match taints, but no taints apply to the filter */
    struct ks_taint bar = ks_fake_taint("bar:NoSchedule");
    cr_assert(eq(ptr, (void *)ks_find_untolerated_taint(&bar, 1, &foo_ns, 1, never), NULL));

    /* no filter: every taint applies; the untolerated one is returned */
    cr_assert(eq(ptr, (void *)ks_find_untolerated_taint(&bar, 1, &foo_ns, 1, NULL), &bar));

    /* tolerations match the taints the filter keeps */
    struct ks_taint two[] = {ks_fake_taint("foo:NoExecute"), ks_fake_taint("bar:NoSchedule")};
    cr_assert(eq(ptr, (void *)ks_find_untolerated_taint(two, 2, &foo_ne, 1, no_execute), NULL));
    cr_assert(eq(ptr, (void *)ks_find_untolerated_taint(two, 2, &foo_ne, 1, NULL), &two[1]));
}

Test(toleration, returns_the_first_untolerated_taint_in_order)
{
    struct ks_taint taints[] = {
        ks_fake_taint("key1=val:NoSchedule"),
        ks_fake_taint("soft=x:PreferNoSchedule"),
        ks_fake_taint("key2=val:NoExecute"),
        ks_fake_taint("key3=val:NoSchedule"),
    };
    struct ks_toleration only_key1 = ks_fake_toleration("key1", "Equal", "val", "NoSchedule");
    struct ks_toleration both[] = {only_key1, ks_fake_toleration("key2", "Equal", "val", "NoExecute")};

    cr_assert(eq(ptr, (void *)ks_find_untolerated_taint(taints, 4, &only_key1, 1, schedule_or_execute),
                 &taints[2]));
    cr_assert(
        eq(ptr, (void *)ks_find_untolerated_taint(taints, 4, both, 2, schedule_or_execute), &taints[3]));
    /* PreferNoSchedule only counts without a filter */
    cr_assert(eq(ptr, (void *)ks_find_untolerated_taint(taints, 4, &only_key1, 1, NULL), &taints[1]));
    cr_assert(
        eq(ptr, (void *)ks_find_untolerated_taint(taints, 4, NULL, 0, schedule_or_execute), &taints[0]));

    struct ks_toleration all = ks_fake_toleration("", "Exists", "", "");
    cr_assert(eq(ptr, (void *)ks_find_untolerated_taint(taints, 4, &all, 1, NULL), NULL));
}

Test(toleration, works_on_a_fake_pod_and_node)
{
    struct ks_node *node = ks_fake_node("n1", "zone=a");
    ks_fake_node_taints(node, "dedicated=gpu:NoSchedule, node.kubernetes.io/unreachable:NoExecute");
    struct ks_pod *pod = ks_fake_pod("default", "p");
    ks_fake_pod_toleration(pod, ks_fake_toleration("dedicated", "Equal", "gpu", "NoSchedule"));

    const struct ks_taint *t = ks_find_untolerated_taint(node->taints, node->ntaints, pod->tolerations,
                                                         pod->ntolerations, schedule_or_execute);
    cr_assert(eq(ptr, (void *)t, &node->taints[1]));
    cr_assert(eq(str, (char *)ks_intern_str(t->key), "node.kubernetes.io/unreachable"));

    ks_fake_pod_toleration(pod,
                           ks_fake_toleration("node.kubernetes.io/unreachable", "Exists", "", "NoExecute"));
    cr_assert(eq(ptr,
                 (void *)ks_find_untolerated_taint(node->taints, node->ntaints, pod->tolerations,
                                                   pod->ntolerations, schedule_or_execute),
                 NULL));
    ks_pod_destroy(pod);
    ks_node_destroy(node);
}
