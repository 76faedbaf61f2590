/*
 * stress_bind_wait.c - PreBind waits (KS_WAIT, engine/binder.c's parking) under
 * ThreadSanitizer: a PreBind plugin makes every binding wait; the waits end on two resolver
 * threads after a random pause, or inside PreBind before it returns (the resolved-before-
 * parked path), and every seventh pod's first wait fails (Unreserve, requeue, a second
 * wait). With one and with two binders, every pod must be bound exactly once and fail
 * exactly as planned; a wait ended twice or a job resumed while running shows up as a
 * TSan report, a wrong count, or a hang (bounded).
 */
#include "ksched/api.h"
#include "ksched/base/rcu.h"
#include "ksched/framework.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/config.h"
#include "ksched/internal/scheduler.h"
#include "ksched/loader.h"
#include "ksched/registry.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef KS_TSAN
enum { PODS = 300 };
#else
enum { PODS = 2000 };
#endif
enum { NODES = 20, RESOLVERS = 2, FAIL_EVERY = 7, QUEUE = PODS * 2 + 16 };

static atomic_uint scheduled, failures, waits;
static atomic_uchar *failed_once; /* per pod index */

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcond = PTHREAD_COND_INITIALIZER;
static struct {
    struct ks_bind_wait *w;
    int pod;
} queue[QUEUE];
static unsigned qhead, qtail;
static bool quit;

static int pod_index(const struct ks_pod *pod)
{
    return atoi(pod->meta.name + 1);
}

static int parker_pre_bind(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod, uint32_t node,
                           struct ks_status *st)
{
    (void)self, (void)node;
    int i = pod_index(pod);
    atomic_fetch_add(&waits, 1);
    if (!cs->bind_wait)
        return ks_status_set(st, KS_ERROR, "cannot wait");
    if (i % 3 == 0 && i % FAIL_EVERY) {
        ks_bind_wait_done(cs->bind_wait, KS_SUCCESS, NULL); /* before PreBind returns */
        return KS_WAIT;
    }
    pthread_mutex_lock(&qlock);
    queue[qtail % QUEUE].w = cs->bind_wait;
    queue[qtail % QUEUE].pod = i;
    qtail++;
    pthread_cond_signal(&qcond);
    pthread_mutex_unlock(&qlock);
    return KS_WAIT;
}

static int parker_init(const struct ks_plugin_init *in, void **self, struct ks_error *err)
{
    (void)in, (void)err;
    *self = NULL;
    return 0;
}

static const struct ks_plugin parker = {.abi_version = KS_PLUGIN_ABI_VERSION,
                                        .name = "StressParker",
                                        .init = parker_init,
                                        .pre_bind = parker_pre_bind};

static void *resolver(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    pthread_mutex_lock(&qlock);
    for (;;) {
        while (qhead == qtail && !quit)
            pthread_cond_wait(&qcond, &qlock);
        if (qhead == qtail)
            break;
        struct ks_bind_wait *w = queue[qhead % QUEUE].w;
        int i = queue[qhead % QUEUE].pod;
        qhead++;
        pthread_mutex_unlock(&qlock);
        if (rand_r(&seed) % 4 == 0)
            usleep(rand_r(&seed) % 200);
        if (i % FAIL_EVERY == 0 && atomic_exchange(&failed_once[i], 1) == 0) {
            struct ks_status st = {0};
            ks_status_set(&st, KS_ERROR, "planned failure");
            ks_bind_wait_done(w, KS_ERROR, &st);
        } else {
            ks_bind_wait_done(w, KS_SUCCESS, NULL);
        }
        pthread_mutex_lock(&qlock);
    }
    pthread_mutex_unlock(&qlock);
    return NULL;
}

static void on_event(void *ctx, const struct ks_sched_event *ev)
{
    (void)ctx;
    if (ev->kind == KS_SCHED_SCHEDULED)
        atomic_fetch_add(&scheduled, 1);
    else if (ev->kind == KS_SCHED_ERROR)
        atomic_fetch_add(&failures, 1);
}

