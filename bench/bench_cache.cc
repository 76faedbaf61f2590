// bench_cache.cc - the serial part of a scheduling cycle the cache owns: assume a pod on a
// node, alone and followed by publishing the next snapshot (one record and one chunk
// rebuilt), the O(N) relist when the node set changes, and snapshot lookups by name.
extern "C" {
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/internal/cache.h"
}

#include "bench_rcu.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace
{

void *must(void *p)
{
    if (!p)
        std::abort();
    return p;
}

ks_resource_list resources(ks_arena *a, int64_t milli_cpu, int64_t memory, int64_t pods)
{
    ks_resource_list l{};
    l.items = static_cast<ks_resource_item *>(must(ks_arena_calloc(a, 3, sizeof(ks_resource_item))));
    l.items[l.n++] = ks_resource_item{ks_wk.cpu, milli_cpu};
    l.items[l.n++] = ks_resource_item{ks_wk.memory, memory};
    if (pods)
        l.items[l.n++] = ks_resource_item{ks_wk.pods, pods};
    std::sort(l.items, l.items + l.n,
              [](const ks_resource_item &x, const ks_resource_item &y) { return x.name < y.name; });
    return l;
}

ks_node *make_node(const char *name, uint32_t zone)
{
    char z[32];
    std::snprintf(z, sizeof(z), "zone-%u", zone);
    auto *n = static_cast<ks_node *>(must(std::calloc(1, sizeof(ks_node))));
    n->meta.name = ks_arena_strdup(&n->arena, name);
    n->meta.creation_time = n->meta.deletion_time = KS_TIME_NONE;
    n->name_id = ks_intern(name);
    n->meta.labels.items = static_cast<ks_label *>(must(ks_arena_calloc(&n->arena, 1, sizeof(ks_label))));
    n->meta.labels.items[0] = ks_label{ks_wk.zone_label, ks_intern(z)};
    n->meta.labels.n = 1;
    n->allocatable = n->capacity = resources(&n->arena, 64000, 256LL << 30, 500);
    if (ks_node_finish(n))
        std::abort();
    return n;
}

ks_pod *make_pod(uint32_t serial)
{
    char name[32];
    std::snprintf(name, sizeof(name), "pod-%u", serial);
    auto *p = static_cast<ks_pod *>(must(std::calloc(1, sizeof(ks_pod))));
    p->refs = 1;
    p->meta.name = ks_arena_strdup(&p->arena, name);
    p->meta.namespace_id = ks_intern("default");
    p->meta.creation_time = p->meta.deletion_time = p->start_time = KS_TIME_NONE;
    p->scheduler_name = ks_wk.default_scheduler;
    p->containers = static_cast<ks_container *>(must(ks_arena_calloc(&p->arena, 1, sizeof(ks_container))));
    p->ncontainers = 1;
    p->containers[0].name = "c";
    p->containers[0].requests = resources(&p->arena, 100, 128LL << 20, 0);
    if (ks_pod_finish(p))
        std::abort();
    return p;
}

// A cache with @n nodes over 3 zones, refreshed once; node names in @names.
ks_cache *make_cluster(uint32_t n, std::vector<uint32_t> &names)
{
    ks_api_init();
    ks_cache *c = nullptr;
    if (ks_cache_create(&c))
        std::abort();
    char name[32];
    for (uint32_t i = 0; i < n; i++) {
        std::snprintf(name, sizeof(name), "node-%u", i);
        if (ks_cache_add_node(c, make_node(name, i % 3)))
            std::abort();
        names.push_back(ks_intern(name));
    }
    ks_cache_refresh(c);
    return c;
}

} // namespace

// Assume one pod on a pseudo-random node and publish: the cache work every scheduling cycle
// does on the scheduling thread alone (assume, then the next cycle's refresh).
static void BM_Cache_AssumeRefresh(benchmark::State &state)
{
    ksbench::rcu_thread();
    std::vector<uint32_t> names;
    ks_cache *c = make_cluster(static_cast<uint32_t>(state.range(0)), names);
    const uint32_t pool = 4096;
    std::vector<ks_pod *> pods;
    for (uint32_t i = 0; i < pool; i++)
        pods.push_back(make_pod(i));
    uint32_t i = 0, node = 0;
    for (auto _ : state) {
        node = (node + 7919) % names.size();
        ks_cache_assume_pod(c, pods[i], names[node]);
        benchmark::DoNotOptimize(ks_cache_refresh(c));
        if (++i == pool) {
            state.PauseTiming();
            for (ks_pod *p : pods)
                ks_cache_forget_pod(c, p);
            ks_cache_refresh(c);
            i = 0;
            state.ResumeTiming();
        }
    }
    ks_cache_destroy(c);
    for (ks_pod *p : pods)
        ks_pod_put(p);
}
BENCHMARK(BM_Cache_AssumeRefresh)->Arg(5000)->Arg(50000);

// Remove a node and add it back, refreshing after each: the O(N) relist of the node order.
// Assume alone (the scheduling thread's bookkeeping before the pod goes to a binder).
static void BM_Cache_Assume(benchmark::State &state)
{
    ksbench::rcu_thread();
    std::vector<uint32_t> names;
    ks_cache *c = make_cluster(static_cast<uint32_t>(state.range(0)), names);
    const uint32_t pool = 4096;
    std::vector<ks_pod *> pods;
    for (uint32_t i = 0; i < pool; i++)
        pods.push_back(make_pod(i));
    uint32_t i = 0, node = 0;
    for (auto _ : state) {
        node = (node + 7919) % names.size();
        benchmark::DoNotOptimize(ks_cache_assume_pod(c, pods[i], names[node]));
        if (++i == pool) {
            state.PauseTiming();
            for (ks_pod *p : pods)
                ks_cache_forget_pod(c, p);
            ks_cache_refresh(c);
            i = 0;
            state.ResumeTiming();
        }
    }
    ks_cache_destroy(c);
    for (ks_pod *p : pods)
        ks_pod_put(p);
}
BENCHMARK(BM_Cache_Assume)->Arg(5000)->Arg(50000);

static void BM_Cache_NodeChurnRefresh(benchmark::State &state)
{
    ksbench::rcu_thread();
    std::vector<uint32_t> names;
    ks_cache *c = make_cluster(static_cast<uint32_t>(state.range(0)), names);
    char name[32];
    uint32_t k = 0;
    for (auto _ : state) {
        uint32_t i = (k++ * 7919) % names.size();
        ks_cache_remove_node(c, names[i]);
        ks_cache_refresh(c);
        std::snprintf(name, sizeof(name), "node-%u", i);
        ks_cache_add_node(c, make_node(name, i % 3));
        ks_cache_refresh(c);
    }
    ks_cache_destroy(c);
}
BENCHMARK(BM_Cache_NodeChurnRefresh)->Arg(5000)->Arg(50000)->Unit(benchmark::kMicrosecond);

static void BM_Snapshot_Find(benchmark::State &state)
{
    ksbench::rcu_thread();
    std::vector<uint32_t> names;
    ks_cache *c = make_cluster(static_cast<uint32_t>(state.range(0)), names);
    uint32_t k = 0;
    ks_rcu_read_lock();
    const ks_snapshot *s = ks_cache_snapshot(c);
    for (auto _ : state)
        benchmark::DoNotOptimize(ks_snapshot_find(s, names[(k++ * 7919) % names.size()]));
    ks_rcu_read_unlock();
    ks_cache_destroy(c);
}
BENCHMARK(BM_Snapshot_Find)->Arg(5000)->Arg(50000);
