/*
 * test_alloc_partitionable.c - upstream's allocator table (allocator_testing.go,
 * TestAllocator), part 3: partitionable devices (shared counters, per-device node
 * selection), device taints and binding conditions. Names and feature sets are upstream's.
 */
#include "dra_dsl.h"

#define CLASS_A              "class class-a driver=driver-a\n"
#define CLASS_B              "class class-b driver=driver-b\n"
#define SLICE1               "slice slice-1 node-1 pool-1 driver-a\n"
#define DEV1                 "device device-1\n"
#define LOCAL1               "selector node:node-1\n"
#define PART                 "features partitionable\n"
#define PRIO_PART            "features prioritized partitionable\n"
#define CS_SLICE(name, pool) "slice " name " node-1 " pool " driver-a\n"

DRA_CASE(partitionable_devices_single_device,
         PART CLASS_A "slice slice-1 node-1 pool-1:2 driver-a\n"
                      "device device-1 consume:counter-set-1:memory=4Gi\n" CS_SLICE(
                          "slice-2", "pool-1:2") "counterset counter-set-1 memory=8Gi\n"
                                                 "claim claim-0\n"
                                                 "request req-0 class-a 1\n"
                                                 "expect\n"
                                                 "result req-0 "
                                                 "driver-a/pool-1/device-1\n" LOCAL1)

#define THREE_MEM_DEVICES                                                                                    \
    "slice slice-1 node-1 pool-1:2 driver-a\n"                                                               \
    "device device-1 consume:counter-set-1:memory=4Gi fromCounters\n"                                        \
    "device device-2 consume:counter-set-1:memory=6Gi fromCounters\n"                                        \
    "device device-3 consume:counter-set-1:memory=4Gi fromCounters\n" CS_SLICE(                              \
        "slice-2", "pool-1:2") "counterset counter-set-1 memory=8Gi\n"

DRA_CASE(partitionable_devices_prioritized_list,
         PRIO_PART CLASS_A THREE_MEM_DEVICES "claim claim-0\n"
                                             "request req-0 class-a 1\n"
                                             "firstAvailable req-1\n"
                                             "sub subReq-0 class-a 1 mem>=6Gi\n"
                                             "sub subReq-1 class-a 1 mem>=4Gi\n"
                                             "expect\n"
                                             "result req-0 "
                                             "driver-a/pool-1/device-1\n"
                                             "result req-1/subReq-1 "
                                             "driver-a/pool-1/device-3\n" LOCAL1)

DRA_CASE(partitionable_devices_multiple_devices,
         PART CLASS_A THREE_MEM_DEVICES "claim claim-0\n"
                                        "request req-0 class-a 1\n"
                                        "request req-1 class-a 1\n"
                                        "expect\n"
                                        "result req-0 driver-a/pool-1/device-1\n"
                                        "result req-1 driver-a/pool-1/device-3\n" LOCAL1)

DRA_CASE(partitionable_devices_multiple_capacity_pools, PRIO_PART CLASS_A
         "slice slice-1 node-1 pool-1:2 driver-a\n"
         "device device-1 consume:counter-set-1:memory=4Gi consume:counter-set-2:cpus=4 fromCounters\n"
         "device device-2 consume:counter-set-1:memory=6Gi consume:counter-set-2:cpus=6 fromCounters\n"
         "device device-3 consume:counter-set-1:memory=4Gi consume:counter-set-2:cpus=4 "
         "fromCounters\n" CS_SLICE("slice-2", "pool-1:2") "counterset counter-set-1 memory=18Gi\n"
                                                          "counterset counter-set-2 cpus=8\n"
                                                          "claim claim-0\n"
                                                          "request req-0 class-a 1\n"
                                                          "firstAvailable req-1\n"
                                                          "sub subReq-0 class-a 1 mem>=6Gi\n"
                                                          "sub subReq-1 class-a 1 mem>=4Gi\n"
                                                          "expect\n"
                                                          "result req-0 driver-a/pool-1/device-1\n"
                                                          "result req-1/subReq-1 "
                                                          "driver-a/pool-1/device-3\n" LOCAL1)

