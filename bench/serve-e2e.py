#!/usr/bin/env python3
"""serve-e2e.py - `ksched serve` against a real kube-apiserver: pods/s, API server CPU per bound pod,
scheduler CPU and peak RSS for a backlog of M pending pods over N nodes.

    bench/serve-e2e.py --apiserver PATH [--nodes N] [--pods M] [--runs R] [--ksched BIN]
                       [--variant NAME=ARGS ...] [--qps Q] [--json FILE] [--keep DIR]

Starts, in a temporary folder and on free loopback ports, etcd (Debian's etcd-server, installed when
missing) and the given kube-apiserver binary (token authentication, RBAC, no controllers), creates N
Ready nodes (4 cpu, 32Gi, 110 pods, 3 zones), then for every run and every variant: creates M pending
pods (100m / 500Mi) with the API server's clients, starts `KSCHED serve --kubeconfig K --config C ARGS`
(leader election off, clientConnection qps/burst Q/2Q), and watches pods until all M have a node. Runs
alternate the variants (A B A B ...), so a machine whose speed drifts affects both alike. Each run
reports:
  - pods/s: M over the time from the scheduler's start to the last binding seen by the watch (the
    backlog as a whole, list and sync included), and the rate between the first and the last binding;
  - the API server's CPU (utime+stime of its process) per bound pod, and etcd's, from the scheduler's
    start until its Events are written too (the namespace's Event count has not grown for 3 s;
    events_drained_s: how long after the last binding that was);
  - how far each pod's Scheduled Event trails its binding, both seen through watches of the
    bench's own (event_lag_p50_s, _p99_s, _max_s, events_over_1s, events_missing);
  - the scheduler's CPU (utime+stime) and peak RSS (VmHWM) at that point;
  - the requests the API server served meanwhile, by verb and resource (apiserver_request_total).
The pods are deleted (grace period 0) after each run, and the next run starts once none is left. Medians per variant, and the per-pair ratios of
each variant against the first, are printed at the end; --json writes every run and the medians.

The variant's ARGS are added to `ksched serve`'s command line, e.g.
    --variant protobuf= --variant json=--content-type=json
and --command pairs another scheduler, e.g. kube-scheduler:
    --variant ksched= --command 'kube=/path/kube-scheduler --config {config}'
Nothing here is specific to a kube-apiserver version; v1.25 and later are known to work.
"""
import argparse
import http.client
import json
import os
import shlex
import shutil
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time

CLK = os.sysconf("SC_CLK_TCK")


