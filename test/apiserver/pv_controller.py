"""pv_controller.py - what kube-controller-manager's PV controller (persistentvolume-binder)
and an external provisioner do, for the test API server (apiserver.py).

Scheduling a pod with a WaitForFirstConsumer claim ends, in a real cluster, with the
scheduler's PreBind writing the API objects and the PV controller finishing the binding;
the scheduler waits for that. This module plays the controller's part, as
pkg/controller/volume/persistentvolume/pv_controller.go does it:

  static binding   a PV whose spec.claimRef names an existing claim that is unbound (or
                   bound to this PV): the PV gets the full claimRef (uid included) and
                   status.phase Bound; the claim spec.volumeName, the annotations
                   pv.kubernetes.io/bind-completed and (when the controller set volumeName)
                   pv.kubernetes.io/bound-by-controller, and status phase Bound with the
                   PV's access modes and capacity. A PV the controller bound
                   (bound-by-controller) whose claim is bound to another PV is released:
                   claimRef removed, phase Available.
  provisioning     a claim with volume.kubernetes.io/selected-node, no volumeName, and a
                   StorageClass whose provisioner is not kubernetes.io/no-provisioner gets a
                   new PV "pvc-<claim uid>" (the claim's request and access modes, the class,
                   node affinity kubernetes.io/hostname In [the selected node],
                   pv.kubernetes.io/provisioned-by), which is then bound as above.

It runs on a thread of its own after every PV, PVC or StorageClass write (and after its
optional delay), under the server's lock, and writes as user
system:serviceaccount:kube-system:persistent-volume-binder. It is on by default;
POST /_test/pv-controller switches it:

  enabled    false: nothing is bound or provisioned (a scheduler waiting for it times out)
  delay      seconds to wait after a change before acting (a slow controller)
  steal      {"pv": NAME or "*", "claim": "NS/NAME"}: at the next update of that PV (any PV
             for "*") by someone else, another binder wins first: the PV is bound to that
             claim (claimRef, bound-by-controller) just before the request is applied, so a
             request at the old resourceVersion answers 409 Conflict

Every action is recorded in `log` (/_test/state: "pvController").
"""

import copy
import datetime
import threading
import time
import uuid

ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
ANN_BETA_CLASS = "volume.beta.kubernetes.io/storage-class"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
USER = "system:serviceaccount:kube-system:persistent-volume-binder"


def claim_ref(claim):
    """reference.GetReference of a claim: ObjectReference's fields in its order."""
    meta = claim["metadata"]
    return {"kind": "PersistentVolumeClaim", "namespace": meta["namespace"], "name": meta["name"],
            "uid": meta["uid"], "apiVersion": "v1", "resourceVersion": meta["resourceVersion"]}


def claim_class(claim):
    ann = claim["metadata"].get("annotations") or {}
    if ANN_BETA_CLASS in ann:
        return ann[ANN_BETA_CLASS]
    return (claim.get("spec") or {}).get("storageClassName") or ""


