/*
 * stress_schedule.c - the whole scheduling loop under ThreadSanitizer: parallel Filter and
 * Score workers reading RCU snapshots, binder threads confirming pods into the cache, the
 * queue moving pods between threads.
 *
 * 600 nodes (enough for the filter phase to split across workers) and 3,000 pods, half of
 * them too big to fit once the cluster fills up. Checks every pod ends bound or reported
 * unschedulable exactly once per attempt, and that no node is overcommitted.
 *
 * `stress_schedule deterministic` runs the same cluster as a deterministic run
 * (struct ks_scheduler_opts.deterministic: bindings settled on the scheduling thread before
 * each cycle) twice, and also requires both runs to report the same counts.
 */
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/config.h"
#include "ksched/internal/scheduler.h"
#include "ksched/loader.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { NODES = 600, PODS = 3000 };

static atomic_uint scheduled, unschedulable, errors;

static void on_event(void *ctx, const struct ks_sched_event *ev)
{
    (void)ctx;
    if (ev->kind == KS_SCHED_SCHEDULED)
        atomic_fetch_add(&scheduled, 1);
    else if (ev->kind == KS_SCHED_UNSCHEDULABLE)
        atomic_fetch_add(&unschedulable, 1);
    else if (ev->kind == KS_SCHED_ERROR)
        atomic_fetch_add(&errors, 1);
}

static int write_cluster(char *path)
{
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    FILE *f = fdopen(fd, "w");
    for (int i = 0; i < NODES; i++)
        fprintf(f,
                "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n%d\n  labels: "
                "{topology.kubernetes.io/zone: z%d}\n"
                "status: {allocatable: {cpu: \"8\", memory: 32Gi, pods: \"20\"}}\n",
                i, i % 4);
    for (int i = 0; i < PODS; i++)
        fprintf(
            f,
            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p%d}\nspec:\n  priority: %d\n  containers:\n"
            "  - {name: c, resources: {requests: {cpu: %s, memory: 1Gi}}}\n",
            i, i % 7, i % 2 ? "3" : "500m");
    fclose(f);
    return 0;
}

/* One run over the cluster of write_cluster(); 0 when every check holds. */
static int run(bool deterministic)
{
    char path[] = "/tmp/ksched-stress-XXXXXX";
    struct ks_objects *objs;
    struct ks_config *cfg;
    struct ks_cache *cache;
    struct ks_scheduler *s;
    struct ks_error err = {0};
    const char *p = path;
    int bad = 0;

    atomic_store(&scheduled, 0);
    atomic_store(&unschedulable, 0);
    atomic_store(&errors, 0);
    if (write_cluster(path) < 0 || ks_objects_load(&p, 1, &objs, &err) < 0 ||
        ks_config_load_default(&cfg) < 0 || ks_cache_create(&cache) < 0) {
        fprintf(stderr, "stress_schedule: setup failed: %s\n", err.msg);
        return 1;
    }
    unlink(path);
    struct ks_scheduler_opts opts = {.config = cfg,
                                     .parallelism = 4,
                                     .binders = 3,
                                     .seeded = true,
                                     .seed = 1,
                                     .deterministic = deterministic,
                                     .on_event = on_event};
    if (ks_scheduler_create(&opts, cache, &s, &err) < 0) {
        fprintf(stderr, "stress_schedule: %s\n", err.msg);
        return 1;
    }
    for (uint32_t i = 0; i < ks_objects_count(objs, NODE); i++)
        ks_cache_add_node(cache, ks_objects_nodes(objs)[i]);
    objs->of[KS_KIND_NODE].n = 0;
    for (uint32_t i = 0; i < ks_objects_count(objs, POD); i++)
        ks_scheduler_add_pod(s, ks_objects_pods(objs)[i]);
    uint64_t cycles = ks_scheduler_run_until_idle(s);
    ks_scheduler_destroy(s);

    ks_cache_refresh(cache);
    ks_rcu_read_lock();
    const struct ks_snapshot *snap = ks_cache_snapshot(cache);
    uint32_t pods = 0;
    for (uint32_t i = 0; i < snap->nnodes; i++) {
        const struct ks_node_snap *n = ks_snapshot_node(snap, i);
        if (n->req_milli_cpu > n->alloc_milli_cpu || n->req_memory > n->alloc_memory ||
            (int64_t)n->npods > n->alloc_pods) {
            fprintf(stderr, "node %s overcommitted\n", ks_intern_str(n->name));
            bad = 1;
        }
        pods += n->npods;
    }
    ks_rcu_read_unlock();
    printf("stress_schedule: %llu cycles, %u scheduled, %u unschedulable attempts, %u errors, %u pods on "
           "nodes\n",
           (unsigned long long)cycles, atomic_load(&scheduled), atomic_load(&unschedulable),
           atomic_load(&errors), pods);
    /* 600 nodes x 8 cpu: 1,500 small pods (750 cpu) and as many 3-cpu pods as fit */
    if (pods != atomic_load(&scheduled) || atomic_load(&errors) || atomic_load(&scheduled) < PODS / 2 ||
        atomic_load(&scheduled) + atomic_load(&unschedulable) < PODS)
        bad = 1;
    ks_cache_destroy(cache);
    ks_objects_destroy(objs);
    ks_config_destroy(cfg);
    return bad;
}

int main(int argc, char **argv)
{
    bool deterministic = argc > 1 && strcmp(argv[1], "deterministic") == 0;
    int bad;

    ks_api_init();
    ks_rcu_register_thread();
    bad = run(deterministic);
    if (deterministic && !bad) {
        unsigned first[2] = {atomic_load(&scheduled), atomic_load(&unschedulable)};
        bad = run(true);
        if (first[0] != atomic_load(&scheduled) || first[1] != atomic_load(&unschedulable)) {
            fprintf(stderr,
                    "stress_schedule: two deterministic runs differ: %u/%u scheduled, %u/%u attempts\n",
                    first[0], atomic_load(&scheduled), first[1], atomic_load(&unschedulable));
            bad = 1;
        }
    }
    ks_rcu_unregister_thread();
    return bad;
}
