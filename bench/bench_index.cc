// bench_index.cc - the signature index's position tree (index/index_tree.c) at the
// cluster sizes the index is for: 5,000 and 50,000 node positions, a third of them
// feasible, totals drawn from a few values so that ties are common.
//
//   BM_IndexTree_Set     one position changes (an assume, a bind, a node update)
//   BM_IndexTree_Window  one cycle's questions: the window from a start position for
//                        numFeasibleNodesToFind nodes (at most 100, as upstream's 5% floor
//                        gives), its best total and ties, and one tie drawn
extern "C" {
#include "ksched/internal/index_tree.h"
#include "select_host.h" // ks__xorshift
}

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>

namespace
{

void fill(ks_index_tree *t, uint32_t n, uint64_t *rng)
{
    if (ks_index_tree_init(t, n) < 0)
        std::abort();
    for (uint32_t i = 0; i < n; i++)
        ks_index_tree_set(t, i, ks__xorshift(rng) % 3 == 0, static_cast<int32_t>(ks__xorshift(rng) % 8) * 25,
                          false);
}

void BM_IndexTree_Set(benchmark::State &state)
{
    const auto n = static_cast<uint32_t>(state.range(0));
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    ks_index_tree t;
    fill(&t, n, &rng);
    for (auto _ : state) {
        uint64_t r = ks__xorshift(&rng);
        ks_index_tree_set(&t, static_cast<uint32_t>(r % n), (r >> 32) % 3 == 0,
                          static_cast<int32_t>(r >> 40) % 8 * 25, false);
    }
    benchmark::DoNotOptimize(ks_index_tree_feasible(&t));
    ks_index_tree_destroy(&t);
}
BENCHMARK(BM_IndexTree_Set)->Arg(5000)->Arg(50000);

void BM_IndexTree_Window(benchmark::State &state)
{
    const auto n = static_cast<uint32_t>(state.range(0));
    uint64_t rng = 0x2545F4914F6CDD1Dull;
    ks_index_tree t;
    fill(&t, n, &rng);
    uint32_t start = 0;
    for (auto _ : state) {
        ks_index_window w;
        ks_index_tree_window(&t, start, 100, &w);
        uint32_t pick = ks_index_tree_tie(&t, &w, static_cast<uint32_t>(ks__xorshift(&rng) % w.ties));
        benchmark::DoNotOptimize(pick);
        start = (start + w.processed) % n;
    }
    ks_index_tree_destroy(&t);
}
BENCHMARK(BM_IndexTree_Window)->Arg(5000)->Arg(50000);

} // namespace
