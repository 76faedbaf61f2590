#!/usr/bin/env python3
"""gen-api-schema.py - the Kubernetes API schema as C tables for ksched (api/api_schema.c).

Usage: scripts/gen-api-schema.py SWAGGER_JSON VERSION > api/api_schema.c

SWAGGER_JSON is kubernetes/kubernetes' api/openapi-spec/swagger.json of the release named
VERSION (e.g. v1.36). The output holds:
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
  - scalars (string, integer, number, boolean; Quantity, IntOrString, Time are strings)
    and objects with neither properties nor additionalProperties (FieldsV1, RawExtension:
    raw JSON the API server keeps as it came) check nothing below them.
Only the Python standard library is used.
"""

import json
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
]
# `kind: List` and `<Kind>List` documents: a list type's own fields, its items being
# checked one by one as objects of their own kinds.
LIST_MODEL = ("", "v1", "PodList")

ANY, OBJECT, ARRAY, MAP, SEPARATE = "KS_SCHEMA_ANY", "KS_SCHEMA_OBJECT", "KS_SCHEMA_ARRAY", "KS_SCHEMA_MAP", \
    "KS_SCHEMA_SEPARATE"


class Tables:
    def __init__(self, defs):
        self.defs = defs
        # node 0: anything; node 1: checked elsewhere
        self.nodes = [[ANY, 0, 0, "anything"], [SEPARATE, 0, 0, "objects checked on their own"]]
        self.by_def = {}
        self.by_shape = {}
        self.fields = []  # (name, node)
        self.free_defs = []

    def shape(self, kind, elem):
        key = (kind, elem)
        if key not in self.by_shape:
            self.by_shape[key] = len(self.nodes)
            what = ("list of " if kind == ARRAY else "map of ") + self.nodes[elem][3]
            self.nodes.append([kind, 0, elem, what])
        return self.by_shape[key]

    def schema(self, s, where):
        if "$ref" in s:
            return self.definition(s["$ref"].rsplit("/", 1)[-1])
        if s.get("x-kubernetes-preserve-unknown-fields"):
            return 0
        t = s.get("type")
        if t == "array":
            return self.shape(ARRAY, self.schema(s.get("items", {}), where + "[]"))
        if t == "object" or "properties" in s or "additionalProperties" in s:
            if "properties" in s:
                return self.struct(s["properties"], where)
            ap = s.get("additionalProperties")
            if isinstance(ap, dict):
                return self.shape(MAP, self.schema(ap, where + "{}"))
            if ap is True:
                return self.shape(MAP, 0)
            return 0
        return 0

    def struct(self, props, where, override=None):
        """A struct node for @props; @override maps a field name to a fixed node."""
        idx = len(self.nodes)
        self.nodes.append([OBJECT, 0, 0, where])
        # the fields' own nodes first (they may add runs of their own), then this struct's run
        kids = []
        for name, p in props.items():
            node = override[name] if override and name in override else self.schema(p, where + "." + name)
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
        if "properties" not in d and not isinstance(d.get("additionalProperties"), dict):
            if d.get("type") == "object":
                self.free_defs.append(name)
            self.by_def[name] = 0
            return 0
        if "properties" not in d:
            self.by_def[name] = self.schema(d, name)
            return self.by_def[name]
        # recorded before the fields are walked, so recursive definitions terminate
        self.by_def[name] = len(self.nodes)
        return self.struct(d["properties"], name)


def c_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: gen-api-schema.py SWAGGER_JSON VERSION > api/api_schema.c")
    path, version = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as f:
        defs = json.load(f)["definitions"]

    gvks = {}
    for name, d in defs.items():
        for g in d.get("x-kubernetes-group-version-kind", []):
            gvks.setdefault((g["group"], g["version"], g["kind"]), name)
    if not gvks:
        sys.exit("gen-api-schema.py: no x-kubernetes-group-version-kind in " + path)

    t = Tables(defs)
    roots = []
    for gvk in MODELLED:
        if gvk not in gvks:
            sys.exit("gen-api-schema.py: %s/%s %s not in the spec" % gvk)
        roots.append((gvk[2], t.definition(gvks[gvk]), gvks[gvk]))
    list_name = gvks[LIST_MODEL]
    roots.append(("List", t.struct(defs[list_name]["properties"], "List", {"items": 1}),
                  "a list type, as " + list_name))
    roots.sort(key=lambda r: r[0])

    kinds = sorted(gvks, key=lambda g: (g[2], g[0], g[1]))
    groups = sorted({g[0] for g in gvks})

    out = sys.stdout
    w = out.write
    w("/*\n * api_schema.c - GENERATED by scripts/gen-api-schema.py from the Kubernetes %s OpenAPI spec\n" % version)
    w(" * (kubernetes/kubernetes api/openapi-spec/swagger.json). Do not edit: regenerate with\n")
    w(" *   scripts/gen-api-schema.py swagger.json %s > api/api_schema.c\n" % version)
    w(" *\n * %d group/version/kinds in %d groups; %d schema nodes and %d fields reachable from the\n"
      % (len(kinds), len(groups), len(t.nodes), len(t.fields)))
    w(" * %d kinds ksched decodes (see include/ksched/api_schema.h).\n */\n" % len(MODELLED))
    w("// clang-format off\n")
    w('#include "ksched/api_schema.h"\n\n')
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
    for i, (kind, n, ref, what) in enumerate(t.nodes):
        w("    {%s, %d, %d}, /* %d: %s */\n" % (kind, n, ref, i, what))
    w("};\nconst uint32_t ks_schema_nnodes = %d;\n\n" % len(t.nodes))

    w("const struct ks_schema_field ks_schema_fields[] = {\n")
    runs = {ref: what for kind, n, ref, what in t.nodes if kind == OBJECT and n}
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
