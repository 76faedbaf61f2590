#!/usr/bin/env python3
"""e2e_faults.py KSCHED SCENARIO - `ksched serve` against the test API server (apiserver.py)
through the failures of a real control plane: the API server process dying and coming
back, watch streams cut and expired, bindings refused or never answered, a contended or
stolen Lease.

Every scenario has nodes with room for the pods that fit and a few pods that fit nowhere
(a nodeSelector no node matches), and ends with the same checks: every pod that fits bound
exactly once, no node over its cpu, the pods that fit nowhere still pending with
PodScheduled=False (Unschedulable) and counted by scheduler_pending_pods (no pod lost from
the queue), and the time from the end of the fault to the last binding under a bound. Each
prints one line with that recovery time.

  outage          the server down for 5 s (connections refused, every open one cut, the
                  state kept) while pods are being created and bound: /livez answers 200
                  throughout, /readyz 500 during the outage and 200 after; all bound within
                  30 s of the server's return
  watch-cut       streams cut mid-stream while pods are created (resumed by a watch, no
                  relist), then three forced 410s (history compacted past the watchers, the
                  streams cut): as an ERROR event, relisted at the resourceVersion the watch
                  had (the first list was at "0", from the watch cache); as an HTTP 410 whose
                  relist answers 410 Expired; as an ERROR event whose relist answers 504
                  ResourceVersionTooLarge: each of those followed by a consistent paged list
                  (no resourceVersion, limit 500), as client-go's reflector does
  bind-errors     bindings answered 429 and 503 (both with Retry-After: 1) and 500, several
                  per pod for several pods: none retried sooner than its Retry-After, all
                  bound once
  stall           the first pods LIST and one binding read and never answered: the client
                  gives up after its 30 s request timeout, the list is retried and the pod
                  requeued and bound once; the other pods bind meanwhile
  lost-answers    bindings the server applies and whose answers it loses (the connection cut
                  instead), on nodes with room for exactly the pods ahead of three more:
                  the lost ones are found bound (no second binding), the three stay
                  Unschedulable and no node goes over its cpu (forgetting them would give
                  their room to the three)
  lease-conflict  two `ksched serve --leader-elect`: 409 Conflicts on the holder's Lease
                  renewals (it keeps the lease) and on the other's takeover after the holder
                  is killed (it takes it on the next try); bindings only by the lease holder
  lease-stolen    the Lease overwritten with another holder and a fresh renewTime: ksched
                  stops binding within one retry period and exits with status 1
                  ("leaderelection lost")

Exit 0 on success, 1 on failure.
"""

import datetime
import http.client
import os
import ssl
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
from e2e import Failure, check  # noqa: E402

NS = e2e.NS
SLOW = e2e.SLOW
# a 4-cpu node holds 8 pods that fit
FIT_CPU = "500m"
# ksched's client gives up on a request after this long (kube/client.c)
REQUEST_TIMEOUT = 30.0
LEASE_RETRY = 1.0  # --retry-period in e2e.LEASE_FLAGS
# the pods LISTs that name a resourceVersion other than "0": the reflector's relists
RELIST = r"^/api/v1/pods\?(.*&)?resourceVersion=[1-9]"
DOWN = (ConnectionError, OSError, ssl.SSLError, http.client.HTTPException)


# ---- helpers ------------------------------------------------------------------------------

def fit(name):
    return e2e.pod(name, cpu=FIT_CPU)


def nofit(name):
    return e2e.pod(name, nodeSelector={"no-such-label": "x"})


def make_nodes(c, n):
    for i in range(n):
        c.create(e2e.node("node-%02d" % i, 4, 16))


def populate(c, nodes, names, nowhere):
    """@nodes nodes (8 pods that fit each), the pods @names that fit and @nowhere pods that fit
    nowhere: (names, the latter's names)."""
    make_nodes(c, nodes)
    others = ["nofit-%d" % i for i in range(nowhere)]
    for n in names:
        c.create(fit(n))
    for n in others:
        c.create(nofit(n))
    return names, others


