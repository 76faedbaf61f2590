/*
 * stress_serve.c - `ksched serve`'s threads at once, under ThreadSanitizer: the intake
 * thread applies a random stream of informer events (pods added, updated, bound by
 * someone else, deleted with and without their object; nodes updated; PVCs and
 * Services changed) while the scheduling thread runs cycles whose on_cycle hook applies
 * the queued object changes and times the attempt, binder threads POST Bindings to a fake
 * server that refuses one in eight with 409, the writer thread sends status patches,
 * Events and evictions, and a scraper thread renders /metrics (the engine's families too,
 * every cycle timing its plugins, so the workers', binders' and scraper's accesses meet).
 *
 * Checked: no data race or crash (TSan), every object change the intake queued was applied
 * by the end, the cache never holds more pods than the intake knows, and the writer sent
 * every request it queued (the fake server fails none but the 409 bindings).
 */
#include "serve.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/internal/config.h"
#include "ksched/internal/decode.h"
#include "ksched/yaml_tree.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef KS_TSAN
enum { EVENTS = 3000 };
#else
enum { EVENTS = 20000 };
#endif
enum { NODES = 16, PODS = 200 };

static struct ks_intake *intake;
static struct ks_scheduler *sched;
static struct ks_writer *writer;
static struct ks_serve_metrics *smetrics;
static struct ks_metrics *registry;
static atomic_bool done;
static atomic_uint failures;
static atomic_uint bindings, conflicts;

static void fail(const char *what)
{
    if (atomic_fetch_add(&failures, 1) < 10)
        fprintf(stderr, "stress_serve: %s\n", what);
}

static void *decode(const char *yaml, enum ks_kind kind)
{
    struct ks_yaml_stream *st;
    struct ks_error err = {0};
    void *obj = NULL;
    if (ks_yaml_parse("s.yaml", yaml, strlen(yaml), &st, &err) < 0) {
        fail(err.msg);
        return NULL;
    }
    int rc = kind == KS_KIND_POD    ? ks_decode_pod("s.yaml", st->docs[0], (struct ks_pod **)&obj, &err)
             : kind == KS_KIND_NODE ? ks_decode_node("s.yaml", st->docs[0], (struct ks_node **)&obj, &err)
             : kind == KS_KIND_PVC
                 ? ks_decode_pvc("s.yaml", st->docs[0], (struct ks_persistent_volume_claim **)&obj, &err)
                 : ks_decode_service("s.yaml", st->docs[0], (struct ks_service **)&obj, &err);
    ks_yaml_stream_destroy(st);
    if (rc < 0)
        fail(err.msg);
    return obj;
}

static void *node(int i, int cpu)
{
    char y[300];
    snprintf(y, sizeof(y),
             "apiVersion: v1\nkind: Node\nmetadata: {name: n%d, labels: {zone: z%d}}\n"
             "status: {allocatable: {cpu: '%d', memory: 64Gi, pods: '110'}}\n",
             i, i % 3, cpu);
    return decode(y, KS_KIND_NODE);
}

static void *pod(int i, int version, int bound_to)
{
    char y[600], nn[32] = "";
    if (bound_to >= 0)
        snprintf(nn, sizeof(nn), "n%d", bound_to);
    snprintf(y, sizeof(y),
             "apiVersion: v1\nkind: Pod\nmetadata: {name: p%d, namespace: s, uid: u%d, labels: {v: 'x%d', "
             "app: a}}\n"
             "spec: {nodeName: '%s', priority: %d, containers: [{name: c, image: i, resources: {requests: "
             "{cpu: %dm}}}]}\n",
             i, i, version, nn, i % 3, 100 + 50 * (i % 7));
    return decode(y, KS_KIND_POD);
}

static void send(enum ks_watch_type type, enum ks_kind kind, const char *ns, const char *name, void *obj)
{
    struct ks_watch_event ev = {.type = type, .kind = kind, .namespace_ = ns, .name = name, .obj = obj};
    ks_intake_apply(intake, &ev);
}

