// bench_engine.cc - the serial steps of a scheduling cycle outside the plugins: selectHost
// over the feasible nodes' totals, and the worker pool's hand-off (how long it takes to
// give blocks to the other threads and collect them), which decides when splitting the
// filter and score phases pays.
extern "C" {
#include "ksched/base/workers.h"
// internal to the scheduling loop; the harness reaches it as the loop does
#include "select_host.h"
}

#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

// Totals of @range(0) nodes: all equal (range(1) == 0: every node ties, a fresh cluster's
// normal case) or pseudo-random in [0, 200] (range(1) == 1: few ties).
static void BM_SelectHost(benchmark::State &state)
{
    const uint32_t n = static_cast<uint32_t>(state.range(0));
    std::vector<int64_t> totals(n, 150);
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    if (state.range(1)) {
        for (auto &t : totals)
            t = static_cast<int64_t>(ks__xorshift(&rng) % 201);
    }
    for (auto _ : state)
        benchmark::DoNotOptimize(ks__select_host(totals.data(), n, &rng));
}
BENCHMARK(BM_SelectHost)->Args({500, 0})->Args({500, 1})->Args({2500, 0})->Args({2500, 1});

namespace
{
std::atomic<uint64_t> sink;

void touch(void *ctx, uint32_t begin, uint32_t end, uint32_t worker)
{
    (void)ctx;
    sink.fetch_add(end - begin + worker, std::memory_order_relaxed);
}
} // namespace

// One parallel-for of @range(0) indices in blocks of @range(1) over a pool of one extra
// thread (these machines have two cores): the fixed cost of handing a job to the pool.
static void BM_Workers_Run(benchmark::State &state)
{
    ks_workers *w = nullptr;
    if (ks_workers_create(1, &w)) {
        state.SkipWithError("ks_workers_create failed");
        return;
    }
    const uint32_t n = static_cast<uint32_t>(state.range(0)), block = static_cast<uint32_t>(state.range(1));
    for (auto _ : state)
        benchmark::DoNotOptimize(ks_workers_run(w, n, block, touch, nullptr));
    ks_workers_destroy(w);
}
BENCHMARK(BM_Workers_Run)->Args({256, 256})->Args({512, 256})->Args({5000, 256})->UseRealTime();

// BM_Handoff_WorkersWake: one parallel-for of 512 indices in blocks of 256 (one block for
// each thread) after the pool idled 1 ms, longer than its thread polls: the run pays the
// sleeping thread's wake-up. A fixed 500 runs: the idle time is not measured, so a
// time-based count would sleep minutes.
static void BM_Handoff_WorkersWake(benchmark::State &state)
{
    ks_workers *w = nullptr;
    if (ks_workers_create(1, &w)) {
        state.SkipWithError("ks_workers_create failed");
        return;
    }
    for (auto _ : state) {
        state.PauseTiming();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        state.ResumeTiming();
        benchmark::DoNotOptimize(ks_workers_run(w, 512, 256, touch, nullptr));
    }
    ks_workers_destroy(w);
}
BENCHMARK(BM_Handoff_WorkersWake)->Iterations(500)->UseRealTime();
