#!/usr/bin/env python3
"""e2e_pressure.py KSCHED SCENARIO [NODES PODS] - `ksched serve` against the test API server
(apiserver.py) where a production cluster pushes it: repeated Events, watchers the server
closes for falling behind, start-up over large lists.

  events       a pod that stays unschedulable and is retried N times (a bound pod is deleted
               each time): its FailedScheduling Events form series as client-go's events
               library makes them (the first attempt's Event, then one per resourceVersion of
               the pod with series.count), so the counts add up to N with 1-2 Events, not N
  burst        NODES nodes (default 50,000) listed, then a burst of PODS pending pods
               (default 10,000) created at once while the server closes every watcher whose
               buffer of 100 events overflows (the cacher's slow-consumer rule) and, halfway
               through, compacts its history and cuts the streams (a 410 and a relist under
               load): every pod bound exactly once, no binding refused as already bound
  startup      NODES nodes (default 50,000) and PODS bound pods (default 100,000) listed at
               resourceVersion 0, answered whole as the watch cache does (the first pods LIST
               fails twice, so sync takes a while): /readyz
               answers 500 until the caches synced and 200 after; prints the time from start
               to /readyz ok, the peak RSS (VmHWM) then, and the pages

Sizes are arguments so that `make test` runs small ones (test/CMakeLists.txt) and the full
ones run by hand. Exit 0 on success, 1 on failure.
"""

import json
import os
import re
import sys
import time
import urllib.error
import urllib.request

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
from e2e import Failure, check  # noqa: E402

NS = e2e.NS
# client-side rate limits well above what the test server sustains, as large clusters set them
FAST_CLIENT = "clientConnection:\n  qps: 5000\n  burst: 10000\n"


