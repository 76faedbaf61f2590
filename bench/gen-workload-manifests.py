#!/usr/bin/env python3
"""Write the manifests of a cluster of Deployment pods for `ksched schedule`.

bench/gen-workload-manifests.py --nodes N [--existing E] [--pending P] [--replicas R] [--no-owners] [-o FILE]

One multi-document YAML stream: N nodes as `ksched bench` generates them (cpu 32, memory
256Gi, pods 110, labels kubernetes.io/hostname=node-<i> and topology.kubernetes.io/zone=
zone-<i % 10>, Ready), then ReplicaSets of R replicas each (default 100) as the Deployment
controller makes them (deployment-<d>-<pod-template-hash>, selecting app=deployment-<d> and
the hash), then their pods: E existing ones bound (spec.nodeName: node <j % N>, status.phase
Running) and P pending ones, 100m cpu and 100Mi memory each (requests = limits), labelled as
their ReplicaSet's template and controlled by it through an ownerReference, named as the
ReplicaSet controller names them. The existing pods fill the first ceil(E / R) ReplicaSets
and the pending ones the next ceil(P / R), as new Deployments' pods arrive. --no-owners writes
the same nodes and pods without the ReplicaSets and the pods' ownerReferences, so that no
default topology spreading applies to them. Deterministic: the same flags give the same bytes.

Example (the issue's rows): 5,000 nodes, 100,000 pods bound and 10,000 pending:
  bench/gen-workload-manifests.py --nodes 5000 --existing 100000 --pending 10000 -o /tmp/rs.yaml
  build/ksched schedule --seed 1 /tmp/rs.yaml | tail -n 1
"""
import argparse
import hashlib
import json
import sys

SAFE = "bcdfghjklmnpqrstvwxz2456789"  # rand.String's and rand.SafeEncodeString's alphabet
NODE_PODS = 110


def fnv32a(text):
    h = 2166136261
    for b in text.encode():
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h


def template_hash(name):
    """The form of the Deployment controller's pod-template-hash: fnv-32a in decimal, safe-encoded."""
    return "".join(SAFE[ord(c) % len(SAFE)] for c in str(fnv32a("default/" + name)))


def uid(kind, name):
    """A version 4 UUID drawn from the object's kind and name."""
    h = hashlib.sha256(("%s/default/%s" % (kind, name)).encode()).hexdigest()
    return "%s-%s-4%s-%s%s-%s" % (h[:8], h[8:12], h[13:16], "89ab"[int(h[16], 16) & 3], h[17:20], h[20:32])


def suffix(owner, ordinal):
    """Five characters of the safe alphabet, distinct for each ordinal of one owner."""
    span = len(SAFE) ** 5
    v = (ordinal * 1000003 + fnv32a(owner)) % span
    out = []
    for _ in range(5):
        out.append(SAFE[v % len(SAFE)])
        v //= len(SAFE)
    return "".join(reversed(out))


def q(text):
    """@text as a double-quoted YAML (JSON) string: a value made only of digits (a pod-template-hash
    can be, its alphabet has seven), or one that reads as a bool or a null, stays a string."""
    return json.dumps(text)


def node(i):
    name = q("node-%d" % i)
    return ("---\napiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n  labels:\n"
            "    kubernetes.io/hostname: %s\n    topology.kubernetes.io/zone: %s\n"
            "status:\n  capacity: {cpu: \"32\", memory: 256Gi, pods: \"%d\"}\n"
            "  allocatable: {cpu: \"32\", memory: 256Gi, pods: \"%d\"}\n"
            "  conditions:\n  - {type: Ready, status: \"True\"}\n"
            % (name, name, q("zone-%d" % (i % 10)), NODE_PODS, NODE_PODS))


def labels(d, h):
    """The pod template's labels of Deployment @d's ReplicaSet, of hash @h: a flow map, every value quoted."""
    return "{app: %s, pod-template-hash: %s}" % (q("deployment-%d" % d), q(h))


