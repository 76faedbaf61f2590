/*
 * test_schedule.c - the scheduling loop: numFeasibleNodesToFind, the FailedScheduling
 * message, the worker pool's prefix guarantee, the interim queue, and whole runs over
 * generated clusters.
 */
#include <criterion/criterion.h>

#include "../../engine/scheduler_internal.h"
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/config.h"
#include "ksched/internal/preemption.h"
#include "ksched/loader.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

Test(schedule, num_feasible_nodes_to_find_table)
{
    /* {percentage, nodes, expected}: upstream's schedule_one_test.go TestNumFeasibleNodesToFind */
    static const struct {
        int32_t pct;
        uint32_t nodes, want;
    } cases[] = {
        {0, 10, 10},      {40, 10, 10},      {0, 1000, 420},   {40, 1000, 400}, {0, 6000, 300},
        {40, 6000, 2400}, {0, 5000, 500},    {0, 50000, 2500}, {0, 99, 99},     {0, 100, 100},
        {1, 1000, 100},   {100, 1000, 1000}, {0, 15000, 750},  {50, 150, 100},  {0, 5125, 461},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        cr_expect_eq(ks_num_feasible_nodes_to_find(cases[i].pct, cases[i].nodes), cases[i].want,
                     "pct %d nodes %u: got %u want %u", cases[i].pct, cases[i].nodes,
                     ks_num_feasible_nodes_to_find(cases[i].pct, cases[i].nodes), cases[i].want);
}

static struct ks_status status_of(const char *a, const char *b)
{
    struct ks_status st = {.code = KS_UNSCHEDULABLE, .plugin = 0, .nreasons = b ? 2 : 1};
    st.reasons[0] = ks_intern(a);
    if (b)
        st.reasons[1] = ks_intern(b);
    return st;
}

Test(schedule, fit_error_counts_and_sorts_reasons_as_strings)
{
    struct ks_status st[12];
    for (int i = 0; i < 10; i++)
        st[i] = status_of("node(s) had untolerated taint {dedicated: gpu}", NULL);
    st[10] = status_of("Insufficient cpu", "Insufficient memory");
    st[11] = status_of("Insufficient cpu", NULL);
    struct ks_diagnosis d = {.nall = 12,
                             .nfailed = 12,
                             .statuses = st,
                             .pre_filter_msg = KS_ID_EMPTY,
                             .post_filter_msg = KS_ID_EMPTY};
    char *msg = ks__fit_error_message(&d);
    /* "10 ..." sorts before "2 ..." as Go's sort.Strings does */
    cr_expect_str_eq(msg, "0/12 nodes are available: 1 Insufficient memory, "
                          "10 node(s) had untolerated taint {dedicated: gpu}, 2 Insufficient cpu.");
    free(msg);
}

Test(schedule, fit_error_prefilter_and_postfilter_messages)
{
    struct ks_diagnosis d = {.nall = 3,
                             .pre_filter_msg = ks_intern("node(s) didn't match pod topology spread"),
                             .post_filter_msg =
                                 ks_intern("preemption: not eligible due to preemptionPolicy=Never.")};
    d.absent = status_of("node(s) didn't match pod topology spread", NULL);
    char *msg = ks__fit_error_message(&d);
    cr_expect_str_eq(msg, "0/3 nodes are available: node(s) didn't match pod topology spread. "
                          "preemption: not eligible due to preemptionPolicy=Never.");
    free(msg);
}

Test(schedule, fit_error_counts_absent_nodes)
{
    struct ks_status st[1] = {status_of("Insufficient cpu", NULL)};
    struct ks_diagnosis d = {.nall = 5,
                             .nfailed = 1,
                             .statuses = st,
                             .pre_filter_msg = KS_ID_EMPTY,
                             .post_filter_msg = KS_ID_EMPTY};
    d.absent = status_of("node(s) didn't satisfy plugin(s) [NodeAffinity]", NULL);
    char *msg = ks__fit_error_message(&d);
    cr_expect_str_eq(msg, "0/5 nodes are available: 1 Insufficient cpu, "
                          "4 node(s) didn't satisfy plugin(s) [NodeAffinity].");
    free(msg);
}

/* The grouped form (the index's answer): each group's reasons counted once per node holding it. */
Test(schedule, fit_error_from_grouped_statuses)
{
    struct ks_status st[3] = {status_of("Insufficient cpu", "Insufficient memory"),
                              status_of("node(s) had untolerated taint {dedicated: gpu}", NULL),
                              status_of("Insufficient cpu", NULL)};
    uint32_t counts[3] = {3, 10, 0};
    struct ks_diagnosis d = {.nall = 13,
                             .nfailed = 13,
                             .statuses = st,
                             .ngroups = 3,
                             .group_count = counts,
                             .pre_filter_msg = KS_ID_EMPTY,
                             .post_filter_msg = KS_ID_EMPTY};
    char *msg = ks__fit_error_message(&d);
    cr_expect_str_eq(msg, "0/13 nodes are available: 10 node(s) had untolerated taint {dedicated: gpu}, "
                          "3 Insufficient cpu, 3 Insufficient memory.");
    free(msg);
    /* the same statuses listed node by node give the same message */
    struct ks_status listed[13];
    for (int i = 0; i < 13; i++)
        listed[i] = st[i < 3 ? 0 : 1];
    struct ks_diagnosis l = {.nall = 13,
                             .nfailed = 13,
                             .statuses = listed,
                             .pre_filter_msg = KS_ID_EMPTY,
                             .post_filter_msg = KS_ID_EMPTY};
    char *lmsg = ks__fit_error_message(&l);
    cr_expect_str_eq(lmsg, "0/13 nodes are available: 10 node(s) had untolerated taint {dedicated: gpu}, "
                           "3 Insufficient cpu, 3 Insufficient memory.");
    free(lmsg);
}

/* DefaultPreemption with no lower-priority pod anywhere: every potential node "No preemption victims". */
Test(schedule, preemption_no_victims_message)
{
    char *msg = ks_preempt_no_victims_message(4, 6);
    cr_expect_str_eq(msg, "0/6 nodes are available: 2 Preemption is not helpful for scheduling, "
                          "4 No preemption victims found for incoming pod.");
    free(msg);
    msg = ks_preempt_no_victims_message(0, 3);
    cr_expect_str_eq(msg, "0/3 nodes are available: 3 Preemption is not helpful for scheduling.");
    free(msg);
}

/* ---- worker pool ---- */

struct count_job {
    struct ks_workers *w;
    _Atomic uint32_t seen[10000];
    uint32_t stop_at;
};

static void mark(void *ctx, uint32_t begin, uint32_t end, uint32_t worker)
{
    struct count_job *j = ctx;
    (void)worker;
    for (uint32_t i = begin; i < end; i++) {
        atomic_fetch_add(&j->seen[i], 1);
        if (i == j->stop_at)
            ks_workers_stop(j->w);
    }
}

/* Blocks on the pool's thread take 2 ms (a thread the host preempted); the caller's 20 µs. */
struct who_job {
    _Atomic uint32_t by_threads;
};

static void slow_thread(void *ctx, uint32_t begin, uint32_t end, uint32_t worker)
{
    struct who_job *j = ctx;
    (void)begin;
    (void)end;
    /*
     * the caller 200 us a block (time enough for the pool's thread to join), the thread 50 ms:
     * whatever the machine's load (sanitizers, a busy host), a block on the thread saves the
     * caller far less than its wait for that block
     */
    struct timespec ts = {0, worker ? 50 * 1000 * 1000 : 200 * 1000};
    if (worker)
        atomic_fetch_add(&j->by_threads, 1);
    nanosleep(&ts, NULL);
}

Test(workers, a_thread_that_only_delays_the_caller_is_left_out_of_the_next_jobs)
{
    struct ks_workers *w;
    cr_assert_eq(ks_workers_create(1, &w), 0);
    bool lost = false;
    for (int round = 0; round < 200 && !lost; round++) {
        struct who_job j = {0};
        cr_assert_eq(ks_workers_run(w, 64, 4, slow_thread, &j), 64);
        lost = atomic_load(&j.by_threads) > 0; /* the caller then waited for one 50 ms block */
    }
    cr_assert(lost, "the pool's thread never joined a job");
    for (int round = 0; round < 8; round++) { /* the backoff is at least 16 jobs */
        struct who_job j = {0};
        cr_assert_eq(ks_workers_run(w, 64, 4, slow_thread, &j), 64);
        cr_assert_eq(atomic_load(&j.by_threads), 0, "job %d after the loss ran blocks on the thread", round);
    }
    ks_workers_destroy(w);
}

Test(workers, every_index_once_and_stop_leaves_a_prefix)
{
    struct ks_workers *w;
    cr_assert_eq(ks_workers_create(3, &w), 0);
    for (int round = 0; round < 50; round++) {
        struct count_job *j = calloc(1, sizeof(*j));
        j->w = w;
        j->stop_at = round % 2 ? 3000 + (uint32_t)round * 17 : UINT32_MAX;
        uint32_t end = ks_workers_run(w, 10000, 64, mark, j);
        if (j->stop_at == UINT32_MAX)
            cr_assert_eq(end, 10000);
        else
            cr_assert(end > j->stop_at && end <= 10000, "end %u stop %u", end, j->stop_at);
        for (uint32_t i = 0; i < 10000; i++)
            cr_assert_eq(atomic_load(&j->seen[i]), i < end ? 1u : 0u, "index %u seen %u times (end %u)", i,
                         atomic_load(&j->seen[i]), end);
        free(j);
    }
    ks_workers_destroy(w);
}

/* ---- interim queue ---- */

static bool by_priority(const void *ctx, const struct ks_queued_pod *a, const struct ks_queued_pod *b)
{
    (void)ctx;
    if (a->pod->priority != b->pod->priority)
        return a->pod->priority > b->pod->priority;
    return a->timestamp_ns < b->timestamp_ns;
}

Test(queue, pops_highest_priority_then_oldest)
{
    struct ks_pod pods[5] = {0};
    int32_t prio[5] = {1, 5, 5, 0, 9};
    struct ks_queue *q;
    cr_assert_eq(ks_queue_create(by_priority, NULL, &q), 0);
    for (int i = 0; i < 5; i++) {
        pods[i].priority = prio[i];
        cr_assert_eq(ks_queue_add(q, &pods[i], 100 + i), 0);
    }
    int want[5] = {4, 1, 2, 0, 3};
    for (int i = 0; i < 5; i++) {
        struct ks_queued_pod *qp = ks_queue_pop(q, false);
        cr_assert_not_null(qp);
        cr_expect_eq(qp->pod, &pods[want[i]], "pop %d", i);
        cr_expect_eq(qp->attempts, 1u);
        ks_queue_done(q, qp);
    }
    cr_expect_null(ks_queue_pop(q, false));
    ks_queue_destroy(q);
}

Test(queue, unschedulable_pods_wait_for_their_events)
{
    struct ks_pod pod = {0};
    struct ks_queue *q;
    cr_assert_eq(ks_queue_create(by_priority, NULL, &q), 0);
    ks_queue_add(q, &pod, 1);
    struct ks_queued_pod *qp = ks_queue_pop(q, false);
    uint64_t cycle = ks_queue_cycle(q);
    cr_assert_eq(ks_queue_add_unschedulable(q, qp, cycle, KS_EVENT_NODE_ADD), 0);
    cr_expect_null(ks_queue_pop(q, false));
    ks_queue_move(q, KS_EVENT_ASSIGNED_POD_ADD);
    cr_expect_null(ks_queue_pop(q, false), "an unrelated event does not move it");
    ks_queue_move(q, KS_EVENT_NODE_ADD);
    qp = ks_queue_pop(q, false);
    cr_assert_not_null(qp);
    cr_expect_eq(qp->attempts, 2u);
    /* a move request during the pod's cycle sends it straight back */
    cycle = ks_queue_cycle(q);
    ks_queue_move(q, KS_EVENT_NODE_UPDATE);
    cr_assert_eq(ks_queue_add_unschedulable(q, qp, cycle, KS_EVENT_NODE_ADD), 0);
    qp = ks_queue_pop(q, false);
    cr_expect_not_null(qp);
    ks_queue_done(q, qp);
    ks_queue_destroy(q);
}

/* ---- whole runs ---- */

struct outcome {
    uint32_t scheduled, unschedulable, errors;
    char last_message[1024];
};

static void collect(void *ctx, const struct ks_sched_event *ev)
{
    struct outcome *o = ctx;
    if (ev->kind == KS_SCHED_SCHEDULED)
        o->scheduled++;
    else if (ev->kind == KS_SCHED_UNSCHEDULABLE)
        o->unschedulable++;
    else if (ev->kind == KS_SCHED_ERROR)
        o->errors++;
    if (ev->message)
        snprintf(o->last_message, sizeof(o->last_message), "%s", ev->message);
}

/* Generate @nodes nodes (4 cpu, 8Gi, 110 pods) and @pods pending pods of @cpu each. */
static char *write_cluster(uint32_t nodes, uint32_t pods, const char *cpu)
{
    char *path = strdup("/tmp/ksched-cluster-XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    for (uint32_t i = 0; i < nodes; i++)
        fprintf(f,
                "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: node-%u\n  labels: "
                "{topology.kubernetes.io/zone: "
                "zone-%u}\nstatus:\n  allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}\n",
                i, i % 3);
    for (uint32_t i = 0; i < pods; i++)
        fprintf(
            f,
            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: pod-%u}\nspec:\n  containers:\n  - name: c\n"
            "    resources: {requests: {cpu: %s, memory: 100Mi}}\n",
            i, cpu);
    fclose(f);
    return path;
}

static void run_cluster(uint32_t nodes, uint32_t pods, const char *cpu, struct outcome *o,
                        struct ks_cache **cache_out)
{
    char *path = write_cluster(nodes, pods, cpu);
    const char *p = path;
    struct ks_objects *objs;
    struct ks_config *cfg;
    struct ks_error err = {0};
    struct ks_cache *cache;
    struct ks_scheduler *s;

    cr_assert_eq(ks_api_init(), 0);
    ks_rcu_register_thread();
    cr_assert_eq(ks_objects_load(&p, 1, &objs, &err), 0, "%s", err.msg);
    cr_assert_eq(ks_config_load_default(&cfg), 0);
    cr_assert_eq(ks_cache_create(&cache), 0);
    struct ks_scheduler_opts opts = {.config = cfg, .seeded = true, .seed = 7, .on_event = collect, .ctx = o};
    cr_assert_eq(ks_scheduler_create(&opts, cache, &s, &err), 0, "%s", err.msg);
    for (uint32_t i = 0; i < ks_objects_count(objs, NODE); i++)
        cr_assert_eq(ks_cache_add_node(cache, ks_objects_nodes(objs)[i]), 0);
    objs->of[KS_KIND_NODE].n = 0;
    for (uint32_t i = 0; i < ks_objects_count(objs, POD); i++)
        cr_assert_eq(ks_scheduler_add_pod(s, ks_objects_pods(objs)[i]), 0);
    ks_scheduler_run_until_idle(s);
    ks_scheduler_destroy(s);
    ks_objects_destroy(objs);
    ks_config_destroy(cfg);
    unlink(path);
    free(path);
    *cache_out = cache;
}

Test(schedule, every_pod_bound_and_no_node_overcommitted)
{
    struct outcome o = {0};
    struct ks_cache *cache;
    /* 300 nodes x 4 cpu; 1000 pods x 1 cpu: 1000 fit, spread by LeastAllocated */
    run_cluster(300, 1000, "1", &o, &cache);
    cr_expect_eq(o.scheduled, 1000);
    cr_expect_eq(o.unschedulable, 0);
    cr_expect_eq(o.errors, 0);
    cr_assert_geq(ks_cache_refresh(cache), 0);
    ks_rcu_read_lock();
    const struct ks_snapshot *snap = ks_cache_snapshot(cache);
    uint32_t pods = 0;
    for (uint32_t i = 0; i < snap->nnodes; i++) {
        const struct ks_node_snap *n = ks_snapshot_node(snap, i);
        cr_expect_leq(n->req_milli_cpu, n->alloc_milli_cpu, "node %s overcommitted", ks_intern_str(n->name));
        pods += n->npods;
    }
    ks_rcu_read_unlock();
    cr_expect_eq(pods, 1000);
    ks_cache_destroy(cache);
}

Test(schedule, pods_beyond_capacity_are_unschedulable_with_upstream_message)
{
    struct outcome o = {0};
    struct ks_cache *cache;
    /* 10 nodes x 4 cpu hold one 3-cpu pod each: 10 of 13 fit */
    run_cluster(10, 13, "3", &o, &cache);
    cr_expect_eq(o.scheduled, 10);
    cr_expect_geq(o.unschedulable, 3);
    /* every pod has priority 0: preemption finds no victims, as upstream reports it */
    cr_expect_str_eq(o.last_message, "0/10 nodes are available: 10 Insufficient cpu. "
                                     "no new claims to deallocate, preemption: 0/10 nodes are available: 10 "
                                     "No preemption victims found for "
                                     "incoming pod.");
    ks_cache_destroy(cache);
}
