#!/usr/bin/env python3
"""gen-api-schema.py - the Kubernetes API schema as C tables for ksched (api/api_schema.c).

Usage: scripts/gen-api-schema.py SWAGGER_JSON VERSION [API_DIR APIMACHINERY_DIR] [--merge OPENAPI_V3_JSON]...
       > api/api_schema.c

SWAGGER_JSON is kubernetes/kubernetes' api/openapi-spec/swagger.json of the release named
VERSION (e.g. v1.36); API_DIR and APIMACHINERY_DIR are checkouts of k8s.io/api and
k8s.io/apimachinery at the matching tag (v0.36.x), whose Go types name the fields' types as the
API server's JSON decoder prints them in its errors (without them, names are derived from the
spec and a named type such as v1.Protocol reads as its underlying string). Each --merge names
an OpenAPI v3 document of one group version of a newer release
(api/openapi-spec/v3/apis__GROUP__VERSION_openapi.json): its definitions of that group version
join the spec (their Go types must then be in API_DIR too), so that a group version a newer
release added is served without moving the rest of the API. The output holds:
  - every group/version/kind the built-in API serves (each definition's
    x-kubernetes-group-version-kind), sorted by kind, and the built-in API groups: the
    loader skips the real kinds that do not affect scheduling and rejects the others;
  - the field tables of every definition reachable from the kinds ksched decodes (MODELLED
    below; keep it in step with KS_KIND_MAP in include/ksched/loader.h, a unit test checks
    it), walked by api/field_check.c to report unknown fields as the API server's field
    validation does.

Schema shapes, as the API server decodes them:
  - a definition with properties is a struct: its keys must be among them;
  - type: array walks its items; type: object with additionalProperties is a map whose
    keys are free and whose values follow additionalProperties;
  - scalars are typed as the JSON decoder types them (api/type_check.c): string (format
    byte: base64 bytes), integer int32 / int64, number, boolean, and the three types that
    decode themselves: Quantity, IntOrString, Time / MicroTime;
  - objects with neither properties nor additionalProperties (FieldsV1, RawExtension: raw
    JSON the API server keeps as it came) check nothing below them.
Every node also carries its Go type as reflect's Type.String() spells it ("v1.PodSpec",
"[]v1.Container", "map[string]string", "int32"): the decoder's type errors name it.
Only the Python standard library is used.
"""

import json
import os
import re
import sys

# The kinds ksched decodes (include/ksched/loader.h, KS_KIND_MAP), each at the version
# whose schema checks every apiVersion ksched accepts for it (the older ones it still
# accepts, such as policy/v1beta1, have the same fields).
MODELLED = [
    ("", "v1", "Node"),
    ("", "v1", "Pod"),
    ("", "v1", "PersistentVolume"),
    ("", "v1", "PersistentVolumeClaim"),
    ("storage.k8s.io", "v1", "StorageClass"),
    ("storage.k8s.io", "v1", "CSINode"),
    ("policy", "v1", "PodDisruptionBudget"),
    ("", "v1", "Namespace"),
    ("scheduling.k8s.io", "v1", "PriorityClass"),
    ("", "v1", "Service"),
    ("", "v1", "ReplicationController"),
    ("apps", "v1", "ReplicaSet"),
    ("apps", "v1", "StatefulSet"),
    ("resource.k8s.io", "v1", "DeviceClass"),
    ("resource.k8s.io", "v1", "ResourceSlice"),
    ("resource.k8s.io", "v1", "ResourceClaim"),
    ("resource.k8s.io", "v1", "ResourceClaimTemplate"),
    ("scheduling.k8s.io", "v1beta1", "PodGroup"),
    ("scheduling.k8s.io", "v1beta1", "Workload"),
]
# `kind: List` and `<Kind>List` documents: a list type's own fields, its items being
# checked one by one as objects of their own kinds.
LIST_MODEL = ("", "v1", "PodList")

ANY, OBJECT, ARRAY, MAP, SEPARATE = "KS_SCHEMA_ANY", "KS_SCHEMA_OBJECT", "KS_SCHEMA_ARRAY", "KS_SCHEMA_MAP", \
    "KS_SCHEMA_SEPARATE"
