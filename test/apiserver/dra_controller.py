"""dra_controller.py - what kube-controller-manager's resourceclaim controller does, for the
test API server (apiserver.py).

A pod whose spec.resourceClaims name a ResourceClaimTemplate cannot be scheduled until the
controller made its claim and recorded it in the pod's status; a claim nobody uses any more
is deallocated by it. This module plays that part, as pkg/controller/resourceclaim/
controller.go does it:

  pods      for each entry of spec.resourceClaims with resourceClaimTemplateName and no
            entry of status.resourceClaimStatuses: a ResourceClaim "<pod>-<claim>-<5
            random characters>" (generateName) with the template's spec.metadata labels and
            annotations, its spec.spec, the annotation resource.kubernetes.io/pod-claim-name
            and the pod as controlling owner; then one update of the pod's status appending
            {name, resourceClaimName} for every claim made. A template that does not exist
            (yet) is looked at again when templates change.
  claims    status.reservedFor keeps the pods that exist (same uid) and are not done
            (Succeeded/Failed, or deleted before being scheduled); when that drops the last
            consumer of a claim with the finalizer resource.kubernetes.io/delete-protection,
            the same status update deallocates it (allocation and devices cleared) and the
            finalizer is removed after it; a claim being deleted with no consumer loses both
            too (and goes); a claim without consumers made for a pod that is gone, replaced or
            done is deleted (for a pod that is gone this is the garbage collector's part).
            Nothing happens to a claim nobody used yet: the scheduler's finalizer update
            before its allocation is left alone, as upstream's syncClaim acts only on the
            transition from used to unused.

It runs on a thread of its own after every write of a pod, a claim or a template (only the
objects written are looked at), under the server's lock, and writes as user
system:serviceaccount:kube-system:resource-claim-controller. It is on by default; POST
/_test/dra-controller {"enabled": false} switches it off, {"delay": seconds} slows it down.
Every action is recorded in `log` (/_test/state and /_test/dra-log: "draController").
"""

import json
import random
import threading
import time
import uuid

USER = "system:serviceaccount:kube-system:resource-claim-controller"
FINALIZER = "resource.kubernetes.io/delete-protection"
ANN_POD_CLAIM_NAME = "resource.kubernetes.io/pod-claim-name"


def clone(obj):
    """A deep copy of a JSON value (faster than copy.deepcopy)."""
    return json.loads(json.dumps(obj))


def pod_done(pod):
    """isPodDone: none of its containers runs or ever will (terminal, or deleted unscheduled)."""
    return ((pod.get("status") or {}).get("phase") in ("Succeeded", "Failed") or
            bool(pod["metadata"].get("deletionTimestamp")) and not (pod.get("spec") or {}).get("nodeName"))


def owning_pod(claim):
    for ref in claim["metadata"].get("ownerReferences") or []:
        if ref.get("controller") and ref.get("kind") == "Pod" and ref.get("apiVersion") == "v1":
            return ref.get("name"), ref.get("uid")
    return None, None


