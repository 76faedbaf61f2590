#!/usr/bin/env python3
"""e2e.py KSCHED SCENARIO - `ksched serve` against the test API server (apiserver.py).

Each scenario starts the server over TLS (a CA, a server certificate and one client
certificate per scheduler instance made with openssl in a temporary directory), creates
objects through the API, runs `ksched serve` with a kubeconfig holding its client
certificate, and checks the server's record of what the scheduler did (every binding
attempt with the user that made it, every lease write):

  decisions    50 nodes and 500 pods are all bound exactly once, to the nodes
               `ksched schedule --seed S` picks for the same objects (dumped from the server)
  watch        watch streams cut mid-stream and a forced 410 relist lose nothing: every
               pod, including the ones created while the streams were down, bound once
  leader       two `ksched serve --leader-elect`: only the lease holder ever binds; the
               other takes over when the leader is killed
  conflict     a 409 on binding requeues the pod (bound later); a pod another scheduler
               bound first stays there and its assumed copy is forgotten (its node's room
               is given to the next pod)
  preempt      a high-priority pod nominated (status.nominatedNodeName), its victim given
               the DisruptionTarget condition and deleted with a Preempted Event, then
               bound; an unschedulable pod gets PodScheduled=False (Unschedulable) and a
               FailedScheduling Event; a pod that succeeds frees its room and a node label
               change requeues waiting pods (preempt-sync: the same with
               SchedulerAsyncPreemption=false)
  faults       500/503/429 answers to the first pod LISTs, a watch, Bindings, a status patch
               and Events are retried or requeued: every pod still bound once
  bad-input    truncated JSON, unknown fields, an object without metadata.name and a
               field of the wrong type on the watch stream are skipped without a crash
               (their protobuf forms under the default content type)
  pvc-late     claims created after start-up: the storage plugins index the live objects
  volumes-*    VolumeBinding through the API with the server's PV controller (pv_controller.py):
               local PVs with a WaitForFirstConsumer class (each pod on its PV's node, claims
               Bound, one claimRef update per claim); dynamic provisioning (selected-node, a
               PV for that node); a PV taken by another claim between Reserve and PreBind
               (409, requeued, no PV bound twice); no controller (bindTimeoutSeconds 2 via
               --config: the wait times out, the pod is requeued, bound once it runs)

`ksched serve` speaks protobuf by default, as kube-scheduler does; decisions-json and
bad-input-json run with --content-type json. After every scenario the server's count of
media types is checked: protobuf for the schedulers' LISTs, WATCHes, Bindings, Events
and Leases by default (JSON for the resource.k8s.io kinds, which kube/proto/ lacks), no
protobuf at all under json.

Exit 0 on success, 1 on failure.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

SEED = 4242
# bearer tokens the server accepts (TOKEN:USER), for the scenarios that authenticate with one
TOKENS = {"token": "e2e-token-a:ksched-a", "token-file": "e2e-token-file:ksched-a"}
NS = "e2e"
SANITIZER = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:", "WARNING: ThreadSanitizer")
# Slower under the sanitizers; the scenarios normally finish in a fraction of these.
SLOW = 3.0 if os.environ.get("KS_E2E_SLOW") or "asan" in os.path.abspath(sys.argv[1] if len(sys.argv) > 1
                                                                            else "") else 1.0


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


# ---- objects ----------------------------------------------------------------------------

def node(name, cpu, mem_gi, labels=None, taints=None, pods=110):
    n = {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": name, "labels": dict({"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"},
                                                   **(labels or {}))},
         "spec": {},
         "status": {"capacity": {"cpu": str(cpu), "memory": "%dGi" % mem_gi, "pods": str(pods)},
                    "allocatable": {"cpu": str(cpu), "memory": "%dGi" % mem_gi, "pods": str(pods)},
                    "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                    "message": "kubelet is posting ready status"}]}}
    if taints:
        n["spec"]["taints"] = taints
    return n


def pod(name, cpu="100m", mem="128Mi", labels=None, **spec):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS, "labels": labels or {"app": "e2e"}},
            "spec": dict({"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.5",
                                          "resources": {"requests": {"cpu": cpu, "memory": mem}}}]}, **spec)}


class ClusterBase:
    """The test server in a work directory of its own (with the namespace NS), an admin client,
    and the `ksched serve` processes a scenario starts (self.serves)."""

    def __init__(self, ksched, workdir_prefix, clients, tokens=(), extra=()):
        self.ksched = ksched
        self.dir = tempfile.mkdtemp(prefix=workdir_prefix)
        self.pki = harness.make_pki(os.path.join(self.dir, "pki"), clients=clients)
        self.server = harness.ApiServer(self.dir, self.pki, tokens=tokens,
                                        extra=["--bookmark-interval", "1"] + list(extra))
        self.api = self.server.client("admin")
        self.serves = []
        self.api.must("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                     "metadata": {"name": NS}})

    def poll(self, what, probe, timeout):
        """probe() every 0.2 s until it returns something true, which is returned; Failure after
        @timeout seconds (times SLOW) or as soon as a `ksched serve` has died."""
        deadline = time.monotonic() + timeout * SLOW
        while True:
            got = probe()
            if got:
                return got
            for s in self.serves:
                s.check_alive()
            if time.monotonic() > deadline:
                raise Failure("timed out waiting for " + what)
            time.sleep(0.2)

    def close(self, ok):
        """Stop everything; the problems the `ksched serve` processes showed. The work directory
        is removed after a pass, and the logs are printed after a failure."""
        problems = []
        for s in self.serves:
            problems += s.stop()
        self.api.close()
        self.server.stop()
        if not ok or problems:
            for s in self.serves:
                s.dump()
            print("--- apiserver log (tail) ---")
            print(tail(self.server.log_path))
        else:
            shutil.rmtree(self.dir, ignore_errors=True)
        return problems


def run_scenario(c, name, body):
    """body() against the cluster @c, which is closed after it: the exit status (0 or 1)."""
    ok = False
    try:
        body()
        ok = True
    except Failure as e:
        print("FAIL: %s: %s" % (name, e))
    finally:
        problems = c.close(ok)
    for p in problems:
        print("FAIL: %s: %s" % (name, p))
    return 0 if ok and not problems else 1


class Cluster(ClusterBase):
    """The server, an admin client and the `ksched serve` processes of one scenario."""

    def __init__(self, ksched, name):
        super().__init__(ksched, "ksched-e2e-%s-" % name, ("admin", "ksched-a", "ksched-b"), TOKENS.values())
        self.content_type = None  # --content-type of every `ksched serve` ("json" in the *-json scenarios)

    def create(self, obj):
        if obj["kind"] == "Node":
            return self.api.must("POST", "/api/v1/nodes", obj)
        return self.api.must("POST", "/api/v1/namespaces/%s/pods" % NS, obj)

    def serve(self, user, leader_elect=False, seed=None, extra=(), auth="cert"):
        """`ksched serve` as @user, authenticated by its client certificate (auth="cert"), a
        bearer token in the kubeconfig ("token") or a token file it names ("token-file")."""
        path = os.path.join(self.dir, "kubeconfig-" + user)
        if auth == "cert":
            kc = self.server.kubeconfig(path, user=user)
        elif auth == "token":
            kc = self.server.kubeconfig(path, token=TOKENS[auth].split(":")[0])
        else:
            token_file = os.path.join(self.dir, "token")
            with open(token_file, "w") as f:
                f.write(TOKENS[auth].split(":")[0] + "\n")
            kc = self.server.kubeconfig(path, token_file=token_file)
        cmd = [self.ksched, "serve", "--kubeconfig", kc, "--metrics-addr", "127.0.0.1:0"]
        if leader_elect:
            cmd.append("--leader-elect")
        if seed is not None:
            cmd += ["--seed", str(seed)]
        cmd += list(extra)
        if self.content_type:
            cmd += ["--content-type", self.content_type]
        s = Serve(cmd, os.path.join(self.dir, "serve-%s.log" % user), user)
        self.serves.append(s)
        return s

    def state(self):
        return self.api.state()

    def pods(self, state=None):
        st = state or self.state()
        return {k: v for k, v in st["objects"]["/pods"].items() if k.startswith(NS + "/")}

    def wait(self, what, cond, timeout):
        """The server's state once cond(state) holds (see poll)."""
        def probe():
            st = self.state()
            return st if cond(st) else None
        return self.poll(what, probe, timeout)

    def wait_all_bound(self, names, timeout):
        def done(st):
            pods = self.pods(st)
            return all(pods.get(NS + "/" + n, {}).get("spec", {}).get("nodeName") for n in names)
        try:
            return self.wait("%d pods to be bound" % len(names), done, timeout)
        except Failure:
            pods = self.pods()
            left = [n for n in names if not pods.get(NS + "/" + n, {}).get("spec", {}).get("nodeName")]
            raise Failure("%d of %d pods never bound (first: %s)" % (len(left), len(names), left[:5]))


