#!/usr/bin/env bash
# `ksched schedule -o table`: the outcome table, and with --explain one section per attempt
# (best nodes with each plugin's weighted score, filtered nodes grouped by reason, then the
# outcome lines). Checks the chosen node, the row order (total descending, ties by node name
# in natural order), a plugin's column, the grouped reasons and their counts, the
# preemption lines, a PodGroup cycle's section, that a seeded run prints the same bytes each
# time, and the -o usage.
# Usage: explain_table.sh KSCHED CONFORMANCE_DIR
set -eu
ksched=$1
cases=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# 17 nodes of 4 cpu: n3 n7 n11 n17 have 1 cpu (Insufficient cpu for a 2-cpu pod), n5 n9 a
# NoSchedule taint; n2 and n14 carry disk=ssd, which the pods prefer (NodeAffinity 100 x 2).
# default/huge fits nowhere; its priority puts it first, so that default/want's binding
# cannot come while huge is in flight (that event may give huge a second attempt).
python3 - "$dir/cluster.yaml" "$dir/many.yaml" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(1, 18):
        cpu = 1 if i in (3, 7, 11, 17) else 4
        labels = "{disk: ssd}" if i in (2, 14) else "{}"
        taints = "[{key: dedicated, value: gpu, effect: NoSchedule}]" if i in (5, 9) else "[]"
        f.write("---\napiVersion: v1\nkind: Node\nmetadata: {name: n%d, labels: %s}\n"
                "spec: {taints: %s}\nstatus: {allocatable: {cpu: '%d', memory: 8Gi, pods: '110'}}\n"
                % (i, labels, taints, cpu))
    for name, cpu, prio in (("want", "2", 0), ("huge", "100", 10)):
        f.write("---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default}\nspec:\n"
                "  priority: %d\n"
                "  affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 10,\n"
                "    preference: {matchExpressions: [{key: disk, operator: In, values: [ssd]}]}}]}}\n"
                "  containers:\n  - name: c\n    image: img\n    resources: {requests: {cpu: '%s'}}\n"
                % (name, prio, cpu))
with open(sys.argv[2], "w") as f:
    for i in range(30):
        f.write("---\napiVersion: v1\nkind: Node\nmetadata: {name: m%d}\n"
                "status: {allocatable: {cpu: '%d', memory: 16Gi, pods: '110'}}\n" % (i, 2 + i % 5))
    for i in range(150):
        f.write("---\napiVersion: v1\nkind: Pod\nmetadata: {name: p%d, namespace: default}\nspec:\n"
                "  containers:\n  - name: c\n    image: img\n    resources: {requests: {cpu: %dm}}\n"
                % (i, 100 + 50 * (i % 7)))
PY

"$ksched" schedule --explain -o table --seed 1 "$dir/cluster.yaml" >"$dir/explain.txt" </dev/null
"$ksched" schedule -o table --seed 1 "$dir/cluster.yaml" >"$dir/plain.txt" </dev/null
for c in podtopologyspread-hostname-maxskew-2 podtopologyspread-score-filtered-node-still-counted \
  preemption-basic-lowest-priority-node nodeaffinity-matchfields-node-name; do
  "$ksched" schedule --explain --output table --seed 1 "$cases/$c.yaml" >"$dir/$c.txt" </dev/null
done

python3 - "$dir" <<'PY'
import os, re, sys
d = sys.argv[1]
failures = []

def check(ok, what, text=""):
    if not ok:
        failures.append(what + ("\n" + text if text else ""))

def sections(path):
    """Blank-line separated blocks, by their first line."""
    text = open(path).read()
    for line in text.splitlines():
        # scheduler messages are as long as they are; the tables fit 100 columns
        check(len(line) <= 100 or line.startswith("  => "), "%s: line wider than 100 columns: %r" % (path, line))
        check(line == line.rstrip(), "%s: trailing blanks: %r" % (path, line))
    return [b.splitlines() for b in text.strip("\n").split("\n\n")], text

