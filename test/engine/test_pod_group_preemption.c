/*
 * test_pod_group_preemption.c - workload-aware preemption (WorkloadAwarePreemption on):
 * DefaultPreemption's PodGroupPostFilter (plugins/default_preemption.c) with the evaluator
 * of engine/preemption_group.c and the PodGroup cycle's trial runs
 * (engine/podgroup_post_filter.c). Cases follow upstream's podgrouppreemption_test.go and
 * default_preemption_test.go (v1.37): the fewest and least important victims, a group whose
 * disruptionMode is All evicted whole, a pod of a PodGroup valued at its group's priority,
 * PDB-protected pods reprieved first, and upstream's messages when there is nothing to do.
 */
#include "pod_group_run.h"

#include "ksched/base/rcu.h"
#include "ksched/internal/features.h"

static const char cluster[] = "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
                              "status:\n  allocatable: {cpu: \"4\", memory: 16Gi, pods: \"110\"}\n"
                              "---\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\n"
                              "status:\n  allocatable: {cpu: \"4\", memory: 16Gi, pods: \"110\"}\n"
                              "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
                              "metadata: {name: high}\nvalue: 1000\n"
                              "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
                              "metadata: {name: highest}\nvalue: 2000\n";

/* A gang PodGroup of @min with PriorityClass @pc (NULL: none); @all: disruptionMode all. */
static void pc_group(FILE *f, const char *name, int min, const char *pc, bool all)
{
    fprintf(f,
            "---\napiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: %s, namespace: "
            "default}\nspec:\n  schedulingPolicy:\n    gang: {minCount: %d}\n",
            name, min);
    if (pc)
        fprintf(f, "  priorityClassName: %s\n", pc);
    if (all)
        fprintf(f, "  disruptionMode: {all: {}}\n");
}

/* A running pod @name on @node of @cpu with @priority, in group @grp (NULL: none), labelled app=@app. */
static void running(FILE *f, const char *name, const char *node, const char *cpu, int priority,
                    const char *grp, const char *app)
{
    fprintf(f, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default", name);
    if (app)
        fprintf(f, ", labels: {app: %s}", app);
    fprintf(f, "}\nspec:\n  nodeName: %s\n  priority: %d\n", node, priority);
    if (grp)
        fprintf(f, "  schedulingGroup: {podGroupName: %s}\n", grp);
    fprintf(f, "  containers: [{name: c, resources: {requests: {cpu: \"%s\"}}}]\nstatus: {phase: Running}\n",
            cpu);
}

/* A pending member @name of group "g" at priority 1000 with @cpu cpus, @spec and @status (YAML lines). */
static void member(FILE *f, const char *name, const char *cpu, const char *spec, const char *status)
{
    fprintf(f,
            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default}\nspec:\n"
            "  schedulingGroup: {podGroupName: g}\n  priority: 1000\n%s"
            "  containers: [{name: c, resources: {requests: {cpu: \"%s\"}}}]\n%s",
            name, spec, cpu, status);
}

/* Gang "g" of @n pods of @cpu cpus at priority 1000 (PriorityClass high). */
static void preemptor(FILE *f, int n, const char *cpu)
{
    pc_group(f, "g", n, "high", false);
    pods(f, "w", n, "g", cpu, 1000);
}

/* The pods preempted, in order, as "a,b". */
static void victims(const struct run *r, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < r->n && off < len; i++) {
        if (r->out[i].kind == KS_SCHED_PREEMPTED)
            off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? "," : "", r->out[i].pod);
    }
}

/* The first outcome of @kind for @pod. */
static const struct outcome *of_kind(const struct run *r, const char *pod, enum ks_sched_event_kind kind)
{
    for (uint32_t i = 0; i < r->n; i++) {
        if (r->out[i].kind == kind && strcmp(r->out[i].pod, pod) == 0)
            return &r->out[i];
    }
    return NULL;
}

