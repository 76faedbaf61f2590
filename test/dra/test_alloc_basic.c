/*
 * test_alloc_basic.c - the structured allocator against upstream's shared allocator table
 * (k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting/
 * allocator_testing.go, TestAllocator), part 1: plain requests, allocationMode All, admin
 * access, network-attached devices, constraints, configs, selectors and limits. Each case
 * keeps upstream's name (dashes as underscores) and feature set; the objects and the
 * expected answer are written in the case language of dra_dsl.h.
 *
 * Where upstream expects an error wrapping ErrFailedAllocationOnNode ("invalid resource
 * pools were encountered"), ksched answers KS_DRA_UNSUITABLE with that message.
 */
#include "dra_dsl.h"

#define CLASS_A     "class class-a driver=driver-a\n"
#define CLASS_B     "class class-b driver=driver-b\n"
#define SLICE1      "slice slice-1 node-1 pool-1 driver-a\n"
#define DEV1        "device device-1\n"
#define ONE_DEVICE  SLICE1 DEV1
#define CLAIM0_REQ0 "claim claim-0\nrequest req-0 class-a 1\n"
#define LOCAL1      "selector node:node-1\n"

DRA_CASE(empty, "")

DRA_CASE(simple, CLASS_A ONE_DEVICE CLAIM0_REQ0 "expect\n"
                                                "result req-0 driver-a/pool-1/device-1\n" LOCAL1)

DRA_CASE(other_node,
         CLASS_A "slice slice-1 node-1 pool-1 driver-b\n" DEV1 "slice slice-2 node-2 pool-2 driver-a\n" DEV1
                 "node node-2 region-2\n" CLAIM0_REQ0 "expect\n"
                 "result req-0 driver-a/pool-2/device-1\n"
                 "selector node:node-2\n")

DRA_CASE(small_and_large, CLASS_A SLICE1 "device device-1 c:memory=1Gi\n"
                                         "device device-2 c:memory=2Gi\n"
                                         "claim claim-0\n"
                                         "request req-0 class-a 1 mem>=1Gi\n"
                                         "request req-1 class-a 1 mem>=2Gi\n"
                                         "expect\n"
                                         "result req-0 driver-a/pool-1/device-1\n"
                                         "result req-1 driver-a/pool-1/device-2\n" LOCAL1)

DRA_CASE(small_and_large_backtrack_requests, CLASS_A SLICE1 "device device-2 c:memory=2Gi\n"
                                                            "device device-1 c:memory=1Gi\n"
                                                            "claim claim-0\n"
                                                            "request req-0 class-a 1 mem>=1Gi\n"
                                                            "request req-1 class-a 1 mem>=2Gi\n"
                                                            "expect\n"
                                                            "result req-0 driver-a/pool-1/device-1\n"
                                                            "result req-1 driver-a/pool-1/device-2\n" LOCAL1)

DRA_CASE(small_and_large_backtrack_claims,
         CLASS_A SLICE1 "device device-2 c:memory=2Gi\n"
                        "device device-1 c:memory=1Gi\n"
                        "claim claim-0\n"
                        "request req-0 class-a 1 mem>=1Gi\n"
                        "claim claim-1\n"
                        "request req-1 class-a 1 mem>=2Gi\n"
                        "expect\n"
                        "result req-0 driver-a/pool-1/device-1\n" LOCAL1 "expect\n"
                        "result req-1 driver-a/pool-1/device-2\n" LOCAL1)

DRA_CASE(devices_split_across_different_slices,
         CLASS_A ONE_DEVICE "slice slice-2 node-1 pool-2 driver-a\n" DEV1 "claim claim-0\n"
                            "request req-0 class-a 2\n"
                            "expect\n"
                            "result req-0 driver-a/pool-1/device-1\n"
                            "result req-0 driver-a/pool-2/device-1\n" LOCAL1)

DRA_CASE(obsolete_slice, CLASS_A "slice slice-1-obsolete node-1 pool-1:2 driver-a\n" DEV1
                                 "slice slice-1-obsolete node-1 pool-1:2:2 driver-a\n"
                                 "device device-2\n" CLAIM0_REQ0)

DRA_CASE(duplicate_slice, CLASS_A "slice slice-1 node-1 pool-1:2 driver-a\n" DEV1
                                  "slice slice-1-2 node-1 pool-1:2 driver-a\n" DEV1 CLAIM0_REQ0
                                  "unsuitable invalid resource pools were encountered\n")

