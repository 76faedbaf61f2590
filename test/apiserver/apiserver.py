#!/usr/bin/env python3
"""apiserver.py - an in-memory kube-apiserver for the resources a scheduler uses.

A stand-in for kube-apiserver v1.22 in end-to-end tests of `ksched serve` (no real
kube-apiserver can be installed here). It speaks the real wire protocol over HTTP/1.1 or
TLS: JSON bodies, metav1.Status errors, LIST with limit/continue, chunked WATCH streams
with resourceVersions, bookmarks and 410 Gone, the pods/binding and status subresources,
strategic-merge, merge and JSON patches, optimistic concurrency, Events (core/v1 and
events.k8s.io/v1 on one storage) and Leases.

What it mirrors (behaviour, not code) from kubernetes/kubernetes:
  - staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go: create/update/
    delete, AlreadyExists/NotFound/Conflict Status objects, resourceVersion preconditions.
  - staging/src/k8s.io/apiserver/pkg/storage/cacher: watch from a resourceVersion, "too old
    resource version" as an ERROR event carrying a 410 Expired Status, bookmarks, objects
    leaving a selector delivered as DELETED.
  - staging/src/k8s.io/apiserver/pkg/storage/etcd3: continue tokens (base64 JSON holding the
    list's revision and the next key), 410 Expired for a token older than the compaction.
  - pkg/registry/core/pod/storage/storage.go: BindingREST (name check, target validation,
    409 "pod X is already assigned to node Y", PodScheduled=True on success).
  - pkg/registry/core/pod/strategy.go, pkg/apis/core/v1/defaults.go and the Priority and
    NamespaceLifecycle admission plugins: status reset to Pending on create, the defaults
    that matter to scheduling (requests from limits, schedulerName, priority).

Invariants: one lock guards all state; every write takes the next value of one global
resourceVersion counter; objects are never mutated after they are stored (a write stores a
new dict), so an event log entry and a list snapshot can share them without copying.

resource.k8s.io/v1 (DeviceClasses, ResourceSlices, ResourceClaims, ResourceClaimTemplates) is
served with the claim strategy's rules (pkg/registry/resource/resourceclaim/strategy.go and
pkg/apis/resource/validation), and dra_controller.py plays kube-controller-manager's
resourceclaim controller; `--disable-group resource.k8s.io` serves none of it, as
kube-apiserver before v1.34.

Test control lives under /_test/ (no authentication): state dump, breaking watch streams,
outages (the process down and back), stalled and failed requests,
compaction, injected binding conflicts, bad watch events. See Handler.test_* below.
"""

import argparse
import base64
import bisect
import copy
import datetime
import json
import os
import random
import re
import socket
import ssl
import struct
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dra_controller  # noqa: E402
import k8sproto  # noqa: E402
import pv_controller  # noqa: E402

# application/vnd.kubernetes.protobuf for the kinds of ksched's kube/proto/*.proto
PROTO = k8sproto.Schema()

# ---------------------------------------------------------------------------------------
# Errors as metav1.Status


class ApiError(Exception):
    """A failed request: the metav1.Status the server answers with."""

    def __init__(self, code, reason, message, details=None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    def status(self):
        return status_object(self.code, self.reason, self.message, self.details)


def status_object(code, reason, message, details=None):
    st = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
          "message": message, "reason": reason, "code": code}
    if details is not None:
        st["details"] = details
    if not reason:
        del st["reason"]
    return st


def success_status(code):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": code}


def qualified(res):
    return res.resource if not res.group else res.resource + "." + res.group


def not_found(res, name):
    return ApiError(404, "NotFound", '%s "%s" not found' % (qualified(res), name),
                    {"name": name, "group": res.group, "kind": res.resource})


def already_exists(res, name):
    return ApiError(409, "AlreadyExists", '%s "%s" already exists' % (qualified(res), name),
                    {"name": name, "group": res.group, "kind": res.resource})


def conflict(resource_name, group, name, why):
    q = resource_name if not group else resource_name + "." + group
    return ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": %s' % (q, name, why),
                    {"name": name, "group": group, "kind": resource_name})


MODIFIED_MSG = "the object has been modified; please apply your changes to the latest version and try again"


def invalid(res, kind, name, causes):
    """422 Invalid; causes: list of (field, message)."""
    msg = "; ".join("%s: %s" % (f, m) for f, m in causes)
    return ApiError(422, "Invalid", '%s "%s" is invalid: %s' % (kind, name, msg),
                    {"name": name, "group": res.group, "kind": kind,
                     "causes": [{"reason": "FieldValueInvalid", "message": m, "field": f} for f, m in causes]})


def bad_request(message):
    return ApiError(400, "BadRequest", message)


def expired(message):
    return ApiError(410, "Expired", message)


CONTINUE_EXPIRED = ("The provided continue parameter is too old to display a consistent list result. "
                    "You can start a new list without the continue parameter, or use the continue token "
                    "in this response to retrieve the remainder of the results. Continuing with the provided "
                    "token results in an inconsistent list - objects that were created, modified, or deleted "
                    "between the time the first chunk was returned and now may show up in the list.")

# ---------------------------------------------------------------------------------------
# Small helpers


def now_rfc3339():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def now_micro():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


TIME_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$")
DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def check_subdomain(value):
    if len(value) > 253:
        return "must be no more than 253 characters"
    if not DNS1123_SUBDOMAIN.match(value):
        return ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                "and must start and end with an alphanumeric character")
    return None


def check_label(value):
    if len(value) > 63:
        return "must be no more than 63 characters"
    if not DNS1123_LABEL.match(value):
        return ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                "and must start and end with an alphanumeric character")
    return None


def strict_json(data):
    """Parse a request body: one JSON object, no NaN/Infinity, valid UTF-8."""
    def no_constant(name):
        raise ValueError("invalid character '%s' looking for beginning of value" % name[0])
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise bad_request("invalid UTF-8 in request body: %s" % e)
    try:
        obj = json.loads(text, parse_constant=no_constant)
    except ValueError as e:
        raise bad_request("couldn't get version/kind; json parse error: %s" % e)
    if not isinstance(obj, dict):
        raise bad_request("couldn't get version/kind; json parse error: json: cannot unmarshal %s into Go value "
                          "of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; "
                          "Kind string \"json:\\\"kind,omitempty\\\"\" }" % type(obj).__name__)
    return obj


def dumps(obj):
    return json.dumps(obj, separators=(",", ":"))


def clone(obj):
    """A deep copy of a JSON value (stored objects are): through the C encoder and decoder,
    several times faster than copy.deepcopy, which the writes of a large test spend most in."""
    return json.loads(json.dumps(obj))


# Go's json decoder rejects a value of the wrong type for a typed field; these are the
# ObjectMeta fields every request carries.
META_TYPES = {"name": str, "namespace": str, "generateName": str, "uid": str, "resourceVersion": str,
              "labels": dict, "annotations": dict, "ownerReferences": list, "finalizers": list,
              "generation": int, "deletionGracePeriodSeconds": int}


def check_meta_types(kind, obj):
    meta = obj.get("metadata")
    if meta is None:
        return
    if not isinstance(meta, dict):
        raise bad_request("json: cannot unmarshal %s into Go struct field %s.metadata of type v1.ObjectMeta"
                          % (json_type(meta), kind))
    for key, typ in META_TYPES.items():
        val = meta.get(key)
        if val is None:
            continue
        if not isinstance(val, typ) or (typ is int and isinstance(val, bool)):
            raise bad_request("json: cannot unmarshal %s into Go struct field ObjectMeta.metadata.%s of type %s"
                              % (json_type(val), key, {str: "string", dict: "map[string]string",
                                                       list: "[]", int: "int64"}[typ]))
        if typ is dict:
            for k, v in val.items():
                if not isinstance(v, str):
                    raise bad_request("json: cannot unmarshal %s into Go struct field ObjectMeta.metadata.%s "
                                      "of type string" % (json_type(v), key))


def json_type(v):
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "null"


# ---------------------------------------------------------------------------------------
# Selectors (k8s.io/apimachinery/pkg/labels and pkg/fields)


