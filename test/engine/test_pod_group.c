/*
 * test_pod_group.c - the PodGroup cycle (engine/schedule_podgroup.c) with GenericWorkload on:
 * a gang binds all or nothing, a gang short of minCount pods or a pod whose PodGroup does not
 * exist waits (GangScheduling's PreEnqueue), a basic group places what fits, a PodGroup that
 * appears lets its pods in, and a pod whose priority is not its group's fails the group.
 * Upstream's messages, from schedule_one_podgroup.go and gangscheduling.go (v1.37).
 */
#include <criterion/criterion.h>

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/config.h"
#include "ksched/internal/features.h"
#include "ksched/internal/queue.h"
#include "ksched/internal/scheduler.h"
#include "ksched/loader.h"
#include "pod_group_run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char nodes[] = "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {rack: a}}\n"
                            "status:\n  allocatable: {cpu: \"4\", memory: 16Gi, pods: \"110\"}\n"
                            "---\napiVersion: v1\nkind: Node\nmetadata: {name: n2, labels: {rack: b}}\n"
                            "status:\n  allocatable: {cpu: \"4\", memory: 16Gi, pods: \"110\"}\n";

static void setup(void)
{
    struct ks_error err = {0};
    cr_assert_eq(ks_api_init(), 0);
    ks_rcu_register_thread();
    cr_assert_eq(ks_features_set("GenericWorkload=true", &err), 0, "%s", err.msg);
}

static void teardown(void)
{
    ks_features_reset();
}

TestSuite(pod_group, .init = setup, .fini = teardown);

static void gang_that_fits(FILE *f)
{
    group(f, "g", 3);
    pods(f, "w", 3, "g", "2", 0);
}

Test(pod_group, a_gang_that_fits_binds_every_member)
{
    struct run r;
    run_built(&r, nodes, gang_that_fits);
    cr_expect_eq(count(&r, KS_SCHED_SCHEDULED), 3);
    cr_expect_eq(count(&r, KS_SCHED_UNSCHEDULABLE), 0);
    finish(&r);
}

static void gang_too_big(FILE *f)
{
    group(f, "g", 3);
    pods(f, "w", 3, "g", "3", 0);
}

Test(pod_group, a_gang_that_does_not_fit_binds_nothing)
{
    struct run r;
    run_built(&r, nodes, gang_too_big);
    cr_expect_eq(count(&r, KS_SCHED_SCHEDULED), 0);
    const char *group_msg =
        "pod group is unschedulable, minCount (3) cannot be satisfied: 2 scheduled, 0 remaining";
    for (int i = 0; i < 2; i++) {
        char name[8];
        snprintf(name, sizeof(name), "w-%d", i);
        const struct outcome *o = of(&r, name);
        cr_assert_not_null(o, "%s", name);
        cr_expect_eq(o->kind, KS_SCHED_UNSCHEDULABLE);
        cr_expect_str_eq(o->message, group_msg);
    }
    const struct outcome *o = of(&r, "w-2");
    cr_assert_not_null(o);
    cr_expect_str_eq(o->message, "0/2 nodes are available: 2 Insufficient cpu.");
    /* nothing the simulation assumed is left in the cache */
    uint32_t nnodes, npods;
    ks_cache_counts(r.cache, &nnodes, &npods);
    cr_expect_eq(npods, 0u);
    finish(&r);
}

static void gang_short_and_missing_group(FILE *f)
{
    group(f, "g", 4);
    pods(f, "w", 3, "g", "1", 0);
    pods(f, "lone", 1, "nowhere", "1", 0);
    pods(f, "plain", 1, NULL, "1", 0);
}

static void expect_gated(struct run *r, const char *ns_name, const char *message)
{
    struct ks_pod key = {0};
    key.meta.namespace_id = ks_intern("default");
    key.meta.name = ns_name;
    struct ks_queue_pod_info info;
    cr_assert(ks_queue_pod_info(ks_scheduler_queue(r->s), &key, &info), "%s is not queued", ns_name);
    cr_expect(info.gated, "%s", ns_name);
    cr_expect_str_eq(ks_intern_str(info.gated_message), message);
    cr_expect_eq(info.pod.attempts, 0u);
}

