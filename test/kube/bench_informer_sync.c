/*
 * bench_informer_sync.c - the whole informer path at scale: N realistic Nodes served by
 * the scripted HTTP server as LIST pages of 500 (continue tokens), received by libcurl,
 * parsed by kube/json_tree.c, decoded by ks_decode_node and delivered; prints the time to
 * on_synced. Not part of the build (docs/kube-client.md has the figures):
 *
 *   cc -O2 -D_GNU_SOURCE -Iinclude test/kube/bench_informer_sync.c build-kube/libksched_core.a \
 *      $(pkg-config --cflags --libs yajl yaml-0.1 libcurl liburcu-memb liburcu-cds ck) -lpthread -lm \
 *      -o build-kube/bench_informer_sync && build-kube/bench_informer_sync [nodes]
 */
#include "bench_json_libs.h"
#include "http_script.c"

#include "ksched/api.h"
#include "ksched/kube.h"

#include <stdatomic.h>

double ks_bench_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct sink {
    long nodes;
    atomic_bool synced;
};

static void on_event(void *ctx, const struct ks_watch_event *ev)
{
    struct sink *s = ctx;
    s->nodes++;
    ks_node_destroy(ev->obj);
}

static void on_synced(void *ctx)
{
    atomic_store(&((struct sink *)ctx)->synced, true);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 50000, per = 500, pages = (n + per - 1) / per;
    struct ks_script_step *steps = calloc((size_t)pages + 1, sizeof(*steps));
    char **paths = calloc((size_t)pages, sizeof(*paths));
    size_t bytes = 0;

    for (int p = 0; p < pages; p++) {
        struct buf b = {0};
        put(&b, "{\"kind\":\"NodeList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"99999\"");
        if (p + 1 < pages)
            put(&b, ",\"continue\":\"t%05d\"", p + 1);
        put(&b, "},\"items\":[");
        for (int i = p * per; i < (p + 1) * per && i < n; i++) {
            if (i > p * per)
                put(&b, ",");
            gen_node(&b, i);
        }
        put(&b, "]}");
        bytes += b.len;
        if (asprintf(&paths[p], p ? "/api/v1/nodes?limit=500&continue=t%05d" : "/api/v1/nodes?limit=500", p) <
            0)
            return 1;
        steps[p] = (struct ks_script_step){.path = paths[p], .status = 200, .body = b.p};
    }
    steps[pages] = (struct ks_script_step){
        .path = "/api/v1/nodes?watch=1", .status = 200, .chunks = {"\n"}, .hold = true};
    struct ks_script_server *srv = ks_script_start(steps, pages + 1);
    struct ks_kubeconfig kc = {.server = (char *)ks_script_url(srv)};
    struct ks_kube_client_opts co = {.config = &kc};
    struct ks_kube_client *c;
    struct ks_error err = {0};
    struct sink sink = {0};
    if (ks_api_init() || ks_kube_client_create(&co, &c, &err))
        return 1;
    struct ks_informer_opts o = {
        .client = c, .kinds = 1u << KS_KIND_NODE, .on_event = on_event, .on_synced = on_synced, .ctx = &sink};
    struct ks_informers *inf;
    struct timespec c0, c1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    double t0 = ks_bench_now_ms();
    if (ks_informers_start(&o, &inf, &err))
        return 1;
    while (!atomic_load(&sink.synced))
        usleep(1000);
    double ms = ks_bench_now_ms() - t0;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    double cpu_ms = (c1.tv_sec - c0.tv_sec) * 1e3 + (c1.tv_nsec - c0.tv_nsec) / 1e6;
    ks_informers_stop(inf);
    /* CPU: every thread of the process (informer, curl, the test server) from start to synced */
    printf("%ld nodes in %d pages (%.1f MB): synced in %.0f ms wall, %.0f ms CPU (%.1f MB/s, %.1f us/node of "
           "CPU)\n",
           sink.nodes, pages, bytes / 1e6, ms, cpu_ms, bytes / 1e3 / cpu_ms,
           cpu_ms * 1e3 / (double)sink.nodes);
    ks_kube_client_destroy(c);
    ks_script_stop(srv);
    for (int p = 0; p < pages; p++) {
        free((char *)steps[p].body);
        free(paths[p]);
    }
    free(steps);
    free(paths);
    return sink.nodes == n ? 0 : 1;
}
