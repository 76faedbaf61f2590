/*
 * test_alloc_pools.c - upstream's allocator table (allocator_testing.go, TestAllocator),
 * part 5: pools spread over several nodes, generations, incomplete and invalid pools, the
 * number of search steps (expectNumAllocateOneInvocations), and the order of pools and
 * slices (lexicographical_testing.go, TestLexicographicalAllocator).
 *
 * Upstream cases not transcribed, and why:
 * - list-attributes-* (24 cases): DRAListTypeAttributes is not among the features of the
 *   incubating allocator (only the experimental one), and dra_types.h has no list values.
 * - with-distinct-constraints-unknown-type-attribute: an attribute without any value cannot
 *   be written in dra_types.h (every attribute has a kind).
 * - interrupt (off, timeout, deadline, cancel): context cancellation; ks_dra_allocate has no
 *   context to cancel.
 */
#include "dra_dsl.h"

#define CLASS_A     "class class-a driver=driver-a\n"
#define DEV1        "device device-1\n"
#define LOCAL1      "selector node:node-1\n"
#define CLAIM0_REQ0 "claim claim-0\nrequest req-0 class-a 1\n"

DRA_CASE(allocation_mode_all_with_multi_host_resource_pool,
         CLASS_A "slice slice-1 node-1 pool-1:2 driver-a\n" DEV1 "slice slice-2 node-2 pool-1:2 driver-a\n"
                 "device device-2\n"
                 "claim claim-0\n"
                 "request req-0 class-a all\n"
                 "expect\n"
                 "result req-0 driver-a/pool-1/device-1\n" LOCAL1)

DRA_CASE(multi_host_resource_pool_with_stale_slice_for_current_node, CLASS_A
         "slice slice-1 node-1 pool-1:2:1 driver-a\n" DEV1 "slice slice-2 node-2 pool-1:2:2 driver-a\n"
         "device device-2\n" CLAIM0_REQ0)

#define TWO_GENERATIONS(old_node, new_node, both_new)                                                        \
    CLASS_A "slice slice-1 " old_node " pool-1:2:1 driver-a\n" DEV1 "slice slice-1 " old_node                \
            " pool-1:2:1 driver-a\n"                                                                         \
            "device device-2\n"                                                                              \
            "slice slice-2 " new_node " pool-1:2:2 driver-a\n" DEV1 both_new CLAIM0_REQ0

DRA_CASE(
    multi_host_resource_pool_complete_update_from_node_1_to_node_2,
    TWO_GENERATIONS(
        "node-1", "node-2",
        "slice slice-2 node-2 pool-1:2:2 driver-a\ndevice device-2\n") "expect\n"
                                                                       "result req-0 "
                                                                       "driver-a/pool-1/device-1\n" LOCAL1)

DRA_CASE(
    multi_host_resource_pool_complete_update_from_node_2_to_node_1,
    TWO_GENERATIONS(
        "node-2", "node-1",
        "slice slice-2 node-1 pool-1:2:2 driver-a\ndevice device-2\n") "expect\n"
                                                                       "result req-0 "
                                                                       "driver-a/pool-1/device-1\n" LOCAL1)

DRA_CASE(multi_host_resource_pool_incomplete_update_from_node_1_to_node_2,
         TWO_GENERATIONS("node-1", "node-2", "") "expect\n"
                                                 "result req-0 driver-a/pool-1/device-1\n" LOCAL1)

DRA_CASE(multi_host_resource_pool_incomplete_update_from_node_2_to_node_1,
         TWO_GENERATIONS("node-2", "node-1", ""))

DRA_CASE(different_resourceslices_in_pool_can_target_different_nodes,
         CLASS_A "slice slice-1 node-2 pool-1:2 driver-a\n" DEV1 "slice slice-2 node-1 pool-1:2 driver-a\n"
                 "device device-2\n" CLAIM0_REQ0 "expect\n"
                 "result req-0 driver-a/pool-1/device-2\n" LOCAL1)

#define INVALID_POOL_AND_OTHER                                                                               \
    CLASS_A "slice slice-1 node-1 pool-1:2 driver-a\n" DEV1 "slice slice-2 node-1 pool-1:2 driver-a\n" DEV1  \
            "slice slice-3 node-1 pool-2 driver-a\n"                                                         \
            "device device-2\n" CLAIM0_REQ0

DRA_CASE(invalid_pool_is_ok_if_devices_can_be_allocated_from_other,
         INVALID_POOL_AND_OTHER "expect\n"
                                "result req-0 "
                                "driver-a/pool-2/device-2\n" LOCAL1)

DRA_CASE(invalid_pool_is_error_if_no_other_device_can_be_allocated,
         INVALID_POOL_AND_OTHER "allocated driver-a/pool-2/device-2\n"
                                "unsuitable invalid resource pools were encountered\n")

DRA_CASE(no_allocation_from_incomplete_pools,
         CLASS_A "slice slice-1 node-1 pool-1:2 driver-a\n" DEV1 CLAIM0_REQ0)

#define FIVE_OF_FOUR                                                                                         \
    "claim claim-0\n"                                                                                        \
    "request req-0 class-a 5\n"                                                                              \
    "steps 16\n"

DRA_CASE(check_combinations_within_single_request_single_pool_single_slice,
         CLASS_A "slice slice-1 node-1 pool-1 driver-a\n" DEV1
                 "device device-2\ndevice device-3\ndevice device-4\n" FIVE_OF_FOUR)