/* The pods evicted are exactly @want (victims()); @pod's first Unschedulable message is @message. */
static void expect_victims_and_message(const struct run *r, const char *want, const char *pod,
                                       const char *message)
{
    char got[256];
    victims(r, got, sizeof(got));
    cr_expect_str_eq(got, want);
    const struct outcome *o = of_kind(r, pod, KS_SCHED_UNSCHEDULABLE);
    cr_assert_not_null(o, "%s was not unschedulable", pod);
    cr_expect_str_eq(o->message, message, "%s", pod);
}

static void expect_cache_sound(const struct run *r)
{
    char msg[256] = "";
    cr_assert_geq(ks_cache_refresh(r->cache), 0);
    cr_expect_eq(
        ks_cache_check(r->cache, KS_CACHE_CHECK_SNAPSHOT | KS_CACHE_CHECK_FIT, NULL, msg, sizeof(msg)), 0u,
        "%s", msg);
}

static void setup(void)
{
    struct ks_error err = {0};
    cr_assert_eq(ks_api_init(), 0);
    ks_rcu_register_thread();
    cr_assert_eq(ks_features_set("GenericWorkload=true,WorkloadAwarePreemption=true", &err), 0, "%s",
                 err.msg);
}

static void teardown(void)
{
    ks_features_reset();
}

TestSuite(pod_group_preemption, .init = setup, .fini = teardown);

static void fewest_victims(FILE *f)
{
    running(f, "low-a1", "n1", "2", 0, NULL, NULL);
    running(f, "low-a2", "n1", "1", 0, NULL, NULL);
    running(f, "low-b1", "n2", "2", 0, NULL, NULL);
    preemptor(f, 2, "3");
}

Test(pod_group_preemption, a_gang_evicts_what_it_needs_and_binds)
{
    struct run r;
    char got[128];
    run_built(&r, cluster, fewest_victims);
    victims(&r, got, sizeof(got));
    /* every 0-priority pod goes, then each is put back while the gang still fits: low-a2 stays */
    cr_expect_str_eq(got, "low-a1,low-b1");
    const struct outcome *o = of_kind(&r, "w-1", KS_SCHED_UNSCHEDULABLE);
    cr_assert_not_null(o);
    cr_expect_str_eq(o->message,
                     "pod group is unschedulable, minCount (2) cannot be satisfied: 0 scheduled, 1 "
                     "remaining, pod group preemption: found a placement for podgroup, preempting 2 "
                     "victims");
    cr_expect_not_null(of_kind(&r, "w-0", KS_SCHED_NOMINATED));
    cr_expect_not_null(of_kind(&r, "w-1", KS_SCHED_NOMINATED));
    /* once the victims are gone the gang binds where it was nominated */
    for (int i = 0; i < 2; i++) {
        char name[8];
        snprintf(name, sizeof(name), "w-%d", i);
        const struct outcome *nom = of_kind(&r, name, KS_SCHED_NOMINATED);
        const struct outcome *bound = of_kind(&r, name, KS_SCHED_SCHEDULED);
        cr_assert(nom && bound, "%s", name);
        cr_expect_str_eq(bound->node, nom->node, "%s", name);
    }
    expect_cache_sound(&r);
    finish(&r);
}

static void whole_group_victim(FILE *f)
{
    pc_group(f, "v", 2, NULL, true);
    running(f, "v-0", "n1", "2", 0, "v", NULL);
    running(f, "v-1", "n2", "2", 0, "v", NULL);
    running(f, "x", "n2", "1", 0, NULL, NULL);
    preemptor(f, 1, "3");
}

Test(pod_group_preemption, a_group_whose_disruption_mode_is_all_goes_whole)
{
    struct run r;
    char got[128];
    run_built(&r, cluster, whole_group_victim);
    victims(&r, got, sizeof(got));
    /* one member of v is in the way: both go; the lone pod x is reprieved */
    cr_expect_str_eq(got, "v-0,v-1");
    cr_expect_not_null(of_kind(&r, "w-0", KS_SCHED_SCHEDULED));
    expect_cache_sound(&r);
    finish(&r);
}