DRA_CASE(no_slices, CLASS_A CLAIM0_REQ0)

DRA_CASE(not_enough_suitable_devices, CLASS_A ONE_DEVICE CLAIM0_REQ0 "claim claim-0\n"
                                                                     "request req-1 class-a 1\n")

DRA_CASE(no_classes, ONE_DEVICE CLAIM0_REQ0
         "error claim claim-0, request req-0: could not retrieve device class class-a: "
         "deviceclass.resource.k8s.io \"class-a\" not found\n")

DRA_CASE(unknown_class, CLASS_A ONE_DEVICE "claim claim-0\n"
                                           "request req-0 unknown-class 1\n"
                                           "error could not retrieve device class unknown-class\n")

DRA_CASE(empty_class,
         CLASS_A ONE_DEVICE "claim claim-0\n"
                            "request req-0 - 1\n"
                            "error claim claim-0, request req-0: missing device class name (unsupported "
                            "request type?)\n")

DRA_CASE(no_claims_to_allocate, CLASS_A ONE_DEVICE)

DRA_CASE(all_devices_single, CLASS_A ONE_DEVICE "claim claim-0\n"
                                                "request req-0 class-a all\n"
                                                "expect\n"
                                                "result req-0 driver-a/pool-1/device-1\n" LOCAL1)

DRA_CASE(all_devices_with_consumed_counters,
         "features partitionable\n" CLASS_A "slice slice-1 node-1 pool-1:2 driver-a\n"
         "device device-1 consume:counter-set-1:memory=4Gi\n"
         "slice slice-2 node-1 pool-1:2 driver-a\n"
         "counterset counter-set-1 memory=8Gi\n"
         "claim claim-0\n"
         "request req-0 class-a all\n"
         "expect\n"
         "result req-0 driver-a/pool-1/device-1\n" LOCAL1)

DRA_CASE(all_devices_many, CLASS_A ONE_DEVICE "slice slice-1 node-1 pool-2 driver-a\n" DEV1 "claim claim-0\n"
                                              "request req-0 class-a all\n"
                                              "expect\n"
                                              "result req-0 "
                                              "driver-a/pool-1/device-1\n"
                                              "result req-0 "
                                              "driver-a/pool-2/device-1\n" LOCAL1)

DRA_CASE(all_devices_of_the_incomplete_pool,
         CLASS_A "slice slice-1 node-1 pool-1:2 driver-a\n" DEV1 "claim claim-0\n"
                 "request req-0 class-a all\n"
                 "error claim claim-0, request req-0: asks for all devices, but resource "
                 "pool driver-a/pool-1 is currently being updated\n")

#define TWO_DRIVERS_ONE_DEVICE CLASS_A CLASS_B ONE_DEVICE "slice slice-1 node-1 pool-1 driver-b\n" DEV1
#define TWO_DRIVERS_TWO_DEVICES                                                                              \
    CLASS_A CLASS_B SLICE1 DEV1 "device device-2\n"                                                          \
                                "slice slice-1 node-1 pool-1 driver-b\n" DEV1

DRA_CASE(all_devices_plus_another,
         TWO_DRIVERS_ONE_DEVICE "claim claim-0\n"
                                "request req-0 class-a all\n"
                                "claim claim-1\n"
                                "request req-0 class-b 1\n"
                                "expect\n"
                                "result req-0 driver-a/pool-1/device-1\n" LOCAL1 "expect\n"
                                "result req-0 driver-b/pool-1/device-1\n" LOCAL1)

DRA_CASE(all_devices_plus_another_reversed,
         TWO_DRIVERS_ONE_DEVICE "claim claim-1\n"
                                "request req-0 class-b 1\n"
                                "claim claim-0\n"
                                "request req-0 class-a all\n"
                                "expect\n"
                                "result req-0 driver-b/pool-1/device-1\n" LOCAL1 "expect\n"
                                "result req-0 driver-a/pool-1/device-1\n" LOCAL1)

DRA_CASE(all_devices_many_plus_another,
         TWO_DRIVERS_TWO_DEVICES "claim claim-0\n"
                                 "request req-0 class-a all\n"
                                 "claim claim-1\n"
                                 "request req-0 class-b 1\n"
                                 "expect\n"
                                 "result req-0 driver-a/pool-1/device-1\n"
                                 "result req-0 driver-a/pool-1/device-2\n" LOCAL1 "expect\n"
                                 "result req-0 driver-b/pool-1/device-1\n" LOCAL1)

