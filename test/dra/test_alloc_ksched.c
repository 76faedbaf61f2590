/*
 * test_alloc_ksched.c - behaviour of the structured allocator that upstream's table does not
 * pin and ksched must still match: CEL runtime and typing errors in upstream's words, the
 * order of errors that need the node against those that do not, pools mixing node-local and
 * shared slices, slices selected by node labels (gathered per call), the allocated state's
 * shares with DRAConsumableCapacity off, and one catalog serving several nodes.
 */
#include "dra_dsl.h"

#include "../../dra/dra_internal.h"

#define CLASS_A "class class-a driver=driver-a\n"
#define SLICE1  "slice slice-1 node-1 pool-1 driver-a\n"
#define LOCAL1  "selector node:node-1\n"

DRA_CASE(ksched_cel_no_such_key_gets_upstreams_hint,
         "class class-a sel `device.attributes[\"driver-a\"].model == \"x\"`\n" SLICE1 "device device-1\n"
         "claim claim-0\n"
         "request req-0 class-a 1\n"
         "error class class-a: selector #0 on device driver-a/pool-1/device-1: CEL runtime error: no such "
         "key: model. "
         "consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has() "
         "for optional "
         "fields\n")

DRA_CASE(ksched_cel_output_type_is_checked_at_compile_time,
         CLASS_A SLICE1 "device device-1\n"
                        "claim claim-0\n"
                        "request req-0 class-a 1 sel `device.driver`\n"
                        "error claim claim-0: selector #0: CEL compile "
                        "error: must evaluate to bool or the unknown "
                        "type, not string\n")

DRA_CASE(ksched_cel_dyn_int_result_names_its_type, CLASS_A SLICE1
         "device device-1 i:count=3\n"
         "claim claim-0\n"
         "request req-0 class-a 1 attr:count\n"
         "error claim claim-0: selector #0 on device driver-a/pool-1/device-1: CEL runtime error: CEL "
         "result of type int could not be converted to bool: unsupported type conversion from 'int' "
         "to bool\n")

DRA_CASE(ksched_cel_output_type_is_named_as_cel_go_names_it, CLASS_A SLICE1
         "device device-1\n"
         "claim claim-0\n"
         "request req-0 class-a 1 sel `{'a': [1, 2]}`\n"
         "error claim claim-0: selector #0: CEL compile error: must evaluate to bool or the unknown "
         "type, not map(string, list(int))\n")

DRA_CASE(ksched_cel_dyn_result_must_be_bool_at_run_time,
         CLASS_A SLICE1 "device device-1 s:model=x\n"
                        "claim claim-0\n"
                        "request req-0 class-a 1 attr:model\n"
                        "error claim claim-0: selector #0 on device "
                        "driver-a/pool-1/device-1: CEL runtime error: CEL "
                        "result of type string could not be converted to "
                        "bool\n")

DRA_CASE(ksched_cel_bad_semantic_version_fails_every_selector,
         CLASS_A SLICE1 "device device-1 v:driverVersion=1.0\n"
                        "claim claim-0\n"
                        "request req-0 class-a 1\n"
                        "error class class-a: selector #0 on device "
                        "driver-a/pool-1/device-1: CEL runtime "
                        "error: attribute driverVersion: parse "
                        "semantic version: No Major.Minor.Patch "
                        "elements found\n")

DRA_CASE(
    ksched_cel_attributes_by_domain_and_semver_compare,
    "class class-a sel `device.attributes[\"driver-a\"].driverVersion.compareTo(semver(\"1.2.0\")) >= 0 && "
    "device.attributes[\"example.com\"].model == \"m\" && device.capacity[\"driver-a\"].memory.isGreaterThan("
    "quantity(\"1Gi\"))`\n" SLICE1
    "device device-1 v:driverVersion=1.1.9 s:example.com/model=m c:memory=2Gi\n"
    "device device-2 v:driverVersion=1.2.0-rc.1 s:example.com/model=m c:memory=2Gi\n"
    "device device-3 v:driverVersion=1.10.0 s:example.com/model=m c:memory=2Gi\n"
    "claim claim-0\n"
    "request req-0 class-a 1\n"
    "expect\n"
    "result req-0 driver-a/pool-1/device-3\n" LOCAL1)

