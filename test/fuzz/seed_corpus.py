#!/usr/bin/env python3
"""seed_corpus.py - (re)build the seed corpora of test/fuzz/corpus/<target>/.

Seeds come from the conformance scenarios (test/conformance), test/data, the config
tests' inline YAML (test/config/test_config*.c) and hand-written edge cases. Files are
named seed-<sha1 prefix> so identical inputs collapse; files named crash-* (regressions)
are never touched. Usage: test/fuzz/seed_corpus.py [SCENARIO_DIR]
"""
import glob
import hashlib
import json
import os
import re
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SCEN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "test", "conformance")
MAX_SEED = 8192  # bytes; larger seeds slow every mutation


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    if not data or len(data) > MAX_SEED:
        return
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    name = "seed-" + hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def clear_seeds(target):
    for p in glob.glob(os.path.join(HERE, "corpus", target, "seed-*")):
        os.remove(p)


def yaml_files():
    files = sorted(glob.glob(os.path.join(SCEN, "*.yaml")))
    files += sorted(glob.glob(os.path.join(ROOT, "test", "data", "**", "*.yaml"), recursive=True))
    return files


def walk(node, fn):
    fn(node)
    if isinstance(node, dict):
        for v in node.values():
            walk(v, fn)
    elif isinstance(node, list):
        for v in node:
            walk(v, fn)


def docs_of(path):
    try:
        with open(path) as f:
            return [d for d in yaml.safe_load_all(f) if d is not None]
    except yaml.YAMLError:
        return []


def is_config(text):
    return "KubeSchedulerConfiguration" in text or "kubescheduler.config.k8s.io" in text


def loader():
    for p in yaml_files():
        with open(p, "rb") as f:
            data = f.read()
        if not is_config(data.decode(errors="replace")):
            put("loader", data)


QUANTITY_EDGES = [
    "0", "1", "-1", "+1", "100m", "1.5", "1.5Gi", "0.1", "1000", "1e3", "1E3", "1.", ".5", "-.5", "1n",
    "1u", "999999999999999999999999999999999999", "9223372036854775807", "9223372036854775808",
    "-9223372036854775808", "8Ei", "7.999Ei", "1Pi", "1e-9", "1e-10", "1e2147483647", "1e-2147483647",
    "1e2147483648", "0.000000001", "0.0000000001", "12345678901234567890.123456789", "1Ki", "1023Ki",
    "0.5Ki", "1.0000000001Mi", "+", "-", ".", "m", "Ki", "e3", "1ee3", "1e", "1e+", "1.1.1", "1 ", " 1",
    "1k", "1M", "1G", "1T", "1P", "1E", "1Ei", "16Ei", "340282366920938463463374607431768211455",
    "340282366920938463463374607431768211456", "1e18", "1.2e-3", "-0", "-0.0", "00001", "1.50000",
]


def quantity():
    seen = set(QUANTITY_EDGES)

    def grab(node):
        if isinstance(node, dict):
            for k in ("requests", "limits", "capacity", "allocatable", "overhead", "storage"):
                v = node.get(k)
                if isinstance(v, dict):
                    for q in v.values():
                        if isinstance(q, (str, int, float)):
                            seen.add(str(q))
                elif isinstance(v, (str, int)):
                    seen.add(str(v))

    for p in yaml_files():
        for d in docs_of(p):
            walk(d, grab)
    for q in sorted(seen):
        put("quantity", q)


def selector():
    """Documents {labels, nodeName, selector, nodeSelector} from the scenarios' nodes and pods."""
    nodes, selectors, node_selectors = [], [], []

    def grab(node):
        if not isinstance(node, dict):
            return
        for k in ("labelSelector", "namespaceSelector", "selector"):
            if isinstance(node.get(k), dict):
                selectors.append(node[k])
        if isinstance(node.get("requiredDuringSchedulingIgnoredDuringExecution"), dict):
            node_selectors.append(node["requiredDuringSchedulingIgnoredDuringExecution"])
        if isinstance(node.get("preference"), dict):
            node_selectors.append({"nodeSelectorTerms": [node["preference"]]})

    for p in yaml_files():
        for d in docs_of(p):
            if isinstance(d, dict) and d.get("kind") == "Node":
                meta = d.get("metadata") or {}
                nodes.append((meta.get("name", ""), meta.get("labels") or {}))
            walk(d, grab)
    uniq = lambda xs: list({json.dumps(x, sort_keys=True): x for x in xs}.values())
    selectors, node_selectors = uniq(selectors), uniq(node_selectors)
    nodes = list({json.dumps(n, sort_keys=True): n for n in nodes}.values())
    for i in range(max(len(selectors), len(node_selectors))):
        name, labels = nodes[i % len(nodes)] if nodes else ("n", {})
        doc = {"labels": labels, "nodeName": name}
        if i < len(selectors):
            doc["selector"] = selectors[i]
        if i < len(node_selectors):
            doc["nodeSelector"] = node_selectors[i]
        put("selector", yaml.safe_dump(doc, sort_keys=False))


