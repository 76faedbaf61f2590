#!/usr/bin/env python3
"""The test API server's own tests: it must behave as kube-apiserver does where ksched
depends on it (pagination, watch resume and 410, the binding subresource, optimistic
concurrency, patches, Events), over real TLS with client certificates and tokens."""

import http.client
import json
import os
import socket
import ssl
import sys
import time
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import apiserver  # noqa: E402
import harness  # noqa: E402

PODS = "/api/v1/namespaces/%s/pods"


def pod(name, **spec):
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": dict({"containers": [{"name": "c", "image": "busybox:1.36"}]}, **spec)}
    return body


def binding(name, node, **extra):
    b = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
         "target": {"apiVersion": "v1", "kind": "Node", "name": node}}
    b.update(extra)
    return b


class ServerTest(harness.ServerTestCase):
    WORKDIR_PREFIX = "ksched-apiserver-test-"
    CLIENTS = ("admin", "other")
    TOKENS = ("sekret:token-user", "grp:gina:readers,ops")
    EXTRA = ("--bookmark-interval", "0.3",
             "--nonresource-rule", "readers:get:/metrics",
             "--nonresource-rule", "token-user:*:/debug/*")

    def assertStatus(self, r, code, reason=None, message=None):
        self.assertEqual(r.status, code, r)
        self.assertEqual(r.json["kind"], "Status", r)
        self.assertEqual(r.json["code"], code, r)
        if reason is not None:
            self.assertEqual(r.json.get("reason"), reason, r)
        if message is not None:
            self.assertIn(message, r.json["message"], r)

    # ---- transport and authentication ----

    def test_authentication(self):
        anon = harness.Client(self.server.port, self.pki, None, None)
        self.assertStatus(anon.get("/api/v1/nodes"), 401, "Unauthorized")
        bad = harness.Client(self.server.port, self.pki, None, "wrong")
        self.assertStatus(bad.get("/api/v1/nodes"), 401, "Unauthorized")
        tok = harness.Client(self.server.port, self.pki, None, "sekret")
        self.assertEqual(tok.get("/api/v1/nodes").status, 200)
        self.assertEqual(self.c.get("/healthz").raw, b"ok")

    def test_token_and_access_reviews(self):
        def token_review(token):
            r = self.c.post("/apis/authentication.k8s.io/v1/tokenreviews",
                            {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}})
            self.assertEqual(r.status, 201, r)
            self.assertEqual(r.json["spec"]["token"], token)
            return r.json["status"]

        def access(user, groups, verb, path):
            r = self.c.post("/apis/authorization.k8s.io/v1/subjectaccessreviews",
                            {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                             "spec": {"user": user, "groups": groups,
                                      "nonResourceAttributes": {"path": path, "verb": verb}}})
            self.assertEqual(r.status, 201, r)
            return r.json["status"]["allowed"]

        self.assertEqual(token_review("grp"), {"authenticated": True, "user": {
            "username": "gina", "uid": "uid-gina", "groups": ["readers", "ops"]}})
        self.assertEqual(token_review("sekret")["user"]["groups"], [])
        self.assertEqual(token_review("wrong"), {"user": {}, "error": "invalid bearer token"})
        self.assertTrue(access("gina", ["readers"], "get", "/metrics"))
        self.assertFalse(access("gina", ["readers"], "post", "/metrics"))
        self.assertFalse(access("system:anonymous", ["system:unauthenticated"], "get", "/metrics"))
        self.assertTrue(access("token-user", [], "put", "/debug/pprof"))
        self.assertTrue(access("root", ["system:masters"], "get", "/anything"))
        st = self.c.state()
        self.assertGreaterEqual(st["requests"]["POST tokenreviews.authentication.k8s.io"], 3)
        self.assertIn({"user": "gina", "groups": ["readers"], "path": "/metrics", "verb": "get", "allowed": True},
                      st["accessReviews"])

    def test_discovery(self):
        r = self.c.get("/apis/events.k8s.io/v1").json
        self.assertEqual(r["groupVersion"], "events.k8s.io/v1")
        self.assertIn("events", [x["name"] for x in r["resources"]])
        core = self.c.get("/api/v1").json
        self.assertIn("pods/binding", [x["name"] for x in core["resources"]])
        self.assertIn("coordination.k8s.io", [g["name"] for g in self.c.get("/apis").json["groups"]])

    def test_kubeconfig_is_written(self):
        path = self.server.kubeconfig(os.path.join(self.tmp, "kc"), user="admin")
        with open(path) as f:
            text = f.read()
        self.assertIn("server: " + self.server.url, text)
        self.assertIn("client-certificate-data: ", text)
        self.assertIn("certificate-authority-data: ", text)

    # ---- create, get, errors ----

    def test_create_sets_metadata_and_pod_defaults(self):
        ns = self.ns()
        p = pod("a")
        p["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "500m", "memory": "1Gi"}}
        p["status"] = {"phase": "Running"}
        out = self.c.must("POST", PODS % ns, p)
        self.assertTrue(out["metadata"]["uid"])
        self.assertTrue(out["metadata"]["creationTimestamp"].endswith("Z"))
        self.assertIsInstance(out["metadata"]["resourceVersion"], str)
        self.assertEqual(out["status"], {"phase": "Pending", "qosClass": "Guaranteed"})  # reset on create
        self.assertEqual(out["spec"]["schedulerName"], "default-scheduler")
        self.assertEqual(out["spec"]["priority"], 0)
        self.assertEqual(out["spec"]["containers"][0]["resources"]["requests"], {"cpu": "500m", "memory": "1Gi"})
        b = self.c.must("POST", PODS % ns, pod("b"))
        self.assertGreater(int(b["metadata"]["resourceVersion"]), int(out["metadata"]["resourceVersion"]))
        got = self.c.get(PODS % ns + "/a").json
        self.assertEqual(got, out)

    def test_create_errors(self):
        ns = self.ns()
        self.c.must("POST", PODS % ns, pod("a"))
        self.assertStatus(self.c.post(PODS % ns, pod("a")), 409, "AlreadyExists", 'pods "a" already exists')
        self.assertStatus(self.c.get(PODS % ns + "/zz"), 404, "NotFound", 'pods "zz" not found')
        self.assertStatus(self.c.post(PODS % "nope", pod("a")), 404, "NotFound", 'namespaces "nope" not found')
        self.assertStatus(self.c.post(PODS % ns, '{"apiVersion": "v1", "kind": "Pod", "metadata": {'), 400,
                          "BadRequest")
        self.assertStatus(self.c.post(PODS % ns, dict(pod("b"), kind="Node")), 400, "BadRequest")
        bad = pod("c")
        bad["metadata"]["name"] = 7
        self.assertStatus(self.c.post(PODS % ns, bad), 400, "BadRequest")
        self.assertStatus(self.c.post(PODS % ns, pod("Bad_Name")), 422, "Invalid")
        self.assertStatus(self.c.post(PODS % ns, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "d"},
                                                  "spec": {"containers": []}}), 422, "Invalid", "spec.containers")
        self.assertStatus(self.c.post(PODS % ns, pod("e", priorityClassName="missing")), 403, "Forbidden")
        self.assertStatus(self.c.post(PODS % ns, pod("f", priority=5)), 403, "Forbidden")

    def test_priority_admission(self):
        ns = self.ns()
        self.c.must("POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
                    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "hi-" + ns},
                     "value": 1000})
        out = self.c.must("POST", PODS % ns, pod("a", priorityClassName="hi-" + ns))
        self.assertEqual(out["spec"]["priority"], 1000)
        out = self.c.must("POST", PODS % ns, pod("b", priorityClassName="system-node-critical"))
        self.assertEqual(out["spec"]["priority"], 2000001000)

    # ---- list pagination ----

    def test_list_pagination_is_a_consistent_snapshot(self):
        ns = self.ns()
        for i in range(25):
            self.c.must("POST", PODS % ns, pod("p%02d" % i))
        page = self.c.get(PODS % ns + "?limit=10").json
        self.assertEqual(page["kind"], "PodList")
        self.assertEqual([p["metadata"]["name"] for p in page["items"]], ["p%02d" % i for i in range(10)])
        self.assertNotIn("kind", page["items"][0])  # list items carry no type
        self.assertEqual(page["metadata"]["remainingItemCount"], 15)
        list_rv = page["metadata"]["resourceVersion"]
        # changes after the first page do not show in later pages
        self.c.must("POST", PODS % ns, pod("p99"))
        self.c.must("DELETE", PODS % ns + "/p20")
        names = [p["metadata"]["name"] for p in page["items"]]
        while page["metadata"].get("continue"):
            page = self.c.get(PODS % ns + "?limit=10&continue=" + page["metadata"]["continue"]).json
            self.assertEqual(page["metadata"]["resourceVersion"], list_rv)
            names += [p["metadata"]["name"] for p in page["items"]]
        self.assertEqual(names, ["p%02d" % i for i in range(25)])
        # a fresh list sees them
        fresh = [p["metadata"]["name"] for p in self.c.get(PODS % ns).json["items"]]
        self.assertIn("p99", fresh)
        self.assertNotIn("p20", fresh)

    def test_list_all_namespaces_and_selectors(self):
        a, b = self.ns(), self.ns()
        self.c.must("POST", PODS % a, dict(pod("x"), metadata={"name": "x", "labels": {"app": "web"}}))
        self.c.must("POST", PODS % b, dict(pod("y", nodeName="sel-" + b), metadata={"name": "y", "labels": {"app": "db"}}))
        allp = self.c.get("/api/v1/pods").json["items"]
        keys = [(p["metadata"]["namespace"], p["metadata"]["name"]) for p in allp]
        self.assertIn((a, "x"), keys)
        self.assertIn((b, "y"), keys)
        self.assertEqual(keys, sorted(keys))
        sel = self.c.get("/api/v1/pods?labelSelector=app%20in%20(web,cache)").json["items"]
        self.assertEqual([p["metadata"]["name"] for p in sel], ["x"])
        sel = self.c.get("/api/v1/pods?fieldSelector=spec.nodeName%3Dsel-" + b).json["items"]
        self.assertEqual([p["metadata"]["name"] for p in sel], ["y"])
        sel = self.c.get("/api/v1/namespaces/%s/pods?fieldSelector=spec.nodeName!%%3D,"
                         "status.phase!%%3DSucceeded" % b).json["items"]
        self.assertEqual([p["metadata"]["name"] for p in sel], ["y"])
        self.assertStatus(self.c.get("/api/v1/pods?fieldSelector=spec.bogus%3Dx"), 400, "BadRequest")

    def test_rv0_list_ignores_limit_like_the_watch_cache(self):
        ns = self.ns()
        for i in range(5):
            self.c.must("POST", PODS % ns, pod("p%d" % i))
        page = self.c.get(PODS % ns + "?limit=2&resourceVersion=0").json
        self.assertEqual(len(page["items"]), 5)
        self.assertNotIn("continue", page["metadata"])

    def test_expired_continue_token_is_410(self):
        ns = self.ns()
        for i in range(3):
            self.c.must("POST", PODS % ns, pod("p%d" % i))
        page = self.c.get(PODS % ns + "?limit=1").json
        self.c.must("POST", PODS % ns, pod("p3"))  # compaction keeps the revision it compacts at
        self.c.test("compact")
        r = self.c.get(PODS % ns + "?limit=1&continue=" + page["metadata"]["continue"])
        self.assertStatus(r, 410, "Expired", "continue parameter is too old")
        self.assertStatus(self.c.get(PODS % ns + "?limit=1&continue=garbage"), 400, "BadRequest")
        page = self.c.get(PODS % ns + "?limit=1").json
        self.c.test("expire-continue", {"count": 1})
        r = self.c.get(PODS % ns + "?limit=1&continue=" + page["metadata"]["continue"])
        self.assertStatus(r, 410, "Expired")
        r = self.c.get(PODS % ns + "?limit=1&continue=" + page["metadata"]["continue"])
        self.assertEqual(r.status, 200, r)
        lists = [x for x in self.c.state()["lists"] if x["continue"]]
        self.assertEqual([x["code"] for x in lists[-2:]], [410, 200])

    # ---- watch ----

    def test_watch_events_and_resume(self):
        ns = self.ns()
        lst = self.c.get(PODS % ns).json
        w = self.c.watch(PODS % ns + "?resourceVersion=" + lst["metadata"]["resourceVersion"])
        self.assertEqual(w.status, 200)
        self.assertEqual(w.resp.getheader("Transfer-Encoding"), "chunked")
        self.c.must("POST", PODS % ns, pod("a"))
        self.c.must("PATCH", PODS % ns + "/a", {"metadata": {"labels": {"x": "y"}}},
                    ctype="application/merge-patch+json")
        self.c.must("DELETE", PODS % ns + "/a")
        evs = w.events(3)
        w.close()
        self.assertEqual([e["type"] for e in evs], ["ADDED", "MODIFIED", "DELETED"])
        self.assertEqual(evs[0]["object"]["kind"], "Pod")
        rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in evs]
        self.assertEqual(rvs, sorted(rvs))
        # resume after the first event: the other two again, nothing else
        w = self.c.watch(PODS % ns + "?resourceVersion=%d&timeoutSeconds=1" % rvs[0])
        again = []
        while True:
            e = w.next()
            if e is None:
                break
            again.append(e)
        w.close()
        self.assertEqual([e["type"] for e in again], ["MODIFIED", "DELETED"])

    def test_watch_without_rv_starts_with_the_current_objects(self):
        ns = self.ns()
        self.c.must("POST", PODS % ns, pod("a"))
        w = self.c.watch(PODS % ns)
        e = w.next()
        w.close()
        self.assertEqual((e["type"], e["object"]["metadata"]["name"]), ("ADDED", "a"))

    def test_watch_too_old_is_an_error_event_with_410(self):
        ns = self.ns()
        rv = self.c.get(PODS % ns).json["metadata"]["resourceVersion"]
        self.c.must("POST", PODS % ns, pod("a"))
        self.c.test("compact")
        w = self.c.watch(PODS % ns + "?resourceVersion=" + rv)
        self.assertEqual(w.status, 200)
        e = w.next()
        self.assertEqual(e["type"], "ERROR")
        self.assertEqual((e["object"]["kind"], e["object"]["code"], e["object"]["reason"]), ("Status", 410, "Expired"))
        self.assertIn("too old resource version", e["object"]["message"])
        self.assertIsNone(w.next())  # the stream ends
        w.close()
        self.c.test("config", {"watch410": "status"})
        try:
            w = self.c.watch(PODS % ns + "?resourceVersion=" + rv)
            self.assertEqual(w.status, 410)
            w.close()
        finally:
            self.c.test("config", {"watch410": "event"})

    def test_watch_bookmarks(self):
        ns = self.ns()
        rv = self.c.get(PODS % ns).json["metadata"]["resourceVersion"]
        w = self.c.watch(PODS % ns + "?resourceVersion=%s&allowWatchBookmarks=true" % rv)
        self.c.must("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "bm-" + ns}})
        e = w.next()
        w.close()
        self.assertEqual(e["type"], "BOOKMARK")
        self.assertEqual(e["object"]["kind"], "Pod")
        self.assertGreater(int(e["object"]["metadata"]["resourceVersion"]), int(rv))
        w = self.c.watch(PODS % ns + "?resourceVersion=%s&timeoutSeconds=1" % rv)
        self.assertIsNone(w.next())  # no bookmarks unless asked for
        w.close()

    def test_watch_field_selector_transitions(self):
        ns = self.ns()
        self.c.must("POST", PODS % ns, pod("a"))
        rv = self.c.get(PODS % ns).json["metadata"]["resourceVersion"]
        w = self.c.watch(PODS % ns + "?resourceVersion=%s&fieldSelector=spec.nodeName%%3D" % rv)
        self.c.must("POST", PODS % ns + "/a/binding", binding("a", "n1"))
        e = w.next()
        w.close()
        self.assertEqual(e["type"], "DELETED")  # left the selector
        self.assertEqual(e["object"]["metadata"]["name"], "a")
        self.assertGreater(int(e["object"]["metadata"]["resourceVersion"]), int(rv))

    def test_break_watches(self):
        ns = self.ns()
        w = self.c.watch(PODS % ns + "?resourceVersion=1")
        w2 = self.c.watch(PODS % ns + "?resourceVersion=1")
        time.sleep(0.2)
        self.c.test("break-watches", {"mode": "abrupt"})
        with self.assertRaises(Exception):
            while w.next_line():
                pass
        w.close()
        w2.close()
        w = self.c.watch(PODS % ns + "?resourceVersion=1")
        time.sleep(0.2)
        self.c.test("break-watches", {"mode": "clean"})
        while w.next_line():
            pass
        w.close()

    def test_injected_bad_events(self):
        ns = self.ns()
        self.c.must("POST", PODS % ns, pod("a"))
        rv = self.c.get(PODS % ns).json["metadata"]["resourceVersion"]
        w = self.c.watch(PODS % ns + "?resourceVersion=" + rv)
        time.sleep(0.2)
        self.c.test("inject", {"resource": "pods", "event": "no-name"})
        self.c.test("inject", {"resource": "pods", "event": "unknown-field", "name": ns + "/a"})
        e = w.next()
        self.assertNotIn("name", e["object"]["metadata"])
        e = w.next()
        self.assertEqual((e["type"], e["object"]["metadata"]["name"]), ("MODIFIED", "a"))
        self.assertIn("futureField", e["object"]["spec"])
        self.c.test("inject", {"resource": "pods", "event": "truncated"})
        with self.assertRaises(http.client.IncompleteRead) as cut:
            w.next_line()
        with self.assertRaises(ValueError):
            json.loads(cut.exception.partial)
        self.assertTrue(cut.exception.partial.startswith(b'{"type":"ADDED"'))
        w.close()

    # ---- binding ----

    def test_binding(self):
        ns = self.ns()
        self.c.must("POST", PODS % ns, pod("a"))
        r = self.c.post(PODS % ns + "/a/binding", binding("a", "n1"))
        self.assertEqual(r.status, 201, r)
        self.assertEqual(r.json["status"], "Success")
        got = self.c.get(PODS % ns + "/a").json
        self.assertEqual(got["spec"]["nodeName"], "n1")
        self.assertEqual([(c["type"], c["status"]) for c in got["status"]["conditions"]], [("PodScheduled", "True")])
        r = self.c.post(PODS % ns + "/a/binding", binding("a", "n2"))
        self.assertStatus(r, 409, "Conflict", 'pod a is already assigned to node "n1"')
        self.assertEqual(self.c.get(PODS % ns + "/a").json["spec"]["nodeName"], "n1")

    def test_managed_fields_like_a_real_server(self):
        ns = self.ns()
        self.c.must("POST", PODS % ns, pod("a"))
        self.c.must("POST", PODS % ns + "/a/binding", binding("a", "n1"))
        got = self.c.get(PODS % ns + "/a").json
        mf = got["metadata"]["managedFields"]
        self.assertEqual([m["manager"] for m in mf], ["admin"])
        self.assertIn('k:{"type":"PodScheduled"}', mf[0]["fieldsV1"]["f:status"]["f:conditions"])
        self.assertIn('k:{"name":"c"}', mf[0]["fieldsV1"]["f:spec"]["f:containers"])

    def test_binding_is_strict(self):
        ns = self.ns()
        self.c.must("POST", PODS % ns, pod("a"))
        url = PODS % ns + "/a/binding"
        self.assertStatus(self.c.post(url, dict(binding("a", "n1"), kind="Pod")), 400, "BadRequest")
        self.assertStatus(self.c.post(url, dict(binding("a", "n1"), apiVersion="v2")), 400, "BadRequest")
        self.assertStatus(self.c.post(url, binding("b", "n1")), 400, "BadRequest", "name in URL does not match")
        self.assertStatus(self.c.post(url, {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "a"},
                                            "target": {"kind": "Node"}}), 422, "Invalid", "target.name")
        self.assertStatus(self.c.post(url, {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "a"},
                                            "target": {"kind": "Pod", "name": "n1"}}), 422, "Invalid", "target.kind")
        self.assertStatus(self.c.post(url, {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "a"},
                                            "target": "n1"}), 400, "BadRequest")
        self.assertStatus(self.c.post(url, "{not json"), 400, "BadRequest")
        self.assertStatus(self.c.post(url, dict(binding("a", "n1"), metadata={"name": "a", "namespace": "x"})),
                          400, "BadRequest")
        self.assertStatus(self.c.post(PODS % ns + "/zz/binding", binding("zz", "n1")), 404, "NotFound")
        self.assertIsNone(self.c.get(PODS % ns + "/a").json["spec"].get("nodeName"))
        # a UID precondition that does not match
        self.assertStatus(self.c.post(url, dict(binding("a", "n1"), metadata={"name": "a", "uid": "other"})), 409,
                          "Conflict")

    def test_injected_binding_conflicts_and_steals(self):
        ns = self.ns()
        self.c.must("POST", PODS % ns, pod("a"))
        self.c.test("binding-conflicts", {"pod": ns + "/a", "count": 2})
        url = PODS % ns + "/a/binding"
        self.assertStatus(self.c.post(url, binding("a", "n1")), 409, "Conflict")
        self.assertStatus(self.c.post(url, binding("a", "n1")), 409, "Conflict")
        self.assertEqual(self.c.post(url, binding("a", "n1")).status, 201)
        self.c.must("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "st-" + ns}})
        self.c.must("POST", PODS % ns, pod("b"))
        self.c.test("steal-binding", {"pod": ns + "/b", "node": "st-" + ns})
        self.assertStatus(self.c.post(PODS % ns + "/b/binding", binding("b", "n1")), 409, "Conflict",
                          'already assigned to node "st-%s"' % ns)
        recs = [b for b in self.c.state()["bindings"] if b["pod"] == ns + "/b"]
        self.assertEqual([(b["user"], b["code"]) for b in recs], [("admin", 409), ("other-scheduler", 201)])

    # ---- the PV controller (pv_controller.py) ----

    def test_pv_controller_binds_provisions_and_steals(self):
        ns = self.ns()
        pvs, pvcs = "/api/v1/persistentvolumes", "/api/v1/namespaces/%s/persistentvolumeclaims" % ns
        self.c.must("POST", "/apis/storage.k8s.io/v1/storageclasses", {
            "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast-" + ns},
            "provisioner": "example.com/fast", "volumeBindingMode": "WaitForFirstConsumer"})

        def claim(name, cls="local", ann=None):
            return self.c.must("POST", pvcs, {
                "apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": name, "annotations": ann or {}},
                "spec": {"storageClassName": cls, "accessModes": ["ReadWriteOnce"],
                         "resources": {"requests": {"storage": "2Gi"}}}})

        def volume(name):
            return self.c.must("POST", pvs, {
                "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
                "spec": {"storageClassName": "local", "capacity": {"storage": "5Gi"},
                         "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/x"}},
                "status": {"phase": "Available"}})

        def prebind(pv, cl):
            pv["spec"]["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": ns,
                                      "name": cl["metadata"]["name"], "uid": cl["metadata"]["uid"]}
            return self.c.put(pvs + "/" + pv["metadata"]["name"], pv)

        def bound(name, timeout=5.0):
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                cl = self.c.get(pvcs + "/" + name).json
                if cl.get("status", {}).get("phase") == "Bound":
                    return cl
                time.sleep(0.05)
            return None

        # a claimRef a scheduler set: both sides bound
        a, pv_a = claim("a"), volume("pv-a-" + ns)
        self.assertEqual(prebind(pv_a, a).status, 200)
        cl = bound("a")
        self.assertIsNotNone(cl)
        self.assertEqual(cl["spec"]["volumeName"], "pv-a-" + ns)
        self.assertEqual(cl["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"], "yes")
        self.assertEqual(cl["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"], "yes")
        self.assertEqual(cl["status"]["capacity"], {"storage": "5Gi"})
        pv = self.c.get(pvs + "/pv-a-" + ns).json
        self.assertEqual(pv["status"]["phase"], "Bound")
        self.assertEqual(pv["spec"]["claimRef"]["uid"], a["metadata"]["uid"])
        # a selected node on a claim of a provisioning class: a PV for that node, bound
        b = claim("b", "fast-" + ns, {"volume.kubernetes.io/selected-node": "n1"})
        cl = bound("b")
        self.assertIsNotNone(cl)
        self.assertEqual(cl["spec"]["volumeName"], "pvc-" + b["metadata"]["uid"])
        pv = self.c.get(pvs + "/pvc-" + b["metadata"]["uid"]).json
        self.assertEqual(pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]
                         ["values"], ["n1"])
        self.assertEqual(pv["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"], "example.com/fast")
        # switched off: nothing is bound until it is on again
        self.c.test("pv-controller", {"enabled": False})
        try:
            c_ = claim("c")
            self.assertEqual(prebind(volume("pv-c-" + ns), c_).status, 200)
            self.assertIsNone(bound("c", 0.5))
        finally:
            self.c.test("pv-controller", {"enabled": True})
        self.assertIsNotNone(bound("c"))
        # steal: another binder takes the PV just before our update, which answers 409
        d, pv_d = claim("d"), volume("pv-d-" + ns)
        claim("thief")
        self.c.test("pv-controller", {"steal": {"pv": "pv-d-" + ns, "claim": ns + "/thief"}})
        self.assertStatus(prebind(pv_d, d), 409, "Conflict", "the object has been modified")
        self.assertEqual(bound("thief")["spec"]["volumeName"], "pv-d-" + ns)
        self.assertEqual(self.c.get(pvs + "/pv-d-" + ns).json["spec"]["claimRef"]["name"], "thief")
        actions = [(e["action"], e["pv"]) for e in self.c.state()["pvController"] if ns in e["pv"] or ns in e["claim"]]
        self.assertIn(("stolen", "pv-d-" + ns), actions)

    # ---- optimistic concurrency ----

    def test_lease_optimistic_concurrency(self):
        ns = self.ns()
        url = "/apis/coordination.k8s.io/v1/namespaces/%s/leases" % ns
        lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"},
                 "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15,
                          "renewTime": "2026-01-01T00:00:00.000000Z", "acquireTime": "2026-01-01T00:00:00.000000Z",
                          "leaseTransitions": 0}}
        v1 = self.c.must("POST", url, lease)
        upd = json.loads(json.dumps(v1))
        upd["spec"]["holderIdentity"] = "b"
        v2 = self.c.must("PUT", url + "/l", upd)
        self.assertGreater(int(v2["metadata"]["resourceVersion"]), int(v1["metadata"]["resourceVersion"]))
        stale = json.loads(json.dumps(v1))
        stale["spec"]["holderIdentity"] = "c"
        self.assertStatus(self.c.put(url + "/l", stale), 409, "Conflict", "the object has been modified")
        norv = json.loads(json.dumps(v2))
        del norv["metadata"]["resourceVersion"]
        self.assertStatus(self.c.put(url + "/l", norv), 422, "Invalid", "metadata.resourceVersion")
        bad = json.loads(json.dumps(v2))
        bad["spec"]["leaseDurationSeconds"] = 0
        self.assertStatus(self.c.put(url + "/l", bad), 422, "Invalid", "spec.leaseDurationSeconds")
        same = self.c.must("PUT", url + "/l", v2)  # a no-op update keeps the version
        self.assertEqual(same["metadata"]["resourceVersion"], v2["metadata"]["resourceVersion"])
        self.assertStatus(self.c.put(url + "/zz", dict(v2, metadata={"name": "zz", "resourceVersion": "1"})), 404)
        log = [x for x in self.c.state()["leases"] if x["lease"] == ns + "/l"]
        self.assertEqual([(x["holder"], x["user"]) for x in log], [("a", "admin"), ("b", "admin")])

    # ---- patch ----

    def test_strategic_merge_patch_of_pod_status(self):
        ns = self.ns()
        self.c.must("POST", PODS % ns, pod("a"))
        url = PODS % ns + "/a/status"
        # what util.PatchPodStatus sends for a scheduling failure
        cond = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "lastProbeTime": None,
                "lastTransitionTime": "2026-01-01T00:00:00Z", "message": "0/3 nodes are available"}
        out = self.c.must("PATCH", url, {"status": {"conditions": [cond],
                                                    "$setElementOrder/conditions": [{"type": "PodScheduled"}]}})
        self.assertEqual(out["status"]["conditions"][0]["reason"], "Unschedulable")
        self.assertEqual(out["status"]["phase"], "Pending")  # untouched fields stay
        out = self.c.must("PATCH", url, {"status": {"conditions": [{"type": "Ready", "status": "False"}]}})
        self.assertEqual([c["type"] for c in out["status"]["conditions"]], ["PodScheduled", "Ready"])
        out = self.c.must("PATCH", url, {"status": {"$setElementOrder/conditions": [{"type": "Ready"},
                                                                                    {"type": "PodScheduled"}],
                                                    "conditions": [{"type": "PodScheduled", "message": "again"}]}})
        self.assertEqual([c["type"] for c in out["status"]["conditions"]], ["Ready", "PodScheduled"])
        self.assertEqual(out["status"]["conditions"][1]["message"], "again")
        self.assertEqual(out["status"]["conditions"][1]["reason"], "Unschedulable")
        out = self.c.must("PATCH", url, {"status": {"nominatedNodeName": "n1"}})
        self.assertEqual(out["status"]["nominatedNodeName"], "n1")
        out = self.c.must("PATCH", url, {"status": {"nominatedNodeName": None}})
        self.assertNotIn("nominatedNodeName", out["status"])
        out = self.c.must("PATCH", url, {"status": {"conditions": [{"type": "Ready", "$patch": "delete"}]}})
        self.assertEqual([c["type"] for c in out["status"]["conditions"]], ["PodScheduled"])
        self.assertStatus(self.c.patch(url, {"status": {"nominatedNodeName": "Not_Valid"}}), 422, "Invalid")
        # the status subresource does not change spec; the main resource does not change status
        out = self.c.must("PATCH", url, {"spec": {"activeDeadlineSeconds": 5}})
        self.assertNotIn("activeDeadlineSeconds", out["spec"])
        out = self.c.must("PATCH", PODS % ns + "/a", {"status": {"phase": "Running"}})
        self.assertEqual(out["status"]["phase"], "Pending")
        self.assertStatus(self.c.patch(PODS % ns + "/a", {"spec": {"nodeName": "n9"}}), 422, "Invalid")

    def test_merge_and_json_patch(self):
        ns = self.ns()
        self.c.must("POST", PODS % ns, pod("a"))
        url = PODS % ns + "/a"
        out = self.c.must("PATCH", url, {"metadata": {"labels": {"a": "1", "b": "2"}}},
                          ctype="application/merge-patch+json")
        out = self.c.must("PATCH", url, {"metadata": {"labels": {"a": None}}}, ctype="application/merge-patch+json")
        self.assertEqual(out["metadata"]["labels"], {"b": "2"})
        out = self.c.must("PATCH", url, [{"op": "add", "path": "/metadata/labels/c", "value": "3"},
                                         {"op": "remove", "path": "/metadata/labels/b"}],
                          ctype="application/json-patch+json")
        self.assertEqual(out["metadata"]["labels"], {"c": "3"})
        r = self.c.patch(url, {"metadata": {"resourceVersion": "1", "labels": {"d": "4"}}},
                         ctype="application/merge-patch+json")
        self.assertStatus(r, 409, "Conflict")
        self.assertStatus(self.c.patch(url, {"a": 1}, ctype="text/plain"), 415, "UnsupportedMediaType")
        self.assertStatus(self.c.patch(PODS % ns + "/zz", {"a": 1}), 404, "NotFound")

    def test_delete(self):
        ns = self.ns()
        created = self.c.must("POST", PODS % ns, pod("a"))
        r = self.c.delete(PODS % ns + "/a", {"apiVersion": "v1", "kind": "DeleteOptions",
                                            "preconditions": {"uid": "other"}})
        self.assertStatus(r, 409, "Conflict", "Precondition failed")
        out = self.c.must("DELETE", PODS % ns + "/a", {"apiVersion": "v1", "kind": "DeleteOptions",
                                                       "gracePeriodSeconds": 30})
        self.assertEqual(out["metadata"]["uid"], created["metadata"]["uid"])  # pods return the object
        self.assertStatus(self.c.get(PODS % ns + "/a"), 404)
        self.assertStatus(self.c.delete(PODS % ns + "/a"), 404, "NotFound")

    def test_graceful_pod_deletion_mode(self):
        ns = self.ns()
        self.c.must("POST", PODS % ns, pod("a", nodeName="n1"))
        self.c.must("POST", PODS % ns, pod("b"))
        self.c.test("config", {"podTerminationSeconds": 0.5})
        try:
            out = self.c.must("DELETE", PODS % ns + "/a")
            self.assertTrue(out["metadata"]["deletionTimestamp"])
            self.assertEqual(out["metadata"]["deletionGracePeriodSeconds"], 30)
            self.assertEqual(self.c.get(PODS % ns + "/a").status, 200)  # terminating
            self.c.must("DELETE", PODS % ns + "/b")  # not bound: gone at once
            self.assertStatus(self.c.get(PODS % ns + "/b"), 404)
            deadline = time.monotonic() + 10
            while self.c.get(PODS % ns + "/a").status == 200 and time.monotonic() < deadline:
                time.sleep(0.1)
            self.assertStatus(self.c.get(PODS % ns + "/a"), 404)
        finally:
            self.c.test("config", {"podTerminationSeconds": None})

    def test_injected_faults(self):
        ns = self.ns()
        self.c.test("fault", {"method": "GET", "path": "^/api/v1/namespaces/%s/pods$" % ns, "code": 429, "count": 1})
        self.c.test("fault", {"method": "POST", "path": "/%s/pods/a/binding$" % ns, "code": 500, "count": 1})
        r = self.c.get(PODS % ns)
        self.assertStatus(r, 429, "TooManyRequests")
        self.assertEqual(r.headers.get("Retry-After"), "1")
        self.assertEqual(self.c.get(PODS % ns).status, 200)
        self.c.must("POST", PODS % ns, pod("a"))
        self.assertStatus(self.c.post(PODS % ns + "/a/binding", binding("a", "n1")), 500, "InternalError")
        self.assertEqual(self.c.post(PODS % ns + "/a/binding", binding("a", "n1")).status, 201)
        faults = [f for f in self.c.state()["faults"] if ns in f["path"]]
        self.assertEqual([f["hits"] for f in faults], [1, 1])
        self.assertEqual([m["request"] for m in faults[1]["matched"]], ["POST " + PODS % ns + "/a/binding"])
        self.assertEqual(faults[1]["matched"][0]["user"], "admin")

    def test_injected_expired_and_too_large(self):
        ns = self.ns()
        self.c.test("fault", {"method": "GET", "path": "^/api/v1/namespaces/%s/pods\\?resourceVersion=7$" % ns,
                              "code": 410, "count": 1})
        self.c.test("fault", {"method": "GET", "path": "^/api/v1/namespaces/%s/pods\\?resourceVersion=8$" % ns,
                              "code": 504, "count": 1})
        self.assertStatus(self.c.get(PODS % ns + "?resourceVersion=7"), 410, "Expired")
        r = self.c.get(PODS % ns + "?resourceVersion=8")
        self.assertStatus(r, 504, "Timeout")
        self.assertEqual(r.json["details"]["causes"][0]["reason"], "ResourceVersionTooLarge")
        self.assertEqual(self.c.get(PODS % ns + "?resourceVersion=7").status, 200)

    def test_stalled_requests_are_never_answered_nor_applied(self):
        ns = self.ns()
        self.c.must("POST", PODS % ns, pod("a"))
        self.c.test("fault", {"method": "POST", "path": "/%s/pods/a/binding$" % ns, "stall": 1, "count": 2})
        body = json.dumps(binding("a", "n1"))
        # held for the stall, then closed without an answer
        conn = self.c.connect(timeout=10)
        t = time.monotonic()
        conn.request("POST", PODS % ns + "/a/binding", body=body, headers=self.c.headers("application/json"))
        with self.assertRaises((http.client.HTTPException, ConnectionError, ssl.SSLError)):
            conn.getresponse()
        self.assertGreaterEqual(time.monotonic() - t, 1.0)
        conn.close()
        # a client that gives up first times out
        conn = self.c.connect(timeout=0.3)
        conn.request("POST", PODS % ns + "/a/binding", body=body, headers=self.c.headers("application/json"))
        with self.assertRaises(socket.timeout):
            conn.getresponse()
        conn.close()
        self.assertFalse(self.c.get(PODS % ns + "/a").json["spec"].get("nodeName"), "a stalled binding bound")
        self.assertEqual(self.c.post(PODS % ns + "/a/binding", binding("a", "n1")).status, 201)
        st = self.c.state()
        self.assertEqual([b["code"] for b in st["bindings"] if b["pod"] == ns + "/a"], [201])
        self.assertEqual([f["hits"] for f in st["faults"] if ns in f["path"]], [2])

    # ---- events ----

    def test_events_share_storage_across_versions(self):
        ns = self.ns()
        ev = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "a.1", "namespace": ns},
              "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "default-scheduler",
              "reportingInstance": "default-scheduler-host", "action": "Scheduling", "reason": "FailedScheduling",
              "type": "Warning", "note": "0/3 nodes are available",
              "regarding": {"kind": "Pod", "namespace": ns, "name": "a", "apiVersion": "v1"}}
        self.c.must("POST", "/apis/events.k8s.io/v1/namespaces/%s/events" % ns, ev)
        core = self.c.get("/api/v1/namespaces/%s/events/a.1" % ns).json
        self.assertEqual((core["apiVersion"], core["message"], core["involvedObject"]["name"]),
                         ("v1", "0/3 nodes are available", "a"))
        bad = dict(ev, metadata={"name": "a.2"})
        del bad["reportingController"]
        del bad["eventTime"]
        r = self.c.post("/apis/events.k8s.io/v1/namespaces/%s/events" % ns, bad)
        self.assertStatus(r, 422, "Invalid", "eventTime")
        self.assertIn("reportingController", r.json["message"])
        self.assertStatus(self.c.post("/apis/events.k8s.io/v1/namespaces/%s/events" % ns,
                                      dict(ev, metadata={"name": "a.3"}, type="Bad")), 422, "Invalid", "type")
        legacy = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "b.1"}, "reason": "Scheduled",
                  "message": "ok", "involvedObject": {"kind": "Pod", "namespace": ns, "name": "b"}}
        self.c.must("POST", "/api/v1/namespaces/%s/events" % ns, legacy)
        r = self.c.post("/api/v1/namespaces/%s/events" % ns,
                        dict(legacy, metadata={"name": "b.2"}, involvedObject={"kind": "Pod", "namespace": "x"}))
        self.assertStatus(r, 422, "Invalid", "involvedObject.namespace")

    def test_event_series_patch_and_immutable_fields(self):
        ns = self.ns()
        url = "/apis/events.k8s.io/v1/namespaces/%s/events" % ns
        self.c.must("POST", url, {
            "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "s.1"},
            "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "default-scheduler",
            "reportingInstance": "default-scheduler-host", "action": "Scheduling", "reason": "FailedScheduling",
            "type": "Warning", "note": "0/3 nodes are available",
            "regarding": {"kind": "Pod", "namespace": ns, "name": "s", "apiVersion": "v1"}})
        out = self.c.must("PATCH", url + "/s.1", {"series": {"count": 2,
                                                            "lastObservedTime": "2026-01-01T00:00:09.000000Z"}})
        self.assertEqual(out["series"]["count"], 2)
        self.assertEqual(self.c.get("/api/v1/namespaces/%s/events/s.1" % ns).json["series"]["count"], 2)
        self.assertStatus(self.c.patch(url + "/s.1", {"note": "other"}), 422, "Invalid", "field is immutable")
        self.assertStatus(self.c.patch(url + "/s.1", {"series": {"count": 1}}), 422, "Invalid", "series.count")
        # the core/v1 API keeps its old leniency
        self.c.must("PATCH", "/api/v1/namespaces/%s/events/s.1" % ns, {"message": "other"})

    # ---- scale and pressure ----

    def test_bulk_create_and_summary(self):
        ns = self.ns()
        node = {"apiVersion": "v1", "kind": "Node", "metadata": {"labels": {"kubernetes.io/hostname": "{name}"}},
                "status": {"allocatable": {"cpu": "4"}}}
        rv = self.c.test("bulk", {"resource": "nodes", "count": 30, "name": "bulk-" + ns + "-%02d", "template": node,
                                  "cycle": {"zone": ["a", "b", "c"]}})["resourceVersion"]
        got = [n for n in self.c.get("/api/v1/nodes").json["items"] if n["metadata"]["name"].startswith("bulk-" + ns)]
        self.assertEqual(len(got), 30)
        self.assertEqual(got[4]["metadata"]["labels"], {"kubernetes.io/hostname": "bulk-%s-04" % ns, "zone": "b"})
        self.assertEqual(len({n["metadata"]["uid"] for n in got}), 30)
        self.assertEqual(got[-1]["metadata"]["resourceVersion"], rv)
        self.c.test("bulk", {"resource": "pods", "namespace": ns, "count": 7, "name": "run-%d",
                             "template": pod("x"), "nodeName": "bulk-" + ns + "-%02d", "nodes": 3})
        pods = self.c.get(PODS % ns).json["items"]
        self.assertEqual([p["spec"]["nodeName"][-2:] for p in pods], ["00", "01", "02", "00", "01", "02", "00"])
        self.assertEqual(pods[6]["spec"]["schedulerName"], "default-scheduler")  # the create path's defaults
        r = self.c.post("/_test/bulk", {"resource": "pods", "namespace": ns, "count": 2, "name": "run-%d",
                                        "template": pod("x")})
        self.assertStatus(r, 409, "AlreadyExists")
        summary = self.c.test("summary")
        self.assertGreaterEqual(summary["counts"]["/pods"], 7)
        self.assertGreaterEqual(summary["boundPods"], 7)

    def test_list_with_limit_at_an_exact_resource_version(self):
        ns = self.ns()
        self.c.must("POST", PODS % ns, pod("p0"))
        rv = self.c.must("POST", PODS % ns, pod("p1"))["metadata"]["resourceVersion"]
        self.c.must("POST", PODS % ns, pod("p2"))
        page = self.c.get(PODS % ns + "?limit=1&resourceVersion=" + rv).json
        self.assertEqual(page["metadata"]["resourceVersion"], rv)
        names = [p["metadata"]["name"] for p in page["items"]]
        page = self.c.get(PODS % ns + "?limit=1&continue=" + page["metadata"]["continue"]).json
        names += [p["metadata"]["name"] for p in page["items"]]
        self.assertEqual(names, ["p0", "p1"])
        self.assertNotIn("continue", page["metadata"])
        # without a limit: at least as fresh as rv (the watch cache)
        self.assertEqual(len(self.c.get(PODS % ns + "?resourceVersion=" + rv).json["items"]), 3)
        self.c.must("POST", PODS % ns, pod("p3"))
        self.c.test("compact")
        self.assertStatus(self.c.get(PODS % ns + "?limit=1&resourceVersion=" + rv), 410, "Expired", "too old")

    def test_slow_watcher_is_closed(self):
        ns = self.ns()
        rv = self.c.get(PODS % ns).json["metadata"]["resourceVersion"]
        self.c.test("config", {"watchBuffer": 5})
        try:
            w = self.c.watch(PODS % ns + "?resourceVersion=" + rv)
            before = self.c.test("summary")["slowWatchersClosed"]
            # 20 events in one burst: more than its buffer holds
            self.c.test("bulk", {"resource": "pods", "namespace": ns, "count": 20, "name": "b%02d",
                                 "template": pod("x")})
            got = []
            while True:
                ev = w.next()
                if ev is None:
                    break  # a clean end of the stream, as the cacher ends it
                got.append(ev)
            w.close()
            self.assertEqual([e["object"]["metadata"]["name"] for e in got], ["b%02d" % i for i in range(5)])
            summary = self.c.test("summary")
            self.assertEqual(summary["slowWatchersClosed"], before + 1)
            self.assertIn("slow", [x.get("end") for x in summary["watches"]])
            # resumed from the last event: the rest arrives as catch-up, which no buffer bounds
            w = self.c.watch(PODS % ns + "?resourceVersion=" + got[-1]["object"]["metadata"]["resourceVersion"])
            rest = [w.next()["object"]["metadata"]["name"] for _ in range(15)]
            w.close()
            self.assertEqual(rest, ["b%02d" % i for i in range(5, 20)])
        finally:
            self.c.test("config", {"watchBuffer": 0})

    # ---- resource.k8s.io ----

    def dra_claim_pod(self, ns, name, **ref):
        return pod(name, resourceClaims=[dict({"name": "gpu"}, **ref)])

    def test_resource_k8s_io_kinds(self):
        self.c.test("dra-controller", {"enabled": False})  # the API alone (its test follows)
        try:
            self.resource_k8s_io_kinds()
        finally:
            self.c.test("dra-controller", {"enabled": True})

    def resource_k8s_io_kinds(self):
        ns = self.ns()
        r = "/apis/resource.k8s.io/v1"
        names = {x["name"] for x in self.c.must("GET", r)["resources"]}
        self.assertEqual(names, {"deviceclasses", "resourceslices", "resourceclaims", "resourceclaims/status",
                                 "resourceclaimtemplates"})
        self.c.must("POST", r + "/resourceslices", {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s-" + ns},
            "spec": {"driver": "d", "nodeName": "n-" + ns, "pool": {"name": "p", "resourceSliceCount": 1}}})
        items = self.c.must("GET", r + "/resourceslices?fieldSelector=spec.nodeName%3Dn-" + ns)["items"]
        self.assertEqual([i["metadata"]["name"] for i in items], ["s-" + ns])
        path = r + "/namespaces/%s/resourceclaims" % ns
        uid = self.c.must("POST", PODS % ns, pod("p"))["metadata"]["uid"]
        claim = self.c.must("POST", path, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                           "metadata": {"name": "c"}, "spec": {"devices": {}},
                                           "status": {"reservedFor": [{"resource": "pods"}]}})
        self.assertNotIn("status", claim, "status starts empty")
        # reservedFor needs an allocation; the main resource keeps status
        claim["status"] = {"reservedFor": [{"resource": "pods", "name": "p", "uid": uid}]}
        self.assertStatus(self.c.put(path + "/c/status", claim), 422, "Invalid",
                          "status.reservedFor: Forbidden: may not be specified when `allocated` is not set")
        claim["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
        claim = self.c.must("PUT", path + "/c", claim)
        self.assertNotIn("status", claim)
        alloc = {"devices": {"results": [{"request": "r", "driver": "d", "pool": "p", "device": "x"}]}}
        claim["status"] = {"allocation": alloc, "reservedFor": [{"resource": "pods", "name": "p", "uid": uid}]}
        claim = self.c.must("PUT", path + "/c/status", claim)
        self.assertEqual(claim["status"]["allocation"], alloc)
        changed = json.loads(json.dumps(claim))
        changed["status"]["allocation"]["devices"]["results"][0]["device"] = "y"
        self.assertStatus(self.c.put(path + "/c/status", changed), 422, "Invalid", "status.allocation")
        # Unreserve's patch (reservedFor merges by uid); a PUT of nulls keeps nothing
        claim = self.c.must("PATCH", path + "/c/status", {"metadata": {"uid": claim["metadata"]["uid"]}, "status": {
            "reservedFor": [{"$patch": "delete", "uid": uid}]}})
        self.assertEqual(claim["status"], {"allocation": alloc})
        # deletion with a finalizer: deletionTimestamp, the object answered; gone with the finalizer
        deleting = self.c.must("DELETE", path + "/c")
        self.assertTrue(deleting["metadata"]["deletionTimestamp"])
        self.assertEqual(self.c.get(path + "/c").status, 200)
        deleting["metadata"]["finalizers"].append("new")
        self.assertStatus(self.c.put(path + "/c", deleting), 422, "Invalid", "no new finalizers")
        deleting["metadata"]["finalizers"] = []
        self.c.must("PUT", path + "/c", deleting)
        self.assertEqual(self.c.get(path + "/c").status, 404)
        log = [e for e in self.c.test("dra-log")["claimLog"] if e["claim"] == ns + "/c"]
        self.assertEqual([e["type"] for e in log], ["ADDED"] + ["MODIFIED"] * 4 + ["DELETED"])
        self.assertEqual([e["devices"] for e in log], [None, None, ["d/p/x"], ["d/p/x"], ["d/p/x"], None])

    def test_resourceclaim_controller(self):
        ns = self.ns()
        r = "/apis/resource.k8s.io/v1/namespaces/%s" % ns
        self.c.must("POST", PODS % ns, self.dra_claim_pod(ns, "waits", resourceClaimTemplateName="t"))
        self.c.must("POST", r + "/resourceclaimtemplates", {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "t"},
            "spec": {"metadata": {"labels": {"a": "b"}}, "spec": {"devices": {"requests": []}}}})
        deadline = time.monotonic() + 10
        while True:
            p = self.c.must("GET", PODS % ns + "/waits")
            if (p.get("status") or {}).get("resourceClaimStatuses") or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        made = p["status"]["resourceClaimStatuses"]
        self.assertEqual([m["name"] for m in made], ["gpu"])
        name = made[0]["resourceClaimName"]
        self.assertTrue(name.startswith("waits-gpu-"), name)
        claim = self.c.must("GET", r + "/resourceclaims/" + name)
        self.assertEqual(claim["metadata"]["labels"], {"a": "b"})
        self.assertEqual(claim["metadata"]["annotations"]["resource.kubernetes.io/pod-claim-name"], "gpu")
        owner = claim["metadata"]["ownerReferences"][0]
        self.assertEqual((owner["kind"], owner["name"], owner["uid"], owner["controller"]),
                         ("Pod", "waits", p["metadata"]["uid"], True))
        # a scheduler's finalizer on a claim nobody used yet is left alone
        claim["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
        claim = self.c.must("PUT", r + "/resourceclaims/" + name, claim)
        claim["status"] = {"allocation": {"devices": {}}, "reservedFor": [
            {"resource": "pods", "name": "waits", "uid": p["metadata"]["uid"]}]}
        claim = self.c.must("PUT", r + "/resourceclaims/%s/status" % name, claim)
        time.sleep(0.3)
        self.assertEqual(self.c.must("GET", r + "/resourceclaims/" + name)["metadata"]["resourceVersion"],
                         claim["metadata"]["resourceVersion"])
        # the pod goes: reservation dropped and allocation cleared, finalizer removed, claim deleted
        self.c.must("DELETE", PODS % ns + "/waits")
        deadline = time.monotonic() + 10
        while self.c.get(r + "/resourceclaims/" + name).status != 404 and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(self.c.get(r + "/resourceclaims/" + name).status, 404)
        actions = [a["action"] for a in self.c.test("dra-log")["draController"] if a.get("claim") == ns + "/" + name]
        self.assertEqual(actions, ["claim-created", "deallocated", "finalizer-removed", "claim-deleted"])

    def test_claim_conflicts_and_interference(self):
        ns = self.ns()
        path = "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims" % ns
        claim = self.c.must("POST", path, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                           "metadata": {"name": "c"}, "spec": {}})
        self.c.test("fault", {"method": "PUT", "path": "^%s/c/status$" % path, "code": 409, "count": 1})
        self.assertStatus(self.c.put(path + "/c/status", claim), 409, "Conflict",
                          'Operation cannot be fulfilled on resourceclaims.resource.k8s.io "c": the object has been '
                          'modified')
        # another writer gets in first: an update at the version read is a real conflict
        self.c.test("claim-interference", {"count": 1})
        claim["metadata"]["labels"] = {"x": "y"}
        self.assertStatus(self.c.put(path + "/c", claim), 409, "Conflict")
        fresh = self.c.must("GET", path + "/c")
        self.assertEqual(fresh["metadata"]["annotations"]["e2e.ksched.io/touched"], "1")
        fresh["metadata"]["labels"] = {"x": "y"}
        self.c.must("PUT", path + "/c", fresh)
        users = [e["user"] for e in self.c.test("dra-log")["claimLog"] if e["claim"] == ns + "/c"]
        self.assertEqual(users, ["admin", "other-writer", "admin"])

    def test_disabled_group(self):
        srv = harness.ApiServer(self.tmp, None, extra=["--disable-group", "resource.k8s.io"])
        try:
            c = srv.client()
            self.assertStatus(c.get("/apis/resource.k8s.io/v1"), 404, "NotFound")
            self.assertStatus(c.get("/apis/resource.k8s.io/v1/resourceclaims"), 404, "NotFound")
            groups = [g["name"] for g in c.must("GET", "/apis")["groups"]]
            self.assertNotIn("resource.k8s.io", groups)
            self.assertIn("storage.k8s.io", groups)
            c.close()
        finally:
            srv.stop()


