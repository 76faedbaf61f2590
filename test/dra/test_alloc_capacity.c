/*
 * test_alloc_capacity.c - upstream's allocator table (allocator_testing.go, TestAllocator),
 * part 4: consumable capacity (DRAConsumableCapacity: devices that allow multiple
 * allocations, request policies, capacity already in use) and distinctAttribute
 * constraints. Names and feature sets are upstream's. Upstream replaces share ids by a
 * fixed one before comparing; these cases check that a share id is there.
 */
#include "dra_dsl.h"

#define CLASS_A         "class class-a driver=driver-a\n"
#define MULTI_CLASS     "class class-a driver=driver-a multi=true\n"
#define DEDICATED_CLASS "class class-a driver=driver-a multi=false\n"
#define SLICE1          "slice slice-1 node-1 pool-1 driver-a\n"
#define LOCAL1          "selector node:node-1\n"
#define CC              "features consumable\n"
#define R0              "result req-0 driver-a/pool-1/"

DRA_CASE(consumable_capacity_disabled_feature, "features binding\n" CLASS_A SLICE1 "device device-1\n"
                                               "claim claim-0\n"
                                               "request req-0 class-a 1 cap=1\n"
                                               "error claim claim-0, request req-0: "
                                               "has capacity requests, but the "
                                               "DRAConsumableCapacity feature is "
                                               "disabled\n")

DRA_CASE(consumable_capacity_disabled_feature_with_prioritized_list,
         "features prioritized binding\n" CLASS_A SLICE1 "device device-1\n"
         "claim claim-0\n"
         "firstAvailable req-0\n"
         "sub subReq-0 class-a 1 cap=1\n"
         "sub subReq-1 class-a 1 cap=1\n"
         "error claim claim-0, subrequest subReq-0: has capacity "
         "requests, but the DRAConsumableCapacity feature is disabled\n")

DRA_CASE(consumable_capacity_multi_allocatable_device_with_missing_capacity_request,
         CC CLASS_A SLICE1 "device device-1 c:capacity-1=1 multi\n"
                           "claim claim-0\n"
                           "request req-0 class-a 1 cap=1\n")

DRA_CASE(consumable_capacity_multi_allocatable_device_allocation_mode_all_with_missing_capacity_request,
         CC MULTI_CLASS SLICE1 "device device-1 c:capacity-1=1 multi\n"
                               "claim claim-0\n"
                               "request req-0 class-a all cap=1\n")

#define TWO_CLAIMS(opt)                                                                                      \
    "claim claim-0\n"                                                                                        \
    "request req-0 class-a 1" opt "\n"                                                                       \
    "claim claim-1\n"                                                                                        \
    "request req-0 class-a 1" opt "\n"

DRA_CASE(consumable_capacity_multi_allocatable_device_without_capacity_without_capacity_request,
         CC MULTI_CLASS SLICE1
         "device device-1 multi\n" TWO_CLAIMS("") "expect\n" R0 "device-1 share\n" LOCAL1 "expect\n" R0
                                                  "device-1 share\n" LOCAL1)

DRA_CASE(consumable_capacity_multi_allocatable_device_without_policy_without_capacity_request,
         CC MULTI_CLASS SLICE1 "device device-1 c:capacity-0=1 multi\n"
                               "device device-2 c:capacity-0=1 multi\n" TWO_CLAIMS(
                                   "") "expect\n" R0 "device-1 share consumed=capacity-0:1\n" LOCAL1
                                       "expect\n" R0 "device-2 share consumed=capacity-0:1\n" LOCAL1)

DRA_CASE(consumable_capacity_multi_allocatable_device_without_policy_without_capacity_request_block,
         CC MULTI_CLASS SLICE1 "device device-1 c:capacity-0=2 multi\n" TWO_CLAIMS(""))

DRA_CASE(consumable_capacity_multi_allocatable_device_without_policy_with_capacity_request,
         CC MULTI_CLASS SLICE1 "device device-1 c:capacity-0=2 multi\n" TWO_CLAIMS(
             " cap=1") "expect\n" R0 "device-1 share consumed=capacity-0:1\n" LOCAL1 "expect\n" R0
                       "device-1 share consumed=capacity-0:1\n" LOCAL1)