class Cluster(e2e.ClusterBase):
    """The server and `ksched serve`, checked through /_test/summary (no full state dumps:
    they would be as large as the cluster)."""

    def __init__(self, ksched, name, extra=()):
        super().__init__(ksched, "ksched-pressure-%s-" % name, ("admin", "ksched-a"), extra=extra)

    def config(self, text):
        path = os.path.join(self.dir, "config.yaml")
        with open(path, "w") as f:
            f.write("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                    "leaderElection:\n  leaderElect: false\n" + text)
        return path

    def serve(self, config, env=None):
        kc = self.server.kubeconfig(os.path.join(self.dir, "kubeconfig"), user="ksched-a")
        cmd = [self.ksched, "serve", "--kubeconfig", kc, "--config", config, "--metrics-addr", "127.0.0.1:0"]
        old = dict(os.environ)
        os.environ.update(env or {})
        try:
            s = e2e.Serve(cmd, os.path.join(self.dir, "serve.log"), "ksched-a")
        finally:
            os.environ.clear()
            os.environ.update(old)
        self.serves.append(s)
        return s

    def summary(self):
        return self.api.test("summary")

    def wait(self, what, cond, timeout):
        return self.poll(what, cond, timeout)

    def bulk_nodes(self, n, cpu=32):
        node = e2e.node("x", cpu, 64)
        node["metadata"] = {"labels": {"kubernetes.io/hostname": "{name}", "kubernetes.io/os": "linux"}}
        self.api.test("bulk", {"resource": "nodes", "count": n, "name": "node-%05d", "template": node,
                               "cycle": {"topology.kubernetes.io/zone": ["zone-a", "zone-b", "zone-c"]}})

    def bulk_pods(self, n, prefix, **kw):
        tmpl = e2e.pod("x")
        del tmpl["metadata"]["name"]
        return self.api.test("bulk", dict({"resource": "pods", "namespace": NS, "count": n, "name": prefix + "-%06d",
                                           "template": tmpl}, **kw))


def outcomes(serve, pod, status):
    """How many `status` lines `ksched serve` wrote for @pod (its standard output)."""
    n = 0
    with open(serve.log_path, errors="replace") as f:
        for line in f:
            if line.startswith("{"):
                rec = json.loads(line)
                n += rec.get("pod") == NS + "/" + pod and rec.get("status") == status
    return n


def vm_kib(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


# ---- scenarios -------------------------------------------------------------------------------

def scenario_events(c, _nodes, _pods):
    retries = 8
    for i in range(3):
        c.api.must("POST", "/api/v1/nodes", e2e.node("node-%d" % i, 4, 16))
    for i in range(2 * retries):  # each deletion of one retries the stuck pod (it may free room)
        c.api.must("POST", "/api/v1/namespaces/%s/pods" % NS, e2e.pod("filler-%d" % i, nodeName="node-0"))
    c.api.must("POST", "/api/v1/namespaces/%s/pods" % NS, e2e.pod("stuck", cpu="10"))
    # retried 1 s after each deletion, deletions 1.3 s apart (times SLOW); a series ends after
    # 2 s of quiet (times SLOW, so that it outlasts the gaps; client-go: 6 min)
    s = c.serve(c.config("podInitialBackoffSeconds: 1\npodMaxBackoffSeconds: 1\n"),
                env={"KSCHED_EVENT_SERIES_FINISH": "%ds" % round(2 * e2e.SLOW)})
    c.wait("stuck's first attempt", lambda: outcomes(s, "stuck", "Unschedulable") >= 1, 30)
    for i in range(2 * retries):
        if outcomes(s, "stuck", "Unschedulable") >= retries:
            break
        c.api.must("DELETE", "/api/v1/namespaces/%s/pods/filler-%d" % (NS, i))
        time.sleep(1.3 * e2e.SLOW)
    attempts = outcomes(s, "stuck", "Unschedulable")
    check(attempts >= retries, "only %d attempts after %d deletions" % (attempts, 2 * retries))

    def series():
        items = c.api.must("GET", "/apis/events.k8s.io/v1/namespaces/%s/events" % NS)["items"]
        evs = [e for e in items if e["regarding"]["name"] == "stuck" and e["reason"] == "FailedScheduling"]
        total = sum(e["series"]["count"] if e.get("series") else 1 for e in evs)
        # the last deletion may still bring one more attempt after the loop above stopped
        return evs if total == outcomes(s, "stuck", "Unschedulable") else None
    # the last counts reach the server when the series end: 2 s of quiet (times SLOW), checked every 2 s
    try:
        evs = c.wait("the series' final counts", series, 15)
    except Failure:
        items = c.api.must("GET", "/apis/events.k8s.io/v1/namespaces/%s/events" % NS)["items"]
        raise Failure("%d attempts, Events: %s" % (outcomes(s, "stuck", "Unschedulable"),
                                                   [(e["metadata"]["name"], e.get("series")) for e in items]))
    attempts = outcomes(s, "stuck", "Unschedulable")
    check(len(evs) <= 2, "%d Events for %d attempts: %s" % (len(evs), attempts, [e.get("series") for e in evs]))
    check(any(e.get("series") for e in evs), "no series")
    names = {e["metadata"]["name"] for e in evs}
    check(all(n.startswith("stuck.") for n in names), "Event names %s" % names)
    rvs = [e["regarding"].get("resourceVersion") for e in evs]
    check(len(set(rvs)) == len(rvs), "two Events for one resourceVersion of the pod: %s" % rvs)
    req = c.summary()["requests"]
    writes = req.get("POST events.events.k8s.io", 0) + req.get("PATCH events.events.k8s.io", 0)
    # a POST per Event, the PATCH that starts a series and the one that ends it
    check(0 < writes <= 3 * len(evs), "%d Event writes for %d attempts" % (writes, attempts))
    print("events: %d attempts of an unschedulable pod -> %d Events (series counts %s), %d Event writes"
          % (attempts, len(evs), [e.get("series", {}).get("count", 1) for e in evs], writes))


def scenario_burst(c, nodes, pods):
    nodes, pods = nodes or 50000, pods or 10000
    t0 = time.monotonic()
    c.bulk_nodes(nodes)
    s = c.serve(c.config(FAST_CLIENT))
    # synced when the probe pod is bound
    c.api.must("POST", "/api/v1/namespaces/%s/pods" % NS, e2e.pod("probe"))
    c.wait("the probe pod bound", lambda: c.summary()["boundPods"] >= 1, 300)
    synced = time.monotonic() - t0
    c.api.test("config", {"watchBuffer": 100})
    t1 = time.monotonic()
    c.bulk_pods(pods, "burst")
    relisted = False
    while True:
        st = c.summary()
        if not relisted and st["boundPods"] >= pods // 2:
            # a 410 under load: history compacted past every watcher (without bookmarks the nodes
            # watcher's resourceVersion is its last node event's, long ago), the streams cut
            lists_before = {k: st["requests"].get("LIST " + k, 0) for k in ("nodes", "pods")}
            c.api.test("config", {"bookmarks": False})
            time.sleep(1.5)  # no bookmark in flight
            c.api.must("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                      "metadata": {"name": "bump"}})
            c.api.test("compact")
            c.api.test("break-watches", {"mode": "abrupt"})
            c.api.test("config", {"bookmarks": True})
            relisted = True
        if st["boundPods"] >= pods + 1:
            break
        for x in c.serves:
            x.check_alive()
        check(time.monotonic() - t1 < 600 * e2e.SLOW, "%d of %d pods bound after %ds" %
              (st["boundPods"] - 1, pods, time.monotonic() - t1))
        time.sleep(0.5)
    took = time.monotonic() - t1
    time.sleep(1)  # a late duplicate would show now
    st = c.summary()
    bound = st["boundTimes"]
    names = ["%s/burst-%06d" % (NS, i) for i in range(pods)]
    twice = [n for n in names if bound.get(n, 0) != 1]
    check(not twice, "pods not bound exactly once: %s" % [(n, bound.get(n, 0)) for n in twice[:5]])
    check(st["bindingAttempts"] == pods + 1, "%d binding attempts for %d pods (a pod bound again, or refused)"
          % (st["bindingAttempts"], pods + 1))
    check(st["slowWatchersClosed"] > 0, "no watcher fell behind: no pressure")
    relists = {k: st["requests"].get("LIST " + k, 0) - lists_before[k] for k in ("nodes", "pods")}
    check(relists["nodes"] > 0, "no relist of nodes after the 410")
    resumed = sum(1 for w in st["watches"] if w["resource"] == "pods")
    print("burst: %d nodes listed and synced in %.1fs; %d pods bound once each in %.1fs (%.0f pods/s) "
          "through %d slow-watcher closures, %d pod watches and a 410 (relists: %d node, %d pod pages); "
          "ksched VmHWM %d MiB" % (nodes, synced, pods, took, pods / took, st["slowWatchersClosed"], resumed,
                                   relists["nodes"], relists["pods"], vm_kib(s.proc.pid, "VmHWM") // 1024))


def scenario_startup(c, nodes, pods):
    nodes, pods = nodes or 50000, pods or 100000
    c.bulk_nodes(nodes)
    c.bulk_pods(pods, "run", nodeName="node-%05d", nodes=nodes)
    # the first pod LISTs fail: the caches sync a second or two later than they would
    c.api.test("fault", {"method": "GET", "path": r"^/api/v1/pods\?", "code": 500, "count": 2, "watch": False})
    start = time.monotonic()
    s = c.serve(c.config(""))
    port = s.port()
    answers = []
    while True:
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/readyz" % port, timeout=10) as r:
                code = r.status
        except urllib.error.HTTPError as e:
            code = e.code
        answers.append(code)
        if code == 200:
            break
        s.check_alive()
        check(time.monotonic() - start < 300 * e2e.SLOW, "/readyz not ok after %ds" % (time.monotonic() - start))
        time.sleep(0.05)
    ready = time.monotonic() - start
    hwm, rss = vm_kib(s.proc.pid, "VmHWM"), vm_kib(s.proc.pid, "VmRSS")
    log = e2e.tail(s.log_path, 100000)
    m = re.search(r"caches synced: (\d+) nodes, (\d+) pods", log)
    check(m, "/readyz ok before the caches synced:\n" + log[-2000:])
    check((int(m.group(1)), int(m.group(2))) == (nodes, pods), "synced %s nodes, %s pods" % m.groups())
    check(answers[0] == 500, "/readyz answered %d before the pods were listed" % answers[0])
    # as client-go's reflectors: resourceVersion=0 with a limit, which the watch cache answers whole
    lists = [x for x in c.summary()["lists"] if x["resource"] == "pods"]
    pages = [x for x in lists if x["code"] == 200]
    check(len(pages) == 1, "%d pod list pages for %d pods, want 1 from the watch cache" % (len(pages), pods))
    check(all(x["limit"] == 500 and x["resourceVersion"] == "0" and not x["continue"] for x in lists),
          "pod lists %s" % lists)
    print("startup: %d nodes and %d pods: /readyz ok after %.2fs (500 %d times before), VmHWM %d MiB "
          "(VmRSS %d MiB), pods listed at resourceVersion 0 in one answer"
          % (nodes, pods, ready, len(answers) - 1, hwm // 1024, rss // 1024))


SCENARIOS = {"events": scenario_events, "burst": scenario_burst, "startup": scenario_startup}


def main():
    if len(sys.argv) not in (3, 5) or sys.argv[2] not in SCENARIOS:
        print("usage: e2e_pressure.py KSCHED {%s} [NODES PODS]" % "|".join(SCENARIOS), file=sys.stderr)
        return 2
    ksched, name = sys.argv[1], sys.argv[2]
    nodes, pods = (int(sys.argv[3]), int(sys.argv[4])) if len(sys.argv) == 5 else (0, 0)
    c = Cluster(ksched, name)
    return e2e.run_scenario(c, name, lambda: SCENARIOS[name](c, nodes, pods))


if __name__ == "__main__":
    sys.exit(main())