/* Two pods gated again by the hint's own event: the move over the unschedulable pods ends. */
Test(pod_group, gangs_short_of_min_count_and_pods_of_missing_groups_wait)
{
    struct run r;
    run_built(&r, nodes, gang_short_and_missing_group);
    cr_expect_eq(r.n, 1);
    cr_expect_str_eq(r.out[0].pod, "plain-0");
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "w-%d", i);
        expect_gated(&r, name, "waiting for minCount pods from a gang to appear in scheduling queue");
    }
    expect_gated(&r, "lone-0", "waiting for pod's pod group \"nowhere\" to appear in scheduling queue");

    /* the missing PodGroup appears: its pod is let in and scheduled */
    struct ks_error err = {0};
    struct ks_objects *more;
    cr_assert_eq(ks_test_load_text("apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\n"
                                   "metadata: {name: nowhere, namespace: default}\n"
                                   "spec:\n  schedulingPolicy:\n    basic: {}\n",
                                   KS_VALIDATE_STRICT, &more, &err),
                 0, "%s", err.msg);
    ks_scheduler_object_event(r.s, KS_ER_POD_GROUP, NULL, more->of[KS_KIND_POD_GROUP].items[0]);
    ks_scheduler_run_until_idle(r.s);
    const struct outcome *o = of(&r, "lone-0");
    cr_assert_not_null(o);
    cr_expect_eq(o->kind, KS_SCHED_SCHEDULED);
    finish(&r);
    ks_objects_destroy(more);
}

static void basic_group(FILE *f)
{
    group(f, "g", 0);
    pods(f, "w", 3, "g", "3", 0);
}

Test(pod_group, a_basic_group_places_what_fits)
{
    struct run r;
    run_built(&r, nodes, basic_group);
    cr_expect_eq(count(&r, KS_SCHED_SCHEDULED), 2);
    const struct outcome *o = of(&r, "w-2");
    cr_assert_not_null(o);
    cr_expect_eq(o->kind, KS_SCHED_UNSCHEDULABLE);
    cr_expect_str_eq(o->message, "0/2 nodes are available: 2 Insufficient cpu.");
    finish(&r);
}

static void gang_beyond_min_count(FILE *f)
{
    group(f, "g", 2);
    pods(f, "w", 3, "g", "3", 0);
}

Test(pod_group, members_beyond_min_count_are_placed_best_effort)
{
    struct run r;
    run_built(&r, nodes, gang_beyond_min_count);
    cr_expect_eq(count(&r, KS_SCHED_SCHEDULED), 2);
    const struct outcome *o = of(&r, "w-2");
    cr_assert_not_null(o);
    cr_expect_str_eq(o->message, "0/2 nodes are available: 2 Insufficient cpu.");
    finish(&r);
}

static void priority_mismatch(FILE *f)
{
    group(f, "g", 2);
    pods(f, "w", 2, "g", "1", 0);
    pods(f, "x", 1, "g", "1", 5);
}

Test(pod_group, a_member_whose_priority_is_not_the_groups_fails_the_group)
{
    struct run r;
    run_built(&r, nodes, priority_mismatch);
    cr_expect_eq(count(&r, KS_SCHED_SCHEDULED), 0);
    const struct outcome *o = of(&r, "w-0");
    cr_assert_not_null(o);
    cr_expect_eq(o->kind, KS_SCHED_ERROR);
    cr_expect_str_eq(o->message, "all pods in a single pod group should have the same priority as the pod "
                                 "group's priority, got 5 and 0");
    finish(&r);
}

/* ---- properties over random clusters ------------------------------------------------------------- */

static uint64_t rnd(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

#define PROP_GROUPS 6

struct prop_case {
    int min[PROP_GROUPS]; /* 0: basic */
    int members[PROP_GROUPS];
};

/* A random cluster: 3-8 nodes of 2-8 cpu, groups of 1-6 pods of 1-3 cpu, some plain pods, in a random order.
 */
static char *random_cluster(uint64_t seed, bool with_groups, struct prop_case *pc)
{
    uint64_t x = seed * 2654435761u + 1;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_not_null(f);
    int nodes = 3 + (int)(rnd(&x) % 6);
    for (int i = 0; i < nodes; i++)
        fprintf(f,
                "---\napiVersion: v1\nkind: Node\nmetadata: {name: n%d}\n"
                "status:\n  allocatable: {cpu: \"%d\", memory: 16Gi, pods: \"110\"}\n",
                i, 2 + (int)(rnd(&x) % 7));
    for (int g = 0; g < PROP_GROUPS; g++) {
        pc->members[g] = 1 + (int)(rnd(&x) % 6);
        pc->min[g] = rnd(&x) % 4 == 0 ? 0 : 1 + (int)(rnd(&x) % (uint64_t)pc->members[g]);
        if (with_groups) {
            char name[8];
            snprintf(name, sizeof(name), "g%d", g);
            group(f, name, pc->min[g]);
        }
    }
    /* pods of every group interleaved with plain ones */
    int left[PROP_GROUPS], total = 0;
    for (int g = 0; g < PROP_GROUPS; g++)
        total += left[g] = pc->members[g];
    int plain = 0;
    while (total > 0) {
        int g = (int)(rnd(&x) % PROP_GROUPS);
        if (!left[g])
            continue;
        char prefix[8], name[8], cpu[4];
        snprintf(prefix, sizeof(prefix), "g%d", g);
        snprintf(name, sizeof(name), "g%d", g);
        snprintf(cpu, sizeof(cpu), "%d", 1 + (int)(rnd(&x) % 3));
        fprintf(f, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s-%d, namespace: default}\nspec:\n",
                prefix, pc->members[g] - left[g]);
        if (with_groups)
            fprintf(f, "  schedulingGroup: {podGroupName: %s}\n", name);
        fprintf(f, "  containers: [{name: c, resources: {requests: {cpu: \"%s\"}}}]\n", cpu);
        left[g]--;
        total--;
        if (rnd(&x) % 3 == 0) {
            snprintf(cpu, sizeof(cpu), "%d", 1 + (int)(rnd(&x) % 2));
            fprintf(f,
                    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: plain-%d, namespace: default}\nspec:\n",
                    plain++);
            fprintf(f, "  containers: [{name: c, resources: {requests: {cpu: \"%s\"}}}]\n", cpu);
        }
    }
    cr_assert_eq(fclose(f), 0);
    return text;
}