DRA_CASE(all_devices_many_plus_another_reversed,
         TWO_DRIVERS_TWO_DEVICES "claim claim-1\n"
                                 "request req-0 class-b 1\n"
                                 "claim claim-0\n"
                                 "request req-0 class-a all\n"
                                 "expect\n"
                                 "result req-0 driver-b/pool-1/device-1\n" LOCAL1 "expect\n"
                                 "result req-0 driver-a/pool-1/device-1\n"
                                 "result req-0 driver-a/pool-1/device-2\n" LOCAL1)

DRA_CASE(all_devices_no_solution, CLASS_A ONE_DEVICE "claim claim-1\n"
                                                     "request req-0 class-a 1\n"
                                                     "claim claim-0\n"
                                                     "request req-0 class-a all\n")

DRA_CASE(all_devices_no_solution_reversed, CLASS_A ONE_DEVICE "claim claim-0\n"
                                                              "request req-0 class-a all\n"
                                                              "claim claim-1\n"
                                                              "request req-0 class-a 1\n")

DRA_CASE(all_devices_slice_without_devices, CLASS_A SLICE1 "claim claim-0\n"
                                                           "request req-0 class-a all\n")

DRA_CASE(all_devices_no_slices, CLASS_A "claim claim-0\n"
                                        "request req-0 class-a all\n")

DRA_CASE(all_devices_some_allocated, CLASS_A SLICE1 DEV1 "device device-2\n"
                                                         "allocated driver-a/pool-1/device-1\n"
                                                         "claim claim-0\n"
                                                         "request req-0 class-a all\n")

DRA_CASE(all_devices_some_allocated_admin_access, "features admin\n" CLASS_A SLICE1 DEV1 "device device-2\n"
                                                  "allocated driver-a/pool-1/device-1\n"
                                                  "claim claim-0\n"
                                                  "request req-0 class-a all admin\n"
                                                  "expect\n"
                                                  "result req-0 driver-a/pool-1/device-1 admin\n"
                                                  "result req-0 driver-a/pool-1/device-2 admin\n" LOCAL1)

DRA_CASE(all_devices_some_allocating_admin_access, "features admin\n" CLASS_A SLICE1 DEV1 "device device-2\n"
                                                   "claim claim-0\n"
                                                   "request req-0 class-a 1 admin\n"
                                                   "request req-1 class-a all admin\n")

DRA_CASE(count_devices_some_allocated_admin_access, "features admin\n" CLASS_A SLICE1 DEV1 "device device-2\n"
                                                    "allocated driver-a/pool-1/device-1\n"
                                                    "claim claim-0\n"
                                                    "request req-0 class-a 2 admin\n"
                                                    "expect\n"
                                                    "result req-0 driver-a/pool-1/device-1 admin\n"
                                                    "result req-0 driver-a/pool-1/device-2 admin\n" LOCAL1)

DRA_CASE(separate_claims_share_device_admin_access,
         "features admin\n" CLASS_A SLICE1 DEV1 "device device-2\n"
         "claim claim-0\n"
         "request req-0 class-a 1 admin\n"
         "claim claim-1\n"
         "request req-0 class-a 1 admin\n"
         "expect\n"
         "result req-0 driver-a/pool-1/device-1 admin\n" LOCAL1 "expect\n"
         "result req-0 driver-a/pool-1/device-1 admin\n" LOCAL1)

DRA_CASE(admin_access_claims_device_allocating_for_non_admin_access,
         "features admin\n" CLASS_A SLICE1 DEV1 "device device-2\n"
         "claim claim-0\n"
         "request req-0 class-a 1\n"
         "claim claim-1\n"
         "request req-0 class-a 1 admin\n"
         "expect\n"
         "result req-0 driver-a/pool-1/device-1\n" LOCAL1 "expect\n"
         "result req-0 driver-a/pool-1/device-1 admin\n" LOCAL1)

#define FIRST_ALL_A_THEN_B                                                                                   \
    "claim claim-0\n"                                                                                        \
    "firstAvailable req-0\n"                                                                                 \
    "sub subReq-0 class-a all\n"                                                                             \
    "sub subReq-1 class-b 1\n"

DRA_CASE(all_devices_slice_without_devices_prioritized_list,
         "features prioritized\n" CLASS_A CLASS_B SLICE1
         "slice slice-2 node-1 pool-2 driver-b\n" DEV1 FIRST_ALL_A_THEN_B "expect\n"
         "result req-0/subReq-1 driver-b/pool-2/device-1\n" LOCAL1)