DRA_CASE(partitionable_devices_multiple_counters, PART CLASS_A
         "slice slice-1 node-1 pool-1:2 driver-a\n"
         "device device-1 consume:counter-set-1:memory=4Gi,cpus=6 consume:counter-set-2:cpus=4,memory=2Gi "
         "fromCounters\n"
         "device device-2 consume:counter-set-1:memory=6Gi,cpus=4 consume:counter-set-2:cpus=6,memory=6Gi "
         "fromCounters\n"
         "device device-3 consume:counter-set-1:memory=4Gi,cpus=4 consume:counter-set-2:cpus=4,memory=4Gi "
         "fromCounters\n" CS_SLICE("slice-2", "pool-1:2") "counterset counter-set-1 cpus=8 memory=18Gi\n"
                                                          "counterset counter-set-2 cpus=12 memory=18Gi\n"
                                                          "claim claim-0\n"
                                                          "request req-0 class-a 1\n"
                                                          "request req-1 class-a 1\n"
                                                          "expect\n"
                                                          "result req-0 driver-a/pool-1/device-2\n"
                                                          "result req-1 driver-a/pool-1/device-3\n" LOCAL1)

DRA_CASE(partitionable_devices_multiple_pools, PART CLASS_A
         "slice slice-1 node-1 pool-1:2 driver-a\n"
         "device device-1 consume:counter-set-1:cpus=6,memory=4Gi fromCounters\n"
         "device device-2 consume:counter-set-1:cpus=4,memory=6Gi fromCounters\n"
         "device device-3 consume:counter-set-1:cpus=4,memory=4Gi fromCounters\n" CS_SLICE(
             "slice-2", "pool-1:2") "counterset counter-set-1 cpus=8 memory=18Gi\n"
                                    "slice slice-3 node-1 pool-2:2 driver-a\n"
                                    "device device-1 consume:counter-set-1:cpus=6,memory=4Gi fromCounters\n"
                                    "device device-2 consume:counter-set-1:cpus=1,memory=7Gi fromCounters\n"
                                    "device device-3 consume:counter-set-1:cpus=1,memory=7Gi "
                                    "fromCounters\n" CS_SLICE(
                                        "slice-4",
                                        "pool-2:2") "counterset counter-set-1 cpus=8 memory=18Gi\n"
                                                    "allocated driver-a/pool-1/device-2\n"
                                                    "allocated driver-a/pool-1/device-3\n"
                                                    "allocated driver-a/pool-2/device-1\n"
                                                    "claim claim-0\n"
                                                    "request req-0 class-a 1\n"
                                                    "request req-1 class-a 1\n"
                                                    "expect\n"
                                                    "result req-0 driver-a/pool-2/device-2\n"
                                                    "result req-1 driver-a/pool-2/device-3\n" LOCAL1)

DRA_CASE(partitionable_devices_unused_counters_in_counter_set,
         PART CLASS_A "slice slice-1 node-1 pool-1:2 driver-a\n"
                      "device device-1 consume:counter-set-1:memory=5Gi\n"
                      "device device-2 consume:counter-set-1:memory=4Gi\n"
                      "device device-3 consume:counter-set-1:memory=4Gi\n" CS_SLICE(
                          "slice-2", "pool-1:2") "counterset counter-set-1 memory=8Gi unused=1Gi\n"
                                                 "claim claim-0\n"
                                                 "request req-0 class-a 2\n"
                                                 "expect\n"
                                                 "result req-0 driver-a/pool-1/device-2\n"
                                                 "result req-0 driver-a/pool-1/device-3\n" LOCAL1)