/* No gang ends with fewer than minCount members bound unless none is; nothing stays assumed. */
Test(pod_group, random_clusters_never_bind_a_gang_below_min_count)
{
    for (uint64_t seed = 1; seed <= 60; seed++) {
        struct prop_case pc;
        char *text = random_cluster(seed, true, &pc);
        struct run r;
        start(&r, text);
        free(text);
        ks_scheduler_run_until_idle(r.s);
        int bound[PROP_GROUPS] = {0};
        for (uint32_t i = 0; i < r.n; i++) {
            int g;
            if (r.out[i].kind == KS_SCHED_SCHEDULED && sscanf(r.out[i].pod, "g%d-", &g) == 1)
                bound[g]++;
        }
        for (int g = 0; g < PROP_GROUPS; g++) {
            if (pc.min[g])
                cr_expect(bound[g] == 0 || bound[g] >= pc.min[g],
                          "seed %lu: gang g%d bound %d of minCount %d", (unsigned long)seed, g, bound[g],
                          pc.min[g]);
            cr_expect_leq(bound[g], pc.members[g]);
        }
        uint32_t nnodes, npods, nassumed = 0;
        ks_cache_counts(r.cache, &nnodes, &npods);
        (void)nassumed;
        uint32_t scheduled = count(&r, KS_SCHED_SCHEDULED);
        cr_expect_eq(npods, scheduled, "seed %lu: %u pods in the cache, %u bound", (unsigned long)seed, npods,
                     scheduled);
        finish(&r);
    }
}

static void record_outcomes(const char *text, char *buf, size_t len)
{
    struct run r;
    start(&r, text);
    ks_scheduler_run_until_idle(r.s);
    size_t off = 0;
    for (uint32_t i = 0; i < r.n && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s %d %s %s\n", r.out[i].pod, (int)r.out[i].kind,
                                r.out[i].node, r.out[i].message);
    finish(&r);
}

/* With GenericWorkload off, pods naming groups are scheduled exactly as pods that name none. */
Test(pod_group, with_the_gate_off_groups_change_no_decision)
{
    static char with[16384], without[16384];
    ks_features_reset();
    for (uint64_t seed = 1; seed <= 20; seed++) {
        struct prop_case pc;
        char *a = random_cluster(seed, true, &pc), *b = random_cluster(seed, false, &pc);
        record_outcomes(a, with, sizeof(with));
        record_outcomes(b, without, sizeof(without));
        cr_expect_str_eq(with, without, "seed %lu", (unsigned long)seed);
        free(a);
        free(b);
    }
}

/* ---- topology-aware placement (TopologyAwareWorkloadScheduling) ------------------------------------ */

static void tas_setup(void)
{
    struct ks_error err = {0};
    cr_assert_eq(ks_api_init(), 0);
    ks_rcu_register_thread();
    cr_assert_eq(ks_features_set("GenericWorkload=true,TopologyAwareWorkloadScheduling=true", &err), 0, "%s",
                 err.msg);
}

TestSuite(pod_group_topology, .init = tas_setup, .fini = teardown);

/* Racks a (ra-0, ra-1) and b (rb-0, rb-1) of 4 cpu nodes; @used cpu already bound on ra-0. */
static void racks(FILE *f, int used)
{
    static const char *const names[] = {"ra-0", "ra-1", "rb-0", "rb-1"};
    for (int i = 0; i < 4; i++)
        fprintf(f,
                "---\napiVersion: v1\nkind: Node\nmetadata: {name: %s, labels: {rack: %c}}\n"
                "status:\n  allocatable: {cpu: \"4\", memory: 16Gi, pods: \"110\"}\n",
                names[i], names[i][1]);
    if (used)
        fprintf(f,
                "---\napiVersion: v1\nkind: Pod\nmetadata: {name: busy, namespace: default}\nspec:\n"
                "  nodeName: ra-0\n  containers: [{name: c, resources: {requests: {cpu: \"%d\"}}}]\n",
                used);
}