DRA_CASE(all_devices_no_slices_prioritized_list,
         "features prioritized\n" CLASS_A CLASS_B
         "slice slice-2 node-1 pool-2 driver-b\n" DEV1 FIRST_ALL_A_THEN_B "expect\n"
         "result req-0/subReq-1 driver-b/pool-2/device-1\n" LOCAL1)

DRA_CASE(all_devices_some_allocated_prioritized_list,
         "features prioritized\n" CLASS_A CLASS_B SLICE1 DEV1 "device device-2\n"
         "slice slice-2 node-1 pool-2 driver-b\n" DEV1
         "allocated driver-a/pool-1/device-1\n" FIRST_ALL_A_THEN_B "expect\n"
         "result req-0/subReq-1 driver-b/pool-2/device-1\n" LOCAL1)

DRA_CASE(network_attached_device,
         CLASS_A "slice slice-1 sel:region=region-1 pool-1 driver-a\n" DEV1 CLAIM0_REQ0 "expect\n"
                 "result req-0 driver-a/pool-1/device-1\n"
                 "selector region=region-1\n")

DRA_CASE(unsuccessful_allocation_network_attached_device, CLASS_A
         "slice slice-1 sel:region=region-1 pool-1 driver-a\n" DEV1 CLAIM0_REQ0 "node node-2 region-2\n")

DRA_CASE(many_network_attached_devices, CLASS_A
         "slice slice-1 sel:region=region-1 pool-1 driver-a\n" DEV1 "slice slice-1 all pool-2 driver-a\n" DEV1
         "slice slice-1 sel:planet=earth pool-3 driver-a\n" DEV1
         "slice slice-1 fields:node-1 pool-4 driver-a\n" DEV1 "claim claim-0\n"
         "request req-0 class-a 4\n"
         "expect\n"
         "result req-0 driver-a/pool-1/device-1\n"
         "result req-0 driver-a/pool-2/device-1\n"
         "result req-0 driver-a/pool-3/device-1\n"
         "result req-0 driver-a/pool-4/device-1\n"
         "selector region=region-1 planet=earth field:metadata.name=node-1\n")

DRA_CASE(local_and_network_attached_devices,
         CLASS_A "slice slice-1 sel:region=region-1 pool-1 driver-a\n" DEV1
                 "slice slice-1 node-1 pool-2 driver-a\n" DEV1 "claim claim-0\n"
                 "request req-0 class-a 2\n"
                 "expect\n"
                 "result req-0 driver-a/pool-1/device-1\n"
                 "result req-0 driver-a/pool-2/device-1\n" LOCAL1)

DRA_CASE(several_different_drivers,
         TWO_DRIVERS_TWO_DEVICES "claim claim-0\n"
                                 "request req-0 class-a 1\n"
                                 "claim claim-0\n"
                                 "request req-0 class-b 1\n"
                                 "expect\n"
                                 "result req-0 driver-a/pool-1/device-1\n" LOCAL1 "expect\n"
                                 "result req-0 driver-b/pool-1/device-1\n" LOCAL1)

DRA_CASE(already_allocated_devices, CLASS_A ONE_DEVICE CLAIM0_REQ0 "allocated driver-a/pool-1/device-1\n"
                                                                   "allocated driver-a/pool-1/device-2\n")

DRA_CASE(admin_access_disabled,
         CLASS_A ONE_DEVICE "claim claim-0\n"
                            "request req-0 class-a 1 admin\n"
                            "error claim claim-0, request req-0: admin access is requested, but "
                            "the feature is disabled\n")

DRA_CASE(admin_access_enabled, "features admin\n" CLASS_A ONE_DEVICE "claim claim-0\n"
                               "request req-0 class-a 1 admin\n"
                               "allocated driver-a/pool-1/device-1\n"
                               "allocated driver-a/pool-1/device-2\n"
                               "expect\n"
                               "result req-0 driver-a/pool-1/device-1 admin\n" LOCAL1)

#define FULL_ATTRS                                                                                           \
    "v:driverVersion=1.0.0 i:numa=1 s:stringAttribute=stringAttributeValue b:boolAttribute=true"

DRA_CASE(with_constraint, CLASS_A SLICE1 "device device-1 " FULL_ATTRS "\n"
                                         "device device-2 " FULL_ATTRS "\n"
                                         "claim claim-0\n"
                                         "match driver-a/numa\n"
                                         "match driver-a/driverVersion\n"
                                         "match driver-a/stringAttribute\n"
                                         "match driver-a/boolAttribute\n"
                                         "request req-0 class-a 1\n"
                                         "request req-1 class-a 1\n"
                                         "expect\n"
                                         "result req-0 driver-a/pool-1/device-1\n"
                                         "result req-1 driver-a/pool-1/device-2\n" LOCAL1)

