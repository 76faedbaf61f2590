#!/usr/bin/env bash
# plot_test.sh KSCHED - bench/plot and bench/run-all without the long matrix (part of `make test`):
#   - bench/plot renders every committed bench/results/*.json to well-formed SVG that names
#     each workload, the commit, and the ratio to the reference where the result has one;
#   - bench/plot answers bad input with one line on stderr and exit 2;
#   - bench/plot draws panel (d), pods/s against the existing pods, for a workload measured at
#     two existing-pod counts on the same nodes;
#   - bench/gen-workload-manifests.py writes manifests that `ksched schedule --validate strict`
#     loads and schedules, pod-template-hashes made only of digits included;
#   - bench/run-all (PreemptionBasic, one run, OUT=a temporary folder that already holds a
#     <date>.json) writes <date>-2.json|svg and leaves <date>.json untouched.
set -euo pipefail
ksched=${1:?usage: plot_test.sh KSCHED}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

for json in "$here"/results/*.json; do
  svg=$tmp/$(basename "$json" .json).svg
  "$here/plot" "$json" "$svg" || fail "bench/plot $json"
  python3 - "$json" "$svg" "$here/reference.json" <<'PY' || fail "$svg"
import json, sys, xml.dom.minidom
doc, ref = json.load(open(sys.argv[1])), json.load(open(sys.argv[3]))
svg = xml.dom.minidom.parse(sys.argv[2])
def texts(node):
    if node.nodeType == node.TEXT_NODE:
        yield node.data
    for child in node.childNodes:
        yield from texts(child)
text = " ".join(texts(svg))
want = {r["workload"] for r in doc["results"]} | {doc["commit"]}
ran = {(r["workload"], r["nodes"]) for r in doc["results"]}
if any((e["workload"], e["nodes"]) in ran for e in ref["results"]):
    want.add("× kube-scheduler")
missing = sorted(w for w in want if w not in text)
if missing:
    sys.exit("missing from the picture: %s" % ", ".join(missing))
PY
  echo "ok   bench/plot $(basename "$json")"
done

printf '{"results": [{"workload": "x"}]}\n' >"$tmp/bad.json"
set +e
"$here/plot" "$tmp/bad.json" "$tmp/bad.svg" >"$tmp/out" 2>"$tmp/err"
rc=$?
set -e
if [ "$rc" -ne 2 ] || [ -s "$tmp/out" ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -q '^bench/plot: ' "$tmp/err"; then
  fail "bad input: exit $rc, stderr: $(cat "$tmp/err")"
fi
echo "ok   bench/plot bad input: $(cat "$tmp/err")"

# panel (d): a workload measured at two existing-pod counts on the same nodes gets its line there
python3 - "$tmp/d.json" <<'PY'
import json, sys
def result(size, existing, pps):
    r = {"workload": "SchedulingDeployments", "size": size, "nodes": 5000, "pods": 5000,
         "existing_pods": existing, "runs": 1, "pods_per_second": pps, "bound": 5000,
         "latency_us": {"p50": 10, "p90": 20, "p99": 30}, "peak_rss_bytes": 1, "bytes_per_node": 1,
         "cpu_cores": 1}
    return dict(r, all_runs=[dict(r)])
json.dump({"date": "2026-12-07T00:00:00Z", "commit": "abc1234", "runs_per_point": 1,
           "results": [result("5000Nodes", 0, 9000), result("5000Nodes/150kPods", 150000, 450)]},
          open(sys.argv[1], "w"))
PY
"$here/plot" "$tmp/d.json" "$tmp/d.svg" || fail "bench/plot with existing-pod sizes"
grep -q "(d) pods/s against the pods already bound" "$tmp/d.svg" || fail "no panel (d) in $tmp/d.svg"
grep -q "SchedulingDeployments, 5,000 nodes" "$tmp/d.svg" || fail "no line for SchedulingDeployments in (d)"
echo "ok   bench/plot panel (d): pods/s against the existing pods"

# bench/gen-workload-manifests.py: deployment-50's and deployment-91's pod-template-hashes are made
# only of digits, and must stay strings (a number there is a bad label value)
"$here/gen-workload-manifests.py" --nodes 3 --existing 50 --pending 50 --replicas 1 -o "$tmp/rs.yaml" ||
  fail "bench/gen-workload-manifests.py"
grep -q 'pod-template-hash: "[0-9]*"' "$tmp/rs.yaml" || fail "no hash made only of digits in $tmp/rs.yaml"
"$ksched" schedule --validate strict --seed 1 "$tmp/rs.yaml" >"$tmp/rs.out" 2>"$tmp/rs.err" ||
  { cat "$tmp/rs.err"; fail "ksched schedule of the generated manifests"; }
[ "$(grep -c '"status":"Scheduled"' "$tmp/rs.out")" -eq 50 ] ||
  { head -n 5 "$tmp/rs.out" "$tmp/rs.err"; fail "ksched schedule: not 50 pods Scheduled"; }
echo "ok   bench/gen-workload-manifests.py: 50 pending pods of 100 ReplicaSets scheduled"

# a result of today already there: run-all must write <date>-2 beside it, not over it
day=$(date -u +%Y-%m-%d)
mkdir "$tmp/out-dir"
echo '{"kept": true}' >"$tmp/out-dir/$day.json"
OUT=$tmp/out-dir RUNS=1 WORKLOADS=PreemptionBasic "$here/run-all" "$ksched" >"$tmp/run" 2>&1 ||
  { cat "$tmp/run"; fail "bench/run-all"; }
[ "$(cat "$tmp/out-dir/$day.json")" = '{"kept": true}' ] || fail "bench/run-all overwrote $day.json"
[ ! -e "$tmp/out-dir/$day.svg" ] || fail "bench/run-all wrote $day.svg beside another run's $day.json"
if [ "$(date -u +%Y-%m-%d)" = "$day" ]; then # (after midnight UTC it names its files after the next day)
  [ -s "$tmp/out-dir/$day-2.json" ] || fail "bench/run-all did not write $day-2.json: $(ls "$tmp/out-dir")"
  [ -s "$tmp/out-dir/$day-2.svg" ] ||
    fail "bench/run-all did not write $day-2.svg: $(ls "$tmp/out-dir")"
  grep -q "^wrote $tmp/out-dir/$day-2.json and $tmp/out-dir/$day-2.svg\$" "$tmp/run" ||
    fail "bench/run-all did not say where it wrote: $(tail -n 1 "$tmp/run")"
fi
echo "ok   bench/run-all: $(cd "$tmp/out-dir" && echo *)"
