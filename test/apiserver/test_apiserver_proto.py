#!/usr/bin/env python3
"""The test API server speaks protobuf as kube-apiserver does for a client that asks for it
(application/vnd.kubernetes.protobuf, as kube-scheduler's client-go): enveloped objects,
lists and Status answers, length-prefixed watch frames, protobuf request bodies, and the
refusals of the real server (400 for a body that does not decode or names another kind,
415 for a patch or a kind without protobuf). Also the codec (k8sproto.py) alone."""

import json
import os
import struct
import sys
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import k8sproto  # noqa: E402

PODS = "/api/v1/namespaces/%s/pods"
PB = k8sproto.MEDIA_TYPE
ACCEPT = PB + ", */*"  # client-go's Accept for a protobuf content type
S = k8sproto.Schema()


def pod(name):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "busybox:1.36",
                                     "resources": {"requests": {"cpu": "100m"}}}], "priority": 0}}


class Reply:
    def __init__(self, status, body, headers):
        self.status, self.raw, self.headers = status, body, headers
        self.ctype = headers.get("Content-Type", "")
        self.obj = S.unenvelope(body)[2] if self.ctype == PB else json.loads(body) if body else None

    def __repr__(self):
        return "<%d %s %r>" % (self.status, self.ctype, self.obj)


