#!/usr/bin/env python3
"""layers.py SOURCE_DIR - the layers of include/ksched/ include nothing above them.

Three layers, lowest first:
  base      base/*.c and include/ksched/base/*.h: the ground floor (locks, RCU, workers, metrics
            registry, arenas, interning, errors, flags); includes only ground-floor headers.
  sdk       include/ksched/*.h: the plugin SDK, what an out-of-tree plugin includes; includes only
            SDK and ground-floor headers. The example plugins (test/plugin_example/) are held to the
            same rule, since they are built as an out-of-tree plugin is.
  internal  include/ksched/internal/*.h: the engine's own module interfaces; may include anything.
Every base/<name>.c has its header include/ksched/base/<name>.h. Prints each include that breaks a
rule and exits 1 if any does."""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
inc_dir = os.path.join(root, "include", "ksched")


def listing(d, exts):
    return [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.endswith(exts)]


def layer_of(name):
    """The layer of ksched header @name as written in an #include, or None for a local header."""
    if name.startswith("ksched/base/"):
        return "base"
    if name.startswith("ksched/internal/"):
        return "internal"
    if name.startswith("ksched/"):
        return "sdk"
    return None


base_dir = os.path.join(root, "base")
allowed = {"base": {"base"}, "sdk": {"base", "sdk"}}
checks = [(p, "base") for p in listing(base_dir, (".c", ".h")) + listing(os.path.join(inc_dir, "base"), ".h")]
checks += [(p, "sdk") for p in listing(inc_dir, ".h")]
checks += [(p, "sdk") for p in listing(os.path.join(root, "test", "plugin_example"), ".c")]
bad = 0
for f in os.listdir(base_dir):
    if f.endswith(".c") and not os.path.exists(os.path.join(inc_dir, "base", f[:-2] + ".h")):
        print("base/%s: no header include/ksched/base/%s.h" % (f, f[:-2]))
        bad += 1
for path, layer in checks:
    for n, line in enumerate(open(path), 1):
        m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
        if not m:
            continue
        to = layer_of(m.group(1))
        if to is not None and to not in allowed[layer]:
            print("%s:%d: includes %s: the %s layer includes only %s headers"
                  % (os.path.relpath(path, root), n, m.group(1), layer, " and ".join(sorted(allowed[layer]))))
            bad += 1
print("%d files checked, %d includes from a layer above" % (len(checks), bad))
sys.exit(1 if bad else 0)