#define ONE_COUNT_POOL(big)                                                                                  \
    SLICE1 "device device-1 consume:counter-set-1:memory=4Gi fromCounters\n"                                 \
           "device device-2 consume:counter-set-1:memory=" big                                               \
           " fromCounters\n" CS_SLICE("slice-2", "pool-1") "counterset counter-set-1 memory=18Gi\n"

DRA_CASE(partitionable_devices_no_capacity_available,
         PART CLASS_A ONE_COUNT_POOL("16Gi") "allocated driver-a/pool-1/device-2\n"
                                             "claim claim-0\n"
                                             "request req-0 class-a 1\n")

DRA_CASE(partitionable_devices_overallocated_capacity_pool,
         PART CLASS_A ONE_COUNT_POOL("20Gi") "allocated driver-a/pool-1/device-2\n"
                                             "claim claim-0\n"
                                             "request req-0 class-a 1\n")

DRA_CASE(partitionable_devices_disabled_device_consumes_counters,
         CLASS_A SLICE1 "device device-1 consume:counter-set-1:memory=4Gi\n" CS_SLICE(
             "slice-2", "pool-1") "counterset counter-set-1 memory=18Gi\n"
                                  "claim claim-0\n"
                                  "request req-0 class-a 1\n")

DRA_CASE(partitionable_devices_disabled_other_device_do_not_consume_counters, CLASS_A
         "slice slice-1 node-1 pool-1:2 driver-a\n"
         "device device-1 consume:counter-set-1:memory=4Gi\n"
         "device device-2\n" CS_SLICE("slice-2", "pool-1:2") "counterset counter-set-1 memory=18Gi\n"
                                                             "claim claim-0\n"
                                                             "request req-0 class-a 1\n"
                                                             "expect\n"
                                                             "result req-0 driver-a/pool-1/device-2\n" LOCAL1)

DRA_CASE(partitionable_devices_disabled_per_device_node_selection,
         CLASS_A "slice slice-1 perdevice pool-1 driver-a\n"
                 "device device-2 node:node-1\n"
                 "claim claim-0\n"
                 "request req-0 class-a 1\n")

DRA_CASE(partitionable_devices_per_device_node_selection_nodename,
         PRIO_PART CLASS_A "slice slice-1 perdevice pool-1:2 driver-a\n"
                           "device device-1 consume:counter-set-1:memory=4Gi fromCounters node:node-1\n"
                           "device device-2 consume:counter-set-1:memory=6Gi fromCounters node:node-2\n"
                           "slice slice-2 perdevice pool-1:2 driver-a\n"
                           "counterset counter-set-1 memory=18Gi\n"
                           "claim claim-0\n"
                           "firstAvailable req-0\n"
                           "sub subReq-0 class-a 1 mem>=6Gi\n"
                           "sub subReq-1 class-a 1 mem>=4Gi\n"
                           "expect\n"
                           "result req-0/subReq-1 driver-a/pool-1/device-1\n" LOCAL1)

DRA_CASE(partitionable_devices_per_device_node_selection_node_selector, PRIO_PART CLASS_A
         "slice slice-1 perdevice pool-1:2 driver-a\n"
         "device device-1 consume:counter-set-1:memory=4Gi fromCounters nodesel:region=region-1\n"
         "slice slice-2 perdevice pool-1:2 driver-a\n"
         "counterset counter-set-1 memory=18Gi\n"
         "claim claim-0\n"
         "request req-0 class-a 1\n"
         "expect\n"
         "result req-0 driver-a/pool-1/device-1\n"
         "selector region=region-1\n")