def log(*a):
    print("serve-e2e:", *a, file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    """utime + stime of @pid (and its waited-for children) in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # fields[0] is state (field 3); utime, stime are fields 14, 15 (1-based)
    return (int(fields[11]) + int(fields[12])) / CLK


def peak_rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return None


def ensure_etcd():
    etcd = shutil.which("etcd") or "/usr/bin/etcd"
    if os.access(etcd, os.X_OK):
        return etcd
    log("installing etcd-server")
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(sudo + ["apt-get", "update", "-qq"], check=True, env=env, stdout=subprocess.DEVNULL)
    subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "etcd-server"],
                   check=True, env=env, stdout=subprocess.DEVNULL)
    return "/usr/bin/etcd"


def run_quiet(cmd, cwd):
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_pki(d):
    """A CA, a serving certificate for 127.0.0.1, a service-account key pair and an admin token."""
    run_quiet(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", "30",
               "-keyout", "ca.key", "-out", "ca.crt", "-subj", "/CN=serve-e2e-ca"], d)
    with open(os.path.join(d, "server.ext"), "w") as f:
        f.write("basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
                "subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes.default.svc\n")
    run_quiet(["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-sha256", "-keyout", "server.key",
               "-out", "server.csr", "-subj", "/CN=kube-apiserver"], d)
    run_quiet(["openssl", "x509", "-req", "-sha256", "-days", "30", "-in", "server.csr", "-CA", "ca.crt",
               "-CAkey", "ca.key", "-CAcreateserial", "-extfile", "server.ext", "-out", "server.crt"], d)
    run_quiet(["openssl", "genrsa", "-out", "sa.key", "2048"], d)
    run_quiet(["openssl", "rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub"], d)
    os.makedirs(os.path.join(d, "apiserver-certs"), exist_ok=True)
    token = os.urandom(24).hex()
    with open(os.path.join(d, "token.csv"), "w") as f:
        f.write(f'{token},admin,admin,"system:masters"\n')
    return token


class Api:
    """A small client of the API server: JSON over HTTPS with the admin token, one connection a thread."""

    def __init__(self, port, token):
        self.port, self.token = port, token
        self.ctx = ssl._create_unverified_context()
        self.local = threading.local()

    def conn(self):
        c = getattr(self.local, "c", None)
        if c is None:
            c = self.local.c = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx, timeout=120)
        return c

    def call(self, method, path, body=None):
        headers = {"Authorization": "Bearer " + self.token, "Content-Type": "application/json"}
        for attempt in range(3):
            try:
                c = self.conn()
                c.request(method, path, json.dumps(body) if body is not None else None, headers)
                r = c.getresponse()
                data = r.read()
                return r.status, data
            except (OSError, http.client.HTTPException):
                self.local.c = None
                if attempt == 2:
                    raise
                time.sleep(0.2)

    def create_all(self, path, objs, threads=16):
        errors = []

        def work(part):
            for o in part:
                status, data = self.call("POST", path, o)
                if status not in (200, 201, 409):
                    errors.append((status, data[:200]))

        ts = [threading.Thread(target=work, args=(objs[i::threads],)) for i in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        if errors:
            raise RuntimeError(f"{len(errors)} creations failed, e.g. {errors[0]}")


def request_samples(metrics):
    """(labels, value) of every apiserver_request_total sample in the API server's /metrics text."""
    for line in metrics.decode().splitlines():
        if line.startswith("apiserver_request_total{"):
            labels, value = line[len("apiserver_request_total{"):].rsplit("} ", 1)
            kv = dict(item.split("=", 1) for item in labels.split('",') if "=" in item)
            yield {k: v.strip('"') for k, v in kv.items()}, float(value)


def request_counts(api):
    """apiserver_request_total summed by "VERB resource[/subresource]" (the API server's own metric)."""
    status, data = api.call("GET", "/metrics")
    counts = {}
    for kv, value in request_samples(data):
        key = kv.get("verb", "?") + " " + kv.get("resource", "") + (
            "/" + kv["subresource"] if kv.get("subresource") else "")
        counts[key] = counts.get(key, 0) + float(value)
    return counts


def node(i):
    res = {"cpu": "4", "memory": "32Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": f"node-{i}", "labels": {"kubernetes.io/hostname": f"node-{i}",
                                                         "topology.kubernetes.io/zone": f"zone-{i % 3}",
                                                         "kubernetes.io/os": "linux"}},
            "status": {"capacity": res, "allocatable": res,
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                       "lastHeartbeatTime": "2026-01-01T00:00:00Z",
                                       "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}


def pod(prefix, i):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{prefix}-{i}", "namespace": "default", "labels": {"app": prefix}},
            "spec": {"containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.9",
                                     "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}]}}


def watch_events(api, path, rv, handle, done):
    """Watch @path (a collection, JSON) from resourceVersion @rv until @done is set or @handle(type,
    object) returns true, reconnecting from the last resourceVersion seen when the stream ends."""
    while not done.is_set():
        c = http.client.HTTPSConnection("127.0.0.1", api.port, context=api.ctx, timeout=None)
        try:
            c.request("GET", f"{path}{'&' if '?' in path else '?'}watch=1&resourceVersion={rv}"
                             "&allowWatchBookmarks=true", headers={"Authorization": "Bearer " + api.token})
            for line in c.getresponse():
                ev = json.loads(line)
                obj = ev.get("object", {})
                if ev.get("type") == "ERROR":
                    raise RuntimeError(f"watch error: {obj}")
                rv = obj.get("metadata", {}).get("resourceVersion", rv)
                if handle(ev.get("type"), obj) or done.is_set():
                    return
        except (OSError, http.client.HTTPException, ValueError) as e:
            log("watch reconnect:", e)
            time.sleep(0.2)
        finally:
            c.close()


def collection_rv(api, path):
    status, data = api.call("GET", f"{path}?limit=1")
    return json.loads(data)["metadata"]["resourceVersion"]


class BindWatch:
    """Counts pods of one prefix that get spec.nodeName, from a watch opened before the scheduler starts."""

    def __init__(self, api, prefix, want):
        self.prefix, self.want = prefix, want
        self.bound, self.first, self.last = {}, None, None  # name -> monotonic time seen bound
        self.done = threading.Event()
        path = "/api/v1/namespaces/default/pods"
        rv = collection_rv(api, path)
        threading.Thread(target=watch_events, daemon=True,
                         args=(api, f"{path}?labelSelector=app%3D{prefix}", rv, self.seen, self.done)).start()

    def seen(self, kind, obj):
        if kind in ("ADDED", "MODIFIED") and obj.get("spec", {}).get("nodeName"):
            name = obj["metadata"]["name"]
            if name not in self.bound:
                now = time.monotonic()
                self.bound[name] = now
                self.first = self.first or now
                self.last = now
                if len(self.bound) >= self.want:
                    self.done.set()
                    return True
        return False


class EventWatch:
    """When each pod of one prefix got its Scheduled Event (events.k8s.io/v1), from a watch opened
    before the scheduler starts: set against BindWatch's times, how far Events trail bindings."""

    def __init__(self, api, prefix):
        self.prefix = prefix + "-"
        self.seen = {}  # regarding pod name -> monotonic time its Scheduled Event was seen
        self.stop = threading.Event()
        path = "/apis/events.k8s.io/v1/namespaces/default/events"
        rv = collection_rv(api, path)
        threading.Thread(target=watch_events, daemon=True, args=(api, path, rv, self.event, self.stop)).start()

    def event(self, kind, obj):
        name = obj.get("regarding", {}).get("name", "")
        if kind == "ADDED" and obj.get("reason") == "Scheduled" and name.startswith(self.prefix):
            self.seen.setdefault(name, time.monotonic())
        return False

    def lags(self, bound):
        """Seconds from each bound pod's binding to its Scheduled Event (None: never seen), sorted."""
        out = sorted(self.seen[n] - t for n, t in bound.items() if n in self.seen)
        return out, len(bound) - len(out)


def quantile(xs, q):
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else None


class Cluster:
    def __init__(self, args, work):
        self.args, self.work, self.procs, self.cmds = args, work, [], {}
        self.token = make_pki(work)
        etcd_port, peer_port, self.port = free_port(), free_port(), free_port()
        self.etcd = self.spawn("etcd", [ensure_etcd(), "--name", "e2e", "--data-dir", f"{work}/etcd",
                                        "--listen-client-urls", f"http://127.0.0.1:{etcd_port}",
                                        "--advertise-client-urls", f"http://127.0.0.1:{etcd_port}",
                                        "--listen-peer-urls", f"http://127.0.0.1:{peer_port}",
                                        "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer_port}",
                                        "--initial-cluster", f"e2e=http://127.0.0.1:{peer_port}",
                                        "--quota-backend-bytes", str(8 << 30), "--logger", "zap",
                                        "--log-outputs", "stderr"])
        # Admission: the defaults minus ServiceAccount (no controller makes the default account) and
        # TaintNodesByCondition (no node lifecycle controller lifts its not-ready taint).
        self.apiserver = self.spawn("kube-apiserver", [
            args.apiserver, "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
            f"--secure-port={self.port}", f"--etcd-servers=http://127.0.0.1:{etcd_port}",
            f"--tls-cert-file={work}/server.crt", f"--tls-private-key-file={work}/server.key",
            f"--client-ca-file={work}/ca.crt", f"--cert-dir={work}/apiserver-certs",
            f"--token-auth-file={work}/token.csv", f"--service-account-key-file={work}/sa.pub",
            f"--service-account-signing-key-file={work}/sa.key",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            "--service-cluster-ip-range=10.96.0.0/12", "--authorization-mode=RBAC,Node",
            "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition", "--anonymous-auth=false",
            "--endpoint-reconciler-type=none"] + shlex.split(args.apiserver_args))
        self.api = Api(self.port, self.token)
        self.wait_ready()
        with open(f"{work}/kubeconfig", "w") as f:
            f.write(f"""apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {{server: "https://127.0.0.1:{self.port}", insecure-skip-tls-verify: true}}
users:
- name: admin
  user: {{token: "{self.token}"}}
contexts:
- name: e2e
  context: {{cluster: e2e, user: admin}}
current-context: e2e
""")
        with open(f"{work}/config.yaml", "w") as f:
            f.write(f"""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
clientConnection:
  kubeconfig: {work}/kubeconfig
  qps: {args.qps}
  burst: {2 * args.qps}
""")

    def spawn(self, name, cmd):
        """Start @name (its command line kept in self.cmds, so it can be started again; its log appended to)."""
        self.cmds[name] = cmd
        logf = open(f"{self.work}/{name}.log", "a")
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                             start_new_session=True)
        self.procs.append(p)
        return p

    def wait_ready(self):
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.apiserver.poll() is not None:
                raise RuntimeError(f"kube-apiserver exited; see {self.work}/kube-apiserver.log")
            try:
                status, data = self.api.call("GET", "/readyz")
                if status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.3)
        raise RuntimeError("kube-apiserver not ready after 120 s")

    def stop(self):
        for p in reversed(self.procs):
            stop_process(p, 20)


def one_run(cl, args, name, kind, extra, index):
    prefix = f"r{index}-{name}".lower().replace("_", "-")
    t0 = time.monotonic()
    cl.api.create_all("/api/v1/namespaces/default/pods", [pod(prefix, i) for i in range(args.pods)])
    log(f"run {index} ({name}): {args.pods} pods created in {time.monotonic() - t0:.1f} s")
    watch = BindWatch(cl.api, prefix, args.pods)
    events = EventWatch(cl.api, prefix)
    req0 = request_counts(cl.api)
    api_cpu0, etcd_cpu0 = cpu_seconds(cl.apiserver.pid), cpu_seconds(cl.etcd.pid)
    start = time.monotonic()
    out = open(f"{cl.work}/ksched-{prefix}.log", "w")
    if kind == "command":
        cmd = shlex.split(extra.format(kubeconfig=f"{cl.work}/kubeconfig", config=f"{cl.work}/config.yaml"))
    else:
        cmd = [args.ksched, "serve", "--kubeconfig", f"{cl.work}/kubeconfig", "--config",
               f"{cl.work}/config.yaml"] + shlex.split(extra)
    sched = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=out)
    finished = watch.done.wait(args.timeout)
    bound_at = time.monotonic()
    # the scheduler's writes trail its bindings (Events go out after the pod is bound): the
    # costs run until it has written nothing for 3 s, so every scheduler pays for its Events
    drained = wait_events_quiet(cl.api, 3.0, args.timeout)
    api_cpu1, etcd_cpu1 = cpu_seconds(cl.apiserver.pid), cpu_seconds(cl.etcd.pid)
    sched_cpu, sched_rss = cpu_seconds(sched.pid), peak_rss_mib(sched.pid)
    req1 = request_counts(cl.api)
    events.stop.set()
    lags, missing = events.lags(dict(watch.bound))
    sched.send_signal(signal.SIGTERM)
    try:
        sched.wait(30)
    except subprocess.TimeoutExpired:
        sched.kill()
    n = len(watch.bound)
    res = {"variant": name, "run": index, "nodes": args.nodes, "pods": args.pods, "bound": n,
           "seconds": round(watch.last - start, 3) if watch.last else None,
           "pods_per_second": round(n / (watch.last - start), 1) if watch.last else None,
           "bind_rate": (round((n - 1) / (watch.last - watch.first), 1)
                         if watch.last and watch.last > watch.first else None),
           "events_drained_s": round(drained - bound_at, 1),
           # how long after its binding (both seen through watches) each pod's Scheduled Event came
           "event_lag_p50_s": round(quantile(lags, 0.5), 3) if lags else None,
           "event_lag_p99_s": round(quantile(lags, 0.99), 3) if lags else None,
           "event_lag_max_s": round(lags[-1], 3) if lags else None,
           "events_over_1s": sum(1 for x in lags if x > 1.0), "events_missing": missing,
           "apiserver_cpu_s": round(api_cpu1 - api_cpu0, 2),
           "apiserver_ms_per_pod": round(1000 * (api_cpu1 - api_cpu0) / n, 3) if n else None,
           "etcd_cpu_s": round(etcd_cpu1 - etcd_cpu0, 2),
           "scheduler_cpu_s": round(sched_cpu, 2), "scheduler_peak_rss_mib": round(sched_rss or 0, 1),
           "loadavg": os.getloadavg()[0],
           # requests the API server served during the run (the bench's own metrics reads included)
           "requests": {k: int(v - req0.get(k, 0)) for k, v in sorted(req1.items()) if v > req0.get(k, 0)}}
    if not finished:
        log(f"run {index} ({name}): only {n} of {args.pods} pods bound in {args.timeout} s")
    print(json.dumps(res), flush=True)
    delete_pods(cl.api)
    return res


