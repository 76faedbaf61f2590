#!/usr/bin/env bash
# `ksched schedule --plugin-dir` loads the example out-of-tree plugin into the real
# binary, a configuration enables it, and its Filter and Score decide: node "a" is
# filtered by the plugin's label check and "c" (preference 9) beats "b" (preference 3).
# A directory holding a plugin built for another ABI is rejected with exit 2. A folder is
# all or nothing: with one good and two bad objects, start-up fails (exit 2, nothing on
# standard output) with one line per bad object (the file and why) and a closing line
# saying none was loaded; two objects with one plugin name fail the same way.
set -u
ksched=$1 plugin=$2 broken=$3 data=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/good" "$dir/bad"
cp "$plugin" "$dir/good/"
cp "$broken" "$dir/bad/"
pass=0 fail=0
out=$("$ksched" schedule --plugin-dir "$dir/good" --config "$data/config.yaml" --explain --seed 1 "$data/cluster.yaml" 2>&1)
if grep -q '"a":"node(s) had label example.com/avoid=true"' <<<"$out" &&
   grep -q '"status":"Scheduled","node":"c"' <<<"$out" && grep -q '"NodeLabelPreference":500' <<<"$out"; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL plugin run: $out"
fi
"$ksched" schedule --plugin-dir "$dir/bad" "$data/cluster.yaml" >"$dir/stdout" 2>"$dir/stderr"
if [ $? -eq 2 ] && [ ! -s "$dir/stdout" ] && grep -qi "abi" "$dir/stderr"; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL wrong ABI: $(cat "$dir/stderr")"
fi
"$ksched" schedule --config "$data/config.yaml" "$data/cluster.yaml" >"$dir/stdout" 2>"$dir/stderr"
if [ $? -eq 2 ] && grep -q "NodeLabelPreference" "$dir/stderr"; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL unknown plugin without --plugin-dir: $(cat "$dir/stderr")"
fi
# one good object and two bad ones (another ABI; not a shared object at all)
mkdir "$dir/mixed"
cp "$plugin" "$dir/mixed/20-good.so"
cp "$broken" "$dir/mixed/10-abi.so"
echo "not an ELF object" >"$dir/mixed/30-junk.so"
"$ksched" schedule --plugin-dir "$dir/mixed" "$data/cluster.yaml" >"$dir/stdout" 2>"$dir/stderr"
rc=$?
want=("ksched: $dir/mixed/10-abi.so:0: plugin \"BrokenAbi\" was built for plugin ABI version 999"
      "ksched: $dir/mixed/30-junk.so:0: cannot load plugin: "
      "ksched: $dir/mixed:0: 2 of 3 shared objects cannot be loaded as plugins, so none was loaded")
mapfile -t got <"$dir/stderr"
if [ $rc -eq 2 ] && [ ! -s "$dir/stdout" ] && [ ${#got[@]} -eq 3 ] && [[ ${got[0]} == "${want[0]}"* ]] &&
   [[ ${got[1]} == "${want[1]}"* ]] && [ "${got[2]}" = "${want[2]}" ] && ! grep -q "20-good" "$dir/stderr"; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL one good, two bad: exit $rc, stderr: $(cat "$dir/stderr")"
fi
# the same plugin twice under two names
mkdir "$dir/twice"
cp "$plugin" "$dir/twice/a.so"
cp "$plugin" "$dir/twice/b.so"
"$ksched" schedule --plugin-dir "$dir/twice" --config "$data/config.yaml" "$data/cluster.yaml" >"$dir/stdout" 2>"$dir/stderr"
if [ $? -eq 2 ] && [ ! -s "$dir/stdout" ] &&
   grep -qxF "ksched: $dir/twice/b.so:0: a plugin named NodeLabelPreference is also in $dir/twice/a.so" "$dir/stderr" &&
   grep -qF "1 of 2 shared objects cannot be loaded" "$dir/stderr"; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL one plugin twice: $(cat "$dir/stderr")"
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