DRA_CASE(consumable_capacity_multi_allocatable_device_with_policy_without_capacity_request,
         CC MULTI_CLASS SLICE1 "device device-1 multi range:capacity-0=4\n" TWO_CLAIMS(
             "") "expect\n" R0 "device-1 share consumed=capacity-0:2\n" LOCAL1 "expect\n" R0
                 "device-1 share consumed=capacity-0:2\n" LOCAL1)

DRA_CASE(consumable_capacity_multi_allocatable_device_with_zero_request_policy,
         CC MULTI_CLASS SLICE1 "device device-1 multi vv:capacity-0=1:0\n" TWO_CLAIMS(
             "") "expect\n" R0 "device-1 share consumed=capacity-0:0\n" LOCAL1 "expect\n" R0
                 "device-1 share consumed=capacity-0:0\n" LOCAL1)

DRA_CASE(consumable_capacity_multi_allocatable_device_violates_zero_request_policy,
         CC MULTI_CLASS SLICE1 "device device-1 multi vv:capacity-0=1:0\n"
                               "claim claim-0\n"
                               "request req-0 class-a 1 cap=1\n")

DRA_CASE(consumable_capacity_multi_allocatable_device_with_range_policy_with_capacity_request,
         CC MULTI_CLASS SLICE1 "device device-1 multi range:capacity-0=4\n" TWO_CLAIMS(
             " cap=1") "expect\n" R0 "device-1 share consumed=capacity-0:2\n" LOCAL1 "expect\n" R0
                       "device-1 share consumed=capacity-0:2\n" LOCAL1)

DRA_CASE(consumable_capacity_multi_allocatable_device_with_range_policy_step,
         CC MULTI_CLASS SLICE1 "device device-1 multi range:capacity-0=4\n"
                               "claim claim-0\n"
                               "request req-0 class-a 1 cap=3\n"
                               "expect\n" R0 "device-1 share consumed=capacity-0:4\n" LOCAL1)

DRA_CASE(consumable_capacity_multi_allocatable_device_with_valid_values_policy,
         CC MULTI_CLASS SLICE1 "device device-1 multi vv:capacity-0=4:1:2\n"
                               "claim claim-0\n"
                               "request req-0 class-a 1 cap=2\n"
                               "expect\n" R0 "device-1 share consumed=capacity-0:2\n" LOCAL1)

DRA_CASE(consumable_capacity_multi_allocatable_device_with_valid_values_policy_round_up,
         CC MULTI_CLASS SLICE1 "device device-1 multi vv:capacity-0=3:1:3\n"
                               "claim claim-0\n"
                               "request req-0 class-a 1 cap=2\n"
                               "expect\n" R0 "device-1 share consumed=capacity-0:3\n" LOCAL1)

DRA_CASE(consumable_capacity_multi_allocatable_device_with_exceeded_consumable_capacity_request,
         CC MULTI_CLASS SLICE1 "device device-1 multi range:capacity-0=2\n"
                               "claim claim-0\n"
                               "request req-0 class-a 1 cap=1\n"
                               "claim claim-1\n"
                               "request req-0 class-a 1 cap=2\n")

DRA_CASE(consumable_capacity_multi_allocatable_device_with_request_over_max_sharing_policy,
         CC MULTI_CLASS SLICE1 "device device-1 multi range:capacity-0=10\n"
                               "claim claim-0\n"
                               "request req-0 class-a 1 cap=6\n")

DRA_CASE(consumable_capacity_multi_allocatable_device_with_allocated_capacity_use_remaining,
         CC MULTI_CLASS SLICE1 "device device-1 multi range:capacity-0=4\n"
                               "allocatedShare driver-a/pool-1/device-1 capacity-0=2\n"
                               "claim claim-0\n"
                               "request req-0 class-a 1 cap=2\n"
                               "expect\n" R0 "device-1 share consumed=capacity-0:2\n" LOCAL1)

DRA_CASE(consumable_capacity_multi_allocatable_device_with_allocated_capacity_next_device,
         CC MULTI_CLASS SLICE1 "device device-1 multi range:capacity-0=2\n"
                               "device device-2 multi range:capacity-0=2\n"
                               "allocatedShare driver-a/pool-1/device-1 capacity-0=2\n"
                               "claim claim-0\n"
                               "request req-0 class-a 1 cap=2\n"
                               "expect\n" R0 "device-2 share consumed=capacity-0:2\n" LOCAL1)

