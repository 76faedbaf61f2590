#!/usr/bin/env bash
# The default benchmark (`make bench`): scheduler_perf's SchedulingBasic on a generated
# cluster of 5,000 nodes (cpu 32, memory 256Gi, pods 110, hostname and zone-<i%10> labels,
# Ready; bench/workloads/SchedulingBasic.yaml: 1,000 pods already placed, 10,000 measured),
# run RUNS times through `ksched bench`; prints every run and the medians of pods/s,
# scheduling-cycle latency and peak RSS. NODES, PODS and RUNS override the defaults.
set -euo pipefail
ksched=${1:-build/ksched}
nodes=${NODES:-5000}
runs=${RUNS:-5}
args=(--workload SchedulingBasic --nodes "$nodes" --json --quiet)
[ -n "${PODS:-}" ] && args+=(--pods "$PODS")

results=()
for i in $(seq "$runs"); do
  out=$("$ksched" bench "${args[@]}")
  [ "$i" -eq 1 ] && printf '%s\n' "$out" | sed '$d'
  results+=("$(printf '%s\n' "$out" | tail -n 1)")
done
printf '%s\n' "${results[@]}" | python3 -c '
import json, statistics, sys
runs = [json.loads(line) for line in sys.stdin if line.strip()]
for r in runs:
    print("run: %8.0f pods/s  p50 %6.1f us  p99 %6.1f us  peak RSS %5.1f MB  %.2f cores" % (
        r["pods_per_second"], r["latency_us"]["p50"], r["latency_us"]["p99"], r["peak_rss_bytes"] / 1e6,
        r["cpu_cores"]))
med = lambda f: statistics.median(f(r) for r in runs)
r = runs[0]
print("SchedulingBasic, %d nodes, %d measured pods, median of %d runs: %.0f pods/s, cycle p50 %.1f us, p99 %.1f us, "
      "peak RSS %.1f MB" % (r["nodes"], r["pods"], len(runs), med(lambda r: r["pods_per_second"]),
      med(lambda r: r["latency_us"]["p50"]), med(lambda r: r["latency_us"]["p99"]),
      med(lambda r: r["peak_rss_bytes"]) / 1e6))
bad = [r for r in runs if r["bound"] != r["pods"]]
sys.exit(1 if bad else 0)
'
