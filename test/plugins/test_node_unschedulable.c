/*
 * test_node_unschedulable.c - the NodeUnschedulable plugin (plugins/node_unschedulable.c).
 *
 * Cases from upstream's nodeunschedulable/node_unschedulable_test.go
 * (TestNodeUnschedulable), plus tolerations that do and do not match the taint.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "ksched/registry.h"
#include "plugin_fixtures.h"

TestSuite(nodeunschedulable);

struct case_ {
    const char *name;
    bool unschedulable;
    struct {
        const char *key, *op, *value, *effect;
    } tol; /* key NULL: no toleration */
    int want;
};

static void run(const struct case_ *c)
{
    const struct ks_plugin *p = &ks_plugin_node_unschedulable;
    void *self = fx_init(p, NULL);
    struct ks_pod *pod = fx_done(ks_fake_pod("default", "pod"));
    if (c->tol.key)
        ks_fake_pod_toleration(pod, ks_fake_toleration(c->tol.key, c->tol.op, c->tol.value, c->tol.effect));
    struct ks_node *node = fx_node("node", NULL);
    node->unschedulable = c->unschedulable;
    struct ks_node_snap *snap = fx_snap(node, NULL, 0);
    struct ks_cycle_state cs;
    struct ks_status st = {0};
    fx_cs_init(&cs);

    int code = p->filter(self, &cs, pod, snap, &st);
    cr_expect(eq(int, code, c->want), "%s", c->name);
    if (code != KS_SUCCESS) {
        cr_expect(eq(int, st.code, c->want), "%s", c->name);
        cr_expect(eq(str, (char *)fx_reason(&st, 0), "node(s) were unschedulable"), "%s", c->name);
    }
    fx_cs_free(&cs);
    fx_snap_free(snap);
    ks_node_destroy(node);
    ks_pod_destroy(pod);
    p->destroy(self);
}

Test(nodeunschedulable, upstream_filter)
{
    static const struct case_ cases[] = {
        {"Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)",
         true,
         {NULL, NULL, NULL, NULL},
         KS_UNSCHEDULABLE_AND_UNRESOLVABLE},
        {"Schedule pod to normal node", false, {NULL, NULL, NULL, NULL}, KS_SUCCESS},
        {"Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)",
         true,
         {"node.kubernetes.io/unschedulable", "", "", "NoSchedule"},
         KS_SUCCESS},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run(&cases[i]);
}

Test(nodeunschedulable, toleration_must_match_the_taint)
{
    static const struct case_ cases[] = {
        {"Exists with an empty key tolerates every taint", true, {"", "Exists", "", ""}, KS_SUCCESS},
        {"the key with any effect", true, {"node.kubernetes.io/unschedulable", "Exists", "", ""}, KS_SUCCESS},
        {"the key with another effect",
         true,
         {"node.kubernetes.io/unschedulable", "Exists", "", "NoExecute"},
         KS_UNSCHEDULABLE_AND_UNRESOLVABLE},
        {"Equal with a value the taint does not have",
         true,
         {"node.kubernetes.io/unschedulable", "Equal", "yes", "NoSchedule"},
         KS_UNSCHEDULABLE_AND_UNRESOLVABLE},
        {"another key",
         true,
         {"node.kubernetes.io/not-ready", "Exists", "", ""},
         KS_UNSCHEDULABLE_AND_UNRESOLVABLE},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run(&cases[i]);
}
