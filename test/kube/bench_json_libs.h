/* bench_json_libs.h - shared parts of the JSON library comparison (see bench_json_libs.c). */
#ifndef KS_BENCH_JSON_LIBS_H
#define KS_BENCH_JSON_LIBS_H

#include "ksched/yaml_tree.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

double ks_bench_now_ms(void);
/* ks_bench_decode_items - ks_decode_node() every item of a NodeList tree; exits on failure. */
int ks_bench_decode_items(const struct ks_yaml_node *root);
/*
 * Text to tree (and decode when @decode), in ms. json-c and jansson export clashing
 * symbols (json_object_iter_next), so each binary links one of them: weak, NULL when absent.
 */
double ks_bench_run_jsonc(const char *p, size_t len, int decode) __attribute__((weak));
double ks_bench_run_jansson(const char *p, size_t len, int decode) __attribute__((weak));

/* ---- DOM to tree: the work json-c and jansson add on top of their own parse ---- */

static inline struct ks_yaml_node *tree_node(struct ks_arena *a, enum ks_yaml_kind kind)
{
    struct ks_yaml_node *n = ks_arena_alloc(a, sizeof(*n));
    if (!n)
        abort();
    n->kind = kind;
    n->line = 1;
    return n;
}

static inline struct ks_yaml_node *tree_scalar(struct ks_arena *a, const char *s, size_t len, int plain)
{
    struct ks_yaml_node *n = tree_node(a, KS_YAML_SCALAR);
    n->str = ks_arena_strndup(a, s, len);
    n->len = len;
    n->plain = plain;
    return n;
}

/* ---- a realistic NodeList ---- */

struct buf {
    char *p;
    size_t len, cap;
};

static inline __attribute__((format(printf, 2, 3))) void put(struct buf *b, const char *fmt, ...)
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
static inline void gen_node(struct buf *b, int i)
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

static inline struct buf gen_list(int n)
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

#endif
