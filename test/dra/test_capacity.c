/*
 * test_capacity.c - consumable capacity (dra/capacity.c) against upstream's
 * structured/internal/incubating/consumable_capacity_test.go (violate-capacity-sharing,
 * calculate-consumed-capacity, get-consumed-capacity-from-request), and the allocated
 * state's counting (dra/allocated.c) against the collection semantics of
 * schedulerapi/types.go (insert-remove-allocating-consumed-capacity-collection).
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/dra.h"
#include "ksched/quantity.h"

#include "../../dra/dra_internal.h"
#include "dra_dsl.h"

static struct ks_quantity q(const char *s)
{
    struct ks_quantity v;
    cr_assert(ks_quantity_parse(s, &v) == 0, "bad quantity %s", s);
    return v;
}

struct policy_case {
    const char *name;
    const char *val;
    bool has_policy, has_default;
    const char *def;
    bool has_range, has_max;
    const char *min, *max;
    uint32_t nvalid;
    const char *valid[3];
    bool want;
};

Test(dra_alloc, capacity_violates_policy)
{
    static const struct policy_case cases[] = {
        {"no constraint", "1", false, false, NULL, false, false, NULL, NULL, 0, {NULL}, false},
        {"less than maximum", "1", true, true, "1", true, true, "1", "2", 0, {NULL}, false},
        {"more than maximum", "2", true, true, "1", true, true, "1", "1", 0, {NULL}, true},
        {"in set", "1", true, true, "1", false, false, NULL, NULL, 1, {"1"}, false},
        {"not in set", "2", true, true, "1", false, false, NULL, NULL, 1, {"1"}, true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct policy_case *c = &cases[i];
        struct ks_capacity_policy p = {0};
        struct ks_quantity vals[3], v = q(c->val);
        if (c->has_default) {
            p.has_default = true;
            p.def = q(c->def);
        }
        if (c->has_range) {
            p.has_range = p.has_min = true;
            p.min = q(c->min);
            if (c->has_max) {
                p.has_max = true;
                p.max = q(c->max);
            }
        }
        for (uint32_t k = 0; k < c->nvalid; k++)
            vals[k] = q(c->valid[k]);
        p.nvalid_values = c->nvalid;
        p.valid_values = vals;
        bool got = ks__dra_violates_policy(&v, c->has_policy ? &p : NULL);
        cr_expect(got == c->want, "%s: violates %d, want %d", c->name, got, c->want);
    }
}

struct consumed_case {
    const char *name;
    const char *req; /* NULL: nothing requested */
    const char *value;
    bool has_default;
    const char *def;
    const char *min, *step; /* validRange */
    uint32_t nvalid;
    const char *valid[3];
    const char *want;
};

