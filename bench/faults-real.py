#!/usr/bin/env python3
"""faults-real.py - recovery of `ksched serve` (and optionally kube-scheduler) from control-plane faults,
against a real kube-apiserver and etcd.

    bench/faults-real.py --apiserver PATH [--ksched BIN] [--kube-scheduler BIN]
                         [--fault apiserver|etcd|leader ...] [--nodes N] [--pods M] [--runs R]
                         [--qps Q] [--timeout S] [--settle S] [--json FILE] [--keep DIR]

For every run, every fault and every scheduler, a fresh control plane is started as bench/serve-e2e.py
starts it (its helpers are imported: etcd and the given kube-apiserver binary on free loopback ports in a
temporary folder), with N Ready nodes (4 cpu, 32Gi, 110 pods; default 50) and M pending pods (100m cpu,
200Mi; default 2,500), so that only N x 40 pods fit (2,000 of 2,500 by default). A pods watch of the
bench's own (relisting after a 410 or a reconnect) is opened, the scheduler is started with
clientConnection qps/burst Q/2Q (default 100/200), and once a third of the pods that fit are bound ONE
fault is injected:
  - apiserver: SIGKILL of kube-apiserver, restarted at once with the same flags on the same etcd;
  - etcd:      SIGKILL of etcd, restarted at once on the same data folder and ports;
  - leader:    two schedulers of the same kind with leaderElection.leaderElect true (Lease
               kube-system/kube-scheduler, 15 s / 10 s / 2 s as upstream); SIGKILL of the one that holds
               the lease (ksched instances get --identity faults-a / faults-b, matched with the Lease's
               holderIdentity; kube-scheduler's identity is hostname_UUID, so its holder is the instance
               whose log says "successfully acquired lease").
The apiserver and etcd faults run one scheduler with leader election off. Then the bench waits (--timeout,
default 300 s from the kill) until every pod that fits is bound, watches --settle (5) s more, and reports
per run:
  - back_s: from the kill until the control plane is back (kube-apiserver answers a pods LIST; etcd
    /health answers 200; the Lease names another holder);
  - first_bind_s: from the kill to the first binding made after it, i.e. the first pod seen bound whose
    resourceVersion is above etcd's revision at the kill (read from etcd just after the kill for the
    apiserver fault, 0.5 s after it for the leader fault; for the etcd fault, the highest resourceVersion
    the watch had seen when etcd was restarted), so bindings in flight at the kill are not counted. A pod
    first seen bound by a relist counts at the relist's time (an upper bound);
  - all_bound_s: from the kill until every pod that fits was seen bound;
  - bound, pending_fit (pods that fit left unbound: must be 0), rebinds (a bound pod later seen with another
    nodeName, or unbound: must be 0), over_capacity (nodes whose bound pods request more cpu than the node's
    allocatable, or more pods than it allows, from a final LIST: must be 0; bound_to_unknown_node too);
  - the API server's binding POSTs by HTTP code (apiserver_request_total), read just before the kill and
    at the end (for the apiserver fault the end is the restarted process's own count); binding_409 sums
    the two for the apiserver fault; requests_end: the writes it served, by verb and resource;
  - whether the scheduler (for leader, the survivor) is still running.
A run is ok when exactly the pods that fit are bound (by the watch and by the final LIST), none changed
node, no node is over capacity and the scheduler survived. A table is printed at the end; --json writes
every run. Exit status 0 when every run is ok.
"""
import argparse
import base64
import http.client
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("serve_e2e", os.path.join(HERE, "serve-e2e.py"))
e2e = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(e2e)

FAULTS = ("apiserver", "etcd", "leader")
NODE_CPU_MILLI = 4000
POD_CPU_MILLI = 100
LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler"


def log(*a):
    print("faults-real:", *a, file=sys.stderr, flush=True)


def milli(q):
    """A cpu quantity ("4", "100m", "0.5") in millicores."""
    q = str(q)
    return int(q[:-1]) if q.endswith("m") else int(round(float(q) * 1000))


def pod(prefix, i):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{prefix}-{i}", "namespace": "default", "labels": {"app": prefix}},
            "spec": {"containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.9",
                                     "resources": {"requests": {"cpu": f"{POD_CPU_MILLI}m",
                                                                "memory": "200Mi"}}}]}}


