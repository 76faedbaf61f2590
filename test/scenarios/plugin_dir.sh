#!/usr/bin/env bash
# `ksched schedule --plugin-dir` loads the example out-of-tree plugin into the real
# binary, a configuration enables it, and its Filter and Score decide: node "a" is
# filtered by the plugin's label check and "c" (preference 9) beats "b" (preference 3).
# A directory holding a plugin built for another ABI is rejected with exit 2.
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
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
