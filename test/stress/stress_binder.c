/*
 * stress_binder.c - batched binder wake-ups (engine/binder.c) never strand a binding.
 *
 * The scheduling thread wakes a sleeping binder only every KS_BIND_BATCH jobs, and
 * otherwise when it runs out of pods. This driver checks, with one and with two binders,
 * that every pod is bound:
 *   1. after ks_scheduler_run_until_idle() over many pods (the batch path);
 *   2. without run_until_idle: pods queued in rounds of 1..2*KS_BIND_BATCH+1, each round
 *      scheduled by exactly as many ks_scheduler_schedule_one() calls as it has pods (the
 *      last cycle finds the active queue empty and must send the deferred bindings), then
 *      the thread waits for the Scheduled events without calling into the scheduler;
 *   3. the same with a blocking schedule_one() loop on its own thread while this one
 *      feeds pods in small bursts and waits for each burst to be bound (the blocking pop
 *      must send deferred bindings before it sleeps).
 * Waits are bounded (a binding that never comes fails the run instead of hanging it) but
 * the bound is generous: nothing here measures time.
 */
#include "ksched/api.h"
#include "ksched/base/rcu.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/config.h"
#include "ksched/internal/queue.h"
#include "ksched/internal/scheduler.h"
#include "ksched/loader.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

enum { NODES = 40, PODS = 1200, WAIT_S = 120 };

static atomic_uint scheduled, failures;

static void on_event(void *ctx, const struct ks_sched_event *ev)
{
    (void)ctx;
    if (ev->kind == KS_SCHED_SCHEDULED)
        atomic_fetch_add(&scheduled, 1);
    else
        atomic_fetch_add(&failures, 1);
}

