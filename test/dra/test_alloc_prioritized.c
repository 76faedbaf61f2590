/*
 * test_alloc_prioritized.c - upstream's allocator table (allocator_testing.go, TestAllocator),
 * part 2: firstAvailable requests (DRAPrioritizedList), their configs and constraints, and
 * the 32-result limit across subrequests. Names and feature sets are upstream's.
 */
#include "dra_dsl.h"

#define CLASS_A "class class-a driver=driver-a\n"
#define CLASS_B "class class-b driver=driver-b\n"
#define SLICE1  "slice slice-1 node-1 pool-1 driver-a\n"
#define DEV1    "device device-1\n"
#define LOCAL1  "selector node:node-1\n"
#define PRIO    "features prioritized\n"

DRA_CASE(prioritized_list_first_unavailable,
         PRIO CLASS_A CLASS_B SLICE1 DEV1 "claim claim-0\n"
                                          "firstAvailable req-0\n"
                                          "sub subReq-0 class-b 1\n"
                                          "sub subReq-1 class-a 1\n"
                                          "expect\n"
                                          "result req-0/subReq-1 "
                                          "driver-a/pool-1/device-1\n" LOCAL1)

DRA_CASE(prioritized_list_non_available,
         PRIO CLASS_A CLASS_B SLICE1 DEV1 "slice slice-2 node-1 pool-2 driver-b\n" DEV1 "claim claim-0\n"
                                          "firstAvailable req-0\n"
                                          "sub subReq-0 class-b 2\n"
                                          "sub subReq-1 class-a 2\n")

DRA_CASE(prioritized_list_device_config, PRIO CLASS_A CLASS_B
         "slice slice-1 node-1 pool-1 driver-b\n" DEV1 "device device-2\n"
         "claim claim-0\n"
         "firstAvailable req-0\n"
         "sub subReq-0 class-a 1\n"
         "sub subReq-1 class-b 2\n"
         "config driver-a foo req=req-0/subReq-0\n"
         "config driver-b bar req=req-0/subReq-1\n"
         "expect\n"
         "result req-0/subReq-1 driver-b/pool-1/device-1\n"
         "result req-0/subReq-1 driver-b/pool-1/device-2\n" LOCAL1 "cfg claim driver-b bar\n")

DRA_CASE(prioritized_list_class_config,
         PRIO "class class-a driver=driver-a config=foo\n"
              "class class-b driver=driver-b config=bar\n"
              "slice slice-1 node-1 pool-1 driver-b\n" DEV1 "device device-2\n"
              "slice slice-2 node-1 pool-2 driver-a\n"
              "device device-3\n"
              "claim claim-0\n"
              "firstAvailable req-0\n"
              "sub subReq-0 class-a 2\n"
              "sub subReq-1 class-b 2\n"
              "expect\n"
              "result req-0/subReq-1 driver-b/pool-1/device-1\n"
              "result req-0/subReq-1 driver-b/pool-1/device-2\n" LOCAL1 "cfg class driver-b bar\n")

DRA_CASE(claim_config_scoped_to_subrequests_of_one_request,
         PRIO CLASS_A CLASS_B SLICE1 "devices 2\n"
                                     "claim claim-0\n"
                                     "firstAvailable req-0\n"
                                     "sub subReq-0 class-a 1\n"
                                     "sub subReq-1 class-b 1\n"
                                     "request req-1 class-a 1\n"
                                     "config driver-a scoped req=req-0/subReq-0,req-0/subReq-1\n"
                                     "expect\n"
                                     "result req-0/subReq-0 driver-a/pool-1/device-0\n"
                                     "result req-1 driver-a/pool-1/device-1\n" LOCAL1
                                     "cfg claim driver-a scoped req=req-0/subReq-0,req-0/subReq-1\n")

