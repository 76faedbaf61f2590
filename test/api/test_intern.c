/*
 * test_intern.c - the keys of namespaced objects (base/intern.c ks_intern_ns_name and
 * ks_intern_find_ns_name) and the sorted id sets (ksched/base/intern.h ks_ids_contain).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <string.h>

#include "ksched/base/intern.h"

Test(intern, ns_name_is_namespace_slash_name)
{
    uint32_t ns = ks_intern("team-a");
    uint32_t id = ks_intern_ns_name(ns, "claim-1");
    cr_assert(ne(u32, id, KS_ID_NONE));
    cr_expect(eq(str, (char *)ks_intern_str(id), "team-a/claim-1"));
    cr_expect(eq(u32, ks_intern_find_ns_name(ns, "claim-1"), id));
    cr_expect(eq(u32, ks_intern("team-a/claim-1"), id), "the same string as interned directly");
}

Test(intern, ns_name_without_namespace_is_the_name)
{
    uint32_t id = ks_intern_ns_name(KS_ID_NONE, "pv-cluster-scoped");
    cr_expect(eq(str, (char *)ks_intern_str(id), "pv-cluster-scoped"));
    cr_expect(eq(u32, ks_intern_find_ns_name(KS_ID_NONE, "pv-cluster-scoped"), id));
}

Test(intern, find_ns_name_never_inserts)
{
    uint32_t ns = ks_intern("team-b");
    uint32_t before = ks_intern_count();
    cr_expect(eq(u32, ks_intern_find_ns_name(ns, "never-interned-claim"), KS_ID_NONE));
    cr_expect(eq(u32, ks_intern_count(), before));
}

Test(intern, ns_name_longer_than_the_stack_buffer)
{
    char name[600];
    memset(name, 'x', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    uint32_t ns = ks_intern("team-c");
    uint32_t id = ks_intern_ns_name(ns, name);
    const char *s = ks_intern_str(id);
    cr_assert(eq(sz, strlen(s), strlen("team-c/") + strlen(name)));
    cr_expect(eq(int, strncmp(s, "team-c/", 7), 0));
    cr_expect(eq(u32, ks_intern_find_ns_name(ns, name), id));
}

Test(intern, ids_contain_searches_sorted_ids)
{
    static const uint32_t ids[] = {2, 5, 9, 40, 41};
    for (uint32_t id = 0; id < 45; id++) {
        bool want = id == 2 || id == 5 || id == 9 || id == 40 || id == 41;
        cr_expect(eq(int, ks_ids_contain(ids, 5, id), want), "id %u", id);
    }
    cr_expect(eq(int, ks_ids_contain(NULL, 0, 0), 0));
}
