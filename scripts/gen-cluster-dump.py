#!/usr/bin/env python3
"""Write a synthetic cluster dump in the shape `kubectl get nodes,pods -A -o yaml` prints.

One `kind: List` whose items carry what a live cluster's objects carry: metadata with uid,
resourceVersion, creationTimestamp, generateName, ownerReferences and managedFields; nodes with
addresses, capacity/allocatable, conditions, images, nodeInfo, some taints; pods from
Deployments (ReplicaSet owners), DaemonSets (one per node for each DaemonSet, with the
matchFields node affinity the DaemonSet controller sets), StatefulSets (persistentVolumeClaim
volumes whose claims the dump lacks, as `nodes,pods` dumps do), finished Job pods, and pending
pods (a few naming claims the dump lacks too). Keys are sorted and strings quoted as kubectl's
YAML printer does. Deterministic for a given --seed.

Usage: gen-cluster-dump.py --nodes N --pods M [--pending N] [--seed S] [-o FILE]
  --pods counts every pod, bound, pending and finished; --pending defaults to 1% of them.
"""
import argparse
import random
import sys

ZONES = ["us-east-1a", "us-east-1b", "us-east-1c"]
TYPES = [("m5.xlarge", 4, 16), ("m5.2xlarge", 8, 32), ("c5.4xlarge", 16, 32), ("r5.2xlarge", 8, 64)]
IMAGES = [
    ("registry.k8s.io/kube-proxy", "v1.30.2", 29035454),
    ("docker.io/calico/node", "v3.27.3", 115238612),
    ("docker.io/calico/cni", "v3.27.3", 94512840),
    ("registry.k8s.io/pause", "3.9", 321520),
    ("docker.io/library/nginx", "1.25.4", 70544635),
    ("docker.io/library/redis", "7.2.4", 48264592),
    ("quay.io/prometheus/node-exporter", "v1.8.0", 11683352),
    ("registry.k8s.io/coredns/coredns", "v1.11.1", 18182961),
    ("docker.io/library/postgres", "16.2", 153291232),
    ("ghcr.io/example/api-server", "2024.05.1", 212849024),
    ("ghcr.io/example/worker", "2024.05.1", 187211776),
    ("ghcr.io/example/frontend", "2024.05.1", 96212480),
]
TS = '"2024-05-0{d}T{h:02d}:{m:02d}:{s:02d}Z"'


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.rv = 1000000
        self.used = set()

    def uid(self):
        h = "%032x" % self.r.getrandbits(128)
        return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])

    def suffix(self, n=5):
        """A random name suffix, as generateName's, never the same twice."""
        while True:
            sfx = "".join(self.r.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(n))
            if sfx not in self.used:
                self.used.add(sfx)
                return sfx

    def digest(self):
        return "sha256:%064x" % self.r.getrandbits(256)

    def ts(self):
        return TS.format(d=self.r.randint(1, 9), h=self.r.randint(0, 23), m=self.r.randint(0, 59),
                         s=self.r.randint(0, 59))

    def version(self):
        self.rv += self.r.randint(1, 50)
        return '"%d"' % self.rv