def event_count(api):
    """Events in the namespace, from a LIST of one (the server counts the rest)."""
    status, data = api.call("GET", "/apis/events.k8s.io/v1/namespaces/default/events?limit=1")
    if status != 200:
        return None
    d = json.loads(data)
    return len(d["items"]) + d["metadata"].get("remainingItemCount", 0)


def wait_events_quiet(api, quiet, timeout):
    """Returns the time at which the namespace's Event count stopped growing, once it has not
    grown for @quiet seconds (or after @timeout)."""
    t0 = time.monotonic()
    last, since = event_count(api), time.monotonic()
    while time.monotonic() - t0 < timeout:
        time.sleep(0.5)
        n = event_count(api)
        if n != last:
            last, since = n, time.monotonic()
        elif time.monotonic() - since >= quiet:
            break
    return since


def delete_pods(api, timeout=900):
    """Deletes every pod of the namespace and returns once none is left, so that the next run
    pays nothing for this one. A DELETE of a collection of thousands outlives the API server's
    request deadline (504) and stops where it got to, so it is sent again until none is left."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        status, data = api.call("GET", "/api/v1/namespaces/default/pods?limit=1")
        if status == 200 and not json.loads(data)["items"]:
            log(f"pods deleted in {time.monotonic() - t0:.1f} s")
            return
        status, data = api.call("DELETE", "/api/v1/namespaces/default/pods?gracePeriodSeconds=0")
        if status not in (200, 504):
            log(f"deleting the pods: HTTP {status}: {data[:200]}")
            time.sleep(1)
    raise RuntimeError(f"pods still there {timeout} s after the first DELETE")


def parse_args(ap, nodes, pods, timeout):
    """The options every bench of this control plane takes (with these defaults), parsed."""
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--apiserver", required=True, help="the kube-apiserver binary")
    ap.add_argument("--apiserver-args", default="", help="more kube-apiserver flags")
    ap.add_argument("--ksched", default=os.path.join(here, "..", "build", "ksched"))
    ap.add_argument("--nodes", type=int, default=nodes)
    ap.add_argument("--pods", type=int, default=pods)
    ap.add_argument("--runs", type=int, default=3, help="runs of each variant")
    ap.add_argument("--qps", type=int, default=5000, help="clientConnection.qps (burst twice that)")
    ap.add_argument("--timeout", type=float, default=timeout, help="seconds a run may take")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=ARGS",
                    help="a named set of extra `ksched serve` flags; repeat to pair (default: one, no flags)")
    ap.add_argument("--command", action="append", default=[], metavar="NAME=TEMPLATE",
                    help="another scheduler to pair, as a command line in which {config} is the "
                         "KubeSchedulerConfiguration (clientConnection names the kubeconfig) and "
                         "{kubeconfig} the kubeconfig, e.g. kube=\"kube-scheduler --config {config}\"")
    ap.add_argument("--json", help="write every run and the medians here")
    ap.add_argument("--keep", help="keep the work folder (logs, kubeconfig) at this path")
    return ap.parse_args()


def parse_variants(ap, args):
    """(name, "ksched" or "command", extra) for each --variant and --command, in order (one default)."""
    variants = [(n, "ksched", a) for n, a in ((v.split("=", 1) + [""])[:2] for v in args.variant)]
    variants += [(c.split("=", 1)[0], "command", c.split("=", 1)[1]) for c in args.command if "=" in c]
    if not os.access(args.apiserver, os.X_OK) or not os.access(args.ksched, os.X_OK):
        ap.error("--apiserver and --ksched must be executables")
    return variants or [("default", "ksched", "")]


def summarize(runs, variants, keys, complete):
    """Medians of @keys per variant over its @complete runs, and the medians of the per-pair ratios
    of each variant's runs to the first variant's."""
    summary = {}
    for name, _, _ in variants:
        rs = [r for r in runs if r["variant"] == name and complete(r)]
        summary[name] = {k: statistics.median(r[k] for r in rs) if rs else None for k in keys}
        summary[name]["complete_runs"] = len(rs)
    base = variants[0][0]
    for name, _, _ in variants[1:]:
        ratios = {}
        for k in keys:
            pairs = [(a[k], b[k]) for a, b in zip([r for r in runs if r["variant"] == name],
                                                  [r for r in runs if r["variant"] == base])
                     if a[k] and b[k]]
            ratios[k] = round(statistics.median(x / y for x, y in pairs), 3) if pairs else None
        summary[name]["ratio_to_" + base] = ratios
    return summary


def run_variants(args, variants, prefix, populate, run):
    """A control plane in a fresh folder (@prefix) with args.nodes nodes, @populate(cluster) on it,
    then args.runs rounds of @run(cluster, args, name, kind, extra, round) over the variants in
    turn (A B A B ...), so that a machine whose speed drifts affects them alike. Their results."""
    work = args.keep or tempfile.mkdtemp(prefix=prefix)
    os.makedirs(work, exist_ok=True)
    cl, runs = None, []
    try:
        cl = Cluster(args, work)
        t0 = time.monotonic()
        cl.api.create_all("/api/v1/nodes", [node(i) for i in range(args.nodes)])
        log(f"{args.nodes} nodes created in {time.monotonic() - t0:.1f} s; API server on port {cl.port}")
        populate(cl)
        for r in range(args.runs):
            for name, kind, extra in variants:
                runs.append(run(cl, args, name, kind, extra, r))
    finally:
        if cl:
            cl.stop()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return runs


def stop_process(p, wait):
    """SIGTERM @p's process group, SIGKILL after @wait seconds."""
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(wait)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    args = parse_args(ap, nodes=5000, pods=10000, timeout=1800)
    variants = parse_variants(ap, args)

    runs = run_variants(args, variants, "serve-e2e-", lambda cl: None, one_run)
    keys = ["pods_per_second", "bind_rate", "apiserver_ms_per_pod", "etcd_cpu_s", "scheduler_cpu_s",
            "scheduler_peak_rss_mib", "events_drained_s", "event_lag_p99_s", "event_lag_max_s"]
    summary = summarize(runs, variants, keys, lambda r: r["bound"] == args.pods)
    print(json.dumps({"nodes": args.nodes, "pods": args.pods, "medians": summary}, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"nodes": args.nodes, "pods": args.pods, "runs": runs, "medians": summary}, f, indent=1)
    return 0 if all(s["complete_runs"] == args.runs for s in summary.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