static int write_cluster(char *path)
{
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    FILE *f = fdopen(fd, "w");
    for (int i = 0; i < NODES; i++)
        fprintf(f,
                "---\napiVersion: v1\nkind: Node\nmetadata: {name: n%d}\n"
                "status: {allocatable: {cpu: \"64\", memory: 256Gi, pods: \"110\"}}\n",
                i);
    for (int i = 0; i < PODS; i++)
        fprintf(f,
                "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p%d}\nspec:\n  containers:\n"
                "  - {name: c, resources: {requests: {cpu: 10m, memory: 10Mi}}}\n",
                i);
    fclose(f);
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Wait (without calling into the scheduler) until @want pods were reported scheduled. */
static int wait_scheduled(unsigned want, const char *what)
{
    double deadline = now_s() + WAIT_S;
    while (atomic_load(&scheduled) < want) {
        if (now_s() > deadline) {
            fprintf(stderr, "stress_binder: %s: %u of %u pods bound, the rest never were\n", what,
                    atomic_load(&scheduled), want);
            return 1;
        }
        usleep(200);
    }
    return 0;
}

struct env {
    struct ks_objects *objs;
    struct ks_config *cfg;
    struct ks_cache *cache;
    struct ks_scheduler *s;
};

static int env_start(struct env *e, uint32_t binders, const char *path)
{
    struct ks_error err = {0};
    const char *p = path;
    atomic_store(&scheduled, 0);
    atomic_store(&failures, 0);
    if (ks_objects_load(&p, 1, &e->objs, &err) < 0 || ks_config_load_default(&e->cfg) < 0 ||
        ks_cache_create(&e->cache) < 0) {
        fprintf(stderr, "stress_binder: setup failed: %s\n", err.msg);
        return -1;
    }
    struct ks_scheduler_opts opts = {.config = e->cfg,
                                     .parallelism = 2,
                                     .binders = binders,
                                     .seeded = true,
                                     .seed = 7,
                                     .on_event = on_event};
    if (ks_scheduler_create(&opts, e->cache, &e->s, &err) < 0) {
        fprintf(stderr, "stress_binder: %s\n", err.msg);
        return -1;
    }
    for (uint32_t i = 0; i < ks_objects_count(e->objs, NODE); i++)
        ks_cache_add_node(e->cache, ks_objects_nodes(e->objs)[i]);
    e->objs->of[KS_KIND_NODE].n = 0;
    return 0;
}

static void env_stop(struct env *e)
{
    ks_scheduler_destroy(e->s);
    ks_cache_destroy(e->cache);
    ks_objects_destroy(e->objs);
    ks_config_destroy(e->cfg);
}

/* 1: every pod through run_until_idle. */
static int run_idle(uint32_t binders, const char *path)
{
    struct env e;
    if (env_start(&e, binders, path) < 0)
        return 1;
    for (uint32_t i = 0; i < PODS; i++)
        ks_scheduler_add_pod(e.s, ks_objects_pods(e.objs)[i]);
    ks_scheduler_run_until_idle(e.s);
    /* run_until_idle returns after every binding finished: no waiting here */
    int bad = atomic_load(&scheduled) != PODS || atomic_load(&failures);
    if (bad)
        fprintf(stderr, "stress_binder: run_until_idle with %u binder(s): %u of %u bound, %u failures\n",
                binders, atomic_load(&scheduled), PODS, atomic_load(&failures));
    env_stop(&e);
    return bad;
}

/* 2: rounds of k pods, k calls each, then wait without calling the scheduler. */
static int run_rounds(uint32_t binders, const char *path)
{
    struct env e;
    uint32_t next = 0;
    int bad = 0;
    if (env_start(&e, binders, path) < 0)
        return 1;
    for (uint32_t k = 1; !bad && next < PODS; k = k % 17 + 1) {
        uint32_t n = next + k <= PODS ? k : PODS - next;
        for (uint32_t i = 0; i < n; i++)
            ks_scheduler_add_pod(e.s, ks_objects_pods(e.objs)[next + i]);
        for (uint32_t i = 0; i < n; i++) {
            if (ks_scheduler_schedule_one(e.s, false) != 1) {
                fprintf(stderr, "stress_binder: round of %u: cycle %u found no pod\n", n, i);
                bad = 1;
            }
        }
        next += n;
        bad |= wait_scheduled(next, "rounds");
    }
    bad |= atomic_load(&failures) != 0;
    env_stop(&e);
    return bad;
}

struct loop_arg {
    struct ks_scheduler *s;
    atomic_bool stop;
};

static void *blocking_loop(void *p)
{
    struct loop_arg *a = p;
    ks_rcu_register_thread();
    while (!atomic_load(&a->stop))
        ks_scheduler_schedule_one(a->s, true);
    ks_rcu_unregister_thread();
    return NULL;
}

/* 3: a blocking scheduling loop on its own thread, fed in bursts. */
static int run_blocking(uint32_t binders, const char *path)
{
    struct env e;
    int bad = 0;
    if (env_start(&e, binders, path) < 0)
        return 1;
    struct loop_arg a = {.s = e.s};
    pthread_t t;
    pthread_create(&t, NULL, blocking_loop, &a);
    uint32_t next = 0;
    for (uint32_t k = 1; !bad && next < PODS; k = k % 13 + 1) {
        uint32_t n = next + k <= PODS ? k : PODS - next;
        for (uint32_t i = 0; i < n; i++)
            ks_scheduler_add_pod(e.s, ks_objects_pods(e.objs)[next + i]);
        next += n;
        bad |= wait_scheduled(next, "blocking loop");
    }
    /* wake the loop: close the queue so the blocked pop returns */
    atomic_store(&a.stop, true);
    ks_queue_close(ks_scheduler_queue(e.s));
    pthread_join(t, NULL);
    bad |= atomic_load(&failures) != 0;
    env_stop(&e);
    return bad;
}

int main(void)
{
    char path[] = "/tmp/ksched-stress-binder-XXXXXX";
    int bad = 0;

    ks_api_init();
    ks_rcu_register_thread();
    if (write_cluster(path) < 0) {
        fprintf(stderr, "stress_binder: cannot write %s\n", path);
        return 1;
    }
    for (uint32_t binders = 1; binders <= 2; binders++) {
        bad |= run_idle(binders, path);
        bad |= run_rounds(binders, path);
        bad |= run_blocking(binders, path);
    }
    unlink(path);
    printf("stress_binder: %s\n", bad ? "FAILED" : "every pod bound with 1 and 2 binders");
    ks_rcu_unregister_thread();
    return bad;
}