DRA_CASE(check_combinations_within_single_request_single_pool_multiple_slices,
         CLASS_A "slice slice-1 node-1 pool-1:2 driver-a\n" DEV1 "device device-2\n"
                 "slice slice-2 node-1 pool-1:2 driver-a\n"
                 "device device-3\ndevice device-4\n" FIVE_OF_FOUR)

DRA_CASE(check_combinations_within_single_request_multiple_pools_multiple_slices,
         CLASS_A "slice slice-1 node-1 pool-1:2 driver-a\n" DEV1 "slice slice-2 node-1 pool-1:2 driver-a\n"
                 "device device-2\n"
                 "slice slice-3 node-1 pool-2 driver-a\n"
                 "device device-3\ndevice device-4\n" FIVE_OF_FOUR)

DRA_CASE(check_combinations_within_single_request_many_pools,
         CLASS_A "slice slice-1 node-1 pool-1 driver-a\n" DEV1 "slice slice-2 node-1 pool-2 driver-a\n"
                 "device device-2\n"
                 "slice slice-3 node-1 pool-3 driver-a\n"
                 "device device-3\n"
                 "slice slice-4 node-1 pool-4 driver-a\n"
                 "device device-4\n" FIVE_OF_FOUR)

#define REQ1_TWO_REQ2_X                                                                                      \
    "claim claim-0\n"                                                                                        \
    "request req-1 class-a 2\n"                                                                              \
    "request req-2 class-a 1 attr==type:X\n"

DRA_CASE(check_combinations_with_backtracking,
         CLASS_A "slice slice-1 node-1 pool-1 driver-a\n"
                 "device device-1 s:type=X\n"
                 "device device-2 s:type=Y\n"
                 "device device-3 s:type=Y\n" REQ1_TWO_REQ2_X "expect\n"
                 "result req-1 driver-a/pool-1/device-2\n"
                 "result req-1 driver-a/pool-1/device-3\n"
                 "result req-2 driver-a/pool-1/device-1\n" LOCAL1 "steps 12\n")

DRA_CASE(check_combinations_with_backtracking_across_slices_and_pools,
         "features binding\n" CLASS_A "slice slice-1 node-1 pool-1:2 driver-a\n"
         "device device-1 s:type=X\n"
         "slice slice-2 node-1 pool-1:2 driver-a\n"
         "device device-2 s:type=Y\n"
         "slice slice-3 node-1 pool-2 driver-a\n"
         "device device-3 s:type=Y binding:IsPrepare/\n" REQ1_TWO_REQ2_X "expect\n"
         "result req-1 driver-a/pool-1/device-2\n"
         "result req-1 driver-a/pool-2/device-3 binding=IsPrepare/\n"
         "result req-2 driver-a/pool-1/device-1\n" LOCAL1 "steps 12\n")

/* ---- lexicographical_testing.go ------------------------------------------------------------------------ */

#define TWO_OF_CLASS_A                                                                                       \
    "claim claim-0\n"                                                                                        \
    "request req-0 class-a 2\n"

DRA_CASE(lexicographical_sorting_pools, CLASS_A
         "slice slice-1 node-1 pool-3:1 driver-a\n" DEV1 "slice slice-2 node-1 pool-2:1 driver-a\n" DEV1
         "slice slice-3 node-1 pool-1:1 driver-a\n" DEV1 TWO_OF_CLASS_A "expect\n"
         "result req-0 driver-a/pool-1/device-1\n"
         "result req-0 driver-a/pool-2/device-1\n" LOCAL1)

DRA_CASE(lexicographical_sorting_pools_with_binding_conditions,
         "features binding\n" CLASS_A "slice slice-1 node-1 pool-1:1 driver-a\n"
         "device device-1 binding:IsPrepare/BindingFailed\n"
         "slice slice-3 node-1 pool-3:1 driver-a\n"
         "device device-3\n"
         "slice slice-2 node-1 pool-2:1 driver-a\n"
         "device device-2\n" TWO_OF_CLASS_A "expect\n"
         "result req-0 driver-a/pool-2/device-2\n"
         "result req-0 driver-a/pool-3/device-3\n" LOCAL1)

DRA_CASE(lexicographical_sorting_slices,
         CLASS_A "slice slice-3 node-1 pool-1:3 driver-a\n"
                 "device device-3\n"
                 "slice slice-2 node-1 pool-1:3 driver-a\n"
                 "device device-2\n"
                 "slice slice-1 node-1 pool-1:3 driver-a\n" DEV1 TWO_OF_CLASS_A "expect\n"
                 "result req-0 driver-a/pool-1/device-1\n"
                 "result req-0 driver-a/pool-1/device-2\n" LOCAL1)

DRA_CASE(lexicographical_sorting_slices_with_binding_conditions,
         "features binding\n" CLASS_A "slice slice-1 node-1 pool-1:3 driver-a\n"
         "device device-1 binding:IsPrepare/BindingFailed\n"
         "slice slice-3 node-1 pool-1:3 driver-a\n"
         "device device-3\n"
         "slice slice-2 node-1 pool-1:3 driver-a\n"
         "device device-2\n" TWO_OF_CLASS_A "expect\n"
         "result req-0 driver-a/pool-1/device-1 binding=IsPrepare/BindingFailed\n"
         "result req-0 driver-a/pool-1/device-2\n" LOCAL1)