static void group_priority_protects(FILE *f)
{
    pc_group(f, "important", 1, "highest", false);
    /* priority 0 of their own, but their group's is 2000: not victims of a 1000 group */
    running(f, "imp-0", "n1", "3", 0, "important", NULL);
    running(f, "imp-1", "n2", "3", 0, "important", NULL);
    preemptor(f, 3, "1");
}

Test(pod_group_preemption, no_lower_priority_unit_is_nothing_to_preempt)
{
    struct run r;
    run_built(&r, cluster, group_priority_protects);
    expect_victims_and_message(&r, "", "w-0",
                               "pod group is unschedulable, minCount (3) cannot be satisfied: 2 scheduled, 0 "
                               "remaining, pod group preemption: No preemption victims found for incoming "
                               "preemptor");
    /* the member no node fits keeps its own FitError */
    expect_victims_and_message(&r, "", "w-2", "0/2 nodes are available: 2 Insufficient cpu.");
    cr_expect_eq(count(&r, KS_SCHED_SCHEDULED), 0u);
    cr_expect_eq(r.last.ok, false);
    expect_cache_sound(&r);
    finish(&r);
}

static void pdb_protected(FILE *f)
{
    fprintf(
        f,
        "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: keep, namespace: default}\n"
        "spec:\n  selector: {matchLabels: {app: db}}\n  minAvailable: 1\n"
        "status: {disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1}\n");
    running(f, "z-db", "n1", "1", 0, NULL, "db");
    running(f, "a-web", "n1", "1", 0, NULL, "web");
    running(f, "full", "n2", "4", 3000, NULL, NULL);
    preemptor(f, 1, "3");
}

Test(pod_group_preemption, a_pod_a_budget_protects_is_reprieved_first)
{
    struct run r;
    run_built(&r, cluster, pdb_protected);
    char got[128];
    victims(&r, got, sizeof(got));
    /* one of the two must go; by name a-web would be reprieved first, but z-db's budget puts it first */
    cr_expect_str_eq(got, "a-web");
    const struct outcome *bound = of_kind(&r, "w-0", KS_SCHED_SCHEDULED);
    cr_assert_not_null(bound);
    cr_expect_str_eq(bound->node, "n1");
    finish(&r);
}

static void never_policy(FILE *f)
{
    running(f, "low", "n1", "2", 0, NULL, NULL);
    running(f, "low2", "n2", "2", 0, NULL, NULL);
    pc_group(f, "g", 2, "high", false);
    member(f, "w-0", "3", "  preemptionPolicy: Never\n", "");
    member(f, "w-1", "3", "", "");
}

Test(pod_group_preemption, a_member_that_never_preempts_keeps_the_group_from_it)
{
    struct run r;
    run_built(&r, cluster, never_policy);
    expect_victims_and_message(
        &r, "", "w-1",
        "pod group is unschedulable, minCount (2) cannot be satisfied: 0 scheduled, 1 "
        "remaining, pod group preemption: not eligible due to preemptionPolicy=Never.");
    finish(&r);
}

static void too_big_anyway(FILE *f)
{
    running(f, "low-a", "n1", "1", 0, NULL, NULL);
    running(f, "keep-b", "n2", "2", 3000, NULL, NULL);
    preemptor(f, 2, "3");
}

Test(pod_group_preemption, a_group_that_cannot_fit_even_so_evicts_nothing)
{
    struct run r;
    run_built(&r, cluster, too_big_anyway);
    /* the trial without low-a placed w-0 and not w-1: its status is the preemption's answer */
    expect_victims_and_message(
        &r, "", "w-0",
        "pod group is unschedulable, minCount (2) cannot be satisfied: 1 scheduled, 0 "
        "remaining, pod group preemption: pod group is unschedulable, minCount (2) cannot "
        "be satisfied: 1 scheduled, 0 remaining");
    uint32_t nnodes, npods;
    ks_cache_counts(r.cache, &nnodes, &npods);
    cr_expect_eq(npods, 2u, "what the trial hid and assumed is back as it was");
    ks_rcu_read_lock();
    const struct ks_node_snap *n1 = ks_snapshot_find(ks_cache_snapshot(r.cache), ks_intern("n1"));
    cr_assert_not_null(n1);
    cr_expect_eq(n1->req_milli_cpu, 1000);
    ks_rcu_read_unlock();
    expect_cache_sound(&r);
    finish(&r);
}