def parse_label_selector(text):
    """A predicate over a labels dict; raises ApiError on a malformed selector."""
    if not text:
        return lambda labels: True
    reqs = []
    i, n = 0, len(text)
    parts = []
    depth, start = 0, 0
    for i in range(n):  # split on commas outside parentheses
        c = text[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    for part in parts:
        p = part.strip()
        m = re.match(r"^([A-Za-z0-9./_-]+)\s+(in|notin)\s+\(([^)]*)\)$", p)
        if m:
            vals = {v.strip() for v in m.group(3).split(",") if v.strip()}
            key, op = m.group(1), m.group(2)
            reqs.append((key, op, vals))
            continue
        m = re.match(r"^([A-Za-z0-9./_-]+)\s*(==|!=|=)\s*([A-Za-z0-9._-]*)$", p)
        if m:
            key, op, val = m.group(1), m.group(2), m.group(3)
            reqs.append((key, "!=" if op == "!=" else "=", {val}))
            continue
        m = re.match(r"^(!?)([A-Za-z0-9./_-]+)$", p)
        if m:
            reqs.append((m.group(2), "!" if m.group(1) else "exists", set()))
            continue
        raise bad_request("unable to parse requirement: invalid label selector: %r" % p)

    def match(labels):
        labels = labels or {}
        for key, op, vals in reqs:
            has = key in labels
            if op == "=" and not (has and labels[key] in vals):
                return False
            if op == "!=" and has and labels[key] in vals:
                return False
            if op == "in" and not (has and labels[key] in vals):
                return False
            if op == "notin" and has and labels[key] in vals:
                return False
            if op == "exists" and not has:
                return False
            if op == "!" and has:
                return False
        return True
    return match


def parse_field_selector(text, res):
    """A predicate over an object using the resource's selectable fields (GetAttrs)."""
    if not text:
        return lambda obj: True
    reqs = []
    for part in text.split(","):
        m = re.match(r"^([A-Za-z0-9.]+)\s*(==|!=|=)\s*(.*)$", part.strip())
        if not m:
            raise bad_request("invalid selector: '%s'; can't understand '%s'" % (text, part))
        field, op, val = m.group(1), m.group(2), m.group(3)
        if field not in res.fields:
            raise bad_request('"%s" is not a known field selector: only "%s"' %
                              (field, '", "'.join(sorted(res.fields))))
        reqs.append((res.fields[field], op != "!=", val))

    def match(obj):
        for getter, eq, val in reqs:
            if (getter(obj) == val) != eq:
                return False
        return True
    return match


def dig(obj, *path):
    for p in path:
        if not isinstance(obj, dict):
            return ""
        obj = obj.get(p)
    if obj is None:
        return ""
    if isinstance(obj, bool):
        return "true" if obj else "false"
    return str(obj)


META_FIELDS = {"metadata.name": lambda o: dig(o, "metadata", "name"),
               "metadata.namespace": lambda o: dig(o, "metadata", "namespace")}


def fields(**extra):
    f = dict(META_FIELDS)
    for k, path in extra.items():
        f[k.replace("__", ".")] = (lambda p: lambda o: dig(o, *p))(tuple(path.split(".")))
    return f

# ---------------------------------------------------------------------------------------
# Patches


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            result.pop(k, None)
        else:
            result[k] = merge_patch(result.get(k), v)
    return result


# patchMergeKey per list field (by JSON path with list positions removed), from the
# `patchStrategy:"merge" patchMergeKey:"..."` tags of k8s.io/api core/v1 and meta/v1. Lists
# not named here are replaced as a whole, as the strategic merge patch does for lists
# without a patch strategy. "" marks a merged list of primitives (finalizers).
SMP_MERGE_KEYS = {
    "metadata.ownerReferences": "uid",
    "metadata.finalizers": "",
    "spec.containers": "name",
    "spec.initContainers": "name",
    "spec.ephemeralContainers": "name",
    "spec.containers.ports": "containerPort",
    "spec.initContainers.ports": "containerPort",
    "spec.containers.env": "name",
    "spec.initContainers.env": "name",
    "spec.containers.volumeMounts": "mountPath",
    "spec.initContainers.volumeMounts": "mountPath",
    "spec.containers.volumeDevices": "devicePath",
    "spec.volumes": "name",
    "spec.imagePullSecrets": "name",
    "spec.hostAliases": "ip",
    "spec.topologySpreadConstraints": "topologyKey",
    "spec.taints": "key",
    "status.conditions": "type",
    "status.addresses": "type",
    "status.containerStatuses": "name",
    "status.initContainerStatuses": "name",
    "status.ephemeralContainerStatuses": "name",
    "status.podIPs": "ip",
    "status.images": "",
    "status.reservedFor": "uid",  # resource.k8s.io ResourceClaimStatus
}


def strategic_merge_patch(target, patch, path=""):
    """Strategic merge patch (k8s.io/apimachinery/pkg/util/strategicpatch) for maps and the
    merge-keyed lists above, with the $patch, $setElementOrder, $retainKeys and
    $deleteFromPrimitiveList directives."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    directive = patch.get("$patch")
    if directive == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if directive == "delete":
        return None
    if directive is not None:
        raise bad_request("Unknown patch type: %s" % directive)
    result = dict(target) if isinstance(target, dict) else {}
    retain = patch.get("$retainKeys")
    orders = {}
    for k, v in patch.items():
        if k in ("$patch", "$retainKeys"):
            continue
        if k.startswith("$setElementOrder/"):
            orders[k[len("$setElementOrder/"):]] = v
            continue
        if k.startswith("$deleteFromPrimitiveList/"):
            field = k[len("$deleteFromPrimitiveList/"):]
            if isinstance(result.get(field), list) and isinstance(v, list):
                result[field] = [x for x in result[field] if x not in v]
            continue
        if k.startswith("$"):
            raise bad_request("unknown patch directive %s" % k)
        sub = path + "." + k if path else k
        if v is None:
            result.pop(k, None)
        elif isinstance(v, list) and sub in SMP_MERGE_KEYS:
            result[k] = merge_list(result.get(k) or [], v, SMP_MERGE_KEYS[sub], sub)
        elif isinstance(v, dict):
            merged = strategic_merge_patch(result.get(k), v, sub)
            if merged is None:
                result.pop(k, None)
            else:
                result[k] = merged
        else:
            result[k] = copy.deepcopy(v)
    for field, order in orders.items():
        key = SMP_MERGE_KEYS.get(path + "." + field if path else field)
        if isinstance(result.get(field), list) and isinstance(order, list) and key is not None:
            result[field] = reorder(result[field], order, key)
    if isinstance(retain, list):
        result = {k: v for k, v in result.items() if k in retain}
    return result


def merge_list(old, patch, key, path):
    if key == "":  # a set of primitives: union, old order first
        out = list(old)
        for v in patch:
            if isinstance(v, dict):
                continue
            if v not in out:
                out.append(v)
        return out
    out = [copy.deepcopy(x) for x in old]
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            raise bad_request("map: %s does not contain declared merge key: %s" % (dumps(item), key))
        idx = next((i for i, x in enumerate(out) if isinstance(x, dict) and x.get(key) == item[key]), None)
        if item.get("$patch") == "delete":
            if idx is not None:
                del out[idx]
            continue
        if item.get("$patch") == "replace":
            rep = {k: v for k, v in item.items() if k != "$patch"}
            if idx is None:
                out.append(rep)
            else:
                out[idx] = rep
            continue
        if idx is None:
            out.append(strategic_merge_patch({}, item, path))
        else:
            out[idx] = strategic_merge_patch(out[idx], item, path)
    return out


def reorder(items, order, key):
    if key == "":
        pos = {v: i for i, v in enumerate(order)}
    else:
        pos = {o.get(key): i for i, o in enumerate(order) if isinstance(o, dict)}

    def rank(item):
        k = item if key == "" else (item.get(key) if isinstance(item, dict) else None)
        return pos.get(k, len(pos))
    return sorted(items, key=rank)


def json_patch(target, ops):
    """RFC 6902 JSON patch."""
    if not isinstance(ops, list):
        raise bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    doc = copy.deepcopy(target)

    def split(ptr):
        if ptr == "":
            return []
        if not ptr.startswith("/"):
            raise ApiError(422, "Invalid", "invalid JSON pointer %r" % ptr)
        return [p.replace("~1", "/").replace("~0", "~") for p in ptr[1:].split("/")]

    def walk(parts):
        cur = doc
        for p in parts[:-1]:
            if isinstance(cur, list):
                cur = cur[int(p)]
            elif isinstance(cur, dict) and p in cur:
                cur = cur[p]
            else:
                raise ApiError(422, "Invalid", "the server rejected our request due to an error in our request: "
                               "doc is missing path: %s" % "/".join(parts))
        return cur, parts[-1]

    def get(ptr):
        parts = split(ptr)
        if not parts:
            return doc
        cont, last = walk(parts)
        try:
            return cont[int(last)] if isinstance(cont, list) else cont[last]
        except (KeyError, IndexError, ValueError):
            raise ApiError(422, "Invalid", "doc is missing path: %s" % ptr)

    def add(ptr, value):
        cont, last = walk(split(ptr))
        if isinstance(cont, list):
            cont.insert(len(cont) if last == "-" else int(last), value)
        else:
            cont[last] = value

    def remove(ptr):
        cont, last = walk(split(ptr))
        try:
            if isinstance(cont, list):
                del cont[int(last)]
            else:
                del cont[last]
        except (KeyError, IndexError, ValueError):
            raise ApiError(422, "Invalid", "doc is missing path: %s" % ptr)

    for op in ops:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise bad_request("invalid JSON patch operation: %s" % dumps(op))
        kind, ptr = op["op"], op["path"]
        if kind == "add":
            add(ptr, copy.deepcopy(op.get("value")))
        elif kind == "remove":
            remove(ptr)
        elif kind == "replace":
            get(ptr)
            remove(ptr)
            add(ptr, copy.deepcopy(op.get("value")))
        elif kind == "test":
            if get(ptr) != op.get("value"):
                raise ApiError(422, "Invalid", "testing value %s failed" % ptr)
        elif kind in ("move", "copy"):
            val = copy.deepcopy(get(op.get("from", "")))
            if kind == "move":
                remove(op["from"])
            add(ptr, val)
        else:
            raise bad_request("Unexpected kind: %s" % kind)
    return doc

# ---------------------------------------------------------------------------------------
# Resources


class Resource:
    def __init__(self, group, version, resource, kind, namespaced, storage=None, subresources=(),
                 fields_=None, require_rv=False, short=None):
        self.group = group
        self.version = version
        self.resource = resource
        self.kind = kind
        self.namespaced = namespaced
        self.storage = storage or (group + "/" + resource)  # resources sharing a storage share objects
        self.subresources = subresources
        self.fields = fields_ or dict(META_FIELDS)
        self.require_rv = require_rv  # AllowUnconditionalUpdate() == false

    @property
    def api_version(self):
        return self.group + "/" + self.version if self.group else self.version

    @property
    def base(self):
        return "/apis/" + self.group + "/" + self.version if self.group else "/api/" + self.version


POD_FIELDS = fields(spec__nodeName="spec.nodeName", spec__restartPolicy="spec.restartPolicy",
                    spec__schedulerName="spec.schedulerName", spec__serviceAccountName="spec.serviceAccountName",
                    status__phase="status.phase", status__podIP="status.podIP",
                    status__nominatedNodeName="status.nominatedNodeName")
NODE_FIELDS = fields(spec__unschedulable="spec.unschedulable")
EVENT_FIELDS = fields(involvedObject__kind="involvedObject.kind", involvedObject__namespace="involvedObject.namespace",
                      involvedObject__name="involvedObject.name", involvedObject__uid="involvedObject.uid",
                      reason="reason", type="type", reportingComponent="reportingComponent")

RESOURCES = [
    Resource("", "v1", "nodes", "Node", False, subresources=("status",), fields_=NODE_FIELDS),
    Resource("", "v1", "pods", "Pod", True, subresources=("status", "binding"), fields_=POD_FIELDS),
    Resource("", "v1", "namespaces", "Namespace", False, subresources=("status",),
             fields_=fields(status__phase="status.phase")),
    Resource("", "v1", "services", "Service", True, subresources=("status",)),
    Resource("", "v1", "replicationcontrollers", "ReplicationController", True, subresources=("status",)),
    Resource("", "v1", "persistentvolumes", "PersistentVolume", False, subresources=("status",)),
    Resource("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, subresources=("status",)),
    Resource("", "v1", "events", "Event", True, storage="events", fields_=EVENT_FIELDS),
    Resource("events.k8s.io", "v1", "events", "Event", True, storage="events", fields_=EVENT_FIELDS),
    Resource("storage.k8s.io", "v1", "storageclasses", "StorageClass", False),
    Resource("storage.k8s.io", "v1", "csinodes", "CSINode", False),
    Resource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, subresources=("status",)),
    Resource("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False),
    Resource("scheduling.k8s.io", "v1beta1", "podgroups", "PodGroup", True, subresources=("status",)),
    Resource("scheduling.k8s.io", "v1beta1", "workloads", "Workload", True),
    Resource("apps", "v1", "replicasets", "ReplicaSet", True, subresources=("status",)),
    Resource("apps", "v1", "statefulsets", "StatefulSet", True, subresources=("status",)),
    Resource("coordination.k8s.io", "v1", "leases", "Lease", True, require_rv=True),
    Resource("resource.k8s.io", "v1", "deviceclasses", "DeviceClass", False),
    Resource("resource.k8s.io", "v1", "resourceslices", "ResourceSlice", False,
             fields_=fields(spec__nodeName="spec.nodeName", spec__driver="spec.driver")),
    Resource("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim", True, subresources=("status",)),
    Resource("resource.k8s.io", "v1", "resourceclaimtemplates", "ResourceClaimTemplate", True),
]
BY_PATH = {(r.group, r.version, r.resource): r for r in RESOURCES}
# create-only reviews (Handler.review), not stored
TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"


# events.k8s.io/v1 <-> core/v1 Event field names (the two versions share one storage,
# kept in the core/v1 shape as the real server keeps the internal type).
EVENT_RENAMES = [("regarding", "involvedObject"), ("note", "message"), ("deprecatedSource", "source"),
                 ("deprecatedFirstTimestamp", "firstTimestamp"), ("deprecatedLastTimestamp", "lastTimestamp"),
                 ("deprecatedCount", "count"), ("reportingController", "reportingComponent")]


def event_to_storage(res, obj):
    if res.group != "events.k8s.io":
        return obj
    out = dict(obj)
    for new, old in EVENT_RENAMES:
        if new in out:
            out[old] = out.pop(new)
    out["apiVersion"], out["kind"] = "v1", "Event"
    return out


def event_from_storage(res, obj):
    if res.group != "events.k8s.io":
        return obj
    out = dict(obj)
    for new, old in EVENT_RENAMES:
        if old in out:
            out[new] = out.pop(old)
    out["apiVersion"], out["kind"] = "events.k8s.io/v1", "Event"
    return out


class ObjectStore:
    """The objects of one storage, keyed "ns/name" (namespaced) or "name", and the log of
    changes kept for watches and consistent list pages."""

    def __init__(self):
        self.objects = {}
        self.log = []  # (rv, type, key, obj, prev)
        self.log_rvs = []
        self.compacted_max = 0  # the highest rv of an event dropped from the log
        self.sorted_keys = None  # sorted(objects), kept until a key comes or goes
        self.snapshots = {}  # rv -> (objects, sorted keys) as they were then: continued lists

    def record(self, rv, typ, key, obj, prev):
        self.log.append((rv, typ, key, obj, prev))
        self.log_rvs.append(rv)
        if typ != "MODIFIED":
            self.sorted_keys = None

    def keys_sorted(self):
        if self.sorted_keys is None:
            self.sorted_keys = sorted(self.objects)
        return self.sorted_keys

    def snapshot(self, rv):
        """(objects, sorted keys) as they were at @rv, for every page of a list at @rv (the
        log must hold every change after it)."""
        if not self.since(rv):
            return self.objects, self.keys_sorted()
        if rv not in self.snapshots:
            while len(self.snapshots) >= 4:
                del self.snapshots[min(self.snapshots)]
            objects = self.state_at(rv)
            self.snapshots[rv] = (objects, sorted(objects))
        return self.snapshots[rv]

    def compact(self, floor):
        i = bisect.bisect_right(self.log_rvs, floor)
        if i:
            self.compacted_max = max(self.compacted_max, self.log_rvs[i - 1])
            del self.log[:i]
            del self.log_rvs[:i]

    def since(self, rv):
        return self.log[bisect.bisect_right(self.log_rvs, rv):]

    def state_at(self, rv):
        """The objects as they were at @rv (the log must hold every change after it)."""
        state = dict(self.objects)
        for erv, typ, key, obj, prev in reversed(self.since(rv)):
            if typ == "ADDED":
                state.pop(key, None)
            else:
                state[key] = prev
        return state

# ---------------------------------------------------------------------------------------
# The server state


SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
SYSTEM_PRIORITY_CLASSES = (("system-node-critical", 2000001000, "Used for system critical pods that must not be "
                            "moved from their current node."),
                           ("system-cluster-critical", 2000000000, "Used for system critical pods that must run "
                            "in the cluster, but can be moved to another node if necessary."))


class State:
    def __init__(self, opts):
        self.opts = opts
        self.lock = threading.Condition(threading.RLock())
        self.rv = 100
        self.current_user = None  # who makes the write in progress (claim_log)
        self.stores = {}
        for r in RESOURCES:
            self.stores.setdefault(r.storage, ObjectStore())
        self.floor = 0  # compaction: lists and watches older than this answer 410
        self.checkpoints = []  # (monotonic time, rv) for time-based compaction
        self.break_gen = 0  # bumped to end every watch stream
        self.break_mode = "clean"
        self.break_resource = None
        self.watchers = set()
        self.bindings = []  # every binding attempt
        self.lease_log = []  # every lease write
        self.requests = {}  # "VERB resource[/sub]" -> count
        # "USER VERB resource[/sub]" -> {"request"|"response": {media type: count}}
        self.wire = {}
        self.conflicts = {}  # "ns/name" -> bindings left to answer 409
        self.steals = {}  # "ns/name" -> node to bind first as another scheduler ("" = another node)
        self.watch_410 = "event"  # "event" (ERROR event, as the watch cache) or "status" (HTTP 410)
        self.bookmark_interval = opts.bookmark_interval
        self.bookmarks = True  # /_test/config can stop them (to keep a watcher's RV behind a compaction)
        self.watch_log = []  # every watch request: resource, resourceVersion asked, how it started
        # every list request: resource, limit, continued or not, resourceVersion, user, time, status code
        self.list_log = []
        self.expire_continue = 0  # answer the next N continued lists 410 Expired (a test hook)
        self.pod_termination = None  # seconds a deleted bound pod stays terminating; None: deleted at once
        self.faults = []  # injected failures: method, path regex, code or stall, left, hits, matched
        self.outages = []  # /_test/outage: start and end (time.time()) of each, the end None while down
        self.access_reviews = []  # every SubjectAccessReview: user, groups, path, verb, allowed
        self.rv0_full_list = True  # resourceVersion=0 lists come from the watch cache: no paging
        # events a watcher may have waiting to be sent (the cacher's channel); beyond it the
        # server ends the stream (0: unbounded)
        self.watch_buffer = opts.watch_buffer
        self.slow_watchers_closed = 0
        # binds and provisions volumes as kube-controller-manager would (pv_controller.py)
        self.pv_controller = pv_controller.PVController(
            self, BY_PATH[("", "v1", "persistentvolumes")], BY_PATH[("", "v1", "persistentvolumeclaims")],
            BY_PATH[("storage.k8s.io", "v1", "storageclasses")])
        # makes claims from templates and deallocates unused ones, as kube-controller-manager would
        self.dra_controller = dra_controller.DRAController(
            self, BY_PATH[("", "v1", "pods")], BY_PATH[("resource.k8s.io", "v1", "resourceclaims")],
            BY_PATH[("resource.k8s.io", "v1", "resourceclaimtemplates")])
        self.claim_log = []  # every ResourceClaim write: what /_test/dra-log answers
        self.claim_interference = 0  # the next N claim updates by a client meet another writer first
        for ns in SYSTEM_NAMESPACES:
            self.create(BY_PATH[("", "v1", "namespaces")], None, {"apiVersion": "v1", "kind": "Namespace",
                                                                 "metadata": {"name": ns}}, "system:apiserver")
        for name, value, desc in SYSTEM_PRIORITY_CLASSES:
            self.create(BY_PATH[("scheduling.k8s.io", "v1", "priorityclasses")], None,
                        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                         "metadata": {"name": name}, "value": value, "description": desc,
                         "preemptionPolicy": "PreemptLowerPriority"}, "system:apiserver")

    # ---- storage primitives (lock held) ----

    def next_rv(self):
        self.rv += 1
        return self.rv

    def store_of(self, res):
        return self.stores[res.storage]

    @staticmethod
    def key(res, ns, name):
        return ns + "/" + name if res.namespaced else name

    def write(self, res, typ, key, obj, prev):
        rv = self.next_rv()
        st = self.store_of(res)
        if obj is not None:
            obj = dict(obj)
            obj["metadata"] = dict(obj["metadata"], resourceVersion=str(rv))
            st.objects[key] = obj
        else:
            # a deleted object is reported with the resourceVersion of its deletion
            obj = dict(prev)
            obj["metadata"] = dict(prev["metadata"], resourceVersion=str(rv))
            del st.objects[key]
        st.record(rv, typ, key, obj, prev)
        now = time.monotonic()
        if not self.checkpoints or now - self.checkpoints[-1][0] >= 1.0:
            self.checkpoints.append((now, rv))
        if res.storage == "resource.k8s.io/resourceclaims":
            self.log_claim(rv, typ, key, obj)
        self.pv_controller.changed(res)
        self.dra_controller.changed(res, key, obj if typ != "DELETED" else None, prev)
        self.lock.notify_all()
        return obj

    def log_claim(self, rv, typ, key, obj):
        """One entry of claim_log: the claim's devices allocated (driver/pool/device) and
        consumers (pod uids) after the write @rv, or none after its deletion."""
        status = (obj.get("status") or {}) if typ != "DELETED" else {}
        alloc = status.get("allocation")
        devices = None if alloc is None else sorted(
            "%s/%s/%s" % (r.get("driver"), r.get("pool"), r.get("device")) for r in
            ((alloc.get("devices") or {}).get("results") or []))
        self.claim_log.append({"rv": rv, "type": typ, "claim": key, "uid": obj["metadata"].get("uid"),
                               "devices": devices,
                               "reservedFor": [r.get("uid") for r in status.get("reservedFor") or []],
                               "finalizers": list(obj["metadata"].get("finalizers") or []) if typ != "DELETED" else [],
                               "deleting": bool(obj["metadata"].get("deletionTimestamp")),
                               "user": self.current_user, "time": time.time()})

    def interfere(self, res, key, user):
        """The claim-interference test hook: another writer changes the claim (an annotation)
        just before @user's update of it, so an update at the version @user read answers 409."""
        if (self.claim_interference <= 0 or res.storage != "resource.k8s.io/resourceclaims" or
                user == dra_controller.USER):
            return
        old = self.store_of(res).objects.get(key)
        if old is None:
            return
        self.claim_interference -= 1
        new = clone(old)
        anns = new["metadata"].setdefault("annotations", {})
        anns["e2e.ksched.io/touched"] = str(int(anns.get("e2e.ksched.io/touched", "0")) + 1)
        saved, self.current_user = self.current_user, "other-writer"
        self.write(res, "MODIFIED", key, new, old)
        self.current_user = saved

    def compact(self, floor):
        self.floor = max(self.floor, floor)
        for st in self.stores.values():
            st.compact(self.floor)
        self.lock.notify_all()

    def compact_by_age(self):
        limit = time.monotonic() - self.opts.compaction_seconds
        floor = None
        while self.checkpoints and self.checkpoints[0][0] < limit:
            floor = self.checkpoints.pop(0)[1]
        if floor is not None:
            self.compact(floor)

    def namespace_exists(self, ns):
        return ns in self.stores["/namespaces"].objects

    def count(self, verb, res, sub=None):
        k = "%s %s%s" % (verb, qualified(res), "/" + sub if sub else "")
        self.requests[k] = self.requests.get(k, 0) + 1

    # ---- verbs ----

    def get(self, res, ns, name):
        with self.lock:
            obj = self.store_of(res).objects.get(self.key(res, ns, name))
            if obj is None:
                raise not_found(res, name)
            return obj

    def create(self, res, ns, obj, user):
        with self.lock:
            obj = clone(obj)
            meta = obj.setdefault("metadata", {})
            if meta is None:
                meta = obj["metadata"] = {}
            if res.namespaced:
                if meta.get("namespace") and meta["namespace"] != ns:
                    raise bad_request("the namespace of the provided object does not match the namespace sent "
                                      "on the request")
                meta["namespace"] = ns
                if not self.namespace_exists(ns):
                    raise ApiError(404, "NotFound", 'namespaces "%s" not found' % ns,
                                   {"name": ns, "kind": "namespaces"})
            else:
                meta.pop("namespace", None)
            if not meta.get("name") and meta.get("generateName"):
                meta["name"] = meta["generateName"] + "".join(random.choice("bcdfghjklmnpqrstvwxz2456789")
                                                              for _ in range(5))
            name = meta.get("name") or ""
            if not name:
                raise invalid(res, res.kind, "", [("metadata.name",
                                                   "Required value: name or generateName is required")])
            err = check_label(name) if res.resource == "namespaces" else check_subdomain(name)
            if err:
                raise invalid(res, res.kind, name, [("metadata.name", 'Invalid value: "%s": %s' % (name, err))])
            key = self.key(res, ns, name)
            if key in self.store_of(res).objects:
                raise already_exists(res, name)
            for f in ("resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields"):
                meta.pop(f, None)
            meta["uid"] = str(uuid.uuid4())
            meta["creationTimestamp"] = now_rfc3339()
            obj["apiVersion"], obj["kind"] = res.api_version if res.storage != "events" else "v1", res.kind
            PREPARE_CREATE.get(res.storage, lambda s, o: None)(self, obj)
            VALIDATE.get(res.storage, lambda r, o: None)(res, obj)
            track_fields(obj, user, "Update", res.api_version)
            self.current_user = user
            out = self.write(res, "ADDED", key, obj, None)
            if res.resource == "leases":
                self.log_lease("create", out, user)
            return out

    def update(self, res, ns, name, obj, user, sub=None, mutate=None):
        """PUT (obj given) or PATCH (mutate(old) -> new) of the object or its status."""
        with self.lock:
            key = self.key(res, ns, name)
            self.pv_controller.before_update(res, key, user)
            self.interfere(res, key, user)
            old = self.store_of(res).objects.get(key)
            if old is None:
                raise not_found(res, name)
            if mutate is not None:
                obj = mutate(clone(old))
                if not isinstance(obj, dict):
                    raise bad_request("the patch turned the object into a %s" % json_type(obj))
                meta = obj.get("metadata") or {}
                pinned = meta.get("resourceVersion")
                if pinned is not None and pinned != old["metadata"]["resourceVersion"]:
                    raise conflict(res.resource, res.group, name, MODIFIED_MSG)
            else:
                obj = clone(obj)
            check_meta_types(res.kind, obj)
            meta = obj.get("metadata") or {}
            if meta.get("name", name) != name:
                raise bad_request("the name of the object (%s) does not match the name on the URL (%s)"
                                  % (meta.get("name"), name))
            if res.namespaced and meta.get("namespace", ns) != ns:
                raise bad_request("the namespace of the provided object does not match the namespace sent on "
                                  "the request")
            rv = meta.get("resourceVersion")
            if not rv and mutate is None and res.require_rv:
                raise invalid(res, res.kind, name, [("metadata.resourceVersion",
                                                     "Invalid value: 0x0: must be specified for an update")])
            if rv and rv != old["metadata"]["resourceVersion"]:
                raise conflict(res.resource, res.group, name, MODIFIED_MSG)
            # immutable metadata comes from the stored object
            new_meta = dict(meta, resourceVersion=old["metadata"]["resourceVersion"])
            for f in ("uid", "creationTimestamp", "namespace", "name", "deletionTimestamp", "generateName"):
                if f in old["metadata"]:
                    new_meta[f] = old["metadata"][f]
                else:
                    new_meta.pop(f, None)
            if "managedFields" not in new_meta and "managedFields" in old["metadata"]:
                new_meta["managedFields"] = old["metadata"]["managedFields"]  # omitted: kept
            obj["metadata"] = new_meta
            obj["apiVersion"], obj["kind"] = old["apiVersion"], old["kind"]
            if "status" in res.subresources:
                if sub == "status":  # the status strategy keeps spec and metadata
                    new = dict(old)
                    if "status" in obj:
                        new["status"] = obj["status"]
                    else:
                        new.pop("status", None)
                    obj = new
                elif "status" in old:  # the main resource keeps status
                    obj["status"] = old["status"]
                else:
                    obj.pop("status", None)
            PREPARE_UPDATE.get(res.storage, lambda s, o, p: None)(self, obj, old)
            VALIDATE.get(res.storage, lambda r, o: None)(res, obj)
            VALIDATE_UPDATE.get(res.storage, lambda r, o, p: None)(res, obj, old)
            if obj == old:  # a no-op update writes nothing and keeps the resourceVersion
                return old
            if old["metadata"].get("deletionTimestamp"):
                added = set(new_meta.get("finalizers") or []) - set(old["metadata"].get("finalizers") or [])
                if added:
                    raise invalid(res, res.kind, name, [("metadata.finalizers", "Forbidden: no new finalizers can "
                                                         "be added if the object is being deleted, found new "
                                                         "finalizers %s" % dumps(sorted(added)))])
            track_fields(obj, user, "Update", res.api_version, sub)
            if obj == old:
                return old
            self.current_user = user
            if obj["metadata"].get("deletionTimestamp") and not obj["metadata"].get("finalizers"):
                # the last finalizer went: the object is deleted now (the answer is the object)
                return self.write(res, "DELETED", key, None, obj)
            out = self.write(res, "MODIFIED", key, obj, old)
            if res.resource == "leases":
                self.log_lease("update", out, user)
            return out

    def delete(self, res, ns, name, options):
        with self.lock:
            key = self.key(res, ns, name)
            old = self.store_of(res).objects.get(key)
            if old is None:
                raise not_found(res, name)
            pre = (options or {}).get("preconditions") or {}
            if pre.get("uid") and pre["uid"] != old["metadata"]["uid"]:
                raise conflict(res.resource, res.group, name, "Precondition failed: UID in precondition: %s, UID in "
                               "object meta: %s" % (pre["uid"], old["metadata"]["uid"]))
            if pre.get("resourceVersion") and pre["resourceVersion"] != old["metadata"]["resourceVersion"]:
                raise conflict(res.resource, res.group, name, "Precondition failed: ResourceVersion in precondition: "
                               "%s, ResourceVersion in object meta: %s" % (pre["resourceVersion"],
                                                                           old["metadata"]["resourceVersion"]))
            if (res.resource == "pods" and self.pod_termination is not None and (old.get("spec") or {}).get("nodeName")
                    and (options or {}).get("gracePeriodSeconds") != 0):
                return self.terminate(res, key, old, options)
            self.current_user = None
            if old["metadata"].get("finalizers"):
                # finalizers pending: the object stays, being deleted, until the last one goes
                if old["metadata"].get("deletionTimestamp"):
                    return old
                new = clone(old)
                new["metadata"]["deletionTimestamp"] = now_rfc3339()
                new["metadata"]["deletionGracePeriodSeconds"] = 0
                return self.write(res, "MODIFIED", key, new, old)
            return self.write(res, "DELETED", key, None, old)

    def terminate(self, res, key, old, options):
        """Graceful deletion of a bound pod (a test mode): deletionTimestamp set now, the pod
        removed podTermination seconds later, as its kubelet would once the containers stop."""
        if old["metadata"].get("deletionTimestamp"):
            return old
        grace = (options or {}).get("gracePeriodSeconds")
        if grace is None:
            grace = (old.get("spec") or {}).get("terminationGracePeriodSeconds", 30)
        new = clone(old)
        when = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=grace)
        new["metadata"]["deletionTimestamp"] = when.strftime("%Y-%m-%dT%H:%M:%SZ")
        new["metadata"]["deletionGracePeriodSeconds"] = grace
        out = self.write(res, "MODIFIED", key, new, old)
        uid = old["metadata"]["uid"]

        def kubelet():
            with self.lock:
                cur = self.store_of(res).objects.get(key)
                if cur is not None and cur["metadata"]["uid"] == uid:
                    self.write(res, "DELETED", key, None, cur)
        t = threading.Timer(self.pod_termination, kubelet)
        t.daemon = True
        t.start()
        return out

    def bind(self, ns, name, binding, user, agent):
        """pods/{name}/binding; returns the Status to answer or raises."""
        pods = BY_PATH[("", "v1", "pods")]
        with self.lock:
            target = binding.get("target") or {}
            record = {"pod": ns + "/" + name, "node": target.get("name"), "user": user, "userAgent": agent,
                      "leaseHolders": self.lease_holders(), "time": time.time(), "code": 201}
            self.bindings.append(record)
            try:
                key = ns + "/" + name
                steal = self.steals.pop(key, None)
                if steal is not None:
                    self.steal(ns, name, steal, target.get("name"))
                left = self.conflicts.get(key, 0)
                if left > 0:
                    self.conflicts[key] = left - 1
                    raise conflict("pods/binding", "", name, MODIFIED_MSG)
                pod = self.store_of(pods).objects.get(key)
                if pod is None:
                    raise not_found(pods, name)
                meta = binding.get("metadata") or {}
                if meta.get("uid") and meta["uid"] != pod["metadata"]["uid"]:
                    raise conflict("pods/binding", "", name, "Precondition failed: UID in precondition: %s, UID in "
                                   "object meta: %s" % (meta["uid"], pod["metadata"]["uid"]))
                if meta.get("resourceVersion") and meta["resourceVersion"] != pod["metadata"]["resourceVersion"]:
                    raise conflict("pods/binding", "", name, MODIFIED_MSG)
                if pod["metadata"].get("deletionTimestamp"):
                    raise conflict("pods/binding", "", name, "pod %s is being deleted, cannot be assigned to a host"
                                   % name)
                if (pod.get("spec") or {}).get("nodeName"):
                    raise conflict("pods/binding", "", name, 'pod %s is already assigned to node "%s"'
                                   % (name, pod["spec"]["nodeName"]))
                self.assign(key, pod, target["name"], meta.get("annotations") or {}, user)
                record["rv"] = self.rv
                return success_status(201)
            except ApiError as e:
                record["code"] = e.code
                record["message"] = e.message
                raise

    def assign(self, key, pod, node, annotations, user):
        pods = BY_PATH[("", "v1", "pods")]
        new = clone(pod)
        new["spec"]["nodeName"] = node
        if annotations:
            new["metadata"].setdefault("annotations", {}).update(annotations)
        status = new.setdefault("status", {})
        conds = status.setdefault("conditions", [])
        cond = next((c for c in conds if c.get("type") == "PodScheduled"), None)
        if cond is None:
            conds.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                          "lastTransitionTime": now_rfc3339()})
        else:
            if cond.get("status") != "True":
                cond["lastTransitionTime"] = now_rfc3339()
            cond["status"] = "True"
            cond.pop("reason", None)
            cond.pop("message", None)
        track_fields(new, user, "Update", "v1")
        self.write(pods, "MODIFIED", key, new, pod)

    def steal(self, ns, name, node, wanted):
        """Another scheduler binds the pod first (a test hook): to @node, or when empty to the
        first node (by name) other than the one this request wants."""
        key = ns + "/" + name
        pod = self.stores["/pods"].objects.get(key)
        if pod is None or (pod.get("spec") or {}).get("nodeName"):
            return
        if not node:
            node = next((n for n in sorted(self.stores["/nodes"].objects) if n != wanted), "")
        if node:
            self.assign(key, pod, node, {}, "other-scheduler")
            self.bindings.append({"pod": key, "node": node, "user": "other-scheduler", "userAgent": "test-hook",
                                  "leaseHolders": {}, "time": time.time(), "code": 201, "rv": self.rv})

    def lease_holders(self):
        return {k: (v.get("spec") or {}).get("holderIdentity") for k, v in self.stores["coordination.k8s.io/leases"]
                .objects.items()}

    def log_lease(self, verb, lease, user):
        spec = lease.get("spec") or {}
        self.lease_log.append({"verb": verb, "lease": lease["metadata"]["namespace"] + "/" +
                               lease["metadata"]["name"], "holder": spec.get("holderIdentity"),
                               "user": user, "rv": lease["metadata"]["resourceVersion"], "time": time.time(),
                               "renewTime": spec.get("renewTime")})

    def bulk_create(self, args):
        """/_test/bulk: @count objects of @resource (in @namespace) from @template, named
        @name % i, written in one burst. The first goes through create (defaults, admission,
        validation); the others share its spec and status (stored objects are never mutated)
        and differ in metadata: labels whose value is "{name}" get the object's name, and
        @cycle {label: [values]} gives object i values[i % len(values)]; pods get spec.nodeName
        @nodeName % (i % @nodes) when @nodeName is given (bound pods), and their first
        spec.resourceClaims entry the claim @claimName % (i // @claimShare) when @claimName is
        given (pods sharing named ResourceClaims). Returns the last resourceVersion."""
        res = next(r for r in RESOURCES if r.resource == args["resource"] and
                   (r.group == args.get("group", r.group)))
        ns, count, pattern = args.get("namespace", ""), int(args["count"]), args["name"]
        template, cycle = args["template"], args.get("cycle") or {}
        user = args.get("user", "bulk")

        def labels_of(name, i):
            labels = {k: name if v == "{name}" else v
                      for k, v in ((template.get("metadata") or {}).get("labels") or {}).items()}
            labels.update({k: vs[i % len(vs)] for k, vs in cycle.items()})
            return labels

        def node_of(i):
            return args["nodeName"] % (i % int(args.get("nodes", 1))) if args.get("nodeName") else None

        def claims_of(spec, i):
            """spec.resourceClaims with @claimName % (i // @claimShare) as the first one's claim"""
            if not args.get("claimName"):
                return spec
            first_claim = dict((spec.get("resourceClaims") or [{"name": "claim"}])[0])
            first_claim.pop("resourceClaimTemplateName", None)
            first_claim["resourceClaimName"] = args["claimName"] % (i // int(args.get("claimShare", 1)))
            return dict(spec, resourceClaims=[first_claim] + (spec.get("resourceClaims") or [])[1:])

        with self.lock:
            first = None
            for i in range(count):
                name = pattern % i
                if first is None:
                    obj = copy.deepcopy(template)
                    obj.setdefault("metadata", {})["name"] = name
                    obj["metadata"]["labels"] = labels_of(name, i)
                    if node_of(i):
                        obj.setdefault("spec", {})["nodeName"] = node_of(i)
                    if args.get("claimName"):
                        obj["spec"] = claims_of(obj.get("spec") or {}, i)
                    first = self.create(res, ns, obj, user)
                    continue
                key = self.key(res, ns, name)
                if key in self.store_of(res).objects:
                    raise already_exists(res, name)
                obj = dict(first)
                obj["metadata"] = dict(first["metadata"], name=name, uid=str(uuid.uuid4()),
                                       labels=labels_of(name, i))
                if node_of(i):
                    obj["spec"] = dict(first["spec"], nodeName=node_of(i))
                if args.get("claimName"):
                    obj["spec"] = claims_of(obj.get("spec") or first["spec"], i)
                self.current_user = user
                self.write(res, "ADDED", key, obj, None)
            return self.rv

    def summary(self):
        """What a large test checks without the objects: counts, bound pods, bindings per pod."""
        with self.lock:
            pods = self.stores["/pods"].objects
            bound = sum(1 for p in pods.values() if (p.get("spec") or {}).get("nodeName"))
            ok = {}
            for b in self.bindings:
                if b["code"] == 201:
                    ok[b["pod"]] = ok.get(b["pod"], 0) + 1
            return {"resourceVersion": str(self.rv), "floor": self.floor,
                    "counts": {name: len(st.objects) for name, st in self.stores.items()},
                    "boundPods": bound, "bindingAttempts": len(self.bindings), "boundTimes": ok,
                    "requests": self.requests, "lists": self.list_log[-2000:],
                    "watches": self.watch_log[-2000:], "slowWatchersClosed": self.slow_watchers_closed,
                    "watchers": [w.describe() for w in self.watchers]}

    def dra_summary(self):
        """Counts to poll while a large DRA test runs: pods (bound, with a generated claim
        recorded, pending with PodScheduled=False), claims (allocated, allocated and reserved)."""
        with self.lock:
            pods = self.stores["/pods"].objects.values()
            claims = self.stores[CLAIMS].objects.values()

            def unschedulable(p):
                return any(c.get("type") == "PodScheduled" and c.get("status") == "False"
                           for c in (p.get("status") or {}).get("conditions") or [])
            return {"pods": len(self.stores["/pods"].objects),
                    "bound": sum(1 for p in pods if (p.get("spec") or {}).get("nodeName")),
                    "recorded": sum(1 for p in pods if (p.get("status") or {}).get("resourceClaimStatuses")),
                    "unschedulable": sum(1 for p in pods if not (p.get("spec") or {}).get("nodeName") and
                                         unschedulable(p)),
                    "claims": len(self.stores[CLAIMS].objects),
                    "allocated": sum(1 for c in claims if (c.get("status") or {}).get("allocation") is not None),
                    "reserved": sum(1 for c in claims if (c.get("status") or {}).get("allocation") is not None and
                                    (c.get("status") or {}).get("reservedFor"))}

    def dra_log(self, since=0):
        """What a DRA test checks without every object: the claim writes (claim_log, from
        index @since), every binding attempt, the resourceclaim controller's actions, the
        pods' node, uid, claims and PodScheduled condition, and the claims' state."""
        with self.lock:
            pods = {}
            for k, p in self.stores["/pods"].objects.items():
                cond = next((c for c in (p.get("status") or {}).get("conditions") or []
                             if c.get("type") == "PodScheduled"), None)
                spec = p.get("spec") or {}
                pods[k] = {"uid": p["metadata"]["uid"], "node": spec.get("nodeName"),
                           "claims": spec.get("resourceClaims") or [],
                           "claimStatuses": (p.get("status") or {}).get("resourceClaimStatuses") or [],
                           "extendedClaimStatus": (p.get("status") or {}).get("extendedResourceClaimStatus"),
                           "condition": cond}
            claims = {}
            for k, c in self.stores[CLAIMS].objects.items():
                status = c.get("status") or {}
                alloc = status.get("allocation")
                claims[k] = {"uid": c["metadata"]["uid"], "rv": c["metadata"]["resourceVersion"],
                             "finalizers": c["metadata"].get("finalizers") or [],
                             "annotations": c["metadata"].get("annotations") or {},
                             "owners": c["metadata"].get("ownerReferences") or [],
                             "requests": ((c.get("spec") or {}).get("devices") or {}).get("requests") or [],
                             "devices": None if alloc is None else sorted(
                                 "%s/%s/%s" % (r.get("driver"), r.get("pool"), r.get("device"))
                                 for r in (alloc.get("devices") or {}).get("results") or []),
                             "nodeSelector": None if alloc is None else alloc.get("nodeSelector"),
                             "allocationTimestamp": None if alloc is None else alloc.get("allocationTimestamp"),
                             "reservedFor": status.get("reservedFor") or []}
            return {"resourceVersion": str(self.rv), "claimLog": self.claim_log[since:],
                    "bindings": [{k: b.get(k) for k in ("pod", "node", "code", "rv", "time", "message")}
                                 for b in self.bindings],
                    "draController": self.dra_controller.log, "pods": pods, "claims": claims,
                    "requests": self.requests, "faults": self.faults}

    def dump(self):
        with self.lock:
            return {"resourceVersion": str(self.rv), "floor": self.floor,
                    "objects": {name: st.objects for name, st in self.stores.items()},
                    "bindings": self.bindings, "leases": self.lease_log, "requests": self.requests,
                    "wire": self.wire,
                    "watches": self.watch_log, "lists": self.list_log, "faults": self.faults,
                    "outages": self.outages, "accessReviews": self.access_reviews,
                    "watchers": [w.describe() for w in self.watchers],
                    "slowWatchersClosed": self.slow_watchers_closed,
                    "pvController": self.pv_controller.log, "draController": self.dra_controller.log,
                    "claimLog": self.claim_log}

# ---------------------------------------------------------------------------------------
# Per-kind strategy: defaults and admission on create, validation


def fields_v1(value):
    """The FieldsV1 set of @value as the server's field manager writes it: "f:name" for map
    keys, "k:{...}" for list items with a merge key, "v:..." for primitive list items."""
    if isinstance(value, dict):
        return {"f:" + k: fields_v1(v) for k, v in value.items()}
    if isinstance(value, list):
        out = {}
        for item in value:
            if isinstance(item, dict):
                mk = next((k for k in ("type", "name", "key", "uid", "containerPort", "mountPath", "ip")
                           if k in item), None)
                key = "k:" + dumps({mk: item[mk]}) if mk else "k:" + dumps(item)[:64]
                out[key] = dict({".": {}}, **fields_v1(item))
            else:
                out["v:" + dumps(item)] = {}
        return out
    return {}


def track_fields(obj, manager, operation, api_version, sub=None):
    """metadata.managedFields, one entry per manager and subresource (a simplification of
    server-side field management, here so clients read objects as a real server sends them)."""
    meta = obj["metadata"]
    body = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata")}
    body["metadata"] = {k: meta[k] for k in ("labels", "annotations", "ownerReferences", "finalizers") if k in meta}
    entry = {"manager": manager or "unknown", "operation": operation, "apiVersion": api_version,
             "time": now_rfc3339(), "fieldsType": "FieldsV1", "fieldsV1": fields_v1(body)}
    if sub:
        entry["subresource"] = sub
    others = [e for e in meta.get("managedFields") or []
              if (e.get("manager"), e.get("subresource")) != (entry["manager"], sub)]
    old = next((e for e in meta.get("managedFields") or []
                if (e.get("manager"), e.get("subresource")) == (entry["manager"], sub)), None)
    if old is not None and old.get("fieldsV1") == entry["fieldsV1"]:
        entry["time"] = old["time"]  # nothing new from this manager: a no-op stays a no-op
    meta["managedFields"] = others + [entry]


def pod_qos(spec):
    """status.qosClass (pkg/apis/core/helper/qos), comparing quantities as written."""
    any_set, guaranteed = False, True
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        r = (c.get("resources") or {}) if isinstance(c, dict) else {}
        req, lim = r.get("requests") or {}, r.get("limits") or {}
        if req or lim:
            any_set = True
        for k in ("cpu", "memory"):
            if k not in lim or req.get(k, lim.get(k)) != lim.get(k):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def pod_prepare_create(state, pod):
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        raise invalid(BY_PATH[("", "v1", "pods")], "Pod", pod["metadata"]["name"],
                      [("spec.containers", "Required value")])
    # SetDefaults_Pod / SetDefaults_PodSpec / SetDefaults_Container (the parts scheduling reads)
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("enableServiceLinks", True)
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        if not isinstance(c, dict):
            continue
        c.setdefault("terminationMessagePath", "/dev/termination-log")
        c.setdefault("terminationMessagePolicy", "File")
        image = c.get("image") or ""
        c.setdefault("imagePullPolicy", "Always" if ":" not in image.rsplit("/", 1)[-1] or
                     image.endswith(":latest") else "IfNotPresent")
        r = c.get("resources")
        if isinstance(r, dict) and isinstance(r.get("limits"), dict):
            req = r.setdefault("requests", {})
            for k, v in r["limits"].items():
                req.setdefault(k, v)
        for p in c.get("ports") or []:
            if isinstance(p, dict):
                p.setdefault("protocol", "TCP")
                if spec.get("hostNetwork"):
                    p.setdefault("hostPort", p.get("containerPort"))
    # Priority admission
    pcs = state.stores["scheduling.k8s.io/priorityclasses"].objects
    pc_name = spec.get("priorityClassName")
    if pc_name:
        pc = pcs.get(pc_name)
        if pc is None:
            raise ApiError(403, "Forbidden", 'pods "%s" is forbidden: no PriorityClass with name %s was found'
                           % (pod["metadata"]["name"], pc_name), {"name": pod["metadata"]["name"], "kind": "pods"})
    else:
        pc = next((p for p in pcs.values() if p.get("globalDefault")), None)
        if pc is not None:
            spec["priorityClassName"] = pc["metadata"]["name"]
    value = pc["value"] if pc else 0
    if spec.get("priority") is not None and spec["priority"] != value:
        raise ApiError(403, "Forbidden", 'pods "%s" is forbidden: the integer value of priority (%s) must not be '
                       'provided in pod spec; priority admission controller computed %d from the given PriorityClass '
                       'name' % (pod["metadata"]["name"], spec["priority"], value),
                       {"name": pod["metadata"]["name"], "kind": "pods"})
    spec["priority"] = value
    spec.setdefault("preemptionPolicy", (pc or {}).get("preemptionPolicy", "PreemptLowerPriority"))
    # the pod strategy: status starts over
    pod["status"] = {"phase": "Pending", "qosClass": pod_qos(spec)}


def pod_prepare_update(state, pod, old):
    spec, ospec = pod.get("spec") or {}, old.get("spec") or {}
    if spec.get("nodeName", "") != ospec.get("nodeName", ""):
        raise invalid(BY_PATH[("", "v1", "pods")], "Pod", pod["metadata"]["name"],
                      [("spec", "Forbidden: pod updates may not change fields other than `spec.containers[*].image`, "
                        "`spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` (only "
                        "additions to existing tolerations) or `spec.terminationGracePeriodSeconds`")])


def pod_validate(res, pod):
    name = pod["metadata"]["name"]
    spec = pod.get("spec") or {}
    causes = []
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        causes.append(("spec.containers", "Required value"))
    else:
        for i, c in enumerate(containers):
            if not isinstance(c, dict) or not c.get("name"):
                causes.append(("spec.containers[%d].name" % i, "Required value"))
            elif not c.get("image"):
                causes.append(("spec.containers[%d].image" % i, "Required value"))
    status = pod.get("status") or {}
    nn = status.get("nominatedNodeName")
    if nn:
        err = check_subdomain(nn)
        if err:
            causes.append(("status.nominatedNodeName", 'Invalid value: "%s": %s' % (nn, err)))
    for i, c in enumerate(status.get("conditions") or []):
        if not isinstance(c, dict) or not c.get("type"):
            causes.append(("status.conditions[%d].type" % i, "Required value"))
    if causes:
        raise invalid(BY_PATH[("", "v1", "pods")], "Pod", name, causes)


def lease_validate(res, lease):
    spec = lease.get("spec") or {}
    causes = []
    d = spec.get("leaseDurationSeconds")
    if d is not None and (not isinstance(d, int) or d <= 0):
        causes.append(("spec.leaseDurationSeconds", "Invalid value: %s: must be greater than 0" % dumps(d)))
    t = spec.get("leaseTransitions")
    if t is not None and (not isinstance(t, int) or t < 0):
        causes.append(("spec.leaseTransitions", "Invalid value: %s: must be greater than or equal to 0" % dumps(t)))
    for f in ("acquireTime", "renewTime"):
        v = spec.get(f)
        if v is not None and (not isinstance(v, str) or not TIME_RE.match(v)):
            raise bad_request('parsing time %s as "2006-01-02T15:04:05.000000Z07:00": cannot parse' % dumps(v))
    if causes:
        raise invalid(res, "Lease", lease["metadata"]["name"], causes)


def event_validate(res, ev):
    """ValidateEventCreate: the events.k8s.io/v1 rules for events that name a reporting
    controller (new clients), the legacy namespace rules otherwise."""
    name = ev["metadata"]["name"]
    ns = ev["metadata"].get("namespace", "")
    causes = []
    inv = ev.get("involvedObject") or {}
    if inv.get("namespace") and inv["namespace"] != ns:
        causes.append(("involvedObject.namespace", 'Invalid value: "%s": does not match event.namespace'
                       % inv["namespace"]))
    if res is not None and res.group == "events.k8s.io" or ev.get("reportingComponent"):
        if not ev.get("eventTime"):
            causes.append(("eventTime", "Required value"))
        elif not TIME_RE.match(str(ev["eventTime"])):
            raise bad_request('parsing time "%s" as "2006-01-02T15:04:05.000000Z07:00": cannot parse'
                              % ev["eventTime"])
        if not ev.get("reportingComponent"):
            causes.append(("reportingController", "Required value"))
        if not ev.get("reportingInstance"):
            causes.append(("reportingInstance", "Required value"))
        elif len(ev["reportingInstance"]) > 128:
            causes.append(("reportingInstance", "Too long: must have at most 128 bytes"))
        for f in ("action", "reason"):
            if not ev.get(f):
                causes.append((f, "Required value"))
            elif len(ev[f]) > 128:
                causes.append((f, "Too long: must have at most 128 bytes"))
        if len((ev.get("message") or "").encode()) > 1024:
            causes.append(("note", "Too long: must have at most 1024 bytes"))
        if ev.get("type") not in ("Normal", "Warning"):
            causes.append(("type", 'Unsupported value: "%s": supported values: "Normal", "Warning"'
                           % ev.get("type", "")))
        series = ev.get("series")
        if series is not None:
            if (series.get("count") or 0) < 2:
                causes.append(("series.count", "Invalid value: %s: should be at least 2" % series.get("count")))
            if not series.get("lastObservedTime"):
                causes.append(("series.lastObservedTime", "Required value"))
    if causes:
        raise invalid(res or BY_PATH[("", "v1", "events")], "Event", name, causes)


# what ValidateEventUpdate keeps as it was (storage names), for events.k8s.io/v1 requests
EVENT_IMMUTABLE = ("involvedObject", "reason", "message", "source", "firstTimestamp", "lastTimestamp", "count",
                   "type", "eventTime", "action", "related", "reportingComponent", "reportingInstance")


def event_validate_update(res, ev, old):
    """ValidateEventUpdate: through events.k8s.io/v1 only the series (and metadata) change."""
    if res.group != "events.k8s.io":
        return
    causes = [(f, "Invalid value: %s: field is immutable" % json.dumps(ev.get(f))) for f in EVENT_IMMUTABLE
              if ev.get(f) != old.get(f)]
    if causes:
        raise invalid(res, "Event", ev["metadata"]["name"], causes)


def namespace_prepare_create(state, ns):
    ns.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
    ns["status"] = {"phase": "Active"}


CLAIMS = "resource.k8s.io/resourceclaims"


def claim_prepare_create(state, claim):
    """The claim strategy: status starts empty."""
    claim.pop("status", None)


def claim_prepare_update(state, claim, old):
    """What Go's decoder and omitempty make of a status written with nulls: nothing."""
    status = claim.get("status")
    if isinstance(status, dict):
        for k in [k for k, v in status.items() if v is None or v == []]:
            del status[k]
        if not status:
            del claim["status"]


def claim_validate_update(res, claim, old):
    """ValidateResourceClaimUpdate and ValidateResourceClaimStatusUpdate (resource.k8s.io/v1),
    the rules a scheduler's writes meet: the spec is immutable; reservedFor needs an allocation,
    holds at most 256 consumers, each uid once; an allocation is immutable once set."""
    name = claim["metadata"]["name"]
    causes = []
    if claim.get("spec") != old.get("spec"):
        causes.append(("spec", "Invalid value: %s: field is immutable" % dumps(claim.get("spec"))))
    status, ostatus = claim.get("status") or {}, old.get("status") or {}
    reserved = status.get("reservedFor") or []
    if reserved and status.get("allocation") is None:
        causes.append(("status.reservedFor", "Forbidden: may not be specified when `allocated` is not set"))
    if len(reserved) > 256:
        causes.append(("status.reservedFor", "Too many: %d: must have at most 256 items" % len(reserved)))
    uids = [r.get("uid") for r in reserved]
    for i, u in enumerate(uids):
        if u in uids[:i]:
            causes.append(("status.reservedFor[%d].uid" % i, 'Duplicate value: "%s"' % u))
    if ostatus.get("allocation") is not None and status.get("allocation") is not None and \
            status["allocation"] != ostatus["allocation"]:
        causes.append(("status.allocation", "Invalid value: %s: field is immutable" % dumps(status["allocation"])))
    if causes:
        raise invalid(res, "ResourceClaim", name, causes)


POD_GROUPS = "scheduling.k8s.io/podgroups"


def generation_prepare_create(store, obj):
    """metadata.generation starts at 1 (the registry strategies of PodGroup and Workload)."""
    obj["metadata"]["generation"] = 1


def generation_prepare_update(store, obj, old):
    """metadata.generation moves with every change of spec, and only then."""
    gen = old["metadata"].get("generation", 0)
    obj["metadata"]["generation"] = gen + 1 if obj.get("spec") != old.get("spec") else gen


PREPARE_CREATE = {"/pods": pod_prepare_create, "/namespaces": namespace_prepare_create, CLAIMS: claim_prepare_create,
                  POD_GROUPS: generation_prepare_create, "scheduling.k8s.io/workloads": generation_prepare_create}
PREPARE_UPDATE = {"/pods": pod_prepare_update, CLAIMS: claim_prepare_update,
                  POD_GROUPS: generation_prepare_update, "scheduling.k8s.io/workloads": generation_prepare_update}
VALIDATE = {"/pods": pod_validate, "coordination.k8s.io/leases": lease_validate, "events": event_validate}
VALIDATE_UPDATE = {"events": event_validate_update, CLAIMS: claim_validate_update}

# ---------------------------------------------------------------------------------------
# Watches


class Watcher:
    def __init__(self, res, ns, user, agent):
        self.res, self.ns, self.user, self.agent = res, ns, user, agent
        self.inject = []  # raw lines (bytes) to send next; None = then close abruptly
        self.started = time.time()

    def describe(self):
        return {"resource": qualified(self.res), "namespace": self.ns, "user": self.user, "userAgent": self.agent}


def bookmark_object(res, rv):
    obj = {"kind": res.kind, "apiVersion": res.api_version,
           "metadata": {"resourceVersion": str(rv), "creationTimestamp": None}}
    if res.kind == "Pod":
        obj["spec"], obj["status"] = {"containers": None}, {}
    elif res.kind == "Node":
        obj["spec"], obj["status"] = {}, {"daemonEndpoints": {"kubeletEndpoint": {"Port": 0}},
                                          "nodeInfo": {"machineID": "", "systemUUID": "", "bootID": "",
                                                       "kernelVersion": "", "osImage": "",
                                                       "containerRuntimeVersion": "", "kubeletVersion": "",
                                                       "kubeProxyVersion": "", "operatingSystem": "",
                                                       "architecture": ""}}
    return obj


def bad_events(res, kind, rv, existing=None):
    """Bad input for a watch stream (a test hook): lines that a client must log and skip.
    With @existing (a stored object), "unknown-field" re-sends it as MODIFIED with fields
    this API version does not have, as a newer server would."""
    if existing is not None and kind == "unknown-field":
        obj = copy.deepcopy(event_from_storage(res, existing))
        obj["metadata"]["resourceVersion"] = str(rv)
        obj.setdefault("spec", {})["futureField"] = {"nested": [1, 2, 3]}
        obj["futureTopLevel"] = "x"
        return [dumps({"type": "MODIFIED", "object": obj}).encode() + b"\n"]
    base = {"apiVersion": res.api_version, "kind": res.kind,
            "metadata": {"name": "injected-%s" % kind, "namespace": "default", "uid": str(uuid.uuid4()),
                         "resourceVersion": str(rv), "creationTimestamp": now_rfc3339()}}
    if res.kind == "Pod":
        base["spec"] = {"containers": [{"name": "c", "image": "busybox"}], "schedulerName": "default-scheduler"}
        base["status"] = {"phase": "Pending"}
    if kind == "truncated":
        line = dumps({"type": "ADDED", "object": base})
        return [line[:len(line) // 2].encode(), None]  # half an event, then the stream dies
    if kind == "unknown-field":
        base["spec"] = dict(base.get("spec") or {}, futureField={"nested": [1, 2, 3]})
        base["futureTopLevel"] = "x"
        return [dumps({"type": "ADDED", "object": base}).encode() + b"\n"]
    if kind == "no-name":
        del base["metadata"]["name"]
        return [dumps({"type": "ADDED", "object": base}).encode() + b"\n"]
    if kind == "wrong-type":
        base["metadata"]["name"] = 42
        return [dumps({"type": "ADDED", "object": base}).encode() + b"\n"]
    if kind == "unknown-type":
        return [dumps({"type": "SOMETHING", "object": base}).encode() + b"\n"]
    if kind == "not-json":
        return [b"this is not json\n"]
    raise bad_request("unknown bad event kind %r" % kind)

# ---------------------------------------------------------------------------------------
# HTTP


def cut(sock):
    """End a connection as a dying process's kernel does: a FIN with nothing more (no last
    chunk, no TLS close_notify). The raw socket's shutdown, so that an SSLSocket another
    thread is reading is not torn down under it; that thread reads EOF and closes it."""
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, addr, handler, state, opts, ssl_ctx):
        self.state, self.opts, self.ssl_ctx = state, opts, ssl_ctx
        self.conns = set()  # open connections (what an outage cuts), under conns_lock
        self.conns_lock = threading.Lock()
        self.down = False  # in an outage: nothing is accepted, read or answered
        self.up = threading.Event()  # set while listening; run() waits on it during an outage
        self.up.set()
        super().__init__(addr, handler)

    def handle_error(self, request, client_address):
        if self.opts.verbose:
            super().handle_error(request, client_address)

    def get_request(self):
        sock, addr = self.socket.accept()
        # headers and body go out in separate writes: without this, Nagle's algorithm and the
        # peer's delayed ACK hold every response back for ~40 ms
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.ssl_ctx:
            sock = self.ssl_ctx.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        with self.conns_lock:
            self.conns.add(sock)
        return sock, addr

    def shutdown_request(self, request):
        with self.conns_lock:
            self.conns.discard(request)
        super().shutdown_request(request)

    def run(self):
        """Serve until killed; during an outage the accept loop has stopped, and starts again
        on the new listening socket."""
        while True:
            self.serve_forever(poll_interval=0.2)
            self.up.wait()

    def outage(self, seconds):
        """/_test/outage, on a thread of its own: the process dies and is restarted @seconds
        later with its state (as etcd keeps it). The listening socket is closed (connections
        are refused), every open connection cut, and the same port listened on again."""
        state = self.state
        with state.lock:
            record = {"start": time.time(), "end": None, "seconds": seconds}
            state.outages.append(record)
            self.down = True
            self.up.clear()
            state.lock.notify_all()  # watch loops see the outage and end their streams
        self.shutdown()  # the accept loop returns (run() waits for self.up)
        self.socket.close()
        with self.conns_lock:
            conns = list(self.conns)
        for sock in conns:
            cut(sock)
        time.sleep(seconds)
        self.socket = socket.socket(self.address_family, self.socket_type)
        self.server_bind()  # SO_REUSEADDR (allow_reuse_address): the port is free again at once
        self.server_activate()
        with state.lock:
            self.down = False
            record["end"] = time.time()
        self.up.set()
        sys.stderr.write("apiserver: outage of %g s over, listening again\n" % seconds)
        sys.stderr.flush()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "ksched-test-apiserver"

    def setup(self):
        super().setup()
        self.user = None
        if self.server.ssl_ctx:
            self.request.settimeout(10)
            try:
                self.request.do_handshake()
            except (ssl.SSLError, OSError) as e:
                self.log("TLS handshake failed: %s" % e)
                self.close_connection = True
                raise
            self.request.settimeout(None)
            cert = self.request.getpeercert()
            if cert:
                for rdn in cert.get("subject", ()):
                    for k, v in rdn:
                        if k == "commonName":
                            self.user = v

    def handle(self):
        try:
            super().handle()
        except (ConnectionError, ssl.SSLError, socket.timeout):
            pass

    def log_message(self, fmt, *args):
        if self.server.opts.verbose:
            sys.stderr.write("apiserver: %s %s\n" % (self.address_string(), fmt % args))

    def log(self, msg):
        if self.server.opts.verbose:
            sys.stderr.write("apiserver: %s\n" % msg)

    # ---- responses ----

    def wants_proto(self):
        """Accept names protobuf before anything JSON would satisfy (client-go's "protobuf, */*")."""
        for a in self.headers.get("Accept", "").split(","):
            t = a.strip().split(";")[0].strip()
            if t == k8sproto.MEDIA_TYPE:
                return True
            if t in ("application/json", "*/*", "application/*"):
                return False
        return False

    def count_wire(self, direction, ctype):
        """Record the media type of a request body or an answer of the current API request."""
        if not getattr(self, "wire_key", None):
            return
        state = self.server.state
        with state.lock:
            by = state.wire.setdefault(self.wire_key, {}).setdefault(direction, {})
            by[ctype] = by.get(ctype, 0) + 1

    def send_json(self, code, obj, extra=None):
        """An API answer: JSON, or protobuf when the client asks for it and the kind has a message."""
        ctype = "application/json"
        if self.wants_proto() and isinstance(obj, dict) and k8sproto.message_of(obj.get("apiVersion"),
                                                                                  obj.get("kind")):
            ctype, body = k8sproto.MEDIA_TYPE, PROTO.envelope(obj)
        else:
            body = dumps(obj).encode()
        if getattr(self, "lose_answer", False):
            self.lose_answer = False
            self.close_connection = True
            cut(self.request)
            return
        self.count_wire("response", ctype)
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Cache-Control", "no-cache, private")
        self.send_header("Audit-Id", str(uuid.uuid4()))
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_text(self, code, text):
        body = text.encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_error_status(self, err):
        self.send_json(err.code, err.status())

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    # ---- entry points ----

    def do_GET(self):
        self.dispatch("GET")

    def do_POST(self):
        self.dispatch("POST")

    def do_PUT(self):
        self.dispatch("PUT")

    def do_PATCH(self):
        self.dispatch("PATCH")

    def do_DELETE(self):
        self.dispatch("DELETE")

    def authenticate(self):
        opts = self.server.opts
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Bearer "):
            user = opts.tokens.get(auth[7:].strip())
            if user is None:
                return None
            return user
        if self.user:
            return self.user
        if opts.tokens or opts.client_ca:
            return None
        return "system:anonymous"

    def dispatch(self, verb):
        self.wire_key = None
        if self.server.down:  # read just as the outage began: a dead process answers nothing
            self.close_connection = True
            return cut(self.request)
        url = urlsplit(self.path)
        self.query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        path = url.path.rstrip("/") or "/"
        try:
            if path.startswith("/_test/"):
                body = self.read_body()
                return self.test_control(verb, path[len("/_test/"):], body)
            body = self.read_body() if verb in ("POST", "PUT", "PATCH", "DELETE") else b""
            user = self.authenticate()
            if user is None:
                return self.send_json(401, status_object(401, "Unauthorized", "Unauthorized"))
            self.user = user
            if self.injected_fault(verb, url):
                return
            accept = self.headers.get("Accept", "")
            if accept and not any(a.strip().split(";")[0] in ("application/json", "*/*", "application/*",
                                                                 k8sproto.MEDIA_TYPE)
                                  for a in accept.split(",")):
                raise ApiError(406, "NotAcceptable", "only the following media types are accepted: application/json, "
                               "application/yaml, application/vnd.kubernetes.protobuf")
            if verb == "POST" and path in (TOKEN_REVIEWS, ACCESS_REVIEWS):
                return self.review(path, body)
            if path in ("/healthz", "/readyz", "/livez"):
                return self.send_text(200, "ok")
            if path == "/version":
                return self.send_json(200, {"major": "1", "minor": "22", "gitVersion": "v1.22.0-ksched-test",
                                            "platform": "linux/amd64"})
            if self.discovery(path):
                return
            self.api(verb, path, body)
        except ApiError as e:
            self.send_error_status(e)
        except (ConnectionError, ssl.SSLError, BrokenPipeError):
            self.close_connection = True
        except Exception as e:  # a bug here: answer as the real server does for an unexpected error
            import traceback
            traceback.print_exc()
            self.send_json(500, status_object(500, "InternalError", "Internal error occurred: %s" % e))

    def injected_fault(self, verb, url):
        """Answer with an injected failure when a /_test/fault rule matches (its count left)."""
        state = self.server.state
        target = url.path + ("?" + url.query if url.query else "")
        watch = self.query.get("watch", "") in ("1", "true", "True")
        with state.lock:
            for f in state.faults:
                if f["left"] > 0 and f["method"] in (verb, "*") and re.search(f["path"], target) and \
                        f.get("watch", watch) == watch:
                    f["left"] -= 1
                    f["hits"] += 1
                    f["matched"].append({"request": verb + " " + target, "user": self.user, "time": time.time()})
                    code, stall, lose = f["code"], f.get("stall"), f.get("lose")
                    break
            else:
                return False
        if lose:
            # applied as usual, then the answer is lost: the connection is cut instead (a server
            # killed right after the write was committed)
            self.lose_answer = True
            return False
        if stall is not None:
            # read, never answered: the client's timeout ends it, or the connection is closed
            # without an answer after @stall seconds (an outage ends it too)
            end = time.monotonic() + stall
            while time.monotonic() < end and not self.server.down:
                time.sleep(min(0.2, max(0.0, end - time.monotonic())))
            self.close_connection = True
            cut(self.request)
            return True
        reason, msg = {429: ("TooManyRequests", "Too many requests, please try again later."),
                       503: ("ServiceUnavailable", "the server is currently unable to handle the request"),
                       410: ("Expired", "The resourceVersion for the provided list is too old.")}.get(
            code, ("InternalError", "Internal error occurred: injected fault"))
        if code == 504:  # as a read at a resourceVersion the server has not reached yet
            self.send_json(504, status_object(504, "Timeout", "Too large resource version", {
                "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                "retryAfterSeconds": 1}))
            return True
        if code == 409:  # a Conflict as an update at a stale resourceVersion gets it
            try:
                res, _, name, _, _ = self.route(url.path.rstrip("/"))
                err = conflict(res.resource, res.group, name or "", MODIFIED_MSG)
            except ApiError:
                err = conflict("", "", "", MODIFIED_MSG)
            self.send_json(409, err.status())
            return True
        self.send_json(code, status_object(code, reason, msg, {"retryAfterSeconds": 1} if code == 429 else None),
                       {"Retry-After": "1"} if code in (429, 503) else None)
        return True

    # ---- discovery ----

    def review(self, path, body):
        """A TokenReview (authenticated: a --token this server accepts, with its groups) or a
        SubjectAccessReview of a non-resource URL (allowed: system:masters, or a
        --nonresource-rule naming the user or one of its groups, the verb and the path), as
        kube-apiserver answers them (201, the spec echoed, the verdict in status)."""
        obj = strict_json(body)
        spec = obj.get("spec") or {}
        opts, state = self.server.opts, self.server.state
        token_review = path == TOKEN_REVIEWS
        with state.lock:
            key = "POST " + ("tokenreviews.authentication.k8s.io" if token_review
                             else "subjectaccessreviews.authorization.k8s.io")
            state.requests[key] = state.requests.get(key, 0) + 1
        if token_review:
            user = opts.tokens.get(spec.get("token", ""))
            if user is None:
                status = {"user": {}, "error": "invalid bearer token"}
            else:
                status = {"authenticated": True, "user": {"username": user, "uid": "uid-" + user,
                                                          "groups": opts.token_groups.get(spec["token"], [])}}
            return self.send_json(201, {"kind": "TokenReview", "apiVersion": "authentication.k8s.io/v1",
                                        "metadata": {"creationTimestamp": None}, "spec": spec, "status": status})
        nra = spec.get("nonResourceAttributes") or {}
        subjects = [spec.get("user", "")] + list(spec.get("groups") or [])
        rule = next((r for r in opts.nonresource_rules if r[0] in subjects and r[1] in (nra.get("verb"), "*") and
                     (nra.get("path") == r[2] or (r[2].endswith("*") and
                                                  (nra.get("path") or "").startswith(r[2][:-1])))), None)
        if "system:masters" in subjects:
            status = {"allowed": True}
        elif rule:
            status = {"allowed": True, "reason": "allowed by rule %s" % ":".join(rule)}
        else:
            status = {"allowed": False}
        with state.lock:
            state.access_reviews.append({"user": spec.get("user"), "groups": spec.get("groups"),
                                         "path": nra.get("path"), "verb": nra.get("verb"),
                                         "allowed": status["allowed"]})
        return self.send_json(201, {"kind": "SubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
                                    "metadata": {"creationTimestamp": None}, "spec": spec, "status": status})

    def discovery(self, path):
        if path == "/api":
            self.send_json(200, {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
                {"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]})
            return True
        groups = {}
        for r in RESOURCES:
            if r.group and r.group not in self.server.opts.disable_group and r.version not in groups.get(r.group, []):
                groups.setdefault(r.group, []).append(r.version)  # the first listed is the preferred one
        if path == "/apis":
            self.send_json(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
                {"name": g, "versions": [{"groupVersion": g + "/" + v, "version": v} for v in vs],
                 "preferredVersion": {"groupVersion": g + "/" + vs[0], "version": vs[0]}}
                for g, vs in sorted(groups.items())]})
            return True
        m = re.match(r"^/api/(v1)$|^/apis/([^/]+)/([^/]+)$", path)
        if not m:
            return False
        group, version = (m.group(2), m.group(3)) if m.group(2) else ("", m.group(1))
        rs = [r for r in RESOURCES if r.group == group and r.version == version and
              group not in self.server.opts.disable_group]
        if not rs:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        out = []
        for r in rs:
            verbs = ["create", "delete", "get", "list", "patch", "update", "watch"]
            out.append({"name": r.resource, "singularName": "", "namespaced": r.namespaced, "kind": r.kind,
                        "verbs": verbs})
            for s in r.subresources:
                out.append({"name": r.resource + "/" + s, "singularName": "", "namespaced": r.namespaced,
                            "kind": "Binding" if s == "binding" else r.kind,
                            "verbs": ["create"] if s == "binding" else ["get", "patch", "update"]})
        self.send_json(200, {"kind": "APIResourceList", "apiVersion": "v1",
                             "groupVersion": group + "/" + version if group else version, "resources": out})
        return True

    # ---- resources ----

    def route(self, path):
        """(resource, namespace, name, subresource, watch_path) or ApiError 404."""
        m = re.match(r"^/api/(v1)/(.*)$|^/apis/([^/]+)/([^/]+)/(.*)$", path)
        if not m:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if m.group(1):
            group, version, rest = "", m.group(1), m.group(2)
        else:
            group, version, rest = m.group(3), m.group(4), m.group(5)
        segs = rest.split("/")
        watch = False
        if segs and segs[0] == "watch":
            watch, segs = True, segs[1:]
        ns = None
        if len(segs) >= 3 and segs[0] == "namespaces" and (group, version, segs[2]) in BY_PATH:
            ns, segs = segs[1], segs[2:]
        res = BY_PATH.get((group, version, segs[0])) if segs else None
        if res is None or len(segs) > 3 or group in self.server.opts.disable_group:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if ns is not None and not res.namespaced:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        name = segs[1] if len(segs) > 1 else None
        sub = segs[2] if len(segs) > 2 else None
        if sub is not None and sub not in res.subresources:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if name is not None and res.namespaced and ns is None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        return res, ns or "", name, sub, watch

    def api(self, verb, path, body):
        state = self.server.state
        res, ns, name, sub, watch_path = self.route(path)
        watch = watch_path or self.query.get("watch", "") in ("1", "true", "True")
        agent = self.headers.get("User-Agent", "")
        with state.lock:
            state.count("WATCH" if watch else ("LIST" if verb == "GET" and name is None else verb), res, sub)
        self.wire_key = "%s %s %s%s" % (self.user, "WATCH" if watch else ("LIST" if verb == "GET" and name is None
                                                                        else verb), qualified(res),
                                         "/" + sub if sub else "")
        if body:
            self.count_wire("request", self.headers.get("Content-Type", "").split(";")[0].strip())
        if verb == "GET":
            if watch:
                return self.watch(res, ns, name)
            if name is None:
                return self.send_json(200, self.list(res, ns))
            if sub == "binding":
                raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested "
                               "resource")
            return self.send_json(200, event_from_storage(res, state.get(res, ns, name)))
        if verb == "POST":
            if sub == "binding":
                obj = self.read_object(body, "v1", "Binding")
                self.check_binding(obj, ns, name)
                return self.send_json(201, state.bind(ns, name, obj, self.user, agent))
            if name is not None:
                raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested "
                               "resource")
            obj = self.decode(res, body)
            out = state.create(res, ns, event_to_storage(res, obj), self.user)
            return self.send_json(201, event_from_storage(res, out))
        if name is None or sub == "binding":
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        if verb == "PUT":
            obj = self.decode(res, body)
            out = state.update(res, ns, name, event_to_storage(res, obj), self.user, sub)
            return self.send_json(200, event_from_storage(res, out))
        if verb == "PATCH":
            out = state.update(res, ns, name, None, self.user, sub, self.patcher(res, body))
            return self.send_json(200, event_from_storage(res, out))
        if verb == "DELETE":
            options = strict_json(body) if body.strip() else {}
            out = state.delete(res, ns, name, options)
            # ReturnDeletedObject (pods), or an object its finalizers keep: the object
            if res.resource == "pods" or out["metadata"].get("finalizers"):
                return self.send_json(200, out)
            st = success_status(200)
            st["details"] = {"name": name, "group": res.group, "kind": res.resource,
                             "uid": out["metadata"]["uid"]}
            return self.send_json(200, st)
        raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")

    def read_object(self, body, api_version, kind):
        """A request body: JSON, or protobuf when the Content-Type says so and the kind has a
        message (the server's decoder types an envelope without typeMeta as the endpoint's
        kind); 400 when it does not decode, 415 for any other media type."""
        ctype = self.headers.get("Content-Type", "application/json").split(";")[0].strip()
        if ctype == k8sproto.MEDIA_TYPE and k8sproto.message_of(api_version, kind):
            try:
                return PROTO.unenvelope(body, (api_version, kind))[2]
            except k8sproto.ProtoError as e:
                raise bad_request(str(e))
        if ctype != "application/json":
            raise ApiError(415, "UnsupportedMediaType", 'the body of the request was in an unknown format - accepted '
                           'media types include: application/json, application/yaml, '
                           'application/vnd.kubernetes.protobuf')
        return strict_json(body)

    def decode(self, res, body):
        obj = self.read_object(body, res.api_version, res.kind)
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if api_version is not None and api_version != res.api_version:
            raise bad_request("the API version in the data (%s) does not match the expected API version (%s)"
                              % (api_version, res.api_version))
        if kind is not None and kind != res.kind:
            raise bad_request("the object provided is unrecognized (must be of type %s): Object 'Kind' is %r"
                              % (res.kind, kind))
        check_meta_types(res.kind, obj)
        return obj

    def patcher(self, res, body):
        ctype = self.headers.get("Content-Type", "").split(";")[0].strip()
        if ctype not in ("application/merge-patch+json", "application/strategic-merge-patch+json",
                         "application/json-patch+json"):  # the patch type is checked before the body
            raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                           "accepted media types include: application/json-patch+json, "
                           "application/merge-patch+json, application/apply-patch+yaml, "
                           "application/strategic-merge-patch+json")
        try:
            patch = json.loads(body.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            raise bad_request("error decoding patch: %s" % e)
        if ctype == "application/merge-patch+json":
            if not isinstance(patch, dict):
                raise bad_request("json: cannot unmarshal %s into Go value of type map[string]interface {}"
                                  % json_type(patch))
            return lambda old: event_to_storage(res, merge_patch(event_from_storage(res, old), patch))
        if ctype == "application/strategic-merge-patch+json":
            if not isinstance(patch, dict):
                raise bad_request("json: cannot unmarshal %s into Go value of type map[string]interface {}"
                                  % json_type(patch))
            return lambda old: event_to_storage(res, strategic_merge_patch(event_from_storage(res, old), patch))
        if ctype == "application/json-patch+json":
            return lambda old: event_to_storage(res, json_patch(event_from_storage(res, old), patch))
        raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted "
                       "media types include: application/json-patch+json, application/merge-patch+json, "
                       "application/apply-patch+yaml, application/strategic-merge-patch+json")

    def check_binding(self, obj, ns, name):
        """The checks BindingREST.Create and the create handler make before assigning."""
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if api_version is not None and api_version != "v1":
            raise bad_request("the API version in the data (%s) does not match the expected API version (v1)"
                              % api_version)
        if kind is not None and kind != "Binding":
            raise bad_request("the object provided is unrecognized (must be of type Binding): Object 'Kind' is %r"
                              % kind)
        check_meta_types("Binding", obj)
        meta = obj.get("metadata") or {}
        target = obj.get("target")
        if target is not None and not isinstance(target, dict):
            raise bad_request("json: cannot unmarshal %s into Go struct field Binding.target of type "
                              "v1.ObjectReference" % json_type(target))
        for f in ("kind", "name", "namespace", "apiVersion", "uid"):
            if target and target.get(f) is not None and not isinstance(target[f], str):
                raise bad_request("json: cannot unmarshal %s into Go struct field ObjectReference.target.%s of type "
                                  "string" % (json_type(target[f]), f))
        if meta.get("namespace") and meta["namespace"] != ns:
            raise bad_request("the namespace of the provided object does not match the namespace sent on the request")
        if meta.get("name", "") != name:
            raise bad_request("name in URL does not match name in Binding object")
        target = target or {}
        causes = []
        if target.get("kind") and target["kind"] != "Node":
            causes.append(("target.kind", 'Unsupported value: "%s": supported values: "Node", "<empty>"'
                           % target["kind"]))
        if not target.get("name"):
            causes.append(("target.name", "Required value"))
        if causes:
            raise invalid(BY_PATH[("", "v1", "pods")], "Binding", name, causes)

    def list(self, res, ns):
        state = self.server.state
        q = self.query
        label = parse_label_selector(q.get("labelSelector", ""))
        field = parse_field_selector(q.get("fieldSelector", ""), res)
        try:
            limit = int(q.get("limit") or 0)
        except ValueError:
            raise bad_request("invalid limit %r" % q.get("limit"))
        token = q.get("continue", "")
        rv_param = q.get("resourceVersion")
        with state.lock:
            st = state.store_of(res)
            start = ""
            entry = {"resource": qualified(res), "limit": limit, "continue": bool(token), "code": 200,
                     "resourceVersion": rv_param, "time": time.time(), "user": self.user}
            state.list_log.append(entry)
            if token and state.expire_continue > 0:
                state.expire_continue -= 1
                entry["code"] = 410
                raise expired(CONTINUE_EXPIRED)
            if token:
                if rv_param:
                    raise bad_request("specifying resource version is not allowed when using continue")
                try:
                    tok = json.loads(base64.b64decode(token, validate=True))
                    list_rv, start = int(tok["rv"]), str(tok["start"])
                    if tok.get("v") != "meta.k8s.io/v1" or list_rv <= 0:
                        raise ValueError
                except (ValueError, KeyError, TypeError):
                    raise bad_request("continue key is not valid: incorrect encoded start resourceVersion "
                                      "(version meta.k8s.io/v1)")
                if list_rv < state.floor:
                    entry["code"] = 410
                    raise expired(CONTINUE_EXPIRED)
                objects, keys = st.snapshot(list_rv)
            else:
                list_rv = None
                if rv_param == "0" and state.rv0_full_list:
                    limit = 0  # served from the watch cache, which ignores limit
                elif rv_param not in (None, "", "0") and limit:
                    # a page at an exact revision (etcd3's legacy case: a limit with a resourceVersion)
                    try:
                        list_rv = int(rv_param)
                    except ValueError:
                        raise bad_request("invalid resource version: %s" % rv_param)
                    if list_rv < state.floor:
                        entry["code"] = 410
                        raise expired("The resourceVersion for the provided list is too old.")
                    if list_rv > state.rv:
                        entry["code"] = 504
                        raise ApiError(504, "Timeout", "Too large resource version: %d, current: %d"
                                       % (list_rv, state.rv), {"causes": [{"reason": "ResourceVersionTooLarge",
                                                                          "message": "Too large resource version"}],
                                                               "retryAfterSeconds": 1})
                elif rv_param not in (None, "", "0"):
                    try:
                        want = int(rv_param)
                    except ValueError:
                        raise bad_request("invalid resource version: %s" % rv_param)
                    if want > state.rv:
                        state.lock.wait(3.0)
                        if want > state.rv:
                            entry["code"] = 504
                            raise ApiError(504, "Timeout", "Too large resource version: %d, current: %d"
                                           % (want, state.rv), {"causes": [{"reason": "ResourceVersionTooLarge",
                                                                           "message": "Too large resource version"}],
                                                                "retryAfterSeconds": 1})
                if list_rv is None:
                    list_rv = state.rv
                objects, keys = st.snapshot(list_rv)
            prefix = ns + "/" if (res.namespaced and ns) else ""
            # the keys of the namespace ("ns/" up to "ns0"), from the continue token's key on
            lo = bisect.bisect_left(keys, max(prefix, start))
            hi = bisect.bisect_left(keys, ns + "0") if prefix else len(keys)
            items, nxt, matched = [], None, []
            for i in range(lo, hi):
                obj = objects[keys[i]]
                if label(obj["metadata"].get("labels")) and field(obj):
                    if limit and len(matched) == limit:
                        nxt = keys[i]
                        remaining = hi - i  # only reported without selectors, when every key matches
                        break
                    matched.append(keys[i])
            for k in matched:
                item = dict(event_from_storage(res, objects[k]))
                item.pop("apiVersion", None)  # list items carry no type: the list names it
                item.pop("kind", None)
                items.append(item)
        meta = {"resourceVersion": str(list_rv)}
        if nxt is not None:
            meta["continue"] = base64.b64encode(dumps({"v": "meta.k8s.io/v1", "rv": list_rv, "start": nxt})
                                                .encode()).decode()
            if not q.get("labelSelector") and not q.get("fieldSelector"):
                meta["remainingItemCount"] = remaining
        return {"kind": res.kind + "List", "apiVersion": res.api_version, "metadata": meta, "items": items}

    # ---- watch ----

    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def watch(self, res, ns, name):
        state = self.server.state
        q = self.query
        label = parse_label_selector(q.get("labelSelector", ""))
        fsel = q.get("fieldSelector", "")
        if name is not None:
            fsel = "metadata.name=" + name + ("," + fsel if fsel else "")
        field = parse_field_selector(fsel, res)
        bookmarks = q.get("allowWatchBookmarks", "") in ("1", "true", "True")
        try:
            timeout = float(q.get("timeoutSeconds") or 0)
        except ValueError:
            raise bad_request("invalid timeoutSeconds")
        if self.server.opts.max_watch_seconds:
            timeout = min(timeout or 1e9, self.server.opts.max_watch_seconds)
        rv_param = q.get("resourceVersion", "")
        prefix = ns + "/" if (res.namespaced and ns) else ""

        def passes(obj):
            return obj is not None and label(obj["metadata"].get("labels")) and field(obj)

        watcher = Watcher(res, ns, self.user, self.headers.get("User-Agent", ""))
        # length-prefixed protobuf frames (apimachinery's LengthDelimitedFramer), or JSON lines
        watcher.proto = bool(self.wants_proto() and k8sproto.message_of(res.api_version, res.kind))
        initial = []
        with state.lock:
            st = state.store_of(res)
            if rv_param in ("", "0"):
                cursor = state.rv
                for k in sorted(st.objects):
                    if k.startswith(prefix) and passes(st.objects[k]):
                        initial.append(("ADDED", st.objects[k]))
            else:
                try:
                    cursor = int(rv_param)
                except ValueError:
                    raise bad_request("invalid resource version: %s" % rv_param)
                if cursor < state.floor:
                    err = expired("too old resource version: %d (%d)" % (cursor, state.floor))
                    if state.watch_410 == "status":
                        state.watch_log.append({"resource": qualified(res), "resourceVersion": rv_param,
                                                "user": self.user, "time": time.time(), "start": "HTTP 410"})
                        raise err
                    initial = [("ERROR", err.status())]
                    cursor = None
                elif cursor > state.rv:
                    state.lock.wait(3.0)
                    if cursor > state.rv:
                        initial = [("ERROR", status_object(504, "Timeout", "Too large resource version: %d, current: "
                                                           "%d" % (cursor, state.rv), {"causes": [
                                                               {"reason": "ResourceVersionTooLarge",
                                                                "message": "Too large resource version"}],
                                                               "retryAfterSeconds": 1}))]
                        cursor = None
            gen = state.break_gen
            outages = len(state.outages)
            state.watchers.add(watcher)
            log_entry = {"resource": qualified(res), "resourceVersion": rv_param, "user": self.user,
                         "time": time.time(), "start": initial[0][1].get("code", "ERROR") if
                         initial and initial[0][0] == "ERROR" else "ok"}
            state.watch_log.append(log_entry)
            # events after this one reach the watcher through its buffer; the ones before are
            # the catch-up the cacher sends from its history first, which no buffer bounds
            live_from = state.rv
        self.send_response(200)
        self.send_header("Content-Type", k8sproto.WATCH_MEDIA_TYPE if watcher.proto else "application/json")
        self.count_wire("response", k8sproto.WATCH_MEDIA_TYPE if watcher.proto else "application/json")
        self.send_header("Cache-Control", "no-cache, private")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def event(typ, obj):
            return PROTO.watch_frame(typ, obj) if watcher.proto else \
                dumps({"type": typ, "object": obj}).encode() + b"\n"

        deadline = time.monotonic() + timeout if timeout else None
        next_bookmark = time.monotonic() + state.bookmark_interval
        abrupt = slow = False
        try:
            for typ, obj in initial:
                self.chunk(event(typ, event_from_storage(res, obj) if typ != "ERROR" else obj))
            while cursor is not None:
                out = []
                with state.lock:
                    while True:
                        if len(state.outages) != outages:  # an outage: the stream dies with the process
                            abrupt = True
                            cursor = None
                            break
                        if state.break_gen != gen and state.break_resource in (None, res.resource):
                            abrupt = state.break_mode == "abrupt"
                            cursor = None
                            break
                        gen = state.break_gen
                        if watcher.inject:
                            out.extend(watcher.inject)
                            watcher.inject = []
                            break
                        if st.compacted_max > cursor:  # fell behind the retained history: close
                            cursor = None
                            break
                        events = st.since(cursor)
                        if events:
                            buffered = 0  # live events in `out`
                            for erv, typ, key, obj, prev in events:
                                if not key.startswith(prefix):
                                    cursor = erv
                                    continue
                                now_in, was_in = passes(obj) if typ != "DELETED" else False, passes(prev)
                                item = None
                                if typ == "DELETED" and was_in:
                                    item = ("DELETED", obj)
                                elif typ != "DELETED" and now_in and (was_in or typ == "ADDED"):
                                    item = (typ, obj)
                                elif typ != "DELETED" and now_in:
                                    item = ("ADDED", obj)
                                elif typ == "MODIFIED" and was_in:
                                    gone = dict(prev)
                                    gone["metadata"] = dict(prev["metadata"], resourceVersion=str(erv))
                                    item = ("DELETED", gone)
                                if item and erv > live_from and state.watch_buffer:
                                    if buffered == state.watch_buffer:
                                        # a slow consumer: its buffer is full, so what the buffer
                                        # holds is sent and the stream ends (the cacher's forget)
                                        slow, cursor = True, None
                                        state.slow_watchers_closed += 1
                                        log_entry["end"] = "slow"
                                        break
                                    buffered += 1
                                cursor = erv
                                if item:
                                    out.append(item)
                            if out or slow:
                                break
                        now = time.monotonic()
                        if deadline is not None and now >= deadline:
                            cursor = None
                            break
                        if bookmarks and state.bookmarks and now >= next_bookmark:
                            cursor = max(cursor, state.rv)
                            out.append(("BOOKMARK", bookmark_object(res, cursor)))
                            next_bookmark = now + state.bookmark_interval
                            break
                        wake = min(x for x in (deadline, next_bookmark if bookmarks else None, now + 0.5) if x)
                        state.lock.wait(max(0.01, wake - now))
                for item in out:
                    if item is None:  # injected: the stream dies here
                        abrupt = True
                        cursor = None
                        break
                    if isinstance(item, bytes):
                        self.chunk(item)
                    else:
                        typ, obj = item
                        self.chunk(event(typ, event_from_storage(res, obj) if typ != "BOOKMARK" else obj))
            if abrupt:
                self.close_connection = True
                self.wfile.flush()
                self.request.shutdown(socket.SHUT_RDWR)
                return
            self.wfile.write(b"0\r\n\r\n")
        except (ConnectionError, ssl.SSLError, OSError):
            self.close_connection = True
        finally:
            with state.lock:
                state.watchers.discard(watcher)

    # ---- test control ----

    def test_control(self, verb, what, body):
        state = self.server.state
        args = strict_json(body) if body.strip() else {}
        with state.lock:
            if what == "state":
                return self.send_json(200, state.dump())
            if what == "break-watches":
                state.break_gen += 1
                state.break_mode = args.get("mode", "clean")
                state.break_resource = args.get("resource")
                n = len(state.watchers)
                state.lock.notify_all()
                return self.send_json(200, {"watchers": n})
            if what == "compact":
                state.compact(int(args.get("resourceVersion", state.rv)))
                return self.send_json(200, {"floor": state.floor})
            if what == "fault":
                state.faults.append({"method": args.get("method", "*"), "path": args["path"],
                                     "code": int(args.get("code", 500)), "left": int(args.get("count", 1)),
                                     "hits": 0, "matched": []})
                if "watch" in args:
                    state.faults[-1]["watch"] = bool(args["watch"])
                if "stall" in args:
                    state.faults[-1]["stall"] = float(args["stall"])
                if args.get("lose"):
                    state.faults[-1]["lose"] = True
                return self.send_json(200, {})
            if what == "outage":
                seconds = float(args.get("seconds", 5))
                self.send_json(200, {"seconds": seconds})
                self.close_connection = True
                threading.Thread(target=self.server.outage, args=(seconds,), daemon=True).start()
                return
            if what == "expire-continue":
                state.expire_continue = int(args.get("count", 1))
                return self.send_json(200, {})
            if what == "binding-conflicts":
                state.conflicts[args["pod"]] = int(args.get("count", 1))
                return self.send_json(200, {})
            if what == "steal-binding":
                state.steals[args["pod"]] = args.get("node", "")
                return self.send_json(200, {})
            if what == "inject":
                res = next(r for r in RESOURCES if r.resource == args.get("resource", "pods"))
                existing = None
                if args.get("name"):
                    existing = state.store_of(res).objects.get(args["name"])
                    if existing is None:
                        raise not_found(res, args["name"])
                n = 0
                for w in state.watchers:
                    if w.res.storage == res.storage:
                        bad = bad_proto_events if getattr(w, "proto", False) else bad_events
                        w.inject.extend(bad(w.res, args["event"], state.next_rv(), existing))
                        n += 1
                state.lock.notify_all()
                return self.send_json(200, {"watchers": n})
            if what == "pv-controller":
                return self.send_json(200, state.pv_controller.configure(args))
            if what == "dra-controller":
                return self.send_json(200, state.dra_controller.configure(args))
            if what == "claim-interference":
                state.claim_interference = int(args.get("count", 1))
                return self.send_json(200, {})
            if what == "dra-log":
                return self.send_json(200, state.dra_log(args.get("since", 0)))
            if what == "dra-summary":
                return self.send_json(200, state.dra_summary())
            if what == "config":
                if "watch410" in args:
                    state.watch_410 = args["watch410"]
                if "bookmarkInterval" in args:
                    state.bookmark_interval = float(args["bookmarkInterval"])
                if "podTerminationSeconds" in args:
                    v = args["podTerminationSeconds"]
                    state.pod_termination = None if v is None else float(v)
                if "bookmarks" in args:
                    state.bookmarks = bool(args["bookmarks"])
                if "rv0FullList" in args:
                    state.rv0_full_list = bool(args["rv0FullList"])
                if "watchBuffer" in args:
                    state.watch_buffer = int(args["watchBuffer"] or 0)
                return self.send_json(200, {})
            if what == "bulk":
                return self.send_json(201, {"resourceVersion": str(state.bulk_create(args))})
            if what == "summary":
                return self.send_json(200, state.summary())
        raise ApiError(404, "NotFound", "unknown test control %s" % what)

def bad_proto_events(res, kind, rv, existing=None):
    """bad_events for a protobuf watch stream: frames a client must log and skip (not-json:
    a frame that is no WatchEvent; wrong-type: metadata.name with a varint's wire type;
    unknown-field: fields the messages lack, in the object, the envelope and the event)."""
    if existing is not None:
        obj = copy.deepcopy(event_from_storage(res, existing))
        obj["metadata"]["resourceVersion"] = str(rv)
    else:
        obj = {"apiVersion": res.api_version, "kind": res.kind,
               "metadata": {"name": "injected-%s" % kind, "namespace": "default", "uid": str(uuid.uuid4()),
                            "resourceVersion": str(rv), "creationTimestamp": now_rfc3339()}}
        if res.kind == "Pod":
            obj["spec"] = {"containers": [{"name": "c", "image": "busybox"}], "schedulerName": "default-scheduler"}
            obj["status"] = {"phase": "Pending"}
    future = k8sproto.tag(901, 2) + k8sproto.length(b"future") + k8sproto.tag(902, 0) + k8sproto.varint(7)
    if kind == "truncated":
        f = PROTO.watch_frame("ADDED", obj)
        return [f[:len(f) // 2], None]  # half a frame, then the stream dies
    if kind == "unknown-field":
        f = PROTO.watch_frame("MODIFIED" if existing is not None else "ADDED", obj, extra=future)
        return [struct.pack(">I", len(f) - 4 + len(future)) + f[4:] + future]
    if kind == "no-name":
        del obj["metadata"]["name"]
        return [PROTO.watch_frame("ADDED", obj)]
    if kind == "wrong-type":
        meta = k8sproto.tag(1, 0) + k8sproto.varint(42)  # name (a string) as a varint
        raw = k8sproto.envelope_raw(res.api_version, res.kind, k8sproto.tag(1, 2) + k8sproto.length(meta))
        return [k8sproto.frame("ADDED", raw)]
    if kind == "unknown-type":
        return [PROTO.watch_frame("SOMETHING", obj)]
    if kind == "not-json":
        junk = b"this is not protobuf"
        return [struct.pack(">I", len(junk)) + junk]
    raise bad_request("unknown bad event kind %r" % kind)

# ---------------------------------------------------------------------------------------
# Setup


def write_kubeconfig(path, server, ca_pem=None, cert_pem=None, key_pem=None, token=None, name="ksched-test",
                     token_file=None):
    """A kubeconfig (block YAML) for @server with inline CA/client cert data, a token or a
    token file."""
    def b64(data):
        return base64.b64encode(data if isinstance(data, bytes) else data.encode()).decode()
    lines = ["apiVersion: v1", "kind: Config", "clusters:", "- name: %s" % name, "  cluster:",
             "    server: %s" % server]
    if ca_pem:
        lines.append("    certificate-authority-data: %s" % b64(ca_pem))
    lines += ["users:", "- name: %s" % name, "  user:"]
    if cert_pem:
        lines += ["    client-certificate-data: %s" % b64(cert_pem), "    client-key-data: %s" % b64(key_pem)]
    if token:
        lines.append("    token: %s" % token)
    if token_file:
        lines.append("    tokenFile: %s" % token_file)
    if not cert_pem and not token and not token_file:
        lines[-1] = "  user: {}"
    lines += ["contexts:", "- name: %s" % name, "  context:", "    cluster: %s" % name, "    user: %s" % name,
              "    namespace: default", "current-context: %s" % name, ""]
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines))
    os.replace(tmp, path)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def main(argv=None):
    p = argparse.ArgumentParser(description="In-memory kube-apiserver for ksched end-to-end tests.")
    p.add_argument("--address", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0: any free port (see --port-file)")
    p.add_argument("--port-file", help="write the port here once listening")
    p.add_argument("--tls-cert")
    p.add_argument("--tls-key")
    p.add_argument("--client-ca", help="verify client certificates against this CA (user = CN)")
    p.add_argument("--token", action="append", default=[],
                   help="TOKEN, TOKEN:USER or TOKEN:USER:GROUP,GROUP accepted as a bearer token (and by TokenReviews)")
    p.add_argument("--nonresource-rule", action="append", default=[],
                   help="USER-OR-GROUP:VERB:PATH a SubjectAccessReview allows (VERB *: any; PATH may end in *)")
    p.add_argument("--write-kubeconfig", help="write a kubeconfig for this server here")
    p.add_argument("--kubeconfig-ca", help="CA file embedded in the written kubeconfig")
    p.add_argument("--kubeconfig-cert", help="client certificate embedded in the written kubeconfig")
    p.add_argument("--kubeconfig-key")
    p.add_argument("--kubeconfig-token")
    p.add_argument("--bookmark-interval", type=float, default=5.0)
    p.add_argument("--compaction-seconds", type=float, default=300.0,
                   help="history (watch resume, continue tokens) older than this is compacted away")
    p.add_argument("--max-watch-seconds", type=float, default=0, help="end every watch after this long")
    p.add_argument("--watch-buffer", type=int, default=0,
                   help="events a watcher may have waiting; a watcher further behind is closed (0: unbounded)")
    p.add_argument("--disable-group", action="append", default=[],
                   help="serve nothing of this API group (resource.k8s.io: as kube-apiserver before v1.34)")
    p.add_argument("-v", "--verbose", action="store_true")
    opts = p.parse_args(argv)
    opts.tokens = {}
    opts.token_groups = {}
    for t in opts.token:
        tok, _, user = t.partition(":")
        user, _, groups = user.partition(":")
        opts.tokens[tok] = user or "token-user"
        opts.token_groups[tok] = [g for g in groups.split(",") if g]
    opts.nonresource_rules = [tuple(r.split(":", 2)) for r in opts.nonresource_rule]

    ssl_ctx = None
    if opts.tls_cert:
        ssl_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ssl_ctx.load_cert_chain(opts.tls_cert, opts.tls_key)
        ssl_ctx.set_alpn_protocols(["http/1.1"])
        if opts.client_ca:
            ssl_ctx.verify_mode = ssl.CERT_OPTIONAL
            ssl_ctx.load_verify_locations(opts.client_ca)
    state = State(opts)
    server = Server((opts.address, opts.port), Handler, state, opts, ssl_ctx)
    port = server.server_address[1]
    scheme = "https" if ssl_ctx else "http"
    if opts.write_kubeconfig:
        write_kubeconfig(opts.write_kubeconfig, "%s://%s:%d" % (scheme, opts.address, port),
                         read(opts.kubeconfig_ca) if opts.kubeconfig_ca else None,
                         read(opts.kubeconfig_cert) if opts.kubeconfig_cert else None,
                         read(opts.kubeconfig_key) if opts.kubeconfig_key else None, opts.kubeconfig_token)
    if opts.port_file:
        with open(opts.port_file + ".tmp", "w") as f:
            f.write("%d\n" % port)
        os.replace(opts.port_file + ".tmp", opts.port_file)

    def compactor():
        while True:
            time.sleep(1.0)
            with state.lock:
                state.compact_by_age()
    threading.Thread(target=compactor, daemon=True).start()
    state.pv_controller.start()
    state.dra_controller.start()
    sys.stderr.write("apiserver: listening on %s://%s:%d\n" % (scheme, opts.address, port))
    sys.stderr.flush()
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