class Cluster(e2e.Cluster):
    """serve-e2e's control plane (which keeps every process's command line, so that it can be killed
    and started again), with what the faults need."""

    def etcd_url(self):
        cmd = self.cmds["etcd"]
        return cmd[cmd.index("--listen-client-urls") + 1]

    def etcd_call(self, path, body=None):
        """(status, parsed JSON) of a request to etcd's HTTP gateway, or (None, None)."""
        host, port = self.etcd_url().split("//")[1].split(":")
        c = http.client.HTTPConnection(host, int(port), timeout=2)
        try:
            c.request("POST" if body is not None else "GET", path, json.dumps(body) if body is not None else None)
            r = c.getresponse()
            return r.status, json.loads(r.read() or b"null")
        except (OSError, http.client.HTTPException, ValueError):
            return None, None
        finally:
            c.close()

    def etcd_revision(self):
        status, d = self.etcd_call("/v3/kv/range", {"key": base64.b64encode(b"/faults-real").decode()})
        return int(d["header"]["revision"]) if status == 200 else None

    def kill9(self, attr):
        p = getattr(self, attr)
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()

    def restart(self, attr, name):
        setattr(self, attr, self.spawn(name, self.cmds[name]))


def safe_call(api, method, path, body=None):
    try:
        return api.call(method, path, body)
    except (OSError, http.client.HTTPException):
        return None, b""


def binding_codes(api):
    """POST pods/binding answered, by HTTP code, from apiserver_request_total; None when unreachable."""
    status, data = safe_call(api, "GET", "/metrics")
    if status != 200:
        return None
    codes = {}
    for kv, value in e2e.request_samples(data):
        if kv.get("verb") == "POST" and kv.get("resource") == "pods" and kv.get("subresource") == "binding":
            codes[kv.get("code")] = codes.get(kv.get("code"), 0) + int(float(value))
    return codes


class PodWatch:
    """Every pod of one prefix and when it was first seen bound, from a LIST + WATCH of the bench's own
    that reconnects across outages (from the last resourceVersion; a 410 relists)."""

    def __init__(self, api, prefix):
        self.api, self.prefix = api, prefix
        self.node = {}      # name -> nodeName (None while pending)
        self.binds = []     # (monotonic time first seen bound, pod resourceVersion, name, "watch"|"list")
        self.rebinds = []   # (name, old nodeName, new nodeName or None)
        self.deleted = 0
        self.relists = self.reconnects = 0
        self.max_rv = 0     # highest pod resourceVersion seen
        self.rv = None
        self.lock = threading.Lock()
        self.quit = False
        self.listed = threading.Event()
        threading.Thread(target=self.run, daemon=True).start()

    def bound(self):
        with self.lock:
            return len(self.binds)

    def see(self, obj, source, now):
        meta = obj.get("metadata", {})
        name, rv = meta.get("name"), int(meta.get("resourceVersion", "0"))
        node = obj.get("spec", {}).get("nodeName") or None
        with self.lock:
            self.max_rv = max(self.max_rv, rv)
            old = self.node.get(name)
            if old and node != old:
                self.rebinds.append((name, old, node))
            elif node and not old:
                self.binds.append((now, rv, name, source))
            self.node[name] = node or old

    def list(self):
        status, data = self.api.call("GET", f"/api/v1/namespaces/default/pods?labelSelector=app%3D{self.prefix}")
        if status != 200:
            raise OSError(f"LIST pods: HTTP {status}")
        now = time.monotonic()
        d = json.loads(data)
        names = set()
        for obj in d["items"]:
            names.add(obj["metadata"]["name"])
            self.see(obj, "list", now)
        with self.lock:
            gone = [n for n in self.node if n not in names]
            for n in gone:
                self.deleted += 1
                del self.node[n]
        self.rv = d["metadata"]["resourceVersion"]
        self.relists += 1
        self.listed.set()

    def watch(self):
        c = http.client.HTTPSConnection("127.0.0.1", self.api.port, context=self.api.ctx, timeout=90)
        try:
            c.request("GET", f"/api/v1/namespaces/default/pods?watch=1&resourceVersion={self.rv}"
                             f"&labelSelector=app%3D{self.prefix}&allowWatchBookmarks=true&timeoutSeconds=60",
                      headers={"Authorization": "Bearer " + self.api.token})
            r = c.getresponse()
            if r.status == 410:
                return False
            if r.status != 200:
                raise OSError(f"WATCH pods: HTTP {r.status}")
            for line in r:
                if self.quit:
                    return True
                ev = json.loads(line)
                obj = ev.get("object", {})
                if ev.get("type") == "ERROR":
                    if obj.get("code") == 410:
                        return False
                    raise OSError(f"watch error: {obj}")
                self.rv = obj.get("metadata", {}).get("resourceVersion", self.rv)
                if ev.get("type") in ("ADDED", "MODIFIED"):
                    self.see(obj, "watch", time.monotonic())
                elif ev.get("type") == "DELETED":
                    with self.lock:
                        self.deleted += 1
                        self.node.pop(obj["metadata"]["name"], None)
            return True
        finally:
            c.close()

    def run(self):
        need_list = True
        while not self.quit:
            try:
                if need_list:
                    self.list()
                    need_list = False
                if not self.watch():
                    need_list = True
            except (OSError, http.client.HTTPException, ValueError):
                self.reconnects += 1
                time.sleep(0.1)

    def first_bind_after(self, rev):
        with self.lock:
            later = [b for b in self.binds if b[1] > rev]
        return min(later) if later else None