/* The same cluster with the gate off: the group just fails, nothing is evicted. */
Test(pod_group_preemption, with_the_gate_off_a_group_preempts_nothing)
{
    struct ks_error err = {0};
    ks_features_reset();
    cr_assert_eq(ks_features_set("GenericWorkload=true", &err), 0, "%s", err.msg);
    struct run r;
    run_built(&r, cluster, fewest_victims);
    expect_victims_and_message(&r, "", "w-1",
                               "pod group is unschedulable, minCount (2) cannot be satisfied: 0 scheduled, 1 "
                               "remaining");
    finish(&r);
}

static void ongoing(FILE *f)
{
    fprintf(f,
            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: dying, namespace: default, deletionTimestamp: "
            "\"2026-01-01T00:00:00Z\"}\nspec:\n  nodeName: n1\n  priority: 0\n"
            "  containers: [{name: c, resources: {requests: {cpu: \"4\"}}}]\n"
            "status:\n  phase: Running\n  conditions:\n  - {type: DisruptionTarget, status: \"True\", "
            "reason: PreemptionByScheduler}\n");
    running(f, "low", "n2", "2", 0, NULL, NULL);
    pc_group(f, "g", 1, "high", false);
    member(f, "w-0", "3", "", "status: {phase: Pending, nominatedNodeName: n1}\n");
}

/* A member nominated to a node whose lower-priority pod is still leaving: no new preemption. */
Test(pod_group_preemption, a_preemption_under_way_is_waited_for)
{
    struct run r;
    run_built(&r, cluster, ongoing);
    char got[128];
    victims(&r, got, sizeof(got));
    cr_expect_str_eq(got, "", "low on n2 would make room, but the group waits for n1");
    const struct outcome *o = of_kind(&r, "w-0", KS_SCHED_NOMINATED);
    cr_assert_not_null(o);
    cr_expect_str_eq(o->node, "n1");
    cr_expect_null(of_kind(&r, "w-0", KS_SCHED_SCHEDULED));
    finish(&r);
}

/* ---- properties over random clusters ------------------------------------------------------------- */

#define PROP_NODES 6

static uint64_t prop_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/*
 * Six 4-cpu nodes; running pods "p<priority>-<i>" of 1-2 cpu at priority 0, 500 or 2000, some
 * of them in PodGroups "dg<k>" with disruptionMode All (pods "d<k>-<i>", priority 0); then
 * gangs "g<k>" of 2-5 pods "g<k>-<i>" of 1-3 cpu at priority 1000 with minCount 2-all.
 */
static char *random_cluster(uint64_t seed, int *min_count, int *size)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull | 1;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_not_null(f);
    fputs("---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n",
          f);
    int free_cpu[PROP_NODES];
    for (int n = 0; n < PROP_NODES; n++) {
        fprintf(f,
                "---\napiVersion: v1\nkind: Node\nmetadata: {name: n%d}\n"
                "status:\n  allocatable: {cpu: \"4\", memory: 16Gi, pods: \"110\"}\n",
                n);
        free_cpu[n] = 4;
    }
    static const int prios[] = {0, 500, 2000};
    int npods = 4 + (int)(prop_next(&s) % 10);
    for (int i = 0; i < npods; i++) {
        int n = (int)(prop_next(&s) % PROP_NODES), cpu = 1 + (int)(prop_next(&s) % 2);
        if (free_cpu[n] < cpu)
            continue;
        free_cpu[n] -= cpu;
        int prio = prios[prop_next(&s) % 3];
        char name[16], cpus[4];
        snprintf(name, sizeof(name), "p%d-%d", prio, i);
        snprintf(cpus, sizeof(cpus), "%d", cpu);
        char node[8];
        snprintf(node, sizeof(node), "n%d", n);
        running(f, name, node, cpus, prio, NULL, NULL);
    }
    for (int k = 0; k < 2; k++) {
        char grp[8];
        snprintf(grp, sizeof(grp), "dg%d", k);
        pc_group(f, grp, 1, NULL, true);
        for (int i = 0; i < 2; i++) {
            int n = (int)(prop_next(&s) % PROP_NODES);
            if (free_cpu[n] < 1)
                continue;
            free_cpu[n]--;
            char name[16], node[8];
            snprintf(name, sizeof(name), "d%d-%d", k, i);
            snprintf(node, sizeof(node), "n%d", n);
            running(f, name, node, "1", 0, grp, NULL);
        }
    }
    for (int k = 0; k < 3; k++) {
        char grp[8], prefix[8], cpu[4];
        size[k] = 2 + (int)(prop_next(&s) % 4);
        min_count[k] = 2 + (int)(prop_next(&s) % (uint64_t)(size[k] - 1));
        snprintf(grp, sizeof(grp), "g%d", k);
        snprintf(prefix, sizeof(prefix), "g%d", k);
        snprintf(cpu, sizeof(cpu), "%d", 1 + (int)(prop_next(&s) % 3));
        pc_group(f, grp, min_count[k], "high", false);
        pods(f, prefix, size[k], grp, cpu, 1000);
    }
    cr_assert_eq(fclose(f), 0);
    return text;
}