def tail(path, n=60):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


class Serve:
    def __init__(self, cmd, log_path, user):
        self.cmd, self.log_path, self.user = cmd, log_path, user
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        self.expected_exit = False

    def port(self):
        """The port of /healthz, /readyz and /metrics, from the start-up line."""
        deadline = time.monotonic() + 20 * SLOW
        while time.monotonic() < deadline:
            for line in tail(self.log_path, 100000).splitlines():
                if "/metrics on " in line and "(port " in line:
                    return int(line.rsplit("(port ", 1)[1].rstrip(")"))
            self.check_alive()
            time.sleep(0.1)
        raise Failure("ksched serve (%s) never said where /metrics is" % self.user)

    def get(self, path):
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (self.port(), path), timeout=10) as r:
            return r.status, r.read().decode()

    def metric(self, name, label=""):
        """The sum of every sample of @name (with @label, e.g. 'result="scheduled"', among its labels)."""
        total, seen = 0.0, False
        for line in self.get("/metrics")[1].splitlines():
            if (line.startswith(name + "{") or line.startswith(name + " ")) and label in line.split(" ")[0]:
                total += float(line.rsplit(" ", 1)[1])
                seen = True
        check(seen, "/metrics has no %s" % name)
        return total

    def check_alive(self):
        if not self.expected_exit and self.proc.poll() is not None:
            raise Failure("ksched serve (%s) exited with status %d" % (self.user, self.proc.returncode))

    def kill(self):
        self.expected_exit = True
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        """SIGTERM and wait; the problems found (crash, sanitizer report)."""
        if self.log.closed:
            return []
        problems = []
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20 * SLOW)
            except subprocess.TimeoutExpired:
                problems.append("ksched serve (%s) did not stop within %ds of SIGTERM" % (self.user, 20 * SLOW))
                self.proc.kill()
                self.proc.wait()
            if self.proc.returncode not in (0, -signal.SIGTERM):
                problems.append("ksched serve (%s) exited with status %d after SIGTERM" % (self.user,
                                                                                         self.proc.returncode))
        elif not self.expected_exit:
            problems.append("ksched serve (%s) had exited with status %d" % (self.user, self.proc.returncode))
        self.log.close()
        text = tail(self.log_path, 100000)
        for marker in SANITIZER:
            if marker in text:
                problems.append("ksched serve (%s): %s in its output" % (self.user, marker))
        return problems

    def dump(self):
        print("--- ksched serve (%s) %s: log (tail) ---" % (self.user, " ".join(self.cmd[1:])))
        print(tail(self.log_path))


# ---- checks shared by scenarios ------------------------------------------------------------

def successful_bindings(st, user=None):
    """pod -> [binding records that succeeded]."""
    out = {}
    for b in st["bindings"]:
        if b["code"] == 201 and (user is None or b["user"] == user):
            out.setdefault(b["pod"], []).append(b)
    return out


def check_bound_once(st, names):
    ok = successful_bindings(st)
    twice = [n for n in names if len(ok.get(NS + "/" + n, [])) != 1]
    check(not twice, "pods not bound exactly once: %s" % [(n, len(ok.get(NS + "/" + n, []))) for n in twice[:5]])
    pods = st["objects"]["/pods"]
    for n in names:
        p = pods[NS + "/" + n]
        conds = [c for c in p["status"].get("conditions", []) if c["type"] == "PodScheduled"]
        check(conds and conds[0]["status"] == "True", "%s has no PodScheduled=True condition" % n)


def check_no_overcommit(st):
    nodes = st["objects"]["/nodes"]
    used = {}
    for p in st["objects"]["/pods"].values():
        nn = p["spec"].get("nodeName")
        if not nn:
            continue
        for c in p["spec"]["containers"]:
            req = c.get("resources", {}).get("requests", {})
            used[nn] = used.get(nn, 0) + milli(req.get("cpu", "0"))
    for name, cpu in used.items():
        if name in nodes:
            alloc = milli(nodes[name]["status"]["allocatable"]["cpu"])
            check(cpu <= alloc, "node %s overcommitted: %dm of %dm cpu" % (name, cpu, alloc))


def milli(q):
    return int(q[:-1]) if q.endswith("m") else int(float(q) * 1000)


# ---- scenarios ----------------------------------------------------------------------------

def decisions_objects():
    zones = ["zone-a", "zone-b", "zone-c"]
    nodes = []
    for i in range(50):
        taints = [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}] if i % 10 == 9 else None
        nodes.append(node("node-%02d" % i, [4, 8, 16][i % 3], [8, 16, 32][(i // 3) % 3],
                          {"topology.kubernetes.io/zone": zones[i % 3], "disk": "ssd" if i % 4 == 0 else "hdd"},
                          taints))
    pods = []
    for i in range(500):
        kind = i % 5
        cpu = ["100m", "250m", "500m", "200m", "300m"][kind]
        mem = ["128Mi", "256Mi", "512Mi", "64Mi", "1Gi"][(i // 5) % 5]
        extra = {}
        labels = {"app": "web-%d" % (i % 7)}
        if kind == 1:
            extra["nodeSelector"] = {"disk": "ssd"}
        elif kind == 2:
            extra["tolerations"] = [{"key": "dedicated", "operator": "Equal", "value": "batch",
                                     "effect": "NoSchedule"}]
        elif kind == 3:
            extra["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 10, "preference": {"matchExpressions": [
                    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zones[i % 3]]}]}}]}}
        elif kind == 4:
            extra["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                                   "whenUnsatisfiable": "DoNotSchedule",
                                                   "labelSelector": {"matchLabels": labels}}]
        pods.append(pod("pod-%03d" % i, cpu, mem, labels, **extra))
    return nodes, pods


def manifest(c, path):
    """Every Node, Namespace and Pod as the server stores them, as a manifest."""
    docs = []
    for url, api_version, kind in (("/api/v1/namespaces", "v1", "Namespace"), ("/api/v1/nodes", "v1", "Node"),
                                   ("/api/v1/pods", "v1", "Pod")):
        for item in c.api.must("GET", url)["items"]:
            docs.append(dict({"apiVersion": api_version, "kind": kind}, **item))
    with open(path, "w") as f:
        f.write("\n---\n".join(json.dumps(d) for d in docs) + "\n")


