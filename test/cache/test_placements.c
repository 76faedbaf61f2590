/*
 * test_placements.c - topology placements (workload/placement.c): the domains of a key in the
 * order of their values, the one a required value leaves, and the kept domains following the
 * snapshot - reused while nodes keep their values, read again when a node's label changes or a
 * node comes or goes.
 */
#include <criterion/criterion.h>

#include "../fakes/objects.h"
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/placement.h"

#include <stdio.h>
#include <string.h>

static void setup(void)
{
    cr_assert_eq(ks_api_init(), 0);
    ks_rcu_register_thread();
}

TestSuite(placements, .init = setup);

/* "value:node,node value:node" of the placements of @key in @c's snapshot. */
static void describe(struct ks_cache *c, struct ks_placement_set *ps, const char *key, const char *required,
                     char *buf, size_t len)
{
    cr_assert_geq(ks_cache_refresh(c), 0);
    ks_rcu_read_lock();
    cr_assert_eq(ks_placements_build(ks_cache_snapshot(c), ks_intern(key),
                                     required ? ks_intern(required) : KS_ID_NONE, ps),
                 0);
    size_t off = 0;
    buf[0] = '\0';
    for (uint32_t d = 0; d < ps->n; d++) {
        off += (size_t)snprintf(buf + off, len - off, "%s%s:", d ? " " : "", ks_intern_str(ps->value[d]));
        for (uint32_t i = ps->first[d]; i < ps->first[d + 1]; i++)
            off += (size_t)snprintf(buf + off, len - off, "%s%s", i > ps->first[d] ? "," : "",
                                    ks_intern_str(ps->names[i]));
    }
    ks_rcu_read_unlock();
}

Test(placements, domains_follow_the_nodes_labels)
{
    struct ks_cache *c;
    struct ks_placement_set ps = {0};
    char buf[256];
    cr_assert_eq(ks_cache_create(&c), 0);
    cr_assert_eq(ks_cache_add_node(c, ks_fake_node("n1", "rack=b")), 0);
    cr_assert_eq(ks_cache_add_node(c, ks_fake_node("n2", "rack=a")), 0);
    cr_assert_eq(ks_cache_add_node(c, ks_fake_node("n3", "rack=b")), 0);
    cr_assert_eq(ks_cache_add_node(c, ks_fake_node("n4", "zone=z")), 0);
    describe(c, &ps, "rack", NULL, buf, sizeof(buf));
    cr_expect_str_eq(buf, "a:n2 b:n1,n3");
    describe(c, &ps, "rack", "b", buf, sizeof(buf));
    cr_expect_str_eq(buf, "b:n1,n3");
    describe(c, &ps, "rack", "c", buf, sizeof(buf));
    cr_expect_str_eq(buf, "");

    /* a label changes: read again */
    cr_assert_eq(ks_cache_update_node(c, ks_fake_node("n3", "rack=c")), 0);
    describe(c, &ps, "rack", NULL, buf, sizeof(buf));
    cr_expect_str_eq(buf, "a:n2 b:n1 c:n3");
    /* another label changes, the key's do not: still right */
    cr_assert_eq(ks_cache_update_node(c, ks_fake_node("n1", "rack=b,team=x")), 0);
    describe(c, &ps, "rack", NULL, buf, sizeof(buf));
    cr_expect_str_eq(buf, "a:n2 b:n1 c:n3");
    /* a node comes; another key */
    cr_assert_eq(ks_cache_add_node(c, ks_fake_node("n5", "rack=a")), 0);
    describe(c, &ps, "rack", NULL, buf, sizeof(buf));
    cr_expect_str_eq(buf, "a:n2,n5 b:n1 c:n3");
    describe(c, &ps, "zone", NULL, buf, sizeof(buf));
    cr_expect_str_eq(buf, "z:n4");
    ks_placement_set_free(&ps);
    ks_cache_destroy(c);
}