DRA_CASE(partitionable_devices_per_device_node_selection_node_selector_multiple_devices,
         PRIO_PART CLASS_A CLASS_B
         "slice slice-1 perdevice pool-1:2 driver-a\n"
         "device device-1 consume:counter-set-1:memory=4Gi fromCounters nodesel:region=region-1\n"
         "device device-2 consume:counter-set-1:memory=4Gi fromCounters node:node-1\n"
         "device device-3 consume:counter-set-1:memory=4Gi fromCounters allnodes\n"
         "slice slice-2 perdevice pool-1:2 driver-a\n"
         "counterset counter-set-1 memory=18Gi\n"
         "slice slice-3 node-1 pool-2:2 driver-b\n"
         "device device-1 consume:counter-set-2:memory=4Gi fromCounters\n"
         "device device-2 consume:counter-set-2:memory=4Gi fromCounters\n"
         "device device-3 consume:counter-set-2:memory=4Gi fromCounters\n"
         "slice slice-4 node-1 pool-2:2 driver-b\n"
         "counterset counter-set-2 memory=12Gi\n"
         "claim claim-0\n"
         "request req-0 class-a 3\n"
         "request req-1 class-b 3\n"
         "expect\n"
         "result req-0 driver-a/pool-1/device-1\n"
         "result req-0 driver-a/pool-1/device-2\n"
         "result req-0 driver-a/pool-1/device-3\n"
         "result req-1 driver-b/pool-2/device-1\n"
         "result req-1 driver-b/pool-2/device-2\n"
         "result req-1 driver-b/pool-2/device-3\n" LOCAL1)

DRA_CASE(
    partitionable_devices_with_attribute_selector, PART CLASS_A
    "slice slice-1 node-1 pool-1:2 driver-a\n"
    "device device-1 b:special=true consume:counter-set-1:cpu1=1 consume:counter-set-2:mem=10Gi\n"
    "device device-2 b:special=false consume:counter-set-1:cpu2=1 consume:counter-set-2:mem=10Gi\n"
    "device device-3 b:special=false consume:counter-set-1:cpu3=1 consume:counter-set-2:mem=10Gi\n" CS_SLICE(
        "slice-2", "pool-1:2") "counterset counter-set-1 cpu1=1 cpu2=1 cpu3=1\n"
                               "counterset counter-set-2 mem=30Gi\n"
                               "claim claim-0\n"
                               "request req-0 class-a 2\n"
                               "request req-1 class-a 1 attr:special\n"
                               "expect\n"
                               "result req-0 driver-a/pool-1/device-2\n"
                               "result req-0 driver-a/pool-1/device-3\n"
                               "result req-1 driver-a/pool-1/device-1\n" LOCAL1)

DRA_CASE(partitionable_devices_same_counter_set_name_in_different_resource_slices,
         PART CLASS_A "slice slice-1 node-1 pool-1:4 driver-a\n" DEV1 CS_SLICE(
             "slice-2", "pool-1:4") "counterset counter-set-1\n"
                                    "slice slice-3 node-1 pool-1:4 driver-a\n"
                                    "device device-2\n" CS_SLICE(
                                        "slice-4",
                                        "pool-1:4") "counterset counter-set-1\n"
                                                    "claim claim-0\n"
                                                    "request req-0 class-a 1\n"
                                                    "unsuitable invalid resource pools were encountered\n")

DRA_CASE(partitionable_devices_device_counter_consumption_references_unknown_counter_set,
         PART CLASS_A "slice slice-1 node-1 pool-1:2 driver-a\n"
                      "device device-1 consume:counter-set-2\n" CS_SLICE(
                          "slice-2", "pool-1:2") "counterset counter-set-1\n"
                                                 "claim claim-0\n"
                                                 "request req-0 class-a 1\n"
                                                 "unsuitable invalid resource pools were encountered\n")

DRA_CASE(partitionable_devices_device_counter_consumption_references_unknown_counter_in_counter_set,
         PART CLASS_A "slice slice-1 node-1 pool-1:2 driver-a\n"
                      "device device-1 consume:counter-set-1:memory=8Gi\n" CS_SLICE(
                          "slice-2", "pool-1:2") "counterset counter-set-1 other-memory=8Gi\n"
                                                 "claim claim-0\n"
                                                 "request req-0 class-a 1\n"
                                                 "unsuitable invalid resource pools were encountered\n")

