#!/usr/bin/env bash
# End-to-end checks of the storage plugins through the real binary: every DATA/*.yaml runs
# through `ksched schedule --explain --seed 1` and its header lines are checked:
#   # expect: NS/POD Scheduled NODE            the pod's last outcome is Scheduled on NODE
#   # expect: NS/POD Unschedulable TEXT        its last outcome is Unschedulable, message contains TEXT
#   # expect-attempt: NS/POD NODE TEXT         its first attempt filtered NODE with reason TEXT
# Usage: volumes.sh KSCHED DATA_DIR (test/data/volumes)
set -u
ksched=$1
data=$2
pass=0 fail=0
out=$(mktemp) errf=$(mktemp) check=$(mktemp)
trap 'rm -f "$out" "$errf" "$check"' EXIT

cat >"$check" <<'PY'
import json, sys
path, kind, rest = sys.argv[1], sys.argv[2], sys.argv[3]
lines = [json.loads(l) for l in open(path) if l.strip()]
pod, _, arg = rest.partition(" ")
if kind == "# expect":
    status, _, want = arg.partition(" ")
    got = [l for l in lines if l.get("pod") == pod and "status" in l]
    if not got:
        sys.exit("no outcome for %s" % pod)
    last = got[-1]
    if last["status"] != status:
        sys.exit("%s: status %s, want %s (%s)" % (pod, last["status"], status, last))
    if status == "Scheduled" and last.get("node") != want:
        sys.exit("%s: on %s, want %s" % (pod, last.get("node"), want))
    if status == "Unschedulable" and want not in last.get("message", ""):
        sys.exit("%s: message %r lacks %r" % (pod, last.get("message"), want))
else:
    node, _, want = arg.partition(" ")
    attempts = [l for l in lines if l.get("pod") == pod and "attempt" in l]
    if not attempts:
        sys.exit("no attempt for %s" % pod)
    got = attempts[0]["filtered"].get(node)
    if got != want:
        sys.exit("%s: first attempt filtered %s with %r, want %r" % (pod, node, got, want))
PY

for f in "$data"/*.yaml; do
  name=$(basename "$f" .yaml)
  if ! "$ksched" schedule --explain --seed 1 "$f" >"$out" 2>"$errf" </dev/null; then
    fail=$((fail + 1))
    echo "FAIL $name: $(cat "$errf")"
    continue
  fi
  while IFS= read -r line; do
    kind=${line%%:*}
    rest=${line#*: }
    if msg=$(python3 "$check" "$out" "$kind" "$rest" 2>&1); then
      pass=$((pass + 1))
    else
      fail=$((fail + 1))
      echo "FAIL $name: $line"
      echo "    $msg"
    fi
  done < <(grep -E '^# expect(-attempt)?: ' "$f")
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]