class ProtoServerTest(harness.ServerTestCase):
    WORKDIR_PREFIX = "ksched-apiserver-proto-"
    EXTRA = ("--bookmark-interval", "0.3")
    NS_PREFIX = "p"

    def req(self, method, path, body=None, ctype=None, accept=ACCEPT):
        conn = self.c.connect()
        headers = {"Accept": accept, "User-Agent": "proto-test"}
        if body is not None:
            headers["Content-Type"] = ctype or PB
        conn.request(method, path, body=body, headers=headers)
        r = conn.getresponse()
        out = Reply(r.status, r.read(), dict(r.getheaders()))
        conn.close()
        return out

    def assertStatus(self, r, code, reason, message=None):
        self.assertEqual((r.status, r.obj["kind"], r.obj["code"], r.obj.get("reason")), (code, "Status", code, reason),
                         r)
        if message:
            self.assertIn(message, r.obj["message"], r)

    def test_objects_lists_and_errors_in_protobuf(self):
        ns = self.ns()
        self.c.must("POST", PODS % ns, pod("a"))
        r = self.req("GET", PODS % ns)
        self.assertEqual((r.status, r.ctype), (200, PB), r)
        self.assertEqual(r.obj["kind"], "PodList")
        self.assertEqual([p["metadata"]["name"] for p in r.obj["items"]], ["a"])
        self.assertEqual(r.obj["items"][0]["spec"]["containers"][0]["resources"]["requests"]["cpu"], "100m")
        self.assertEqual(r.obj["items"][0]["spec"]["priority"], 0)
        self.assertTrue(r.obj["metadata"]["resourceVersion"])
        r = self.req("GET", PODS % ns + "/a")
        self.assertEqual((r.status, r.ctype, r.obj["kind"]), (200, PB, "Pod"))
        self.assertStatus(self.req("GET", PODS % ns + "/zz"), 404, "NotFound")
        # JSON first, or a kind without a message: JSON
        self.assertEqual(self.req("GET", PODS % ns, accept="application/json, " + PB).ctype, "application/json")
        r = self.req("GET", "/apis/coordination.k8s.io/v1/namespaces/%s/leases" % ns)
        self.assertEqual((r.status, r.ctype), (200, "application/json"), r)
        self.assertStatus(self.req("GET", PODS % ns, accept="application/yaml"), 406, "NotAcceptable")

    def read_frames(self, w, n):
        out = []
        while len(out) < n:
            while len(w.buf) < 4 or len(w.buf) < 4 + struct.unpack(">I", w.buf[:4])[0]:
                self.assertTrue(w._fill(), "the stream ended")
            size = struct.unpack(">I", w.buf[:4])[0]
            frame, w.buf = w.buf[4:4 + size], w.buf[4 + size:]
            ev = {}
            try:
                fields = k8sproto.parse_message(frame)
            except k8sproto.ProtoError:
                fields = []  # no WatchEvent at all
            for num, wire, value in fields:
                if num == 1:
                    ev["type"] = value.decode()
                elif num == 2:
                    raw = dict((n2, v2) for n2, w2, v2 in k8sproto.parse_message(value)).get(1, b"")
                    ev["object"] = S.unenvelope(raw)[2] if raw[:4] == k8sproto.MAGIC else raw
            out.append(ev)
        return out

    def proto_watch(self, path):
        """A harness.Watch that asks for protobuf (its chunk reader reads the frames)."""
        w = harness.Watch.__new__(harness.Watch)
        w.conn = self.c.connect(10)
        w.conn.request("GET", path + ("&" if "?" in path else "?") + "watch=1",
                       headers={"Accept": ACCEPT, "User-Agent": "proto-test"})
        w.resp = w.conn.getresponse()
        w.status, w.chunked, w.buf, w.done = w.resp.status, True, b"", False
        return w

    def test_watch_streams_length_prefixed_frames(self):
        ns = self.ns()
        rv = self.c.get(PODS % ns).json["metadata"]["resourceVersion"]
        w = self.proto_watch(PODS % ns + "?resourceVersion=%s&allowWatchBookmarks=true" % rv)
        self.assertEqual(w.resp.getheader("Content-Type"), k8sproto.WATCH_MEDIA_TYPE)
        self.c.must("POST", PODS % ns, pod("a"))
        self.c.must("DELETE", PODS % ns + "/a")
        evs = self.read_frames(w, 2)
        self.assertEqual([(e["type"], e["object"]["kind"], e["object"]["metadata"]["name"]) for e in evs],
                         [("ADDED", "Pod", "a"), ("DELETED", "Pod", "a")])
        bm = self.read_frames(w, 1)[0]  # nothing else happens: a bookmark
        self.assertEqual(bm["type"], "BOOKMARK")
        self.assertTrue(bm["object"]["metadata"]["resourceVersion"])
        # bad frames for a client to skip
        self.c.test("inject", {"resource": "pods", "event": "not-json"})
        self.c.test("inject", {"resource": "pods", "event": "unknown-type"})
        junk, other = self.read_frames(w, 2)
        self.assertNotIn("type", junk)
        self.assertEqual(other["type"], "SOMETHING")
        w.close()
        # a resourceVersion older than the compaction: an ERROR event with a 410 Status
        self.c.test("compact", {})
        w = self.proto_watch(PODS % ns + "?resourceVersion=1")
        err = self.read_frames(w, 1)[0]
        self.assertEqual((err["type"], err["object"]["kind"], err["object"]["code"]), ("ERROR", "Status", 410))
        w.close()

    def test_protobuf_bodies_and_what_the_server_refuses(self):
        ns = self.ns()
        self.c.must("POST", PODS % ns, pod("a"))
        url = PODS % ns + "/a/binding"
        binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "a"},
                   "target": {"kind": "Node", "name": "n1"}}
        r = self.req("POST", url, S.envelope(dict(binding, kind="Pod", target=None, spec={}), "v1", "Pod"))
        self.assertStatus(r, 400, "BadRequest", "must be of type Binding")
        self.assertStatus(self.req("POST", url, json.dumps(binding).encode()), 400, "BadRequest",
                          "does not appear to be a protobuf message")
        self.assertStatus(self.req("POST", url, k8sproto.MAGIC + b"\x0a\x09xy"), 400, "BadRequest")
        self.assertStatus(self.req("POST", url, json.dumps(binding).encode(), ctype="application/yaml"), 415,
                          "UnsupportedMediaType")
        # an envelope without typeMeta is the endpoint's kind, as the server's decoder has it
        raw = S.encode("ks.core.Binding", binding)
        r = self.req("POST", url, k8sproto.MAGIC + k8sproto.tag(2, 2) + k8sproto.length(raw))
        self.assertEqual((r.status, r.ctype, r.obj["status"]), (201, PB, "Success"), r)
        self.assertEqual(self.c.get(PODS % ns + "/a").json["spec"]["nodeName"], "n1")
        self.assertStatus(self.req("POST", url, S.envelope(binding)), 409, "Conflict", "already assigned")
        # a patch is never protobuf
        r = self.req("PATCH", PODS % ns + "/a", S.envelope(pod("a")))
        self.assertStatus(r, 415, "UnsupportedMediaType")
        # a Lease and an Event in protobuf
        leases = "/apis/coordination.k8s.io/v1/namespaces/%s/leases" % ns
        lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"},
                 "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15, "leaseTransitions": 0,
                          "renewTime": "2026-01-01T00:00:00.250000Z"}}
        r = self.req("POST", leases, S.envelope(lease))
        self.assertEqual((r.status, r.ctype), (201, PB), r)
        self.assertEqual(r.obj["spec"]["renewTime"], "2026-01-01T00:00:00.250000Z")
        self.assertEqual(r.obj["spec"]["leaseTransitions"], 0)
        got = self.c.get(leases + "/l").json
        self.assertEqual(got["spec"]["holderIdentity"], "me")
        lease["metadata"]["resourceVersion"] = got["metadata"]["resourceVersion"]
        lease["spec"]["holderIdentity"] = ""
        r = self.req("PUT", leases + "/l", S.envelope(lease))
        self.assertEqual(r.status, 200, r)
        self.assertEqual(self.c.get(leases + "/l").json["spec"]["holderIdentity"], "")
        ev = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "a.1", "namespace": ns},
              "eventTime": "2026-01-01T00:00:00.000001Z", "reportingController": "default-scheduler",
              "reportingInstance": "default-scheduler-h", "action": "Binding", "reason": "Scheduled",
              "type": "Normal", "note": "Successfully assigned", "regarding": {"kind": "Pod", "name": "a",
                                                                                "namespace": ns}}
        r = self.req("POST", "/apis/events.k8s.io/v1/namespaces/%s/events" % ns, S.envelope(ev))
        self.assertEqual((r.status, r.obj["eventTime"]), (201, "2026-01-01T00:00:00.000001Z"), r)
        # core/v1 Events have no message here: protobuf is refused, JSON taken
        legacy = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "b.1"}, "reason": "x", "message": "m",
                  "involvedObject": {"kind": "Pod", "namespace": ns, "name": "a"}}
        self.assertStatus(self.req("POST", "/api/v1/namespaces/%s/events" % ns, b"k8s\x00"), 415,
                          "UnsupportedMediaType")
        self.assertEqual(self.req("POST", "/api/v1/namespaces/%s/events" % ns, json.dumps(legacy).encode(),
                                  ctype="application/json").status, 201)
        # the server counts what went over the wire
        wire = self.c.state()["wire"]
        self.assertEqual(wire["admin POST pods/binding"]["request"], {PB: 5, "application/yaml": 1})
        self.assertEqual(wire["admin POST pods/binding"]["response"], {PB: 6})