DRA_CASE(partitionable_devices_device_counter_consumption_references_counter_set_in_other_pool,
         PART CLASS_A SLICE1 "device device-1 consume:counter-set-1:memory=8Gi\n" CS_SLICE(
             "slice-2", "pool-2") "counterset counter-set-1 memory=8Gi\n"
                                  "claim claim-0\n"
                                  "request req-0 class-a 1\n"
                                  "unsuitable invalid resource pools were encountered\n")

DRA_CASE(partitionable_devices_devices_on_different_nodes_consume_same_counter_set,
         "features partitionable prioritized\n" CLASS_A CS_SLICE(
             "slice-1", "pool-1:3") "counterset counter-set-1 memory=8Gi\n"
                                    "slice slice-2 node-1 pool-1:3 driver-a\n"
                                    "device device-1 consume:counter-set-1:memory=6Gi fromCounters\n"
                                    "device device-2 consume:counter-set-1:memory=2Gi fromCounters\n"
                                    "slice slice-3 node-2 pool-1:3 driver-a\n"
                                    "device device-3 consume:counter-set-1:memory=6Gi\n"
                                    "allocated driver-a/pool-1/device-3\n"
                                    "claim claim-0\n"
                                    "firstAvailable req-0\n"
                                    "sub subReq-0 class-a 1 mem>=6Gi\n"
                                    "sub subReq-1 class-a 1 mem>=2Gi\n"
                                    "expect\n"
                                    "result req-0/subReq-1 driver-a/pool-1/device-2\n" LOCAL1)

DRA_CASE(partitionable_devices_devices_consume_counter_set_in_different_nodes,
         PART CLASS_A CS_SLICE("slice-1",
                               "pool-1:3") "counterset counter-set-1 memory=8Gi\n"
                                           "slice slice-2 node-1 pool-1:3 driver-a\n"
                                           "device device-1 consume:counter-set-1:memory=6Gi fromCounters\n"
                                           "slice slice-3 node-2 pool-1:3 driver-a\n"
                                           "device device-2 consume:counter-set-1:memory=6Gi fromCounters\n"
                                           "device device-3 consume:counter-set-1:memory=2Gi fromCounters\n"
                                           "allocated driver-a/pool-1/device-1\n"
                                           "node node-2 region-1\n"
                                           "claim claim-0\n"
                                           "request req-0 class-a 1\n"
                                           "expect\n"
                                           "result req-0 driver-a/pool-1/device-3\n"
                                           "selector node:node-2\n")

DRA_CASE(partitionable_devices_validation_error_on_non_targeting_slice,
         PART CLASS_A CS_SLICE("slice-1",
                               "pool-1:3") "counterset counter-set-1 memory=8Gi\n"
                                           "slice slice-2 node-1 pool-1:3 driver-a\n"
                                           "device device-1 consume:counter-set-1:memory=6Gi fromCounters\n"
                                           "slice slice-3 node-2 pool-1:3 driver-a\n"
                                           "device device-3 consume:counter-set-2:memory=6Gi\n"
                                           "claim claim-0\n"
                                           "request req-0 class-a 1\n"
                                           "unsuitable invalid resource pools were encountered\n")

/* ---- taints ----------------------------------------------------------------------------------------------
 */

#define NO_SCHEDULE     "taint:taint-key=taint-value:NoSchedule"
#define NO_EXECUTE      "taint:taint-key=taint-value-2:NoExecute"
#define TOL_NO_SCHEDULE "tol:Exists:taint-key::NoSchedule"
#define TOL_NO_EXECUTE  "tol:Equal:taint-key:taint-value-2:NoExecute"
#define TAINTED_TWO     SLICE1 "device device-1 " NO_SCHEDULE "\ndevice device-2 " NO_EXECUTE "\n"
#define TAINTED_ONE     SLICE1 "device device-1 " NO_SCHEDULE " " NO_EXECUTE "\n"

