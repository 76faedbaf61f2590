#!/usr/bin/env python3
"""layers.py SOURCE_DIR - the ground floor includes nothing above it.

Every file of base/ and every header of the ground floor (include/ksched/<name>.h for each
base/<name>.c, and the header-only futex.h and spin.h) may include, of ksched's own headers,
only ground-floor headers. Prints each include that breaks the rule and exits 1 if any does."""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
base = os.path.join(root, "base")
floor = {f[:-2] + ".h" for f in os.listdir(base) if f.endswith(".c")} | {"futex.h", "spin.h"}
files = [os.path.join(base, f) for f in sorted(os.listdir(base)) if f.endswith((".c", ".h"))]
files += [os.path.join(root, "include", "ksched", h) for h in sorted(floor)]
bad = 0
for path in files:
    if not os.path.exists(path):
        print("%s: missing (a ground-floor file needs its header)" % os.path.relpath(path, root))
        bad += 1
        continue
    for n, line in enumerate(open(path), 1):
        m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
        if not m:
            continue
        inc = m.group(1)
        name = inc[len("ksched/"):] if inc.startswith("ksched/") else inc
        if name not in floor:
            print("%s:%d: includes %s, which is not on the ground floor" % (os.path.relpath(path, root), n, inc))
            bad += 1
print("%d ground-floor files checked, %d includes from above" % (len(files), bad))
sys.exit(1 if bad else 0)