static int run(uint32_t binders, const char *path, struct ks_config *cfg)
{
    struct ks_error err = {0};
    struct ks_objects *objs;
    struct ks_cache *cache;
    struct ks_scheduler *s;
    pthread_t t[RESOLVERS];
    const char *p = path;

    atomic_store(&scheduled, 0);
    atomic_store(&failures, 0);
    atomic_store(&waits, 0);
    for (int i = 0; i < PODS; i++)
        atomic_store(&failed_once[i], 0);
    quit = false;
    if (ks_objects_load(&p, 1, &objs, &err) < 0 || ks_cache_create(&cache) < 0) {
        fprintf(stderr, "stress_bind_wait: setup failed: %s\n", err.msg);
        return 1;
    }
    struct ks_scheduler_opts opts = {.config = cfg,
                                     .objects = objs,
                                     .parallelism = 2,
                                     .binders = binders,
                                     .seeded = true,
                                     .seed = 3,
                                     .on_event = on_event};
    if (ks_scheduler_create(&opts, cache, &s, &err) < 0) {
        fprintf(stderr, "stress_bind_wait: %s\n", err.msg);
        return 1;
    }
    for (uint32_t i = 0; i < ks_objects_count(objs, NODE); i++)
        ks_cache_add_node(cache, ks_objects_nodes(objs)[i]);
    objs->of[KS_KIND_NODE].n = 0;
    for (int i = 0; i < RESOLVERS; i++)
        pthread_create(&t[i], NULL, resolver, (void *)(uintptr_t)(i + 1));
    for (uint32_t i = 0; i < ks_objects_count(objs, POD); i++)
        ks_scheduler_add_pod(s, ks_objects_pods(objs)[i]);
    ks_scheduler_run_until_idle(s);
    pthread_mutex_lock(&qlock);
    quit = true;
    pthread_cond_broadcast(&qcond);
    pthread_mutex_unlock(&qlock);
    for (int i = 0; i < RESOLVERS; i++)
        pthread_join(t[i], NULL);
    unsigned want_fail = (PODS + FAIL_EVERY - 1) / FAIL_EVERY;
    int bad = atomic_load(&scheduled) != PODS || atomic_load(&failures) != want_fail ||
              atomic_load(&waits) != PODS + want_fail;
    fprintf(stderr, "stress_bind_wait: %u binder(s): %u of %u bound, %u failures (want %u), %u waits\n",
            binders, atomic_load(&scheduled), PODS, atomic_load(&failures), want_fail, atomic_load(&waits));
    ks_scheduler_destroy(s);
    ks_cache_destroy(cache);
    ks_objects_destroy(objs);
    return bad;
}

int main(void)
{
    static const char cfg_yaml[] = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                   "kind: KubeSchedulerConfiguration\n"
                                   "profiles:\n"
                                   "- schedulerName: default-scheduler\n"
                                   "  plugins:\n"
                                   "    preBind:\n"
                                   "      enabled:\n"
                                   "      - name: StressParker\n";
    struct ks_error err = {0};
    struct ks_config *cfg;
    char path[] = "/tmp/ksched-stress-bind-wait-XXXXXX";
    int bad = 0;

    if (ks_api_init() < 0 || ks_registry_add(&parker, &err) < 0) {
        fprintf(stderr, "stress_bind_wait: %s\n", err.msg);
        return 1;
    }
    ks_rcu_register_thread();
    if (ks_config_load_yaml("cfg.yaml", cfg_yaml, strlen(cfg_yaml), &cfg, &err) < 0) {
        fprintf(stderr, "stress_bind_wait: %s\n", err.msg);
        return 1;
    }
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f)
        return 1;
    for (int i = 0; i < NODES; i++)
        fprintf(f,
                "---\napiVersion: v1\nkind: Node\nmetadata: {name: n%d}\n"
                "status: {allocatable: {cpu: \"64\", memory: 256Gi, pods: \"200\"}}\n",
                i);
    for (int i = 0; i < PODS; i++)
        fprintf(f,
                "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p%d, uid: u%d}\nspec:\n  containers:\n"
                "  - {name: c, resources: {requests: {cpu: 10m, memory: 10Mi}}}\n",
                i, i);
    fclose(f);
    failed_once = calloc(PODS, sizeof(*failed_once));
    bad |= run(1, path, cfg);
    bad |= run(2, path, cfg);
    unlink(path);
    free(failed_once);
    ks_config_destroy(cfg);
    ks_rcu_unregister_thread();
    return bad;
}