Test(dra_alloc, capacity_calculate_consumed)
{
    static const struct consumed_case cases[] = {
        {"empty", NULL, "1", false, NULL, NULL, NULL, 0, {NULL}, "1"},
        {"min in range", NULL, "2", true, "1", "1", NULL, 0, {NULL}, "1"},
        {"default in set", NULL, "2", true, "1", NULL, NULL, 1, {"1"}, "1"},
        {"more than min in range", "2", "2", true, "1", "1", NULL, 0, {NULL}, "2"},
        {"less than min in range", "1", "2", true, "1", "2", NULL, 0, {NULL}, "2"},
        {"with step (round up)", "2", "3", true, "1", "1", "2", 0, {NULL}, "3"},
        {"with step (no remaining)", "2", "2", true, "1", "1", "1", 0, {NULL}, "2"},
        {"valid value in set", "2", "3", true, "1", NULL, NULL, 3, {"1", "2", "3"}, "2"},
        {"set (round up)", "2", "3", true, "1", NULL, NULL, 2, {"1", "3"}, "3"},
        {"larger than set", "3", "3", true, "1", NULL, NULL, 2, {"1", "2"}, "3"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct consumed_case *c = &cases[i];
        struct ks_capacity_policy p = {0};
        struct ks_quantity vals[3], req, got;
        if (c->has_default) {
            p.has_default = true;
            p.def = q(c->def);
        }
        if (c->min) {
            p.has_range = p.has_min = true;
            p.min = q(c->min);
        }
        if (c->step) {
            p.has_step = true;
            p.step = q(c->step);
        }
        for (uint32_t k = 0; k < c->nvalid; k++)
            vals[k] = q(c->valid[k]);
        p.nvalid_values = c->nvalid;
        p.valid_values = vals;
        struct ks_device_capacity cap = {.name = ks_intern("capacity-0"), .value = q(c->value), .policy = &p};
        if (c->req)
            req = q(c->req);
        ks__dra_consumed_capacity(c->req ? &req : NULL, &cap, &got);
        struct ks_quantity want = q(c->want);
        cr_expect(ks_quantity_cmp(&got, &want) == 0, "%s: consumed differs from %s", c->name, c->want);
    }
}

/* GetConsumedCapacityFromRequest: a requested amount, a default, the whole capacity. */
Test(dra_alloc, capacity_consumed_from_request)
{
    struct ks_capacity_policy p0 = {.has_default = true, .has_range = true, .has_min = true};
    struct ks_capacity_policy p1 = p0;
    p0.def = q("2");
    p0.min = q("1");
    p1.def = q("1");
    p1.min = q("1");
    struct ks_device_capacity caps[3] = {
        {.name = ks_intern("capacity-0"), .value = q("2"), .policy = &p0},
        {.name = ks_intern("capacity-1"), .value = q("2"), .policy = &p1},
        {.name = ks_intern("dummy"), .value = q("1"), .policy = NULL},
    };
    struct ks_quantity one = q("1"), got;
    ks__dra_consumed_capacity(&one, &caps[0], &got);
    cr_expect(ks_quantity_cmp(&got, &one) == 0, "requested value");
    ks__dra_consumed_capacity(NULL, &caps[1], &got);
    cr_expect(ks_quantity_cmp(&got, &one) == 0, "default");
    ks__dra_consumed_capacity(NULL, &caps[2], &got);
    cr_expect(ks_quantity_cmp(&got, &one) == 0, "capacity value");
}

Test(dra_alloc, capacity_binary_si_rounding)
{
    struct ks_quantity v;
    char buf[KS_QUANTITY_STR_MAX];
    ks__dra_quantity_int(4, &v);
    cr_assert(ks_quantity_format(&v, buf, sizeof(buf)) == 0);
    cr_expect(strcmp(buf, "4") == 0, "%s", buf);
    ks__dra_quantity_int(2048, &v);
    cr_assert(ks_quantity_format(&v, buf, sizeof(buf)) == 0);
    cr_expect(strcmp(buf, "2Ki") == 0, "%s", buf);
    ks__dra_quantity_int(3 * 1024 * 1024 * 1024LL, &v);
    cr_assert(ks_quantity_format(&v, buf, sizeof(buf)) == 0);
    cr_expect(strcmp(buf, "3Gi") == 0, "%s", buf);
}

static struct ks_allocation share(struct ks_device_result *r, struct ks_named_quantity *c, const char *amount)
{
    memset(r, 0, sizeof(*r));
    r->request = "req-0";
    r->driver = ks_intern("driver-a");
    r->pool = ks_intern("pool-1");
    r->device = ks_intern("device-1");
    r->share_id = "s";
    c->name = ks_intern("capacity-0");
    c->value = q(amount);
    r->consumed = c;
    r->nconsumed = 1;
    struct ks_allocation a = {.nresults = 1, .results = r};
    return a;
}

/* Insert twice, remove once: the collection keeps the device with the remaining amount. */
Test(dra_alloc, allocated_state_counts_capacity)
{
    struct ks_dra_allocated *a;
    cr_assert(ks_dra_allocated_create(&a) == 0);
    struct ks_device_result r1, r2;
    struct ks_named_quantity c1, c2;
    struct ks_allocation a1 = share(&r1, &c1, "1"), a2 = share(&r2, &c2, "1");
    cr_assert(ks_dra_allocated_add(a, &a1) == 0);
    cr_assert(ks_dra_allocated_add(a, &a2) == 0);
    const struct dra_alloc_entry *e = ks__dra_allocated_find(a, r1.driver, r1.pool, r1.device);
    struct ks_quantity two = q("2"), one = q("1");
    cr_assert(e && e->capacity == 2 && e->shared == 2 && e->dedicated == 0);
    cr_expect(e->ncap == 1 && ks_quantity_cmp(&e->cap[0].value, &two) == 0);
    ks_dra_allocated_remove(a, &a2);
    e = ks__dra_allocated_find(a, r1.driver, r1.pool, r1.device);
    cr_assert(e && e->capacity == 1);
    cr_expect(ks_quantity_cmp(&e->cap[0].value, &one) == 0);
    ks_dra_allocated_remove(a, &a1);
    cr_expect(ks__dra_allocated_find(a, r1.driver, r1.pool, r1.device) == NULL,
              "an emptied device is absent");

    /* admin access is never counted; dedicated results count per result */
    struct ks_device_result d[3];
    memset(d, 0, sizeof(d));
    for (int i = 0; i < 3; i++) {
        d[i].request = "req-0";
        d[i].driver = ks_intern("driver-a");
        d[i].pool = ks_intern("pool-1");
        d[i].device = ks_intern(i == 2 ? "device-3" : "device-2");
    }
    d[2].has_admin_access = d[2].admin_access = true;
    struct ks_allocation ad = {.nresults = 3, .results = d};
    cr_assert(ks_dra_allocated_add(a, &ad) == 0);
    e = ks__dra_allocated_find(a, d[0].driver, d[0].pool, d[0].device);
    cr_expect(e && e->dedicated == 2);
    cr_expect(ks__dra_allocated_find(a, d[2].driver, d[2].pool, d[2].device) == NULL);
    ks_dra_allocated_remove(a, &ad);
    cr_expect(ks__dra_allocated_find(a, d[0].driver, d[0].pool, d[0].device) == NULL);
    ks_dra_allocated_destroy(a);
    ks_dra_allocated_destroy(NULL);
}

/* Many devices: the table grows and keeps every count. */
Test(dra_alloc, allocated_state_grows)
{
    struct ks_dra_allocated *a;
    cr_assert(ks_dra_allocated_create(&a) == 0);
    enum { N = 3000 };
    static struct ks_device_result r[N];
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof(name), "dev-%d", i);
        memset(&r[i], 0, sizeof(r[i]));
        r[i].request = "req";
        r[i].driver = ks_intern("driver-a");
        r[i].pool = ks_intern(i % 2 ? "pool-1" : "pool-2");
        r[i].device = ks_intern(name);
        struct ks_allocation one = {.nresults = 1, .results = &r[i]};
        cr_assert(ks_dra_allocated_add(a, &one) == 0);
    }
    for (int i = 0; i < N; i++) {
        const struct dra_alloc_entry *e = ks__dra_allocated_find(a, r[i].driver, r[i].pool, r[i].device);
        cr_assert(e && e->dedicated == 1, "device %d", i);
    }
    for (int i = 0; i < N; i += 2) {
        struct ks_allocation one = {.nresults = 1, .results = &r[i]};
        ks_dra_allocated_remove(a, &one);
    }
    for (int i = 0; i < N; i++)
        cr_expect((ks__dra_allocated_find(a, r[i].driver, r[i].pool, r[i].device) != NULL) == (i % 2 == 1));
    ks_dra_allocated_destroy(a);
}