def create_retrying(c, obj, timeout=60):
    """Create @obj, retrying while the server is down; an AlreadyExists after a lost answer
    means an earlier attempt was applied."""
    deadline = time.monotonic() + timeout * SLOW
    attempt = 0
    while True:
        try:
            r = c.api.request("POST", "/api/v1/namespaces/%s/pods" % NS, obj)
            if r.status == 201 or (attempt and r.status == 409 and r.json.get("reason") == "AlreadyExists"):
                return
            raise Failure("creating %s: %r" % (obj["metadata"]["name"], r))
        except DOWN:
            attempt += 1
            if time.monotonic() > deadline:
                raise Failure("the server did not come back to create %s" % obj["metadata"]["name"])
            time.sleep(0.1)


def state_when_up(c, timeout=60):
    """The server's state once it answers again."""
    deadline = time.monotonic() + timeout * SLOW
    while True:
        try:
            return c.state()
        except DOWN:
            if time.monotonic() > deadline:
                raise Failure("the server never answered again")
            time.sleep(0.1)


def http_status(port, path):
    """The status of GET @path on ksched's /healthz port (None when it does not answer)."""
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=5) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except (urllib.error.URLError, OSError):
        return None


def fault(c, method, path, count=1, **kw):
    c.api.test("fault", dict(method=method, path=path, count=count, **kw))


def faults_on(st, path):
    return [f for f in st["faults"] if f["path"] == path]


def pod_lists(st, user):
    """Every pods LIST @user made, in order, whether the server answered it or an injected
    fault did: (time, resourceVersion, limit, code)."""
    out = [(x["time"], x["resourceVersion"], x["limit"], x["code"]) for x in st["lists"]
           if x["resource"] == "pods" and x.get("user") == user]
    for f in st["faults"]:
        for m in f["matched"]:
            verb, target = m["request"].split(" ", 1)
            url = urllib.parse.urlsplit(target)
            q = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query, keep_blank_values=True).items()}
            if verb == "GET" and url.path == "/api/v1/pods" and q.get("watch") not in ("1", "true") \
                    and m["user"] == user:
                out.append((m["time"], q.get("resourceVersion"), int(q.get("limit") or 0),
                            "stall" if "stall" in f else f["code"]))
    return sorted(out)


def pod_watches(st, user, since):
    return [w for w in st["watches"] if w["resource"] == "pods" and w["user"] == user and w["time"] >= since]


def finish(c, s, fitting, nowhere, fault_end, bound, what):
    """The checks every scenario ends with; the recovery time (from @fault_end, server
    time, to the last successful binding), checked against @bound seconds (times SLOW);
    without @fault_end (None), only the checks."""
    st = c.wait_all_bound(fitting, bound + 30)
    e2e.check_bound_once(st, fitting)
    e2e.check_no_overcommit(st)
    st = c.wait("the pods that fit nowhere to be Unschedulable",
                lambda st: all(e2e.unschedulable(c.pods(st)[NS + "/" + n]) for n in nowhere), 30)
    ok = e2e.successful_bindings(st)
    check(not any(NS + "/" + n in ok for n in nowhere), "a pod that fits nowhere was bound")
    pods = c.pods(st)
    check(not any(pods[NS + "/" + n]["spec"].get("nodeName") for n in nowhere), "a pod that fits nowhere has a node")
    c.poll("scheduler_pending_pods to count the %d pods that fit nowhere" % len(nowhere),
           lambda: s.metric("scheduler_pending_pods") == len(nowhere), 20)
    if fault_end is None:
        return st, None
    last = max(b["time"] for b in ok.values() for b in b)
    recovery = max(0.0, last - fault_end)
    check(recovery <= bound * SLOW, "%s: the last binding came %.1f s after the fault ended (bound %.0f s)"
          % (what, recovery, bound * SLOW))
    return st, recovery


# ---- scenarios ----------------------------------------------------------------------------