STRING, BYTES, BOOL, INT32, INT64, FLOAT64 = "KS_SCHEMA_STRING", "KS_SCHEMA_BYTES", "KS_SCHEMA_BOOL", \
    "KS_SCHEMA_INT32", "KS_SCHEMA_INT64", "KS_SCHEMA_FLOAT64"
QUANTITY, INT_OR_STRING, TIME = "KS_SCHEMA_QUANTITY", "KS_SCHEMA_INT_OR_STRING", "KS_SCHEMA_TIME"

# Definitions whose Go types decode themselves (they implement json.Unmarshaler).
SELF_DECODING = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity": (QUANTITY, "resource.Quantity"),
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": (INT_OR_STRING, "intstr.IntOrString"),
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": (TIME, "v1.Time"),
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": (TIME, "v1.MicroTime"),
}
GO_BUILTINS = {"map", "chan", "func", "struct", "string", "bool", "byte", "rune", "int", "int8", "int16", "int32", "int64", "uint", "uint8",
               "uint16", "uint32", "uint64", "float32", "float64", "interface", "any"}


class GoTypes:
    """The Go type of every field of the structs of k8s.io/api and k8s.io/apimachinery.

    fields[(dir, Struct)][json name] is the field's type as reflect's Type.String() spells it
    once the decoder has followed pointers: "v1.Protocol", "[]v1.Container", "int64".
    Fields of embedded structs that have no JSON name of their own (",inline") are the
    embedding struct's, as encoding/json promotes them.
    """

    STRUCT = re.compile(r"^type (\w+) struct \{\s*$")
    FIELD = re.compile(r'^\t(?:(\w+)\s+)?([^\s`]+)\s+`json:"([^"]*)"')
    IMPORT = re.compile(r'^\s*(?:import\s+)?(\w+\s+)?"([^"]+)"\s*$')

    def __init__(self, roots):
        self.raw = {}  # (dir, Struct) -> [(json name or None for inline, type expr, file package map)]
        for root, prefix in roots:
            for dirpath, _, files in os.walk(root):
                rel = os.path.relpath(dirpath, root)
                for f in sorted(files):
                    if f.endswith(".go") and not f.endswith("_test.go"):
                        self.parse(os.path.join(dirpath, f), os.path.join(prefix, rel))

    def parse(self, path, key_dir):
        pkg, imports, struct = None, {}, None
        with open(path, encoding="utf-8") as f:
            for line in f:
                if pkg is None and line.startswith("package "):
                    pkg = line.split()[1]
                m = self.IMPORT.match(line)
                if m and struct is None and "/" in m.group(2):
                    alias = (m.group(1) or "").strip() or m.group(2).rsplit("/", 1)[-1]
                    imports[alias] = m.group(2).rsplit("/", 1)[-1]
                    continue
                if struct is None:
                    m = self.STRUCT.match(line)
                    if m:
                        struct = self.raw.setdefault((key_dir, m.group(1)), [])
                    continue
                if line.startswith("}"):
                    struct = None
                    continue
                m = self.FIELD.match(line)
                if m:
                    name, expr, tag = m.group(1), m.group(2), m.group(3).split(",")[0]
                    inline = name is None and tag == ""
                    struct.append((None if inline else tag or name, expr, pkg, dict(imports)))

    @staticmethod
    def spell(expr, pkg, imports):
        """A type expression of package @pkg as reflect spells it, pointers followed."""
        expr = expr.lstrip("*")

        def ident(m):
            word = m.group(0)
            if "." in word:
                alias, name = word.split(".", 1)
                return imports.get(alias, alias) + "." + name
            return word if word in GO_BUILTINS else pkg + "." + word
        return re.sub(r"[A-Za-z_]\w*(?:\.\w+)?", ident, expr)

    def struct_fields(self, key):
        out = {}
        for name, expr, pkg, imports in self.raw.get(key, []):
            if name is None:  # inline: the embedded struct's fields are this one's
                alias, _, tname = expr.lstrip("*").rpartition(".")
                target = key[0] if not alias else None
                for (d, n) in self.raw:
                    if n == tname and (target is None or d == target):
                        out.update(self.struct_fields((d, n)))
                        break
            else:
                out[name] = self.spell(expr, pkg, imports)
        return out

    def of_definition(self, name):
        """The fields of spec definition @name ("io.k8s.api.core.v1.PodSpec"), {} when unknown."""
        parts = name.split(".")
        if parts[:3] == ["io", "k8s", "api"]:
            key = (os.path.join("api", parts[3], parts[4]), parts[5])
        elif parts[:5] == ["io", "k8s", "apimachinery", "pkg", "apis"]:
            key = (os.path.join("apimachinery", "pkg", "apis", parts[5], parts[6]), parts[7])
        else:
            return {}
        return self.struct_fields(key)