DRA_CASE(claim_config_covering_all_requests_is_cleared,
         PRIO CLASS_A CLASS_B SLICE1 "devices 2\n"
                                     "claim claim-0\n"
                                     "firstAvailable req-0\n"
                                     "sub subReq-0 class-a 1\n"
                                     "sub subReq-1 class-b 1\n"
                                     "request req-1 class-a 1\n"
                                     "config driver-a all "
                                     "req=req-0/subReq-0,req-1\n"
                                     "expect\n"
                                     "result req-0/subReq-0 "
                                     "driver-a/pool-1/device-0\n"
                                     "result req-1 "
                                     "driver-a/pool-1/device-1\n" LOCAL1 "cfg claim driver-a all\n")

DRA_CASE(prioritized_list_subrequests_with_expressions,
         PRIO CLASS_A SLICE1 "device device-1 c:memory=2Gi\n"
                             "device device-2 c:memory=2Gi\n"
                             "device device-3 c:memory=1Gi\n"
                             "claim claim-0\n"
                             "request req-0 class-a 1 mem>=1Gi\n"
                             "firstAvailable req-1\n"
                             "sub subReq-0 class-a 1 mem>=4Gi\n"
                             "sub subReq-1 class-a 2 mem>=2Gi\n"
                             "expect\n"
                             "result req-0 driver-a/pool-1/device-3\n"
                             "result req-1/subReq-1 "
                             "driver-a/pool-1/device-1\n"
                             "result req-1/subReq-1 "
                             "driver-a/pool-1/device-2\n" LOCAL1)

#define PARENT_CONSTRAINT_CLAIM(reqs)                                                                        \
    "claim claim-0\n"                                                                                        \
    "match driver-a/driverVersion req=" reqs "\n"                                                            \
    "request req-0 class-a 1 mem>=8Gi\n"                                                                     \
    "firstAvailable req-1\n"                                                                                 \
    "sub subReq-0 class-a 1 mem>=2Gi\n"                                                                      \
    "sub subReq-1 class-a 1 mem>=1Gi\n"

DRA_CASE(prioritized_list_subrequests_with_constraints_ref_parent_request,
         PRIO CLASS_A SLICE1 "device device-1 c:memory=8Gi v:driverVersion=1.0.0\n"
                             "slice slice-2 node-1 pool-2 driver-a\n"
                             "device device-2 c:memory=2Gi v:driverVersion=2.0.0\n"
                             "device device-3 c:memory=1Gi v:driverVersion=1.0.0\n" PARENT_CONSTRAINT_CLAIM(
                                 "req-0,req-1") "expect\n"
                                                "result req-0 driver-a/pool-1/device-1\n"
                                                "result req-1/subReq-1 driver-a/pool-2/device-3\n" LOCAL1)

DRA_CASE(prioritized_list_subrequests_with_constraints_ref_sub_request, PRIO CLASS_A SLICE1
         "device device-1 c:memory=8Gi v:driverVersion=1.0.0\n"
         "slice slice-2 node-1 pool-2 driver-a\n"
         "device device-2 c:memory=2Gi v:driverVersion=2.0.0\n" PARENT_CONSTRAINT_CLAIM(
             "req-0,req-1/subReq-0") "expect\n"
                                     "result req-0 driver-a/pool-1/device-1\n"
                                     "result req-1/subReq-1 driver-a/pool-2/device-2\n" LOCAL1)

DRA_CASE(prioritized_list_subrequests_with_allocation_mode_all,
         PRIO CLASS_A SLICE1 DEV1 "device device-2\n"
                                  "allocated driver-a/pool-1/device-1\n"
                                  "claim claim-0\n"
                                  "firstAvailable req-0\n"
                                  "sub subReq-0 class-a all\n"
                                  "sub subReq-1 class-a 1\n"
                                  "expect\n"
                                  "result req-0/subReq-1 driver-a/pool-1/device-2\n" LOCAL1)