class PVController:
    def __init__(self, state, pvs, pvcs, classes):
        self.state, self.pvs, self.pvcs, self.classes = state, pvs, pvcs, classes
        self.enabled = True
        self.delay = 0.0
        self.steal = None
        self.log = []
        self.pending = False
        self.thread = None

    # ---- hooks the server calls, with its lock held ----

    def changed(self, res):
        """A write of @res: look again (the server's write notifies its lock's condition)."""
        if res.storage in (self.pvs.storage, self.pvcs.storage, self.classes.storage):
            self.pending = True

    def before_update(self, res, key, user):
        """The steal test hook: another binder takes the PV just before @user's update of it."""
        if self.steal is None or res.storage != self.pvs.storage or user == USER:
            return
        if self.steal["pv"] not in ("*", key):
            return
        steal, self.steal = self.steal, None
        pv = self.objects(self.pvs).get(key)
        claim = self.objects(self.pvcs).get(steal["claim"])
        if pv is None or claim is None:
            return
        new = copy.deepcopy(pv)
        new["spec"]["claimRef"] = claim_ref(claim)
        new["metadata"].setdefault("annotations", {})[ANN_BOUND_BY_CONTROLLER] = "yes"
        self.state.write(self.pvs, "MODIFIED", key, new, pv)
        self.record("stolen", key, steal["claim"], user=user)

    def configure(self, args):
        if "enabled" in args:
            self.enabled = bool(args["enabled"])
        if "delay" in args:
            self.delay = float(args["delay"])
        if "steal" in args:
            self.steal = args["steal"]
        self.pending = True
        self.state.lock.notify_all()
        return {"enabled": self.enabled, "delay": self.delay, "steal": self.steal}

    # ---- the controller ----

    def start(self):
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        lock = self.state.lock
        while True:
            with lock:
                while not (self.pending and self.enabled):
                    lock.wait(1.0)
            if self.delay > 0:
                time.sleep(self.delay)
            with lock:
                if self.enabled:
                    self.pending = False
                    self.sync()

    def objects(self, res):
        return self.state.store_of(res).objects

    def record(self, action, pv, claim, **extra):
        self.log.append(dict({"action": action, "pv": pv, "claim": claim, "time": time.time()}, **extra))

    def sync(self):
        for claim in sorted(self.objects(self.pvcs).values(), key=lambda c: c["metadata"]["name"]):
            self.provision(claim)
        for key in sorted(self.objects(self.pvs)):
            pv = self.objects(self.pvs).get(key)
            if pv is not None:
                self.bind_static(key, pv)

    def bind_static(self, key, pv):
        ref = (pv.get("spec") or {}).get("claimRef")
        if not ref or not ref.get("name"):
            return
        claim_key = "%s/%s" % (ref.get("namespace") or "default", ref["name"])
        claim = self.objects(self.pvcs).get(claim_key)
        if claim is None or (ref.get("uid") and ref["uid"] != claim["metadata"]["uid"]):
            return  # a claim that is gone (or was recreated): left alone here
        volume_name = (claim.get("spec") or {}).get("volumeName") or ""
        anns = pv["metadata"].get("annotations") or {}
        if volume_name and volume_name != key:
            if ANN_BOUND_BY_CONTROLLER in anns:  # unbindVolume: the claim went elsewhere
                new = copy.deepcopy(pv)
                del new["spec"]["claimRef"]
                new["metadata"]["annotations"].pop(ANN_BOUND_BY_CONTROLLER, None)
                new.setdefault("status", {})["phase"] = "Available"
                self.state.write(self.pvs, "MODIFIED", key, new, pv)
                self.record("released", key, claim_key)
            return
        self.bind(key, pv, claim_key, claim)

    def bind(self, pv_key, pv, claim_key, claim):
        new_pv = copy.deepcopy(pv)
        new_pv["spec"]["claimRef"] = dict(claim_ref(claim), resourceVersion=(pv["spec"].get("claimRef") or {})
                                          .get("resourceVersion") or claim["metadata"]["resourceVersion"])
        new_pv.setdefault("status", {})["phase"] = "Bound"
        if new_pv != pv:
            self.state.write(self.pvs, "MODIFIED", pv_key, new_pv, pv)
        new_claim = copy.deepcopy(claim)
        spec = new_claim.setdefault("spec", {})
        anns = new_claim["metadata"].setdefault("annotations", {})
        if spec.get("volumeName") != pv_key:
            spec["volumeName"] = pv_key
            anns[ANN_BOUND_BY_CONTROLLER] = "yes"
        anns[ANN_BIND_COMPLETED] = "yes"
        pv_spec = pv.get("spec") or {}
        new_claim["status"] = dict(new_claim.get("status") or {}, phase="Bound",
                                   accessModes=pv_spec.get("accessModes") or [],
                                   capacity=pv_spec.get("capacity") or {})
        if new_claim != claim:
            self.state.write(self.pvcs, "MODIFIED", claim_key, new_claim, claim)
            self.record("bound", pv_key, claim_key)

    def provision(self, claim):
        meta = claim["metadata"]
        node = (meta.get("annotations") or {}).get(ANN_SELECTED_NODE)
        if not node or (claim.get("spec") or {}).get("volumeName"):
            return
        cls = self.objects(self.classes).get(claim_class(claim))
        provisioner = (cls or {}).get("provisioner") or ""
        if not provisioner or provisioner == NO_PROVISIONER:
            return
        name = "pvc-" + meta["uid"]
        if name in self.objects(self.pvs):
            return  # provisioned already: the static binding finishes it
        spec = claim.get("spec") or {}
        request = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "1Gi")
        pv = {"apiVersion": "v1", "kind": "PersistentVolume",
              "metadata": {"name": name, "uid": str(uuid.uuid4()),
                           "creationTimestamp": datetime.datetime.now(datetime.timezone.utc)
                           .strftime("%Y-%m-%dT%H:%M:%SZ"),
                           "annotations": {ANN_PROVISIONED_BY: provisioner}},
              "spec": {"capacity": {"storage": request}, "accessModes": spec.get("accessModes") or ["ReadWriteOnce"],
                       "persistentVolumeReclaimPolicy": cls.get("reclaimPolicy") or "Delete",
                       "storageClassName": claim_class(claim), "volumeMode": spec.get("volumeMode") or "Filesystem",
                       "hostPath": {"path": "/tmp/" + name}, "claimRef": claim_ref(claim),
                       "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                           {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}},
              "status": {"phase": "Pending"}}
        pv = self.state.write(self.pvs, "ADDED", name, pv, None)
        self.record("provisioned", name, meta["namespace"] + "/" + meta["name"], node=node)
        self.bind(name, pv, meta["namespace"] + "/" + meta["name"], claim)