static void rack_group(FILE *f, const char *name, int min)
{
    fprintf(f,
            "---\napiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: %s, namespace: "
            "default}\n"
            "spec:\n  schedulingPolicy:\n    gang: {minCount: %d}\n"
            "  schedulingConstraints:\n    topology: [{key: rack}]\n",
            name, min);
}

/* @n members "w-<i>" of group g, labelled app: @app, of 1 cpu, with @spec (lines of their spec) */
static void members(FILE *f, int n, const char *app, const char *spec)
{
    for (int i = 0; i < n; i++)
        fprintf(
            f,
            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: w-%d, namespace: default, labels: {app: %s}}\n"
            "spec:\n  schedulingGroup: {podGroupName: g}\n%s"
            "  containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]\n",
            i, app, spec);
}

/* The rack (a or b) every Scheduled pod whose name starts with @prefix went to; '?' when none, '*' when
 * several. */
static char rack_of(const struct run *r, const char *prefix)
{
    char rack = '?';
    for (uint32_t i = 0; i < r->n; i++) {
        if (r->out[i].kind != KS_SCHED_SCHEDULED || strncmp(r->out[i].pod, prefix, strlen(prefix)) != 0)
            continue;
        char c = r->out[i].node[1];
        rack = rack == '?' || rack == c ? c : '*';
    }
    return rack;
}

static void gang_in_one_rack(FILE *f)
{
    racks(f, 0);
    rack_group(f, "g", 3);
    pods(f, "w", 3, "g", "2", 0);
}

Test(pod_group_topology, a_constrained_gang_lands_in_one_rack)
{
    struct run r;
    run_built(&r, "", gang_in_one_rack);
    cr_expect_eq(count(&r, KS_SCHED_SCHEDULED), 3);
    char rack = rack_of(&r, "w-");
    cr_expect(rack == 'a' || rack == 'b', "rack %c", rack);
    finish(&r);
}

static void gang_bigger_than_a_rack(FILE *f)
{
    racks(f, 0);
    rack_group(f, "g", 5);
    pods(f, "w", 5, "g", "2", 0);
}

Test(pod_group_topology, a_gang_no_rack_holds_binds_nothing)
{
    struct run r;
    run_built(&r, "", gang_bigger_than_a_rack);
    /* --explain's account: one placement evaluated for the report, the other without room */
    cr_expect_geq(r.ngroups, 1u);
    cr_expect_eq(r.last.nplacements, 2u);
    cr_expect(strcmp(r.last_outcomes, "ir") == 0 || strcmp(r.last_outcomes, "ri") == 0, "%s",
              r.last_outcomes);
    cr_expect_eq(r.last.chosen, UINT32_MAX);
    cr_expect_not(r.last.ok);
    cr_expect_eq(count(&r, KS_SCHED_SCHEDULED), 0);
    const struct outcome *o = of(&r, "w-0");
    cr_assert_not_null(o);
    cr_expect_str_eq(o->message,
                     "pod group is unschedulable, 0/2 placements are available, reported placement "
                     "status: pod group is unschedulable");
    o = of(&r, "w-4");
    cr_assert_not_null(o);
    cr_expect_str_eq(o->message, "0/2 nodes are available: 2 Insufficient cpu.");
    uint32_t nnodes, npods;
    ks_cache_counts(r.cache, &nnodes, &npods);
    cr_expect_eq(npods, 0u, "nothing left assumed");
    finish(&r);
}

static void fuller_rack_scores_higher(FILE *f)
{
    racks(f, 2);
    rack_group(f, "g", 3);
    pods(f, "w", 3, "g", "2", 0);
}

/* NodeResourcesFit's placement score is MostAllocated: the rack already in use wins when the gang fits it. */
Test(pod_group_topology, the_fuller_rack_that_fits_is_chosen)
{
    struct run r;
    run_built(&r, "", fuller_rack_scores_higher);
    cr_expect_eq(r.ngroups, 1u);
    cr_expect_str_eq(r.last_chosen, "a");
    cr_expect_str_eq(r.last_outcomes, "fn", "rack b is not needed once rack a holds the gang");
    cr_expect(r.last.ok);
    cr_expect_eq(count(&r, KS_SCHED_SCHEDULED), 3);
    cr_expect_eq(rack_of(&r, "w-"), 'a');
    finish(&r);
}

static void rack_too_full(FILE *f)
{
    racks(f, 3);
    rack_group(f, "g", 3);
    pods(f, "w", 3, "g", "2", 0);
}

