#!/usr/bin/env bash
# each_once.sh MICROBENCH - run every micro-benchmark of the binary once, as the plain
# `ksched-microbench` of the README does but with --benchmark_min_time=0 (Google Benchmark
# 1.7: each body runs a single iteration), so a benchmark that aborts, hangs or breaks the
# ones after it fails `make test` in seconds. Checks that the binary exits 0, that every
# benchmark it lists reported a result, and that the only errors are a plugin's PreFilter
# or PreScore returning Skip for the pod (the harness reports those as skipped on purpose).
# Never checks the speed.
set -uo pipefail
bin=${1:?usage: each_once.sh MICROBENCH}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bin" --benchmark_list_tests >"$tmp/listed" || { echo "FAIL: $bin --benchmark_list_tests"; exit 1; }
"$bin" --benchmark_min_time=0 --benchmark_color=false >"$tmp/out" 2>"$tmp/err"
rc=$?
failed=0
if [ "$rc" -ne 0 ]; then
  echo "FAIL: $bin exited with status $rc; its last lines:"
  tail -n 5 "$tmp/out" "$tmp/err" | sed 's/^/     /'
  failed=1
fi
# result lines start with a listed name followed by blanks
awk '{ print $1 }' "$tmp/out" | sort -u >"$tmp/reported"
missing=$(sort -u "$tmp/listed" | comm -23 - "$tmp/reported")
if [ -n "$missing" ]; then
  echo "FAIL: benchmarks that reported nothing:"
  printf '%s\n' "$missing" | sed 's/^/     /'
  failed=1
fi
errors=$(grep 'ERROR OCCURRED' "$tmp/out" | grep -v -E "'Pre(Filter|Score) returned Skip for this pod'$")
if [ -n "$errors" ]; then
  echo "FAIL: benchmarks that stopped with an error:"
  printf '%s\n' "$errors" | sed 's/^/     /'
  failed=1
fi
listed=$(wc -l <"$tmp/listed")
[ "$listed" -gt 0 ] || { echo "FAIL: $bin lists no benchmarks"; exit 1; }
skipped=$(grep -c 'ERROR OCCURRED' "$tmp/out")
echo "$listed benchmarks listed, $((listed - $(printf '%s' "$missing" | grep -c .))) reported ($skipped skipped: Skip for the pod)"
[ "$failed" -eq 0 ]