def write_configs(work, qps):
    for name, elect in (("single", "false"), ("elect", "true")):
        with open(f"{work}/config-{name}.yaml", "w") as f:
            f.write(f"""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: {elect}
  leaseDuration: 15s
  renewDeadline: 10s
  retryPeriod: 2s
  resourceLock: leases
  resourceName: kube-scheduler
  resourceNamespace: kube-system
clientConnection:
  kubeconfig: {work}/kubeconfig
  qps: {qps}
  burst: {2 * qps}
""")


def start_scheduler(work, kind, binary, config, tag):
    port = e2e.free_port()
    if kind == "ksched":
        cmd = [binary, "serve", "--kubeconfig", f"{work}/kubeconfig", "--config", config,
               "--metrics-addr", f"127.0.0.1:{port}"]
        if tag:
            cmd += ["--identity", f"faults-{tag}"]
    else:
        cmd = [binary, "--config", config, f"--secure-port={port}"]
    logpath = f"{work}/{kind}{'-' + tag if tag else ''}.log"
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=open(logpath, "a"), stderr=subprocess.STDOUT,
                         start_new_session=True)
    p.logpath, p.tag = logpath, tag
    return p


def stop_scheduler(p):
    e2e.stop_process(p, 30)


def lease_holder(api):
    status, data = safe_call(api, "GET", LEASE)
    if status != 200:
        return None
    return json.loads(data).get("spec", {}).get("holderIdentity") or None


def holder_process(api, kind, scheds):
    """The scheduler process that holds the Lease, and its identity."""
    holder = lease_holder(api)
    if not holder:
        return None, None
    if kind == "ksched":
        for p in scheds:
            if holder == f"faults-{p.tag}":
                return p, holder
        return None, holder
    acquired = [p for p in scheds if "successfully acquired lease" in open(p.logpath, errors="replace").read()]
    return (acquired[0] if len(acquired) == 1 else None), holder


def wait_until(cond, timeout, step=0.05):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        v = cond()
        if v:
            return v
        time.sleep(step)
    return None


def capacity_check(api, prefix):
    """The nodes whose bound pods of @prefix request more cpu than the node's allocatable or are more than
    its pod limit, the pods bound to no known node, and the bound pods, from a LIST of each."""
    _, data = api.call("GET", "/api/v1/nodes")
    alloc = {n["metadata"]["name"]: n["status"]["allocatable"] for n in json.loads(data)["items"]}
    _, data = api.call("GET", f"/api/v1/namespaces/default/pods?labelSelector=app%3D{prefix}")
    cpu, count, unknown = {}, {}, 0
    for p in json.loads(data)["items"]:
        node = p["spec"].get("nodeName")
        if not node:
            continue
        if node not in alloc:
            unknown += 1
            continue
        req = sum(milli(c.get("resources", {}).get("requests", {}).get("cpu", "0")) for c in p["spec"]["containers"])
        cpu[node] = cpu.get(node, 0) + req
        count[node] = count.get(node, 0) + 1
    over = [{"node": n, "cpu_requested_m": cpu[n], "pods": count[n]} for n in sorted(cpu)
            if cpu[n] > milli(alloc[n]["cpu"]) or count[n] > int(alloc[n]["pods"])]
    return over, unknown, sum(count.values())