Test(pod_group_topology, a_rack_that_cannot_hold_the_gang_is_passed_over)
{
    struct run r;
    run_built(&r, "", rack_too_full);
    cr_expect_eq(count(&r, KS_SCHED_SCHEDULED), 3);
    cr_expect_eq(rack_of(&r, "w-"), 'b');
    finish(&r);
}

static void members_already_in_b(FILE *f)
{
    racks(f, 0);
    rack_group(f, "g", 3);
    fprintf(f, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: w-0, namespace: default}\nspec:\n"
               "  nodeName: rb-0\n  schedulingGroup: {podGroupName: g}\n"
               "  containers: [{name: c, resources: {requests: {cpu: \"2\"}}}]\n");
    fprintf(f, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: w-1, namespace: default}\nspec:\n"
               "  nodeName: rb-1\n  schedulingGroup: {podGroupName: g}\n"
               "  containers: [{name: c, resources: {requests: {cpu: \"2\"}}}]\n");
    fprintf(f, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: new-0, namespace: default}\nspec:\n"
               "  schedulingGroup: {podGroupName: g}\n"
               "  containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]\n");
}

/* A recreated member joins the domain the group already occupies, though rack a is emptier. */
Test(pod_group_topology, a_recreated_member_joins_its_groups_rack)
{
    struct run r;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    members_already_in_b(f);
    cr_assert_eq(fclose(f), 0);
    start(&r, text);
    free(text);
    ks_scheduler_run_until_idle(r.s);
    const struct outcome *o = of(&r, "new-0");
    cr_assert_not_null(o);
    cr_expect_eq(o->kind, KS_SCHED_SCHEDULED);
    cr_expect_eq(o->node[1], 'b', "on %s", o->node);
    finish(&r);
}

static void members_in_two_racks(FILE *f)
{
    racks(f, 0);
    rack_group(f, "g", 2);
    fprintf(f, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: w-0, namespace: default}\nspec:\n"
               "  nodeName: ra-0\n  schedulingGroup: {podGroupName: g}\n"
               "  containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]\n");
    fprintf(f, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: w-1, namespace: default}\nspec:\n"
               "  nodeName: rb-0\n  schedulingGroup: {podGroupName: g}\n"
               "  containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]\n");
    fprintf(f, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: new-0, namespace: default}\nspec:\n"
               "  schedulingGroup: {podGroupName: g}\n"
               "  containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]\n");
}

Test(pod_group_topology, members_already_in_two_racks_are_an_error)
{
    struct run r;
    run_built(&r, "", members_in_two_racks);
    const struct outcome *o = of(&r, "new-0");
    cr_assert_not_null(o);
    cr_expect_eq(o->kind, KS_SCHED_ERROR);
    cr_expect_str_eq(o->message,
                     "cannot determine domain for already scheduled pods: more than 1 domain found "
                     "for pod group: a, b");
    finish(&r);
}

/* A random cluster of 2-5 racks of 1-4 nodes and gangs, half of them rack-constrained (@constrained[g]). */
static char *random_racks(uint64_t seed, struct prop_case *pc, bool *constrained, int *node_rack)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15u + 7;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_not_null(f);
    int nracks = 2 + (int)(rnd(&x) % 4), node = 0;
    for (int r = 0; r < nracks; r++) {
        int per = 1 + (int)(rnd(&x) % 4);
        for (int i = 0; i < per; i++, node++)
            node_rack[node] = r,
            fprintf(f,
                    "---\napiVersion: v1\nkind: Node\nmetadata: {name: n%d, labels: {rack: r%d}}\n"
                    "status:\n  allocatable: {cpu: \"%d\", memory: 16Gi, pods: \"110\", example.com/gpu: "
                    "\"%d\"}\n",
                    node, r, 2 + (int)(rnd(&x) % 5), (int)(rnd(&x) % 4));
    }
    for (int g = 0; g < PROP_GROUPS; g++) {
        pc->members[g] = 1 + (int)(rnd(&x) % 5);
        pc->min[g] = 1 + (int)(rnd(&x) % (uint64_t)pc->members[g]);
        constrained[g] = rnd(&x) % 2;
        fprintf(
            f,
            "---\napiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g%d, namespace: "
            "default}\nspec:\n  schedulingPolicy:\n    gang: {minCount: %d}\n",
            g, pc->min[g]);
        if (constrained[g])
            fprintf(f, "  schedulingConstraints:\n    topology: [{key: rack}]\n");
        /* some gangs ask every member for a gpu, some none, some only a few */
        int gpus = (int)(rnd(&x) % 3);
        for (int i = 0; i < pc->members[g]; i++) {
            int gpu = gpus == 2 ? (int)(rnd(&x) % 2) : gpus;
            fprintf(f,
                    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: g%d-%d, namespace: default}\nspec:\n"
                    "  schedulingGroup: {podGroupName: g%d}\n"
                    "  containers: [{name: c, resources: {requests: {cpu: \"%d\", example.com/gpu: \"%d\"}, "
                    "limits: {example.com/gpu: \"%d\"}}}]\n",
                    g, i, g, 1 + (int)(rnd(&x) % 2), gpu, gpu);
        }
    }
    cr_assert_eq(fclose(f), 0);
    return text;
}

