/*
 * test_taint_toleration.c - the TaintToleration plugin (plugins/taint_toleration.c).
 *
 * Cases from upstream's tainttoleration/taint_toleration_test.go
 * (TestTaintTolerationScore, TestTaintTolerationFilter): Score runs PreScore, Score on
 * every node and NormalizeScore, as upstream's test does.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "ksched/registry.h"
#include "plugin_fixtures.h"

TestSuite(tainttoleration);

struct tol {
    const char *key, *op, *value, *effect;
};

#define MAX_TOLS  2
#define MAX_NODES 3

static struct ks_pod *pod_with(const struct tol *tols)
{
    struct ks_pod *pod = fx_done(ks_fake_pod("default", "pod1"));
    for (int i = 0; i < MAX_TOLS && tols[i].key; i++)
        ks_fake_pod_toleration(pod,
                               ks_fake_toleration(tols[i].key, tols[i].op, tols[i].value, tols[i].effect));
    return pod;
}

Test(tainttoleration, upstream_score)
{
    static const struct {
        const char *name;
        struct tol tols[MAX_TOLS];
        const char *taints[MAX_NODES]; /* NULL: no more nodes */
        int64_t want[MAX_NODES];
    } cases[] = {
        {"node with taints tolerated by the pod, gets a higher score than those node with intolerable taints",
         {{"foo", "Equal", "bar", "PreferNoSchedule"}},
         {"foo=bar:PreferNoSchedule", "foo=blah:PreferNoSchedule"},
         {100, 0}},
        {"the nodes that all of their taints are tolerated by the pod, get the same score, no matter how "
         "many "
         "tolerable taints a node has",
         {{"cpu-type", "Equal", "arm64", "PreferNoSchedule"},
          {"disk-type", "Equal", "ssd", "PreferNoSchedule"}},
         {"", "cpu-type=arm64:PreferNoSchedule",
          "cpu-type=arm64:PreferNoSchedule,disk-type=ssd:PreferNoSchedule"},
         {100, 100, 100}},
        {"the more intolerable taints a node has, the lower score it gets.",
         {{"foo", "Equal", "bar", "PreferNoSchedule"}},
         {"", "cpu-type=arm64:PreferNoSchedule",
          "cpu-type=arm64:PreferNoSchedule,disk-type=ssd:PreferNoSchedule"},
         {100, 50, 0}},
        {"only taints and tolerations that have effect PreferNoSchedule are checked by taints-tolerations "
         "priority "
         "function",
         {{"cpu-type", "Equal", "arm64", "NoSchedule"}, {"disk-type", "Equal", "ssd", "NoSchedule"}},
         {"", "cpu-type=arm64:NoSchedule", "cpu-type=arm64:PreferNoSchedule,disk-type=ssd:PreferNoSchedule"},
         {100, 100, 0}},
        {"Default behaviour No taints and tolerations, lands on node with no taints",
         {{NULL, NULL, NULL, NULL}},
         {"", "cpu-type=arm64:PreferNoSchedule"},
         {100, 0}},
        {"a toleration without effect tolerates PreferNoSchedule taints too",
         {{"foo", "Exists", "", ""}},
         {"foo=bar:PreferNoSchedule", "bar=foo:PreferNoSchedule"},
         {100, 0}},
    };
    const struct ks_plugin *p = &ks_plugin_taint_toleration;
    void *self = fx_init(p, NULL);
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        struct ks_pod *pod = pod_with(cases[c].tols);
        struct ks_node *nodes[MAX_NODES] = {0};
        struct ks_node_snap *snaps[MAX_NODES] = {0};
        int64_t scores[MAX_NODES] = {0};
        uint32_t n = 0;
        for (; n < MAX_NODES && cases[c].taints[n]; n++) {
            char name[16];
            snprintf(name, sizeof(name), "node%c", 'A' + n);
            nodes[n] = fx_node(name, NULL);
            ks_fake_node_taints(nodes[n], cases[c].taints[n]);
            snaps[n] = fx_snap(nodes[n], NULL, 0);
        }
        struct ks_cycle_state cs;
        struct ks_status st = {0};
        fx_cs_init(&cs);

        cr_assert(eq(int, p->pre_score(self, &cs, pod, (const struct ks_node_snap *const *)snaps, n, &st),
                     KS_SUCCESS));
        for (uint32_t i = 0; i < n; i++)
            cr_assert(eq(int, p->score(self, &cs, pod, snaps[i], &scores[i], &st), KS_SUCCESS));
        cr_assert(
            eq(int,
               p->normalize_score(self, &cs, pod, (const struct ks_node_snap *const *)snaps, scores, n, &st),
               KS_SUCCESS));
        for (uint32_t i = 0; i < n; i++)
            cr_expect(eq(i64, scores[i], cases[c].want[i]), "%s: node %u", cases[c].name, i);

        fx_cs_free(&cs);
        for (uint32_t i = 0; i < n; i++) {
            fx_snap_free(snaps[i]);
            ks_node_destroy(nodes[i]);
        }
        ks_pod_destroy(pod);
    }
    p->destroy(self);
}