DRA_CASE(ksched_cel_allow_multiple_allocations_compiles_with_the_feature_off,
         "class class-a driver=driver-a multi=false\n" SLICE1 "device device-1 multi\n"
         "claim claim-0\n"
         "request req-0 class-a 1\n")

/* validateDeviceRequest in order: the first request's node-dependent error wins over the second's. */
DRA_CASE(ksched_error_order_node_dependent_first,
         CLASS_A "slice slice-1 node-1 pool-1:2 driver-a\n"
                 "device device-1\n"
                 "claim claim-0\n"
                 "request req-0 class-a all\n"
                 "request req-1 no-such-class 1\n"
                 "error claim claim-0, request req-0: asks for all devices, but "
                 "resource pool driver-a/pool-1 is currently being updated\n")

DRA_CASE(ksched_error_order_static_first,
         CLASS_A "slice slice-1 node-1 pool-1:2 driver-a\n"
                 "device device-1\n"
                 "claim claim-0\n"
                 "request req-0 no-such-class 1\n"
                 "request req-1 class-a all\n"
                 "error claim claim-0, request req-0: could not retrieve device class "
                 "no-such-class\n")

DRA_CASE(ksched_error_order_limit_before_constraints,
         CLASS_A "claim claim-0\n"
                 "constraint-empty\n"
                 "request req-0 class-a 33\n"
                 "error claim claim-0: number of requested devices 33 "
                 "exceeds the claim limit of 32\n")

DRA_CASE(ksched_error_all_devices_invalid_pool,
         CLASS_A "slice slice-1 node-1 pool-1 driver-a\n"
                 "device device-1\n"
                 "device device-1\n"
                 "claim claim-0\n"
                 "request req-0 class-a all\n"
                 "error claim claim-0, request req-0: asks for all devices, but "
                 "resource pool driver-a/pool-1 is currently invalid\n")

/* One pool, a node-local slice and an allNodes slice: complete only where both are relevant. */
#define MIXED_POOL                                                                                           \
    CLASS_A "slice slice-1 node-1 pool-1:2 driver-a\n"                                                       \
            "device device-1\n"                                                                              \
            "slice slice-2 all pool-1:2 driver-a\n"                                                          \
            "device device-2\n"                                                                              \
            "claim claim-0\n"                                                                                \
            "request req-0 class-a 2\n"

DRA_CASE(ksched_pool_of_local_and_all_nodes_slices,
         MIXED_POOL "expect\n"
                    "result req-0 driver-a/pool-1/device-1\n"
                    "result req-0 driver-a/pool-1/device-2\n" LOCAL1)

DRA_CASE(ksched_pool_of_local_and_all_nodes_slices_elsewhere, MIXED_POOL "node node-2 region-1\n")

/* A slice selected by labels in the same pool as a node-local one: gathered again for that node. */
#define LABEL_POOL                                                                                           \
    CLASS_A "slice slice-1 node-1 pool-1:2 driver-a\n"                                                       \
            "device device-1\n"                                                                              \
            "slice slice-2 sel:region=region-1 pool-1:2 driver-a\n"                                          \
            "device device-2\n"                                                                              \
            "claim claim-0\n"                                                                                \
            "request req-0 class-a 2\n"

DRA_CASE(ksched_pool_with_label_selected_slice, LABEL_POOL "expect\n"
                                                           "result req-0 driver-a/pool-1/device-1\n"
                                                           "result req-0 driver-a/pool-1/device-2\n" LOCAL1)

