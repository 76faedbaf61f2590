"""k8sproto.py - Kubernetes' protobuf encoding (application/vnd.kubernetes.protobuf) for the
test API server, driven by the message definitions ksched itself uses (kube/proto/*.proto).

Python standard library only. The .proto files follow the conventions written at the top of
kube/proto/runtime.proto; this reads that subset of the language (proto3 messages with
scalar, message, repeated and `oneof opt_*` fields, `<name>_inline` embedded structs and
`...Entry` map entries) and encodes a JSON object of the API into the message of its kind,
or decodes one back, as k8s.io/apimachinery's protobuf serializer does:

  - a body is b"k8s\\x00" followed by a runtime.Unknown {typeMeta {apiVersion, kind}, raw};
  - a watch stream is frames of a 4-byte big-endian length and a metav1.WatchEvent
    {type, object: RawExtension {raw: an enveloped object}};
  - Time is {seconds, nanos} (RFC 3339 in JSON), Quantity {string}, IntOrString
    {type, intVal, strVal}, a map repeated {key, value} entries sorted by key.

Only the fields the .proto files carry are encoded (a real server encodes every field;
ksched reads only these). Decoding raises ProtoError for malformed input; unknown fields
are skipped.
"""

import datetime
import os
import re
import struct

MAGIC = b"k8s\x00"
MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
WATCH_MEDIA_TYPE = MEDIA_TYPE + ";stream=watch"

# (apiVersion, kind) -> message, as kube/proto_wire.c's table; Status answers in every group
KINDS = {
    ("v1", "Node"): "ks.core.Node", ("v1", "NodeList"): "ks.core.NodeList",
    ("v1", "Pod"): "ks.core.Pod", ("v1", "PodList"): "ks.core.PodList",
    ("v1", "PersistentVolume"): "ks.core.PersistentVolume",
    ("v1", "PersistentVolumeList"): "ks.core.PersistentVolumeList",
    ("v1", "PersistentVolumeClaim"): "ks.core.PersistentVolumeClaim",
    ("v1", "PersistentVolumeClaimList"): "ks.core.PersistentVolumeClaimList",
    ("v1", "Namespace"): "ks.core.Namespace", ("v1", "NamespaceList"): "ks.core.NamespaceList",
    ("v1", "Service"): "ks.core.Service", ("v1", "ServiceList"): "ks.core.ServiceList",
    ("v1", "ReplicationController"): "ks.core.ReplicationController",
    ("v1", "ReplicationControllerList"): "ks.core.ReplicationControllerList",
    ("v1", "Binding"): "ks.core.Binding",
    ("storage.k8s.io/v1", "StorageClass"): "ks.storage.StorageClass",
    ("storage.k8s.io/v1", "StorageClassList"): "ks.storage.StorageClassList",
    ("storage.k8s.io/v1", "CSINode"): "ks.storage.CSINode",
    ("storage.k8s.io/v1", "CSINodeList"): "ks.storage.CSINodeList",
    ("policy/v1", "PodDisruptionBudget"): "ks.policy.PodDisruptionBudget",
    ("policy/v1", "PodDisruptionBudgetList"): "ks.policy.PodDisruptionBudgetList",
    ("scheduling.k8s.io/v1", "PriorityClass"): "ks.scheduling.PriorityClass",
    ("scheduling.k8s.io/v1", "PriorityClassList"): "ks.scheduling.PriorityClassList",
    ("apps/v1", "ReplicaSet"): "ks.apps.ReplicaSet", ("apps/v1", "ReplicaSetList"): "ks.apps.ReplicaSetList",
    ("apps/v1", "StatefulSet"): "ks.apps.StatefulSet", ("apps/v1", "StatefulSetList"): "ks.apps.StatefulSetList",
    ("events.k8s.io/v1", "Event"): "ks.events.Event",
    ("coordination.k8s.io/v1", "Lease"): "ks.coordination.Lease",
}

SCALARS = {"string", "bytes", "bool", "int32", "int64"}
TIME_TYPES = {"ks.meta.Time", "ks.meta.MicroTime"}


class ProtoError(ValueError):
    """Malformed protobuf, or a JSON value the message cannot hold."""


