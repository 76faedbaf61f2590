#!/usr/bin/env python3
"""e2e_gang_preemption.py KSCHED - workload-aware preemption through the API:
`ksched serve --feature-gates GenericWorkload=true,WorkloadAwarePreemption=true` against the
test API server (apiserver.py serves scheduling.k8s.io/v1beta1 PodGroups).

The cluster: two nodes of 4 cpu, each running a 2-cpu pod of priority 0 and node-0 also a
1-cpu one; a gang of two 3-cpu pods at priority 1000 fits only without the 2-cpu pods. Checked
through the server:
  - the two 2-cpu pods are deleted and the 1-cpu one is kept (it fits beside a member);
  - each member is nominated (status.nominatedNodeName) and then bound to that node;
  - the PodGroup goes False/Unschedulable with "..., pod group preemption: found a placement
    for podgroup, preempting 2 victims", then True/Scheduled once the gang is bound.

Exit 0 on success, 1 on failure.
"""

import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
import e2e_dra  # noqa: E402
import e2e_gang  # noqa: E402
from e2e import check  # noqa: E402

NS = e2e.NS
PODS = "/api/v1/namespaces/%s/pods" % NS
GATES = "GenericWorkload=true,WorkloadAwarePreemption=true"


def scenario(c):
    for i in range(2):
        c.post("/api/v1/nodes", e2e.node("node-%d" % i, 4, 16))
    c.post(PODS, e2e.pod("low-a", cpu="2", mem="64Mi", nodeName="node-0", priority=0))
    c.post(PODS, e2e.pod("low-small", cpu="1", mem="64Mi", nodeName="node-0", priority=0))
    c.post(PODS, e2e.pod("low-b", cpu="2", mem="64Mi", nodeName="node-1", priority=0))
    c.post("/apis/scheduling.k8s.io/v1/priorityclasses",
           {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
            "value": 1000})
    group = e2e_gang.pod_group("trainers", 2)
    group["spec"].update(priorityClassName="high", priority=1000)
    c.post(e2e_gang.S, group)
    members = ["trainer-0", "trainer-1"]
    for n in members:
        c.post(PODS, e2e.pod(n, cpu="3", mem="64Mi", priorityClassName="high",
                             schedulingGroup={"podGroupName": "trainers"}))
    c.serve(extra=["--feature-gates", GATES])

    cond = c.poll("trainers' Unschedulable condition", lambda: e2e_gang.condition(c, "trainers"), 30)
    check(cond["status"] == "False" and cond["reason"] == "Unschedulable" and
          cond["message"].endswith(", pod group preemption: found a placement for podgroup, preempting 2 victims"),
          "trainers' condition: %s" % cond)
    nodes = c.poll("the gang bound", lambda: e2e_gang.bound(c, members), 60)
    check(sorted(nodes) == ["node-0", "node-1"], "the gang's nodes: %s" % nodes)
    ps = e2e_gang.pods(c)
    check("low-a" not in ps and "low-b" not in ps, "a victim is still there: %s" % sorted(ps))
    check(ps.get("low-small", {}).get("spec", {}).get("nodeName") == "node-0", "low-small was evicted")
    for n in members:
        nominated = ps[n].get("status", {}).get("nominatedNodeName")
        check(nominated in (None, "", ps[n]["spec"]["nodeName"]),
              "%s nominated to %s, bound to %s" % (n, nominated, ps[n]["spec"]["nodeName"]))
    cond = c.poll("trainers' Scheduled condition",
                  lambda: (lambda x: x if x and x["status"] == "True" else None)(e2e_gang.condition(c, "trainers")),
                  30)
    check(cond["reason"] == "Scheduled", "trainers' condition: %s" % cond)
    print("gang preemption: two 0-priority pods deleted, the 1-cpu one kept, the gang bound where nominated "
          "(False/Unschedulable with the preemption's message, then True/Scheduled)")


def main():
    if len(sys.argv) != 2:
        print("usage: e2e_gang_preemption.py KSCHED", file=sys.stderr)
        return 2
    c = e2e_dra.Cluster(sys.argv[1], "gang-preemption", plain=True)
    return e2e.run_scenario(c, "gang-preemption", lambda: scenario(c))


if __name__ == "__main__":
    sys.exit(main())