DRA_CASE(ksched_pool_with_label_selected_slice_other_region, LABEL_POOL "node node-1 region-2\n")

DRA_CASE(ksched_shares_count_as_devices_without_consumable_capacity,
         CLASS_A SLICE1 "device device-1 multi\n"
                        "allocatedShare "
                        "driver-a/pool-1/device-1\n"
                        "claim claim-0\n"
                        "request req-0 class-a 1\n")

DRA_CASE(ksched_shares_do_not_block_with_consumable_capacity,
         "features consumable\n" CLASS_A SLICE1 "device device-1 multi\n"
         "allocatedShare driver-a/pool-1/device-1\n"
         "claim claim-0\n"
         "request req-0 class-a 1\n"
         "expect\n"
         "result req-0 driver-a/pool-1/device-1 share\n" LOCAL1)

DRA_CASE(ksched_counters_overallocated_by_others_block_the_pool,
         "features partitionable\n" CLASS_A "slice slice-1 node-1 pool-1:2 driver-a\n"
         "device device-1 consume:counter-set-1:memory=4Gi\n"
         "device device-2 consume:counter-set-1:memory=20Gi\n"
         "device device-3\n"
         "slice slice-2 node-1 pool-1:2 driver-a\n"
         "counterset counter-set-1 memory=18Gi\n"
         "allocated driver-a/pool-1/device-2\n"
         "claim claim-0\n"
         "request req-0 class-a 1\n"
         "expect\n"
         "result req-0 driver-a/pool-1/device-3\n" LOCAL1)

/* The class of a request whose results carry its tolerations is found by the request's name. */
DRA_CASE(ksched_results_carry_the_requests_tolerations,
         "features taints\n" CLASS_A SLICE1 "device device-1 taint:k=v:NoExecute\n"
         "claim claim-0\n"
         "request req-0 class-a 1 tol:Exists:k::NoExecute tol:Exists:other::\n"
         "expect\n"
         "result req-0 driver-a/pool-1/device-1 tol=2\n" LOCAL1)