def scenario_outage(c):
    make_nodes(c, 8)  # room for 64
    before = ["a-%03d" % i for i in range(20)]
    during = ["b-%03d" % i for i in range(24)]
    after = ["c-%03d" % i for i in range(10)]
    nowhere = ["nofit-%d" % i for i in range(3)]
    for n in before + nowhere:
        c.create(fit(n) if n in before else nofit(n))
    s = c.serve("ksched-a")
    port = s.port()
    c.wait_all_bound(before, 30)
    c.poll("/readyz 200", lambda: http_status(port, "/readyz") == 200, 20)

    # /livez and /readyz polled from before the outage until after the recovery
    probes, stop = [], threading.Event()

    def prober():
        while not stop.is_set():
            for path in ("/livez", "/readyz"):
                probes.append((time.time(), path, http_status(port, path)))
            time.sleep(0.1)
    pt = threading.Thread(target=prober)
    pt.start()
    # pods created while ksched binds: the outage starts a few pods in; the rest are created
    # as soon as the server is back
    created, errors = [], []

    def creator():
        try:
            for n in during:
                create_retrying(c, fit(n))
                created.append(n)
                time.sleep(0.03)
        except Failure as e:
            errors.append(e)
    ct = threading.Thread(target=creator)
    try:
        ct.start()
        c.poll("pods to be created", lambda: len(created) >= 6, 10)
        c.api.test("outage", {"seconds": 5})
        ct.join()
        check(not errors, "creating pods: %s" % errors)
        st = state_when_up(c)
        for n in after:
            c.create(fit(n))
        out = st["outages"][0]
        check(out["end"] is not None, "the outage has no end: %s" % out)
        st, recovery = finish(c, s, before + during + after, nowhere, out["end"], 30, "outage")
        c.poll("/readyz 200 after the outage", lambda: http_status(port, "/readyz") == 200, 30)
    finally:
        stop.set()
        pt.join()
    inside = [(t, p, code) for t, p, code in probes if out["start"] <= t <= out["end"]]
    check(inside, "no probe during the outage")
    livez = [code for t, p, code in inside if p == "/livez"]
    check(livez and all(code == 200 for code in livez), "/livez during the outage answered %s" % sorted(set(livez)))
    readyz = [code for t, p, code in inside if p == "/readyz"]
    check(500 in readyz, "/readyz never answered 500 during the outage: %s" % sorted(set(readyz)))
    unready = [t for t, p, code in probes if p == "/readyz" and code == 500 and t >= out["start"]]
    ready_again = min(t for t, p, code in probes + [(time.time(), "/readyz", 200)]
                      if p == "/readyz" and code == 200 and t > max(unready))
    print("outage: %d s down while binding; /readyz 500 %.1f s after it began, 200 again %.1f s after it ended; "
          "%d pods bound once, the last %.1f s after the server came back (recovery)"
          % (out["seconds"], min(unready) - out["start"], ready_again - out["end"],
             len(before + during + after), recovery))