def score_rows(block):
    """(header tokens, [(starred, node, {column: value})]) of the block's score table."""
    i = next(k for k, l in enumerate(block) if l.split()[:1] == ["NODE"])
    head = block[i].split()
    rows = []
    for l in block[i + 1:]:
        if not re.match(r"^  [* ] (?!\.\.\. )\S", l):
            break
        star, toks = l[2] == "*", l[4:].split()
        rows.append((star, toks[0], dict(zip(head[1:], map(int, toks[1:])))))
    return head, rows

def reasons(block):
    i = next((k for k, l in enumerate(block) if l.split()[:2] == ["FILTERED", "REASON"]), None)
    out = []
    for l in block[i + 1:] if i is not None else []:
        m = re.match(r"^ +(\d+)  (.+?)  +(\S.*)$", l)
        if not m:
            break
        out.append((int(m.group(1)), m.group(2), m.group(3)))
    return out

def outcomes(block):
    return [l[5:] for l in block if l.startswith("  => ")]

# --- the generated cluster, --explain ---
blocks, text = sections(os.path.join(d, "explain.txt"))
check([re.split(r" \(|:", b[0])[0] for b in blocks] == ["default/huge", "Score columns of profile default-scheduler",
                                                       "default/want"], "explain: sections in cycle order, the legend "
      "before the first score table", text)
huge, legend, want = (blocks + [["?"]] * 3)[:3]
check(legend[0].startswith("Score columns of profile default-scheduler:"), "legend title", text)
check("NA  NodeAffinity  x2" in re.sub(r" {2,}", "  ", "\n".join(legend)), "legend: NA column, weight", text)
check(want[0] == "default/want (attempt 1): 11 of 17 nodes feasible", "want: header", text)
head, rows = score_rows(want)
check(head[0] == "NODE" and head[-1] == "TOTAL" and "NA" in head and "NRF" in head, "want: columns", text)
order = [r[1] for r in rows]
check(order == ["n2", "n14", "n1", "n4", "n6", "n8", "n10", "n12", "n13", "n15"], "want: row order %s" % order, text)
check(all(r[2]["NA"] == (200 if r[1] in ("n2", "n14") else 0) for r in rows), "want: NodeAffinity column", text)
check(all(r[2]["TOTAL"] == sum(v for k, v in r[2].items() if k != "TOTAL") for r in rows), "want: totals", text)
check(rows[0][2]["TOTAL"] == rows[1][2]["TOTAL"] == rows[2][2]["TOTAL"] + 200, "want: totals differ by NA", text)
starred = [r[1] for r in rows if r[0]]
check(len(starred) == 1 and starred[0] in ("n2", "n14"), "want: one starred best node %s" % starred, text)
check("    ... and 1 more feasible node" in want, "want: more feasible nodes", text)
check(reasons(want) == [(4, "Insufficient cpu", "n3, n7, n11 and 1 more"),
                        (2, "node(s) had untolerated taint {dedicated: gpu}", "n5, n9")],
      "want: grouped reasons %s" % reasons(want), text)
check(outcomes(want) == ["Scheduled: %s (picked at random among 2 nodes tied at %d)"
                         % (starred[0] if starred else "?", rows[0][2]["TOTAL"])], "want: outcome", text)
check(huge[0] == "default/huge (attempt 1): 0 of 17 nodes feasible", "huge: header", text)
check(not any(l.split()[:1] == ["NODE"] for l in huge), "huge: no score table", text)
check(reasons(huge) == [(15, "Insufficient cpu", "n1, n2, n3 and 12 more"),
                        (2, "node(s) had untolerated taint {dedicated: gpu}", "n5, n9")],
      "huge: grouped reasons %s" % reasons(huge), text)
