#!/usr/bin/env python3
"""e2e_gang.py KSCHED - `ksched serve --feature-gates GenericWorkload=true,TopologyAwareWorkloadScheduling=true`
against the test API server (apiserver.py, which serves scheduling.k8s.io/v1beta1 PodGroups
and Workloads; the real kube-apiserver v1.25 built here has no such API and drops a pod's
spec.schedulingGroup).

The cluster: four nodes of 4 cpu in two racks (label topology.example.com/rack). Checked
through the server:
  - a gang of three 2-cpu pods with a rack constraint is bound whole within one rack, and its
    PodGroup gets PodGroupInitiallyScheduled True/Scheduled with observedGeneration 1;
  - a gang of five such pods, which no rack holds, binds nothing, and its PodGroup gets
    False/Unschedulable with "pod group is unschedulable, 0/2 placements are available, ...";
  - a gang with fewer pods than minCount binds nothing until its last pod is created, then all;
  - a pod whose PodGroup does not exist stays pending until the PodGroup is created;
  - pods are listed and watched as protobuf (spec.schedulingGroup is field 43), PodGroups as JSON
    (kube/proto/ has no message for them).

Exit 0 on success, 1 on failure.
"""

import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
import e2e_dra  # noqa: E402
from e2e import check  # noqa: E402

NS = e2e.NS
S = "/apis/scheduling.k8s.io/v1beta1/namespaces/%s/podgroups" % NS
RACK = "topology.example.com/rack"
GATES = "GenericWorkload=true,TopologyAwareWorkloadScheduling=true"


def pod_group(name, min_count=None, rack=False):
    spec = {"schedulingPolicy": {"gang": {"minCount": min_count}} if min_count else {"basic": {}}}
    if rack:
        spec["schedulingConstraints"] = {"topology": [{"key": RACK}]}
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": name},
            "spec": spec}


def member(name, group, cpu="2"):
    return e2e.pod(name, cpu=cpu, mem="64Mi", schedulingGroup={"podGroupName": group})


def pods(c):
    return {p["metadata"]["name"]: p for p in c.api.must("GET", "/api/v1/namespaces/%s/pods" % NS)["items"]}


def bound(c, names):
    """The nodes of @names once all are bound, else None."""
    ps = pods(c)
    nodes = [ps.get(n, {}).get("spec", {}).get("nodeName") for n in names]
    return nodes if all(nodes) else None


def condition(c, group):
    pg = c.api.must("GET", S + "/" + group)
    for cond in (pg.get("status") or {}).get("conditions") or []:
        if cond["type"] == "PodGroupInitiallyScheduled":
            return cond
    return None


def scenario(c):
    for i in range(4):
        rack = "rack-a" if i < 2 else "rack-b"
        c.post("/api/v1/nodes", e2e.node("node-%d" % i, 4, 16, labels={RACK: rack}))
    c.post(S, pod_group("trainers", 3, rack=True))
    c.post(S, pod_group("too-big", 5, rack=True))
    c.post(S, pod_group("short", 3))
    trainers = ["trainer-%d" % i for i in range(3)]
    for n in trainers:
        c.post("/api/v1/namespaces/%s/pods" % NS, member(n, "trainers"))
    for i in range(5):
        c.post("/api/v1/namespaces/%s/pods" % NS, member("big-%d" % i, "too-big"))
    for i in range(2):
        c.post("/api/v1/namespaces/%s/pods" % NS, member("short-%d" % i, "short", cpu="100m"))
    c.post("/api/v1/namespaces/%s/pods" % NS, member("orphan", "later", cpu="100m"))
    c.serve(extra=["--feature-gates", GATES])

    nodes = c.poll("the rack-constrained gang bound", lambda: bound(c, trainers), 30)
    racks = {"a" if n in ("node-0", "node-1") else "b" for n in nodes}
    check(len(racks) == 1, "the gang spans racks: %s" % nodes)
    cond = c.poll("trainers' condition", lambda: condition(c, "trainers"), 30)
    check(cond["status"] == "True" and cond["reason"] == "Scheduled" and cond.get("observedGeneration") == 1,
          "trainers' condition: %s" % cond)

    cond = c.poll("too-big's condition", lambda: condition(c, "too-big"), 30)
    check(cond["status"] == "False" and cond["reason"] == "Unschedulable" and
          cond["message"] == "pod group is unschedulable, 0/2 placements are available, reported placement "
                             "status: pod group is unschedulable", "too-big's condition: %s" % cond)
    ps = pods(c)
    check(not any(ps["big-%d" % i]["spec"].get("nodeName") for i in range(5)), "a pod of too-big was bound")
    check(not any(ps["short-%d" % i]["spec"].get("nodeName") for i in range(2)), "a pod of short was bound early")
    check(not ps["orphan"]["spec"].get("nodeName"), "the pod of a missing PodGroup was bound")

    c.post("/api/v1/namespaces/%s/pods" % NS, member("short-2", "short", cpu="100m"))
    c.poll("short bound once its third pod exists", lambda: bound(c, ["short-%d" % i for i in range(3)]), 30)
    c.post(S, pod_group("later"))
    c.poll("the orphan bound once its PodGroup exists", lambda: bound(c, ["orphan"]), 30)
    cond = condition(c, "too-big")
    check(cond["status"] == "False", "too-big's condition: %s" % cond)
    wire = c.api.state()["wire"]
    kinds = {}
    for key, by in wire.items():
        user, verb, resource = key.split(" ", 2)
        kind = resource.split(" ")[0].split(".")[0]
        if verb in ("LIST", "WATCH") and kind in ("pods", "podgroups"):
            kinds.setdefault(kind, set()).update(by.get("response", {}))
    check(any(t.startswith(e2e_dra.PB) for t in kinds.get("pods", ())), "pods' wire: %s" % kinds)
    check(kinds.get("podgroups") and not any(t.startswith(e2e_dra.PB) for t in kinds["podgroups"]),
          "podgroups' wire: %s" % kinds)
    print("gang: a rack-constrained gang bound whole in one rack (True/Scheduled), a gang no rack holds bound "
          "nothing (False/Unschedulable), a short gang and an orphan bound once complete")


def main():
    if len(sys.argv) != 2:
        print("usage: e2e_gang.py KSCHED", file=sys.stderr)
        return 2
    c = e2e_dra.Cluster(sys.argv[1], "gang", plain=True)
    return e2e.run_scenario(c, "gang", lambda: scenario(c))


if __name__ == "__main__":
    sys.exit(main())