DRA_CASE(tainted_two_devices, "features taints\n" CLASS_A TAINTED_TWO "claim claim-0\n"
                              "request req-0 class-a 1\n")

DRA_CASE(tainted_one_device_two_taints, "features taints\n" CLASS_A TAINTED_ONE "claim claim-0\n"
                                        "request req-0 class-a 1\n")

DRA_CASE(tainted_two_devices_tolerated, "features taints\n" CLASS_A TAINTED_TWO "claim claim-0\n"
                                        "request req-0 class-a 1 " TOL_NO_EXECUTE "\n"
                                        "expect\n"
                                        "result req-0 driver-a/pool-1/device-2 "
                                        "tol=1\n" LOCAL1)

DRA_CASE(tainted_two_devices_prioritized_list_tolerated,
         "features taints prioritized\n" CLASS_A TAINTED_TWO "claim claim-0\n"
         "firstAvailable req-0\n"
         "sub subReq-0 class-a 1\n"
         "sub subReq-1 class-a 1 " TOL_NO_EXECUTE "\n"
         "expect\n"
         "result req-0/subReq-1 driver-a/pool-1/device-2 tol=1\n" LOCAL1)

DRA_CASE(tainted_no_effect,
         "features taints\n" CLASS_A SLICE1 "device device-1 taint:taint-key=taint-value:None\n"
         "claim claim-0\n"
         "request req-0 class-a 1\n"
         "expect\n"
         "result req-0 driver-a/pool-1/device-1\n" LOCAL1)

DRA_CASE(tainted_one_device_two_taints_both_tolerated,
         "features taints\n" CLASS_A TAINTED_ONE "claim claim-0\n"
         "request req-0 class-a 1 " TOL_NO_SCHEDULE " " TOL_NO_EXECUTE "\n"
         "expect\n"
         "result req-0 driver-a/pool-1/device-1 tol=2\n" LOCAL1)

DRA_CASE(tainted_disabled, CLASS_A TAINTED_ONE "claim claim-0\n"
                                               "request req-0 class-a 1\n"
                                               "expect\n"
                                               "result req-0 driver-a/pool-1/device-1\n" LOCAL1)

#define TAINTED_PRIO                                                                                         \
    CLASS_A CLASS_B SLICE1 "device device-1 " NO_SCHEDULE "\n"                                               \
                           "claim claim-0\n"                                                                 \
                           "firstAvailable req-0\n"                                                          \
                           "sub subReq-0 class-b 1\n"                                                        \
                           "sub subReq-1 class-a 1\n"

DRA_CASE(tainted_prioritized_list, "features taints prioritized\n" TAINTED_PRIO)

DRA_CASE(tainted_prioritized_list_disabled, "features prioritized\n" TAINTED_PRIO "expect\n"
                                            "result req-0/subReq-1 "
                                            "driver-a/pool-1/device-1\n" LOCAL1)

#define TAINTED_ADMIN                                                                                        \
    CLASS_A SLICE1 "device device-1 " NO_SCHEDULE "\n"                                                       \
                   "allocated driver-a/pool-1/device-1\n"                                                    \
                   "allocated driver-a/pool-1/device-2\n"                                                    \
                   "claim claim-0\n"                                                                         \
                   "request req-0 class-a 1 admin\n"

DRA_CASE(tainted_admin_access, "features taints admin\n" TAINTED_ADMIN)

DRA_CASE(tainted_admin_access_disabled, "features admin\n" TAINTED_ADMIN "expect\n"
                                        "result req-0 driver-a/pool-1/device-1 admin\n" LOCAL1)

DRA_CASE(tainted_all_devices_single, "features taints\n" CLASS_A SLICE1 "device device-1 " NO_SCHEDULE "\n"
                                     "claim claim-0\n"
                                     "request req-0 class-a all\n")

