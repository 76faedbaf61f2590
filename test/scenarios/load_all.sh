#!/usr/bin/env bash
# Every scenario under the conformance directory loads (exit 0), except malformed-* ones,
# which must fail with exit 2, nothing on standard output, and one message naming the
# file, the line and the field ("FILE:LINE: FIELD: ...").
set -u
ksched=$1
dir=$2
[ -d "$dir" ] || { echo "scenario directory not found: $dir"; exit 1; }
pass=0 fail=0
out=$(mktemp) errf=$(mktemp)
trap 'rm -f "$out" "$errf"' EXIT
for f in "$dir"/*.yaml; do
  name=$(basename "$f" .yaml)
  "$ksched" schedule "$f" >"$out" 2>"$errf" </dev/null
  rc=$?
  case "$name" in
  malformed-*)
    if [ $rc -eq 2 ] && [ ! -s "$out" ] && grep -Eq "^ksched: $f:[0-9]+: [A-Za-z][][A-Za-z0-9_./-]*: .+" "$errf"; then
      pass=$((pass + 1))
    else
      fail=$((fail + 1)); echo "FAIL $name: exit $rc, stdout $(wc -c <"$out") bytes, stderr: $(cat "$errf")"
    fi ;;
  *)
    if [ $rc -eq 0 ]; then
      pass=$((pass + 1))
    else
      fail=$((fail + 1)); echo "FAIL $name: exit $rc: $(cat "$errf")"
    fi ;;
  esac
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]