class Field:
    def __init__(self, name, number, typ, repeated, explicit):
        self.name, self.number, self.type = name, number, typ
        self.repeated, self.explicit = repeated, explicit
        self.inline = name.endswith("_inline")


class Schema:
    """Every message of the .proto files of one directory."""

    def __init__(self, proto_dir=None):
        if proto_dir is None:
            here = os.path.dirname(os.path.abspath(__file__))
            proto_dir = os.path.join(here, "..", "..", "kube", "proto")
        self.messages = {}  # full name -> [Field]
        for fn in sorted(os.listdir(proto_dir)):
            if fn.endswith(".proto"):
                with open(os.path.join(proto_dir, fn)) as f:
                    self._parse(f.read())
        for fields in self.messages.values():
            for fl in fields:
                fl.entry = fl.type.endswith("Entry") and fl.type in self.messages
        self.by_number = {m: {fl.number: fl for fl in fs} for m, fs in self.messages.items()}

    def _parse(self, text):
        text = re.sub(r"//[^\n]*", "", text)
        tokens = re.findall(r"[A-Za-z_][\w.]*|\d+|\"[^\"]*\"|[{}=;<>,]", text)
        package, i, raw = "", 0, []
        while i < len(tokens):
            t = tokens[i]
            if t in ("syntax", "import"):
                i = tokens.index(";", i) + 1
            elif t == "package":
                package, i = tokens[i + 1], i + 3
            elif t == "message":
                name, i = tokens[i + 1], i + 3  # message NAME {
                fields, oneof = [], False
                while tokens[i] != "}" or oneof:
                    if tokens[i] == "oneof":
                        oneof, i = True, i + 3
                    elif tokens[i] == "}":
                        oneof, i = False, i + 1
                    else:
                        repeated = tokens[i] == "repeated"
                        i += repeated
                        typ, fname, num = tokens[i], tokens[i + 1], int(tokens[i + 3])
                        fields.append((typ, fname, num, repeated, oneof))
                        i += 5  # TYPE NAME = N ;
                raw.append((package, name, fields))
                i += 1
            else:
                raise ProtoError("unexpected token %r in a .proto file" % t)
        for package, name, fields in raw:
            out = []
            for typ, fname, num, repeated, explicit in fields:
                if typ not in SCALARS and "." not in typ:
                    typ = package + "." + typ
                out.append(Field(fname, num, typ, repeated, explicit))
            self.messages[package + "." + name] = out

    # ---- encoding ----

    def encode(self, message, obj):
        """The JSON object @obj (a dict) as the bytes of @message."""
        out = bytearray()
        for fl in self.messages[message]:
            if fl.inline:
                out += tag(fl.number, 2) + length(self.encode(fl.type, obj))
                continue
            value = obj.get(fl.name)
            if value is None:
                continue
            if fl.repeated and fl.entry:
                if not isinstance(value, dict):
                    raise ProtoError("%s: a map is expected" % fl.name)
                for k in sorted(value):
                    entry = self.encode_field(self.messages[fl.type][0], k)
                    if value[k] is not None:
                        entry += self.encode_field(self.messages[fl.type][1], value[k])
                    out += tag(fl.number, 2) + length(bytes(entry))
            elif fl.repeated:
                if not isinstance(value, list):
                    raise ProtoError("%s: a list is expected" % fl.name)
                for v in value:
                    out += self.encode_field(fl, v)
            else:
                out += self.encode_field(fl, value)
        return bytes(out)

    def encode_field(self, fl, value):
        t = fl.type
        if t == "string":
            if not isinstance(value, str):
                raise ProtoError("%s: a string is expected, not %r" % (fl.name, value))
            return tag(fl.number, 2) + length(value.encode())
        if t in ("int32", "int64"):
            if isinstance(value, bool) or not isinstance(value, int):
                raise ProtoError("%s: an integer is expected, not %r" % (fl.name, value))
            return tag(fl.number, 0) + varint(value)
        if t == "bool":
            if not isinstance(value, bool):
                raise ProtoError("%s: true or false is expected, not %r" % (fl.name, value))
            return tag(fl.number, 0) + varint(int(value))
        if t == "bytes":
            return tag(fl.number, 2) + length(bytes(value))
        if t in TIME_TYPES:
            secs, nanos = parse_time(value)
            body = tag(1, 0) + varint(secs) + tag(2, 0) + varint(nanos)
        elif t == "ks.meta.Quantity":
            body = tag(1, 2) + length(str(value).encode())
        elif t == "ks.meta.IntOrString":
            if isinstance(value, int) and not isinstance(value, bool):
                body = tag(1, 0) + varint(0) + tag(2, 0) + varint(value) + tag(3, 2) + length(b"")
            else:
                body = tag(1, 0) + varint(1) + tag(2, 0) + varint(0) + tag(3, 2) + length(str(value).encode())
        else:
            if not isinstance(value, dict):
                raise ProtoError("%s: an object is expected, not %r" % (fl.name, value))
            body = self.encode(t, value)
        return tag(fl.number, 2) + length(body)

    def envelope(self, obj, api_version=None, kind=None, extra=b""):
        """b"k8s\\0" + runtime.Unknown of @obj, of its own apiVersion and kind unless given;
        @extra (raw fields) is appended to the object's message."""
        api_version = api_version or obj.get("apiVersion")
        kind = kind or obj.get("kind")
        message = message_of(api_version, kind)
        if not message:
            raise ProtoError("no protobuf message for %s %s" % (api_version, kind))
        return envelope_raw(api_version, kind, self.encode(message, obj) + extra)

    def watch_frame(self, typ, obj, extra=b""):
        """One frame of a protobuf watch stream: the event @typ with @obj enveloped."""
        return frame(typ, self.envelope(obj, extra=extra))

    # ---- decoding ----

    def decode(self, message, data):
        """The bytes of @message as its JSON object (fields JSON would omit left out)."""
        fields = self.by_number[message]
        obj = {}
        for num, wire, value in parse_message(data):
            fl = fields.get(num)
            if fl is None:
                continue  # a field ksched does not carry
            if fl.inline:
                if wire != 2:
                    raise ProtoError("%s: wire type %d" % (fl.name, wire))
                obj.update(self.decode(fl.type, value))
                continue
            v = self.decode_field(fl, wire, value)
            if fl.repeated and fl.entry:
                entry = v
                obj.setdefault(fl.name, {})[entry.get("key", "")] = entry.get("value", "")
            elif fl.repeated:
                obj.setdefault(fl.name, []).append(v)
            else:
                obj[fl.name] = v
        for fl in self.messages[message]:
            v = obj.get(fl.name)
            if not fl.repeated and not fl.explicit and fl.type in SCALARS and v in ("", 0, False, b""):
                del obj[fl.name]  # omitempty
        return obj

    def decode_field(self, fl, wire, value):
        t = fl.type
        if t in ("int32", "int64", "bool"):
            if wire != 0:
                raise ProtoError("%s: wire type %d for %s" % (fl.name, wire, t))
            if t == "bool":
                return value != 0
            v = value - (1 << 64) if value >= 1 << 63 else value
            return v if t == "int64" else ((v + (1 << 31)) % (1 << 32)) - (1 << 31)
        if wire != 2:
            raise ProtoError("%s: wire type %d for %s" % (fl.name, wire, t))
        if t == "string":
            try:
                return value.decode()
            except UnicodeDecodeError:
                raise ProtoError("%s: not UTF-8" % fl.name)
        if t == "bytes":
            return value
        if t in TIME_TYPES:
            f = {n: v for n, w, v in parse_message(value) if w == 0}
            if 1 not in f:
                return None
            return format_time(f[1] - (1 << 64) if f[1] >= 1 << 63 else f[1], f.get(2, 0), t == "ks.meta.MicroTime")
        if t == "ks.meta.Quantity":
            s = self.decode(t, value).get("string", "")
            return s or "0"
        if t == "ks.meta.IntOrString":
            d = self.decode(t, value)
            return d.get("strVal", "") if d.get("type") == 1 else d.get("intVal", 0)
        if fl.entry:
            kf, vf = self.messages[t]
            entry = {}
            for n, w, v in parse_message(value):
                if n == 1:
                    entry["key"] = self.decode_field(kf, w, v)
                elif n == 2:
                    entry["value"] = self.decode_field(vf, w, v)
            return entry
        return self.decode(t, value)

    def unenvelope(self, data, default=("", "")):
        """(apiVersion, kind, object) of an enveloped body, the type taken from @default
        (apiVersion, kind) when the envelope names none, as the server's decoder does;
        ProtoError when it is not one."""
        if data[:4] != MAGIC:
            raise ProtoError("provided data does not appear to be a protobuf message, expected prefix "
                             "[107 56 115 0]")
        if len(data) == 4:
            raise ProtoError("empty body")
        unk = {n: v for n, w, v in parse_message(data[4:]) if w == 2}
        tm = {n: v.decode(errors="replace") for n, w, v in parse_message(unk.get(1, b"")) if w == 2}
        api_version, kind = tm.get(1, "") or default[0], tm.get(2, "") or default[1]
        message = message_of(api_version, kind)
        if not message:
            raise ProtoError("no protobuf message for kind %r of apiVersion %r" % (kind, api_version))
        obj = self.decode(message, unk.get(2, b""))
        if api_version:
            obj["apiVersion"] = api_version
        if kind:
            obj["kind"] = kind
        return api_version, kind, obj


