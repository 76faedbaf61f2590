#!/usr/bin/python3
"""Run every conformance scenario through `ksched schedule --explain --seed 1` and check
its .expect.json: the feasible set exactly, the top-score set equal to `best`, the chosen
node in `best`, Unschedulable message phrases, and preemption outcomes (the victims, the
nominated node, or per pod the first nomination: `nominated`), the phrases of the first
Unschedulable pod group line (`group_reason_substrings`); for a malformed
input that names its error (`line`, `field`, `message`), that exact error.

Scenarios listed in pending.txt ("name: reason") need plugins that have not landed yet:
they are run and reported, and one that starts passing fails the run so the list only
shrinks; a name pending.txt lists that its own folder (test/conformance) lacks fails too.
Usage: check_scenarios.py KSCHED SCENARIO_DIR PENDING_FILE
"""
import glob
import json
import os
import subprocess
import sys


def load_pending(path):
    pending = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                name, _, reason = line.partition(":")
                pending[name.strip()] = reason.strip()
    return pending


def node_names(yaml_path):
    """Names of the Node documents (the scenarios are plain, one field per line)."""
    names, kind, in_meta = [], None, False
    with open(yaml_path) as f:
        for raw in f:
            line = raw.rstrip("\n")
            if line.startswith("---"):
                kind, in_meta = None, False
            elif line.startswith("kind:"):
                kind = line.split(":", 1)[1].strip()
            elif line.startswith("metadata:"):
                in_meta = True
            elif in_meta and line.startswith("  name:") and kind == "Node":
                names.append(line.split(":", 1)[1].strip().strip("'\""))
                in_meta = False
            elif line and not line.startswith(" "):
                in_meta = False
    return names