DRA_CASE(tainted_all_devices_single_disabled, CLASS_A SLICE1 "device device-1 " NO_SCHEDULE "\n"
                                                             "claim claim-0\n"
                                                             "request req-0 class-a all\n"
                                                             "expect\n"
                                                             "result req-0 driver-a/pool-1/device-1\n" LOCAL1)

/* ---- binding conditions
 * ------------------------------------------------------------------------------------- */

DRA_CASE(device_binding_conditions,
         "features binding\n" CLASS_A SLICE1 "device device-1 binding:IsPrepare/BindingFailed\n"
         "claim claim-0\n"
         "request req-0 class-a 1\n"
         "expect\n"
         "result req-0 driver-a/pool-1/device-1 "
         "binding=IsPrepare/BindingFailed\n" LOCAL1)

DRA_CASE(binding_conditions_multiple_devices,
         "features binding\n" CLASS_A SLICE1 "device device-1 binding:IsPrepare/BindingFailed\n"
         "device device-2 binding:IsPrepare2/BindingFailed2\n"
         "device device-3 binding:IsPrepare3/BindingFailed3\n"
         "claim claim-0\n"
         "request req-0 class-a 2\n"
         "request req-1 class-a 1\n"
         "expect\n"
         "result req-0 driver-a/pool-1/device-1 binding=IsPrepare/BindingFailed\n"
         "result req-0 driver-a/pool-1/device-2 binding=IsPrepare2/BindingFailed2\n"
         "result req-1 driver-a/pool-1/device-3 "
         "binding=IsPrepare3/BindingFailed3\n" LOCAL1)

DRA_CASE(binding_conditions_with_and_without,
         "features binding\n" CLASS_A SLICE1 DEV1 "device device-2 binding:IsPrepare/BindingFailed\n"
         "claim claim-0\n"
         "request req-0 class-a 1\n"
         "request req-1 class-a 1\n"
         "expect\n"
         "result req-0 driver-a/pool-1/device-1\n"
         "result req-1 driver-a/pool-1/device-2 binding=IsPrepare/BindingFailed\n" LOCAL1)

DRA_CASE(binding_conditions_without_feature_gate,
         CLASS_A SLICE1 "device device-1 binding:IsPrepare/BindingFailed\n"
                        "claim claim-0\n"
                        "request req-0 class-a 1\n")

DRA_CASE(node_restriction, "features binding\n" CLASS_A "slice slice-1 sel:planet=earth pool-1 driver-a\n"
                           "device device-1 bindsToNode\n"
                           "claim claim-0\n"
                           "request req-0 class-a 1\n"
                           "expect\n"
                           "result req-0 driver-a/pool-1/device-1\n" LOCAL1)

#define PB "features partitionable binding\n"

DRA_CASE(partitionable_devices_with_binding_conditions, PB CLASS_A
         "slice slice-1 node-1 pool-1:2 driver-a\n"
         "device device-1 consume:counter-set-1:memory=4Gi fromCounters "
         "binding:IsPrepare/BindingFailed\n" CS_SLICE(
             "slice-2",
             "pool-1:2") "counterset counter-set-1 memory=8Gi\n"
                         "claim claim-0\n"
                         "request req-0 class-a 1\n"
                         "expect\n"
                         "result req-0 driver-a/pool-1/device-1 binding=IsPrepare/BindingFailed\n" LOCAL1)

