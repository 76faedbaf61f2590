// bench_fixture.cc - the shared cluster of the plugin and engine micro-benchmarks (see
// bench_fixture.h). Built once per size and never freed: the process ends with the run.
#include "bench_fixture.h"

extern "C" {
#include "ksched/base/intern.h"
#include "ksched/internal/decode.h"
#include "ksched/yaml_tree.h"
}

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

namespace ksbench
{
namespace
{

[[noreturn]] void die(const char *what, const ks_error *err)
{
    char msg[1400] = "";
    if (err && err->set)
        ks_error_format(err, msg, sizeof(msg));
    std::fprintf(stderr, "bench fixture: %s %s\n", what, msg);
    std::abort();
}

template <typename T> T *must(T *p)
{
    if (!p)
        die("out of memory", nullptr);
    return p;
}

uint32_t id(const char *s)
{
    uint32_t v = ks_intern(s);
    if (v == KS_ID_NONE)
        die("out of memory", nullptr);
    return v;
}

ks_node *make_node(uint32_t i)
{
    char name[32], zone[16];
    std::snprintf(name, sizeof(name), "node-%u", i);
    std::snprintf(zone, sizeof(zone), "zone-%u", i % 10);
    auto *n = must(static_cast<ks_node *>(std::calloc(1, sizeof(ks_node))));
    n->meta.name = must(ks_arena_strdup(&n->arena, name));
    n->meta.creation_time = n->meta.deletion_time = KS_TIME_NONE;
    n->name_id = id(name);
    auto *labels = must(static_cast<ks_label *>(ks_arena_calloc(&n->arena, 2, sizeof(ks_label))));
    labels[0] = ks_label{ks_wk.hostname_label, n->name_id};
    labels[1] = ks_label{ks_wk.zone_label, id(zone)};
    std::sort(labels, labels + 2, [](const ks_label &a, const ks_label &b) { return a.key < b.key; });
    n->meta.labels = ks_labels{2, labels};
    auto *alloc =
        must(static_cast<ks_resource_item *>(ks_arena_calloc(&n->arena, 3, sizeof(ks_resource_item))));
    alloc[0] = ks_resource_item{ks_wk.cpu, 32000};
    alloc[1] = ks_resource_item{ks_wk.memory, 256LL << 30};
    alloc[2] = ks_resource_item{ks_wk.pods, 110};
    std::sort(alloc, alloc + 3,
              [](const ks_resource_item &a, const ks_resource_item &b) { return a.name < b.name; });
    n->allocatable = n->capacity = ks_resource_list{3, alloc};
    if (i % 10 == 0) {
        auto *t = must(static_cast<ks_taint *>(ks_arena_calloc(&n->arena, 1, sizeof(ks_taint))));
        *t = ks_taint{id("dedicated"), id("infra"), KS_EFFECT_PREFER_NO_SCHEDULE};
        n->taints = t;
        n->ntaints = 1;
    }
    auto *images =
        must(static_cast<ks_container_image *>(ks_arena_calloc(&n->arena, 2, sizeof(ks_container_image))));
    auto *names = must(static_cast<uint32_t *>(ks_arena_calloc(&n->arena, 2, sizeof(uint32_t))));
    names[0] = id("registry.k8s.io/pause:3.10");
    names[1] = id(i % 2 ? "registry.example/web:1" : "registry.example/db:2");
    images[0] = ks_container_image{1, &names[0], 700 * 1024};
    images[1] = ks_container_image{1, &names[1], 300LL << 20};
    n->images = images;
    n->nimages = 2;
    if (ks_node_finish(n))
        die("ks_node_finish", nullptr);
    return n;
}

const char *const kRichPod = R"(apiVersion: v1
kind: Pod
metadata:
  name: rich
  namespace: default
  labels: {app: web-1}
spec:
  tolerations:
  - {key: dedicated, operator: Equal, value: infra, effect: PreferNoSchedule}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - key: topology.kubernetes.io/zone
            operator: In
            values: [zone-0, zone-1, zone-2, zone-3, zone-4, zone-5, zone-6, zone-7, zone-8, zone-9]
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 10
        preference:
          matchExpressions:
          - {key: topology.kubernetes.io/zone, operator: In, values: [zone-1]}
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: web-1}}
        topologyKey: kubernetes.io/hostname
    podAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 5
        podAffinityTerm:
          labelSelector: {matchLabels: {app: web-2}}
          topologyKey: topology.kubernetes.io/zone
  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector: {matchLabels: {app: web-1}}
  - maxSkew: 1
    topologyKey: kubernetes.io/hostname
    whenUnsatisfiable: ScheduleAnyway
    labelSelector: {matchLabels: {app: web-1}}
  containers:
  - name: web
    image: registry.example/web:1
    ports: [{containerPort: 8080, hostPort: 8080}]
    resources: {requests: {cpu: 500m, memory: 1Gi}}
)";

