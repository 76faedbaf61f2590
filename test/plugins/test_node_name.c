/*
 * test_node_name.c - the NodeName plugin (plugins/node_name.c).
 *
 * Cases from upstream's nodename/node_name_test.go (TestNodeName).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "ksched/registry.h"
#include "plugin_fixtures.h"

TestSuite(nodename);

Test(nodename, upstream_filter)
{
    static const struct {
        const char *name;
        const char *pod_node; /* spec.nodeName, "" when not set */
        const char *node;
        int want;
    } cases[] = {
        {"no host specified", "", "foo", KS_SUCCESS},
        {"host matches", "foo", "foo", KS_SUCCESS},
        {"host doesn't match", "bar", "foo", KS_UNSCHEDULABLE_AND_UNRESOLVABLE},
    };
    const struct ks_plugin *p = &ks_plugin_node_name;
    void *self = fx_init(p, NULL);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ks_pod *pod = fx_done(ks_fake_pod("default", "pod"));
        pod->node_name = ks_intern(cases[i].pod_node);
        struct ks_node *node = fx_node(cases[i].node, NULL);
        struct ks_node_snap *snap = fx_snap(node, NULL, 0);
        struct ks_cycle_state cs;
        struct ks_status st = {0};
        fx_cs_init(&cs);

        int code = p->filter(self, &cs, pod, snap, &st);
        cr_expect(eq(int, code, cases[i].want), "%s", cases[i].name);
        if (code != KS_SUCCESS) {
            cr_expect(eq(int, st.code, cases[i].want), "%s", cases[i].name);
            cr_expect(eq(u32, st.nreasons, 1), "%s", cases[i].name);
            cr_expect(eq(str, (char *)fx_reason(&st, 0), "node(s) didn't match the requested node name"),
                      "%s", cases[i].name);
        }
        fx_cs_free(&cs);
        fx_snap_free(snap);
        ks_node_destroy(node);
        ks_pod_destroy(pod);
    }
    p->destroy(self);
}
