#!/usr/bin/env python3
"""bench/pair.py - compare two ksched binaries on one workload with paired, alternating runs.

usage: bench/pair.py OLD NEW [--workload W] [--nodes N] [--runs R] [-- extra ksched bench flags]

Runs `ksched bench --json --quiet` with OLD and NEW in turn (one unmeasured warm-up each,
then R pairs: OLD NEW OLD NEW ...), so a machine whose speed drifts (other jobs on a shared
box) slows both sides alike, and prints the medians of each side's own figures and the
median of the per-pair ratios NEW/OLD:
  pods/s            the bench's pods_per_second (the measured window only)
  p50, p99          scheduling-cycle latency in microseconds
  cpu us/pod        process CPU time over the window per measured pod (less sensitive to
                    other processes than wall time: what the scheduler spent, not waited)
  peak RSS MB       getrusage's peak resident set
Exit status 1 if any run failed (its stderr is shown).
"""
import json
import statistics
import subprocess
import sys


def run(binary, workload, nodes, extra):
    cmd = [binary, "bench", "--workload", workload, "--nodes", str(nodes), "--json", "--quiet"] + extra
    p = subprocess.run(cmd, capture_output=True, text=True)
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode != 0 or not lines:
        sys.stderr.write("pair.py: %s failed (%d):\n%s" % (" ".join(cmd), p.returncode, p.stderr))
        return None
    r = json.loads(lines[-1])
    return {
        "pods/s": r["pods_per_second"],
        "p50 us": r["latency_us"]["p50"],
        "p99 us": r["latency_us"]["p99"],
        "cpu us/pod": r["cpu_cores"] * r["seconds"] / max(r["pods"], 1) * 1e6,
        "peak RSS MB": r["peak_rss_bytes"] / 1e6,
    }


def main(argv):
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1 :]
    args = {"--workload": "SchedulingBasic", "--nodes": "5000", "--runs": "5"}
    pos = []
    i = 0
    while i < len(argv):
        if argv[i] in args and i + 1 < len(argv):
            args[argv[i]] = argv[i + 1]
            i += 2
        else:
            pos.append(argv[i])
            i += 1
    if len(pos) != 2:
        sys.stderr.write(__doc__)
        return 2
    old, new = pos
    workload, nodes, runs = args["--workload"], int(args["--nodes"]), int(args["--runs"])
    failed = False
    for b in (old, new):  # warm-up: page cache, CPU frequency
        failed |= run(b, workload, nodes, extra) is None
    pairs = []
    for _ in range(runs):
        o, n = (run(b, workload, nodes, extra) for b in (old, new))
        failed |= o is None or n is None
        if o and n:
            pairs.append((o, n))
    if not pairs:
        return 1
    print("%s, %d nodes, %d pairs (medians)" % (workload, nodes, len(pairs)))
    print("%-12s %12s %12s %10s" % ("", "old", "new", "new/old"))
    for k in pairs[0][0]:
        mo = statistics.median(o[k] for o, _ in pairs)
        mn = statistics.median(n[k] for _, n in pairs)
        ratio = statistics.median(n[k] / o[k] for o, n in pairs if o[k])
        print("%-12s %12.1f %12.1f %10.3f" % (k, mo, mn, ratio))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