CONFIG_HEADERS = {
    "V1_HEADER": "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n",
    "V1BETA3_HEADER": "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
    "V1BETA2_HEADER": "apiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: KubeSchedulerConfiguration\n",
}
LITERAL = r'"(?:[^"\\\n]|\\.)*"'
CONCAT = re.compile(r"(?:(?:%s|%s)\s*)+" % (LITERAL, "|".join(CONFIG_HEADERS)))


def c_string(run):
    out = []
    for tok in re.findall(r"%s|%s" % (LITERAL, "|".join(CONFIG_HEADERS)), run):
        if tok in CONFIG_HEADERS:
            out.append(CONFIG_HEADERS[tok])
        else:
            out.append(bytes(tok[1:-1], "utf-8").decode("unicode_escape"))
    return "".join(out)


def config():
    for p in yaml_files():
        with open(p) as f:
            text = f.read()
        if is_config(text):
            put("config", text)
    for p in sorted(glob.glob(os.path.join(ROOT, "test", "config", "test_config*.c"))):
        with open(p) as f:
            src = f.read()
        for m in CONCAT.finditer(src):
            text = c_string(m.group(0))
            if is_config(text) or "profiles:" in text:
                put("config", text)


def api_objects():
    """Every manifest document once (kinds deduplicated per file), as a server sends it."""
    seen = set()
    for p in yaml_files():
        for d in docs_of(p):
            if not isinstance(d, dict) or "kind" not in d or is_config(json.dumps(d, default=str)):
                continue
            key = (os.path.basename(p), d.get("kind"))
            if key in seen:
                continue
            seen.add(key)
            yield d


def json_target():
    for i, d in enumerate(api_objects()):
        # compact like a server's response, every third one indented (multi-line errors)
        put("json", json.dumps(d, default=str, indent=2 if i % 3 == 0 else None))
    for edge in ('{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a\\u00e9\\ud83d\\ude00"}}',
                 '[1,2.5e3,-0,true,false,null,"x"]', '{"a":{"b":{"c":[[[]]]}}}', '{"a":1,"a":2}', '"\\ud800"'):
        put("json", edge)


KIND_ORDER = ["Node", "Pod", "PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode",
              "PodDisruptionBudget", "Namespace", "PriorityClass", "Service", "ReplicationController",
              "ReplicaSet", "StatefulSet"]  # KS_KIND_MAP order (include/ksched/loader.h)


def objects_by_kind():
    """(kind, its manifest documents) for each kind of KIND_ORDER that has some, by kind name."""
    by_kind = {}
    for d in api_objects():
        if d.get("kind") in KIND_ORDER:
            by_kind.setdefault(d["kind"], []).append(d)
    return sorted(by_kind.items())


def watch_event():
    """Byte 0: the watched kind; byte 1: chunk size; then events, one per line (some pretty-printed)."""
    types = ("ADDED", "MODIFIED", "DELETED")
    n = 0
    for kind, objs in objects_by_kind():
        for i in range(0, len(objs), 3):
            events = [json.dumps({"type": types[(i + j) % 3], "object": o}, default=str,
                                 indent=2 if (n + j) % 4 == 3 else None) for j, o in enumerate(objs[i:i + 3])]
            head = bytes([KIND_ORDER.index(kind), (n * 7) % 65])
            put("watch_event", head + "\n".join(events).encode() + b"\n")
            n += 1
    head = bytes([1, 5])
    put("watch_event", head + b'{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1",'
        b'"metadata":{"resourceVersion":"12345"}}}\nnot json at all\n'
        b'{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure",'
        b'"message":"too old resource version","reason":"Expired","code":410}}\n')
    put("watch_event", head + b'{"type":"ADDED","object":{"metadata":{"name":"a{\\"}"}}} [1,{"x":"}"}]\n')


