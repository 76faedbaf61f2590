#!/usr/bin/env bash
# smoke.sh KSCHED [WORKLOAD_DIR] - run every benchmark workload at 100 nodes through the
# real binary and check the outcome, not the speed: every pod ends as its op expects
# (bound, unschedulable, or settled for preemption), no node is overcommitted, and every
# bound pod is in the cache (`ksched bench --check`). Part of `make test`.
set -uo pipefail
ksched=${1:?usage: smoke.sh KSCHED [WORKLOAD_DIR]}
dir=${2:-$(dirname "$0")/workloads}
failed=0
count=0
for f in "$dir"/*.yaml; do
  name=$(basename "$f" .yaml)
  count=$((count + 1))
  if out=$("$ksched" bench --workload "$f" --nodes 100 --seed 1 --check --quiet --json 2>&1); then
    echo "ok   $name: $(printf '%s\n' "$out" | tail -n 1)"
  else
    echo "FAIL $name"
    printf '%s\n' "$out" | sed 's/^/     /'
    failed=$((failed + 1))
  fi
done
[ "$count" -gt 0 ] || { echo "no workloads in $dir"; exit 1; }
echo "$((count - failed))/$count workloads passed"
[ "$failed" -eq 0 ]
