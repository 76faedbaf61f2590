/*
 * stress_live_objects.c - VolumeBinding's live index under ThreadSanitizer: the scheduling
 * thread keeps adding claims and PersistentVolumes to the objects (as `ksched serve`'s
 * on_cycle hook applies informer events, loader.h gen) and runs cycles whose PreFilter
 * rebuilds the index and swaps it in, while a binder thread runs PreBind and Unreserve of
 * pods reserved against earlier indexes (plugins/volume_binding.c, "Live objects").
 *
 * Checked: no data race or crash (TSan); every pod's claim, created just before the pod,
 * is found by its cycle; every PreBind succeeds; and each bound claim pins a later pod to
 * its PV's node, so bindings made against an old index reached the current one.
 */
#include "../fakes/live_objects.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/framework.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/config.h"
#include "ksched/registry.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PODS = 300, NODES = 4, QUEUE = 16 };

#define WAIT_SC                                                                                              \
    "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: wait-sc}\n"                    \
    "provisioner: kubernetes.io/no-provisioner\nvolumeBindingMode: WaitForFirstConsumer\n"

static const struct ks_plugin *const vb = &ks_plugin_volume_binding;

/* A reserved pod handed to the binder. */
struct job {
    struct ks_pod *pod;
    struct ks_cycle_state cs;
    uint32_t node;
    bool bind; /* PreBind; otherwise Unreserve (the bind failed) */
};

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct job *q[QUEUE];
    unsigned head, tail;
    bool done;
} bq = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, 0, false};

static atomic_uint prebind_failures;
static void *self;

static uint32_t node_id(int n)
{
    char name[32];
    snprintf(name, sizeof(name), "n%d", n);
    return ks_intern(name);
}

static void push(struct job *j)
{
    pthread_mutex_lock(&bq.lock);
    while (bq.tail - bq.head == QUEUE)
        pthread_cond_wait(&bq.cond, &bq.lock);
    bq.q[bq.tail++ % QUEUE] = j;
    pthread_cond_broadcast(&bq.cond);
    pthread_mutex_unlock(&bq.lock);
}

static void *binder(void *arg)
{
    (void)arg;
    ks_rcu_register_thread(); /* binder threads are registered readers */
    for (;;) {
        pthread_mutex_lock(&bq.lock);
        while (bq.head == bq.tail && !bq.done)
            pthread_cond_wait(&bq.cond, &bq.lock);
        if (bq.head == bq.tail) {
            pthread_mutex_unlock(&bq.lock);
            break;
        }
        struct job *j = bq.q[bq.head++ % QUEUE];
        pthread_cond_broadcast(&bq.cond);
        pthread_mutex_unlock(&bq.lock);
        struct ks_status st = {0};
        if (j->bind) {
            if (vb->pre_bind(self, &j->cs, j->pod, j->node, &st) != KS_SUCCESS)
                atomic_fetch_add(&prebind_failures, 1);
        } else {
            vb->unreserve(self, &j->cs, j->pod, j->node);
        }
        ks_arena_destroy(&j->cs.arena);
        ks_pod_put(j->pod);
        free(j);
    }
    ks_rcu_unregister_thread();
    return NULL;
}

/* A pod "p<i>" with claim "c<i>" (its claim in the buffer too, as the loader wants it). */
static struct ks_pod *make_pod(int i, struct ks_objects **keep)
{
    char yaml[1024];
    struct ks_error err = {0};
    snprintf(
        yaml, sizeof(yaml),
        "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c%d, namespace: default}\n"
        "spec: {storageClassName: wait-sc, accessModes: [ReadWriteOnce], resources: {requests: {storage: "
        "1Gi}}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p%d, namespace: default, uid: u%d}\n"
        "spec: {containers: [{name: c}], volumes: [{name: d, persistentVolumeClaim: {claimName: c%d}}]}\n",
        i, i, i, i);
    if (ks_objects_load_buffer("pod.yaml", yaml, strlen(yaml), keep, &err) < 0) {
        fprintf(stderr, "stress_live_objects: %s\n", err.msg);
        exit(1);
    }
    return ks_pod_get(ks_objects_pods(*keep)[0]);
}

/* PreFilter and Filter of @pod on @node: 0 when both succeed. Scheduling thread. */
static int run_cycle(struct ks_cache *cache, struct ks_cycle_state *cs, const struct ks_pod *pod,
                     uint32_t node)
{
    struct ks_pre_filter_result res = {.all = true};
    struct ks_status st = {0};
    ks_rcu_read_lock();
    int rc = vb->pre_filter(self, cs, pod, &res, &st);
    if (rc == KS_SUCCESS) {
        const struct ks_node_snap *n = ks_snapshot_find(ks_cache_snapshot(cache), node);
        rc = n ? vb->filter(self, cs, pod, n, &st) : KS_ERROR;
        if (rc == KS_SUCCESS && !res.all && (res.n != 1 || res.names[0] != node))
            rc = KS_UNSCHEDULABLE;
    }
    ks_rcu_read_unlock();
    if (rc != KS_SUCCESS)
        fprintf(stderr, "stress_live_objects: %s on %s: %s %s\n", pod->meta.name, ks_intern_str(node),
                ks_code_name((enum ks_code)rc), st.nreasons ? ks_intern_str(st.reasons[0]) : "");
    return rc == KS_SUCCESS ? 0 : -1;
}