/*
 * A state bound to a catalog answers by catalog device what it answers by device id, through
 * adds, removes, a regrowth and a rebinding; a device id that two slices of one pool both
 * list (an invalid pool) is held on both of its catalog devices.
 */
Test(dra_alloc, allocated_state_bound_to_a_catalog)
{
    cr_assert(ks_api_init() == 0);
    struct dsl *d = calloc(1, sizeof(*d));
    dsl_parse(d, "bound",
              "slice slice-1 node-1 pool-1:2 driver-a\ndevices 40\n"
              "slice slice-2 node-1 pool-1:2 driver-a\ndevice device-3\ndevice device-50\n");
    struct ks_dra_catalog *cat = dsl_catalog(d);
    struct ks_dra_allocated *a;
    cr_assert(ks_dra_allocated_create(&a) == 0);
    enum { N = 42 };
    static struct ks_device_result r[N];
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof(name), "device-%d", i < 40 ? i : 50);
        memset(&r[i], 0, sizeof(r[i]));
        r[i].request = "req";
        r[i].driver = ks_intern("driver-a");
        r[i].pool = ks_intern("pool-1");
        r[i].device = ks_intern(name);
        if (i == 41)
            r[i].share_id = "s";
    }
    for (int round = 0; round < 3; round++) {
        for (int i = round; i < N; i += 3) {
            struct ks_allocation one = {.nresults = 1, .results = &r[i]};
            cr_assert(ks_dra_allocated_add(a, &one) == 0);
        }
        if (round == 0)
            cr_assert(ks_dra_allocated_bind(a, cat) == 0);
    }
    for (int i = 0; i < N; i += 2) {
        struct ks_allocation one = {.nresults = 1, .results = &r[i]};
        ks_dra_allocated_remove(a, &one);
    }
    uint32_t held3 = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t g = 0; g < cat->ndevices; g++) {
            const struct dra_dev *dv = &cat->devs[g];
            const struct dra_alloc_entry *e =
                ks__dra_allocated_find(a, dv->slice->driver, dv->slice->pool, dv->dev->name);
            uint8_t want =
                e ? (uint8_t)((e->dedicated ? DRA_HELD_DEDICATED : 0) | (e->shared ? DRA_HELD_SHARED : 0))
                  : 0;
            cr_expect(ks__dra_allocated_held(a, cat, g) == want, "pass %d, device %u (%s)", pass, g,
                      ks_intern_str(dv->dev->name));
            cr_expect(ks__dra_allocated_entry(a, cat, g) == e, "pass %d, device %u", pass, g);
            held3 += pass == 0 && dv->dev->name == ks_intern("device-3") && want;
        }
        cr_assert(ks_dra_allocated_bind(a, cat) == 0);
    }
    cr_expect(held3 == 2, "device-3 is held in both slices");
    cr_expect(ks__dra_allocated_held(a, cat, 1) == DRA_HELD_DEDICATED, "device-1 stays");
    cr_expect(ks__dra_allocated_held(a, cat, 41) == DRA_HELD_SHARED, "device-50 is shared");
    cr_assert(ks_dra_allocated_bind(a, NULL) == 0);
    ks_dra_allocated_destroy(a);
    ks_dra_catalog_destroy(cat);
    ks_arena_destroy(&d->a);
    free(d);
}