def replica_set(d, rs, h, replicas):
    app = "deployment-%d" % d
    return ("---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: %s\n  namespace: default\n"
            "  uid: %s\n  labels: %s\n"
            "  ownerReferences:\n  - {apiVersion: apps/v1, kind: Deployment, name: %s, uid: %s, "
            "controller: true, blockOwnerDeletion: true}\n"
            "spec:\n  replicas: %d\n  selector:\n    matchLabels: %s\n"
            "  template:\n    metadata:\n      labels: %s\n"
            "    spec:\n      containers:\n      - name: pause\n        image: registry.k8s.io/pause:3.10\n"
            % (q(rs), q(uid("ReplicaSet", rs)), labels(d, h), q(app), q(uid("Deployment", app)), replicas,
               labels(d, h), labels(d, h)))


def pod(d, rs, h, ordinal, node_name, owners):
    name = "%s-%s" % (rs, suffix(rs, ordinal))
    out = ["---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: default\n  uid: %s\n"
           "  labels: %s\n" % (q(name), q(uid("Pod", name)), labels(d, h))]
    if owners:
        out.append("  ownerReferences:\n  - {apiVersion: apps/v1, kind: ReplicaSet, name: %s, uid: %s, "
                   "controller: true, blockOwnerDeletion: true}\n" % (q(rs), q(uid("ReplicaSet", rs))))
    out.append("spec:\n")
    if node_name is not None:
        out.append("  nodeName: %s\n" % q(node_name))
    out.append("  containers:\n  - name: pause\n    image: registry.k8s.io/pause:3.10\n"
               "    resources:\n      requests: {cpu: 100m, memory: 100Mi}\n"
               "      limits: {cpu: 100m, memory: 100Mi}\n")
    if node_name is not None:
        out.append("status:\n  phase: Running\n")
    return "".join(out)


def write(f, a):
    for i in range(a.nodes):
        f.write(node(i))
    groups = []  # (first deployment, pods, bound)
    existing_sets = -(-a.existing // a.replicas)
    groups.append((0, a.existing, True))
    groups.append((existing_sets, a.pending, False))
    sets = existing_sets + -(-a.pending // a.replicas)
    if not a.no_owners:
        for d in range(sets):
            name = "deployment-%d" % d
            f.write(replica_set(d, "%s-%s" % (name, template_hash(name)), template_hash(name), a.replicas))
    j = 0  # bound pods so far: pod j goes to node j % N
    for first, count, bound in groups:
        for k in range(count):
            d = first + k // a.replicas
            name = "deployment-%d" % d
            h = template_hash(name)
            node_name = "node-%d" % (j % a.nodes) if bound else None
            j += bound
            f.write(pod(d, "%s-%s" % (name, h), h, k % a.replicas, node_name, not a.no_owners))


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--nodes", type=int, required=True, help="nodes (cpu 32, memory 256Gi, pods 110)")
    p.add_argument("--existing", type=int, default=0, help="pods bound to the nodes (default 0)")
    p.add_argument("--pending", type=int, default=0, help="pods to schedule (default 0)")
    p.add_argument("--replicas", type=int, default=100, help="pods per ReplicaSet (default 100)")
    p.add_argument("--no-owners", action="store_true", help="no ReplicaSets and no ownerReferences")
    p.add_argument("-o", "--output", default="-", help="the file to write (default: standard output)")
    a = p.parse_args(argv)
    if a.nodes < 1 or a.existing < 0 or a.pending < 0 or a.replicas < 1:
        p.error("--nodes and --replicas must be at least 1, --existing and --pending at least 0")
    if a.existing > a.nodes * NODE_PODS:
        p.error("%d existing pods do not fit on %d nodes of %d pods" % (a.existing, a.nodes, NODE_PODS))
    if a.output == "-":
        write(sys.stdout, a)
    else:
        with open(a.output, "w") as f:
            write(f, a)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