class DRAController:
    def __init__(self, state, pods, claims, templates):
        self.state, self.pods, self.claims, self.templates = state, pods, claims, templates
        self.enabled = True
        self.delay = 0.0
        self.log = []
        self.dirty_pods = set()
        self.dirty_claims = set()
        self.waiting = {}  # template key -> pod keys waiting for it
        self.thread = None

    # ---- hooks the server calls, with its lock held ----

    def changed(self, res, key, obj, prev):
        """A write of @res at @key (obj None: deleted): look at what it concerns."""
        if res.storage == self.pods.storage:
            self.dirty_pods.add(key)
            # the claims reserved for a pod that went away, or made for it
            old = obj if obj is not None else prev
            if obj is None or pod_done(obj):
                ns = old["metadata"]["namespace"]
                for st in (old.get("status") or {}).get("resourceClaimStatuses") or []:
                    if st.get("resourceClaimName"):
                        self.dirty_claims.add(ns + "/" + st["resourceClaimName"])
                for pc in (old.get("spec") or {}).get("resourceClaims") or []:
                    if pc.get("resourceClaimName"):
                        self.dirty_claims.add(ns + "/" + pc["resourceClaimName"])
        elif res.storage == self.claims.storage:
            if obj is not None:
                self.dirty_claims.add(key)
        elif res.storage == self.templates.storage:
            self.dirty_pods.update(self.waiting.pop(key, ()))

    def configure(self, args):
        if "enabled" in args:
            self.enabled = bool(args["enabled"])
        if "delay" in args:
            self.delay = float(args["delay"])
        self.state.lock.notify_all()
        return {"enabled": self.enabled, "delay": self.delay}

    # ---- the controller ----

    def start(self):
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        lock = self.state.lock
        while True:
            with lock:
                while not ((self.dirty_pods or self.dirty_claims) and self.enabled):
                    lock.wait(1.0)
            if self.delay > 0:
                time.sleep(self.delay)
            with lock:
                if not self.enabled:
                    continue
                pods, self.dirty_pods = self.dirty_pods, set()
                claims, self.dirty_claims = self.dirty_claims, set()
                for key in sorted(pods):
                    self.sync_pod(key)
                for key in sorted(claims | self.dirty_claims):
                    self.dirty_claims.discard(key)
                    self.sync_claim(key)

    def write(self, res, typ, key, obj, prev):
        """A write as this controller's user (the server's claim log names it)."""
        saved, self.state.current_user = self.state.current_user, USER
        try:
            return self.state.write(res, typ, key, obj, prev)
        finally:
            self.state.current_user = saved

    def objects(self, res):
        return self.state.store_of(res).objects

    def record(self, action, **what):
        self.log.append(dict({"action": action, "time": time.time(), "rv": self.state.rv}, **what))

    def sync_pod(self, key):
        pod = self.objects(self.pods).get(key)
        if pod is None or pod_done(pod) or pod["metadata"].get("deletionTimestamp"):
            return
        ns = pod["metadata"]["namespace"]
        have = {s.get("name") for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []}
        made = []
        for pc in (pod.get("spec") or {}).get("resourceClaims") or []:
            tname = pc.get("resourceClaimTemplateName")
            if not tname or pc.get("name") in have:
                continue
            template = self.objects(self.templates).get(ns + "/" + tname)
            if template is None:
                self.waiting.setdefault(ns + "/" + tname, set()).add(key)
                continue
            made.append({"name": pc["name"], "resourceClaimName": self.make_claim(pod, pc["name"], template)})
        if not made:
            return
        new = clone(pod)
        status = new.setdefault("status", {})
        status["resourceClaimStatuses"] = (status.get("resourceClaimStatuses") or []) + made
        self.write(self.pods, "MODIFIED", key, new, pod)
        self.record("pod-status", pod=key, claims=[m["resourceClaimName"] for m in made])

    def make_claim(self, pod, claim_name, template):
        ns, pod_name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        prefix = "%s-%s-" % (pod_name[:28], claim_name[:28]) if len(pod_name) + len(claim_name) > 57 else \
            "%s-%s-" % (pod_name, claim_name)
        store = self.objects(self.claims)
        while True:
            name = prefix + "".join(random.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5))
            if ns + "/" + name not in store:
                break
        tmeta = (template.get("spec") or {}).get("metadata") or {}
        meta = {"name": name, "namespace": ns, "uid": str(uuid.uuid4()),
                "creationTimestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "annotations": dict(tmeta.get("annotations") or {}, **{ANN_POD_CLAIM_NAME: claim_name}),
                "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod_name,
                                     "uid": pod["metadata"]["uid"], "controller": True,
                                     "blockOwnerDeletion": True}]}
        if tmeta.get("labels"):
            meta["labels"] = dict(tmeta["labels"])
        claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta,
                 "spec": clone((template.get("spec") or {}).get("spec") or {})}
        self.write(self.claims, "ADDED", ns + "/" + name, claim, None)
        self.record("claim-created", claim=ns + "/" + name, pod=ns + "/" + pod_name)
        return name

    def valid_consumer(self, ns, ref):
        if ref.get("resource") != "pods" or ref.get("apiGroup"):
            return True  # not a pod: not this controller's to judge
        pod = self.objects(self.pods).get(ns + "/" + (ref.get("name") or ""))
        return pod is not None and pod["metadata"]["uid"] == ref.get("uid") and not pod_done(pod)

    def sync_claim(self, key):
        """syncClaim: drop the reservations of pods gone, replaced or done; on the transition to
        no consumer deallocate a claim with the finalizer and remove the finalizer; a claim
        being deleted with no consumer loses allocation and finalizer; a claim without
        consumers made for a pod that is gone, replaced or done is deleted (the garbage
        collector's part, for a pod that is gone)."""
        claim = self.objects(self.claims).get(key)
        if claim is None:
            return
        ns = claim["metadata"]["namespace"]
        status = claim.get("status") or {}
        reserved = status.get("reservedFor") or []
        valid = [r for r in reserved if self.valid_consumer(ns, r)]
        has_finalizer = FINALIZER in (claim["metadata"].get("finalizers") or [])
        deleting = bool(claim["metadata"].get("deletionTimestamp"))
        if len(valid) < len(reserved) or (has_finalizer and deleting and not valid):
            deallocate = not valid and has_finalizer and status.get("allocation") is not None
            if len(valid) < len(reserved) or deallocate:
                new = clone(claim)
                st = new.setdefault("status", {})
                if valid:
                    st["reservedFor"] = valid
                else:
                    st.pop("reservedFor", None)
                if deallocate:
                    st.pop("allocation", None)
                    st.pop("devices", None)
                if not st:
                    del new["status"]
                claim = self.write(self.claims, "MODIFIED", key, new, claim)
                self.record("deallocated" if deallocate else "unreserved", claim=key,
                            dropped=[r.get("uid") for r in reserved if r not in valid])
            if has_finalizer and (claim.get("status") or {}).get("allocation") is None:
                new = clone(claim)
                new["metadata"]["finalizers"] = [f for f in new["metadata"]["finalizers"] if f != FINALIZER]
                if not new["metadata"]["finalizers"]:
                    del new["metadata"]["finalizers"]
                if deleting and not new["metadata"].get("finalizers"):
                    self.write(self.claims, "DELETED", key, None, claim)
                    self.record("finalizer-removed-deleted", claim=key)
                    return
                claim = self.write(self.claims, "MODIFIED", key, new, claim)
                self.record("finalizer-removed", claim=key)
        if valid or deleting:
            return
        pod_name, pod_uid = owning_pod(claim)
        if pod_name is None:
            return
        pod = self.objects(self.pods).get(ns + "/" + pod_name)
        if pod is None or pod["metadata"]["uid"] != pod_uid or pod_done(pod):
            if claim["metadata"].get("finalizers"):
                new = clone(claim)
                new["metadata"]["deletionTimestamp"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
                new["metadata"]["deletionGracePeriodSeconds"] = 0
                self.write(self.claims, "MODIFIED", key, new, claim)
                self.dirty_claims.add(key)  # then the finalizer goes (the branch above)
            else:
                self.write(self.claims, "DELETED", key, None, claim)
            self.record("claim-deleted", claim=key, pod=ns + "/" + pod_name)