/* One catalog, many nodes: node-local, allNodes and label-selected slices, each node its own answer. */
Test(dra_alloc, ksched_one_catalog_many_nodes)
{
    cr_assert(ks_api_init() == 0);
    struct dsl *d = calloc(1, sizeof(*d));
    dsl_parse(d, "many-nodes",
              CLASS_A "slice s-1 node-1 pool-n1 driver-a\n"
                      "device d-1\n"
                      "slice s-2 node-2 pool-n2 driver-a\n"
                      "device d-2\n"
                      "slice s-all all pool-all driver-a\n"
                      "device d-all\n"
                      "slice s-r2 sel:region=region-2 pool-r2 driver-a\n"
                      "device d-r2\n"
                      "claim claim-0\n"
                      "request req-0 class-a 2\n");
    struct ks_dra_catalog *cat;
    struct ks_dra_scratch *s;
    struct ks_dra_claims *prep;
    cr_assert(ks_dra_catalog_build((const struct ks_device_class *const *)d->classes, d->nclasses,
                                   (const struct ks_resource_slice *const *)d->slices, d->nslices, &d->f,
                                   &cat) == 0);
    cr_assert(ks_dra_scratch_create(&s) == 0);
    cr_assert(ks_dra_claims_prepare(cat, (const struct ks_resource_claim *const *)d->claims, 1, &prep) == 0);
    static const struct {
        const char *node, *labels, *want[2], *selector;
    } nodes[] = {
        {"node-1", "region=region-1,planet=earth", {"pool-all/d-all", "pool-n1/d-1"}, "node-1"},
        {"node-2", "region=region-2,planet=earth", {"pool-all/d-all", "pool-n2/d-2"}, "node-2"},
        {"node-3", "region=region-2,planet=earth", {"pool-all/d-all", "pool-r2/d-r2"}, NULL},
        {"node-4", "region=region-1,planet=earth", {NULL, NULL}, NULL},
    };
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
            struct ks_node node = {0};
            node.meta.name = nodes[i].node;
            node.name_id = ks_intern(nodes[i].node);
            node.meta.labels = ks_fake_labels(&d->a, nodes[i].labels);
            struct ks_allocation res[1];
            char err[256];
            int rc = ks_dra_allocate_prepared(NULL, &node, prep, s, res, err, sizeof(err));
            if (!nodes[i].want[0]) {
                cr_expect(rc == KS_DRA_UNSUITABLE, "%s: %d %s", nodes[i].node, rc, err);
                continue;
            }
            cr_assert(rc == KS_DRA_ALLOCATED, "%s: %d %s", nodes[i].node, rc, err);
            cr_assert(res[0].nresults == 2, "%s: %u results", nodes[i].node, res[0].nresults);
            for (int k = 0; k < 2; k++) {
                char got[256];
                snprintf(got, sizeof(got), "%s/%s", ks_intern_str(res[0].results[k].pool),
                         ks_intern_str(res[0].results[k].device));
                cr_expect(strcmp(got, nodes[i].want[k]) == 0, "%s: result %d is %s, want %s", nodes[i].node,
                          k, got, nodes[i].want[k]);
            }
            const struct ks_node_selector *ns = res[0].node_selector;
            if (nodes[i].selector) {
                cr_assert(ns && ns->nterms == 1 && ns->terms[0].nfields == 1);
                cr_expect(ns->terms[0].fields[0].values[0] == node.name_id);
            } else {
                /* d-all: no selector; d-r2: its slice's selector */
                cr_assert(ns && ns->nterms == 1 && ns->terms[0].nexprs == 1 && ns->terms[0].nfields == 0);
            }
        }
    }
    ks_dra_claims_destroy(prep);
    ks_dra_scratch_destroy(s);
    ks_dra_catalog_destroy(cat);
    ks_arena_destroy(&d->a);
    free(d);
}

/* The steady state allocates nothing: after a warm-up the scratch serves calls from one chunk. */
Test(dra_alloc, ksched_scratch_stops_growing)
{
    cr_assert(ks_api_init() == 0);
    struct dsl *d = calloc(1, sizeof(*d));
    dsl_parse(d, "steady",
              "features all\n" CLASS_A SLICE1 "devices 8\n"
              "claim claim-0\n"
              "request req-0 class-a 2\n"
              "claim claim-1\n"
              "firstAvailable req-0\n"
              "sub a class-a 9\n"
              "sub b class-a 3\n");
    struct ks_dra_catalog *cat;
    struct ks_dra_scratch *s;
    struct ks_dra_claims *prep;
    cr_assert(ks_dra_catalog_build((const struct ks_device_class *const *)d->classes, d->nclasses,
                                   (const struct ks_resource_slice *const *)d->slices, d->nslices, &d->f,
                                   &cat) == 0);
    cr_assert(ks_dra_scratch_create(&s) == 0);
    cr_assert(ks_dra_claims_prepare(cat, (const struct ks_resource_claim *const *)d->claims, 2, &prep) == 0);
    struct ks_allocation res[2];
    char err[256];
    uint32_t chunks = 0;
    for (int i = 0; i < 50; i++) {
        int rc = ks_dra_allocate_prepared(NULL, &d->node, prep, s, res, err, sizeof(err));
        cr_assert(rc == KS_DRA_ALLOCATED, "%d %s", rc, err);
        if (i == 10)
            chunks = s->mem.nchunks;
        if (i > 10)
            cr_assert(s->mem.nchunks == chunks && chunks == 1, "call %d: %u chunks", i, s->mem.nchunks);
    }
    ks_dra_claims_destroy(prep);
    ks_dra_scratch_destroy(s);
    ks_dra_catalog_destroy(cat);
    ks_arena_destroy(&d->a);
    free(d);
}