DRA_CASE(prioritized_list_allocation_mode_all_multiple_requests,
         PRIO CLASS_A SLICE1 DEV1 "device device-2\n"
                                  "claim claim-0\n"
                                  "request req-0 class-a 1\n"
                                  "firstAvailable req-1\n"
                                  "sub subReq-0 class-a all\n"
                                  "sub subReq-1 class-a 1\n"
                                  "expect\n"
                                  "result req-0 driver-a/pool-1/device-1\n"
                                  "result req-1/subReq-1 driver-a/pool-1/device-2\n" LOCAL1)

DRA_CASE(prioritized_list_disabled,
         CLASS_A SLICE1 DEV1 "claim claim-0\n"
                             "firstAvailable req-0\n"
                             "sub subReq-0 class-a 1\n"
                             "error claim claim-0, request req-0: has subrequests, but the "
                             "DRAPrioritizedList feature is disabled\n")

#define MEM8_MEM4_POOLS                                                                                      \
    SLICE1 "device device-1 c:memory=8Gi\n"                                                                  \
           "slice slice-2 node-1 pool-2 driver-a\n"                                                          \
           "device device-2 c:memory=4Gi\n"

DRA_CASE(prioritized_list_multi_request,
         PRIO CLASS_A MEM8_MEM4_POOLS "claim claim-0\n"
                                      "request req-1 class-a 1 mem>=8Gi\n"
                                      "firstAvailable req-0\n"
                                      "sub subReq-0 class-a 1 mem>=8Gi\n"
                                      "sub subReq-1 class-a 1 mem>=4Gi\n"
                                      "expect\n"
                                      "result req-1 driver-a/pool-1/device-1\n"
                                      "result req-0/subReq-1 driver-a/pool-2/device-2\n" LOCAL1)

DRA_CASE(prioritized_list_with_backtracking,
         PRIO CLASS_A MEM8_MEM4_POOLS "claim claim-0\n"
                                      "firstAvailable req-0\n"
                                      "sub subReq-0 class-a 1 mem>=8Gi\n"
                                      "sub subReq-1 class-a 1 mem>=4Gi\n"
                                      "request req-1 class-a 1 mem>=8Gi\n"
                                      "expect\n"
                                      "result req-0/subReq-1 "
                                      "driver-a/pool-2/device-2\n"
                                      "result req-1 driver-a/pool-1/device-1\n" LOCAL1)

DRA_CASE(prioritized_list_too_many_in_first_subrequest,
         PRIO CLASS_A CLASS_B SLICE1 DEV1 "claim claim-0\n"
                                          "firstAvailable req-0\n"
                                          "sub subReq-0 class-b 500\n"
                                          "sub subReq-1 class-a 1\n"
                                          "expect\n"
                                          "result req-0/subReq-1 "
                                          "driver-a/pool-1/device-1\n" LOCAL1)

DRA_CASE(prioritized_list_allocation_mode_all, PRIO CLASS_A SLICE1 DEV1 "device device-2\n"
                                                                        "allocated driver-a/pool-1/device-2\n"
                                                                        "claim claim-0\n"
                                                                        "firstAvailable req-0\n"
                                                                        "sub subReq-0 class-a all\n"
                                                                        "sub subReq-1 class-a 1\n"
                                                                        "expect\n"
                                                                        "result req-0/subReq-1 "
                                                                        "driver-a/pool-1/device-1\n" LOCAL1)

#define GEN_V6_V5                                                                                            \
    "claim claim-0\n"                                                                                        \
    "firstAvailable req-0\n"                                                                                 \
    "sub subReq-0 class-a all attr==generation:v6\n"                                                         \
    "sub subReq-1 class-a all attr==generation:v5\n"

DRA_CASE(prioritized_list_allocation_mode_all_with_selectors,
         PRIO CLASS_A SLICE1 "device device-1 s:generation=v5\n" GEN_V6_V5 "expect\n"
                             "result req-0/subReq-1 driver-a/pool-1/device-1\n" LOCAL1)

