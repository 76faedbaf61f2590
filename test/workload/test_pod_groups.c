/*
 * test_pod_groups.c - the scheduler's table of pod groups (workload/pod_groups.c): members by
 * namespace and podGroupName in joining order, a new version replacing the old, the object's
 * spec, and a group with neither pods nor an object dropped without losing the groups that
 * share its probe run.
 */
#include <criterion/criterion.h>

#include "../fakes/objects.h"
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/pod_groups.h"

#include <stdio.h>

static void setup(void)
{
    cr_assert_eq(ks_api_init(), 0);
}

TestSuite(pod_groups, .init = setup);

static struct ks_pod *member(const char *name, const char *group)
{
    struct ks_pod *p = ks_fake_pod("default", name);
    p->scheduling_group = group;
    return p;
}

Test(pod_groups, members_objects_and_dropping)
{
    struct ks_pod_groups *g;
    cr_assert_eq(ks_pod_groups_create(&g), 0);
    uint32_t ns = ks_intern("default");
    enum { N = 200 };
    struct ks_pod *pods[N];
    char name[16], group[16];
    /* many groups of two pods each: probe runs collide */
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof(name), "p%d", i);
        snprintf(group, sizeof(group), "g%d", i / 2);
        pods[i] = member(name, ks_intern_str(ks_intern(group)));
        cr_assert_eq(ks_pod_groups_add_pod(g, pods[i]), 0);
    }
    cr_expect_eq(ks_pod_groups_count(g), N / 2);
    struct ks_pod_group_state st;
    cr_assert(ks_pod_groups_state(g, ns, ks_intern("g7"), &st));
    cr_expect_eq(st.all_pods, 2u);
    cr_expect_not(st.exists);
    const struct ks_pod *out[4];
    cr_assert_eq(ks_pod_groups_members(g, ns, ks_intern("g7"), out, 4), 2u);
    cr_expect_eq(out[0], pods[14]);
    cr_expect_eq(out[1], pods[15]);
    ks_pod_put(out[0]);
    ks_pod_put(out[1]);

    /* the object comes and goes; a replaced version keeps its place */
    struct ks_pod_group pg = {.spec = {.policy = KS_POD_GROUP_GANG, .min_count = 2}};
    pg.meta.name = "g7";
    pg.meta.namespace_id = ns;
    cr_assert_eq(ks_pod_groups_set_object(g, NULL, &pg), 0);
    cr_assert(ks_pod_groups_state(g, ns, ks_intern("g7"), &st));
    cr_expect(st.exists);
    cr_expect_eq(st.spec.min_count, 2);
    struct ks_pod *again = member("p14", "g7");
    cr_assert_eq(ks_pod_groups_add_pod(g, again), 0);
    cr_assert_eq(ks_pod_groups_members(g, ns, ks_intern("g7"), out, 4), 2u);
    cr_expect_eq(out[0], again);
    ks_pod_put(out[0]);
    ks_pod_put(out[1]);

    /* every even group emptied: dropped, and every odd one still found */
    for (int i = 0; i < N; i++) {
        if ((i / 2) % 2 == 0)
            ks_pod_groups_delete_pod(g, pods[i]);
    }
    cr_expect_eq(ks_pod_groups_count(g), N / 4, "the emptied groups are gone");
    /* a group whose last pod leaves stays while its object exists, and goes with it */
    ks_pod_groups_delete_pod(g, again);
    ks_pod_groups_delete_pod(g, pods[15]);
    cr_expect_eq(ks_pod_groups_count(g), N / 4);
    cr_assert_eq(ks_pod_groups_set_object(g, &pg, NULL), 0);
    cr_expect_eq(ks_pod_groups_count(g), N / 4 - 1);
    cr_assert_eq(ks_pod_groups_add_pod(g, pods[15]), 0);
    for (int i = 1; i < N / 2; i += 2) {
        snprintf(group, sizeof(group), "g%d", i);
        if (i == 7)
            continue;
        cr_expect(ks_pod_groups_state(g, ns, ks_intern(group), &st), "%s lost", group);
        cr_expect_eq(st.all_pods, 2u, "%s", group);
    }
    ks_pod_groups_destroy(g);
    ks_pod_put(again);
    for (int i = 0; i < N; i++)
        ks_pod_put(pods[i]);
}