DRA_CASE(consumable_capacity_with_multi_allocatable_device_backtrack, CC CLASS_A SLICE1
         "device device-2 s:stringAttribute=stringAttributeValue1 multi range:capacity-0=2\n"
         "device device-1 s:stringAttribute=stringAttributeValue2 multi range:capacity-0=4\n"
         "claim claim-0\n"
         "match driver-a/stringAttribute\n"
         "request req-0 class-a 1 cap=2\n"
         "request req-1 class-a 1 cap=2\n"
         "claim claim-1\n"
         "request req-0 class-a 1 cap=2\n"
         "expect\n" R0 "device-1 share consumed=capacity-0:2\n"
         "result req-1 driver-a/pool-1/device-1 share consumed=capacity-0:2\n" LOCAL1 "expect\n" R0
         "device-2 share consumed=capacity-0:2\n" LOCAL1)

DRA_CASE(consumable_capacity_multi_allocatable_device_with_subrequest,
         "features consumable prioritized\n" MULTI_CLASS SLICE1 "device device-1 multi range:capacity-0=2\n"
         "claim claim-0\n"
         "firstAvailable req-0\n"
         "sub subReq-0 class-a 1 cap=4\n"
         "sub subReq-1 class-a 1 cap=2\n"
         "sub subReq-1 class-a 1\n"
         "expect\n"
         "result req-0/subReq-1 driver-a/pool-1/device-1 share "
         "consumed=capacity-0:2\n" LOCAL1)

DRA_CASE(consumable_capacity_multi_allocatable_device_with_no_available_consumable_capacity,
         CC MULTI_CLASS SLICE1 "device device-1 multi range:capacity-0=2\n"
                               "allocatedShare driver-a/pool-1/device-1 capacity-0=2\n"
                               "claim claim-0\n"
                               "request req-0 class-a 1 cap=2\n")

DRA_CASE(consumable_capacity_multi_allocatable_device_allocation_mode_all_filter_out_no_capacity,
         CC MULTI_CLASS SLICE1 "device device-1 c:capacity-0=2 multi\n"
                               "device device-2 multi\n"
                               "claim claim-0\n"
                               "request req-0 class-a all cap=2\n"
                               "expect\n" R0 "device-1 share consumed=capacity-0:2\n" LOCAL1)

DRA_CASE(consumable_capacity_multi_allocatable_device_allocation_mode_all_filter_out_insufficient_capacity,
         CC MULTI_CLASS SLICE1 "device device-1 c:capacity-0=2 multi\n"
                               "device device-2 c:capacity-0=1 multi\n"
                               "claim claim-0\n"
                               "request req-0 class-a all cap=2\n"
                               "expect\n" R0 "device-1 share consumed=capacity-0:2\n" LOCAL1)

DRA_CASE(consumable_capacity_multi_allocatable_device_allocation_mode_all_allocating_sufficient,
         CC CLASS_A SLICE1 "device device-1 c:capacity-0=2 multi\n"
                           "device device-2 c:capacity-0=1 multi\n"
                           "claim claim-0\n"
                           "request req-0 class-a 1 cap=1\n"
                           "request req-1 class-a all cap=1\n"
                           "expect\n" R0 "device-1 share consumed=capacity-0:1\n"
                           "result req-1 driver-a/pool-1/device-1 share consumed=capacity-0:1\n"
                           "result req-1 driver-a/pool-1/device-2 share consumed=capacity-0:1\n" LOCAL1)

DRA_CASE(consumable_capacity_multi_allocatable_device_allocation_mode_all_in_use_sufficient,
         CC CLASS_A SLICE1 "device device-1 c:capacity-0=2 multi\n"
                           "device device-2 c:capacity-0=1 multi\n"
                           "allocatedShare driver-a/pool-1/device-1 capacity-0=1\n"
                           "claim claim-0\n"
                           "request req-0 class-a all cap=1\n"
                           "expect\n" R0 "device-1 share consumed=capacity-0:1\n" R0
                           "device-2 share consumed=capacity-0:1\n" LOCAL1)

