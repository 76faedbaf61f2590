#!/usr/bin/env python3
"""e2e_dra.py KSCHED SCENARIO [PODS] - `ksched serve` with Dynamic Resource Allocation against
the test API server (apiserver.py, its resourceclaim controller dra_controller.py).

The cluster: nodes, a DeviceClass selecting the driver gpu.example.com by CEL, and one
ResourceSlice per node (pool = the node's name) publishing its devices; pods with named
ResourceClaims and with claims from a ResourceClaimTemplate (which the controller makes).
What is checked comes from the server's own record (/_test/dra-log): every write of every
claim (its devices and consumers after it, by resourceVersion), every binding attempt.

  claims        pods, claims and templates made before `ksched serve` starts: every pod is
                bound, and before its binding (by resourceVersion) each of its claims was
                allocated devices of the pod's node and reserved for it through the API; the
                claim got the delete-protection finalizer and an allocationTimestamp; two pods
                share a claim (both reserved, one allocation); no device is ever in two claims'
                allocations at once (every intermediate write); a pod whose claim fits nowhere
                stays pending with "cannot allocate all claims"; LIST and WATCH of
                resource.k8s.io are JSON, the other kinds protobuf
  claims-late   the same with the pods and claims created while `ksched serve` runs
  faults        a claim whose status updates answer 409 five times (bindClaim gives up: the
                FailedScheduling message is upstream's), a 500 on a claim update, a binding
                that fails after the claim was reserved (Unreserve's patch, the claim stays
                allocated and the pod is bound on that node later): every pod bound in the end
  unserved      a server that serves no resource.k8s.io (as kube-apiserver v1.25): said once,
                nothing of it listed or watched, plain pods bound, pods with claims left
                pending and never bound
  extended      extended resources backed by devices: a DeviceClass with extendedResourceName
                example.com/gpu, two nodes that offer none but publish 2 devices each, one
                that offers 2 through its allocatable (a device plugin); 7 pods of 1 each: 6
                bound, one pending; a pod bound where devices serve it had its special claim
                created (owned by the pod, annotated, one request container-0-request-1:
                example.com/gpu sorts second among the container's cpu, gpu, memory),
                allocated a device of its node and reserved for it before its binding, and
                its status.extendedResourceClaimStatus names that claim; a pod bound on the
                device-plugin node has no claim. Injected (two pods placed first, on the device
                nodes): a failed binding and a pod status patch failing every retry; the claim
                made for each failed attempt is deleted, the next attempt makes another
  pressure      PODS pods (default 10,000) over 100 nodes of 96 devices: template claims, named
                claims shared by two pods, 20 pods whose class selects nothing; injected: 100
                failed bindings, 200 claim status updates answered 409, 200 claim updates
                another writer gets in before (real conflicts), 50 claim status updates
                answered 500; once no device is left, 300 bound pods are deleted (the
                controller deallocates and deletes their claims) and the pods waiting get the
                freed devices. No device is ever in two claims' allocations at once, every pod
                bound had its claims allocated and reserved first, every pod ends bound or
                pending with "cannot allocate all claims"

Exit 0 on success, 1 on failure.
"""

import os
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
import harness  # noqa: E402
from e2e import Failure, check  # noqa: E402

NS = e2e.NS
R = "/apis/resource.k8s.io/v1"
DRIVER = "gpu.example.com"
FINALIZER = "resource.kubernetes.io/delete-protection"
# client-side rate limits well above what the test server sustains (each pod: 3 claim requests
# and a binding), as large clusters set them
FAST_CLIENT = "clientConnection:\n  qps: 5000\n  burst: 10000\n"
PB = "application/vnd.kubernetes.protobuf"


# ---- objects --------------------------------------------------------------------------------

def device_class(name, expression):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expression}}]}}


def resource_slice(node, devices):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": node + "-gpus"},
            "spec": {"driver": DRIVER, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "nodeName": node,
                     "devices": [{"name": "gpu-%d" % j, "attributes": {"index": {"int": j}},
                                  "capacity": {"memory": {"value": "16Gi"}}} for j in range(devices)]}}


def claim_spec(cls="gpu"):
    return {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": cls}}]}}


def resource_claim(name, cls="gpu"):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
            "spec": claim_spec(cls)}