def go_struct_name(defname):
    """reflect's Type.String() of the Go struct behind spec definition @defname: "v1.PodSpec"."""
    parts = defname.split(".")
    return parts[-2] + "." + parts[-1]


def go_elem(go, kind):
    """The element type of Go slice or map type @go ("[]v1.Container", "map[string]string")."""
    if go is None:
        return None
    if kind == ARRAY and go.startswith("[]"):
        return go[2:]
    if kind == MAP and go.startswith("map["):
        depth = 0
        for i, c in enumerate(go):
            depth += c == "["
            depth -= c == "]"
            if depth == 0 and c == "]":
                return go[i + 1:]
    return None  # a named slice or map type: its element is spelled by the spec


class Tables:
    def __init__(self, defs, go_types):
        self.defs = defs
        self.go_types = go_types
        # node 0: anything; node 1: checked elsewhere
        self.nodes = [[ANY, 0, 0, "anything", ""], [SEPARATE, 0, 0, "objects checked on their own", ""]]
        self.by_def = {}
        self.by_shape = {}
        self.fields = []  # (name, node)
        self.free_defs = []

    def shape(self, kind, elem, go, what):
        key = (kind, elem, go)
        if key not in self.by_shape:
            self.by_shape[key] = len(self.nodes)
            self.nodes.append([kind, 0, elem, what, go])
        return self.by_shape[key]

    def scalar(self, s, go):
        t, fmt = s.get("type"), s.get("format")
        if t == "string":
            kind, default = (BYTES, "[]uint8") if fmt == "byte" else (STRING, "string")
        elif t == "integer":
            kind, default = (INT32, "int32") if fmt == "int32" else (INT64, "int64")
        elif t == "number":
            kind, default = FLOAT64, "float64"
        elif t == "boolean":
            kind, default = BOOL, "bool"
        else:
            return 0
        go = go or default
        return self.shape(kind, 0, go, go)

    def schema(self, s, where, go=None):
        if "$ref" in s:
            return self.definition(s["$ref"].rsplit("/", 1)[-1])
        if s.get("x-kubernetes-preserve-unknown-fields"):
            return 0
        t = s.get("type")
        if t == "array":
            elem = self.schema(s.get("items", {}), where + "[]", go_elem(go, ARRAY))
            go = go or "[]" + self.nodes[elem][4]
            return self.shape(ARRAY, elem, go, "list of " + self.nodes[elem][3])
        if t == "object" or "properties" in s or "additionalProperties" in s:
            if "properties" in s:
                return self.struct(s["properties"], where)
            ap = s.get("additionalProperties")
            if isinstance(ap, dict):
                elem = self.schema(ap, where + "{}", go_elem(go, MAP))
                go = go or "map[string]" + self.nodes[elem][4]
                return self.shape(MAP, elem, go, "map of " + self.nodes[elem][3])
            if ap is True:
                return self.shape(MAP, 0, go or "map[string]interface {}", "map of anything")
            return 0
        return self.scalar(s, go)

    def struct(self, props, where, override=None, defname=None):
        """A struct node for @props; @override maps a field name to a fixed node."""
        idx = len(self.nodes)
        go = go_struct_name(defname) if defname else ""
        self.nodes.append([OBJECT, 0, 0, where, go])
        go_fields = self.go_types.of_definition(defname) if self.go_types and defname else {}
        # the fields' own nodes first (they may add runs of their own), then this struct's run
        kids = []
        for name, p in props.items():
            if override and name in override:
                node = override[name]
            else:
                node = self.schema(p, where + "." + name, go_fields.get(name))
            kids.append((name, node))
        kids.sort(key=lambda kv: (len(kv[0].encode()), kv[0].encode()))
        self.nodes[idx][1] = len(kids)
        self.nodes[idx][2] = len(self.fields)
        self.fields.extend(kids)
        return idx

    def definition(self, name):
        if name in self.by_def:
            return self.by_def[name]
        d = self.defs[name]
        if name in SELF_DECODING:
            kind, go = SELF_DECODING[name]
            self.by_def[name] = self.shape(kind, 0, go, go)
            return self.by_def[name]
        if "properties" not in d and not isinstance(d.get("additionalProperties"), dict):
            if d.get("type") == "object":
                self.free_defs.append(name)
                self.by_def[name] = 0
            else:
                self.by_def[name] = self.scalar(d, None)
            return self.by_def[name]
        if "properties" not in d:
            self.by_def[name] = self.schema(d, name)
            return self.by_def[name]
        # recorded before the fields are walked, so recursive definitions terminate
        self.by_def[name] = len(self.nodes)
        return self.struct(d["properties"], name, defname=name)


