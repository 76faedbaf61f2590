/*
 * stress_update_in_flight.c - a pending pod updated while its binding fails is never lost
 * (ks_scheduler_update_pod, engine/scheduler.c).
 *
 * An update of a pending pod that the cache already holds is stale when the pod is bound,
 * and then the pod leaves the queue; when it is only assumed, its binding is under way and
 * the queue keeps the update for when the pod comes back. Binding failures forget
 * assumptions concurrently, so whether the pod is bound or assumed must be read at one
 * instant: read in two steps, a failure between them makes the assumed pod look bound, and
 * the update deletes it from the queue - in neither the cache nor the queue for ever.
 *
 * Here every binding fails after a random 0-20 us, the queue has no backoff, so a few pods
 * cycle through assume / bind / forget / requeue as fast as the scheduling thread goes,
 * while this thread watches for an assumed pod and updates it at once. After each update
 * the pod must still be in the queue (it is never bound, never deleted); at the end, with
 * the scheduling thread stopped and the bindings drained, the soak's checks
 * (ksched/internal/sched_check.h) must find every pod queued once. The run lasts
 * KSCHED_STRESS_SECONDS (default 10 under TSan, 5 otherwise). Exit status 1 on a lost pod,
 * a violation, or a run that never updated an assumed pod.
 */
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/framework.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/config.h"
#include "ksched/internal/decode.h"
#include "ksched/internal/queue.h"
#include "ksched/internal/sched_check.h"
#include "ksched/internal/scheduler.h"
#include "ksched/yaml_tree.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { PODS = 4, SPREAD_NS = 20000 };

#define TEMPLATES                                                                                            \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: t, namespace: stress, labels: {rev: a}}\n"             \
    "spec:\n  containers:\n  - {name: c, resources: {requests: {cpu: 10m, memory: 16Mi}}}\n"                 \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: t, namespace: stress, labels: {rev: b}}\n"             \
    "spec:\n  containers:\n  - {name: c, resources: {requests: {cpu: 10m, memory: 16Mi}}}\n"                 \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"                                                \
    "status: {allocatable: {cpu: \"64\", memory: 256Gi, pods: \"110\"}}\n"

static atomic_bool stop;
static atomic_uint_fast64_t binds;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

/* The API server refuses every binding, after 0-20 us of work: the forget lands anywhere. */
static int fail_bind(void *ctx, const struct ks_pod *pod, uint32_t node, struct ks_status *st)
{
    (void)ctx;
    (void)pod;
    (void)node;
    /* relaxed: a counter that only draws the delay */
    uint64_t n = atomic_fetch_add_explicit(&binds, 1, memory_order_relaxed);
    int64_t until = now_ns() + (int64_t)(mix(n + 1) % SPREAD_NS);
    while (now_ns() < until)
        ;
    ks_status_set(st, KS_ERROR, "injected binding failure");
    return -EIO;
}

static void *sched_main(void *arg)
{
    struct ks_scheduler *s = arg;
    ks_rcu_register_thread();
    /* acquire: pairs with the release store that ends the run */
    while (!atomic_load_explicit(&stop, memory_order_acquire)) {
        if (!ks_scheduler_schedule_one(s, false))
            sched_yield();
    }
    ks_rcu_unregister_thread();
    return NULL;
}

/* Pod p<i> from template @rev (0: rev a, 1: rev b), pending. */
static struct ks_pod *make_pod(const struct ks_yaml_stream *ys, uint32_t i, uint32_t rev,
                               struct ks_error *err)
{
    struct ks_pod *pod;
    char name[16];
    if (ks_decode_pod("stress-templates", ys->docs[rev], &pod, err) < 0)
        return NULL;
    snprintf(name, sizeof(name), "p%u", i);
    if (!(pod->meta.name = ks_arena_strdup(&pod->arena, name))) {
        ks_pod_destroy(pod);
        return NULL;
    }
    return pod;
}

