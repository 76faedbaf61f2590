#!/usr/bin/env bash
# `ksched schedule` on cluster dumps (`kubectl get nodes,pods -A -o yaml`):
#  - DATA/dump/kubectl-get-nodes-pods.yaml (see its header) loads with exit 0 and one note for
#    the claims its bound pods name, counts those pods, and answers the pending ones;
#  - a List of 10,000+ objects written by GEN (scripts/gen-cluster-dump.py) loads and every
#    pending pod gets an outcome;
#  - alias bombs stay refused inside a List and in a document after one.
# Usage: cluster_dump.sh KSCHED DATA_DIR GEN
set -u
ksched=$1
data=$2
gen=$3
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# $1: JSON lines file, $2: pod, $3: status, $4: node or exact message ("" for any node)
outcome() {
  python3 - "$@" <<'PY'
import json, sys
path, pod, status, want = sys.argv[1:5]
got = [json.loads(l) for l in open(path) if l.strip()]
got = [l for l in got if l.get("pod") == pod and "status" in l]
if not got:
    sys.exit("no outcome for %s" % pod)
last = got[-1]
if last["status"] != status:
    sys.exit("%s: %s, want %s" % (pod, last, status))
key = "node" if status == "Scheduled" else "message"
if want and last.get(key) != want:
    sys.exit("%s: %s %r, want %r" % (pod, key, last.get(key), want))
PY
}

# 1. the small dump
dump=$data/dump/kubectl-get-nodes-pods.yaml
"$ksched" schedule --seed 1 "$dump" >"$tmp/out" 2>"$tmp/err" </dev/null
rc=$?
[ $rc -eq 0 ] && ok || bad "small dump: exit $rc: $(cat "$tmp/err")"
want='ksched: note: 2 bound pods name objects the input lacks, kept as bound: PersistentVolumeClaim "default/data-postgres-0" (and 1 more)'
if [ "$(cat "$tmp/err")" = "$want" ]; then ok; else bad "small dump: stderr $(cat "$tmp/err"), want one line: $want"; fi
while IFS='|' read -r pod status want; do
  if msg=$(outcome "$tmp/out" "$pod" "$status" "$want" 2>&1); then ok; else bad "small dump: $msg"; fi
done <<'EOF'
shop/web-5f6e7d8c9b-k4m8t|Unschedulable|0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.
shop/web-5f6e7d8c9b-r7n2v|Scheduled|node-00000
default/postgres-2|Unschedulable|0/2 nodes are available: persistentvolumeclaim "data-postgres-2" not found. no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.
EOF
n=$(grep -c . "$tmp/out")
[ "$n" -eq 3 ] && ok || bad "small dump: $n outcome lines, want 3 (bound and finished pods are not scheduled)"

# 2. a List of 10,100 objects (about 56 MB, more than 4 million YAML nodes)
python3 "$gen" --nodes 500 --pods 9600 --pending 40 -o "$tmp/large.yaml" || bad "generator failed"
"$ksched" schedule --seed 1 "$tmp/large.yaml" >"$tmp/out" 2>"$tmp/err" </dev/null
rc=$?
[ $rc -eq 0 ] && ok || bad "large List: exit $rc: $(head -c 500 "$tmp/err")"
pending=$(python3 -c '
import json, sys
print(len({json.loads(l)["pod"] for l in open(sys.argv[1]) if l.strip()}))' "$tmp/out")
[ "$pending" = 40 ] && ok || bad "large List: outcomes for $pending pods, want the 40 pending ones"
grep -q '^ksched: note: .* bound pods name objects the input lacks' "$tmp/err" && ok || bad "large List: no note"
rm -f "$tmp/large.yaml"

# 3. alias bombs inside a List's items and in a document after a List
bomb='a: &a [x, x, x, x, x, x, x, x, x, x]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]
g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]'
{
  printf 'apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: n1}\n'
  printf -- '- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data:\n'
  sed 's/^/    /' <<<"$bomb"
} >"$tmp/list-bomb.yaml"
printf 'apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: n1}}\n---\n%s\n' \
  "$bomb" >"$tmp/doc-bomb.yaml"
for f in list-bomb doc-bomb; do
  "$ksched" schedule "$tmp/$f.yaml" >"$tmp/out" 2>"$tmp/err" </dev/null
  rc=$?
  if [ $rc -eq 2 ] && [ ! -s "$tmp/out" ] && grep -q 'document too large once aliases are expanded' "$tmp/err"; then
    ok
  else
    bad "$f: exit $rc: $(cat "$tmp/err")"
  fi
done

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