DRA_CASE(prioritized_list_allocation_mode_all_with_selectors_multiple_pools,
         PRIO CLASS_A SLICE1 "device device-1 s:generation=v5\n"
                             "slice slice-2 node-1 pool-2 driver-a\n"
                             "device device-1 s:generation=v5\n" GEN_V6_V5 "expect\n"
                             "result req-0/subReq-1 driver-a/pool-1/device-1\n"
                             "result req-0/subReq-1 driver-a/pool-2/device-1\n" LOCAL1)

DRA_CASE(prioritized_list_allocation_mode_all_with_selectors_multiple_pools_across_nodes,
         PRIO CLASS_A SLICE1 "device device-1 s:generation=v5\n"
                             "slice slice-2 node-2 pool-2 driver-a\n"
                             "device device-1 s:generation=v5\n"
                             "device device-2 s:generation=v6\n" GEN_V6_V5 "expect\n"
                             "result req-0/subReq-1 driver-a/pool-1/device-1\n" LOCAL1)

DRA_CASE(
    prioritized_list_allocation_mode_all_with_selectors_deviceclass_subset, PRIO
    "class class-a sel `device.driver == \"driver-a\" && device.attributes[\"driver-a\"].selected`\n" SLICE1
    "device device-1 s:generation=v6 b:selected=false\n"
    "device device-2 s:generation=v5 b:selected=false\n"
    "device device-3 s:generation=v5 b:selected=true\n" GEN_V6_V5 "expect\n"
    "result req-0/subReq-1 driver-a/pool-1/device-3\n" LOCAL1)

DRA_CASE(prioritized_list_max_allocation_limit_request,
         PRIO CLASS_A SLICE1 "devices 64\n"
                             "claim claim-0\n"
                             "firstAvailable req-0\n"
                             "sub subReq-0 class-a 32\n"
                             "sub subReq-1 class-a 16\n"
                             "firstAvailable req-1\n"
                             "sub subReq-0 class-a 32\n"
                             "sub subReq-1 class-a 16\n"
                             "expect\n"
                             "results req-0/subReq-1 driver-a/pool-1 16 0\n"
                             "results req-1/subReq-1 driver-a/pool-1 16 16\n" LOCAL1 "steps 75\n")

DRA_CASE(prioritized_list_max_allocation_allocation_mode_all,
         PRIO CLASS_A CLASS_B SLICE1 "devices 31\n"
                                     "slice slice-2 node-1 pool-2 driver-b\n"
                                     "devices 2\n"
                                     "claim claim-0\n"
                                     "firstAvailable req-0\n"
                                     "sub subReq-0 class-a all\n"
                                     "sub subReq-1 class-a 2\n"
                                     "request req-1 class-b 2\n"
                                     "expect\n"
                                     "result req-0/subReq-1 driver-a/pool-1/device-0\n"
                                     "result req-0/subReq-1 driver-a/pool-1/device-1\n"
                                     "result req-1 driver-b/pool-2/device-0\n"
                                     "result req-1 driver-b/pool-2/device-1\n" LOCAL1 "steps 42\n")

DRA_CASE(check_combinations_with_prioritized_list,
         PRIO CLASS_A SLICE1 "device device-1 s:type=X\n"
                             "device device-2 s:type=Y\n"
                             "device device-3 s:type=Y\n"
                             "claim claim-0\n"
                             "firstAvailable req-1\n"
                             "sub subReq-0 class-a 3 attr==type:Y\n"
                             "sub subReq-1 class-a 2\n"
                             "firstAvailable req-2\n"
                             "sub subReq-0 class-a 2\n"
                             "sub subReq-1 class-a 1 attr==type:X\n"
                             "expect\n"
                             "result req-1/subReq-1 driver-a/pool-1/device-2\n"
                             "result req-1/subReq-1 driver-a/pool-1/device-3\n"
                             "result req-2/subReq-1 driver-a/pool-1/device-1\n" LOCAL1 "steps 26\n")
