// bench_plugins.cc - per-node cost of every plugin's Filter and Score, and of the
// framework's whole Filter and Score passes, on the fixture cluster (bench_fixture.h) of
// 5,000 nodes. One iteration is one node, so the reported time is nanoseconds per node;
// nodes are visited in snapshot order, round and round, as the filter phase does.
//
// Plugins are found in the registry at start-up: every in-tree plugin with a Filter or a
// Score op gets a benchmark for the "basic" and the "rich" pod, so plugins that land later
// are measured without touching this file. A plugin whose PreFilter (or PreScore) returns
// Skip for a pod is reported as skipped: the framework would not call it either.
extern "C" {
#include "../engine/framework_plan.h"
#include "ksched/base/intern.h"
#include "ksched/internal/config.h"
#include "ksched/registry.h"
}

#include "bench_fixture.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>

namespace
{

constexpr uint32_t kNodes = 5000;
constexpr const char *kApiVersion = "kubescheduler.config.k8s.io/v1";

struct Instance {
    const ks_plugin *plugin = nullptr;
    void *self = nullptr;
    void *own_args = nullptr;
    bool ok = false;

    Instance(const ks_plugin *p, uint16_t slot, ksbench::Cluster &c) : plugin(p)
    {
        ks_error err{};
        const void *args = ks_profile_args(&c.config->profiles[0], p->name);
        if (!args && p->args_parse) {
            if (p->args_parse(nullptr, kApiVersion, "bench", &own_args, &err))
                return;
            args = own_args;
        }
        ks_plugin_init in{args, slot, c.fw};
        ok = !p->init || p->init(&in, &self, &err) == 0;
    }
    ~Instance()
    {
        if (ok && plugin->destroy)
            plugin->destroy(self);
        if (own_args && plugin->args_destroy)
            plugin->args_destroy(own_args);
    }
};

uint16_t slot_of(const ks_plugin *p)
{
    uint16_t i = 0;
    while (ks_registry[i] && ks_registry[i] != p)
        i++;
    return i;
}

ks_pod *pod_of(ksbench::Cluster &c, bool rich)
{
    return rich ? c.rich : c.basic;
}

void BM_Filter(benchmark::State &state, const ks_plugin *p, bool rich)
{
    ksbench::rcu_thread();
    ksbench::Cluster &c = ksbench::cluster(kNodes);
    Instance inst(p, slot_of(p), c);
    if (!inst.ok) {
        state.SkipWithError("init failed");
        return;
    }
    const ks_pod *pod = pod_of(c, rich);
    ks_cycle_state cs;
    ks_cycle_state_init(&cs);
    ks_rcu_read_lock();
    std::vector<const ks_node_snap *> nodes = ksbench::snapshot_nodes(c);
    ks_status st{};
    int rc = KS_SUCCESS;
    if (p->pre_filter) {
        ks_pre_filter_result res{};
        res.all = true;
        rc = p->pre_filter(inst.self, &cs, pod, &res, &st);
    }
    if (rc == KS_SKIP) {
        state.SkipWithError("PreFilter returned Skip for this pod");
    } else if (rc != KS_SUCCESS) {
        state.SkipWithError("PreFilter rejected the pod");
    } else {
        size_t i = 0, passed = 0, n = nodes.size();
        for (auto _ : state) {
            st.nreasons = 0;
            int r = p->filter(inst.self, &cs, pod, nodes[i], &st);
            benchmark::DoNotOptimize(r);
            passed += r == KS_SUCCESS;
            if (++i == n)
                i = 0;
        }
        state.counters["pass"] = benchmark::Counter(static_cast<double>(passed) / state.iterations());
    }
    ks_rcu_read_unlock();
    ks_cycle_state_destroy(&cs);
}

void BM_Score(benchmark::State &state, const ks_plugin *p, bool rich)
{
    ksbench::rcu_thread();
    ksbench::Cluster &c = ksbench::cluster(kNodes);
    Instance inst(p, slot_of(p), c);
    if (!inst.ok) {
        state.SkipWithError("init failed");
        return;
    }
    const ks_pod *pod = pod_of(c, rich);
    ks_cycle_state cs;
    ks_cycle_state_init(&cs);
    ks_rcu_read_lock();
    std::vector<const ks_node_snap *> nodes = ksbench::snapshot_nodes(c);
    ks_status st{};
    int rc = KS_SUCCESS;
    if (p->pre_filter) {
        // Score plugins read what their PreFilter left (InterPodAffinity, PodTopologySpread)
        ks_pre_filter_result res{};
        res.all = true;
        rc = p->pre_filter(inst.self, &cs, pod, &res, &st);
        rc = rc == KS_SKIP ? KS_SUCCESS : rc;
    }
    if (rc == KS_SUCCESS && p->pre_score)
        rc = p->pre_score(inst.self, &cs, pod, nodes.data(), static_cast<uint32_t>(nodes.size()), &st);
    if (rc == KS_SKIP) {
        state.SkipWithError("PreScore returned Skip for this pod");
    } else if (rc != KS_SUCCESS) {
        state.SkipWithError("PreFilter or PreScore failed");
    } else {
        size_t i = 0, n = nodes.size();
        int64_t score = 0;
        for (auto _ : state) {
            int r = p->score(inst.self, &cs, pod, nodes[i], &score, &st);
            benchmark::DoNotOptimize(r);
            benchmark::DoNotOptimize(score);
            if (++i == n)
                i = 0;
        }
    }
    ks_rcu_read_unlock();
    ks_cycle_state_destroy(&cs);
}

// The framework's Filter over every plugin of the default profile, per node.
void BM_Framework_Filter(benchmark::State &state, bool rich)
{
    ksbench::rcu_thread();
    ksbench::Cluster &c = ksbench::cluster(kNodes);
    const ks_pod *pod = pod_of(c, rich);
    ks_cycle_state cs;
    ks_cycle_state_init(&cs);
    ks_rcu_read_lock();
    std::vector<const ks_node_snap *> nodes = ksbench::snapshot_nodes(c);
    ks_pre_filter_result res{};
    ks_status st{};
    if (ks_fw_run_pre_filter(c.fw, &cs, pod, &res, &st) != KS_SUCCESS || !res.all) {
        state.SkipWithError("PreFilter rejected the pod or narrowed the nodes");
    } else {
        size_t i = 0, passed = 0, n = nodes.size();
        for (auto _ : state) {
            int r = ks_fw_run_filter(c.fw, &cs, pod, nodes[i], &st);
            benchmark::DoNotOptimize(r);
            passed += r == KS_SUCCESS;
            if (++i == n)
                i = 0;
        }
        state.counters["pass"] = benchmark::Counter(static_cast<double>(passed) / state.iterations());
    }
    ks_rcu_read_unlock();
    ks_cycle_state_destroy(&cs);
}

// The framework's Score over every score plugin of the default profile, per node.
void BM_Framework_Score(benchmark::State &state, bool rich)
{
    ksbench::rcu_thread();
    ksbench::Cluster &c = ksbench::cluster(kNodes);
    const ks_pod *pod = pod_of(c, rich);
    ks_cycle_state cs;
    ks_cycle_state_init(&cs);
    ks_rcu_read_lock();
    std::vector<const ks_node_snap *> nodes = ksbench::snapshot_nodes(c);
    ks_pre_filter_result res{};
    ks_status st{};
    std::vector<int64_t> scores(ks_framework_nscore(c.fw) + 1);
    if (ks_fw_run_pre_filter(c.fw, &cs, pod, &res, &st) != KS_SUCCESS ||
        ks_fw_run_pre_score(c.fw, &cs, pod, nodes.data(), static_cast<uint32_t>(nodes.size()), &st) !=
            KS_SUCCESS) {
        state.SkipWithError("PreFilter or PreScore failed");
    } else {
        size_t i = 0, n = nodes.size();
        for (auto _ : state) {
            int r = ks_fw_score_node(c.fw, &cs, pod, nodes[i], scores.data(), &st);
            benchmark::DoNotOptimize(r);
            benchmark::DoNotOptimize(scores.data());
            if (++i == n)
                i = 0;
        }
    }
    ks_rcu_read_unlock();
    ks_cycle_state_destroy(&cs);
}

// The batched passes the scheduling loop runs (framework_plan.h): one iteration is one
// block of @range(0) nodes through the planned Filter (ks__fw_plan_filter_nodes), or the
// planned Score (ks__fw_plan_score_nodes); "per_node" is the time per node.
struct BlockPass {
    ksbench::Cluster &c;
    const ks_pod *pod;
    const uint32_t block;
    ks_cycle_state cs;
    std::vector<const ks_node_snap *> nodes;
    size_t next = 0, end;