o = outcomes(huge)
check(len(o) == 1 and o[0].startswith("Unschedulable: 0/17 nodes are available: 15 Insufficient cpu, "
                                      "2 node(s) had untolerated taint {dedicated: gpu}."), "huge: outcome", text)

# --- the generated cluster, outcomes only ---
plain = open(os.path.join(d, "plain.txt")).read().splitlines()
check(len(plain) == 3 and plain[0].split() == ["POD", "STATUS", "NODE", "MESSAGE"], "plain: header", "\n".join(plain))
if len(plain) == 3:
    col = plain[0].index("MESSAGE")
    check(plain[1].startswith("default/huge") and plain[1][col:].startswith("0/17 nodes are available")
          and plain[1][:col].split() == ["default/huge", "Unschedulable"], "plain: huge row, aligned", "\n".join(plain))
    check(re.match(r"^default/want +Scheduled +(n2|n14)$", plain[2]), "plain: want row", "\n".join(plain))

# --- conformance cases ---
blocks, text = sections(os.path.join(d, "podtopologyspread-hostname-maxskew-2.txt"))
b = blocks[-1]
head, rows = score_rows(b)
check([r[1] for r in rows] == ["node-b", "node-x"], "maxskew-2: tied rows by name", text)
starred = [r[1] for r in rows if r[0]]
check(len(starred) == 1 and outcomes(b) == ["Scheduled: %s (picked at random among 2 nodes tied at 498)"
                                            % starred[0]], "maxskew-2: outcome", text)
check(reasons(b) == [(2, "node(s) didn't match pod topology spread constraints", "node-a, node-y")],
      "maxskew-2: reasons", text)

blocks, text = sections(os.path.join(d, "podtopologyspread-score-filtered-node-still-counted.txt"))
b = blocks[-1]
head, rows = score_rows(b)
check([(r[0], r[1], r[2]["PTS"], r[2]["TOTAL"]) for r in rows] ==
      [(True, "node-x", 200, 698), (False, "node-a", 150, 648), (False, "node-b", 150, 648)],
      "filtered-node-still-counted: PodTopologySpread column", text)
check(outcomes(b) == ["Scheduled: node-x"], "filtered-node-still-counted: outcome", text)
check(reasons(b) == [(1, "node(s) had untolerated taint {maintenance: true}", "node-y")],
      "filtered-node-still-counted: reasons", text)

# nodes a PreFilter result left out carry the diagnosis's status for every node not listed
blocks, text = sections(os.path.join(d, "nodeaffinity-matchfields-node-name.txt"))
b = blocks[-1]
check(b[0] == "default/ds-pod (attempt 1): 1 of 3 nodes feasible", "matchfields: header", text)
check(reasons(b) == [(2, "node(s) didn't satisfy plugin(s) [NodeAffinity]", "node1, node3")],
      "matchfields: reasons of nodes left out by PreFilter", text)
check(outcomes(b) == ["Scheduled: node2"], "matchfields: outcome", text)

blocks, text = sections(os.path.join(d, "preemption-basic-lowest-priority-node.txt"))
first = next(b for b in blocks if b[0].startswith("default/p (attempt 1)"))
second = next(b for b in blocks if b[0].startswith("default/p (attempt 2)"))
check(first[0] == "default/p (attempt 1): 0 of 3 nodes feasible", "preemption: first header", text)
check(reasons(first)[0] == (3, "Insufficient cpu", "node1, node2, node3"), "preemption: reasons", text)
o = outcomes(first)
check(sorted(o[:2]) == ["Preempted: default/p1-1 on node1", "Preempted: default/p1-2 on node1"]
      and o[2:3] == ["Nominated: node1"] and len(o) == 4 and o[3].startswith("Unschedulable: 0/3 nodes"),
      "preemption: victims, nomination, then the failure", text)
check(outcomes(second) == ["Scheduled: node1"] and score_rows(second)[1][0][:2] == (True, "node1"),
      "preemption: second attempt", text)

