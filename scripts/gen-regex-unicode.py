#!/usr/bin/env python3
"""gen-regex-unicode.py - the Unicode tables of cel/cel_regex_unicode.c (general categories,
scripts, simple case folding) from the Unicode Character Database.

Usage: scripts/gen-regex-unicode.py [UCD_DIR [GO_FOLDS]]

Rewrites the part of cel/cel_regex_unicode.c between BEGIN GENERATED and END GENERATED;
run clang-format -i on it afterwards (the committed file is formatted).
UCD_DIR defaults to /usr/share/unicode (Debian's unicode-data package); GO_FOLDS, a dump of
Go's unicode.SimpleFold ("RUNE FOLD" in hex per line), is compared with the folds made.
"""
import re, sys
from collections import defaultdict

UCD = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/unicode"
MAXR = 0x10FFFF

def ranges_of(points):
    pts = sorted(points)
    out = []
    for p in pts:
        if out and out[-1][1] + 1 == p:
            out[-1][1] = p
        else:
            out.append([p, p])
    return out

def merge(rs):
    rs = sorted(rs)
    out = []
    for lo, hi in rs:
        if out and lo <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return out

# General categories from UnicodeData.txt (with First/Last ranges).
cat = defaultdict(list)
first = None
for line in open(f"{UCD}/UnicodeData.txt"):
    f = line.split(";")
    cp = int(f[0], 16); name = f[1]; gc = f[2]
    if name.endswith(", First>"):
        first = cp; continue
    if name.endswith(", Last>"):
        cat[gc].append([first, cp]); first = None; continue
    cat[gc].append([cp, cp])
cats = {k: merge(v) for k, v in cat.items()}
assigned = merge([r for v in cats.values() for r in v])
cn = []
nxt = 0
for lo, hi in assigned:
    if nxt < lo: cn.append([nxt, lo - 1])
    nxt = hi + 1
if nxt <= MAXR: cn.append([nxt, MAXR])
cats["Cn"] = cn
# The one-letter categories (C with Cn, as in Go 1.25) and LC, merged.
for major in "CLMNPSZ":
    cats[major] = merge([r for k, v in list(cats.items()) if len(k) == 2 and k[0] == major for r in v])
cats["LC"] = merge(cats["Lu"] + cats["Ll"] + cats["Lt"])

# Scripts.txt
scr = defaultdict(list)
for line in open(f"{UCD}/Scripts.txt"):
    line = line.split("#")[0].strip()
    if not line: continue
    rng, name = [x.strip() for x in line.split(";")]
    if ".." in rng:
        a, b = rng.split("..")
        scr[name].append([int(a, 16), int(b, 16)])
    else:
        scr[name].append([int(rng, 16)] * 2)
scripts = {k: merge(v) for k, v in scr.items()}

# Category aliases from PropertyValueAliases.txt.
aliases = {}
for line in open(f"{UCD}/PropertyValueAliases.txt"):
    line = line.split("#")[0].strip()
    if not line.startswith("gc"): continue
    f = [x.strip() for x in line.split(";")]
    short = f[1]
    for a in f[2:]:
        aliases[a] = short

# Simple case folding orbits from CaseFolding.txt, statuses C and S.
cls = defaultdict(set)
for line in open(f"{UCD}/CaseFolding.txt"):
    line = line.split("#")[0].strip()
    if not line: continue
    f = [x.strip() for x in line.split(";")]
    if f[1] not in ("C", "S"): continue
    a = int(f[0], 16); b = int(f[2], 16)
    cls[b].add(a); cls[b].add(b)
nextfold = {}
for k, members in cls.items():
    m = sorted(members)
    for i, r in enumerate(m):
        nextfold[r] = m[(i + 1) % len(m)]

def canon(name):
    out = []
    first = True
    for c in name:
        if c in "_- ":
            continue
        if first:
            out.append(c.upper()); first = False
        else:
            out.append(c.lower())
    return "".join(out)

out = []
w = out.append
allr = []
def add_table(rs):
    off = len(allr)
    allr.extend(rs)
    return off, len(rs)

cat_entries = []
for k in sorted(cats):
    off, n = add_table(cats[k])
    cat_entries.append((k, off, n))
scr_entries = []
for k in sorted(scripts, key=canon):
    off, n = add_table(scripts[k])
    scr_entries.append((canon(k), off, n))
w("static const uint32_t re_ranges[][2] = {")
line = ""
for lo, hi in allr:
    item = "{0x%X, 0x%X}," % (lo, hi)
    if len(line) + len(item) + 1 > 104:
        w("    " + line.rstrip()); line = ""
    line += item + " "
if line: w("    " + line.rstrip())
w("};")
w("")
w("/* The general categories by name: the two-letter ones (Cn: every code point none of the others")
w(" * holds), the one-letter unions (C includes Cn) and LC (Lu | Ll | Lt). */")
w("static const struct re_utable re_categories[] = {")
for k, off, n in cat_entries:
    w('    {"%s", %d, %d},' % (k, off, n))
w("};")
w("")
w("/* The scripts, by canonical name (see canonical_name()). */")
w("static const struct re_utable re_scripts[] = {")
for k, off, n in scr_entries:
    w('    {"%s", %d, %d},' % (k, off, n))
w("};")
w("")
w("/* Aliases of the general categories, by canonical name, and the category each names. */")
w("static const struct re_ualias re_category_aliases[] = {")
for a in sorted(aliases, key=canon):
    w('    {"%s", "%s"},' % (canon(a), aliases[a]))
w("};")
w("")
w("/* Simple case folding: each code point with a non-trivial orbit and the next larger one in it")
w(" * (the smallest after the largest). */")
w("const uint32_t ks__re_fold_next[][2] = {")
line = ""
for r in sorted(nextfold):
    item = "{0x%X, 0x%X}," % (r, nextfold[r])
    if len(line) + len(item) + 1 > 104:
        w("    " + line.rstrip()); line = ""
    line += item + " "
if line: w("    " + line.rstrip())
w("};")
w("const size_t ks__re_fold_count = sizeof(ks__re_fold_next) / sizeof(ks__re_fold_next[0]);")
import os
target = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cel", "cel_regex_unicode.c")
src = open(target).read()
a = src.index("/* BEGIN GENERATED */\n") + len("/* BEGIN GENERATED */\n")
b = src.index("/* END GENERATED */")
open(target, "w").write(src[:a] + "\n".join(out) + "\n" + src[b:])
sys.stderr.write("ranges %d cats %d scripts %d aliases %d folds %d\n" % (len(allr), len(cat_entries), len(scr_entries), len(aliases), len(nextfold)))

# Check against Go's SimpleFold dump when given.
if len(sys.argv) > 2:
    age = {}
    for line in open(f"{UCD}/DerivedAge.txt"):
        line = line.split("#")[0].strip()
        if not line: continue
        rng, v = [x.strip() for x in line.split(";")]
        a, _, b = rng.partition("..")
        b = b or a
        for c in range(int(a, 16), int(b, 16) + 1):
            age[c] = tuple(int(x) for x in v.split("."))
    gof = {}
    for line in open(sys.argv[2]):
        a, b = line.split()
        gof[int(a, 16)] = int(b, 16)
    bad = 0
    for r in set(gof) | set(nextfold):
        if age.get(r, (99,)) > (13, 0): continue
        if gof.get(r, r) != nextfold.get(r, r):
            # orbit may include a newer char
            bad += 1
            if bad < 20: sys.stderr.write("diff %X go=%X mine=%X\n" % (r, gof.get(r, r), nextfold.get(r, r)))
    sys.stderr.write("fold diffs vs go: %d\n" % bad)