/*
 * Over random rack clusters: no gang below minCount, every constrained gang within one rack,
 * nothing left assumed, and passing over the placements that cannot win changes no decision.
 */
static void random_racks_identity(void);

Test(pod_group_topology, random_racks_keep_gangs_whole_and_in_one_rack)
{
    random_racks_identity();
}

/* NodeResourcesFit not scoring: PodGroupPodsCount alone, the ties to the draw; weighted resources; a gpu. */
Test(pod_group_topology, placement_weights_come_from_the_profile)
{
    static const char *const configs[] = {
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: default-scheduler\n  plugins:\n    score:\n      disabled:\n"
        "      - name: NodeResourcesFit\n",
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: default-scheduler\n  plugins:\n    multiPoint:\n      enabled:\n"
        "      - name: NodeResourcesFit\n        weight: 4\n  pluginConfig:\n  - name: NodeResourcesFit\n"
        "    args:\n      scoringStrategy:\n        type: LeastAllocated\n        resources:\n"
        "        - {name: cpu, weight: 3}\n        - {name: memory, weight: 1}\n",
        /* a scored scalar resource: gangs asking it of only some members are evaluated exhaustively */
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: default-scheduler\n  pluginConfig:\n  - name: NodeResourcesFit\n"
        "    args:\n      scoringStrategy:\n        type: MostAllocated\n        resources:\n"
        "        - {name: cpu, weight: 1}\n        - {name: example.com/gpu, weight: 5}\n",
    };
    for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++) {
        next_config = configs[i];
        random_racks_identity();
    }
    next_config = NULL;
}

static void random_racks_identity(void)
{
    static char pruned[16384], exhaustive[16384];
    for (uint64_t seed = 1; seed <= 150; seed++) {
        struct prop_case pc;
        bool constrained[PROP_GROUPS];
        int node_rack[32];
        char *text = random_racks(seed, &pc, constrained, node_rack);
        struct run r;
        start(&r, text);
        ks_scheduler_run_until_idle(r.s);
        int bound[PROP_GROUPS] = {0};
        int rack[PROP_GROUPS];
        for (int g = 0; g < PROP_GROUPS; g++)
            rack[g] = -1;
        size_t off = 0;
        for (uint32_t i = 0; i < r.n; i++) {
            int g;
            off += (size_t)snprintf(pruned + off, sizeof(pruned) - off, "%s %d %s %s\n", r.out[i].pod,
                                    (int)r.out[i].kind, r.out[i].node, r.out[i].message);
            if (r.out[i].kind != KS_SCHED_SCHEDULED || sscanf(r.out[i].pod, "g%d-", &g) != 1)
                continue;
            bound[g]++;
            int nk = atoi(r.out[i].node + 1), rk = node_rack[nk];
            cr_expect(!constrained[g] || rack[g] < 0 || rack[g] == rk,
                      "seed %lu: gang g%d in racks %d and %d", (unsigned long)seed, g, rack[g], rk);
            rack[g] = rk;
        }
        uint32_t nnodes, npods;
        ks_cache_counts(r.cache, &nnodes, &npods);
        cr_expect_eq(npods, count(&r, KS_SCHED_SCHEDULED), "seed %lu: assumed pods left",
                     (unsigned long)seed);
        finish(&r);
        for (int g = 0; g < PROP_GROUPS; g++)
            cr_expect(bound[g] == 0 || bound[g] >= pc.min[g], "seed %lu: gang g%d bound %d of minCount %d",
                      (unsigned long)seed, g, bound[g], pc.min[g]);

        ks__placements_exhaustive = true;
        record_outcomes(text, exhaustive, sizeof(exhaustive));
        ks__placements_exhaustive = false;
        cr_expect_str_eq(pruned, exhaustive, "seed %lu: pruned and exhaustive placements differ",
                         (unsigned long)seed);
        if (strcmp(pruned, exhaustive) && getenv("KS_DEBUG_PG"))
            fprintf(stderr, "PRUNED\n%s\nEXHAUSTIVE\n%s\nTEXT\n%s\n", pruned, exhaustive, text);
        free(text);
    }
}

static void priority_from_class(FILE *f)
{
    fprintf(
        f,
        "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 100\n");
    fprintf(f, "---\napiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g, namespace: "
               "default}\n"
               "spec:\n  priorityClassName: high\n  schedulingPolicy:\n    gang: {minCount: 2}\n");
    for (int i = 0; i < 2; i++)
        fprintf(f,
                "---\napiVersion: v1\nkind: Pod\nmetadata: {name: w-%d, namespace: default}\nspec:\n"
                "  priorityClassName: high\n  schedulingGroup: {podGroupName: g}\n"
                "  containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]\n",
                i);
}