def proto_target():
    """Byte 0: mode (0 a body, 1 a watch stream, 2 a body encoded again); byte 1: the kind
    items decode as; byte 2: chunk size; then the bytes, encoded by the test API server's
    codec (test/apiserver/k8sproto.py) from the same manifests."""
    sys.path.insert(0, os.path.join(ROOT, "test", "apiserver"))
    import k8sproto
    schema = k8sproto.Schema()

    def enc(obj):
        try:
            return schema.envelope(json.loads(json.dumps(obj, default=str)))
        except (k8sproto.ProtoError, KeyError, TypeError, ValueError, AttributeError):
            return None  # a value of another type than the API's (an int label value...)

    by_kind = {}
    for d in api_objects():
        if d.get("kind") in KIND_ORDER and enc(d):
            by_kind.setdefault(d["kind"], []).append(d)
    n = 0
    for kind, objs in sorted(by_kind.items()):
        k = KIND_ORDER.index(kind)
        api = objs[0]["apiVersion"]
        for i in range(0, len(objs), 3):
            group = objs[i:i + 3]
            put("proto", bytes([n % 2 * 2, k, 0]) + enc(group[0]))
            items = [{x: v for x, v in o.items() if x not in ("apiVersion", "kind")} for o in group]
            lst = enc({"apiVersion": api, "kind": kind + "List", "items": items,
                       "metadata": {"resourceVersion": str(100 + n), "continue": "tok" if n % 2 else "",
                                    "remainingItemCount": n}})
            if lst:
                put("proto", bytes([0, k, 0]) + lst)
            frames = b"".join(k8sproto.frame(("ADDED", "MODIFIED", "DELETED")[j % 3], enc(o))
                              for j, o in enumerate(group))
            put("proto", bytes([1, k, (n * 7) % 65]) + frames)
            n += 1
    status = {"apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Failure", "code": 410,
              "reason": "Expired", "message": "too old resource version"}
    bookmark = {"apiVersion": "v1", "kind": "Pod", "metadata": {"resourceVersion": "12345"}}
    put("proto", bytes([1, 1, 3]) + k8sproto.frame("BOOKMARK", enc(bookmark)) + k8sproto.frame("ERROR", enc(status))
        + b"\x00\x00\x00\x05junk!" + b"\x00\x00\x00\x00")
    put("proto", bytes([0, 1, 0]) + enc(status))
    put("proto", bytes([0, 1, 0]) + b"k8s\x00")
    put("proto", bytes([2, 0, 0]) + enc({"apiVersion": "v1", "kind": "Node", "metadata": {
        "name": "n", "creationTimestamp": "2024-05-01T10:00:00Z", "labels": {"b": "1", "a": "2"}},
        "status": {"allocatable": {"cpu": "4"}}}))


def list_target():
    """Byte 0: the listed kind; byte 1: chunk size; then a LIST answer: JSON (some indented), or
    protobuf encoded by the test API server's codec (test/apiserver/k8sproto.py)."""
    sys.path.insert(0, os.path.join(ROOT, "test", "apiserver"))
    import k8sproto
    schema = k8sproto.Schema()
    n = 0
    for kind, objs in objects_by_kind():
        k = KIND_ORDER.index(kind)
        for i in range(0, len(objs), 3):
            items = [{x: v for x, v in o.items() if x not in ("apiVersion", "kind")} for o in objs[i:i + 3]]
            lst = {"apiVersion": objs[i]["apiVersion"], "kind": kind + "List", "items": items,
                   "metadata": {"resourceVersion": str(100 + n), "continue": "tok" if n % 2 else ""}}
            text = json.dumps(lst, default=str, indent=2 if n % 3 == 0 else None)
            put("list", bytes([k, (n * 7) % 65]) + text.encode())
            try:
                put("list", bytes([k, (n * 5) % 65]) + schema.envelope(json.loads(text)))
            except (k8sproto.ProtoError, KeyError, TypeError, ValueError, AttributeError):
                pass  # a value of another type than the API's
            n += 1
    put("list", bytes([1, 3]) + b'{"metadata":{},"items":[null,1,"s]",[{}],{"metadata":{"name":"a{\\"}"}}]}')
    put("list", bytes([1, 0]) + b'{"items":[],"metadata":{"resourceVersion":"1"}}')


if __name__ == "__main__":
    for target, fn in (("loader", loader), ("quantity", quantity), ("selector", selector), ("config", config),
                       ("json", json_target), ("watch_event", watch_event), ("proto", proto_target),
                       ("list", list_target)):
        clear_seeds(target)
        fn()
        n = len(glob.glob(os.path.join(HERE, "corpus", target, "*")))
        print(f"{target}: {n} files")