def check(ksched, yaml_path, expect):
    proc = subprocess.run([ksched, "schedule", "--explain", "--seed", "1"] + expect.get("flags", []) + [yaml_path],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        return ["exit %d: %s" % (proc.returncode, proc.stderr.strip())]
    lines = [json.loads(l) for l in proc.stdout.splitlines() if l.strip()]
    pod = expect["pod"]
    problems = []
    attempts = [l for l in lines if l.get("pod") == pod and "attempt" in l]
    if not attempts:
        return ["no --explain line for %s" % pod]
    first = attempts[0]
    scores, filtered = first["scores"], first["filtered"]
    if sorted(scores) != sorted(expect["feasible"]):
        problems.append("feasible %s, want %s" % (sorted(scores), sorted(expect["feasible"])))
    nodes = expect.get("listed_nodes") or node_names(yaml_path)
    if sorted(list(scores) + list(filtered)) != sorted(nodes):
        problems.append("scores+filtered name %s, want every node %s" % (sorted(list(scores) + list(filtered)), sorted(nodes)))
    if scores:
        top = max(v["total"] for v in scores.values())
        best = sorted(n for n, v in scores.items() if v["total"] == top)
        if best != sorted(expect["best"]):
            problems.append("best %s, want %s (scores %s)" % (best, sorted(expect["best"]), scores))
    outcome = [l for l in lines if l.get("pod") == pod and "status" in l]
    if "bound" in expect:
        bound = sorted(l["pod"] for l in lines if "pod" in l and l.get("status") == "Scheduled")
        if bound != sorted(expect["bound"]):
            problems.append("bound %s, want exactly %s" % (bound, sorted(expect["bound"])))
    if expect.get("nominated_node"):
        nominated = [l["node"] for l in outcome if l["status"] == "Nominated"]
        if nominated[:1] != [expect["nominated_node"]]:
            problems.append("nominated %s, want %s" % (nominated, expect["nominated_node"]))
        victims = sorted(l["pod"] for l in lines if l.get("status") == "Preempted")
        if victims != sorted(expect.get("victims", [])):
            problems.append("victims %s, want %s" % (victims, sorted(expect.get("victims", []))))
    for member, node in sorted(expect.get("nominated", {}).items()):
        got = [l["node"] for l in lines if l.get("pod") == member and l.get("status") == "Nominated"]
        if got[:1] != [node]:
            problems.append("%s nominated %s, want %s first" % (member, got, node))
    if "nominated" in expect and not expect.get("nominated_node"):
        victims = sorted(l["pod"] for l in lines if l.get("status") == "Preempted")
        if victims != sorted(expect.get("victims", [])):
            problems.append("victims %s, want %s" % (victims, sorted(expect.get("victims", []))))
    if expect.get("group_reason_substrings"):
        groups = [l for l in lines if "podGroup" in l and l.get("status") == "Unschedulable"]
        msg = groups[0].get("message", "") if groups else ""
        for phrase in expect["group_reason_substrings"]:
            if phrase not in msg:
                problems.append("group message %r lacks %r" % (msg, phrase))
    if expect.get("unschedulable"):
        unsched = [l for l in outcome if l["status"] == "Unschedulable"]
        if not unsched:
            problems.append("no Unschedulable line (got %s)" % outcome)
        else:
            msg = unsched[0].get("message", "")
            for phrase in expect.get("reason_substrings", []):
                if phrase not in msg:
                    problems.append("message %r lacks %r" % (msg, phrase))
    elif not expect.get("nominated_node") and "nominated" not in expect:
        sched = [l for l in outcome if l["status"] == "Scheduled"]
        if not sched:
            problems.append("not scheduled (got %s)" % outcome)
        elif sched[0]["node"] not in expect["best"]:
            problems.append("scheduled on %s, want one of %s" % (sched[0]["node"], expect["best"]))
    return problems


def check_error(ksched, yaml_path, expect):
    """A malformed input with the error it must give: exit 2, nothing on standard output,
    and exactly "ksched: FILE:LINE: FIELD: MESSAGE" on standard error."""
    proc = subprocess.run([ksched, "schedule", "--seed", "1", yaml_path],
                          capture_output=True, text=True, timeout=120)
    want = "ksched: %s:%d: %s: %s\n" % (yaml_path, expect["line"], expect["field"], expect["message"])
    problems = []
    if proc.returncode != 2:
        problems.append("exit %d, want 2" % proc.returncode)
    if proc.stdout:
        problems.append("standard output not empty: %r" % proc.stdout[:200])
    if proc.stderr != want:
        problems.append("standard error %r, want %r" % (proc.stderr, want))
    return problems


def main():
    ksched, scenario_dir, pending_file = sys.argv[1:4]
    pending = load_pending(pending_file)
    passed = failed = xfail = 0
    for expect_path in sorted(glob.glob(os.path.join(scenario_dir, "*.expect.json"))):
        name = os.path.basename(expect_path)[: -len(".expect.json")]
        with open(expect_path) as f:
            expect = json.load(f)
        if expect.get("error") and "message" not in expect:
            continue  # malformed inputs without a message: load_all.sh checks the error's form
        if expect.get("error"):
            problems = check_error(ksched, os.path.join(scenario_dir, name + ".yaml"), expect)
        else:
            problems = check(ksched, os.path.join(scenario_dir, name + ".yaml"), expect)
        if name in pending:
            if problems:
                xfail += 1
                print("PENDING %s (%s)" % (name, pending[name]))
            else:
                failed += 1
                print("FAIL %s: passes now; remove it from pending.txt" % name)
        elif problems:
            failed += 1
            print("FAIL %s:\n  %s" % (name, "\n  ".join(problems)))
        else:
            passed += 1
    # pending.txt is the project's list for its own copy (test/conformance, beside test/scenarios/):
    # another folder of cases (the shared one CI also runs) need not hold every name in it
    own = os.path.dirname(os.path.dirname(os.path.abspath(pending_file))) == \
        os.path.dirname(os.path.abspath(scenario_dir))
    stale = [n for n in pending if own and not os.path.exists(os.path.join(scenario_dir, n + ".yaml"))]
    for n in stale:
        failed += 1
        print("FAIL pending.txt names %s, which is not a scenario" % n)
    print("%d passed, %d failed, %d skipped" % (passed, failed, xfail))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
