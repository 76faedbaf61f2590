#!/usr/bin/env bash
# --no-index on every command that schedules, and the indexed_cycles figure:
#   - `schedule --no-index` decides as without it (same outcomes, seeded), a preemption
#     burst included (the dry-run memo is off with --no-index);
#   - `bench --json` reports indexed_cycles, a whole number (0 with --no-index, which it
#     also reports as "no_index": true), and the text report names it; SchedulingJobs runs
#     with every pod bound either way;
#   - `soak --json` reports indexed_cycles (0 with --no-index);
#   - `serve --no-index` is taken (the run then fails for want of a kubeconfig), a value is not.
# usage: no_index.sh KSCHED
set -u
ksched=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# run ARGS...: ksched with ARGS, leaves $dir/out, $dir/err and $rc.
run() {
  "$ksched" "$@" </dev/null >"$dir/out" 2>"$dir/err"
  rc=$?
}

# json_check NAME PYTHON_EXPR: the last line of $dir/out is a JSON object j for which EXPR holds.
json_check() {
  local name=$1 expr=$2
  if tail -n 1 "$dir/out" | python3 -c "import json, sys; j = json.loads(sys.stdin.read()); sys.exit(0 if ($expr) else 1)"; then
    ok
  else
    bad "$name: $expr does not hold for: $(tail -n 1 "$dir/out" | head -c 600)"
  fi
}

# ---- schedule -----------------------------------------------------------------------------------
{
  for i in 1 2 3 4 5 6; do
    cat <<EOF
---
apiVersion: v1
kind: Node
metadata:
  name: node-$i
  labels: {pool: $([ $i -le 3 ] && echo a || echo b)}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
EOF
  done
  for i in $(seq 1 24); do
    cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: p$i, namespace: default}
spec:
  $([ $((i % 3)) -eq 0 ] && echo "nodeSelector: {pool: b}" || echo "nodeSelector: {}")
  containers:
  - name: c
    image: x
    resources:
      requests: {cpu: $([ $((i % 2)) -eq 0 ] && echo 500m || echo 250m), memory: 256Mi}
EOF
  done
} >"$dir/cluster.yaml"
run schedule --seed 3 "$dir/cluster.yaml"
cp "$dir/out" "$dir/with"
[ $rc -eq 0 ] && [ "$(grep -c '"status":"Scheduled"' "$dir/with")" -eq 24 ] && ok ||
  bad "schedule: exit $rc, $(head -c 300 "$dir/out") $(cat "$dir/err")"
run schedule --seed 3 --no-index "$dir/cluster.yaml"
cp "$dir/out" "$dir/without"
[ $rc -eq 0 ] && [ ! -s "$dir/err" ] && cmp -s "$dir/with" "$dir/without" && ok ||
  bad "schedule --no-index: exit $rc, decisions differ: $(diff "$dir/with" "$dir/without" | head -5) $(cat "$dir/err")"

# A preemption burst: 40 full nodes of lower-priority pods (some with start times, some
# not), 30 preemptors of two priorities; the dry runs' remembered verdicts (on by default)
# must give the victims, nominations and messages that computing every one gives.
python3 - "$dir/burst.yaml" <<'PY'
import sys
out = []
for i in range(40):
    out.append("---\napiVersion: v1\nkind: Node\nmetadata: {name: node-%d, labels: {zone: z%d}}\n"
               "status:\n  allocatable: {cpu: \"4\", memory: 32Gi, pods: \"110\"}\n" % (i, i % 3))