/* The Priority admission plugin gives the PodGroup its class's value, as it gives the pods theirs. */
Test(pod_group, a_pod_groups_priority_comes_from_its_class)
{
    struct run r;
    run_built(&r, nodes, priority_from_class);
    cr_expect_eq(count(&r, KS_SCHED_SCHEDULED), 2);
    cr_expect_eq(count(&r, KS_SCHED_ERROR), 0);
    finish(&r);

    struct ks_objects *objs;
    struct ks_error err = {0};
    cr_expect_eq(ks_test_load_text("apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\n"
                                   "metadata: {name: g, namespace: default}\n"
                                   "spec:\n  priorityClassName: nowhere\n  schedulingPolicy: {basic: {}}\n",
                                   KS_VALIDATE_STRICT, &objs, &err),
                 -EINVAL);
    cr_expect_str_eq(err.field, "spec.priorityClassName");
    cr_expect_str_eq(err.msg, "no PriorityClass with name nowhere was found");
}

static void one_member_gated(FILE *f)
{
    group(f, "g", 0);
    pods(f, "w", 1, "g", "1", 0);
    fprintf(f, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: held, namespace: default}\nspec:\n"
               "  schedulingGates: [{name: example.com/wait}]\n  schedulingGroup: {podGroupName: g}\n"
               "  containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]\n");
}

/* A member held by another PreEnqueue plugin holds the whole group, as upstream gates the entity. */
Test(pod_group, a_member_held_by_a_gate_holds_its_group)
{
    struct run r;
    run_built(&r, nodes, one_member_gated);
    cr_expect_eq(r.n, 0, "no member tried: %u outcomes, the first %s", r.n, r.n ? r.out[0].pod : "");
    /* the gate removed: both are scheduled together */
    const struct ks_pod *held = NULL;
    for (uint32_t i = 0; i < ks_objects_count(r.objs, POD); i++) {
        if (strcmp(ks_objects_pods(r.objs)[i]->meta.name, "held") == 0)
            held = ks_objects_pods(r.objs)[i];
    }
    cr_assert_not_null(held);
    struct ks_error err = {0};
    struct ks_objects *more;
    cr_assert_eq(
        ks_test_load_text("apiVersion: v1\nkind: Pod\nmetadata: {name: held, namespace: default}\nspec:\n"
                          "  schedulingGroup: {podGroupName: g}\n"
                          "  containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]\n",
                          KS_VALIDATE_STRICT, &more, &err),
        0, "%s", err.msg);
    cr_assert_eq(ks_scheduler_update_pod(r.s, held, ks_objects_pods(more)[0]), 0);
    ks_scheduler_run_until_idle(r.s);
    cr_expect_eq(count(&r, KS_SCHED_SCHEDULED), 2);
    finish(&r);
    ks_objects_destroy(more);
}

/*
 * A scored gpu asked by one member of three: rack a (2 of 4 cpu used, 8 gpus) holds the two
 * cpu-only members and scores them without the gpu (cpu 100%), rack b (8 cpu, 1 gpu) holds all
 * three. b's score with every member placed is the higher, but a's partial placement beats it:
 * the search must not stop at b.
 */
static void gpu_for_one_member(FILE *f)
{
    fputs("---\napiVersion: v1\nkind: Node\nmetadata: {name: node-a, labels: {rack: a}}\n"
          "status:\n  allocatable: {cpu: \"4\", memory: 16Gi, pods: \"110\", example.com/gpu: \"8\"}\n"
          "---\napiVersion: v1\nkind: Node\nmetadata: {name: node-b, labels: {rack: b}}\n"
          "status:\n  allocatable: {cpu: \"8\", memory: 16Gi, pods: \"110\", example.com/gpu: \"1\"}\n"
          "---\napiVersion: v1\nkind: Pod\nmetadata: {name: busy, namespace: default}\nspec:\n"
          "  nodeName: node-a\n  containers: [{name: c, resources: {requests: {cpu: \"2\"}}}]\n",
          f);
    rack_group(f, "g", 1);
    for (int i = 0; i < 3; i++)
        fprintf(f,
                "---\napiVersion: v1\nkind: Pod\nmetadata: {name: w-%d, namespace: default}\nspec:\n"
                "  schedulingGroup: {podGroupName: g}\n"
                "  containers: [{name: c, resources: {requests: {cpu: \"1\", example.com/gpu: \"%d\"}, "
                "limits: {example.com/gpu: \"%d\"}}}]\n",
                i, i == 2, i == 2);
}