/*
 * Remembered verdicts follow the state: a claim set allocatable on a node stops being so
 * when the node's device is allocated, and is again when it is freed; a set of other specs
 * keeps its own verdict; a node sharing the default poolset gets the same answer.
 */
Test(dra_alloc, remembered_verdicts_follow_the_allocated_state)
{
    cr_assert(ks_api_init() == 0);
    struct dsl *d = calloc(1, sizeof(*d));
    dsl_parse(d, "verdicts",
              "class class-a\n"
              "slice slice-1 node-1 pool-1:1 driver-a\ndevice device-1\n"
              "claim claim-0\nrequest req-0 class-a 1\n"
              "claim claim-1\nrequest req-0 class-a 2\n");
    struct ks_dra_catalog *cat = dsl_catalog(d);
    struct ks_dra_allocated *a;
    struct ks_dra_scratch *s;
    struct ks_dra_claims *one, *two;
    cr_assert(ks_dra_allocated_create(&a) == 0 && ks_dra_allocated_bind(a, cat) == 0);
    cr_assert(ks_dra_scratch_create(&s) == 0);
    cr_assert(ks_dra_claims_prepare(cat, (const struct ks_resource_claim *const *)&d->claims[0], 1, &one) ==
              0);
    cr_assert(ks_dra_claims_prepare(cat, (const struct ks_resource_claim *const *)&d->claims[1], 1, &two) ==
              0);
    cr_expect(one->shape && two->shape && one->shape != two->shape);
    struct ks_node node = {0}, other = {0};
    node.meta.name = "node-1";
    node.name_id = ks_intern("node-1");
    other.meta.name = "node-9";
    other.name_id = ks_intern("node-9");
    char err[256];
    struct ks_device_result r = {.request = "req-0",
                                 .driver = ks_intern("driver-a"),
                                 .pool = ks_intern("pool-1"),
                                 .device = ks_intern("device-1")};
    struct ks_allocation held = {.nresults = 1, .results = &r};
    for (int round = 0; round < 3; round++) {
        int want = round == 1 ? KS_DRA_UNSUITABLE : KS_DRA_ALLOCATED;
        for (int again = 0; again < 2; again++) {
            cr_expect(ks_dra_allocate_prepared(a, &node, one, s, NULL, err, sizeof(err)) == want,
                      "round %d, call %d", round, again);
            cr_expect(ks_dra_allocate_prepared(a, &node, two, s, NULL, err, sizeof(err)) ==
                      KS_DRA_UNSUITABLE);
            cr_expect(ks_dra_allocate_prepared(a, &other, one, s, NULL, err, sizeof(err)) ==
                      KS_DRA_UNSUITABLE);
        }
        if (round == 0)
            cr_assert(ks_dra_allocated_add(a, &held) == 0);
        else
            ks_dra_allocated_remove(a, &held);
    }
    ks_dra_claims_destroy(one);
    ks_dra_claims_destroy(two);
    ks_dra_scratch_destroy(s);
    ks_dra_allocated_destroy(a);
    ks_dra_catalog_destroy(cat);
    ks_arena_destroy(&d->a);
    free(d);
}