Test(tainttoleration, score_without_pre_score_is_an_error)
{
    const struct ks_plugin *p = &ks_plugin_taint_toleration;
    void *self = fx_init(p, NULL);
    struct ks_pod *pod = fx_done(ks_fake_pod("default", "pod"));
    struct ks_node *node = fx_node("node", NULL);
    struct ks_node_snap *snap = fx_snap(node, NULL, 0);
    struct ks_cycle_state cs;
    struct ks_status st = {0};
    int64_t score = -1;
    fx_cs_init(&cs);

    cr_expect(eq(int, p->score(self, &cs, pod, snap, &score, &st), KS_ERROR));
    cr_expect(eq(str, (char *)fx_reason(&st, 0),
                 "failed to read \"PreScoreTaintToleration\" from cycleState: not found"));
    fx_cs_free(&cs);
    fx_snap_free(snap);
    ks_node_destroy(node);
    ks_pod_destroy(pod);
    p->destroy(self);
}

Test(tainttoleration, upstream_filter)
{
    static const struct {
        const char *name;
        struct tol tols[MAX_TOLS];
        const char *taints;
        const char *want; /* NULL: fits */
    } cases[] = {
        {"A pod having no tolerations can't be scheduled onto a node with nonempty taints",
         {{NULL, NULL, NULL, NULL}},
         "dedicated=user1:NoSchedule",
         "node(s) had untolerated taint {dedicated: user1}"},
        {"A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
         {{"dedicated", "", "user1", "NoSchedule"}},
         "dedicated=user1:NoSchedule",
         NULL},
        {"A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
         {{"dedicated", "Equal", "user2", "NoSchedule"}},
         "dedicated=user1:NoSchedule",
         "node(s) had untolerated taint {dedicated: user1}"},
        {"A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates the "
         "taints "
         "on the node",
         {{"foo", "Exists", "", "NoSchedule"}},
         "foo=bar:NoSchedule",
         NULL},
        {"A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, pod can be "
         "scheduled onto the node",
         {{"dedicated", "Equal", "user2", "NoSchedule"}, {"foo", "Exists", "", "NoSchedule"}},
         "dedicated=user2:NoSchedule,foo=bar:NoSchedule",
         NULL},
        {"A pod has a toleration that keys and values match the taint on the node, but (non-empty) effect "
         "doesn't match, can't be scheduled onto the node",
         {{"foo", "Equal", "bar", "PreferNoSchedule"}},
         "foo=bar:NoSchedule",
         "node(s) had untolerated taint {foo: bar}"},
        {"The pod has a toleration that keys and values match the taint on the node, the effect of "
         "toleration "
         "is empty, and the effect of taint is NoSchedule. Pod can be scheduled onto the node",
         {{"foo", "Equal", "bar", ""}},
         "foo=bar:NoSchedule",
         NULL},
        {"The pod has a toleration that key and value don't match the taint on the node, but the effect of "
         "taint on node is PreferNoSchedule. Pod can be scheduled onto the node",
         {{"dedicated", "Equal", "user2", "NoSchedule"}},
         "dedicated=user1:PreferNoSchedule",
         NULL},
        {"The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod can be "
         "scheduled "
         "onto the node",
         {{NULL, NULL, NULL, NULL}},
         "dedicated=user1:PreferNoSchedule",
         NULL},
        {"NoExecute taints filter too, and the first untolerated one in node order is reported",
         {{"a", "Exists", "", ""}},
         "a=1:NoSchedule,b=2:PreferNoSchedule,c=3:NoExecute,d=4:NoSchedule",
         "node(s) had untolerated taint {c: 3}"},
        {"A taint without a value",
         {{NULL, NULL, NULL, NULL}},
         "gpu:NoSchedule",
         "node(s) had untolerated taint {gpu: }"},
    };
    const struct ks_plugin *p = &ks_plugin_taint_toleration;
    void *self = fx_init(p, NULL);
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        struct ks_pod *pod = pod_with(cases[c].tols);
        struct ks_node *node = fx_node("nodeA", NULL);
        ks_fake_node_taints(node, cases[c].taints);
        struct ks_node_snap *snap = fx_snap(node, NULL, 0);
        struct ks_cycle_state cs;
        struct ks_status st = {0};
        fx_cs_init(&cs);

        int code = p->filter(self, &cs, pod, snap, &st);
        if (!cases[c].want) {
            cr_expect(eq(int, code, KS_SUCCESS), "%s", cases[c].name);
        } else {
            cr_expect(eq(int, code, KS_UNSCHEDULABLE_AND_UNRESOLVABLE), "%s", cases[c].name);
            cr_expect(eq(u32, st.nreasons, 1), "%s", cases[c].name);
            cr_expect(eq(str, (char *)fx_reason(&st, 0), (char *)cases[c].want), "%s", cases[c].name);
        }
        /* a record without interned messages reports the same text */
        const uint32_t *interned = snap->taint_reasons;
        struct ks_status st2 = {0};
        snap->taint_reasons = NULL;
        cr_expect(eq(int, p->filter(self, &cs, pod, snap, &st2), code), "%s", cases[c].name);
        if (cases[c].want)
            cr_expect(eq(str, (char *)fx_reason(&st2, 0), (char *)cases[c].want), "%s", cases[c].name);
        snap->taint_reasons = interned;

        fx_cs_free(&cs);
        fx_snap_free(snap);
        ks_node_destroy(node);
        ks_pod_destroy(pod);
    }
    p->destroy(self);
}