class CodecTest(unittest.TestCase):
    def test_roundtrip_and_json_shapes(self):
        obj = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "p", "labels": {"b": "2", "a": "1"}, "creationTimestamp": "2024-05-01T10:00:00Z"},
               "spec": {"priority": 0, "hostNetwork": False, "nodeName": "",
                        "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}],
                        "containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 0}]}],
                        "tolerations": [{"operator": "Exists", "tolerationSeconds": -5}]},
               "status": {"phase": "Pending"}}
        back = S.unenvelope(S.envelope(obj))[2]
        want = json.loads(json.dumps(obj))
        del want["spec"]["hostNetwork"], want["spec"]["nodeName"]  # omitempty zeros
        del want["spec"]["containers"][0]["ports"][0]["hostPort"]
        self.assertEqual(back, want)
        for bad in (b"", b"k8s", b"k8s\x00", b"k8s\x00\xff"):
            with self.assertRaises(k8sproto.ProtoError):
                S.unenvelope(bad)
        self.assertEqual(k8sproto.parse_time("1970-01-01T00:00:01.5+01:00"), (1 - 3600, 500000000))
        self.assertEqual(k8sproto.format_time(-1, 999999999, True), "1969-12-31T23:59:59.999999Z")


if __name__ == "__main__":
    unittest.main(verbosity=2)
