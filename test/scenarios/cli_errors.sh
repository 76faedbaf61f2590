#!/usr/bin/env bash
# Each bad input under DATA/bad/ must make `ksched schedule` exit 2 with nothing on
# standard output and a standard-error line containing the text after "# expect: " on the
# file's first line ({file} stands for the file's path). Each good input under DATA/good/
# must load with exit 0.
set -u
ksched=$1
data=$2
pass=0 fail=0
out=$(mktemp) errf=$(mktemp)
trap 'rm -f "$out" "$errf"' EXIT
for f in "$data"/bad/*.yaml; do
  want=$(head -n1 "$f" | sed -n 's/^# expect: //p')
  want=${want//\{file\}/$f}
  "$ksched" schedule "$f" >"$out" 2>"$errf" </dev/null
  rc=$?
  if [ $rc -eq 2 ] && [ ! -s "$out" ] && [ -n "$want" ] && grep -qF -- "$want" "$errf"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL $(basename "$f"): exit $rc, want \"$want\", got: $(cat "$errf")"
  fi
done
for f in "$data"/good/*.yaml; do
  if "$ksched" schedule "$f" >"$out" 2>"$errf" </dev/null; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1)); echo "FAIL $(basename "$f"): $(cat "$errf")"
  fi
done
# usage errors
if "$ksched" schedule >/dev/null 2>&1; then fail=$((fail + 1)); echo "FAIL: no files accepted"; else pass=$((pass + 1)); fi
"$ksched" schedule --no-such-flag x.yaml >"$out" 2>&1
[ $? -eq 2 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: unknown flag not exit 2"; }
"$ksched" schedule /nonexistent/file.yaml >"$out" 2>"$errf"
if [ $? -eq 2 ] && grep -qF "/nonexistent/file.yaml:0: cannot open" "$errf"; then pass=$((pass + 1)); else
  fail=$((fail + 1)); echo "FAIL: missing file: $(cat "$errf")"; fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
