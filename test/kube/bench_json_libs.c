/*
 * bench_json_libs.c - which JSON library should feed the decoders: parse + decode of a
 * 50,000-Node NodeList (realistic ~2.5 KB Node objects) through each candidate.
 *
 *   yajl    : SAX events build the ks_yaml_node tree directly (kube/json_tree.c, shipped)
 *   json-c  : json_tokener DOM, then walked into a ks_yaml_node tree
 *   jansson : json_loadb DOM, then walked into a ks_yaml_node tree
 *
 * Every candidate ends in the same tree and the same ks_decode_node() calls, so the
 * figures compare what the informer would pay per byte. Not part of the build (it needs
 * json-c and jansson, which ksched does not link); docs/kube-client.md has the command:
 *
 *   for lib in jsonc:json-c jansson:jansson; do
 *     cc -O2 -D_GNU_SOURCE -Iinclude test/kube/bench_json_libs.c test/kube/bench_json_${lib%%:*}.c \
 *        build-kube/libksched_core.a $(pkg-config --cflags --libs ${lib#*:} yajl yaml-0.1 libcurl \
 *        liburcu-memb liburcu-cds ck) -lpthread -lm -o build-kube/bench_json_${lib%%:*}
 *   done
 *   for i in 1 2 3; do build-kube/bench_json_jsonc; build-kube/bench_json_jansson; done
 *
 * (json-c and jansson export clashing symbols, so each binary holds yajl and one of them.)
 */
#include "ksched/api.h"
#include "ksched/decode.h"
#include "ksched/json_tree.h"

#include "bench_json_libs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double ks_bench_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct buf {
    char *p;
    size_t len, cap;
};

static void put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct buf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        b->cap = b->cap ? b->cap * 2 : 1 << 20;
        b->p = realloc(b->p, b->cap);
        if (!b->p)
            abort();
    }
}

/* One Node as kubelet reports it on a cloud VM: labels, annotations, capacity, conditions, images. */
static void gen_node(struct buf *b, int i)
{
    static const char *const conds[][3] = {
        {"MemoryPressure", "False", "KubeletHasSufficientMemory"},
        {"DiskPressure", "False", "KubeletHasNoDiskPressure"},
        {"PIDPressure", "False", "KubeletHasSufficientPID"},
        {"Ready", "True", "KubeletReady"},
    };
    put(b,
        "{\"metadata\":{\"name\":\"node-%05d\",\"uid\":\"6f1c%04x-2b7e-4c1a-9d3e-%012x\","
        "\"resourceVersion\":\"%d\",\"creationTimestamp\":\"2026-11-30T10:%02d:%02dZ\","
        "\"labels\":{\"beta.kubernetes.io/arch\":\"amd64\",\"beta.kubernetes.io/os\":\"linux\","
        "\"kubernetes.io/arch\":\"amd64\",\"kubernetes.io/hostname\":\"node-%05d\",\"kubernetes.io/"
        "os\":\"linux\","
        "\"node.kubernetes.io/instance-type\":\"m5.2xlarge\",\"topology.kubernetes.io/region\":\"eu-west-1\","
        "\"topology.kubernetes.io/zone\":\"eu-west-1%c\",\"pool\":\"pool-%d\"},"
        "\"annotations\":{\"node.alpha.kubernetes.io/ttl\":\"0\","
        "\"volumes.kubernetes.io/controller-managed-attach-detach\":\"true\","
        "\"csi.volume.kubernetes.io/nodeid\":\"{\\\"ebs.csi.aws.com\\\":\\\"i-0%015x\\\"}\"},"
        "\"managedFields\":[{\"manager\":\"kubelet\",\"operation\":\"Update\",\"apiVersion\":\"v1\","
        "\"time\":\"2026-11-30T10:00:00Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:status\":{\"f:"
        "conditions\":{}}}}]},"
        "\"spec\":{\"podCIDR\":\"10.%d.%d.0/24\",\"podCIDRs\":[\"10.%d.%d.0/24\"],"
        "\"providerID\":\"aws:///eu-west-1a/i-0%015x\"%s},",
        i, i & 0xffff, i, 1000 + i, (i / 60) % 60, i % 60, i, 'a' + i % 3, i % 8, i, (i >> 8) & 255, i & 255,
        (i >> 8) & 255, i & 255, i,
        i % 50 == 0 ? ",\"taints\":[{\"key\":\"dedicated\",\"value\":\"gpu\",\"effect\":\"NoSchedule\"}]"
                    : "");
    put(b, "\"status\":{\"capacity\":{\"cpu\":\"8\",\"ephemeral-storage\":\"104845292Ki\",\"hugepages-1Gi\":"
           "\"0\","
           "\"hugepages-2Mi\":\"0\",\"memory\":\"32386544Ki\",\"pods\":\"110\"},"
           "\"allocatable\":{\"cpu\":\"7910m\",\"ephemeral-storage\":\"95551679124\",\"hugepages-1Gi\":\"0\","
           "\"hugepages-2Mi\":\"0\",\"memory\":\"31369712Ki\",\"pods\":\"110\"},\"conditions\":[");
    for (size_t c = 0; c < sizeof(conds) / sizeof(conds[0]); c++)
        put(b,
            "%s{\"type\":\"%s\",\"status\":\"%s\",\"lastHeartbeatTime\":\"2026-12-01T03:10:00Z\","
            "\"lastTransitionTime\":\"2026-11-30T10:00:00Z\",\"reason\":\"%s\",\"message\":\"kubelet is "
            "posting ready status\"}",
            c ? "," : "", conds[c][0], conds[c][1], conds[c][2]);
    put(b,
        "],\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"10.%d.%d.%d\"},{\"type\":\"Hostname\","
        "\"address\":\"node-%05d\"}],\"daemonEndpoints\":{\"kubeletEndpoint\":{\"Port\":10250}},"
        "\"nodeInfo\":{\"machineID\":\"ec2%029x\",\"systemUUID\":\"ec2%029x\",\"bootID\":\"%032x\","
        "\"kernelVersion\":\"5.10.0-26-cloud-amd64\",\"osImage\":\"Debian GNU/Linux 12 (bookworm)\","
        "\"containerRuntimeVersion\":\"containerd://1.6.20\",\"kubeletVersion\":\"v1.22.17\","
        "\"kubeProxyVersion\":\"v1.22.17\",\"operatingSystem\":\"linux\",\"architecture\":\"amd64\"},"
        "\"images\":[",
        (i >> 16) & 255, (i >> 8) & 255, i & 255, i, i, i, i);
    for (int k = 0; k < 3; k++)
        put(b,
            "%s{\"names\":[\"registry.k8s.io/app-%d@sha256:%064x\",\"registry.k8s.io/app-%d:v1.%d\"],"
            "\"sizeBytes\":%d}",
            k ? "," : "", k, k * 7919 + 1, k, k, 10000000 + k * 1234567);
    put(b, "]}}");
}