Test(pod_group_topology, a_partial_placement_without_the_scored_gpu_can_win)
{
    next_config =
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: default-scheduler\n  plugins:\n    multiPoint:\n      enabled:\n"
        "      - name: NodeResourcesFit\n        weight: 5\n  pluginConfig:\n  - name: NodeResourcesFit\n"
        "    args:\n      scoringStrategy:\n        type: LeastAllocated\n        resources:\n"
        "        - {name: cpu, weight: 1}\n        - {name: example.com/gpu, weight: 5}\n";
    struct run r;
    run_built(&r, "", gpu_for_one_member);
    next_config = NULL;
    /* a: fit 100 x 5 + pods 2/3 -> 566; b: fit (37 + 5 x 100) / 6 = 89 x 5 + pods 100 -> 545 */
    cr_expect_str_eq(r.last_chosen, "a");
    const struct outcome *o = of(&r, "w-0");
    cr_assert_not_null(o);
    cr_expect_eq(o->kind, KS_SCHED_SCHEDULED);
    cr_expect_str_eq(o->node, "node-a");
    finish(&r);
}

/*
 * A gang spread by hostname (maxSkew 1) in one rack: rack a is full (no cpu) and has no pod
 * of the gang's app, rack b's two nodes one each. Within rack b's listing the minimum is 1,
 * so each member may join a node (skew 1); counted over every node the minimum would be
 * rack a's 0 and no member would fit.
 */
static void spread_within_rack(FILE *f)
{
    static const char *const names[] = {"a-0", "a-1", "b-0", "b-1"};
    for (int i = 0; i < 4; i++)
        fprintf(f,
                "---\napiVersion: v1\nkind: Node\nmetadata: {name: %s, labels: {rack: %c, "
                "kubernetes.io/hostname: %s}}\nstatus:\n  allocatable: {cpu: \"%d\", memory: 16Gi, pods: "
                "\"110\"}\n",
                names[i], names[i][0], names[i], i < 2 ? 1 : 8);
    for (int i = 0; i < 4; i++)
        fprintf(f,
                "---\napiVersion: v1\nkind: Pod\nmetadata: {name: old-%d, namespace: default, labels: {app: "
                "%s}}\n"
                "spec:\n  nodeName: %s\n  containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]\n",
                i, i < 2 ? "other" : "x", names[i]);
    rack_group(f, "g", 2);
    members(f, 2, "x",
            "  topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, "
            "whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: x}}}]\n");
}

Test(pod_group_topology, spreading_counts_only_the_placements_nodes)
{
    struct run r;
    run_built(&r, "", spread_within_rack);
    cr_expect_str_eq(r.last_chosen, "b");
    cr_expect_eq(count(&r, KS_SCHED_SCHEDULED), 2u);
    const struct outcome *a = of(&r, "w-0"), *b = of(&r, "w-1");
    cr_assert(a && b);
    cr_expect_str_neq(a->node, b->node, "one member per node of rack b");
    finish(&r);
}

/*
 * A gang whose pods must sit by a pod of app db (required pod affinity, hostname), db pods
 * themselves: the only db pod runs in rack a, which is full. Within rack b's listing no pod
 * matches, so the first member may go anywhere (it matches its own terms) and the second joins
 * it; counted over every node, only rack a's node would do.
 */
static void affinity_within_rack(FILE *f)
{
    fputs("---\napiVersion: v1\nkind: Node\nmetadata: {name: a-0, labels: {rack: a, kubernetes.io/hostname: "
          "a-0}}\n"
          "status:\n  allocatable: {cpu: \"1\", memory: 16Gi, pods: \"110\"}\n"
          "---\napiVersion: v1\nkind: Node\nmetadata: {name: b-0, labels: {rack: b, kubernetes.io/hostname: "
          "b-0}}\n"
          "status:\n  allocatable: {cpu: \"8\", memory: 16Gi, pods: \"110\"}\n"
          "---\napiVersion: v1\nkind: Pod\nmetadata: {name: db, namespace: default, labels: {app: db}}\n"
          "spec:\n  nodeName: a-0\n  containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]\n",
          f);
    rack_group(f, "g", 2);
    members(f, 2, "db",
            "  affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: "
            "{matchLabels: {app: db}}, topologyKey: kubernetes.io/hostname}]}}\n");
}

Test(pod_group_topology, pod_affinity_counts_only_the_placements_nodes)
{
    struct run r;
    run_built(&r, "", affinity_within_rack);
    cr_expect_str_eq(r.last_chosen, "b");
    const struct outcome *a = of(&r, "w-0"), *b = of(&r, "w-1");
    cr_assert(a && b);
    cr_expect_eq(a->kind, KS_SCHED_SCHEDULED);
    cr_expect_eq(b->kind, KS_SCHED_SCHEDULED);
    cr_expect_str_eq(a->node, "b-0");
    cr_expect_str_eq(b->node, "b-0");
    finish(&r);
}