    BlockPass(benchmark::State &state, bool rich)
        : c((ksbench::rcu_thread(), ksbench::cluster(kNodes))), pod(pod_of(c, rich)),
          block(static_cast<uint32_t>(state.range(0)))
    {
        ks_cycle_state_init(&cs);
        ks_rcu_read_lock();
        nodes = ksbench::snapshot_nodes(c);
        end = nodes.size() - nodes.size() % block;
    }
    ~BlockPass()
    {
        ks_rcu_read_unlock();
        ks_cycle_state_destroy(&cs);
    }
    // the next block's nodes, round and round the snapshot
    const ks_node_snap *const *step()
    {
        const ks_node_snap *const *v = &nodes[next];
        if ((next += block) == end)
            next = 0;
        return v;
    }
    void report(benchmark::State &state) const
    {
        state.counters["per_node"] =
            benchmark::Counter(static_cast<double>(state.iterations()) * block,
                               benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    }
};

void BM_Framework_FilterBlock(benchmark::State &state, bool rich)
{
    BlockPass b(state, rich);
    std::vector<uint8_t> ok(b.block);
    std::vector<ks_status> st(b.block);
    ks_pre_filter_result res{};
    ks_fw_plan plan;
    if (ks_fw_run_pre_filter(b.c.fw, &b.cs, b.pod, &res, &st[0]) != KS_SUCCESS || !res.all) {
        state.SkipWithError("PreFilter rejected the pod or narrowed the nodes");
        return;
    }
    ks__fw_plan_filter(b.c.fw, &b.cs, &plan);
    size_t passed = 0;
    for (auto _ : state) {
        std::fill(ok.begin(), ok.end(), 1);
        passed += ks__fw_plan_filter_nodes(&plan, &b.cs, b.pod, b.step(), b.block, ok.data(), st.data());
    }
    state.counters["pass"] = benchmark::Counter(static_cast<double>(passed) / state.iterations() / b.block);
    b.report(state);
}

void BM_Framework_ScoreBlock(benchmark::State &state, bool rich)
{
    BlockPass b(state, rich);
    std::vector<int64_t> cols(static_cast<size_t>(b.block) * (ks_framework_nscore(b.c.fw) + 1)),
        totals(b.block);
    ks_pre_filter_result res{};
    ks_status st{};
    ks_fw_plan plan;
    bool oor = false;
    if (ks_fw_run_pre_filter(b.c.fw, &b.cs, b.pod, &res, &st) != KS_SUCCESS ||
        ks_fw_run_pre_score(b.c.fw, &b.cs, b.pod, b.nodes.data(), static_cast<uint32_t>(b.nodes.size()),
                            &st) != KS_SUCCESS) {
        state.SkipWithError("PreFilter or PreScore failed");
        return;
    }
    ks__fw_plan_score(b.c.fw, &b.cs, &plan);
    for (auto _ : state) {
        int r = ks__fw_plan_score_nodes(&plan, &b.cs, b.pod, b.step(), b.block, cols.data(), b.block,
                                        totals.data(), &oor);
        benchmark::DoNotOptimize(r);
        benchmark::DoNotOptimize(totals.data());
    }
    b.report(state);
}

// NormalizeScore and the weights over @range(0) feasible nodes (the scheduling thread's serial step).
void BM_Framework_Normalize(benchmark::State &state)
{
    ksbench::rcu_thread();
    ksbench::Cluster &c = ksbench::cluster(kNodes);
    const ks_pod *pod = c.rich;
    const uint32_t n = static_cast<uint32_t>(state.range(0));
    const uint32_t nscore = ks_framework_nscore(c.fw);
    ks_cycle_state cs;
    ks_cycle_state_init(&cs);
    ks_rcu_read_lock();
    std::vector<const ks_node_snap *> nodes = ksbench::snapshot_nodes(c);
    nodes.resize(n);
    ks_pre_filter_result res{};
    ks_status st{};
    std::vector<int64_t> raw(static_cast<size_t>(n) * nscore + 1), work(raw.size()), totals(n);
    bool ok = ks_fw_run_pre_filter(c.fw, &cs, pod, &res, &st) == KS_SUCCESS &&
              ks_fw_run_pre_score(c.fw, &cs, pod, nodes.data(), n, &st) == KS_SUCCESS;
    for (uint32_t i = 0; ok && i < n; i++)
        ok = ks_fw_score_node(c.fw, &cs, pod, nodes[i], &raw[static_cast<size_t>(i) * nscore], &st) ==
             KS_SUCCESS;
    if (!ok) {
        state.SkipWithError("PreFilter, PreScore or Score failed");
    } else {
        for (auto _ : state) {
            state.PauseTiming();
            work = raw;
            std::fill(totals.begin(), totals.end(), 0);
            state.ResumeTiming();
            int r = ks_fw_normalize_scores(c.fw, &cs, pod, nodes.data(), n, work.data(), totals.data(), &st);
            benchmark::DoNotOptimize(r);
        }
    }
    ks_rcu_read_unlock();
    ks_cycle_state_destroy(&cs);
}
BENCHMARK(BM_Framework_Normalize)->Arg(500)->Arg(2500);

int register_all()
{
    for (const ks_plugin *const *pp = ks_registry; *pp; pp++) {
        const ks_plugin *p = *pp;
        for (bool rich : {false, true}) {
            std::string pod = rich ? "rich" : "basic";
            if (p->filter)
                benchmark::RegisterBenchmark(("BM_Filter/" + std::string(p->name) + "/" + pod).c_str(),
                                             BM_Filter, p, rich);
            if (p->score)
                benchmark::RegisterBenchmark(("BM_Score/" + std::string(p->name) + "/" + pod).c_str(),
                                             BM_Score, p, rich);
        }
    }
    for (bool rich : {false, true}) {
        std::string pod = rich ? "rich" : "basic";
        benchmark::RegisterBenchmark(("BM_Framework_Filter/" + pod).c_str(), BM_Framework_Filter, rich);
        benchmark::RegisterBenchmark(("BM_Framework_Score/" + pod).c_str(), BM_Framework_Score, rich);
        benchmark::RegisterBenchmark(("BM_Framework_FilterBlock/" + pod).c_str(), BM_Framework_FilterBlock,
                                     rich)
            ->Arg(256);
        benchmark::RegisterBenchmark(("BM_Framework_ScoreBlock/" + pod).c_str(), BM_Framework_ScoreBlock,
                                     rich)
            ->Arg(128);
    }
    return 0;
}

const int registered = register_all();

} // namespace