DRA_CASE(with_constraint_non_existent_attribute,
         CLASS_A ONE_DEVICE CLAIM0_REQ0 "match driver-a/NonExistentAttribute\n")

#define TWO_ATTR_DEVICES(a1, a2) CLASS_A CLASS_B SLICE1 "device device-1 " a1 "\ndevice device-2 " a2 "\n"

DRA_CASE(with_constraint_not_matching_int_attribute,
         TWO_ATTR_DEVICES("i:numa=1", "i:numa=2") "claim claim-0\n"
                                                  "match driver-a/numa\n"
                                                  "request req-0 class-a 2\n")

DRA_CASE(with_constraint_not_matching_int_attribute_all_devices,
         TWO_ATTR_DEVICES("i:numa=1",
                          "i:numa=2") "claim claim-0\n"
                                      "match driver-a/numa\n"
                                      "request req-0 class-a all\n"
                                      "error claim claim-0, request req-0: cannot add device "
                                      "driver-a/pool-1/device-2 because a claim constraint would not be "
                                      "satisfied\n")

DRA_CASE(with_constraint_not_matching_string_attribute,
         TWO_ATTR_DEVICES("s:stringAttribute=stringAttributeValue",
                          "s:stringAttribute=stringAttributeValue2") "claim claim-0\n"
                                                                     "match driver-a/stringAttribute\n"
                                                                     "request req-0 class-a 2\n")

DRA_CASE(with_constraint_not_matching_bool_attribute,
         TWO_ATTR_DEVICES("b:boolAttribute=true", "b:boolAttribute=false") "claim claim-0\n"
                                                                           "match driver-a/boolAttribute\n"
                                                                           "request req-0 class-a 2\n")

DRA_CASE(with_constraint_not_matching_version_attribute,
         TWO_ATTR_DEVICES("v:driverVersion=1.0.0", "v:driverVersion=2.0.0") "claim claim-0\n"
                                                                            "match driver-a/driverVersion\n"
                                                                            "request req-0 class-a 2\n")

DRA_CASE(with_constraint_for_request,
         TWO_ATTR_DEVICES("v:driverVersion=1.0.0",
                          "v:driverVersion=2.0.0") "claim claim-0\n"
                                                   "match driver-a/driverVersion req=req-0\n"
                                                   "request req-0 class-a 1\n"
                                                   "request req-1 class-a 1\n"
                                                   "expect\n"
                                                   "result req-0 driver-a/pool-1/device-1\n"
                                                   "result req-1 driver-a/pool-1/device-2\n" LOCAL1)

DRA_CASE(with_constraint_for_request_retry,
         CLASS_A CLASS_B SLICE1 "device device-1 v:driverVersion=1.0.0 s:stringAttribute=a\n"
                                "device device-2 v:driverVersion=2.0.0 s:stringAttribute=b\n"
                                "device device-3 v:driverVersion=3.0.0 s:stringAttribute=b\n"
                                "claim claim-0\n"
                                "match driver-a/driverVersion req=req-0\n"
                                "match driver-a/stringAttribute\n"
                                "request req-0 class-a 1\n"
                                "request req-1 class-a 1\n"
                                "expect\n"
                                "result req-0 driver-a/pool-1/device-2\n"
                                "result req-1 driver-a/pool-1/device-3\n" LOCAL1)

DRA_CASE(with_class_device_config,
         "class class-a driver=driver-a config=classAttribute\n" ONE_DEVICE CLAIM0_REQ0 "expect\n"
         "result req-0 driver-a/pool-1/device-1\n" LOCAL1 "cfg class driver-a classAttribute\n")

DRA_CASE(with_class_device_config_with_multiple_request_and_configs,
         "class class-a driver=driver-a config=classAttribute-A\n"
         "class class-b driver=driver-b config=classAttribute-B\n" SLICE1 "devices 2\n"
         "slice slice-2 node-1 pool-1 driver-b\n" DEV1 "claim claim-0\n"
         "request req-0 class-a 1\n"
         "request req-1 class-a 1\n"
         "request req-2 class-b 1\n"
         "expect\n"
         "result req-0 driver-a/pool-1/device-0\n"
         "result req-1 driver-a/pool-1/device-1\n"
         "result req-2 driver-b/pool-1/device-1\n" LOCAL1
         "cfg class driver-a classAttribute-A req=req-0,req-1\n"
         "cfg class driver-b classAttribute-B req=req-2\n")

