// bench_fixture.h - the cluster the plugin and engine micro-benchmarks run against: the
// generated cluster of `ksched bench` (cpu 32, memory 256Gi, pods 110, hostname and
// zone-<i%10> labels), with two existing pods per node (labels app=web-<k>), a
// PreferNoSchedule taint on every tenth node and two images per node, in a real cache and
// its published snapshot; the default profile's framework; and two pending pods decoded
// from YAML: "basic" (SchedulingBasic's pod) and "rich" (tolerations, node affinity, pod
// affinity and anti-affinity, spread constraints, a host port), so plugins that skip the
// basic pod still have work.
#ifndef KSCHED_BENCH_FIXTURE_H
#define KSCHED_BENCH_FIXTURE_H

extern "C" {
#include "ksched/api.h"
#include "ksched/base/rcu.h"
#include "ksched/framework.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/config.h"
}

#include "bench_rcu.h"

#include <cstdint>
#include <vector>

namespace ksbench
{

struct Cluster {
    ks_config *config = nullptr;
    ks_cache *cache = nullptr;
    ks_framework *fw = nullptr;
    ks_pod *basic = nullptr;
    ks_pod *rich = nullptr;
    uint32_t nnodes = 0;
};

// The shared cluster of @nodes nodes (built on first use, kept for the process). Registers
// the caller's thread with RCU (ksbench::rcu_thread(), bench_rcu.h) if it is not yet.
Cluster &cluster(uint32_t nodes);

// The snapshot's nodes in order. Context: inside ks_rcu_read_lock().
std::vector<const ks_node_snap *> snapshot_nodes(Cluster &c);

// A pod decoded from @yaml (one v1 Pod document); aborts on a bad fixture.
ks_pod *decode_pod(const char *yaml);

} // namespace ksbench

#endif