/* The fake API server: one Binding in eight is refused as another scheduler's; everything else succeeds. */
static int fake_request(void *ctx, const char *method, const char *path, const char *ct, const char *body,
                        size_t len, struct ks_kube_response *resp)
{
    (void)ctx, (void)ct, (void)body, (void)len;
    memset(resp, 0, sizeof(*resp));
    if (strstr(path, "/binding")) {
        unsigned n = atomic_fetch_add(&bindings, 1);
        resp->status = n % 8 == 7 ? 409 : 201;
        if (resp->status == 409)
            atomic_fetch_add(&conflicts, 1);
    } else {
        resp->status = strcmp(method, "POST") == 0 ? 201 : 200;
    }
    resp->body = strdup("{}");
    resp->len = 2;
    return 0;
}

static void on_event(void *ctx, const struct ks_sched_event *ev)
{
    (void)ctx;
    ks_serve_metrics_event(smetrics, ev, 1);
    ks_writer_on_sched_event(writer, ev);
}

static void on_cycle(void *ctx, const struct ks_queued_pod *qp)
{
    (void)ctx;
    ks_intake_apply_objects(intake);
    ks_serve_metrics_cycle(smetrics, qp, 0);
}

static void *intake_main(void *arg)
{
    (void)arg;
    unsigned seed = 12345;
    int version[PODS] = {0};
    bool present[PODS] = {false};
    char name[32];
    ks_rcu_register_thread();
    for (int e = 0; e < EVENTS; e++) {
        int r = (int)(rand_r(&seed) % 100), i = (int)(rand_r(&seed) % PODS);
        snprintf(name, sizeof(name), "p%d", i);
        if (r < 40) {
            send(present[i] ? KS_WATCH_MODIFIED : KS_WATCH_ADDED, KS_KIND_POD, "s", name,
                 pod(i, ++version[i], -1));
            present[i] = true;
        } else if (r < 55) {
            send(KS_WATCH_MODIFIED, KS_KIND_POD, "s", name, pod(i, ++version[i], i % NODES));
            present[i] = true;
        } else if (r < 70) {
            send(KS_WATCH_DELETED, KS_KIND_POD, "s", name, r < 62 ? NULL : pod(i, version[i], -1));
            present[i] = false;
        } else if (r < 80) {
            int n = i % NODES;
            snprintf(name, sizeof(name), "n%d", n);
            send(KS_WATCH_MODIFIED, KS_KIND_NODE, "", name, node(n, 8 + (r % 3) * 8));
        } else if (r < 92) {
            char y[300];
            snprintf(name, sizeof(name), "c%d", i % 10);
            snprintf(y, sizeof(y),
                     "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: %s, namespace: s}\n"
                     "spec: {volumeName: 'v%d', accessModes: [ReadWriteOnce]}\n",
                     name, e);
            send(r < 88 ? KS_WATCH_MODIFIED : KS_WATCH_DELETED, KS_KIND_PVC, "s", name,
                 decode(y, KS_KIND_PVC));
        } else {
            char y[300];
            snprintf(name, sizeof(name), "svc%d", i % 4);
            snprintf(y, sizeof(y),
                     "apiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: s}\n"
                     "spec: {selector: {app: a, v: 'x%d'}}\n",
                     name, e % 5);
            send(r < 97 ? KS_WATCH_MODIFIED : KS_WATCH_DELETED, KS_KIND_SERVICE, "s", name,
                 decode(y, KS_KIND_SERVICE));
        }
    }
    ks_rcu_unregister_thread();
    return NULL;
}

static void *sched_main(void *arg)
{
    (void)arg;
    ks_rcu_register_thread();
    while (!atomic_load(&done)) {
        if (!ks_scheduler_schedule_one(sched, false))
            usleep(200);
    }
    ks_rcu_unregister_thread();
    return NULL;
}