DRA_CASE(consumable_capacity_multi_allocatable_device_allocation_mode_all_allocating_insufficient,
         CC CLASS_A SLICE1 "device device-1 c:capacity-0=1 multi\n"
                           "device device-2 c:capacity-0=1 multi\n"
                           "claim claim-0\n"
                           "request req-0 class-a 1 cap=1\n"
                           "request req-1 class-a all cap=1\n")

DRA_CASE(consumable_capacity_multi_allocatable_device_allocation_mode_all_in_use_insufficient,
         CC CLASS_A SLICE1 "device device-1 c:capacity-0=1 multi\n"
                           "device device-2 c:capacity-0=1 multi\n"
                           "allocatedShare driver-a/pool-1/device-1 capacity-0=1\n"
                           "claim claim-0\n"
                           "request req-0 class-a all cap=1\n"
                           "expect\n" R0 "device-2 share consumed=capacity-0:1\n" LOCAL1)

DRA_CASE(consumable_capacity_dedicated_device_with_consumable_capacity_request,
         CC DEDICATED_CLASS SLICE1 "device device-1 c:capacity-0=1\n"
                                   "claim claim-0\n"
                                   "request req-0 class-a 1 cap=1\n"
                                   "expect\n" R0 "device-1\n" LOCAL1)

DRA_CASE(consumable_capacity_dedicated_device_with_multiple_consumable_capacity_request,
         CC DEDICATED_CLASS SLICE1 "device device-1 range:capacity-0=2\n" TWO_CLAIMS(" cap=1"))

DRA_CASE(allow_multiple_allocations_exclude_multi_allocatable_device_by_class_selector,
         CC DEDICATED_CLASS SLICE1 "device device-1 c:capacity-0=1 multi\n"
                                   "claim claim-0\n"
                                   "request req-0 class-a 1 cap=1\n")

DRA_CASE(allow_multiple_allocations_not_allocate_multi_allocatable_device_which_already_dedicated,
         CC MULTI_CLASS SLICE1 "device device-1 multi range:capacity-0=2\n"
                               "allocated driver-a/pool-1/device-1\n"
                               "claim claim-0\n"
                               "request req-0 class-a 1 cap=1\n")

DRA_CASE(allow_multiple_allocations_not_allocate_dedicated_device_which_change_from_multi_allocatable,
         CC MULTI_CLASS SLICE1 "device device-1 range:capacity-0=2\n"
                               "allocatedShare driver-a/pool-1/device-1 capacity-0=1\n"
                               "claim claim-0\n"
                               "request req-0 class-a 1 cap=1\n")

DRA_CASE(allow_multiple_allocations_with_partitionable_device,
         "features prioritized partitionable consumable\n" MULTI_CLASS
         "slice slice-1 node-1 pool-1:2 driver-a\n"
         "device device-1 consume:counter-set-1:memory=4Gi fromCounters multi\n"
         "device device-2 consume:counter-set-1:memory=6Gi fromCounters multi\n"
         "device device-3 consume:counter-set-1:memory=4Gi fromCounters multi\n"
         "slice slice-2 node-1 pool-1:2 driver-a\n"
         "counterset counter-set-1 memory=8Gi\n"
         "claim claim-0\n"
         "request req-0 class-a 1\n"
         "firstAvailable req-1\n"
         "sub subReq-0 class-a 1 mem>=6Gi\n"
         "sub subReq-1 class-a 1 mem>=4Gi\n"
         "expect\n" R0 "device-1 share consumed=memory:4Gi\n"
         "result req-1/subReq-1 driver-a/pool-1/device-3 share consumed=memory:4Gi\n" LOCAL1)

DRA_CASE(allow_multiple_allocations_with_shared_device_counter_cross_cycle,
         "features partitionable consumable\n" MULTI_CLASS "slice slice-1 node-1 pool-1:2 driver-a\n"
         "device device-1 s:mode=a consume:counter-set-1:capacity-0=1 fromCounters multi\n"
         "device device-2 s:mode=b consume:counter-set-1:capacity-0=1 fromCounters multi\n"
         "slice slice-2 node-1 pool-1:2 driver-a\n"
         "counterset counter-set-1 capacity-0=1\n"
         "allocatedShare driver-a/pool-1/device-1 capacity-0=1\n"
         "claim claim-0\n"
         "request req-0 class-a 1 cap=1 attr==mode:b\n")