def c_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def v3_to_v2(x):
    """An OpenAPI v3 schema in the v2 spec's form: a lone allOf $ref unwrapped, refs to #/definitions."""
    if isinstance(x, dict):
        if "allOf" in x and len(x["allOf"]) == 1 and set(x["allOf"][0]) == {"$ref"}:
            y = {k: v3_to_v2(v) for k, v in x.items() if k != "allOf"}
            y["$ref"] = x["allOf"][0]["$ref"].replace("#/components/schemas/", "#/definitions/")
            return y
        return {k: (v.replace("#/components/schemas/", "#/definitions/") if k == "$ref" else v3_to_v2(v))
                for k, v in x.items()}
    if isinstance(x, list):
        return [v3_to_v2(v) for v in x]
    return x


def merge_v3(defs, path):
    """Add the definitions of the one group version @path (an OpenAPI v3 document) serves; its name."""
    with open(path, encoding="utf-8") as f:
        schemas = json.load(f)["components"]["schemas"]
    served = {(g["group"], g["version"]) for name, d in schemas.items() if name.startswith("io.k8s.api.")
              for g in d.get("x-kubernetes-group-version-kind", [])}
    if len(served) != 1:
        sys.exit("gen-api-schema.py: %s serves %d group versions, want 1" % (path, len(served)))
    group, version = served.pop()
    prefix = "io.k8s.api.%s.%s." % (group.split(".")[0], version)
    for name, d in schemas.items():
        if name.startswith(prefix):
            defs[name] = v3_to_v2(d)
    return "%s/%s" % (group, version)