def control_nodes(nnodes):
    """How many of the first nodes are control-plane nodes (tainted NoSchedule)."""
    return min(3, nnodes // 10)


def node(g, i, nnodes, out):
    name = "node-%05d" % i
    zone = ZONES[i % len(ZONES)]
    itype, cpu, mem_gi = TYPES[i % len(TYPES)]
    ip = "10.%d.%d.%d" % (i >> 16 & 255, i >> 8 & 255, i & 255)
    created = g.ts()
    control = i < control_nodes(nnodes)
    w = out.write
    w("- apiVersion: v1\n  kind: Node\n  metadata:\n    annotations:\n")
    w("      alpha.kubernetes.io/provided-node-ip: %s\n" % ip)
    w("      kubeadm.alpha.kubernetes.io/cri-socket: unix:///var/run/containerd/containerd.sock\n")
    w('      node.alpha.kubernetes.io/ttl: "0"\n')
    w('      volumes.kubernetes.io/controller-managed-attach-detach: "true"\n')
    w("    creationTimestamp: %s\n    labels:\n" % created)
    w("      beta.kubernetes.io/arch: amd64\n      beta.kubernetes.io/instance-type: %s\n" % itype)
    w("      beta.kubernetes.io/os: linux\n      failure-domain.beta.kubernetes.io/region: us-east-1\n")
    w("      failure-domain.beta.kubernetes.io/zone: %s\n      kubernetes.io/arch: amd64\n" % zone)
    w("      kubernetes.io/hostname: %s\n      kubernetes.io/os: linux\n" % name)
    if control:
        w('      node-role.kubernetes.io/control-plane: ""\n')
        w('      node.kubernetes.io/exclude-from-external-load-balancers: ""\n')
    w("      node.kubernetes.io/instance-type: %s\n" % itype)
    w("      topology.kubernetes.io/region: us-east-1\n      topology.kubernetes.io/zone: %s\n" % zone)
    w("    managedFields:\n")
    w("    - apiVersion: v1\n      fieldsType: FieldsV1\n      fieldsV1:\n        f:metadata:\n")
    w("          f:annotations:\n            .: {}\n            f:kubeadm.alpha.kubernetes.io/cri-socket: {}\n")
    w("            f:volumes.kubernetes.io/controller-managed-attach-detach: {}\n          f:labels:\n")
    w("            .: {}\n            f:beta.kubernetes.io/arch: {}\n            f:beta.kubernetes.io/os: {}\n")
    w("            f:kubernetes.io/arch: {}\n            f:kubernetes.io/hostname: {}\n")
    w("            f:kubernetes.io/os: {}\n      manager: kubelet\n      operation: Update\n")
    w("      time: %s\n" % created)
    w("    - apiVersion: v1\n      fieldsType: FieldsV1\n      fieldsV1:\n        f:metadata:\n")
    w("          f:annotations:\n            f:node.alpha.kubernetes.io/ttl: {}\n        f:spec:\n")
    w("          f:podCIDR: {}\n          f:podCIDRs:\n            .: {}\n            v:\"10.244.%d.0/24\": {}\n"
      % (i & 255))
    w("      manager: kube-controller-manager\n      operation: Update\n      time: %s\n" % created)
    w("    - apiVersion: v1\n      fieldsType: FieldsV1\n      fieldsV1:\n        f:status:\n")
    w("          f:conditions:\n            k:{\"type\":\"DiskPressure\"}:\n              f:lastHeartbeatTime: {}\n")
    w("            k:{\"type\":\"MemoryPressure\"}:\n              f:lastHeartbeatTime: {}\n")
    w("            k:{\"type\":\"PIDPressure\"}:\n              f:lastHeartbeatTime: {}\n")
    w("            k:{\"type\":\"Ready\"}:\n              f:lastHeartbeatTime: {}\n")
    w("              f:lastTransitionTime: {}\n              f:message: {}\n              f:reason: {}\n")
    w("              f:status: {}\n          f:images: {}\n          f:nodeInfo:\n")
    w("            f:bootID: {}\n      manager: kubelet\n      operation: Update\n")
    w("      subresource: status\n      time: %s\n" % g.ts())
    w("    name: %s\n    resourceVersion: %s\n    uid: %s\n" % (name, g.version(), g.uid()))
    w("  spec:\n    podCIDR: 10.244.%d.0/24\n    podCIDRs:\n    - 10.244.%d.0/24\n" % (i & 255, i & 255))
    w("    providerID: aws:///%s/i-%017x\n" % (zone, g.r.getrandbits(68)))
    if control:
        w("    taints:\n    - effect: NoSchedule\n      key: node-role.kubernetes.io/control-plane\n")
    elif i % 50 == 7:
        w("    taints:\n    - effect: NoSchedule\n      key: dedicated\n      value: gpu\n")
    alloc_cpu = cpu * 1000 - 80
    mem_ki = mem_gi * 1024 * 1024
    w("  status:\n    addresses:\n    - address: %s\n      type: InternalIP\n" % ip)
    w("    - address: %s\n      type: Hostname\n" % name)
    w("    allocatable:\n      cpu: %dm\n      ephemeral-storage: \"95491281146\"\n" % alloc_cpu)
    w('      hugepages-1Gi: "0"\n      hugepages-2Mi: "0"\n      memory: %dKi\n' % (mem_ki - 500000))
    w('      pods: "110"\n    capacity:\n      cpu: "%d"\n      ephemeral-storage: 103615580Ki\n' % cpu)
    w('      hugepages-1Gi: "0"\n      hugepages-2Mi: "0"\n      memory: %dKi\n      pods: "110"\n' % mem_ki)
    w("    conditions:\n")
    hb, tr = g.ts(), created
    for typ, reason, msg in (("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                             ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                             ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available")):
        w("    - lastHeartbeatTime: %s\n      lastTransitionTime: %s\n      message: %s\n" % (hb, tr, msg))
        w('      reason: %s\n      status: "False"\n      type: %s\n' % (reason, typ))
    w("    - lastHeartbeatTime: %s\n      lastTransitionTime: %s\n" % (hb, tr))
    w('      message: kubelet is posting ready status\n      reason: KubeletReady\n      status: "True"\n')
    w("      type: Ready\n    daemonEndpoints:\n      kubeletEndpoint:\n        Port: 10250\n    images:\n")
    for repo, tag, size in g.r.sample(IMAGES, g.r.randint(4, len(IMAGES))):
        w("    - names:\n      - %s@%s\n      - %s:%s\n      sizeBytes: %d\n" % (repo, g.digest(), repo, tag, size))
    w("    nodeInfo:\n      architecture: amd64\n      bootID: %s\n" % g.uid())
    w("      containerRuntimeVersion: containerd://1.7.13\n      kernelVersion: 6.1.0-21-cloud-amd64\n")
    w("      kubeProxyVersion: v1.30.2\n      kubeletVersion: v1.30.2\n      machineID: %032x\n"
      % g.r.getrandbits(128))
    w("      operatingSystem: linux\n      osImage: Debian GNU/Linux 12 (bookworm)\n")
    w("      systemUUID: %s\n" % g.uid())


def pod(g, p, out):
    """@p: dict with name, namespace, owner (kind, name), node (or None), image, cpu, mem,
    phase, labels, claim, priority (class, value), daemon (node name for the DS affinity)."""
    w = out.write
    created = g.ts()
    api_mount = "kube-api-access-%s" % g.suffix()
    w("- apiVersion: v1\n  kind: Pod\n  metadata:\n")
    if p["owner"][0] == "StatefulSet":
        w("    annotations:\n      kubectl.kubernetes.io/restartedAt: \"2024-05-01T09:00:00Z\"\n")
    w("    creationTimestamp: %s\n" % created)
    if p["generate"]:
        w("    generateName: %s\n" % p["generate"])
    w("    labels:\n")
    for k, v in p["labels"]:
        w("      %s: %s\n" % (k, v))
    w("    managedFields:\n")
    w("    - apiVersion: v1\n      fieldsType: FieldsV1\n      fieldsV1:\n        f:metadata:\n")
    if p["generate"]:
        w("          f:generateName: {}\n")
    w("          f:labels:\n            .: {}\n")
    for k, _ in p["labels"]:
        w("            f:%s: {}\n" % k)
    w("          f:ownerReferences:\n            .: {}\n            k:{\"uid\":\"%s\"}: {}\n" % p["owner_uid"])
    w("        f:spec:\n          f:containers:\n            k:{\"name\":\"%s\"}:\n" % p["container"])
    w("              .: {}\n              f:image: {}\n              f:imagePullPolicy: {}\n")
    w("              f:name: {}\n              f:resources:\n                .: {}\n")
    w("                f:limits:\n                  .: {}\n                  f:cpu: {}\n")
    w("                  f:memory: {}\n                f:requests:\n                  .: {}\n")
    w("                  f:cpu: {}\n                  f:memory: {}\n")
    w("              f:terminationMessagePath: {}\n              f:terminationMessagePolicy: {}\n")
    w("          f:dnsPolicy: {}\n          f:enableServiceLinks: {}\n          f:restartPolicy: {}\n")
    w("          f:schedulerName: {}\n          f:securityContext: {}\n")
    w("          f:terminationGracePeriodSeconds: {}\n")
    w("      manager: kube-controller-manager\n      operation: Update\n      time: %s\n" % created)
    if p["node"]:
        w("    - apiVersion: v1\n      fieldsType: FieldsV1\n      fieldsV1:\n        f:status:\n")
        w("          f:conditions:\n            k:{\"type\":\"ContainersReady\"}:\n")
        w("              .: {}\n              f:lastProbeTime: {}\n              f:lastTransitionTime: {}\n")
        w("              f:status: {}\n              f:type: {}\n            k:{\"type\":\"Ready\"}:\n")
        w("              .: {}\n              f:lastProbeTime: {}\n              f:lastTransitionTime: {}\n")
        w("              f:status: {}\n              f:type: {}\n          f:containerStatuses: {}\n")
        w("          f:hostIP: {}\n          f:hostIPs: {}\n          f:phase: {}\n          f:podIP: {}\n")
        w("          f:podIPs:\n            .: {}\n            k:{\"ip\":\"%s\"}:\n" % p["ip"])
        w("              .: {}\n              f:ip: {}\n          f:startTime: {}\n")
        w("      manager: kubelet\n      operation: Update\n      subresource: status\n      time: %s\n" % g.ts())
    w("    name: %s\n    namespace: %s\n    ownerReferences:\n" % (p["name"], p["namespace"]))
    w("    - apiVersion: %s\n      blockOwnerDeletion: true\n      controller: true\n"
      % ("batch/v1" if p["owner"][0] == "Job" else "apps/v1"))
    w("      kind: %s\n      name: %s\n      uid: %s\n" % (p["owner"][0], p["owner"][1], p["owner_uid"]))
    w("    resourceVersion: %s\n    uid: %s\n" % (g.version(), g.uid()))
    w("  spec:\n")
    if p["daemon"]:
        w("    affinity:\n      nodeAffinity:\n        requiredDuringSchedulingIgnoredDuringExecution:\n")
        w("          nodeSelectorTerms:\n          - matchFields:\n            - key: metadata.name\n")
        w("              operator: In\n              values:\n              - %s\n" % p["daemon"])
    w("    containers:\n    - image: %s\n      imagePullPolicy: IfNotPresent\n" % p["image"])
    w("      name: %s\n" % p["container"])
    if p["port"]:
        w("      ports:\n      - containerPort: %d\n        name: http\n        protocol: TCP\n" % p["port"])
    w("      resources:\n        limits:\n          cpu: %dm\n          memory: %dMi\n"
      % (p["cpu"] * 2, p["mem"] * 2))
    w("        requests:\n          cpu: %dm\n          memory: %dMi\n" % (p["cpu"], p["mem"]))
    w("      terminationMessagePath: /dev/termination-log\n      terminationMessagePolicy: File\n")
    w("      volumeMounts:\n")
    if p["claim"]:
        w("      - mountPath: /data\n        name: data\n")
    w("      - mountPath: /var/run/secrets/kubernetes.io/serviceaccount\n        name: %s\n" % api_mount)
    w("        readOnly: true\n    dnsPolicy: ClusterFirst\n    enableServiceLinks: true\n")
    if p["node"]:
        w("    nodeName: %s\n" % p["node"])
    w("    preemptionPolicy: PreemptLowerPriority\n    priority: %d\n" % p["priority"][1])
    if p["priority"][0]:
        w("    priorityClassName: %s\n" % p["priority"][0])
    w("    restartPolicy: %s\n    schedulerName: default-scheduler\n"
      % ("Never" if p["owner"][0] == "Job" else "Always"))
    w("    securityContext: {}\n    serviceAccount: default\n    serviceAccountName: default\n")
    w("    terminationGracePeriodSeconds: 30\n    tolerations:\n")
    if p["daemon"]:
        w("    - effect: NoSchedule\n      operator: Exists\n")
    w("    - effect: NoExecute\n      key: node.kubernetes.io/not-ready\n      operator: Exists\n")
    w("      tolerationSeconds: 300\n    - effect: NoExecute\n      key: node.kubernetes.io/unreachable\n")
    w("      operator: Exists\n      tolerationSeconds: 300\n    volumes:\n")
    if p["claim"]:
        w("    - name: data\n      persistentVolumeClaim:\n        claimName: %s\n" % p["claim"])
    w("    - name: %s\n      projected:\n        defaultMode: 420\n        sources:\n" % api_mount)
    w("        - serviceAccountToken:\n            expirationSeconds: 3607\n            path: token\n")
    w("        - configMap:\n            items:\n            - key: ca.crt\n              path: ca.crt\n")
    w("            name: kube-root-ca.crt\n        - downwardAPI:\n            items:\n")
    w("            - fieldRef:\n                apiVersion: v1\n                fieldPath: metadata.namespace\n")
    w("              path: namespace\n")
    w("  status:\n")
    if not p["node"]:
        w("    conditions:\n    - lastProbeTime: null\n      lastTransitionTime: %s\n" % g.ts())
        # the last FailedScheduling message, folded as kubectl's YAML printer folds long strings
        n, c = p["nnodes"], control_nodes(p["nnodes"])
        if c:
            w("      message: '0/%d nodes are available: %d node(s) had untolerated taint {node-role.kubernetes.io/control-plane:\n"
              % (n, c))
            w("        }, %d Insufficient cpu. preemption: 0/%d nodes are available: %d Preemption is\n" % (n - c, n, c))
            w("        not helpful for scheduling, %d No preemption victims found for incoming pod.'\n" % (n - c))
        else:
            w("      message: '0/%d nodes are available: %d Insufficient cpu. preemption: 0/%d nodes are\n" % (n, n, n))
            w("        available: %d No preemption victims found for incoming pod.'\n" % n)
        w('      reason: Unschedulable\n      status: "False"\n      type: PodScheduled\n')
        w("    phase: Pending\n    qosClass: Burstable\n")
        return
    done = p["phase"] == "Succeeded"
    started = g.ts()
    w("    conditions:\n")
    for typ in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"):
        ok = "True" if typ in ("Initialized", "PodScheduled") or not done else "False"
        w("    - lastProbeTime: null\n      lastTransitionTime: %s\n" % started)
        if done and typ in ("Ready", "ContainersReady"):
            w("      reason: PodCompleted\n")
        w('      status: "%s"\n      type: %s\n' % (ok, typ))
    w("    containerStatuses:\n    - containerID: containerd://%064x\n" % g.r.getrandbits(256))
    w("      image: %s\n      imageID: %s@%s\n" % (p["image"], p["image"].split(":")[0], g.digest()))
    w("      lastState: {}\n      name: %s\n      ready: %s\n      restartCount: %d\n"
      % (p["container"], "false" if done else "true", g.r.choice((0, 0, 0, 1, 2))))
    w("      started: %s\n      state:\n" % ("false" if done else "true"))
    if done:
        w("        terminated:\n          containerID: containerd://%064x\n" % g.r.getrandbits(256))
        w("          exitCode: 0\n          finishedAt: %s\n          reason: Completed\n" % g.ts())
        w("          startedAt: %s\n" % started)
    else:
        w("        running:\n          startedAt: %s\n" % started)
    w("    hostIP: %s\n    hostIPs:\n    - ip: %s\n" % (p["host_ip"], p["host_ip"]))
    w("    phase: %s\n    podIP: %s\n    podIPs:\n    - ip: %s\n" % (p["phase"], p["ip"], p["ip"]))
    w("    qosClass: Burstable\n    startTime: %s\n" % started)


def plan_pods(g, nodes, npods, npending):
    """Yield pod dicts: DaemonSet pods first (two per node while the budget lasts), then
    Deployment, StatefulSet and Job pods spread over the nodes, then the pending ones."""
    nnodes = len(nodes)
    node_ip = lambda i: "10.%d.%d.%d" % (i >> 16 & 255, i >> 8 & 255, i & 255)
    nbound = npods - npending
    ds_per_node = 2 if nbound >= 4 * nnodes else (1 if nbound >= 2 * nnodes else 0)
    made = 0
    ds = [("kube-proxy", "kube-system", "registry.k8s.io/kube-proxy:v1.30.2", 100, 64),
          ("calico-node", "kube-system", "docker.io/calico/node:v3.27.3", 250, 128)]
    ds_uid = [g.uid() for _ in ds]
    podip = 0

    def base(**kw):
        nonlocal podip
        podip += 1
        d = dict(generate=None, port=None, claim=None, daemon=None, phase="Running",
                 priority=(None, 0), nnodes=nnodes, ip="10.244.%d.%d" % (podip >> 8 & 255, podip & 255))
        d.update(kw)
        return d

    for k in range(ds_per_node):
        name, ns, image, cpu, mem = ds[k]
        for i, n in enumerate(nodes):
            if made >= nbound:
                break
            sfx = g.suffix()
            made += 1
            yield base(name="%s-%s" % (name, sfx), namespace=ns, owner=("DaemonSet", name), owner_uid=ds_uid[k],
                       generate=name + "-", node=n, host_ip=node_ip(i), image=image, container=name,
                       cpu=cpu, mem=mem, labels=[("controller-revision-hash", "6c5d8b7f9"), ("k8s-app", name),
                                                 ("pod-template-generation", '"1"')],
                       priority=("system-node-critical", 2000001000), daemon=n)
    apps = ["api", "worker", "frontend", "cache", "search", "billing", "auth", "events"]
    namespaces = ["default", "shop", "payments", "search", "platform"]
    rs = {}
    i = 0
    while made < nbound:
        ni = g.r.randrange(control_nodes(nnodes), nnodes)
        kind = g.r.random()
        app = apps[i % len(apps)]
        ns = namespaces[i % len(namespaces)]
        i += 1
        made += 1
        if kind < 0.08:  # StatefulSet pod with a claim the dump lacks
            sts = "%s-db" % app
            ordinal = i
            yield base(name="%s-%d" % (sts, ordinal), namespace=ns, owner=("StatefulSet", sts),
                       owner_uid=rs.setdefault((ns, sts), g.uid()), node=nodes[ni], host_ip=node_ip(ni),
                       image="docker.io/library/postgres:16.2", container="postgres", cpu=500, mem=1024,
                       labels=[("app", sts), ("apps.kubernetes.io/pod-index", '"%d"' % ordinal),
                               ("controller-revision-hash", "%s-7b9c6d5f4" % sts),
                               ("statefulset.kubernetes.io/pod-name", "%s-%d" % (sts, ordinal))],
                       claim="data-%s-%d" % (sts, ordinal), priority=("high-priority", 1000000), port=5432)
        elif kind < 0.11:  # a finished Job pod
            job = "%s-report-%d" % (app, i // 100)
            yield base(name="%s-%s" % (job, g.suffix()), namespace=ns, owner=("Job", job),
                       owner_uid=rs.setdefault((ns, job), g.uid()), generate=job + "-", node=nodes[ni],
                       host_ip=node_ip(ni), image="ghcr.io/example/worker:2024.05.1", container="report",
                       cpu=200, mem=256, labels=[("batch.kubernetes.io/job-name", job), ("job-name", job)],
                       phase="Succeeded")
        else:  # a Deployment's pod
            rs_name = "%s-%s" % (app, "7d4b9c8f5d")
            yield base(name="%s-%s" % (rs_name, g.suffix()), namespace=ns, owner=("ReplicaSet", rs_name),
                       owner_uid=rs.setdefault((ns, rs_name), g.uid()), generate=rs_name + "-", node=nodes[ni],
                       host_ip=node_ip(ni), image="ghcr.io/example/%s:2024.05.1" % (
                           "api-server" if app == "api" else "worker" if app == "worker" else "frontend"),
                       container=app, cpu=g.r.choice((50, 100, 250)),
                       mem=g.r.choice((64, 128, 256)), labels=[("app", app), ("pod-template-hash", "7d4b9c8f5d")],
                       port=8080, priority=(None, 0) if g.r.random() < 0.7 else ("high-priority", 1000000))
    for k in range(npending):
        app = apps[k % len(apps)]
        ns = namespaces[k % len(namespaces)]
        if k % 10 == 9:  # a StatefulSet pod waiting for a claim the dump lacks
            sts = "%s-db" % app
            yield base(name="%s-pending-%d" % (sts, k), namespace=ns, owner=("StatefulSet", sts),
                       owner_uid=rs.setdefault((ns, sts), g.uid()), node=None, host_ip=None,
                       image="docker.io/library/postgres:16.2", container="postgres", cpu=500, mem=1024,
                       labels=[("app", sts)], claim="data-%s-pending-%d" % (sts, k),
                       priority=("high-priority", 1000000), port=5432)
        else:
            rs_name = "%s-%s" % (app, "5f6e7d8c9b")
            yield base(name="%s-%s" % (rs_name, g.suffix()), namespace=ns, owner=("ReplicaSet", rs_name),
                       owner_uid=rs.setdefault((ns, rs_name), g.uid()), generate=rs_name + "-", node=None,
                       host_ip=None, image="ghcr.io/example/frontend:2024.05.1", container=app,
                       cpu=g.r.choice((100, 250, 500, 1000)), mem=g.r.choice((128, 256, 512)),
                       labels=[("app", app), ("pod-template-hash", "5f6e7d8c9b")], port=8080,
                       priority=(None, 0) if k % 3 else ("high-priority", 1000000))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, required=True)
    ap.add_argument("--pods", type=int, required=True)
    ap.add_argument("--pending", type=int, default=None)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--output", default="-")
    a = ap.parse_args()
    if a.nodes < 1 or a.pods < 0:
        sys.exit("gen-cluster-dump.py: --nodes must be positive and --pods not negative")
    pending = a.pods // 100 if a.pending is None else min(a.pending, a.pods)
    out = sys.stdout if a.output == "-" else open(a.output, "w", buffering=1 << 20)
    g = Gen(a.seed)
    names = ["node-%05d" % i for i in range(a.nodes)]
    out.write("apiVersion: v1\nitems:\n")
    for i in range(a.nodes):
        node(g, i, a.nodes, out)
    for p in plan_pods(g, names, a.pods, pending):
        pod(g, p, out)
    out.write('kind: List\nmetadata:\n  resourceVersion: ""\n')
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