DRA_CASE(consumable_capacity_with_partitionable_device_multiple_capacity_pools,
         "features prioritized partitionable consumable\n" CLASS_A "slice slice-1 node-1 pool-1:2 driver-a\n"
         "device device-1 consume:counter-set-1:capacity-0=2 consume:counter-set-2:capacity-1=4 fromCounters "
         "multi "
         "range:capacity-1=4\n"
         "device device-2 consume:counter-set-1:capacity-0=4 consume:counter-set-2:capacity-1=4 fromCounters "
         "multi "
         "range:capacity-1=4\n"
         "device device-3 consume:counter-set-1:capacity-0=2 consume:counter-set-2:capacity-1=4 fromCounters "
         "multi "
         "range:capacity-1=4\n"
         "slice slice-2 node-1 pool-1:2 driver-a\n"
         "counterset counter-set-1 capacity-0=4\n"
         "counterset counter-set-2 capacity-1=8\n"
         "claim claim-0\n"
         "request req-0 class-a 1 cap=1\n"
         "request req-2 class-a 1 cap=2\n"
         "firstAvailable req-1\n"
         "sub subReq-0 class-a 1 cap=1 cap0>=4\n"
         "sub subReq-1 class-a 1 cap=1 cap0>=2\n"
         "expect\n" R0 "device-1 share consumed=capacity-0:1,capacity-1:2\n"
         "result req-2 driver-a/pool-1/device-3 share consumed=capacity-0:2,capacity-1:2\n"
         "result req-1/subReq-1 driver-a/pool-1/device-1 share consumed=capacity-0:1,capacity-1:2\n" LOCAL1)

/* ---- distinctAttribute
 * --------------------------------------------------------------------------------------- */

DRA_CASE(with_distinct_constraints,
         CC CLASS_A SLICE1 "device device-1 v:driverVersion=1.0.0 i:numa=0 b:boolAttribute=true multi\n"
                           "device device-2 v:driverVersion=1.0.1 i:numa=1 b:boolAttribute=false multi\n"
                           "device device-3 v:driverVersion=1.0.2 i:numa=2 b:boolAttribute=true multi\n"
                           "device device-4 v:driverVersion=1.0.0 i:numa=3 b:boolAttribute=true multi\n"
                           "claim claim-0\n"
                           "distinct driver-a/boolAttribute req=req-0,req-1\n"
                           "distinct driver-a/driverVersion req=req-0,req-1,req-2\n"
                           "distinct driver-a/numa req=req-0,req-1,req-2,req-3\n"
                           "request req-0 class-a 1\n"
                           "request req-1 class-a 1\n"
                           "request req-2 class-a 1\n"
                           "request req-3 class-a 1\n"
                           "expect\n" R0 "device-1 share\n"
                           "result req-1 driver-a/pool-1/device-2 share\n"
                           "result req-2 driver-a/pool-1/device-3 share\n"
                           "result req-3 driver-a/pool-1/device-4 share\n" LOCAL1)

DRA_CASE(with_distinct_constraints_attribute_not_set,
         CC CLASS_A SLICE1 "device device-1 multi\n"
                           "claim claim-0\n"
                           "distinct driver-a/boolAttribute req=req-0\n"
                           "request req-0 class-a 1\n")

DRA_CASE(with_distinct_constraints_with_subrequests,
         "features consumable prioritized\n" CLASS_A SLICE1 "device device-1 b:boolAttribute=true multi\n"
         "device device-2 b:boolAttribute=false multi\n"
         "claim claim-0\n"
         "distinct driver-a/boolAttribute req=req-0,req-1\n"
         "firstAvailable req-0\n"
         "sub subReq-0 class-a 1 attr:boolAttribute\n"
         "sub subReq-1 class-a 1\n"
         "firstAvailable req-1\n"
         "sub subReq-0 class-a 1 attr:boolAttribute\n"
         "sub subReq-1 class-a 1\n"
         "firstAvailable req-2\n"
         "sub subReq-0 class-a 1 attr:boolAttribute\n"
         "sub subReq-1 class-a 1\n"
         "expect\n"
         "result req-0/subReq-0 driver-a/pool-1/device-1 share\n"
         "result req-1/subReq-1 driver-a/pool-1/device-2 share\n"
         "result req-2/subReq-0 driver-a/pool-1/device-1 share\n" LOCAL1)