static void outcomes(const struct run *r, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < r->n && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s %d %s %s\n", r->out[i].pod, (int)r->out[i].kind,
                                r->out[i].node, r->out[i].message);
}

/*
 * Gangs bind whole or not at all, only pods of lower priority are evicted, a group whose
 * disruptionMode is All goes whole or stays whole, the cache is sound at the end, and the
 * signature index changes nothing.
 */
Test(pod_group_preemption, random_clusters_keep_the_rules_with_and_without_the_index)
{
    static char with_index[32768], without_index[32768];
    uint32_t preempted = 0;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        int min_count[3], size[3];
        char *text = random_cluster(seed, min_count, size);
        struct run r;
        for (int pass = 0; pass < 2; pass++) {
            next_no_index = pass == 1;
            start(&r, text);
            ks_scheduler_run_until_idle(r.s);
            outcomes(&r, pass ? without_index : with_index, sizeof(with_index));
            if (pass)
                break;
            int bound[3] = {0}, dgone[2] = {0};
            for (uint32_t i = 0; i < r.n; i++) {
                const struct outcome *o = &r.out[i];
                int k, prio, idx;
                if (o->kind == KS_SCHED_SCHEDULED && sscanf(o->pod, "g%d-", &k) == 1)
                    bound[k]++;
                if (o->kind != KS_SCHED_PREEMPTED)
                    continue;
                preempted++;
                if (sscanf(o->pod, "p%d-%d", &prio, &idx) == 2)
                    cr_expect_lt(prio, 1000, "seed %lu: %s evicted by a 1000 group", (unsigned long)seed,
                                 o->pod);
                else if (sscanf(o->pod, "d%d-", &k) == 1)
                    dgone[k]++;
                else
                    cr_expect_fail("seed %lu: %s evicted", (unsigned long)seed, o->pod);
            }
            for (int k = 0; k < 3; k++)
                cr_expect(bound[k] == 0 || bound[k] >= min_count[k], "seed %lu: g%d bound %d of minCount %d",
                          (unsigned long)seed, k, bound[k], min_count[k]);
            for (int k = 0; k < 2; k++) {
                uint32_t members = 0;
                for (const char *p = text; (p = strstr(p, "name: d")) != NULL; p++)
                    members += p[7] == '0' + k;
                cr_expect(dgone[k] == 0 || (uint32_t)dgone[k] == members, "seed %lu: dg%d lost %d of %u pods",
                          (unsigned long)seed, k, dgone[k], members);
            }
            expect_cache_sound(&r);
            finish(&r);
        }
        finish(&r);
        next_no_index = false;
        cr_expect_str_eq(with_index, without_index, "seed %lu", (unsigned long)seed);
        free(text);
    }
    cr_expect_gt(preempted, 10u, "the clusters give preemption something to do");
}