if failures:
    sys.exit("\n\n".join(failures))
PY

# a seeded run prints the same bytes, whichever binder reports first
for run in 1 2 3; do
  "$ksched" schedule --explain -o table --seed 3 "$dir/many.yaml" >"$dir/many.$run" </dev/null
  "$ksched" schedule -o table --seed 3 "$dir/many.yaml" >"$dir/many-plain.$run" </dev/null
done
for run in 2 3; do
  cmp -s "$dir/many.1" "$dir/many.$run" || { echo "--explain -o table differs between seeded runs"; exit 1; }
  cmp -s "$dir/many-plain.1" "$dir/many-plain.$run" || { echo "-o table differs between seeded runs"; exit 1; }
done
[ "$(grep -c '^default/p[0-9]* (attempt' "$dir/many.1")" -ge 150 ] || { echo "many: sections missing"; exit 1; }
[ "$(grep -c 'Scheduled' "$dir/many-plain.1")" -eq "$(grep -c '=> Scheduled' "$dir/many.1")" ] ||
  { echo "many: outcome table and explain sections disagree"; exit 1; }

# a PodGroup cycle's section: the group and its outcome, and a rack-constrained group's placements
# (the chosen one starred, columns without trailing blanks)
"$ksched" schedule --explain -o table --seed 1 --feature-gates GenericWorkload=true,TopologyAwareWorkloadScheduling=true \
  "$cases/podgroup-topology-gang-in-one-rack.yaml" >"$dir/gang.txt"
grep -qx 'pod group default/trainers: 3 members, 0 scheduled before => Scheduled' "$dir/gang.txt" &&
  grep -qx '  placements (topology.example.com/rack)' "$dir/gang.txt" &&
  grep -Eqx '  rack-a\* +2  feasible +3 +[0-9]+' "$dir/gang.txt" &&
  grep -Eqx '  rack-b +2  not needed' "$dir/gang.txt" || { echo "pod group section:"; cat "$dir/gang.txt"; exit 1; }
"$ksched" schedule --explain -o table --seed 1 --feature-gates GenericWorkload=true \
  "$cases/podgroup-gang-that-does-not-fit-binds-nothing.yaml" >"$dir/gang2.txt"
grep -qx 'pod group default/trainers: 3 members, 0 scheduled before => Unschedulable: pod group is unschedulable, minCount (3) cannot be satisfied: 2 scheduled, 0 remaining' "$dir/gang2.txt" ||
  { echo "unschedulable pod group section:"; cat "$dir/gang2.txt"; exit 1; }

# spellings of the flag, and its usage errors (exit 2, nothing on standard output)
f=$cases/podtopologyspread-hostname-maxskew-2.yaml
"$ksched" schedule --explain -otable --seed 1 "$f" | cmp -s - "$dir/podtopologyspread-hostname-maxskew-2.txt" ||
  { echo "-otable differs from --output table"; exit 1; }
"$ksched" schedule --explain --output=table --seed 1 "$f" | cmp -s - "$dir/podtopologyspread-hostname-maxskew-2.txt" ||
  { echo "--output=table differs from --output table"; exit 1; }
[ "$("$ksched" schedule -o json --seed 1 "$f")" = "$("$ksched" schedule --seed 1 "$f")" ] ||
  { echo "-o json differs from the default output"; exit 1; }
for bad in "-o yaml" "--output=wide" "-o"; do
  set +e
  # shellcheck disable=SC2086
  "$ksched" schedule $bad "$f" >"$dir/out" 2>"$dir/err"
  rc=$?
  set -e
  if [ $rc -ne 2 ] || [ -s "$dir/out" ] || ! grep -q "json or table" "$dir/err"; then
    echo "schedule $bad: want exit 2, no output and a message naming json and table; got $rc: $(cat "$dir/err")"
    exit 1
  fi
done
echo "explain table: sections, columns, reasons, outcomes, determinism and -o usage checked"