def scenario_watch_cut(c):
    first, nowhere = populate(c, 10, ["a-%03d" % i for i in range(15)], 3)  # room for 80
    s = c.serve("ksched-a")
    st = c.wait_all_bound(first, 30)
    lists = pod_lists(st, "ksched-a")
    check(lists and lists[0][1] == "0", "ksched's first pods LIST was at resourceVersion %r, not \"0\" (the watch "
          "cache): %s" % (lists[0][1] if lists else None, lists))
    n_lists = len(lists)

    # streams cut mid-stream while pods are created: resumed by a watch from the last
    # resourceVersion, no relist
    during = ["b-%03d" % i for i in range(20)]
    t = threading.Thread(target=lambda: [c.create(fit(n)) for n in during])
    t.start()
    for _ in range(4):
        time.sleep(0.15)
        e2e.wait_pod_watch(c)
        c.api.test("break-watches", {"mode": "abrupt"})
    t.join()
    st = c.wait_all_bound(first + during, 30)
    check(len(pod_lists(st, "ksched-a")) == n_lists, "a cut stream was followed by a pods LIST: %s"
          % pod_lists(st, "ksched-a")[n_lists:])

    def force_410(form, list_fault):
        """History compacted past the watchers (a write to another resource moves the
        revision on), the streams cut: the pods watch resumes into a 410 as @form; the relist
        at its resourceVersion answered @list_fault (None: served)."""
        c.api.test("config", {"bookmarks": False, "watch410": form})  # a bookmark would carry it past
        if list_fault:
            fault(c, "GET", RELIST, 1, code=list_fault, watch=False)
        e2e.wait_pod_watch(c)
        since = time.time()
        c.api.must("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                  "metadata": {"generateName": "bump-"}})
        c.api.test("compact")
        c.api.test("break-watches", {"mode": "abrupt" if form == "event" else "clean"})
        c.api.test("config", {"bookmarks": True})
        return since

    def check_relist(st, since, form, list_fault):
        gone = [w for w in pod_watches(st, "ksched-a", since) if w["start"] == (410 if form == "event" else "HTTP 410")]
        check(gone, "no pods watch answered 410 (%s): %s" % (form, pod_watches(st, "ksched-a", since)))
        rv = gone[0]["resourceVersion"]
        check(rv not in ("", "0", None), "the watch that got the 410 was at resourceVersion %r" % rv)
        after = [x for x in pod_lists(st, "ksched-a") if x[0] >= gone[0]["time"]]
        check(after, "no pods LIST after the watch's 410 (%s)" % form)
        check(after[0][1] == rv, "after a watch 410 (%s) ksched listed at resourceVersion %r, not at the last one it "
              "saw (%s, as the reflector does): %s" % (form, after[0][1], rv, after[:3]))
        if list_fault:
            check(after[0][3] == list_fault, "the relist was answered %s, not the injected %s" % (after[0][3],
                                                                                                 list_fault))
            check(len(after) > 1 and after[1][1] in (None, "") and after[1][2] == 500,
                  "after the relist answered %d ksched did not list consistently (no resourceVersion, limit 500): "
                  "%s" % (list_fault, after[:3]))
        else:
            check(after[0][3] == 200, "the relist at %s answered %s" % (rv, after[0][3]))
        return rv

    # 1. as an ERROR event (the watch cache), the relist served; a pod that fits nowhere is
    #    deleted meanwhile (the relist or the new watch must tell the queue)
    since = force_410("event", None)
    c.api.must("DELETE", "/api/v1/namespaces/%s/pods/%s" % (NS, nowhere[0]))
    nowhere = nowhere[1:]
    r1 = ["r1-%03d" % i for i in range(10)]
    for n in r1:
        c.create(fit(n))
    st = c.wait_all_bound(r1, 40)
    rv1 = check_relist(st, since, "event", None)
    # 2. as an HTTP 410 (no watch cache), the relist answered 410 Expired
    since = force_410("status", 410)
    r2 = ["r2-%03d" % i for i in range(10)]
    for n in r2:
        c.create(fit(n))
    st = c.wait_all_bound(r2, 40)
    rv2 = check_relist(st, since, "status", 410)
    # 3. as an ERROR event, the relist answered 504 ResourceVersionTooLarge
    since = force_410("event", 504)
    last_fault = time.time()
    r3 = ["r3-%03d" % i for i in range(10)]
    for n in r3:
        c.create(fit(n))
    st = c.wait_all_bound(r3, 40)
    rv3 = check_relist(st, since, "event", 504)
    left = [(f["path"], f["left"]) for f in st["faults"] if f["left"]]
    check(not left, "injected faults never reached: %s" % left)
    st, recovery = finish(c, s, first + during + r1 + r2 + r3, nowhere, last_fault, 30, "watch-cut")
    print("watch-cut: 4 stream cuts resumed without a relist; 410s relisted at %s, %s (then consistently after "
          "410 Expired), %s (then consistently after 504); %d pods bound once, the last %.1f s after the last "
          "cut (recovery)" % (rv1, rv2, rv3, len(first + during + r1 + r2 + r3), recovery))


def scenario_bind_errors(c):
    names, nowhere = populate(c, 6, ["e-%03d" % i for i in range(30)], 2)  # room for 48
    paths = {"/pods/e-000/binding$": (429, 2), "/pods/e-001/binding$": (500, 1), "/pods/e-002/binding$": (503, 2),
             "/pods/e-00[3-9]/binding$": (503, 4), "/pods/e-01[0-9]/binding$": (429, 5),
             "/pods/e-02[0-4]/binding$": (500, 3)}
    for path, (code, count) in paths.items():
        fault(c, "POST", path, count, code=code)
    s = c.serve("ksched-a")
    st = c.wait_all_bound(names, 60)
    left = [(f["path"], f["left"]) for f in st["faults"] if f["left"]]
    check(not left, "injected faults never reached: %s" % left)
    # every refused attempt of a pod, then its next attempt (refused too, or the binding)
    attempts = {}
    for f in st["faults"]:
        for m in f["matched"]:
            attempts.setdefault(m["request"].split("/pods/")[1].split("/")[0], []).append((m["time"], f["code"]))
    for pod, b in e2e.successful_bindings(st).items():
        attempts.setdefault(pod.split("/")[1], []).append((b[0]["time"], 201))
    for pod, seq in attempts.items():
        seq.sort()
        for (t0, code), (t1, _) in zip(seq, seq[1:]):
            if code in (429, 503):  # Retry-After: 1
                check(t1 - t0 >= 0.9, "%s retried %.2f s after a %d with Retry-After: 1" % (pod, t1 - t0, code))
    last_fault = max(m["time"] for f in st["faults"] for m in f["matched"])
    hits = sum(f["hits"] for f in st["faults"])
    st, recovery = finish(c, s, names, nowhere, last_fault, 30, "bind-errors")
    refused = len([p for p in attempts if len(attempts[p]) > 1])
    print("bind-errors: %d bindings answered 429/500/503 for %d pods, each bound once, the last %.1f s after the "
          "last error (recovery)" % (hits, refused, recovery))


def scenario_lost_answers(c):
    make_nodes(c, 2)  # room for 16: exactly the a- and b- pods
    lost = ["a-%d" % i for i in range(4)]
    names = lost + ["b-%03d" % i for i in range(12)]
    late = ["z-%d" % i for i in range(3)]  # the same size, after them in the queue: no room left
    for n in names + late:
        c.create(fit(n))
    # the first bindings are applied, and their answers lost (a server killed after the commit)
    fault(c, "POST", "/pods/a-[0-3]/binding$", 4, lose=True)
    s = c.serve("ksched-a")
    st, _ = finish(c, s, names, late, None, 30, "lost-answers")
    left = [(f["path"], f["left"]) for f in st["faults"] if f["left"]]
    check(not left, "injected faults never reached: %s" % left)
    # libcurl sends a request again on a fresh connection when a reused one dies before any answer:
    # that second binding finds the pod already assigned to the same node (409), which is no retry
    # of the pod's scheduling; a pod forgotten and scheduled again would be tried after a backoff
    tries = {n: [(b["code"], b["node"], b["time"]) for b in st["bindings"] if b["pod"] == NS + "/" + n]
             for n in lost}
    for n, t in tries.items():
        check(t[0][0] == 201 and all(code == 409 and node == t[0][1] and at - t[0][2] < 0.5
                                     for code, node, at in t[1:]),
              "%s: bindings %s after the lost answer: scheduled again?" % (n, t))
    resent = sum(len(t) - 1 for t in tries.values())
    print("lost-answers: 4 bindings applied with their answers lost taken as bound (%d sent again at once by the "
          "client, answered 409), no node over its cpu, the 3 pods behind them Unschedulable" % resent)


def scenario_stall(c):
    names, nowhere = populate(c, 4, ["s-%03d" % i for i in range(10)] + ["held"], 2)  # room for 32
    stall = REQUEST_TIMEOUT + 10  # longer than the client waits: the client must give up
    list_path, bind_path = r"^/api/v1/pods\?", "/pods/held/binding$"
    fault(c, "GET", list_path, 1, watch=False, stall=stall)
    fault(c, "POST", bind_path, 1, stall=stall)
    s = c.serve("ksched-a")
    port = s.port()
    st = c.wait("the first pods LIST", lambda st: faults_on(st, list_path)[0]["hits"], 20)
    list_stalled = faults_on(st, list_path)[0]["matched"][0]["time"]
    check(http_status(port, "/readyz") == 500, "/readyz is not 500 while the first pods LIST hangs")
    st = c.wait("the binding of 'held'", lambda st: faults_on(st, bind_path)[0]["hits"], REQUEST_TIMEOUT + 30)
    bind_stalled = faults_on(st, bind_path)[0]["matched"][0]["time"]
    lists = [x for x in pod_lists(st, "ksched-a") if x[0] > list_stalled]
    check(lists and lists[0][3] == 200, "the stalled LIST was not retried: %s" % pod_lists(st, "ksched-a"))
    relisted = lists[0][0] - list_stalled
    check(relisted <= REQUEST_TIMEOUT + 10 * SLOW, "the stalled LIST was retried %.1f s later" % relisted)
    # the other pods bind while the one binding hangs
    others = ["t-%03d" % i for i in range(10)]
    for n in others:
        c.create(fit(n))
    st = c.wait_all_bound(others, 20)
    late = [b["pod"] for n in others for b in e2e.successful_bindings(st)[NS + "/" + n]
            if b["time"] > bind_stalled + REQUEST_TIMEOUT]
    check(not late, "pods waited for the stalled binding: %s" % late)
    check(not c.pods(st)[NS + "/held"]["spec"].get("nodeName"), "'held' bound while its binding hangs")
    st, _ = finish(c, s, names + others, nowhere, bind_stalled, REQUEST_TIMEOUT + 15, "stall")
    rebound = e2e.successful_bindings(st)[NS + "/held"][0]["time"] - bind_stalled
    print("stall: the hung first LIST retried after %.1f s, the hung binding's pod bound %.1f s after the binding "
          "began (client timeout %.0f s); %d pods bound once meanwhile" % (relisted, rebound, REQUEST_TIMEOUT,
                                                                          len(names + others) - 1))


def lease_path(st):
    ns, name = next(w["lease"] for w in st["leases"] if w["holder"]).split("/")
    return "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s" % (ns, name)


def scenario_lease_conflict(c):
    _, nowhere = populate(c, 10, [], 2)  # room for 80
    a = c.serve("ksched-a", leader_elect=True, extra=e2e.LEASE_FLAGS)
    st = c.wait("a lease holder", lambda st: any(w["holder"] for w in st["leases"]), 20)
    b = c.serve("ksched-b", leader_elect=True, extra=e2e.LEASE_FLAGS)
    holder = next(w["holder"] for w in st["leases"] if w["holder"])
    leader_user = next(iter(e2e.lease_users(st)[holder]))
    leader, follower = (a, b) if leader_user == "ksched-a" else (b, a)
    first = ["a-%03d" % i for i in range(20)]
    for n in first:
        c.create(fit(n))
    c.wait_all_bound(first, 30)
    # 3 renewals refused, 1 s apart: well within the 6 s renew deadline
    path = "/leases/"
    fault(c, "PUT", path, 3, code=409)
    second = ["b-%03d" % i for i in range(20)]
    for n in second:
        c.create(fit(n))
        time.sleep(0.1)
    st = c.wait("the 409s on the lease", lambda st: faults_on(st, path)[0]["left"] == 0, 20)
    f = faults_on(st, path)[0]
    check({m["user"] for m in f["matched"]} == {leader.user}, "the 409s hit %s's writes, not only the holder's (%s)"
          % ({m["user"] for m in f["matched"]}, leader.user))
    last_409 = f["matched"][-1]["time"]
    st = c.wait("a renewal after the 409s", lambda st: any(
        w["time"] > last_409 and w["user"] == leader.user for w in st["leases"]), 10)
    renewed = min(w["time"] for w in st["leases"] if w["time"] > last_409 and w["user"] == leader.user) - last_409
    holders = {w["holder"] for w in st["leases"] if w["holder"]}
    check(holders == {holder}, "the lease changed hands during the conflicts: %s" % holders)
    st = c.wait_all_bound(first + second, 30)
    check({x["user"] for x in st["bindings"]} == {leader.user}, "bindings by %s while %s leads"
          % ({x["user"] for x in st["bindings"]}, leader.user))

    # the holder dies; the other's first attempt to take the lease answers 409
    fault(c, "PUT", path, 1, code=409)
    leader.kill()
    third = ["c-%03d" % i for i in range(20)]
    for n in third:
        c.create(fit(n))
    st = c.wait("the takeover", lambda st: any(w["user"] == follower.user and w["holder"] for w in st["leases"]), 40)
    took = min(w["time"] for w in st["leases"] if w["user"] == follower.user and w["holder"])
    f = faults_on(st, path)[1]
    check(f["hits"] == 1 and f["matched"][0]["user"] == follower.user,
          "the takeover's 409 hit %s" % [m["user"] for m in f["matched"]])
    st, recovery = finish(c, follower, first + second + third, nowhere, took, 30, "lease-conflict")
    e2e.check_leader_bindings(st)
    by = {b["user"] for b in st["bindings"] if b["code"] == 201 and b["pod"] in {NS + "/" + n for n in third}}
    check(by == {follower.user}, "after the holder died the pods were bound by %s" % by)
    print("lease-conflict: the holder renewed %.1f s after its third 409 and kept the lease; the other took it "
          "%.1f s after its 409 (the takeover), bound the rest, the last %.1f s later (recovery)"
          % (renewed, took - f["matched"][0]["time"], recovery))


def scenario_lease_stolen(c):
    _, nowhere = populate(c, 14, [], 2)  # room for 112
    s = c.serve("ksched-a", leader_elect=True, extra=e2e.LEASE_FLAGS)
    st = c.wait("a lease holder", lambda st: any(w["holder"] for w in st["leases"]), 20)
    first = ["a-%03d" % i for i in range(20)]
    for n in first:
        c.create(fit(n))
    c.wait_all_bound(first, 30)
    st, _ = finish(c, s, first, nowhere, None, 0, "lease-stolen")
    path = lease_path(st)
    # pods created from before the theft until well after it (4 s)
    created, stop = [], threading.Event()

    def creator():
        for i in range(80):
            if stop.is_set():
                return
            n = "p-%03d" % i
            c.create(fit(n))
            created.append((n, time.time()))
            time.sleep(0.05)
    ct = threading.Thread(target=creator)
    ct.start()
    try:
        c.poll("pods to be created", lambda: len(created) >= 10, 10)
        for _ in range(10):  # GET, then PUT at its resourceVersion (a renewal in between: again)
            lease = c.api.must("GET", path)
            now = micro_time()
            lease["spec"].update({"holderIdentity": "thief", "renewTime": now, "acquireTime": now,
                                  "leaseTransitions": lease["spec"].get("leaseTransitions", 0) + 1})
            r = c.api.put(path, lease)
            if r.status == 200:
                break
            check(r.status == 409, "stealing the lease: %r" % r)
        else:
            raise Failure("the lease could not be stolen: every write conflicted")
        t0 = time.monotonic()
        while s.proc.poll() is None and time.monotonic() - t0 < 10 * SLOW:
            time.sleep(0.05)
        exited = time.monotonic() - t0
    except BaseException:
        stop.set()
        raise
    finally:
        ct.join()
    check(s.proc.poll() is not None, "ksched serve still runs %.0f s after its lease was stolen" % exited)
    s.expected_exit = True
    check(s.proc.returncode == 1, "ksched serve exited with status %d after its lease was stolen, not 1"
          % s.proc.returncode)
    check(exited <= 5 * SLOW, "ksched serve exited %.1f s after its lease was stolen" % exited)
    with open(s.log_path, errors="replace") as f:
        check("leaderelection lost" in f.read(), "no 'leaderelection lost' in ksched's output")
    st = c.state()
    stolen = next(w["time"] for w in st["leases"] if w["holder"] == "thief")
    limit = stolen + LEASE_RETRY + 0.5
    late = [(b["pod"], round(b["time"] - stolen, 2)) for b in st["bindings"]
            if b["code"] == 201 and b["user"] == s.user and b["time"] > limit]
    check(not late, "ksched bound pods after its lease was stolen (s after): %s" % late[:5])
    later = [n for n, t in created if t > limit]
    pods = c.pods(st)
    check(later, "no pod was created after the theft")
    bound_later = [n for n in later if pods[NS + "/" + n]["spec"].get("nodeName")]
    check(not bound_later, "pods created after the theft were bound: %s" % bound_later[:5])
    after = [b["time"] - stolen for b in st["bindings"] if b["code"] == 201 and b["time"] > stolen]
    print("lease-stolen: ksched exited with status 1 %.1f s after the lease was stolen; %d bindings in the %.1f s "
          "after (last %.2f s after); %d pods created later left unbound"
          % (exited, len(after), LEASE_RETRY + 0.5, max(after) if after else 0.0, len(later)))


def micro_time():
    """metav1.MicroTime now, as a Lease's renewTime is written."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


SCENARIOS = {"outage": scenario_outage, "watch-cut": scenario_watch_cut, "bind-errors": scenario_bind_errors,
             "stall": scenario_stall, "lost-answers": scenario_lost_answers,
             "lease-conflict": scenario_lease_conflict,
             "lease-stolen": scenario_lease_stolen}


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in SCENARIOS:
        print("usage: e2e_faults.py KSCHED {%s}" % "|".join(SCENARIOS), file=sys.stderr)
        return 2
    ksched, name = sys.argv[1], sys.argv[2]
    c = e2e.Cluster(ksched, "faults-" + name)
    return e2e.run_scenario(c, name, lambda: SCENARIOS[name](c))


if __name__ == "__main__":
    sys.exit(main())