DRA_CASE(distinct_constraint_one_multi_allocatable_device_with_distinct_constraint, CC MULTI_CLASS SLICE1
         "device device-1 s:stringAttribute=stringAttributeValue multi range:capacity-0=2\n"
         "claim claim-0\n"
         "distinct driver-a/stringAttribute\n"
         "request req-0 class-a 1 cap=1\n"
         "request req-1 class-a 1 cap=1\n")

DRA_CASE(distinct_constraint_two_multi_allocatable_devices_with_distinct_constraint,
         CC MULTI_CLASS "slice slice-1 node-1 pool-1:2 driver-a\n"
                        "device device-1 s:stringAttribute=stringAttributeValue1 multi range:capacity-0=4\n"
                        "slice slice-1 node-1 pool-1:2 driver-a\n"
                        "device device-2 s:stringAttribute=stringAttributeValue2 multi range:capacity-0=4\n"
                        "claim claim-0\n"
                        "distinct driver-a/stringAttribute\n"
                        "request req-0 class-a 1 cap=2\n"
                        "request req-1 class-a 1 cap=2\n"
                        "expect\n" R0 "device-1 share consumed=capacity-0:2\n"
                        "result req-1 driver-a/pool-1/device-2 share consumed=capacity-0:2\n" LOCAL1)

/* ksched: the share ids are deterministic and differ between the shares of one claim. */
DRA_CASE(ksched_share_ids_are_distinct_per_result,
         CC MULTI_CLASS SLICE1 "device device-1 multi range:capacity-0=4\n"
                               "claim claim-0 uid=0b7e6f0c-3f4e-4f7e-9c55-3a1d8b2d6c10\n"
                               "request req-0 class-a 1 cap=2\n"
                               "request req-1 class-a 1 cap=2\n"
                               "expect\n" R0 "device-1 share consumed=capacity-0:2\n"
                               "result req-1 driver-a/pool-1/device-1 share consumed=capacity-0:2\n" LOCAL1)

Test(dra_alloc, share_id_is_deterministic_uuid)
{
    cr_assert(ks_api_init() == 0);
    struct dsl *d = calloc(1, sizeof(*d));
    dsl_parse(d, "share-id",
              CC MULTI_CLASS SLICE1 "device device-1 multi range:capacity-0=4\n"
                                    "claim claim-0 uid=0b7e6f0c-3f4e-4f7e-9c55-3a1d8b2d6c10\n"
                                    "request req-0 class-a 1 cap=2\n"
                                    "request req-1 class-a 1 cap=2\n");
    struct ks_dra_catalog *cat;
    struct ks_dra_scratch *s;
    cr_assert(ks_dra_catalog_build((const struct ks_device_class *const *)d->classes, d->nclasses,
                                   (const struct ks_resource_slice *const *)d->slices, d->nslices, &d->f,
                                   &cat) == 0);
    cr_assert(ks_dra_scratch_create(&s) == 0);
    struct ks_allocation res[1];
    char err[256], first[2][64];
    for (int round = 0; round < 2; round++) {
        int rc = ks_dra_allocate(cat, NULL, &d->node, (const struct ks_resource_claim *const *)d->claims, 1,
                                 s, res, err, sizeof(err));
        cr_assert(rc == KS_DRA_ALLOCATED, "%d %s", rc, err);
        cr_assert(res[0].nresults == 2);
        for (int i = 0; i < 2; i++) {
            const char *id = res[0].results[i].share_id;
            cr_assert(id && strlen(id) == 36 && id[8] == '-' && id[13] == '-' && id[14] == '8' &&
                          id[18] == '-' && strchr("89ab", id[19]) && id[23] == '-',
                      "share id %s is no version-8 UUID", id ? id : "(null)");
            if (round == 0)
                snprintf(first[i], sizeof(first[i]), "%s", id);
            else
                cr_expect(strcmp(first[i], id) == 0, "share id %s, first %s", id, first[i]);
        }
        cr_expect(strcmp(res[0].results[0].share_id, res[0].results[1].share_id) != 0);
    }
    ks_dra_scratch_destroy(s);
    ks_dra_catalog_destroy(cat);
    ks_arena_destroy(&d->a);
    free(d);
}
