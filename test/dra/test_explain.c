/*
 * test_explain.c - ks_dra_explain() (dra/explain.c): the account --explain gives of a node
 * where claims cannot be allocated, for the shapes of failure the search has: too few usable
 * devices for a request (counted by why), every subrequest of a firstAvailable request short,
 * and requests that each fit alone but not together.
 */
#include "dra_dsl.h"

#define CLASSES "class class-a driver=driver-a\nclass class-b driver=driver-b\n"
#define SLICE1  "slice slice-1 node-1 pool-1 driver-a\n"

static void expect_explain(const char *text, const char *want)
{
    cr_assert(ks_api_init() == 0);
    struct dsl *d = calloc(1, sizeof(*d));
    dsl_parse(d, "explain", text);
    struct ks_dra_catalog *cat = dsl_catalog(d);
    struct ks_dra_allocated *a = dsl_state(d);
    struct ks_dra_scratch *s;
    struct ks_dra_claims *p;
    cr_assert(ks_dra_scratch_create(&s) == 0);
    cr_assert(
        ks_dra_claims_prepare(cat, (const struct ks_resource_claim *const *)d->claims, d->nclaims, &p) == 0);
    char buf[512];
    int rc = ks_dra_explain(a, &d->node, p, s, buf, sizeof(buf));
    if (want)
        cr_expect(rc == 1 && strcmp(buf, want) == 0, "got %d \"%s\"\nwant \"%s\"", rc, buf, want);
    else
        cr_expect(rc == 0, "got %d \"%s\"", rc, buf);
    ks_dra_claims_destroy(p);
    ks_dra_scratch_destroy(s);
    ks_dra_allocated_destroy(a);
    ks_dra_catalog_destroy(cat);
    ks_arena_destroy(&d->a);
    free(d);
}

Test(dra_explain, devices_counted_by_why_they_cannot_serve)
{
    expect_explain(
        CLASSES SLICE1 "device device-1 s:model=a\ndevice device-2 s:model=b\ndevice device-3 s:model=c\n"
                       "slice slice-2 node-1 pool-2 driver-b\ndevice device-9\n"
                       "allocated driver-a/pool-1/device-1\n"
                       "claim claim-0\nrequest req-0 class-a 2 attr==model:b\n",
        "claim claim-0, request req-0: 2 devices of class class-a wanted, 1 of 4 usable (1 in use, "
        "1 not of the class, 1 not matching the request's selectors)");
}

Test(dra_explain, an_untolerated_taint)
{
    expect_explain("features taints\n" CLASSES SLICE1 "device device-1 taint:k=v:NoSchedule\n"
                   "claim claim-0\nrequest req-0 class-a 1\n",
                   "claim claim-0, request req-0: 1 device of class class-a wanted, 0 of 1 usable (1 with an "
                   "untolerated taint)");
}

Test(dra_explain, every_subrequest_short)
{
    expect_explain(
        "features prioritized\n" CLASSES SLICE1 "device device-1\n"
        "claim claim-0\nfirstAvailable req-0\nsub sub-0 class-b 1\nsub sub-1 class-a 2\n",
        "claim claim-0, request req-0: none of its subrequests fits: req-0/sub-0: 1 device of class "
        "class-b wanted, 0 of 1 usable (1 not of the class); req-0/sub-1: 2 devices of class class-a "
        "wanted, 1 of 1 usable");
}

Test(dra_explain, requests_that_fit_alone_but_not_together)
{
    expect_explain(CLASSES SLICE1 "device device-1\n"
                                  "claim claim-0\nrequest req-0 class-a 1\nrequest req-1 class-a 1\n",
                   "each request has devices enough on its own, but not all of them together (devices wanted "
                   "by several requests, constraints, or shared counters)");
}

Test(dra_explain, nothing_to_explain_where_the_claims_fit_or_fail_with_an_error)
{
    expect_explain(CLASSES SLICE1 "device device-1\nclaim claim-0\nrequest req-0 class-a 1\n", NULL);
    expect_explain(CLASSES SLICE1 "device device-1\nclaim claim-0\nrequest req-0 class-x 1\n", NULL);
}