static struct buf gen_list(int n)
{
    struct buf b = {0};
    put(&b, "{\"kind\":\"NodeList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"99999\"},"
            "\"items\":[");
    for (int i = 0; i < n; i++) {
        if (i)
            put(&b, ",");
        gen_node(&b, i);
    }
    put(&b, "]}\n");
    return b;
}

/* ---- the candidates: text to tree, then decode every item ---- */

int ks_bench_decode_items(const struct ks_yaml_node *root)
{
    const struct ks_yaml_node *items = ks_yaml_get(root, "items");
    int n = 0;
    for (uint32_t i = 0; items && i < items->n; i++) {
        struct ks_node *node;
        struct ks_error err = {0};
        if (ks_decode_node("bench", items->items[i], &node, &err)) {
            char msg[1024];
            ks_error_format(&err, msg, sizeof(msg));
            fprintf(stderr, "decode: %s\n", msg);
            exit(1);
        }
        ks_node_destroy(node);
        n++;
    }
    return n;
}

static double run_yajl(const char *p, size_t len, int decode)
{
    double t0 = ks_bench_now_ms();
    struct ks_yaml_stream *s;
    struct ks_error err = {0};
    if (ks_json_parse("bench", p, len, &s, &err))
        abort();
    if (decode)
        ks_bench_decode_items(s->docs[0]);
    ks_yaml_stream_destroy(s);
    return ks_bench_now_ms() - t0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int nodes = argc > 1 ? atoi(argv[1]) : 50000;
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    struct buf b = gen_list(nodes);
    static const struct {
        const char *name;
        double (*run)(const char *, size_t, int);
    } libs[] = {{"yajl (SAX -> tree)", run_yajl},
                {"json-c (DOM -> tree)", ks_bench_run_jsonc},
                {"jansson (DOM -> tree)", ks_bench_run_jansson}};
    enum { NLIBS = sizeof(libs) / sizeof(libs[0]) };
    double *t[NLIBS][2];

    printf("%d nodes, %.1f MB of JSON (%.0f bytes/node), median of %d interleaved rounds\n", nodes,
           b.len / 1e6, (double)b.len / nodes, rounds);
    for (int l = 0; l < NLIBS; l++)
        for (int d = 0; d < 2; d++)
            t[l][d] = calloc((size_t)rounds, sizeof(double));
    for (int r = 0; r < rounds; r++)
        for (int l = 0; l < NLIBS; l++)
            for (int d = 0; d < 2 && libs[l].run; d++)
                t[l][d][r] = libs[l].run(b.p, b.len, d);
    printf("%-24s %12s %10s %16s %10s\n", "library", "to tree ms", "MB/s", "tree+decode ms", "MB/s");
    for (int l = 0; l < NLIBS; l++) {
        double med[2];
        if (!libs[l].run)
            continue;
        for (int d = 0; d < 2; d++) {
            qsort(t[l][d], (size_t)rounds, sizeof(double), cmp_double);
            med[d] = t[l][d][rounds / 2];
        }
        printf("%-24s %12.0f %10.1f %16.0f %10.1f\n", libs[l].name, med[0], b.len / 1e3 / med[0], med[1],
               b.len / 1e3 / med[1]);
    }
    free(b.p);
    return 0;
}