static void *scrape_main(void *arg)
{
    (void)arg;
    FILE *null = fopen("/dev/null", "w");
    while (!atomic_load(&done)) {
        if (ks_metrics_write(registry, null) < 0)
            fail("scrape failed");
        usleep(1000);
    }
    fclose(null);
    return NULL;
}

int main(void)
{
    struct ks_config *cfg;
    struct ks_error err = {0};
    struct ks_cache *cache;
    struct ks_objects *objects = calloc(1, sizeof(*objects));
    pthread_t it, st, sc;

    if (ks_api_init() < 0 || ks_config_load_default(&cfg) < 0 || !objects)
        return 1;
    ks_rcu_register_thread();
    struct ks_writer_opts wo = {.transport = {.request = fake_request}};
    if (ks_intake_create(objects, &intake) < 0 || ks_writer_create(&wo, &writer) < 0 ||
        ks_metrics_create(&registry) < 0 || ks_serve_metrics_create(registry, cfg, &smetrics) < 0 ||
        ks_cache_create(&cache) < 0)
        return 1;
    char name[16];
    for (int i = 0; i < NODES; i++) {
        snprintf(name, sizeof(name), "n%d", i);
        send(KS_WATCH_ADDED, KS_KIND_NODE, "", name, node(i, 8));
    }
    struct ks_scheduler_opts opts = {
        .config = cfg,
        .objects = objects,
        .seeded = true,
        .on_event = on_event,
        .on_cycle = on_cycle,
        .flusher = true,
        .binder = ks_writer_binder(writer),
        .evictor = ks_writer_evictor(writer),
        .metrics = ks_serve_metrics_engine(smetrics),
    };
    /* every cycle times its plugins: the scraper reads what the workers and binders record */
    ks_sched_metrics_sample_percent(opts.metrics, 100);
    if (ks_scheduler_create(&opts, cache, &sched, &err) < 0 || ks_intake_go_live(intake, sched, cache) < 0) {
        fprintf(stderr, "stress_serve: %s\n", err.msg);
        return 1;
    }
    ks_serve_metrics_attach(smetrics, sched);
    pthread_create(&st, NULL, sched_main, NULL);
    pthread_create(&sc, NULL, scrape_main, NULL);
    pthread_create(&it, NULL, intake_main, NULL);
    pthread_join(it, NULL);
    usleep(200000); /* let the last pods go through */
    atomic_store(&done, true);
    pthread_join(st, NULL);
    pthread_join(sc, NULL);

    ks_intake_apply_objects(intake); /* the scheduling thread has stopped: this thread may */
    struct ks_intake_stats is;
    ks_intake_stats(intake, &is);
    if (is.queued_objects)
        fail("object changes left unapplied");
    uint32_t cn, cp;
    ks_cache_counts(cache, &cn, &cp);
    if (cn != NODES)
        fail("nodes lost");
    if (cp > is.pods)
        fail("the cache holds more pods than the informer knows");
    ks_serve_metrics_attach(smetrics, NULL);
    ks_scheduler_destroy(sched);
    ks_writer_flush(writer);
    struct ks_writer_stats ws;
    ks_writer_stats(writer, &ws);
    if (ws.failed || ws.dropped)
        fail("writes failed or were dropped");
    ks_writer_destroy(writer, 1000);
    ks_cache_destroy(cache);
    ks_intake_destroy(intake);
    ks_objects_destroy(objects);
    ks_serve_metrics_destroy(smetrics);
    ks_metrics_destroy(registry);
    ks_config_destroy(cfg);
    ks_rcu_unregister_thread();
    printf("stress_serve: %d events, %u bindings (%u refused), %llu writes, %u pods and %u nodes cached\n",
           EVENTS, atomic_load(&bindings), atomic_load(&conflicts), (unsigned long long)ws.sent, cp, cn);
    return atomic_load(&failures) ? 1 : 0;
}
