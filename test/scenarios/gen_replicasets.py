#!/usr/bin/env python3
"""Write a small random cluster whose pending pods come from ReplicaSets.

Nodes are clones of a few shapes (cpu, memory, pods, zone, a taint on some), a few pods are
bound already, and 2-6 ReplicaSets each create 4-40 pods of one template, owned by the
ReplicaSet (ownerReferences) and labelled by its selector. Templates draw from what makes
decisions tie and retries matter: equal requests on equal nodes, host ports, node selectors,
tolerations, required anti-affinity, spread constraints, priorities. Some templates fit
nowhere or only partly, so the output holds Unschedulable pods and preemptions. The same
--seed writes the same file.

Usage: gen_replicasets.py --seed S [-o FILE]
"""
import argparse
import random
import sys

SHAPES = [(2, 4, 20), (4, 8, 30), (8, 16, 40), (1, 2, 8)]


def node(out, name, shape, zone, pool, taint):
    cpu, mem, pods = shape
    out.append("---\napiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n  labels:\n"
               "    kubernetes.io/hostname: %s\n    topology.kubernetes.io/zone: %s\n    pool: %s\n"
               % (name, name, zone, pool))
    if taint:
        out.append("spec:\n  taints:\n  - key: dedicated\n    value: %s\n    effect: NoSchedule\n" % pool)
    else:
        out.append("spec: {}\n")
    out.append("status:\n  allocatable:\n    cpu: '%d'\n    memory: %dGi\n    pods: '%d'\n" % (cpu, mem, pods))


def requests(r, scale):
    cpu = r.choice([100, 250, 500, 1000, 1500]) * scale
    mem = r.choice([128, 256, 512, 1024, 2048]) * scale
    return cpu, mem


def pod(out, name, labels, owner, spec_extra, cpu, mem, node=None, priority=None, port=None):
    out.append("---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: default\n" % name)
    out.append("  labels:\n")
    for k, v in labels.items():
        out.append("    %s: %s\n" % (k, v))
    if owner:
        out.append("  ownerReferences:\n  - apiVersion: apps/v1\n    kind: ReplicaSet\n    name: %s\n"
                   "    uid: %s\n    controller: true\n" % owner)
    out.append("spec:\n")
    if node:
        out.append("  nodeName: %s\n" % node)
    if priority is not None:
        out.append("  priority: %d\n" % priority)
    out.append(spec_extra)
    out.append("  containers:\n  - name: app\n    image: registry.k8s.io/pause:3.10\n"
               "    resources:\n      requests:\n        cpu: %dm\n        memory: %dMi\n" % (cpu, mem))
    if port:
        out.append("    ports:\n    - containerPort: %d\n      hostPort: %d\n" % (port, port))
    out.append("status:\n  phase: %s\n" % ("Running" if node else "Pending"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("-o", "--output")
    a = ap.parse_args()
    r = random.Random(a.seed)
    out = ["# replica-set cluster, seed %d (test/scenarios/gen_replicasets.py)\n" % a.seed]

    nodes = []
    for p in range(r.randint(1, 3)):
        shape = r.choice(SHAPES)
        taint = r.random() < 0.25
        for i in range(r.randint(3, 12)):
            name = "pool%d-%02d" % (p, i)
            zone = "zone-%s" % "abc"[i % 3]
            node(out, name, shape, zone, "p%d" % p, taint)
            nodes.append((name, "p%d" % p, taint))

    for i in range(r.randint(0, len(nodes))):
        n = r.choice(nodes)
        cpu, mem = requests(r, 1)
        pod(out, "bound-%d" % i, {"app": "old"}, None, "", cpu, mem, node=n[0],
            priority=r.choice([None, 0, 10]), port=r.choice([None, None, 8080]))

    for s in range(r.randint(2, 6)):
        rs = "rs%d" % s
        labels = {"app": rs}
        uid = "%08x-0000-4000-8000-%012x" % (a.seed & 0xffffffff, s)
        extra = ""
        pool = r.choice(nodes)[1]
        if r.random() < 0.3:
            extra += "  nodeSelector:\n    pool: %s\n" % pool
        if r.random() < 0.3:
            extra += ("  tolerations:\n  - key: dedicated\n    operator: Equal\n    value: %s\n"
                      "    effect: NoSchedule\n" % pool)
        if r.random() < 0.2:
            extra += ("  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
                      "      - labelSelector:\n          matchLabels:\n            app: %s\n"
                      "        topologyKey: kubernetes.io/hostname\n" % rs)
        if r.random() < 0.3:
            extra += ("  topologySpreadConstraints:\n  - maxSkew: %d\n    topologyKey: topology.kubernetes.io/zone\n"
                      "    whenUnsatisfiable: %s\n    labelSelector:\n      matchLabels:\n        app: %s\n"
                      % (r.randint(1, 2), r.choice(["DoNotSchedule", "ScheduleAnyway"]), rs))
        cpu, mem = requests(r, r.choice([1, 1, 2, 4]))
        port = r.choice([None, None, 8080, 9090])
        priority = r.choice([None, 0, 100, 1000])
        for i in range(r.randint(4, 40)):
            pod(out, "%s-%03d" % (rs, i), labels, (rs, uid), extra, cpu, mem, priority=priority, port=port)

    text = "".join(out)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
