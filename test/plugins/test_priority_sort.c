/*
 * test_priority_sort.c - the PrioritySort plugin (plugins/priority_sort.c).
 *
 * Cases from upstream's queuesort/priority_sort_test.go (TestLess).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "fakes/objects.h"
#include "ksched/queue_types.h"
#include "ksched/registry.h"

TestSuite(prioritysort);

Test(prioritysort, upstream_less)
{
    static const struct {
        const char *name;
        int32_t p1, p2;
        int64_t t1, t2;
        bool want;
    } cases[] = {
        {"p1.priority less than p2.priority", 10, 100, 0, 0, false},
        {"p1.priority greater than p2.priority", 100, 10, 0, 0, true},
        {"equal priority. p1 is added to schedulingQ earlier than p2", 100, 100, 1000, 2000, true},
        {"equal priority. p2 is added to schedulingQ earlier than p1", 100, 100, 2000, 1000, false},
        {"equal priority and timestamp: neither goes first", 100, 100, 1000, 1000, false},
        {"negative priorities order too", -5, -10, 2000, 1000, true},
    };
    const struct ks_plugin *p = &ks_plugin_priority_sort;
    cr_assert(p->less != NULL);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ks_pod *a = ks_fake_pod("default", "p1"), *b = ks_fake_pod("default", "p2");
        a->priority = cases[i].p1;
        b->priority = cases[i].p2;
        struct ks_queued_pod qa = {.pod = a, .timestamp_ns = cases[i].t1};
        struct ks_queued_pod qb = {.pod = b, .timestamp_ns = cases[i].t2};
        cr_expect(eq(int, p->less(NULL, &qa, &qb), cases[i].want), "%s", cases[i].name);
        ks_pod_destroy(a);
        ks_pod_destroy(b);
    }
}