def scenario_decisions(c):
    nodes, pods = decisions_objects()
    for n in nodes:
        c.create(n)
    # pods already running (bound at creation): more than one LIST page of pods in all
    for i in range(30):
        c.create(pod("running-%02d" % i, ["1", "2", "500m"][i % 3], "1Gi", nodeName="node-%02d" % (i * 7 % 50)))
    for p in pods:
        c.create(p)
    path = os.path.join(c.dir, "cluster.json.yaml")
    manifest(c, path)
    r = subprocess.run([c.ksched, "schedule", "--seed", str(SEED), path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    check(r.returncode == 0, "ksched schedule failed (%d): %s" % (r.returncode, r.stderr[-2000:]))
    want = {}
    for line in r.stdout.splitlines():
        rec = json.loads(line)
        if rec.get("status") == "Scheduled":
            want[rec["pod"]] = rec["node"]
    names = [p["metadata"]["name"] for p in pods]
    check(len(want) == len(names), "ksched schedule bound %d of %d pods: the workload should fit" %
          (len(want), len(names)))
    # a server without the watch cache pages even resourceVersion=0 lists; the first continued page
    # answers 410, then everything comes in one unpaged list at resourceVersion 0
    c.api.test("config", {"rv0FullList": False})
    c.api.test("expire-continue", {"count": 1})
    s = c.serve("ksched-a", seed=SEED)
    st = c.wait_all_bound(names, 60)
    check_bound_once(st, names)
    pages = [x for x in st["lists"] if x["resource"] == "pods"]
    # (the first is manifest()'s) a page of 500, the continued page 410, then everything in one list
    codes = [(x["limit"], x["continue"], x["code"]) for x in pages]
    check(all(x["resourceVersion"] == "0" for x in pages[1:] if not x["continue"]),
          "pods lists not at resourceVersion 0: %s" % pages[1:])
    expired = codes.index((500, True, 410)) if (500, True, 410) in codes else 0
    check(expired and codes[expired - 1] == (500, False, 200) and codes[expired + 1:expired + 2] == [(0, False, 200)],
          "the pods list was not paged, or its expired continue token not answered by an unpaginated list (as "
          "client-go's pager does): %s" % codes)
    check_no_overcommit(st)
    users = {b["user"] for b in st["bindings"]}
    check(users == {"ksched-a"}, "bindings made by %s" % users)
    got = {k: v["spec"]["nodeName"] for k, v in c.pods(st).items()}
    diff = sorted(k for k in want if got.get(k) != want[k])
    check(not diff, "%d of %d decisions differ from ksched schedule --seed %d (first: %s)" %
          (len(diff), len(want), SEED, [(k, want[k], got.get(k)) for k in diff[:5]]))
    attempts = s.metric("scheduler_schedule_attempts_total", 'result="scheduled"')
    check(attempts == len(names), "scheduler_schedule_attempts_total{result=scheduled} is %s" % attempts)
    check_engine_metrics(s, len(names), nodes=50, cached_pods=30 + len(names))
    print("decisions: %d pods bound as ksched schedule --seed %d binds them (pods listed in %d pages)"
          % (len(names), SEED, len(pages)))


def check_engine_metrics(s, bound, nodes, cached_pods):
    """The engine's families (ksched/internal/metrics_sched.h) on a running `ksched serve` that bound @bound
    pods with one attempt each: there, with values that agree with each other."""
    text = s.get("/metrics")[1]
    for fam, kind in [("scheduler_framework_extension_point_duration_seconds", "histogram"),
                      ("scheduler_plugin_execution_duration_seconds", "histogram"),
                      ("scheduler_plugin_evaluation_total", "counter"),
                      ("scheduler_scheduling_algorithm_duration_seconds", "histogram"),
                      ("scheduler_unschedulable_pods", "gauge"),
                      ("scheduler_cache_size", "gauge"), ("scheduler_scheduler_cache_size", "gauge"),
                      ("scheduler_pod_scheduling_sli_duration_seconds", "histogram")]:
        check("\n# TYPE %s %s\n" % (fam, kind) in text, "/metrics has no %s %s" % (kind, fam))
    cycles = s.metric("scheduler_scheduling_algorithm_duration_seconds_count")
    check(cycles == bound, "scheduling_algorithm_duration_seconds counts %s cycles for %d pods" % (cycles, bound))
    point = 'extension_point="%s",status="Success",profile="default-scheduler"'
    for name in ("PreFilter", "Filter", "Reserve", "Permit", "PreBind", "Bind", "PostBind"):
        n = s.metric("scheduler_framework_extension_point_duration_seconds_count", point % name)
        check(n == bound, "extension point %s observed %s times for %d pods" % (name, n, bound))
    evals = s.metric("scheduler_plugin_evaluation_total",
                     'plugin="NodeUnschedulable",extension_point="Filter",profile="default-scheduler"')
    # every node per attempt on the per-node path; the signature index evaluates, per attempt it is
    # asked, the nodes changed since the last pod of the class, at most every node (docs/architecture.md)
    indexed = s.metric("scheduler_indexed_cycles_total")
    low, high = (bound - indexed) * nodes, (2 * bound - indexed) * nodes
    want = "== %d" % low if indexed == 0 else "in [%d, %d]" % (low, high)
    check(evals == low if indexed == 0 else low <= evals <= high,
          "NodeUnschedulable evaluated %s times for %d pods on %d nodes (%s indexed), want %s" %
          (evals, bound, nodes, indexed, want))
    sampled = s.metric("scheduler_plugin_execution_duration_seconds_count",
                       'plugin="NodeResourcesFit",extension_point="PreFilter",status="Success"')
    check(0.02 * bound <= sampled <= 0.3 * bound, "%s of %d cycles timed their plugins (upstream: 10%%)"
          % (sampled, bound))
    spent = s.metric("scheduler_plugin_execution_duration_seconds_sum", 'extension_point="Filter"')
    check(0 < spent < 10, "Filter plugins took %s s" % spent)
    for fam in ("scheduler_cache_size", "scheduler_scheduler_cache_size"):
        got = (s.metric(fam, 'type="nodes"'), s.metric(fam, 'type="pods"'))
        check(got == (nodes, cached_pods), "%s: nodes, pods %s, want %s" % (fam, got, (nodes, cached_pods)))


def wait_pod_watch(c):
    c.wait("a pods watch", lambda st: any(w["resource"] == "pods" for w in st["watchers"]), 20)


def wait_nodes_seen(c, n, also):
    """Until a pod that fits nowhere fails on a view of @n nodes whose reasons include @also
    (a new probe each time: a node deletion does not retry unschedulable pods)."""
    for k in range(20):
        name = "probe-%d" % k
        c.create(pod(name, cpu="1000"))
        st = c.wait("%s's PodScheduled=False" % name, lambda st: unschedulable(c.pods(st)[NS + "/" + name]), 20)
        msg = next(x["message"] for x in c.pods(st)[NS + "/" + name]["status"]["conditions"]
                   if x["type"] == "PodScheduled")
        c.api.must("DELETE", "/api/v1/namespaces/%s/pods/%s" % (NS, name))
        if msg.startswith("0/%d nodes are available" % n) and also in msg:
            return
        time.sleep(0.2)
    raise Failure("the scheduler never saw %d nodes with '%s' (last: %s)" % (n, also, msg))


def scenario_watch(c):
    for i in range(10):
        c.create(node("node-%02d" % i, 32, 64))
    first = ["a-%03d" % i for i in range(30)]
    for n in first:
        c.create(pod(n))
    s = c.serve("ksched-a")
    c.wait_all_bound(first, 30)
    # a pod that fits nowhere: it is deleted while the streams are down
    c.create(pod("never", nodeSelector={"no-such-label": "x"}))
    c.wait("the unschedulable pod's condition", lambda st: unschedulable(c.pods(st)[NS + "/never"]), 20)
    base = c.state()["requests"]

    # streams cut mid-stream while pods are being created
    during = ["b-%03d" % i for i in range(60)]
    t = threading.Thread(target=lambda: [c.create(pod(n)) for n in during])
    t.start()
    for _ in range(3):
        time.sleep(0.15)
        wait_pod_watch(c)
        c.api.test("break-watches", {"mode": "abrupt"})
    t.join()
    c.wait_all_bound(first + during, 30)

    # a forced 410: history compacted past every watcher's resourceVersion (a write to another
    # resource moves the revision on), then the streams cut; pods created meanwhile
    c.api.test("config", {"bookmarks": False})  # a bookmark would carry the watchers past the bump
    wait_pod_watch(c)
    c.api.must("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                              "metadata": {"name": "bump"}})
    c.api.test("compact")
    c.api.test("break-watches", {"mode": "abrupt"})
    c.api.test("config", {"bookmarks": True})
    c.api.must("DELETE", "/api/v1/namespaces/%s/pods/never" % NS)
    after = ["c-%03d" % i for i in range(30)]
    for n in after:
        c.create(pod(n))
    c.create(node("node-late", 32, 64))
    c.wait_all_bound(after, 40)

    # node changes reach the cache: one cordoned, one deleted (its pods with it, as the node
    # lifecycle controller would)
    c.api.must("PATCH", "/api/v1/nodes/node-00", {"spec": {"unschedulable": True}},
               ctype="application/merge-patch+json")
    c.api.must("DELETE", "/api/v1/nodes/node-01")
    for k, p in c.pods().items():
        if p["spec"].get("nodeName") == "node-01":
            c.api.must("DELETE", "/api/v1/namespaces/%s/pods/%s" % (NS, p["metadata"]["name"]))
            after = [n for n in after if n != p["metadata"]["name"]]
            during = [n for n in during if n != p["metadata"]["name"]]
            first = [n for n in first if n != p["metadata"]["name"]]
    # node and pod events come on separate streams: a pod may be scheduled against a view that
    # has not had a node change yet (kube-scheduler too). Wait until the scheduler has both.
    wait_nodes_seen(c, len(c.state()["objects"]["/nodes"]), "1 node(s) were unschedulable")

    # the same as an HTTP 410 answer to the watch request (a server without the watch cache)
    c.api.test("config", {"bookmarks": False, "watch410": "status"})
    wait_pod_watch(c)
    c.api.must("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                              "metadata": {"name": "bump2"}})
    c.api.test("compact")
    c.api.test("break-watches", {"mode": "clean"})
    c.api.test("config", {"bookmarks": True})
    last = ["d-%03d" % i for i in range(10)]
    for n in last:
        c.create(pod(n))
    st = c.wait_all_bound(last, 40)
    check(any(w["resource"] == "pods" and w["start"] == "HTTP 410" for w in st["watches"]),
          "no pods watch was answered HTTP 410")
    placed = {c.pods(st)[NS + "/" + n]["spec"]["nodeName"] for n in last}
    check(not placed & {"node-00", "node-01"}, "pods placed on a cordoned or deleted node: %s" % sorted(placed))
    after += last
    req = st["requests"]
    check(req.get("LIST pods", 0) >= base.get("LIST pods", 0) + 2,
          "no relist of pods after the 410 (LIST pods %d -> %d)" % (base.get("LIST pods", 0),
                                                                     req.get("LIST pods", 0)))
    check(req.get("WATCH pods", 0) >= base.get("WATCH pods", 0) + 4, "pods watch not resumed after the cuts")
    gone = [w for w in st["watches"] if w["resource"] == "pods" and w["start"] == 410]
    check(gone, "no pods watch was answered 410: %s" % [w for w in st["watches"] if w["resource"] == "pods"])
    check_bound_once(st, first + during + after)
    check_no_overcommit(st)
    # the relist told the scheduler that "never" is gone: nothing is left pending
    c.wait("no pending pods", lambda st: s.metric("scheduler_pending_pods") == 0, 20)
    on_late = [p for p in c.pods(st).values() if p["spec"].get("nodeName") == "node-late"]
    print("watch: %d pods on the node added during the outage" % len(on_late))
    print("watch: %d pods bound once across 5 stream cuts and two 410 relists" % len(first + during + after))


def lease_users(st):
    """holderIdentity -> the user whose writes set it."""
    out = {}
    for w in st["leases"]:
        if w["holder"]:
            out.setdefault(w["holder"], set()).add(w["user"])
    return out


def check_leader_bindings(st):
    """Every successful binding was made by the user holding the lease at that moment."""
    owners = lease_users(st)
    for h, users in owners.items():
        check(len(users) == 1, "lease holder %s written by several users %s" % (h, users))
    for b in st["bindings"]:
        if b["code"] != 201:
            continue
        holders = [h for h in b["leaseHolders"].values() if h]
        check(holders, "binding of %s by %s while nobody held the lease" % (b["pod"], b["user"]))
        check(any(b["user"] in owners.get(h, ()) for h in holders),
              "binding of %s by %s while the lease was held by %s" % (b["pod"], b["user"], holders))


# Shorter than upstream's 15 s / 10 s / 2 s so that a takeover fits the test's time; the
# ratios client-go requires (retry < renew deadline < lease duration) are kept.
LEASE_FLAGS = ["--lease-duration", "8s", "--renew-deadline", "6s", "--retry-period", "1s"]


def scenario_leader(c):
    flags = LEASE_FLAGS
    for i in range(10):
        c.create(node("node-%02d" % i, 32, 64))
    a = c.serve("ksched-a", leader_elect=True, extra=flags)
    st = c.wait("a lease holder", lambda st: any(w["holder"] for w in st["leases"]), 20)
    b = c.serve("ksched-b", leader_elect=True, extra=flags)
    leader_user = next(iter(lease_users(st)[next(w["holder"] for w in st["leases"] if w["holder"])]))
    leader, follower = (a, b) if leader_user == "ksched-a" else (b, a)
    first = ["a-%03d" % i for i in range(40)]
    for n in first:
        c.create(pod(n))
    st = c.wait_all_bound(first, 30)
    check_bound_once(st, first)
    by = {x["user"] for x in st["bindings"]}
    check(by == {leader.user}, "bindings by %s while %s leads" % (by, leader.user))
    time.sleep(3)  # the follower keeps trying (every retry period) and must not bind
    leader.kill()
    killed = time.time()
    second = ["b-%03d" % i for i in range(40)]
    for n in second:
        c.create(pod(n))
    # after the lease duration and a retry period (with jitter) the follower takes over
    st = c.wait_all_bound(second, 40)
    check_bound_once(st, first + second)
    check_leader_bindings(st)
    by2 = {x["user"] for x in st["bindings"] if x["pod"] in {NS + "/" + n for n in second} and x["code"] == 201}
    check(by2 == {follower.user}, "after the leader died bindings came from %s" % by2)
    last_leader = max(x["time"] for x in st["bindings"] if x["user"] == leader.user)
    first_follower = min(x["time"] for x in st["bindings"] if x["user"] == follower.user)
    check(last_leader < first_follower, "the two instances' bindings interleave")
    took = min(w["time"] for w in st["leases"] if w["user"] == follower.user and w["holder"])
    if flags:
        # safety, not speed: the follower may only take a lease the dead leader stopped renewing
        # a whole lease duration ago (it measures from when it saw the last renewal)
        renewed = max(w["time"] for w in st["leases"] if w["user"] == leader.user)
        duration = float(LEASE_FLAGS[1].rstrip("s"))
        check(took - renewed >= duration - 0.1, "the lease was taken %.2f s after the last renewal (duration %gs)"
              % (took - renewed, duration))
    print("leader: %s bound %d, then %s took over %.1f s after the kill and bound %d" %
          (leader.user, len(first), follower.user, took - killed, len(second)))


def scenario_conflict(c):
    c.create(node("big-a", 4, 16))
    c.create(node("big-b", 4, 16))
    c.create(pod("stolen", cpu="3"))
    c.create(pod("retried", cpu="500m"))
    c.api.test("steal-binding", {"pod": NS + "/stolen"})  # another scheduler binds it first
    c.api.test("binding-conflicts", {"pod": NS + "/retried", "count": 2})
    c.serve("ksched-a")
    st = c.wait_all_bound(["stolen", "retried"], 30)
    ours = [b for b in st["bindings"] if b["user"] == "ksched-a"]
    stolen = [b for b in st["bindings"] if b["pod"] == NS + "/stolen"]
    check(stolen and stolen[0]["user"] == "ksched-a" and stolen[0]["code"] == 409,
          "the first binding of 'stolen' should be ours and answered 409: %s" % stolen[:2])
    check(not any(b["pod"] == NS + "/stolen" and b["code"] == 201 for b in ours), "ksched bound 'stolen' anyway")
    other = c.pods(st)[NS + "/stolen"]["spec"]["nodeName"]
    wanted = stolen[0]["node"]
    check(other != wanted, "the hook should have bound 'stolen' elsewhere")
    retried = [b["code"] for b in ours if b["pod"] == NS + "/retried"]
    check(retried[:2] == [409, 409] and retried[2:] == [201], "bindings of 'retried' answered %s" % retried)
    # the assumed 'stolen' (3 cpu on `wanted`) must have been forgotten: 'next' needs that room
    c.create(pod("next", cpu="3"))
    st = c.wait_all_bound(["next"], 30)
    got = c.pods(st)[NS + "/next"]["spec"]["nodeName"]
    check(got == wanted, "'next' bound to %s, expected %s (the room the forgotten pod left)" % (got, wanted))
    check_no_overcommit(st)
    print("conflict: 409s requeued, the stolen pod stayed on %s, its room on %s was reused" % (other, wanted))


def unschedulable(p):
    return any(x["type"] == "PodScheduled" and x["status"] == "False" and x.get("reason") == "Unschedulable"
               for x in p.get("status", {}).get("conditions", []))


def events_for(st, name, reason):
    return [e for e in st["objects"]["events"].values()
            if e.get("involvedObject", {}).get("name") == name and e.get("reason") == reason]


def scenario_preempt(c, extra=()):
    # victims terminate for a while after their DELETE, as with a kubelet: the preemptor
    # waits, nominated, instead of preempting again
    c.api.test("config", {"podTerminationSeconds": 2})
    c.create(node("n1", 4, 16))
    c.api.must("POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
               {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
                "value": 1000})
    c.create(pod("low", cpu="3"))
    c.create(pod("nofit", nodeSelector={"no-such-label": "x"}))
    c.serve("ksched-a", auth="token", extra=extra)
    c.wait_all_bound(["low"], 30)
    st = c.wait("nofit's PodScheduled=False", lambda st: unschedulable(c.pods(st)[NS + "/nofit"]) and
                events_for(st, "nofit", "FailedScheduling"), 20)
    ev = events_for(st, "nofit", "FailedScheduling")[0]
    check((ev["type"], ev.get("reportingComponent"), ev.get("action")) == ("Warning", "default-scheduler",
                                                                            "Scheduling"),
          "FailedScheduling event: %s" % ev)
    check(ev["message"].startswith("0/1 nodes are available"), "FailedScheduling message: %s" % ev["message"])
    c.create(pod("high", cpu="3", priorityClassName="high"))
    # the victim terminates for 2 s: it carries the DisruptionTarget condition set before its DELETE
    st = c.wait("the victim terminating", lambda st: (c.pods(st).get(NS + "/low") or {}).get("metadata", {}).get(
        "deletionTimestamp"), 20)
    conds = {x.get("type"): x for x in c.pods(st)[NS + "/low"].get("status", {}).get("conditions", [])}
    dt = conds.get("DisruptionTarget", {})
    check((dt.get("status"), dt.get("reason"), dt.get("message")) ==
          ("True", "PreemptionByScheduler", "default-scheduler: preempting to accommodate a higher priority pod"),
          "the victim's DisruptionTarget condition: %s" % dt)
    st = c.wait_all_bound(["high"], 30)
    pods = c.pods(st)
    check(NS + "/low" not in pods, "the victim was not deleted")
    check(pods[NS + "/high"]["status"].get("nominatedNodeName") == "n1" or
          any(r.startswith("PATCH pods/status") for r in st["requests"]), "no nomination was written")
    # Events trail the binding they report: wait for them rather than read them at the binding
    st = c.wait("the victim's Preempted and the preemptor's Scheduled events",
                lambda st: events_for(st, "low", "Preempted") and events_for(st, "high", "Scheduled"), 10)
    check(events_for(st, "low", "Preempted"), "no Preempted event on the victim")
    check(events_for(st, "high", "Scheduled"), "no Scheduled event for the preemptor")
    check(st["requests"].get("DELETE pods") == 1, "victim deletions: %s" % st["requests"].get("DELETE pods"))
    bound_at = [b["time"] for b in st["bindings"] if b["pod"] == NS + "/high" and b["code"] == 201]
    check(len(bound_at) == 1, "the preemptor's bindings: %s" % bound_at)
    check(unschedulable(pods[NS + "/nofit"]), "nofit lost its condition")

    # cluster events requeue unschedulable pods: a pod that cannot preempt 'high' waits until
    # 'high' succeeds (the informer's field selector turns that into a delete); 'nofit' waits
    # for a node label
    c.create(pod("waiter", cpu="3"))
    c.wait("waiter's PodScheduled=False", lambda st: unschedulable(c.pods(st)[NS + "/waiter"]), 20)
    c.api.must("PATCH", "/api/v1/namespaces/%s/pods/high/status" % NS, {"status": {"phase": "Succeeded"}},
               ctype="application/merge-patch+json")
    c.api.must("PATCH", "/api/v1/nodes/n1", {"metadata": {"labels": {"no-such-label": "x"}}},
               ctype="application/merge-patch+json")
    st = c.wait_all_bound(["waiter", "nofit"], 30)
    check_bound_once(st, ["high", "waiter", "nofit"])
    print("preempt: victim given DisruptionTarget then deleted, preemptor nominated and bound; Unschedulable "
          "conditions and events written; a succeeded pod's room and a new node label requeued the waiting pods")


def scenario_faults(c):
    for i in range(3):
        c.create(node("node-%02d" % i, 32, 64))
    names = ["f-%03d" % i for i in range(10)]
    for n in names:
        c.create(pod(n))
    c.create(pod("nofit", nodeSelector={"no-such-label": "x"}))
    fault = lambda method, path, code, count, **kw: c.api.test(  # noqa: E731
        "fault", dict(method=method, path=path, code=code, count=count, **kw))
    fault("GET", r"^/api/v1/pods\?", 500, 2, watch=False)  # the first pod lists fail
    fault("GET", r"^/api/v1/nodes\?.*watch=1", 503, 1)  # a watch request fails
    fault("POST", "/pods/f-000/binding$", 429, 2)  # client-go would retry these itself
    fault("POST", "/pods/f-001/binding$", 500, 1)
    fault("PATCH", "/pods/nofit/status$", 503, 1)  # the writer retries
    fault("POST", "/events$", 500, 3)  # an Event given up on
    s = c.serve("ksched-a")
    st = c.wait_all_bound(names, 40)
    check_bound_once(st, names)
    st = c.wait("nofit's PodScheduled=False", lambda st: unschedulable(c.pods(st)[NS + "/nofit"]), 30)
    left = [(f["method"], f["path"], f["left"]) for f in st["faults"] if f["left"]]
    check(not left, "injected faults never reached: %s" % left)
    codes = [b["code"] for b in st["bindings"] if b["pod"] == NS + "/f-000"]
    check(codes[-1] == 201, "bindings of f-000 answered %s" % codes)
    check(s.get("/healthz")[0] == 200, "/healthz not ok")
    print("faults: %d injected failures (list, watch, binding, status patch, event) survived" %
          sum(f["hits"] for f in st["faults"]))


def scenario_bad_input(c):
    for i in range(5):
        c.create(node("node-%02d" % i, 32, 64))
    first = ["a-%03d" % i for i in range(10)]
    for n in first:
        c.create(pod(n))
    s = c.serve("ksched-a", auth="token-file")
    c.wait_all_bound(first, 30)
    size = os.path.getsize(s.log_path)
    for res, ev, name in (("pods", "no-name", None), ("pods", "wrong-type", None), ("pods", "unknown-field", None),
                          ("nodes", "unknown-field", "node-00"), ("nodes", "no-name", None),
                          ("pods", "unknown-type", None), ("pods", "not-json", None), ("pods", "truncated", None)):
        args = {"resource": res, "event": ev}
        if name:
            args["name"] = name
        c.wait("a watch on %s" % res, lambda st: any(w["resource"] == res for w in st["watchers"]), 20)
        c.api.test("inject", args)
        time.sleep(0.2)
    second = ["b-%03d" % i for i in range(20)]
    for n in second:
        c.create(pod(n))
    st = c.wait_all_bound(first + second, 30)
    s.check_alive()
    check_bound_once(st, first + second)
    check(os.path.getsize(s.log_path) > size, "nothing was logged about the bad events")
    with open(s.log_path, errors="replace") as f:
        f.seek(size)
        logged = f.read()
    check("Pod" in logged and "Node" in logged, "the skipped events were not logged:\n" + logged[:2000])
    check(s.get("/healthz")[0] == 200, "/healthz not ok after the bad events")
    print("bad-input: 8 bad watch events skipped, %d pods bound" % len(first + second))


def scenario_pvc_late(c):
    """Claims created after `ksched serve` started (a StatefulSet's): the storage plugins
    rebuild their indexes from the live objects, so the pods bind to their local PVs."""
    c.create(node("node-a", 4, 16))  # labelled kubernetes.io/hostname: node-a
    c.create(node("node-b", 4, 16))
    c.api.must("POST", "/apis/storage.k8s.io/v1/storageclasses",
               {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "local"},
                "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"})

    def pv(name, host):
        c.api.must("POST", "/api/v1/persistentvolumes", {
            "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {"storageClassName": "local", "capacity": {"storage": "1Gi"},
                     "accessModes": ["ReadWriteOnce"],
                     "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                         {"key": "kubernetes.io/hostname", "operator": "In", "values": [host]}]}]}}},
            "status": {"phase": "Available"}})

    def pvc(name):
        c.api.must("POST", "/api/v1/namespaces/%s/persistentvolumeclaims" % NS, {
            "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": NS},
            "spec": {"storageClassName": "local", "accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "1Gi"}}}})

    def claim_pod(name, claim):
        return pod(name, volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": claim}}])

    c.serve("ksched-a")
    wait_pod_watch(c)
    # the StatefulSet order: the claim, then the pod
    pv("pv-b", "node-b")
    pvc("data-web-0")
    c.create(claim_pod("web-0", "data-web-0"))
    st = c.wait_all_bound(["web-0"], 30)
    got = c.pods(st)[NS + "/web-0"]["spec"]["nodeName"]
    check(got == "node-b", "web-0 bound to %s, expected node-b (its claim's only PV)" % got)
    # the pod first: unschedulable until its claim and a PV appear
    c.create(claim_pod("web-1", "data-web-1"))
    st = c.wait("web-1's PodScheduled=False", lambda st: unschedulable(c.pods(st)[NS + "/web-1"]), 20)
    msg = next(x["message"] for x in c.pods(st)[NS + "/web-1"]["status"]["conditions"]
               if x["type"] == "PodScheduled")
    check("not found" in msg, "web-1 should wait for its claim: %s" % msg)
    pv("pv-a", "node-a")
    pvc("data-web-1")
    st = c.wait_all_bound(["web-1"], 30)
    got = c.pods(st)[NS + "/web-1"]["spec"]["nodeName"]
    check(got == "node-a", "web-1 bound to %s, expected node-a (pv-b is taken)" % got)
    print("pvc-late: claims created after start-up bound web-0 to node-b and web-1 to node-a")


# ---- volumes bound through the API (VolumeBinding's PreBind and the PV controller) ------

LOCAL_CLASS = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "local"},
               "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"}
FAST_CLASS = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"},
              "provisioner": "example.com/fast", "volumeBindingMode": "WaitForFirstConsumer"}


def local_pv(c, name, host, size="10Gi"):
    c.api.must("POST", "/api/v1/persistentvolumes", {
        "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
        "spec": {"storageClassName": "local", "capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"],
                 "persistentVolumeReclaimPolicy": "Retain", "local": {"path": "/mnt/" + name},
                 "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                     {"key": "kubernetes.io/hostname", "operator": "In", "values": [host]}]}]}}},
        "status": {"phase": "Available"}})


def claim(c, name, cls="local", size="5Gi"):
    c.api.must("POST", "/api/v1/namespaces/%s/persistentvolumeclaims" % NS, {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": NS},
        "spec": {"storageClassName": cls, "accessModes": ["ReadWriteOnce"],
                 "resources": {"requests": {"storage": size}}}})


def claims_pod(name, *claims):
    return pod(name, volumes=[{"name": "v%d" % i, "persistentVolumeClaim": {"claimName": n}}
                              for i, n in enumerate(claims)])


def pvcs(st):
    return {k.split("/", 1)[1]: v for k, v in st["objects"]["/persistentvolumeclaims"].items()
            if k.startswith(NS + "/")}


def pv_host(pv):
    terms = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
    return terms[0]["matchExpressions"][0]["values"][0]


def wait_claims_bound(c, names, timeout):
    def done(st):
        got = pvcs(st)
        return all(got.get(n, {}).get("status", {}).get("phase") == "Bound" for n in names)
    try:
        return c.wait("%d claims to be Bound" % len(names), done, timeout)
    except Failure:
        got = pvcs(c.state())
        raise Failure("claims not Bound: %s" % [(n, got.get(n, {}).get("status", {}).get("phase"))
                                                 for n in names if got.get(n, {}).get("status", {}).get("phase")
                                                 != "Bound"])


def check_volume_placement(st, pods_claims):
    """Every pod is on the node of the PV each of its claims is bound to, and that PV's
    claimRef names the claim (with its uid): bound once, to one claim."""
    got = pvcs(st)
    pvs = st["objects"]["/persistentvolumes"]
    for p, names in pods_claims.items():
        node_name = c_pods(st)[p]["spec"].get("nodeName")
        for n in names:
            cl = got[n]
            check(cl["status"].get("phase") == "Bound", "claim %s is %s" % (n, cl["status"].get("phase")))
            vol = cl["spec"].get("volumeName")
            pv = pvs.get(vol)
            check(pv is not None, "claim %s is bound to a missing PV %s" % (n, vol))
            check(pv_host(pv) == node_name, "pod %s is on %s but claim %s's PV %s is on %s"
                  % (p, node_name, n, vol, pv_host(pv)))
            ref = pv["spec"].get("claimRef") or {}
            check(ref.get("name") == n and ref.get("uid") == cl["metadata"]["uid"],
                  "PV %s's claimRef is %s, not claim %s" % (vol, ref, n))
            check(cl["metadata"]["annotations"].get("pv.kubernetes.io/bind-completed"),
                  "claim %s has no bind-completed annotation" % n)
    refs = {}
    for name, pv in pvs.items():
        ref = pv["spec"].get("claimRef")
        if ref:
            key = "%s/%s" % (ref.get("namespace"), ref.get("name"))
            check(key not in refs, "claim %s is the claimRef of both %s and %s" % (key, refs.get(key), name))
            refs[key] = name


def c_pods(st):
    return {k.split("/", 1)[1]: v for k, v in st["objects"]["/pods"].items() if k.startswith(NS + "/")}


def scenario_volumes_local(c):
    """Local PVs with node affinity and a WaitForFirstConsumer class: PreBind PUTs each chosen
    PV's claimRef (+ bound-by-controller), the PV controller binds, and each pod lands on
    its PV's node only after its claim is Bound."""
    for i in range(6):
        c.create(node("node-%d" % i, 4, 16))
    c.api.must("POST", "/apis/storage.k8s.io/v1/storageclasses", LOCAL_CLASS)
    for i in (1, 3, 5):
        local_pv(c, "pv-node-%d" % i, "node-%d" % i)
    names = ["vp-%d" % i for i in range(3)]
    for i, n in enumerate(names):
        claim(c, "claim-%d" % i)
        c.create(claims_pod(n, "claim-%d" % i))
    c.create(pod("plain"))
    c.serve("ksched-a")
    st = c.wait_all_bound(names + ["plain"], 60)
    st = wait_claims_bound(c, ["claim-%d" % i for i in range(3)], 30)
    check_bound_once(st, names + ["plain"])
    check_volume_placement(st, {n: ["claim-%d" % i] for i, n in enumerate(names)})
    for name, pv in st["objects"]["/persistentvolumes"].items():
        check(pv["metadata"].get("annotations", {}).get("pv.kubernetes.io/bound-by-controller") == "yes",
              "PV %s lacks pv.kubernetes.io/bound-by-controller" % name)
        check(pv["status"]["phase"] == "Bound", "PV %s is %s" % (name, pv["status"]["phase"]))
    for n, cl in pvcs(st).items():
        check("volume.kubernetes.io/selected-node" not in cl["metadata"].get("annotations", {}),
              "static claim %s got a selected-node annotation" % n)
    # each pod was bound only after its claim: the PV controller's last claim write comes first
    log = {e["claim"]: e["time"] for e in st["pvController"] if e["action"] == "bound"}
    for b in st["bindings"]:
        p = b["pod"].split("/", 1)[1]
        if p in names:
            cl = NS + "/claim-" + p.split("-")[1]
            check(cl in log and log[cl] <= b["time"], "%s was bound before its claim %s" % (p, cl))
    check(st["requests"].get("PUT persistentvolumes", 0) == 3,
          "one PV update per claim, got %s" % st["requests"].get("PUT persistentvolumes"))
    print("volumes-local: 3 pods on their local PVs' nodes, claims Bound by the PV controller")


def scenario_volumes_provision(c):
    """Dynamic provisioning: PreBind sets volume.kubernetes.io/selected-node, the provisioner
    makes a PV for that node and the claim is Bound; a pod with a local claim and a
    provisioned one gets both on its local PV's node."""
    for i in range(4):
        c.create(node("node-%d" % i, 4, 16))
    c.api.must("POST", "/apis/storage.k8s.io/v1/storageclasses", LOCAL_CLASS)
    c.api.must("POST", "/apis/storage.k8s.io/v1/storageclasses", FAST_CLASS)
    local_pv(c, "pv-node-2", "node-2")
    names = ["dp-%d" % i for i in range(3)]
    for i, n in enumerate(names):
        claim(c, "fast-%d" % i, "fast")
        c.create(claims_pod(n, "fast-%d" % i))
    claim(c, "mixed-local")
    claim(c, "mixed-fast", "fast")
    c.create(claims_pod("mixed", "mixed-local", "mixed-fast"))
    c.serve("ksched-a")
    st = c.wait_all_bound(names + ["mixed"], 60)
    all_claims = ["fast-%d" % i for i in range(3)] + ["mixed-local", "mixed-fast"]
    st = wait_claims_bound(c, all_claims, 30)
    check_bound_once(st, names + ["mixed"])
    want = {n: ["fast-%d" % i] for i, n in enumerate(names)}
    want["mixed"] = ["mixed-local", "mixed-fast"]
    check_volume_placement(st, want)
    pods, got = c_pods(st), pvcs(st)
    for p, cls in want.items():
        for n in cls:
            if n.startswith("mixed-local"):
                continue
            sel = got[n]["metadata"]["annotations"].get("volume.kubernetes.io/selected-node")
            check(sel == pods[p]["spec"]["nodeName"], "claim %s selected-node %s, pod %s on %s"
                  % (n, sel, p, pods[p]["spec"]["nodeName"]))
            check(got[n]["spec"]["volumeName"] == "pvc-" + got[n]["metadata"]["uid"],
                  "claim %s bound to %s, not its provisioned PV" % (n, got[n]["spec"]["volumeName"]))
    check(pods["mixed"]["spec"]["nodeName"] == "node-2", "mixed is on %s, not its local PV's node-2"
          % pods["mixed"]["spec"]["nodeName"])
    print("volumes-provision: 4 claims provisioned on their pods' nodes (selected-node), one local claim beside")


def scenario_volumes_stolen(c):
    """A PV taken by another claim between Reserve and PreBind: the claimRef update at the
    version the scheduler saw answers 409, PreBind fails (FailedScheduling with the
    server's message), Unreserve gives the assumption back and the pod is retried on the
    other PV. No PV is bound twice, and the pod is bound once."""
    for n in ("node-a", "node-b", "node-c"):
        c.create(node(n, 4, 16))
    c.api.must("POST", "/apis/storage.k8s.io/v1/storageclasses", LOCAL_CLASS)
    local_pv(c, "pv-a", "node-a")
    local_pv(c, "pv-b", "node-b")
    claim(c, "data-0")
    claim(c, "thief")
    c.api.test("pv-controller", {"steal": {"pv": "*", "claim": NS + "/thief"}})
    c.create(claims_pod("web-0", "data-0"))
    c.serve("ksched-a")
    st = c.wait_all_bound(["web-0"], 60)
    st = wait_claims_bound(c, ["data-0", "thief"], 30)
    stolen = [e for e in st["pvController"] if e["action"] == "stolen"]
    check(len(stolen) == 1, "one PV stolen, got %s" % stolen)
    taken = stolen[0]["pv"]
    got = pvcs(st)
    check(got["thief"]["spec"]["volumeName"] == taken, "thief is bound to %s, not the PV it took (%s)"
          % (got["thief"]["spec"]["volumeName"], taken))
    check(got["data-0"]["spec"]["volumeName"] != taken, "data-0 is bound to the stolen PV %s" % taken)
    check_volume_placement(st, {"web-0": ["data-0"]})
    check_bound_once(st, ["web-0"])
    failed = events_for(st, "web-0", "FailedScheduling")
    check(any("running PreBind plugin \"VolumeBinding\": Operation cannot be fulfilled on persistentvolumes "
              "\"%s\"" % taken in (e.get("message") or e.get("note") or "") for e in failed),
          "no FailedScheduling event with the 409's message: %s" % [e.get("message") for e in failed])
    print("volumes-stolen: %s taken by another claim: 409, requeued, web-0 bound on %s"
          % (taken, c_pods(st)["web-0"]["spec"]["nodeName"]))


def scenario_volumes_timeout(c):
    """No PV controller: a scheduler stopped while its PreBind waits exits at once; the next
    one's wait ends after bindTimeoutSeconds (2 s through --config) with upstream's message,
    the pod is not bound and goes back to the queue; once the controller runs, the PV it
    prebound is bound and the pod lands on its node."""
    cfg = os.path.join(c.dir, "timeout.yaml")
    with open(cfg, "w") as f:
        f.write("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                "profiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n  - name: VolumeBinding\n"
                "    args:\n      bindTimeoutSeconds: 2\n")
    c.api.test("pv-controller", {"enabled": False})
    for n in ("node-a", "node-b"):
        c.create(node(n, 4, 16))
    c.api.must("POST", "/apis/storage.k8s.io/v1/storageclasses", LOCAL_CLASS)
    local_pv(c, "pv-b", "node-b")
    claim(c, "data-0")
    c.create(claims_pod("web-0", "data-0"))
    # a scheduler stopped while its PreBind waits (600 s) ends the wait and exits at once
    first = c.serve("ksched-a")
    c.wait("pv-b to be prebound", lambda st: (st["objects"]["/persistentvolumes"]["pv-b"]["spec"].get("claimRef")
                                             or {}).get("name") == "data-0", 30)
    t = time.monotonic()
    problems = first.stop()
    c.serves.remove(first)
    check(not problems, "stopping a scheduler whose PreBind waits: %s" % problems)
    check(time.monotonic() - t < 10 * SLOW, "SIGTERM took %.1f s with a volume wait pending" % (time.monotonic() - t))
    check(not c_pods(c.state())["web-0"]["spec"].get("nodeName"), "web-0 was bound by the stopped scheduler")
    t0 = time.monotonic()
    c.serve("ksched-b", extra=["--config", cfg])
    want = "running PreBind plugin \"VolumeBinding\": binding volumes: context deadline exceeded"

    def timed_out(st):
        return any(want in (e.get("message") or "") for e in events_for(st, "web-0", "FailedScheduling"))
    st = c.wait("the volume binding to time out", timed_out, 30)
    took = time.monotonic() - t0
    check(took >= 2, "timed out after %.1f s, before bindTimeoutSeconds" % took)
    check(not c_pods(st)["web-0"]["spec"].get("nodeName"), "web-0 was bound without its volume")
    check(not successful_bindings(st).get(NS + "/web-0"), "a Binding was posted for web-0")
    cond = [x for x in c_pods(st)["web-0"]["status"].get("conditions", []) if x["type"] == "PodScheduled"]
    check(cond and cond[0]["status"] == "False" and want in cond[0].get("message", ""),
          "web-0's PodScheduled condition: %s" % cond)
    pv = st["objects"]["/persistentvolumes"]["pv-b"]
    check((pv["spec"].get("claimRef") or {}).get("name") == "data-0", "pv-b was not prebound to data-0")
    check(pvcs(st)["data-0"].get("status", {}).get("phase") != "Bound", "data-0 bound without a controller")
    c.api.test("pv-controller", {"enabled": True})
    st = c.wait_all_bound(["web-0"], 60)
    st = wait_claims_bound(c, ["data-0"], 30)
    check_volume_placement(st, {"web-0": ["data-0"]})
    check_bound_once(st, ["web-0"])
    print("volumes-timeout: PreBind gave up after %.1f s; bound on node-b once the PV controller ran" % took)


SCENARIOS = {"pvc-late": scenario_pvc_late, "decisions": scenario_decisions, "watch": scenario_watch, "leader": scenario_leader,
             "conflict": scenario_conflict, "preempt": scenario_preempt,
             "preempt-sync": lambda c: scenario_preempt(c, ("--feature-gates", "SchedulerAsyncPreemption=false")),
             "faults": scenario_faults,
             "bad-input": scenario_bad_input}
SCENARIOS.update({"volumes-local": scenario_volumes_local, "volumes-provision": scenario_volumes_provision,
                  "volumes-stolen": scenario_volumes_stolen, "volumes-timeout": scenario_volumes_timeout})

# the same scenarios with `--content-type json` (the default is protobuf, as kube-scheduler's)
SCENARIOS.update({n + "-json": SCENARIOS[n] for n in ("decisions", "bad-input")})

PB = "application/vnd.kubernetes.protobuf"


def check_wire(c):
    """What the schedulers sent and were sent, by the server's count: under the default
    content type protobuf for every LIST, WATCH, Binding, Event and Lease (patches stay
    JSON), under --content-type json no protobuf at all."""
    wire = c.api.state()["wire"]
    users = {s.user for s in c.serves}
    seen = 0
    for key, by in sorted(wire.items()):
        user, verb, resource = key.split(" ", 2)
        if user not in users:
            continue
        types = set(by.get("request", {})) | set(by.get("response", {}))
        if c.content_type == "json":
            check(not any(t.startswith(PB) for t in types), "%s: protobuf under --content-type json: %s" % (key, by))
            continue
        answers = set(by.get("response", {}))
        if resource.split("/")[0].endswith(".resource.k8s.io"):
            # kube/proto/ has no resource.k8s.io messages: those kinds are listed and watched as JSON
            check(not any(t.startswith(PB) for t in types), "%s: protobuf: %s" % (key, by))
        elif verb in ("LIST", "WATCH") or resource in ("pods/binding", "events.events.k8s.io",
                                                       "leases.coordination.k8s.io"):
            bodies = set(by.get("request", {})) if verb != "PATCH" else set()  # patches are JSON
            check(all(t.startswith(PB) for t in answers | bodies), "%s: not protobuf: %s" % (key, by))
            seen += 1
        else:
            check(not any(t.startswith(PB) for t in answers), "%s: a protobuf answer: %s" % (key, by))
    check(c.content_type == "json" or seen > 0, "no protobuf request at all: %s" % wire)


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in SCENARIOS:
        print("usage: e2e.py KSCHED {%s}" % "|".join(SCENARIOS), file=sys.stderr)
        return 2
    ksched, name = sys.argv[1], sys.argv[2]
    c = Cluster(ksched, name)
    if name.endswith("-json"):
        c.content_type = "json"

    def body():
        SCENARIOS[name](c)
        check_wire(c)
    return run_scenario(c, name, body)


if __name__ == "__main__":
    sys.exit(main())