def envelope_raw(api_version, kind, raw):
    """b"k8s\\0" + runtime.Unknown {typeMeta, raw} around an object's encoded bytes."""
    tm = tag(1, 2) + length(api_version.encode()) + tag(2, 2) + length(kind.encode())
    return MAGIC + tag(1, 2) + length(tm) + tag(2, 2) + length(raw)


def frame(typ, raw_object):
    """A watch frame: length prefix, then WatchEvent {type, object {raw: @raw_object}}."""
    event = tag(1, 2) + length(typ.encode()) + tag(2, 2) + length(tag(1, 2) + length(raw_object))
    return struct.pack(">I", len(event)) + event


def message_of(api_version, kind):
    if kind == "Status":
        return "ks.meta.Status"
    return KINDS.get((api_version, kind))


def tag(number, wire):
    return varint(number << 3 | wire)


def varint(v):
    if v < 0:
        v += 1 << 64
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def length(data):
    return varint(len(data)) + data


def parse_message(data):
    """[(field number, wire type, value)] of @data: ints for varints, bytes otherwise."""
    out, i, n = [], 0, len(data)

    def read_varint():
        nonlocal i
        v, shift = 0, 0
        while True:
            if i >= n or shift > 63:
                raise ProtoError("a truncated varint")
            b = data[i]
            i += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return v

    while i < n:
        key = read_varint()
        num, wire = key >> 3, key & 7
        if num == 0:
            raise ProtoError("field number 0")
        if wire == 0:
            out.append((num, 0, read_varint()))
        elif wire == 1 or wire == 5:
            size = 8 if wire == 1 else 4
            if i + size > n:
                raise ProtoError("a truncated fixed field")
            out.append((num, wire, data[i:i + size]))
            i += size
        elif wire == 2:
            size = read_varint()
            if i + size > n:
                raise ProtoError("a field runs past the end of the message")
            out.append((num, 2, data[i:i + size]))
            i += size
        else:
            raise ProtoError("wire type %d" % wire)
    return out


TIME_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$")


def parse_time(text):
    m = TIME_RE.match(text) if isinstance(text, str) else None
    if not m:
        raise ProtoError("invalid RFC 3339 time %r" % (text,))
    y, mo, d, h, mi, s = (int(x) for x in m.groups()[:6])
    frac = m.group(7) or ""
    nanos = int((frac[1:] + "000000000")[:9]) if frac else 0
    tz = m.group(8)
    off = 0 if tz == "Z" else (1 if tz[0] == "+" else -1) * (int(tz[1:3]) * 3600 + int(tz[4:6]) * 60)
    days = (datetime.date(y, mo, d) - datetime.date(1970, 1, 1)).days
    return days * 86400 + h * 3600 + mi * 60 + s - off, nanos


def format_time(secs, nanos, micro):
    t = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=secs)
    if micro:
        return t.strftime("%Y-%m-%dT%H:%M:%S") + ".%06dZ" % (nanos // 1000)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")
