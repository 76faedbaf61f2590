// bench_api.cc - costs of the object-model helpers the hot path and the loader use:
// interning, quantity parsing, label-selector matching.
extern "C" {
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/quantity.h"
}

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <vector>

static void BM_Intern_Existing(benchmark::State &state)
{
    ks_api_init();
    ks_intern("topology.kubernetes.io/zone");
    for (auto _ : state)
        benchmark::DoNotOptimize(ks_intern("topology.kubernetes.io/zone"));
}
BENCHMARK(BM_Intern_Existing);

static void BM_Quantity_Parse(benchmark::State &state)
{
    const char *inputs[] = {"100m", "256Gi", "1.5", "110", "64Mi", "2e3"};
    struct ks_quantity q;
    size_t i = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(ks_quantity_parse(inputs[i++ % 6], &q));
        benchmark::DoNotOptimize(ks_quantity_value(&q));
    }
}
BENCHMARK(BM_Quantity_Parse);

// A node with @n labels and a selector of 3 requirements (In, NotIn, Exists) that matches.
static void BM_LabelSelector_Match(benchmark::State &state)
{
    ks_api_init();
    const uint32_t n = static_cast<uint32_t>(state.range(0));
    std::vector<ks_label> items(n);
    char buf[64];
    for (uint32_t i = 0; i < n; i++) {
        snprintf(buf, sizeof(buf), "label-%u", i);
        items[i].key = ks_intern(buf);
        items[i].value = ks_intern("v");
    }
    std::sort(items.begin(), items.end(), [](const ks_label &a, const ks_label &b) { return a.key < b.key; });
    ks_labels labels{n, items.data()};
    uint32_t v = ks_intern("v"), other = ks_intern("other");
    ks_requirement reqs[3] = {};
    reqs[0] = {items[0].key, KS_OP_IN, 1, &v, 0};
    reqs[1] = {items[n / 2].key, KS_OP_NOT_IN, 1, &other, 0};
    reqs[2] = {items[n - 1].key, KS_OP_EXISTS, 0, nullptr, 0};
    ks_label_selector sel{3, reqs};
    for (auto _ : state)
        benchmark::DoNotOptimize(ks_label_selector_matches(&sel, &labels));
}
BENCHMARK(BM_LabelSelector_Match)->Arg(4)->Arg(16)->Arg(64);
