#!/usr/bin/env bash
# The default benchmark: a generated cluster of 5,000 nodes (allocatable cpu 32, memory
# 256Gi, pods 110, hostname and zone-<i%10> labels, Ready) and 5,000 pending pods
# (100m cpu, 100Mi memory, as scheduler_perf's SchedulingBasic), scheduled by
# `ksched schedule` with the default profile; prints the median wall time of 5 runs (load
# included) and the pods bound.
set -euo pipefail
ksched=${1:-build/ksched}
nodes=${NODES:-5000}
pods=${PODS:-5000}
runs=${RUNS:-5}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

awk -v nodes="$nodes" -v pods="$pods" 'BEGIN {
  for (i = 0; i < nodes; i++) {
    printf "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: node-%d\n  labels:\n", i
    printf "    kubernetes.io/hostname: node-%d\n    topology.kubernetes.io/zone: zone-%d\n", i, i % 10
    printf "status:\n  allocatable: {cpu: \"32\", memory: 256Gi, pods: \"110\"}\n"
    printf "  capacity: {cpu: \"32\", memory: 256Gi, pods: \"110\"}\n"
    printf "  conditions: [{type: Ready, status: \"True\"}]\n"
  }
  for (i = 0; i < pods; i++) {
    printf "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: pod-%d\n  namespace: sched-test\n", i
    printf "spec:\n  containers:\n  - name: pause\n    image: registry.k8s.io/pause:3.10\n"
    printf "    resources: {requests: {cpu: 100m, memory: 100Mi}}\n"
  }
}' > "$dir/cluster.yaml"

echo "cluster: $nodes nodes, $pods pending pods ($(du -h "$dir/cluster.yaml" | cut -f1) of YAML)"
times=()
for _ in $(seq "$runs"); do
  start=$(date +%s%N)
  "$ksched" schedule "$dir/cluster.yaml" > "$dir/out"
  end=$(date +%s%N)
  times+=($(( (end - start) / 1000 )))
done
scheduled=$(grep -c '"status":"Scheduled"' "$dir/out" || true)
median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
awk -v us="$median" -v pods="$pods" -v bound="$scheduled" -v runs="$runs" 'BEGIN {
  printf "bound %d of %d pods; median wall time %.1f ms over %d runs, loading included (%.0f pods/s)\n",
         bound, pods, us / 1000, runs, bound / (us / 1e6)
}'
[ "$scheduled" -eq "$pods" ]
