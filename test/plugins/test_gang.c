/*
 * test_gang.c - GangScheduling's rules (plugins/helpers/helper_gang.c) as upstream's
 * gangscheduling.go states them: PreEnqueue's two waits and PlacementFeasible's three answers.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "ksched/plugin_helpers_gang.h"

TestSuite(gang);

static struct ks_pod_group_spec group(enum ks_pod_group_policy policy, int32_t min_count)
{
    struct ks_pod_group_spec pg = {0};
    pg.policy = policy;
    pg.min_count = policy == KS_POD_GROUP_GANG ? min_count : 1;
    return pg;
}

Test(gang, pre_enqueue_waits_for_the_group_and_for_min_count)
{
    struct ks_pod_group_spec gang = group(KS_POD_GROUP_GANG, 3), basic = group(KS_POD_GROUP_BASIC, 0);
    char msg[256];

    cr_expect_not(ks_gang_pre_enqueue(NULL, "trainers", 5, msg, sizeof(msg)));
    cr_expect_str_eq(msg, "waiting for pod's pod group \"trainers\" to appear in scheduling queue");
    cr_expect_not(ks_gang_pre_enqueue(&gang, "trainers", 2, msg, sizeof(msg)));
    cr_expect_str_eq(msg, "waiting for minCount pods from a gang to appear in scheduling queue");
    cr_expect(ks_gang_pre_enqueue(&gang, "trainers", 3, msg, sizeof(msg)));
    cr_expect(ks_gang_pre_enqueue(&basic, "trainers", 1, msg, sizeof(msg)));
}

Test(gang, placement_feasible_counts_the_placed_and_the_remaining)
{
    struct ks_pod_group_spec gang = group(KS_POD_GROUP_GANG, 4), basic = group(KS_POD_GROUP_BASIC, 0);
    char msg[256];

    cr_expect_eq(ks_gang_placement_feasible(&gang, 1, 2, msg, sizeof(msg)), KS_GANG_INFEASIBLE);
    cr_expect_str_eq(msg, "minCount (4) cannot be satisfied: 1 scheduled, 2 remaining");
    cr_expect_eq(ks_gang_placement_feasible(&gang, 2, 2, msg, sizeof(msg)), KS_GANG_WAIT);
    cr_expect_str_eq(msg, "minCount (4) is not yet satisfied: 2 scheduled, 2 remaining");
    cr_expect_eq(ks_gang_placement_feasible(&gang, 4, 0, msg, sizeof(msg)), KS_GANG_FEASIBLE);
    cr_expect_eq(ks_gang_placement_feasible(&gang, 5, 3, msg, sizeof(msg)), KS_GANG_FEASIBLE);
    cr_expect_eq(ks_gang_placement_feasible(&basic, 0, 0, msg, sizeof(msg)), KS_GANG_INFEASIBLE);
    cr_expect_str_eq(msg, "minCount (1) cannot be satisfied: 0 scheduled, 0 remaining");
    cr_expect_eq(ks_gang_placement_feasible(&basic, 0, 3, msg, sizeof(msg)), KS_GANG_WAIT);
    cr_expect_eq(ks_gang_placement_feasible(&basic, 1, 2, msg, sizeof(msg)), KS_GANG_FEASIBLE);
}
