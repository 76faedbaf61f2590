#!/usr/bin/env python3
"""Where a scheduling cycle's time goes, per pod, from a `perf record -g` of `ksched bench`.

usage: perf/cycle_split.py PERF_DATA CYCLES FREQUENCY

Counts the samples whose call chain passes through ks_scheduler_schedule_one (the scheduling
thread's cycles), puts each in the first part below whose functions are on its chain under that
frame, and prints a Markdown table of microseconds per cycle: samples / FREQUENCY / CYCLES. CYCLES
is every cycle the recording covers (the bench's placed and measured pods when each is scheduled
once); FREQUENCY is perf's -F. Example, at 5,000 nodes:

    perf record -F 4000 -g -o /tmp/p.data -- build/ksched bench --workload SchedulingBasic \\
        --nodes 5000 --pods 40000
    perf/cycle_split.py /tmp/p.data 41000 4000
"""
import collections
import subprocess
import sys

PARTS = [
    ("preemption: the index's candidate tree (changed and unknown nodes' verdicts, window, the choice's victims)",
     ["ks_preempt_indexed"]),
    ("preemption: dry runs (verdicts remembered or computed)", ["ks_preempt_dry_run"]),
    ("preemption: choosing the candidate", ["ks_preempt_select"]),
    ("preemption: victims handed to the evictor, nominations", ["ks_preempt_prepare"]),
    ("preemption: eligibility, potential nodes, memo key, message", ["ks_fw_run_post_filter"]),
    ("FitError message", ["ks__fit_error_message"]),
    ("back to the queue as unschedulable (Events)", ["ks__failure"]),
    ("nominating the preemptor", ["ks_nominator_add", "ks__emit"]),
    ("snapshot refresh", ["ks_cache_refresh"]),
    ("PreFilter", ["ks_fw_run_pre_filter"]),
    ("signature and class lookup", ["ks_fw_sign", "ks_index_lookup"]),
    ("PreScore", ["ks_fw_run_pre_score"]),
    ("index update: changed nodes' Filter and Score, tree", [
        "eval_nodes", "ks_index_pending", "ks_index_tree_set", "ks_index_tree_build", "ks__fw_tally_merge",
        "ks__fw_tally_reset", "ks_workers_run"]),
    ("select: window, ties, draw", ["ks_index_tree_window", "ks_index_tree_tie"]),
    ("index: the rest of its answer (grouped diagnosis when no node fits)", ["ks__index_cycle"]),
    ("per-node Filter (cycles the index did not answer)", ["filter_phase", "ks__nominated_prepare"]),
    ("per-node Score and selectHost", ["ks__prioritize"]),
    ("assume, Reserve, Permit", ["ks_cache_assume_pod", "pod_put", "ks_fw_run_reserve", "ks_fw_run_permit",
                                 "ks_nominator_remove"]),
    ("hand-off to a binder", ["ks__bind_async", "ks__bind_flush", "__sched_yield"]),
    ("queue pop", ["ks_queue_pop"]),
    ("already-assumed check", ["ks_cache_is_assumed"]),
    ("metrics: clock reads and counters", ["clock_gettime", "__vdso_clock_gettime", "ks_metric_observe_n",
                                           "ks_metric_count_sw", "ks_metric_observe_sw"]),
]
ROOT = "ks_scheduler_schedule_one"


def chains(data):
    out = subprocess.run(["perf", "script", "-i", data, "-F", "ip,sym"], capture_output=True, text=True,
                         check=True).stdout
    for block in out.split("\n\n"):
        syms = []
        for line in block.strip().splitlines():
            fields = line.split(None, 1)
            if len(fields) == 2:
                syms.append(fields[1].split("+")[0].split("@")[0])
        yield syms


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.split("\n\n")[1])
    data, cycles, freq = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    counts, total = collections.Counter(), 0
    for syms in chains(data):
        if ROOT not in syms:
            continue
        below = set(syms[:syms.index(ROOT)])
        total += 1
        counts[next((name for name, funcs in PARTS if below.intersection(funcs)), "other")] += 1
    if not total:
        sys.exit("cycle_split.py: no sample under %s in %s" % (ROOT, data))
    per = total / freq / cycles * 1e6
    print("scheduling thread: %.2f µs per cycle (%d samples)\n" % (per, total))
    print("| part | µs per cycle | share |\n| --- | --- | --- |")
    for name in [p[0] for p in PARTS] + ["other"]:
        if counts[name]:
            print("| %s | %.2f | %.0f%% |" % (name, per * counts[name] / total, 100.0 * counts[name] / total))


if __name__ == "__main__":
    main()