int main(void)
{
    struct ks_objects *objs = NULL, *keep[PODS] = {0};
    struct ks_error err = {0};
    struct ks_cache *cache = NULL;
    struct ks_config *cfg = NULL;
    struct ks_framework *fw = NULL;
    char yaml[2048];
    int off = 0, failed = 0;

    if (ks_api_init() < 0)
        return 1;
    ks_rcu_register_thread();
    off += snprintf(yaml + off, sizeof(yaml) - off, "%s", WAIT_SC);
    for (int n = 0; n < NODES; n++)
        off += snprintf(yaml + off, sizeof(yaml) - off,
                        "---\napiVersion: v1\nkind: Node\nmetadata: {name: n%d, labels: "
                        "{kubernetes.io/hostname: n%d}}\nstatus: {allocatable: {cpu: '4', pods: '110'}}\n",
                        n, n);
    if (ks_objects_load_buffer("cluster.yaml", yaml, strlen(yaml), &objs, &err) < 0 ||
        ks_cache_create(&cache) < 0 || ks_config_load_default(&cfg) < 0) {
        fprintf(stderr, "stress_live_objects: setup: %s\n", err.msg);
        return 1;
    }
    struct ks_framework_deps deps = {.cache = cache, .objects = objs};
    if (ks_framework_create(&cfg->profiles[0], &deps, &fw, &err) < 0)
        return 1;
    for (uint32_t i = 0; i < ks_objects_count(objs, NODE); i++)
        ks_cache_add_node(cache, ks_objects_nodes(objs)[i]);
    objs->of[KS_KIND_NODE].n = 0; /* the cache owns them */
    ks_cache_refresh(cache);
    struct ks_plugin_init in = {.slot = 0, .framework = fw};
    if (vb->init(&in, &self, &err) < 0)
        return 1;

    pthread_t bt;
    pthread_create(&bt, NULL, binder, NULL);
    for (int i = 0; i < PODS; i++) {
        uint32_t node = node_id(i % NODES);
        /* the claim and its local PV arrive (a rebuild at the next PreFilter) */
        snprintf(
            yaml, sizeof(yaml),
            "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c%d, namespace: default}\n"
            "spec: {storageClassName: wait-sc, accessModes: [ReadWriteOnce], resources: {requests: "
            "{storage: 1Gi}}}\n---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: v%d}\n"
            "spec: {storageClassName: wait-sc, capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], "
            "nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: "
            "kubernetes.io/hostname, operator: In, values: [n%d]}]}]}}}\nstatus: {phase: Available}\n",
            i, i, i % NODES);
        if (ks_live_add(objs, yaml) < 0) {
            fprintf(stderr, "stress_live_objects: add c%d\n", i);
            return 1;
        }
        struct job *j = calloc(1, sizeof(*j));
        struct ks_status st = {0};
        j->pod = make_pod(i, &keep[i]);
        j->node = node;
        j->bind = i % 5 != 4;
        if (run_cycle(cache, &j->cs, j->pod, node) < 0 ||
            vb->reserve(self, &j->cs, j->pod, node, &st) != KS_SUCCESS) {
            failed++;
            ks_arena_destroy(&j->cs.arena);
            ks_pod_put(j->pod);
            free(j);
            continue;
        }
        push(j);
        if (i >= 8 && (i - 8) % 5 != 4) {
            /* an earlier claim the binder bound by now or soon: a second pod of it must
             * follow its PV's node once bound; until then it is still assumed (Success too) */
            struct ks_cycle_state cs = {0};
            struct ks_objects *k2 = NULL;
            struct ks_pod *again = make_pod(i - 8, &k2);
            failed += run_cycle(cache, &cs, again, node_id((i - 8) % NODES)) < 0;
            ks_arena_destroy(&cs.arena);
            ks_pod_put(again);
            ks_objects_destroy(k2);
        }
    }
    pthread_mutex_lock(&bq.lock);
    bq.done = true;
    pthread_cond_broadcast(&bq.cond);
    pthread_mutex_unlock(&bq.lock);
    pthread_join(bt, NULL);

    vb->destroy(self);
    ks_framework_destroy(fw);
    ks_cache_destroy(cache);
    for (int i = 0; i < PODS; i++)
        ks_objects_destroy(keep[i]);
    ks_objects_destroy(objs);
    ks_config_destroy(cfg);
    ks_rcu_unregister_thread();
    unsigned pf = atomic_load(&prebind_failures);
    printf("stress_live_objects: %d pods, %d cycle failures, %u PreBind failures\n", PODS, failed, pf);
    return failed || pf ? 1 : 0;
}