DRA_CASE(partitionable_devices_with_binding_conditions_multiple, PB CLASS_A
         "slice slice-1 node-1 pool-1:2 driver-a\n"
         "device device-1 consume:counter-set-1:memory=4Gi fromCounters binding:IsPrepare/BindingFailed\n"
         "device device-2 consume:counter-set-1:memory=4Gi fromCounters "
         "binding:IsPrepare2/BindingFailed2\n" CS_SLICE(
             "slice-2", "pool-1:2") "counterset counter-set-1 memory=8Gi\n"
                                    "claim claim-0\n"
                                    "request req-0 class-a 2\n"
                                    "expect\n"
                                    "result req-0 driver-a/pool-1/device-1 binding=IsPrepare/BindingFailed\n"
                                    "result req-0 driver-a/pool-1/device-2 "
                                    "binding=IsPrepare2/BindingFailed2\n" LOCAL1)

DRA_CASE(
    partitionable_devices_with_binding_conditions_some_devices_no_conditions, PB CLASS_A
    "slice slice-1 node-1 pool-1:2 driver-a\n"
    "device device-1 consume:counter-set-1:memory=2Gi fromCounters binding:IsPrepare/BindingFailed\n"
    "device device-2 consume:counter-set-1:memory=2Gi fromCounters\n"
    "device device-3 consume:counter-set-1:memory=4Gi fromCounters binding:IsReady/BindingTimeout\n" CS_SLICE(
        "slice-2",
        "pool-1:2") "counterset counter-set-1 memory=8Gi\n"
                    "claim claim-0\n"
                    "request req-0 class-a 3\n"
                    "expect\n"
                    "result req-0 driver-a/pool-1/device-1 binding=IsPrepare/BindingFailed\n"
                    "result req-0 driver-a/pool-1/device-2\n"
                    "result req-0 driver-a/pool-1/device-3 binding=IsReady/BindingTimeout\n" LOCAL1)

DRA_CASE(partitionable_devices_with_binding_conditions_multi_slices, PB CLASS_A
         "slice slice-4 node-1 pool-1:4 driver-a\n"
         "device device-1 consume:counter-set-1:memory=4Gi fromCounters "
         "binding:IsPrepare/BindingFailed\n" CS_SLICE(
             "slice-3",
             "pool-1:4") "counterset counter-set-1 memory=8Gi\n"
                         "slice slice-2 node-1 pool-1:4 driver-a\n"
                         "device device-2 consume:counter-set-2:memory=4Gi fromCounters\n" CS_SLICE(
                             "slice-1", "pool-1:4") "counterset counter-set-2 memory=8Gi\n"
                                                    "claim claim-0\n"
                                                    "request req-0 class-a 2\n"
                                                    "expect\n"
                                                    "result req-0 driver-a/pool-1/device-2\n"
                                                    "result req-0 driver-a/pool-1/device-1 "
                                                    "binding=IsPrepare/BindingFailed\n" LOCAL1)

#define BINDING_TAINT_DEVICES(pool)                                                                          \
    "slice slice-1 node-1 " pool " driver-a\n"                                                               \
    "device device-1 consume:counter-set-1:memory=4Gi fromCounters binding:IsPrepare/BindingFailed "         \
    "taint:key1=value1:NoSchedule\n"                                                                         \
    "device device-2 consume:counter-set-1:memory=4Gi fromCounters\n" CS_SLICE(                              \
        "slice-2", pool) "counterset counter-set-1 memory=8Gi\n"

DRA_CASE(partitionable_devices_with_binding_conditions_and_taints,
         "features partitionable binding taints\n" CLASS_A BINDING_TAINT_DEVICES(
             "pool-1") "claim claim-0\n"
                       "request req-0 class-a 2\n")

DRA_CASE(partitionable_devices_with_binding_conditions_and_taints_tolerated,
         "features partitionable binding taints\n" CLASS_A BINDING_TAINT_DEVICES(
             "pool-1:2") "claim claim-0\n"
                         "request req-0 class-a 2 tol:Exists:key1::NoSchedule\n"
                         "expect\n"
                         "result req-0 driver-a/pool-1/device-1 binding=IsPrepare/BindingFailed tol=1\n"
                         "result req-0 driver-a/pool-1/device-2 tol=1\n" LOCAL1)