class OutageTest(harness.ServerTestCase):
    """/_test/outage on a server of its own: the others' tests would see it."""

    WORKDIR_PREFIX = "ksched-apiserver-outage-"

    def refused(self):
        try:
            socket.create_connection(("127.0.0.1", self.server.port), timeout=2).close()
            return False
        except ConnectionRefusedError:
            return True
        except ConnectionResetError:  # in the backlog as the listening socket closed
            return False

    def test_outage_refuses_cuts_and_comes_back_with_the_state(self):
        ns = self.ns()
        self.c.must("POST", PODS % ns, pod("a"))
        rv = self.c.get(PODS % ns).json["metadata"]["resourceVersion"]
        w = self.c.watch(PODS % ns)
        self.assertEqual(w.next()["type"], "ADDED")
        idle = self.server.client("admin")  # a kept-alive connection with nothing in flight
        self.assertEqual(idle.get(PODS % ns).status, 200)
        self.assertEqual(self.c.test("outage", {"seconds": 2}), {"seconds": 2.0})
        t = time.monotonic()
        # the watch stream dies without its last chunk
        with self.assertRaises((http.client.IncompleteRead, ConnectionError, ssl.SSLError)):
            while w.next_line():
                pass
        w.close()
        while not self.refused():
            self.assertLess(time.monotonic() - t, 1.5, "connections still accepted")
            time.sleep(0.05)
        with self.assertRaises(ConnectionError):  # the kept-alive connection was cut, and no new one made
            idle.get(PODS % ns)
        while time.monotonic() - t < 1.5:
            self.assertTrue(self.refused(), "listening again %.1f s into a 2 s outage" % (time.monotonic() - t))
            time.sleep(0.2)
        while self.refused():
            self.assertLess(time.monotonic() - t, 10, "not listening again after the outage")
            time.sleep(0.1)
        self.assertGreaterEqual(time.monotonic() - t, 1.9)
        # the same port, the same state: the pod, its history (a watch resumes from before)
        st = self.c.state()
        self.assertIn(ns + "/a", st["objects"]["/pods"])
        self.assertEqual(len(st["outages"]), 1)
        out = st["outages"][0]
        self.assertGreaterEqual(out["end"] - out["start"], 2.0)
        self.c.must("POST", PODS % ns, pod("b"))
        w = self.c.watch(PODS % ns + "?resourceVersion=" + rv)
        got = w.next()
        self.assertEqual((got["type"], got["object"]["metadata"]["name"]), ("ADDED", "b"))
        w.close()
        self.assertEqual(idle.get(PODS % ns).status, 200)
        idle.close()


class PatchTest(unittest.TestCase):
    """The patch functions alone."""

    def test_smp_replace_and_retain(self):
        self.assertEqual(apiserver.strategic_merge_patch({"a": {"b": 1, "c": 2}}, {"a": {"$patch": "replace", "d": 3}}),
                         {"a": {"d": 3}})
        self.assertEqual(apiserver.strategic_merge_patch({"spec": {"x": 1, "y": 2}},
                                                         {"spec": {"$retainKeys": ["x"], "x": 5}}), {"spec": {"x": 5}})
        fin = apiserver.strategic_merge_patch({"metadata": {"finalizers": ["a"]}}, {"metadata": {"finalizers": ["b"]}})
        self.assertEqual(fin, {"metadata": {"finalizers": ["a", "b"]}})
        # lists without a merge key are replaced
        self.assertEqual(apiserver.strategic_merge_patch({"spec": {"tolerations": [{"key": "a"}]}},
                                                         {"spec": {"tolerations": [{"key": "b"}]}}),
                         {"spec": {"tolerations": [{"key": "b"}]}})


if __name__ == "__main__":
    unittest.main(verbosity=2)