for k in range(160):
    start = "" if (k // 4) % 5 else '\n  startTime: "2026-01-01T00:0%d:00Z"' % (k % 4)
    out.append("---\napiVersion: v1\nkind: Pod\nmetadata: {name: low-%d, namespace: default}\nspec:\n"
               "  nodeName: node-%d\n  priority: %d\n  containers:\n  - name: c\n    image: x\n"
               "    resources:\n      requests: {cpu: 900m, memory: 1Gi}\nstatus:\n  phase: Running%s\n"
               % (k, k // 4, 5 if k % 7 == 3 else 0, start))
for i in range(30):
    out.append("---\napiVersion: v1\nkind: Pod\nmetadata: {name: high-%d, namespace: default}\nspec:\n"
               "  priority: %d\n  containers:\n  - name: c\n    image: x\n    resources:\n"
               "      requests: {cpu: \"3\", memory: 1Gi}\n" % (i, 20 if i % 7 == 0 else 10))
open(sys.argv[1], "w").write("".join(out))
PY
run schedule --seed 3 "$dir/burst.yaml"
cp "$dir/out" "$dir/with"
[ $rc -eq 0 ] && [ "$(grep -c '"status":"Preempted"' "$dir/with")" -ge 60 ] && ok ||
  bad "schedule burst: exit $rc, $(grep -c Preempted "$dir/with") preempted, $(cat "$dir/err")"
run schedule --seed 3 --no-index "$dir/burst.yaml"
cmp -s "$dir/with" "$dir/out" && ok ||
  bad "schedule burst --no-index: decisions differ: $(diff "$dir/with" "$dir/out" | head -5)"

# ---- bench ---------------------------------------------------------------------------------------
run bench --workload SchedulingJobs --nodes 100 --seed 1 --quiet --check --json
[ $rc -eq 0 ] && ok || bad "bench SchedulingJobs: exit $rc, $(cat "$dir/err")"
json_check "bench --json" 'j["workload"] == "SchedulingJobs" and j["bound"] == j["pods"] == 300 and type(j["indexed_cycles"]) is int and 0 <= j["indexed_cycles"] <= j["cycles"] + j["untimed_cycles"] and "no_index" not in j'
grep -Eq "over [0-9]+ cycles.*, [0-9]+ indexed" "$dir/out" && ok || bad "bench report lacks the indexed cycles: $(cat "$dir/out")"
run bench --workload SchedulingJobs --nodes 100 --seed 1 --quiet --check --json --no-index
[ $rc -eq 0 ] && ok || bad "bench --no-index: exit $rc, $(cat "$dir/err")"
json_check "bench --no-index --json" 'j["bound"] == 300 and j["indexed_cycles"] == 0 and j["no_index"] is True'
grep -q ", 0 indexed (--no-index)" "$dir/out" && ok || bad "bench --no-index report: $(cat "$dir/out")"
run bench --workload SchedulingBasic --nodes 100 --quiet --json
json_check "bench SchedulingBasic --json" 'type(j["indexed_cycles"]) is int'

# ---- soak -----------------------------------------------------------------------------------------
run soak --nodes 20 --pods 300 --seconds 20 --node-delete-rate 0 --json
[ $rc -eq 0 ] && ok || bad "soak: exit $rc, $(cat "$dir/err")"
json_check "soak --json" 'type(j["indexed_cycles"]) is int and 0 <= j["indexed_cycles"] <= j["cycles"] and j["no_index"] is False'
run soak --nodes 20 --pods 300 --seconds 20 --node-delete-rate 0 --json --no-index
[ $rc -eq 0 ] && ok || bad "soak --no-index: exit $rc, $(cat "$dir/err")"
json_check "soak --no-index --json" 'j["indexed_cycles"] == 0 and j["no_index"] is True and j["violations"] == 0'
run soak --nodes 20 --pods 100 --seconds 20 --no-index
[ $rc -eq 0 ] && grep -Eq "scheduling cycles \(0 indexed, --no-index\)" "$dir/out" && ok ||
  bad "soak --no-index report: exit $rc, $(cat "$dir/out")"

# ---- serve ----------------------------------------------------------------------------------------
serve() {
  env -u KUBERNETES_SERVICE_HOST -u KUBERNETES_SERVICE_PORT "$ksched" serve "$@" </dev/null >"$dir/out" 2>"$dir/err"
  rc=$?
}
serve --no-index --kubeconfig "$dir/none.yaml"
[ $rc -eq 2 ] && grep -q "none.yaml" "$dir/err" && ! grep -q -- "--no-index" "$dir/err" && ok ||
  bad "serve --no-index: exit $rc, $(cat "$dir/err")"
serve --no-index=true --kubeconfig "$dir/none.yaml"
[ $rc -eq 2 ] && grep -q "ksched serve: --no-index takes no value" "$dir/err" && ok ||
  bad "serve --no-index=true: exit $rc, $(cat "$dir/err")"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
