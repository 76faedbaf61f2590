#!/usr/bin/env python3
"""serve-startup.py - what a scheduler's start-up costs a real kube-apiserver: the API server's and
etcd's CPU, the requests, and the time from the scheduler's start until it is ready, over a cluster of
N nodes and M pods already bound.

    bench/serve-startup.py --apiserver PATH [--nodes N] [--pods M] [--runs R] [--ksched BIN]
                           [--variant NAME=ARGS ...] [--command NAME=TEMPLATE ...] [--json FILE]

Starts etcd and the given kube-apiserver binary as bench/serve-e2e.py does (same flags, same nodes of
4 cpu / 32Gi / 110 pods in 3 zones), creates N nodes and M pods bound round-robin to them (spec.nodeName
set at creation: nothing to schedule), then for every run and every variant, alternating (A B A B ...):
starts the scheduler, polls its /readyz until it answers 200 (the informers' lists are in), and stops
it. Each run reports the seconds to ready, the API server's and etcd's CPU (utime+stime of their
processes) over that time, the scheduler's CPU and peak RSS, and the requests the API server served
meanwhile by verb and resource (apiserver_request_total). A full garbage collection of the API
server's heap is forced before each run (its /debug/pprof/heap?gc=1), so that none lands inside
the measure by chance (at this size one costs seconds of CPU), and once more after it, measured apart
(apiserver_gc_after_s: the collection of what the start-up allocated, and of the rest of the heap). Medians per variant and the per-pair ratios
against the first variant are printed at the end; --json writes every run and the medians.

A variant's ARGS are added to `ksched serve`'s command line; --command runs another binary, where
{kubeconfig}, {config} and {port} (the port /readyz must be served on, over plain HTTP) are filled in:
    --variant after= --command 'before=/old/ksched serve --kubeconfig {kubeconfig} --config {config}
                                --metrics-addr 127.0.0.1:{port}'
"""
import argparse
import importlib.util
import json
import os
import shlex
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("serve_e2e", os.path.join(HERE, "serve-e2e.py"))
e2e = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(e2e)
log = e2e.log


def bound_pod(i, nodes):
    p = e2e.pod("run", i)
    p["spec"]["nodeName"] = f"node-{i % nodes}"
    return p


def collect_garbage(cl):
    """A full garbage collection in kube-apiserver (its heap profile with gc=1; profiling is on by default)."""
    status, _ = cl.api.call("GET", "/debug/pprof/heap?gc=1")
    if status != 200:
        raise RuntimeError(f"/debug/pprof/heap?gc=1: HTTP {status}")


def ready(port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


def one_run(cl, args, name, kind, extra, index):
    port = e2e.free_port()
    if kind == "command":
        cmd = shlex.split(extra.format(kubeconfig=f"{cl.work}/kubeconfig", config=f"{cl.work}/config.yaml",
                                       port=port))
    else:
        cmd = [args.ksched, "serve", "--kubeconfig", f"{cl.work}/kubeconfig", "--config",
               f"{cl.work}/config.yaml", "--metrics-addr", f"127.0.0.1:{port}"] + shlex.split(extra)
    # a garbage collection of the API server's heap (gigabytes at this size) costs seconds of CPU and
    # comes when the heap has grown enough: collected now, none falls inside the measure by chance
    # (the collection of what the start-up left is measured apart, after it)
    collect_garbage(cl)
    req0 = e2e.request_counts(cl.api)
    api0, etcd0 = e2e.cpu_seconds(cl.apiserver.pid), e2e.cpu_seconds(cl.etcd.pid)
    out = open(f"{cl.work}/sched-{index}-{name}.log", "w")
    start = time.monotonic()
    sched = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=out)
    ok = False
    while time.monotonic() - start < args.timeout and sched.poll() is None:
        if ready(port):
            ok = True
            break
        time.sleep(0.05)
    took = time.monotonic() - start
    api1, etcd1 = e2e.cpu_seconds(cl.apiserver.pid), e2e.cpu_seconds(cl.etcd.pid)
    sched_cpu, sched_rss = e2e.cpu_seconds(sched.pid), e2e.peak_rss_mib(sched.pid)
    req1 = e2e.request_counts(cl.api)
    gc0 = e2e.cpu_seconds(cl.apiserver.pid)
    collect_garbage(cl)
    gc_s = e2e.cpu_seconds(cl.apiserver.pid) - gc0
    sched.send_signal(signal.SIGTERM)
    try:
        sched.wait(30)
    except subprocess.TimeoutExpired:
        sched.kill()
    if not ok:
        log(f"run {index} ({name}): not ready after {took:.0f} s; see {out.name}")
    res = {"variant": name, "run": index, "nodes": args.nodes, "pods": args.pods, "ready": ok,
           "seconds_to_ready": round(took, 2), "apiserver_cpu_s": round(api1 - api0, 2),
           "etcd_cpu_s": round(etcd1 - etcd0, 2), "apiserver_gc_after_s": round(gc_s, 2),
           "scheduler_cpu_s": round(sched_cpu, 2),
           "scheduler_peak_rss_mib": round(sched_rss or 0, 1), "loadavg": os.getloadavg()[0],
           "requests": {k: int(v - req0.get(k, 0)) for k, v in sorted(req1.items()) if v > req0.get(k, 0)}}
    print(json.dumps(res), flush=True)
    time.sleep(args.pause)  # the API server lets go of the lists (and their garbage) between runs
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pause", type=float, default=10, help="seconds between runs")
    args = e2e.parse_args(ap, nodes=50000, pods=200000, timeout=900)
    variants = e2e.parse_variants(ap, args)


    def populate(cl):
        t0 = time.monotonic()
        step = 20000
        for lo in range(0, args.pods, step):
            cl.api.create_all("/api/v1/namespaces/default/pods",
                              [bound_pod(i, args.nodes) for i in range(lo, min(args.pods, lo + step))])
        log(f"{args.pods} bound pods created in {time.monotonic() - t0:.1f} s")
        time.sleep(args.pause)

    runs = e2e.run_variants(args, variants, "serve-startup-", populate, one_run)
    keys = ["seconds_to_ready", "apiserver_cpu_s", "etcd_cpu_s", "apiserver_gc_after_s", "scheduler_cpu_s",
            "scheduler_peak_rss_mib"]
    summary = e2e.summarize(runs, variants, keys, lambda r: r["ready"])
    print(json.dumps({"nodes": args.nodes, "pods": args.pods, "medians": summary}, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"nodes": args.nodes, "pods": args.pods, "runs": runs, "medians": summary}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
