#!/usr/bin/env bash
# `ksched schedule --explain` writes one JSON object per line while binder threads report
# outcomes concurrently with the scheduling thread's attempt records. This generates a
# cluster large enough for the two to overlap and checks that every line parses on its own
# and that every pod gets exactly one final outcome.
# Usage: explain_json.sh KSCHED
set -eu
ksched=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

python3 - "$dir/cluster.yaml" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(40):
        f.write("---\napiVersion: v1\nkind: Node\nmetadata: {name: node-%d, labels: {zone: z%d}}\n"
                "status: {allocatable: {cpu: '8', memory: 16Gi, pods: '110'}}\n" % (i, i % 3))
    for i in range(400):
        f.write("---\napiVersion: v1\nkind: Pod\nmetadata: {name: p-%d, namespace: default}\n"
                "spec:\n  containers:\n  - name: c\n    image: img\n"
                "    resources: {requests: {cpu: 100m, memory: 64Mi}}\n" % i)
PY

for run in 1 2 3 4 5; do
  "$ksched" schedule --explain --seed "$run" "$dir/cluster.yaml" >"$dir/out" </dev/null
  python3 - "$dir/out" <<'PY'
import json, sys
final = {}
for n, line in enumerate(open(sys.argv[1]), 1):
    try:
        rec = json.loads(line)
    except ValueError as e:
        sys.exit("line %d is not one JSON object (%s): %.200s" % (n, e, line))
    if "status" in rec:
        final[rec["pod"]] = final.get(rec["pod"], 0) + 1
if len(final) != 400 or any(v != 1 for v in final.values()):
    sys.exit("want one outcome for each of 400 pods, got %d pods" % len(final))
PY
done
echo "explain output: 5 runs, every line one JSON object"