def claim_template(name, cls="gpu"):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name},
            "spec": {"metadata": {"labels": {"made-from": name}}, "spec": claim_spec(cls)}}


def claim_pod(name, claim=None, template=None):
    p = e2e.pod(name, cpu="10m", mem="16Mi")
    p["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    ref = {"name": "gpu"}
    if claim:
        ref["resourceClaimName"] = claim
    else:
        ref["resourceClaimTemplateName"] = template
    p["spec"]["resourceClaims"] = [ref]
    return p


class Cluster(e2e.ClusterBase):
    """The server (TLS, or plain HTTP with @plain), an admin client and `ksched serve`."""

    def __init__(self, ksched, name, extra=(), plain=False):
        if not plain:
            super().__init__(ksched, "ksched-dra-%s-" % name, ("admin", "ksched-a"), extra=extra)
            return
        # ClusterBase without the PKI: the test server's Python spends less per request
        self.ksched = ksched
        self.dir = tempfile.mkdtemp(prefix="ksched-dra-%s-" % name)
        self.pki = None
        self.server = harness.ApiServer(self.dir, None, extra=["--bookmark-interval", "1"] + list(extra))
        self.api = self.server.client()
        self.serves = []
        self.api.must("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                     "metadata": {"name": NS}})

    def post(self, path, obj):
        return self.api.must("POST", path, obj)

    def nodes(self, n, devices, cpu=32, pods=110):
        for i in range(n):
            name = "node-%03d" % i
            self.post("/api/v1/nodes", e2e.node(name, cpu, 64, pods=pods))
            self.post(R + "/resourceslices", resource_slice(name, devices))

    def classes(self):
        self.post(R + "/deviceclasses", device_class("gpu", "device.driver == '%s'" % DRIVER))
        self.post(R + "/deviceclasses", device_class("gpu-none", "device.driver == 'none.example.com'"))

    def serve(self, config="", extra=()):
        path = os.path.join(self.dir, "config.yaml")
        with open(path, "w") as f:
            f.write("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                    "leaderElection:\n  leaderElect: false\n" + config)
        kc = self.server.kubeconfig(os.path.join(self.dir, "kubeconfig"), user="ksched-a" if self.pki else None)
        cmd = [self.ksched, "serve", "--kubeconfig", kc, "--config", path, "--metrics-addr", "127.0.0.1:0"]
        s = e2e.Serve(cmd + list(extra), os.path.join(self.dir, "serve.log"), "ksched-a")
        self.serves.append(s)
        return s

    def log(self):
        return self.api.test("dra-log")

    def wait(self, what, cond, timeout):
        """cond(dra-log) until it holds; the log then."""
        def probe():
            st = self.log()
            return st if cond(st) else None
        return self.poll(what, probe, timeout)

    def wait_summary(self, what, cond, timeout):
        """cond(dra-summary) until it holds, looked at every second (the counts of a large run)."""
        deadline = time.monotonic() + timeout * e2e.SLOW
        while True:
            st = self.api.test("dra-summary")
            if cond(st):
                return st
            for s in self.serves:
                s.check_alive()
            if time.monotonic() > deadline:
                raise Failure("timed out waiting for %s: %s" % (what, st))
            time.sleep(1)


# ---- checks ---------------------------------------------------------------------------------

def pod_claims(pod, ns=NS):
    """The claim keys of a pod (named, or generated and recorded), and whether all are known."""
    out, known = [], True
    statuses = {s["name"]: s.get("resourceClaimName") for s in pod["claimStatuses"]}
    for c in pod["claims"]:
        name = c.get("resourceClaimName") or statuses.get(c["name"])
        if name:
            out.append(ns + "/" + name)
        else:
            known = False
    return out, known


def check_never_double_allocated(log):
    """Every intermediate claim write: no device in two claims' allocations at once."""
    owner, held = {}, {}  # device -> claim; claim -> devices
    writes = 0
    for e in log["claimLog"]:
        key = e["claim"]
        for d in held.pop(key, []):
            owner.pop(d, None)
        devices = e["devices"] or []
        for d in devices:
            check(d not in owner, "rv %d: %s allocated to %s while %s holds it" % (e["rv"], d, key, owner.get(d)))
            owner[d] = key
        if devices:
            held[key] = devices
        writes += 1
    return writes, len(owner)


def check_claims_before_binding(log):
    """Each successful binding: every claim of the pod was allocated devices of the node and
    reserved for the pod by a write before the binding's resourceVersion."""
    by_claim = {}
    for e in log["claimLog"]:
        by_claim.setdefault(e["claim"], []).append(e)
    pods = log["pods"]
    checked = 0
    for b in log["bindings"]:
        if b["code"] != 201:
            continue
        p = pods.get(b["pod"])
        if p is None:
            continue  # deleted since
        keys, known = pod_claims(p)
        check(known, "%s was bound before its claims were made: %s" % (b["pod"], p["claimStatuses"]))
        for key in keys:
            ok = [e for e in by_claim.get(key, []) if e["rv"] < b["rv"] and e["devices"] and
                  p["uid"] in e["reservedFor"]]
            check(ok, "%s bound (rv %d) before its claim %s was allocated and reserved for it: %s" %
                  (b["pod"], b["rv"], key, [(e["rv"], e["devices"], e["reservedFor"]) for e in by_claim.get(key, [])]))
            # the allocation that was in place at the binding
            last = [e for e in by_claim[key] if e["rv"] < b["rv"]][-1]
            check(last["devices"] and p["uid"] in last["reservedFor"],
                  "%s: at its binding its claim %s was %s" % (b["pod"], key, last))
            for d in last["devices"]:
                check(d.split("/")[1] == b["node"], "%s bound to %s, its claim %s holds %s" % (b["pod"], b["node"],
                                                                                              key, d))
            checked += 1
    return checked


def check_bound_once(log):
    ok = {}
    for b in log["bindings"]:
        if b["code"] == 201:
            ok[b["pod"]] = ok.get(b["pod"], 0) + 1
    twice = [k for k, n in ok.items() if n > 1]
    check(not twice, "pods bound twice: %s" % twice[:5])
    return ok


def check_final_claims(log):
    seen = {}
    for key, c in log["claims"].items():
        for d in c["devices"] or []:
            check(d not in seen, "%s allocated to %s and %s" % (d, key, seen.get(d)))
            seen[d] = key
        if c["devices"]:
            check(FINALIZER in c["finalizers"], "allocated claim %s lacks the finalizer: %s" % (key, c["finalizers"]))
            check(c["allocationTimestamp"], "allocated claim %s has no allocationTimestamp" % key)
            check(c["nodeSelector"], "allocated claim %s has no nodeSelector" % key)
    return len(seen)


def pending_reason(pod):
    cond = pod["condition"] or {}
    return cond.get("status") == "False" and cond.get("reason") == "Unschedulable", cond.get("message", "")


def check_wire(c):
    """Under the default content type: protobuf for LISTs and WATCHes of every kind but the
    resource.k8s.io ones (kube/proto/ has no message for them: JSON), JSON for the claim writes."""
    wire = c.api.state()["wire"]
    seen = 0
    for key, by in sorted(wire.items()):
        user, verb, resource = key.split(" ", 2)
        if user != "ksched-a":
            continue
        types = set(by.get("response", {})) | set(by.get("request", {}))
        if resource.startswith("resourceclaims") or resource.endswith("resource.k8s.io"):
            check(not any(t.startswith(PB) for t in types), "%s: protobuf: %s" % (key, by))
            seen += verb in ("LIST", "WATCH")
        elif verb in ("LIST", "WATCH"):
            check(all(t.startswith(PB) for t in by.get("response", {})), "%s: not protobuf: %s" % (key, by))
    check(seen >= 8, "the resource.k8s.io kinds were not all listed and watched: %s" % sorted(wire))


# ---- scenarios ------------------------------------------------------------------------------

def populate_small(c):
    """4 nodes of 2 devices: 3 template pods, 2 pods with a claim each, 2 pods sharing one, a
    pod whose claim's class selects nothing: 6 claims for 8 devices."""
    c.post(R + "/namespaces/%s/resourceclaimtemplates" % NS, claim_template("gpu-one"))
    for n in ("solo-0", "solo-1", "shared", "none"):
        c.post(R + "/namespaces/%s/resourceclaims" % NS, resource_claim(n, "gpu-none" if n == "none" else "gpu"))
    pods = [claim_pod("tp-%d" % i, template="gpu-one") for i in range(3)]
    pods += [claim_pod("sp-%d" % i, claim="solo-%d" % i) for i in range(2)]
    pods += [claim_pod("shared-%d" % i, claim="shared") for i in range(2)]
    pods.append(claim_pod("nothing", claim="none"))
    pods.append(e2e.pod("plain"))
    for p in pods:
        c.post("/api/v1/namespaces/%s/pods" % NS, p)
    return [p["metadata"]["name"] for p in pods]


def verify_small(c, names, late):
    want = [n for n in names if n != "nothing"]

    def done(st):
        return all(st["pods"].get(NS + "/" + n, {}).get("node") for n in want) and \
            pending_reason(st["pods"][NS + "/nothing"])[0]
    try:
        log = c.wait("every pod but one bound", done, 60)
    except Failure:
        log = c.log()
        left = [n for n in want if not log["pods"].get(NS + "/" + n, {}).get("node")]
        raise Failure("pods never bound: %s (their PodScheduled: %s)" % (
            left, [(log["pods"][NS + "/" + n]["condition"] or {}).get("message") for n in left[:3]]))
    time.sleep(1)
    log = c.log()
    check_bound_once(log)
    checked = check_claims_before_binding(log)
    writes, _ = check_never_double_allocated(log)
    devices = check_final_claims(log)
    check(devices == 6, "%d devices allocated, want 6 (3 template claims, 2 solo, 1 shared)" % devices)
    shared = log["claims"][NS + "/shared"]
    check(sorted(r["name"] for r in shared["reservedFor"]) == ["shared-0", "shared-1"],
          "the shared claim is reserved for %s" % shared["reservedFor"])
    nodes = {log["pods"][NS + "/shared-%d" % i]["node"] for i in range(2)}
    check(len(nodes) == 1, "the pods sharing a claim are on nodes %s" % nodes)
    for i in range(3):
        keys, _ = pod_claims(log["pods"][NS + "/tp-%d" % i])
        check(len(keys) == 1 and keys[0].startswith(NS + "/tp-%d-gpu-" % i), "tp-%d's claim: %s" % (i, keys))
    pending, msg = pending_reason(log["pods"][NS + "/nothing"])
    check(pending and "cannot allocate all claims" in msg, "nothing's PodScheduled: %s" % msg)
    check(not log["claims"][NS + "/none"]["devices"], "the claim of nothing was allocated")
    check_wire(c)
    print("claims%s: %d pods bound, %d claim checks before their bindings, %d claim writes without a device in "
          "two claims, 6 devices allocated, the pod whose claim fits nowhere pending: %s"
          % ("-late" if late else "", len(want), checked, writes, msg))


def scenario_claims(c, _pods):
    c.nodes(4, 2)
    c.classes()
    names = populate_small(c)
    c.wait("the controller to make the template claims",
           lambda st: sum(1 for p in st["pods"].values() if p["claimStatuses"]) == 3, 20)
    c.serve()
    verify_small(c, names, False)


def scenario_claims_late(c, _pods):
    c.nodes(4, 2)
    c.classes()
    s = c.serve()
    c.poll("ksched serve to schedule", lambda: "ksched serve: scheduling" in e2e.tail(s.log_path, 1000), 30)
    names = populate_small(c)
    verify_small(c, names, True)


def scenario_faults(c, _pods):
    c.nodes(3, 2)
    c.classes()
    for n in ("conflicted", "broken", "rebound"):
        c.post(R + "/namespaces/%s/resourceclaims" % NS, resource_claim(n))
    for n in ("conflicted", "broken", "rebound"):
        c.post("/api/v1/namespaces/%s/pods" % NS, claim_pod(n, claim=n))
    claims = R + "/namespaces/%s/resourceclaims/" % NS
    # bindClaim's five attempts all meet a 409 (then the pod's next attempt goes through)
    c.api.test("fault", {"method": "PUT", "path": "^" + claims + "conflicted/status$", "code": 409, "count": 5})
    # a 500 on the finalizer update: PreBind fails at once
    c.api.test("fault", {"method": "PUT", "path": "^" + claims + "broken$", "code": 500, "count": 1})
    # the claim allocated and reserved, then the binding fails: Unreserve patches the reservation
    # away, the allocation stays, and the next attempt binds on the claim's node
    c.api.test("fault", {"method": "POST", "path": "/pods/rebound/binding$", "code": 500, "count": 1})
    c.serve()
    names = ["conflicted", "broken", "rebound"]
    log = c.wait("every pod bound", lambda st: all(st["pods"][NS + "/" + n]["node"] for n in names), 60)
    time.sleep(0.5)
    log = c.log()
    check_bound_once(log)
    check_claims_before_binding(log)
    check_never_double_allocated(log)
    check_final_claims(log)
    check(all(f["left"] == 0 for f in log["faults"]), "faults not all hit: %s" % log["faults"])
    events = c.api.must("GET", "/apis/events.k8s.io/v1/namespaces/%s/events" % NS)["items"]

    def notes(pod):
        return [e.get("note", "") for e in events
                if e["regarding"]["name"] == pod and e["reason"] == "FailedScheduling"]
    want = ("running PreBind plugin \"DynamicResources\": add allocation and reservation to claim e2e/conflicted: "
            "Operation cannot be fulfilled on resourceclaims.resource.k8s.io \"conflicted\": the object has been "
            "modified; please apply your changes to the latest version and try again")
    check(want in notes("conflicted"), "conflicted's FailedScheduling Events: %s" % notes("conflicted"))
    want = ("running PreBind plugin \"DynamicResources\": add finalizer to claim e2e/broken: Internal error "
            "occurred: injected fault")
    check(want in notes("broken"), "broken's FailedScheduling Events: %s" % notes("broken"))
    check(log["requests"].get("PATCH resourceclaims.resource.k8s.io/status", 0) >= 1,
          "no Unreserve patch after the failed binding: %s" % log["requests"])
    want = "running Bind plugin \"DefaultBinder\": binding rejected: Internal error occurred: injected fault"
    check(want in notes("rebound"), "rebound's FailedScheduling Events: %s" % notes("rebound"))
    rebound = [b for b in log["bindings"] if b["pod"] == NS + "/rebound"]  # the failed one never reached it
    check([b["code"] for b in rebound] == [201], "rebound's bindings: %s" % rebound)
    writes = [e for e in log["claimLog"] if e["claim"] == NS + "/rebound" and e["devices"]]
    check(len({tuple(e["devices"]) for e in writes}) == 1, "rebound's claim was allocated twice: %s" % writes)
    check(writes[-1]["devices"][0].split("/")[1] == rebound[0]["node"], "rebound is not on its claim's node")
    reserved = [bool(e["reservedFor"]) for e in writes]
    check(reserved[:3] == [True, False, True], "rebound's claim was not reserved, unreserved, reserved again: %s"
          % [(e["rv"], e["reservedFor"], e["user"]) for e in writes])
    print("faults: 5 conflicts end bindClaim with upstream's error, a 500 on the finalizer update, a failed "
          "binding unreserved and bound again on %s; every pod bound" % rebound[0]["node"])


def scenario_unserved(c, _pods):
    for i in range(2):
        c.post("/api/v1/nodes", e2e.node("node-%d" % i, 8, 16))
    p = claim_pod("claimer", claim="anything")
    c.post("/api/v1/namespaces/%s/pods" % NS, p)
    c.post("/api/v1/namespaces/%s/pods" % NS, e2e.pod("plain"))
    s = c.serve()
    c.wait("plain bound", lambda st: st["pods"][NS + "/plain"]["node"], 30)
    c.post("/api/v1/namespaces/%s/pods" % NS, e2e.pod("plain-late"))
    c.wait("plain-late bound", lambda st: st["pods"][NS + "/plain-late"]["node"], 30)
    time.sleep(2)
    log = c.log()
    check(not log["pods"][NS + "/claimer"]["node"], "claimer was bound without its claim")
    check(not [b for b in log["bindings"] if b["pod"] == NS + "/claimer"], "a binding was attempted for claimer")
    text = e2e.tail(s.log_path, 100000)
    said = text.count("does not serve resource.k8s.io/v1")
    check(said == 1, "the server's lack of resource.k8s.io/v1 said %d times:\n%s" % (said, text[-2000:]))
    touched = [k for k in log["requests"] if "resource.k8s.io" in k]
    check(not touched, "requests for resource.k8s.io: %s" % touched)
    print("unserved: discovery found no resource.k8s.io/v1 (said once), nothing of it listed or watched, "
          "plain pods bound, the pod with a claim left pending")


def scenario_pressure(c, pods):
    pods = pods or 10000
    t_start = time.monotonic()
    nnodes, per_node = 100, 96
    shared_pods, impossible, deleted = 500, 20, 300
    template_pods = pods - shared_pods - impossible
    c.nodes(nnodes, per_node, pods=200)
    c.classes()
    c.post(R + "/namespaces/%s/resourceclaimtemplates" % NS, claim_template("gpu-one"))
    c.post(R + "/namespaces/%s/resourceclaimtemplates" % NS, claim_template("gpu-nothing", "gpu-none"))
    c.api.test("bulk", {"resource": "resourceclaims", "group": "resource.k8s.io", "namespace": NS,
                        "count": shared_pods // 2, "name": "shared-%05d", "template": resource_claim("x")})
    tmpl = claim_pod("x", template="gpu-one")
    del tmpl["metadata"]["name"]
    c.api.test("bulk", {"resource": "pods", "namespace": NS, "count": template_pods, "name": "tp-%06d",
                        "template": tmpl})
    c.api.test("bulk", {"resource": "pods", "namespace": NS, "count": shared_pods, "name": "sp-%06d",
                        "template": tmpl, "claimName": "shared-%05d", "claimShare": 2})
    tmpl = claim_pod("x", template="gpu-nothing")
    del tmpl["metadata"]["name"]
    c.api.test("bulk", {"resource": "pods", "namespace": NS, "count": impossible, "name": "np-%06d",
                        "template": tmpl})
    want_claims = template_pods + impossible
    c.wait_summary("the controller to make %d claims" % want_claims, lambda st: st["recorded"] >= want_claims, 120)
    setup = time.monotonic() - t_start
    claims = R + "/namespaces/%s/resourceclaims/" % NS
    faults = [{"method": "POST", "path": "/binding$", "code": 500, "count": 100},
              {"method": "PUT", "path": "^" + claims + "[^/]+/status$", "code": 409, "count": 200},
              {"method": "PUT", "path": "^" + claims + "[^/]+/status$", "code": 500, "count": 50}]
    for f in faults:
        c.api.test("fault", f)
    c.api.test("claim-interference", {"count": 200})
    t0 = time.monotonic()
    c.serve(FAST_CLIENT)
    devices = nnodes * per_node
    # every device taken (template claims and the shared ones): the rest wait for room
    fill = min(devices, template_pods + shared_pods // 2)

    c.wait_summary("%d claims allocated" % fill, lambda st: st["reserved"] >= fill, 300)
    filled = time.monotonic() - t0
    log = c.log()
    # then bound pods go: the controller deallocates and deletes their claims, the waiting pods get them
    victims = [k for k, p in sorted(log["pods"].items()) if p["node"] and k.startswith(NS + "/tp-")][:deleted]
    for k in victims:
        c.api.must("DELETE", "/api/v1/namespaces/%s/pods/%s" % (NS, k.split("/", 1)[1]))
    remaining = pods - deleted
    want_bound = remaining - impossible

    try:
        c.wait_summary("%d pods bound, the rest pending with a reason" % want_bound,
                       lambda st: st["bound"] >= want_bound and st["bound"] + st["unschedulable"] == st["pods"], 300)
    except Failure:
        log = c.log()
        unbound = [(k, (p["condition"] or {}).get("message")) for k, p in log["pods"].items() if not p["node"]]
        raise Failure("%d pods not bound (want %d): %s" % (len(unbound), impossible, unbound[:5]))
    took = time.monotonic() - t0
    time.sleep(1)
    log = c.log()
    check(len(log["pods"]) == remaining, "%d pods, want %d" % (len(log["pods"]), remaining))
    bound = check_bound_once(log)
    checked = check_claims_before_binding(log)
    writes, _ = check_never_double_allocated(log)
    allocated_now = check_final_claims(log)
    waiting = {k: p for k, p in log["pods"].items() if not p["node"]}
    check(len(waiting) == impossible and all(k.startswith(NS + "/np-") for k in waiting),
          "pods pending: %s" % sorted(waiting)[:10])
    for k, p in waiting.items():
        ok, msg = pending_reason(p)
        check(ok and "cannot allocate all claims" in msg, "%s pending with %s" % (k, msg))
    hits = [(f["method"], f["code"], f["hits"]) for f in log["faults"]]
    check(all(f["left"] == 0 for f in log["faults"]), "faults not all hit: %s" % log["faults"])
    conflicts = sum(1 for e in log["claimLog"] if e["user"] == "other-writer")
    dealloc = sum(1 for a in log["draController"] if a["action"] == "deallocated")
    took_all = time.monotonic() - t_start
    with open("/proc/%d/status" % c.serves[0].proc.pid) as f:
        hwm = next(int(x.split()[1]) for x in f if x.startswith("VmHWM:")) // 1024
    print("pressure: %d pods (%d from a template, %d sharing %d named claims, %d unsatisfiable), %d nodes x %d "
          "devices; all %d devices taken in %.1fs; %d pods deleted (%d claims deallocated by the controller) and "
          "their devices reused: %d pods bound once each in %.1fs, %d pending with 'cannot allocate all claims'; "
          "injected %s, %d interfering claim writes; %d claim writes checked (no device in "
          "two claims), %d claim-before-binding checks, %d devices allocated at the end; setup %.1fs, total %.1fs; "
          "ksched VmHWM %d MiB"
          % (pods, template_pods, shared_pods, shared_pods // 2, impossible, nnodes, per_node, fill, filled,
             deleted, dealloc, len(bound), took, len(waiting), hits, conflicts, writes, checked,
             allocated_now, setup, took_all, hwm))


def extended_pod(name):
    p = e2e.pod(name, cpu="10m", mem="16Mi")
    res = p["spec"]["containers"][0]["resources"]
    res.setdefault("requests", {})["example.com/gpu"] = "1"
    res.setdefault("limits", {})["example.com/gpu"] = "1"
    return p


def scenario_extended(c, _pods):
    for i in range(2):
        name = "node-%03d" % i
        c.post("/api/v1/nodes", e2e.node(name, 32, 64, labels={"gpus": "devices"}))
        c.post(R + "/resourceslices", resource_slice(name, 2))
    plugin = e2e.node("node-plugin", 32, 64)
    for k in ("capacity", "allocatable"):
        plugin["status"][k]["example.com/gpu"] = "2"
    c.post("/api/v1/nodes", plugin)
    cls = device_class("gpu", "device.driver == '%s'" % DRIVER)
    cls["spec"]["extendedResourceName"] = "example.com/gpu"
    c.post(R + "/deviceclasses", cls)
    names = ["ext-%d" % i for i in range(7)]
    # first ext-0 and ext-1, on the device nodes: ext-0's first binding fails after its claim was
    # made, ext-1's pod status patch fails every retry; Unreserve deletes the claim made for each,
    # and their next attempts start anew
    c.api.test("fault", {"method": "POST", "path": "/pods/ext-0/binding$", "code": 500, "count": 1})
    c.api.test("fault", {"method": "PATCH", "path": "/pods/ext-1/status$", "code": 500, "count": 4})
    for n in names[:2]:
        p = extended_pod(n)
        p["spec"]["nodeSelector"] = {"gpus": "devices"}
        c.post("/api/v1/namespaces/%s/pods" % NS, p)
    c.serve()
    c.wait("ext-0 and ext-1 bound", lambda st: all(st["pods"][NS + "/" + n]["node"] for n in names[:2]), 60)
    for n in names[2:]:
        c.post("/api/v1/namespaces/%s/pods" % NS, extended_pod(n))

    def done(st):
        bound = [n for n in names if st["pods"][NS + "/" + n]["node"]]
        waiting = [n for n in names if pending_reason(st["pods"][NS + "/" + n])[0]]
        return len(bound) == 6 and len(waiting) == 1
    try:
        log = c.wait("6 pods bound, one pending", done, 60)
    except Failure:
        log = c.log()
        raise Failure("pods: %s" % {n: (log["pods"][NS + "/" + n]["node"],
                                        (log["pods"][NS + "/" + n]["condition"] or {}).get("message"))
                                    for n in names})
    time.sleep(1)
    log = c.log()
    check_bound_once(log)
    writes, _ = check_never_double_allocated(log)
    check_final_claims(log)
    by_claim = {}
    for e in log["claimLog"]:
        by_claim.setdefault(e["claim"], []).append(e)
    binding = {b["pod"]: b for b in log["bindings"] if b["code"] == 201}
    on_devices = 0
    for n in names:
        p = log["pods"][NS + "/" + n]
        owned = [(k, cl) for k, cl in log["claims"].items()
                 if any(o.get("uid") == p["uid"] and o.get("controller") for o in cl["owners"])]
        if not p["node"]:
            pending, msg = pending_reason(p)
            check("cannot allocate all claims" in msg and "Insufficient example.com/gpu" in msg,
                  "%s pending with %s" % (n, msg))
            check(not owned, "the pending %s owns claims %s" % (n, owned))
            continue
        if p["node"] == "node-plugin":
            check(not owned, "%s runs on the device plugin's node but owns claims %s" % (n, owned))
            continue
        on_devices += 1
        check(len(owned) == 1, "%s owns claims %s" % (n, owned))
        key, cl = owned[0]
        check(key.startswith(NS + "/" + n + "-extended-resources-"), "%s's claim is named %s" % (n, key))
        check(cl["annotations"].get("resource.kubernetes.io/extended-resource-claim") == "true",
              "%s's claim annotations: %s" % (n, cl["annotations"]))
        check([r["name"] for r in cl["requests"]] == ["container-0-request-1"], "%s's claim: %s" % (n, cl["requests"]))
        check(len(cl["devices"]) == 1 and cl["devices"][0].split("/")[1] == p["node"],
              "%s on %s holds %s" % (n, p["node"], cl["devices"]))
        check([r["uid"] for r in cl["reservedFor"]] == [p["uid"]], "%s's claim is reserved for %s" % (n, cl["reservedFor"]))
        b = binding[NS + "/" + n]
        check(any(e["rv"] < b["rv"] and e["devices"] and p["uid"] in e["reservedFor"] for e in by_claim[key]),
              "%s bound before its claim was allocated and reserved" % n)
        ext = p["extendedClaimStatus"] or {}
        check(ext.get("resourceClaimName") == key.split("/", 1)[1], "%s's extendedResourceClaimStatus: %s" % (n, ext))
        check(ext.get("requestMappings") == [{"containerName": "c", "requestName": "container-0-request-1",
                                              "resourceName": "example.com/gpu"}],
              "%s's request mappings: %s" % (n, ext.get("requestMappings")))
    check(on_devices == 4, "%d pods got devices, want 4" % on_devices)
    check(all(f["left"] == 0 for f in log["faults"]), "faults not all hit: %s" % log["faults"])
    for n in ("ext-0", "ext-1"):
        made = {e["claim"] for e in log["claimLog"] if e["claim"].startswith(NS + "/" + n + "-extended-resources-")}
        gone = {e["claim"] for e in log["claimLog"] if e["claim"] in made and e["type"] == "DELETED"}
        check(len(gone) == 1 and len(made - gone) == 1, "%s's claims %s, deleted %s" % (n, sorted(made), sorted(gone)))
    events = c.api.must("GET", "/apis/events.k8s.io/v1/namespaces/%s/events" % NS)["items"]
    notes = [e.get("note", "") for e in events if e["regarding"]["name"] == "ext-1" and e["reason"] == "FailedScheduling"]
    want = ("running PreBind plugin \"DynamicResources\": update pod e2e/ext-1 ExtendedResourceClaimStatus: "
            "Internal error occurred: injected fault")
    check(want in notes, "ext-1's FailedScheduling Events: %s" % notes)
    print("extended: 6 pods bound (4 with a special claim created, allocated and reserved before the binding, 2 "
          "through the node's allocatable), 1 pending; the claims of a failed binding and a failed status patch "
          "deleted; %d claim writes without a device in two claims" % writes)


SCENARIOS = {"extended": scenario_extended, "claims": scenario_claims, "claims-late": scenario_claims_late, "faults": scenario_faults,
             "unserved": scenario_unserved, "pressure": scenario_pressure}


def main():
    if len(sys.argv) not in (3, 4) or sys.argv[2] not in SCENARIOS:
        print("usage: e2e_dra.py KSCHED {%s} [PODS]" % "|".join(SCENARIOS), file=sys.stderr)
        return 2
    ksched, name = sys.argv[1], sys.argv[2]
    pods = int(sys.argv[3]) if len(sys.argv) == 4 else 0
    extra = ["--disable-group", "resource.k8s.io"] if name == "unserved" else []
    c = Cluster(ksched, name, extra, plain=name == "pressure")
    return e2e.run_scenario(c, name, lambda: SCENARIOS[name](c, pods))


if __name__ == "__main__":
    sys.exit(main())