const char *const kBasicPod = R"(apiVersion: v1
kind: Pod
metadata: {name: basic, namespace: sched-test}
spec:
  containers:
  - name: pause
    image: registry.k8s.io/pause:3.10
    ports: [{containerPort: 80}]
    resources:
      limits: {cpu: 100m, memory: 100Mi}
      requests: {cpu: 100m, memory: 100Mi}
)";

} // namespace

ks_pod *decode_pod(const char *yaml)
{
    ks_error err{};
    ks_yaml_stream *s = nullptr;
    ks_pod *pod = nullptr;
    if (ks_yaml_parse("fixture", yaml, std::strlen(yaml), &s, &err) || s->ndocs != 1 ||
        ks_decode_pod("fixture", s->docs[0], &pod, &err))
        die("decoding a pod:", &err);
    ks_yaml_stream_destroy(s);
    return pod;
}

Cluster &cluster(uint32_t nodes)
{
    rcu_thread();
    static std::map<uint32_t, Cluster> clusters;
    auto it = clusters.find(nodes);
    if (it != clusters.end())
        return it->second;
    if (ks_api_init())
        die("ks_api_init", nullptr);
    Cluster &c = clusters[nodes];
    c.nnodes = nodes;
    ks_error err{};
    if (ks_config_load_default(&c.config) || ks_cache_create(&c.cache))
        die("config or cache", nullptr);
    for (uint32_t i = 0; i < nodes; i++) {
        if (ks_cache_add_node(c.cache, make_node(i)))
            die("adding a node", nullptr);
    }
    // two existing pods per node, labelled app=web-<k> (50 apps)
    char yaml[512], node[32];
    for (uint32_t i = 0; i < 2 * nodes; i++) {
        std::snprintf(yaml, sizeof(yaml),
                      "apiVersion: v1\nkind: Pod\nmetadata: {name: existing-%u, namespace: default, labels: "
                      "{app: web-%u}}\nspec:\n  containers:\n  - name: c\n    image: registry.example/web:1\n"
                      "    resources: {requests: {cpu: 250m, memory: 512Mi}}\n",
                      i, i % 50);
        std::snprintf(node, sizeof(node), "node-%u", i % nodes);
        if (ks_cache_add_pod(c.cache, decode_pod(yaml), ks_intern(node)))
            die("adding a pod", nullptr);
    }
    if (ks_cache_refresh(c.cache) < 0)
        die("refresh", nullptr);
    struct ks_framework_deps deps {
    };
    deps.cache = c.cache;
    if (ks_framework_create(&c.config->profiles[0], &deps, &c.fw, &err))
        die("framework:", &err);
    c.basic = decode_pod(kBasicPod);
    c.rich = decode_pod(kRichPod);
    return c;
}

std::vector<const ks_node_snap *> snapshot_nodes(Cluster &c)
{
    const ks_snapshot *s = ks_cache_snapshot(c.cache);
    std::vector<const ks_node_snap *> v(s->nnodes);
    for (uint32_t i = 0; i < s->nnodes; i++)
        v[i] = ks_snapshot_node(s, i);
    return v;
}

} // namespace ksbench