def main():
    args, merges = [], []
    argv = sys.argv[1:]
    while argv:
        a = argv.pop(0)
        if a == "--merge" and argv:
            merges.append(argv.pop(0))
        else:
            args.append(a)
    if len(args) not in (2, 4):
        sys.exit("usage: gen-api-schema.py SWAGGER_JSON VERSION [API_DIR APIMACHINERY_DIR] "
                 "[--merge OPENAPI_V3_JSON]... > api/api_schema.c")
    path, version = args[0], args[1]
    go_types = GoTypes([(args[2], "api"), (args[3], "apimachinery")]) if len(args) == 4 else None
    with open(path, encoding="utf-8") as f:
        defs = json.load(f)["definitions"]
    merged = [merge_v3(defs, m) for m in merges]

    gvks = {}
    for name, d in defs.items():
        for g in d.get("x-kubernetes-group-version-kind", []):
            gvks.setdefault((g["group"], g["version"], g["kind"]), name)
    if not gvks:
        sys.exit("gen-api-schema.py: no x-kubernetes-group-version-kind in " + path)

    t = Tables(defs, go_types)
    roots = []
    for gvk in MODELLED:
        if gvk not in gvks:
            sys.exit("gen-api-schema.py: %s/%s %s not in the spec" % gvk)
        roots.append((gvk[2], t.definition(gvks[gvk]), gvks[gvk]))
    list_name = gvks[LIST_MODEL]
    roots.append(("List", t.struct(defs[list_name]["properties"], "List", {"items": 1}, list_name),
                  "a list type, as " + list_name))
    roots.sort(key=lambda r: r[0])

    kinds = sorted(gvks, key=lambda g: (g[2], g[0], g[1]))
    groups = sorted({g[0] for g in gvks})

    out = sys.stdout
    w = out.write
    w("/*\n * api_schema.c - GENERATED by scripts/gen-api-schema.py from the Kubernetes %s OpenAPI spec\n" % version)
    w(" * (kubernetes/kubernetes api/openapi-spec/swagger.json)%s%s. Do not edit: regenerate with\n"
      % ("".join(",\n * with %s of a newer release's OpenAPI v3 spec" % m for m in merged),
         ",\n * with the Go types of k8s.io/api and k8s.io/apimachinery" if go_types else ""))
    w(" *   scripts/gen-api-schema.py swagger.json %s%s%s > api/api_schema.c\n"
      % (version, " API_DIR APIMACHINERY_DIR" if go_types else "",
         "".join(" \\\n *     --merge apis__%s__%s_openapi.json" % tuple(m.split("/")) for m in merged)))
    w(" *\n * %d group/version/kinds in %d groups; %d schema nodes and %d fields reachable from the\n"
      % (len(kinds), len(groups), len(t.nodes), len(t.fields)))
    w(" * %d kinds ksched decodes (see include/ksched/internal/api_schema.h).\n */\n" % len(MODELLED))
    w("// clang-format off\n")
    w('#include "ksched/internal/api_schema.h"\n\n')
    w("const char ks_api_schema_version[] = %s;\n\n" % c_str(version))

    w("const struct ks_schema_gvk ks_schema_gvks[] = {\n")
    for g, v, k in kinds:
        w("    {%s, %s, %s},\n" % (c_str(k), c_str(g), c_str(v)))
    w("};\nconst uint32_t ks_schema_ngvks = %d;\n\n" % len(kinds))

    w("const char *const ks_schema_groups[] = {\n")
    for g in groups:
        w("    %s,\n" % c_str(g))
    w("};\nconst uint32_t ks_schema_ngroups = %d;\n\n" % len(groups))

    w("const struct ks_schema_root ks_schema_roots[] = {\n")
    for kind, node, name in roots:
        w("    {%s, %d}, /* %s */\n" % (c_str(kind), node, name))
    w("};\nconst uint32_t ks_schema_nroots = %d;\n\n" % len(roots))

    w("const struct ks_schema_node ks_schema_nodes[] = {\n")
    for i, (kind, n, ref, what, go) in enumerate(t.nodes):
        w("    {%s, %d, %d, %s}, /* %d: %s */\n" % (kind, n, ref, c_str(go), i, what))
    w("};\nconst uint32_t ks_schema_nnodes = %d;\n\n" % len(t.nodes))

    w("const struct ks_schema_field ks_schema_fields[] = {\n")
    runs = {ref: what for kind, n, ref, what, go in t.nodes if kind == OBJECT and n}
    for i, (name, node) in enumerate(t.fields):
        if i in runs:
            w("    /* %d: %s */\n" % (i, runs[i]))
        w("    {%s, %d, %d},\n" % (c_str(name), len(name.encode()), node))
    w("};\nconst uint32_t ks_schema_nfields = %d;\n" % len(t.fields))

    print("gen-api-schema.py: %d gvks, %d groups, %d nodes, %d fields; free-form: %s"
          % (len(kinds), len(groups), len(t.nodes), len(t.fields), ", ".join(t.free_defs) or "none"),
          file=sys.stderr)


if __name__ == "__main__":
    main()