DRA_CASE(with_claim_config_for_two_requests,
         CLASS_A SLICE1 "devices 3\n"
                        "claim claim-0\n"
                        "request req-0 class-a 1\n"
                        "request req-1 class-a 1\n"
                        "request req-2 class-a 1\n"
                        "config driver-a deviceAttribute req=req-0,req-1\n"
                        "expect\n"
                        "result req-0 driver-a/pool-1/device-0\n"
                        "result req-1 driver-a/pool-1/device-1\n"
                        "result req-2 driver-a/pool-1/device-2\n" LOCAL1
                        "cfg claim driver-a deviceAttribute req=req-0,req-1\n")

DRA_CASE(claim_with_device_config, CLASS_A ONE_DEVICE CLAIM0_REQ0
         "config driver-a deviceAttribute\n"
         "expect\n"
         "result req-0 driver-a/pool-1/device-1\n" LOCAL1 "cfg claim driver-a deviceAttribute\n")

DRA_CASE(unknown_selector,
         CLASS_A ONE_DEVICE "claim claim-0\n"
                            "request req-0 class-a 1 sel-empty\n"
                            "error claim claim-0, request req-0, selector #0: CEL expression empty "
                            "(unsupported selector type?)\n")

DRA_CASE(unknown_allocation_mode,
         CLASS_A ONE_DEVICE "claim claim-0\n"
                            "request req-0 class-a mode:future-mode\n"
                            "error claim claim-0, request req-0: unsupported count mode "
                            "future-mode\n")

DRA_CASE(unknown_constraint,
         CLASS_A ONE_DEVICE CLAIM0_REQ0 "constraint-empty\n"
                                        "error claim claim-0, constraint #0: empty constraint "
                                        "(unsupported constraint type?)\n")

DRA_CASE(invalid_CEL_one_device,
         CLASS_A ONE_DEVICE "claim claim-0\n"
                            "request req-0 class-a 1 sel `noSuchVar`\n"
                            "error claim claim-0: selector #0: CEL compile error: compilation "
                            "failed: ERROR: <input>:1:1: undeclared reference to 'noSuchVar'\n")

DRA_CASE(invalid_CEL_one_device_class,
         "class class-a sel `noSuchVar`\n" ONE_DEVICE CLAIM0_REQ0
         "error class class-a: selector #0: CEL compile error: compilation failed: "
         "ERROR: <input>:1:1: undeclared reference to 'noSuchVar'\n")

DRA_CASE(invalid_CEL_all_devices, CLASS_A ONE_DEVICE "claim claim-0\n"
                                                     "request req-0 class-a all sel `noSuchVar`\n"
                                                     "error undeclared reference\n")

DRA_CASE(too_many_devices_single_request,
         CLASS_A "claim claim-0\n"
                 "request req-0 class-a 500\n"
                 "error claim claim-0: number of requested devices 500 exceeds the "
                 "claim limit of 32\n")

DRA_CASE(many_devices_okay, CLASS_A "claim claim-0\n"
                                    "request req-0 class-a 32\n")

DRA_CASE(too_many_devices_total,
         CLASS_A SLICE1 "devices 33\n"
                        "claim claim-0\n"
                        "request req-0 class-a 32\n"
                        "request req-1 class-a 1\n"
                        "error claim claim-0: number of requested devices 33 exceeds the claim "
                        "limit of 32\n")

DRA_CASE(all_devices_invalid_CEL, CLASS_A "claim claim-0\n"
                                          "request req-0 class-a 500\n"
                                          "error exceeds the claim limit\n")

DRA_CASE(max_number_devices, CLASS_A SLICE1 "devices 32\n"
                                            "claim claim-0\n"
                                            "request req-0 class-a 32\n"
                                            "expect\n"
                                            "results req-0 driver-a/pool-1 32 0\n" LOCAL1)

/* ksched additions beyond upstream's table, same features: a namespaced claim in the messages. */
DRA_CASE(ksched_namespaced_claim_in_errors,
         CLASS_A ONE_DEVICE "claim claim-0 ns=team-a\n"
                            "request req-0 class-b 1\n"
                            "error claim team-a/claim-0, request req-0: could not "
                            "retrieve device class class-b: "
                            "deviceclass.resource.k8s.io \"class-b\" not found\n")