def one_run(args, fault, kind, binary, index):
    work = tempfile.mkdtemp(prefix=f"faults-real-{fault}-{kind}-", dir=args.keep)
    cl, scheds, watch = None, [], None
    fits = min(args.pods, args.nodes * (NODE_CPU_MILLI // POD_CPU_MILLI))
    res = {"scheduler": kind, "fault": fault, "run": index, "nodes": args.nodes, "pods": args.pods, "fits": fits}
    try:
        cl = Cluster(args, work)
        write_configs(work, args.qps)
        cl.api.create_all("/api/v1/nodes", [e2e.node(i) for i in range(args.nodes)])
        prefix = f"f{index}-{fault}-{kind}".lower()
        cl.api.create_all("/api/v1/namespaces/default/pods", [pod(prefix, i) for i in range(args.pods)])
        watch = PodWatch(cl.api, prefix)
        watch.listed.wait(60)
        elect = fault == "leader"
        config = f"{work}/config-{'elect' if elect else 'single'}.yaml"
        start = time.monotonic()
        scheds = [start_scheduler(work, kind, binary, config, tag) for tag in (("a", "b") if elect else ("",))]
        third = max(1, fits // 3)
        if not wait_until(lambda: watch.bound() >= third, args.timeout):
            raise RuntimeError(f"only {watch.bound()} of {third} pods bound before the fault")
        res["bound_at_kill"] = watch.bound()
        res["until_kill_s"] = round(time.monotonic() - start, 2)

        codes_before = binding_codes(cl.api)
        if fault == "apiserver":
            t_kill = time.monotonic()
            cl.kill9("apiserver")
            rev_kill = cl.etcd_revision()
            cl.restart("apiserver", "kube-apiserver")
            back = wait_until(lambda: safe_call(cl.api, "GET", "/api/v1/namespaces/default/pods?limit=1")[0] == 200
                              and time.monotonic(), 120)
        elif fault == "etcd":
            t_kill = time.monotonic()
            cl.kill9("etcd")
            rev_kill = watch.max_rv
            cl.restart("etcd", "etcd")
            back = wait_until(lambda: cl.etcd_call("/health")[0] == 200 and time.monotonic(), 120)
        else:
            victim, holder = wait_until(lambda: (lambda v: v if v[0] else None)(holder_process(cl.api, kind, scheds)),
                                        30) or (None, None)
            if victim is None:
                raise RuntimeError(f"no scheduler process found for the lease holder {holder!r}")
            res["killed"] = holder
            t_kill = time.monotonic()
            os.killpg(victim.pid, signal.SIGKILL)
            victim.wait()
            time.sleep(0.5)  # the killed one's requests already received by the API server land
            rev_kill = cl.etcd_revision()
            new = wait_until(lambda: (lambda h: h if h and h != holder else None)(lease_holder(cl.api)), 120, 0.1)
            back = new and time.monotonic()
            res["new_holder"] = new
        res["back_s"] = round(back - t_kill, 2) if back else None

        done = wait_until(lambda: watch.bound() >= fits and time.monotonic(), args.timeout, 0.02)
        time.sleep(args.settle)
        first = watch.first_bind_after(rev_kill) if rev_kill is not None else None
        res["first_bind_s"] = round(first[0] - t_kill, 2) if first else None
        res["first_bind_seen_by"] = first[3] if first else None
        res["all_bound_s"] = round(done - t_kill, 2) if done else None
        with watch.lock:
            res["bound"] = len(watch.binds)
            res["rebinds"] = len(watch.rebinds)
            res["rebind_examples"] = watch.rebinds[:5]
            res["deleted"] = watch.deleted
        res["pending_fit"] = max(0, fits - res["bound"])
        res["watch_relists"], res["watch_reconnects"] = watch.relists, watch.reconnects
        over, unknown, res["bound_final_list"] = capacity_check(cl.api, prefix)
        res["over_capacity"], res["over_capacity_nodes"], res["bound_to_unknown_node"] = len(over), over, unknown
        # POST pods/binding by HTTP code: as read just before the kill, and at the end (the restarted
        # API server's own count for the apiserver fault, else the same counter's total)
        codes = binding_codes(cl.api) or {}
        res["binding_codes_before_kill"], res["binding_codes_end"] = codes_before, codes
        res["binding_409"] = codes.get("409", 0) + (codes_before.get("409", 0) if fault == "apiserver" else 0)
        try:  # the requests the API server served (the restarted one's only, for the apiserver fault)
            res["requests_end"] = {k: int(v) for k, v in sorted(e2e.request_counts(cl.api).items())
                                   if k.split(" ")[0] in ("POST", "PUT", "PATCH", "DELETE")}
        except (OSError, http.client.HTTPException, ValueError):
            res["requests_end"] = None
        alive = [p for p in scheds if p.poll() is None]
        res["scheduler_alive"] = len(alive) == (1 if fault == "leader" else len(scheds))
        res["scheduler_exit"] = [p.returncode for p in scheds if p.poll() is not None and p.returncode != -9]
        res["ok"] = (res["bound"] == fits and res["bound_final_list"] == fits and res["rebinds"] == 0
                     and res["over_capacity"] == 0 and unknown == 0 and res["scheduler_alive"])
    except Exception as e:  # a failed run is reported, the others still run
        log(f"{fault}/{kind}: {e!r}; logs in {work}" + ("" if args.keep else " (removed; --keep DIR keeps them)"))
        res["error"], res["ok"] = repr(e), False
    finally:
        if watch:
            watch.quit = True
        for p in scheds:
            stop_scheduler(p)
        if cl:
            cl.stop()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(res), flush=True)
    return res


def table(runs):
    cols = [("scheduler", "scheduler"), ("fault", "fault"), ("back_s", "back s"), ("first_bind_s", "1st bind s"),
            ("all_bound_s", "all bound s"), ("bound", "bound"), ("fits", "fit"), ("pending_fit", "pending"),
            ("rebinds", "rebinds"), ("binding_409", "bind 409"),
            ("over_capacity", "over cap"), ("scheduler_alive", "alive"), ("ok", "ok")]
    rows = [[str(r.get(k, "-")) if r.get(k) is not None else "-" for k, _ in cols] for r in runs]
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, (_, h) in enumerate(cols)]
    out = ["| " + " | ".join(h.ljust(w) for (_, h), w in zip(cols, widths)) + " |",
           "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += ["| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |" for row in rows]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--apiserver", required=True, help="the kube-apiserver binary")
    ap.add_argument("--apiserver-args", default="", help="more kube-apiserver flags")
    ap.add_argument("--ksched", default=os.path.join(HERE, "..", "build", "ksched"))
    ap.add_argument("--kube-scheduler", help="a kube-scheduler binary: every fault runs for it too")
    ap.add_argument("--fault", action="append", choices=FAULTS, help="repeat to select several (default: all)")
    ap.add_argument("--nodes", type=int, default=50)
    ap.add_argument("--pods", type=int, default=2500)
    ap.add_argument("--runs", type=int, default=1, help="runs of each fault and scheduler")
    ap.add_argument("--qps", type=int, default=100, help="clientConnection.qps (burst twice that)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds to wait for the fault's moment, and "
                                                                "from the kill for every pod that fits")
    ap.add_argument("--settle", type=float, default=5, help="seconds watched after the last pod that fits")
    ap.add_argument("--json", help="write every run here")
    ap.add_argument("--keep", help="keep every run's folder (logs, kubeconfig, configs) under this path")
    args = ap.parse_args()
    scheds = [("ksched", args.ksched)] + ([("kube-scheduler", args.kube_scheduler)] if args.kube_scheduler else [])
    for _, b in scheds + [("kube-apiserver", args.apiserver)]:
        if not os.access(b, os.X_OK):
            ap.error(f"{b} is not an executable")
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)

    runs = []
    for r in range(args.runs):
        for fault in args.fault or FAULTS:
            for kind, binary in scheds:
                log(f"run {r}: {fault} fault, {kind}")
                runs.append(one_run(args, fault, kind, binary, r))
    print(table(runs))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"nodes": args.nodes, "pods": args.pods, "qps": args.qps, "runs": runs}, f, indent=1)
    return 0 if all(r["ok"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
