#!/usr/bin/env bash
# `ksched schedule --summary`: for every DIR/NAME.yaml, the table (-o table) must be NAME.table
# and the JSON lines NAME.json, byte for byte, with and without the signature index; the
# suggestions of capacity.yaml hold when the input is changed as they say and scheduled
# again; and --summary with --explain is a usage error.
set -u
ksched=$1
dir=$2
pass=0 fail=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
check() { # NAME FORMAT-FLAGS... : compare with the expected file
  local name=$1 want=$2
  shift 2
  if "$ksched" schedule --seed 1 --summary "$@" "$dir/$name.yaml" >"$out" 2>/dev/null && cmp -s "$out" "$dir/$name.$want"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1)); echo "FAIL $name ($*):"; diff "$dir/$name.$want" "$out" | head -20
  fi
}
for f in "$dir"/*.yaml; do
  name=$(basename "$f" .yaml)
  check "$name" table -o table
  check "$name" json
  check "$name" json --no-index --parallelism 1
done
# scheduled: FILE WORKLOAD - how many pods of WORKLOAD --summary says were placed
scheduled() {
  "$ksched" schedule --seed 1 --summary "$1" 2>/dev/null |
    python3 -c 'import json, sys; print(next(w["scheduled"] for w in map(json.loads, sys.stdin) if w["workload"] == sys.argv[1]))' "$2"
}
expect_placed() { # WHAT FILE WORKLOAD N
  local got
  got=$(scheduled "$2" "$3")
  if [ "$got" = "$4" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $1: $3 placed $got, want $4"; fi
}
tmp=$(mktemp -d)
trap 'rm -f "$out"; rm -rf "$tmp"' EXIT
sed 's/cpu: 1500m/cpu: 1/' "$dir/capacity.yaml" >"$tmp/cpu.yaml"
expect_placed "a cpu request of at most 1" "$tmp/cpu.yaml" Deployment/web 10
sed 's/memory: 20Gi/memory: 14Gi/' "$dir/capacity.yaml" >"$tmp/mem.yaml"
expect_placed "a memory request of at most 14Gi" "$tmp/mem.yaml" Pod/batch-* 3
{
  cat "$dir/capacity.yaml"
  for n in node-new-1 node-new-2; do
    printf -- '---\napiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n  labels: {kubernetes.io/hostname: %s, node.kubernetes.io/instance-type: m5.xlarge}\n' "$n" "$n"
    printf 'status:\n  allocatable: {cpu: '"'4'"', memory: 16Gi, pods: '"'110'"'}\n'
  done
} >"$tmp/nodes.yaml"
expect_placed "2 more m5.xlarge nodes" "$tmp/nodes.yaml" Deployment/web 10
if "$ksched" schedule --summary --explain "$dir/capacity.yaml" >"$out" 2>&1; then
  fail=$((fail + 1)); echo "FAIL: --summary --explain accepted"
else
  pass=$((pass + 1))
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