int main(void)
{
#ifdef KS_TSAN
    double seconds = 10;
#else
    double seconds = 5;
#endif
    const char *env = getenv("KSCHED_STRESS_SECONDS");
    if (env && atof(env) > 0)
        seconds = atof(env);

    struct ks_error err = {0};
    struct ks_yaml_stream *ys = NULL;
    struct ks_config *cfg = NULL;
    struct ks_cache *cache = NULL;
    struct ks_scheduler *s = NULL;
    struct ks_node *node = NULL;
    struct ks_pod *cur[PODS] = {0};
    uint32_t rev[PODS] = {0};

    ks_api_init();
    ks_rcu_register_thread();
    if (ks_yaml_parse("stress-templates", TEMPLATES, strlen(TEMPLATES), &ys, &err) < 0 ||
        ks_decode_node("stress-templates", ys->docs[2], &node, &err) < 0 ||
        ks_config_load_default(&cfg) < 0 || ks_cache_create(&cache) < 0) {
        fprintf(stderr, "stress_update_in_flight: setup failed: %s\n", err.msg);
        return 1;
    }
    /* no backoff: a pod whose binding failed is back in activeQ at once */
    cfg->pod_initial_backoff_seconds = 0;
    struct ks_scheduler_opts opts = {.config = cfg,
                                     .parallelism = 1,
                                     .binders = 2,
                                     .seeded = true,
                                     .seed = 11,
                                     .binder = {.bind = fail_bind}};
    if (ks_scheduler_create(&opts, cache, &s, &err) < 0 || ks_scheduler_node_event(s, NULL, node) < 0) {
        fprintf(stderr, "stress_update_in_flight: setup failed: %s\n", err.msg);
        return 1;
    }
    for (uint32_t i = 0; i < PODS; i++) {
        if (!(cur[i] = make_pod(ys, i, 0, &err)) || ks_scheduler_add_pod(s, cur[i]) != 0) {
            fprintf(stderr, "stress_update_in_flight: setup failed: %s\n", err.msg);
            return 1;
        }
    }

    pthread_t th;
    if (pthread_create(&th, NULL, sched_main, s) != 0)
        return 1;
    uint64_t polls = 0, updates = 0, assumed_updates = 0;
    int lost = 0;
    int64_t start = now_ns(), deadline = start + (int64_t)(seconds * 1e9);
    struct ks_pod *next[PODS] = {0};
    for (uint32_t i = 0; !lost && now_ns() < deadline; i = (i + 1) % PODS) {
        /* the next version is ready before the pod is watched: the update follows at once */
        if (!next[i] && !(next[i] = make_pod(ys, i, !rev[i], &err)))
            break;
        bool assumed = ks_cache_is_assumed(cache, cur[i]);
        /* updates of assumed pods, and of one in 256 others (queued or in a scheduling cycle) */
        if (!assumed && ++polls % 256 != 0)
            continue;
        int rc = ks_scheduler_update_pod(s, cur[i], next[i]);
        ks_pod_put(cur[i]);
        cur[i] = next[i];
        next[i] = NULL;
        rev[i] = !rev[i];
        updates++;
        assumed_updates += assumed;
        /*
         * Never bound, never deleted: the queue holds the pod at every moment (queued or in
         * flight), so adding it again is refused. (A lookup that copies the queue's record
         * would race with the thread that holds an in-flight pod.)
         */
        struct ks_queue *q = ks_scheduler_queue(s);
        int again = rc < 0 ? rc : ks_queue_add(q, ks_pod_get(cur[i]), ks_queue_now(q));
        if (again < 0 && rc >= 0)
            ks_pod_put(cur[i]); /* refused: the reference is still ours */
        if (again != -EEXIST) {
            fprintf(stderr,
                    "stress_update_in_flight: pod p%u lost by update %" PRIu64 " (update %d, add %d): "
                    "expected in the queue, found nowhere\n",
                    i, updates, rc, again);
            lost = 1;
        }
    }
    /* release: the scheduling thread stops after its current cycle */
    atomic_store_explicit(&stop, true, memory_order_release);
    pthread_join(th, NULL);
    ks_sched_quiesce(s);

    struct ks_check_report rep = {0};
    ks_sched_check(s, KS_SCHED_CHECK_FIT, PODS, &rep);
    for (uint32_t i = 0; i < PODS; i++)
        ks_sched_check_pod(s, cur[i], KS_PLACE_QUEUED, KS_ID_NONE, &rep);
    printf("stress_update_in_flight: %.1f s, %" PRIu64 " updates (%" PRIu64 " of assumed pods), %" PRIu64
           " failed bindings, %" PRIu64 " violations\n",
           (double)(now_ns() - start) / 1e9, updates, assumed_updates, (uint64_t)atomic_load(&binds),
           rep.nviolations);
    for (uint32_t i = 0; i < rep.nkept; i++)
        printf("  violation: %s\n", rep.kept[i]);
    int bad = lost || rep.nviolations != 0 || assumed_updates == 0;

    ks_scheduler_destroy(s);
    for (uint32_t i = 0; i < PODS; i++) {
        ks_pod_put(cur[i]);
        ks_pod_put(next[i]);
    }
    ks_cache_destroy(cache);
    ks_config_destroy(cfg);
    ks_yaml_stream_destroy(ys);
    ks_rcu_unregister_thread();
    return bad;
}
