#!/usr/bin/env bash
# fuzz.sh - build the libFuzzer targets (test/fuzz) with clang and fuzz each for a bounded time.
#
#   scripts/fuzz.sh [BUILD_DIR] [TARGET...]     (default build/fuzz, every target)
#   FUZZ_SECONDS=60   seconds per target (-max_total_time)
#   FUZZ_ARGS=...     extra libFuzzer flags for every target (e.g. -jobs=2 -workers=2)
#
# Each target starts from its checked-in corpus (test/fuzz/corpus/<target>, read only) and
# writes new inputs to BUILD_DIR/corpus/<target>; a crash, leak, timeout or broken contract
# leaves BUILD_DIR/artifacts/<target>/crash-* (or leak-*, timeout-*) and makes the script
# exit 1 after the summary. The summary gives per target the executions per second and the
# total executions from libFuzzer's final stats (-print_final_stats=1).
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build/fuzz}
shift $(( $# > 0 ? 1 : 0 ))
SECONDS_EACH=${FUZZ_SECONDS:-60}
CC_FUZZ=${CC_FUZZ:-$(command -v clang-14 || command -v clang || true)}
if [ -z "$CC_FUZZ" ]; then
    echo "fuzz.sh: clang not found (scripts/deps.sh installs clang and libclang-rt-14-dev)" >&2
    exit 2
fi

cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER="$CC_FUZZ" -DKS_FUZZ=ON \
    >"$BUILD.cmake.log" 2>&1 || { cat "$BUILD.cmake.log" >&2; exit 2; }
rm -f "$BUILD.cmake.log"
cmake --build "$BUILD" -j "${JOBS:-2}" >/dev/null || { cmake --build "$BUILD" -j 1; exit 2; }

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    for bin in "$BUILD"/test/fuzz/fuzz_*; do
        [ -x "$bin" ] && targets+=("$(basename "$bin" | sed 's/^fuzz_//')")
    done
fi

# inputs past these sizes only slow the search down
max_len() {
    case $1 in
    quantity) echo 128 ;;
    selector) echo 4096 ;;
    *) echo 16384 ;;
    esac
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=0
summary=()
for t in "${targets[@]}"; do
    bin=$BUILD/test/fuzz/fuzz_$t
    seeds=$ROOT/test/fuzz/corpus/$t
    work=$BUILD/corpus/$t
    art=$BUILD/artifacts/$t
    log=$BUILD/fuzz_$t.log
    [ -x "$bin" ] || { echo "fuzz.sh: no target $t" >&2; exit 2; }
    mkdir -p "$work" "$art"
    dict=()
    [ -f "$ROOT/test/fuzz/$t.dict" ] && dict=(-dict="$ROOT/test/fuzz/$t.dict")
    # shellcheck disable=SC2086
    "$bin" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -max_len="$(max_len "$t")" \
        -print_final_stats=1 -artifact_prefix="$art/" "${dict[@]}" ${FUZZ_ARGS:-} "$work" "$seeds" \
        >"$log" 2>&1
    rc=$?
    execs=$(grep -h 'stat::number_of_executed_units' "$log" | awk '{s += $2} END {print s + 0}')
    rate=$(grep -h 'stat::average_exec_per_sec' "$log" | awk '{s += $2} END {print s + 0}')
    units=$(grep -h 'stat::new_units_added' "$log" | awk '{s += $2} END {print s + 0}')
    corpus=$(find "$work" -type f | wc -l)
    line=$(printf '%-12s %9s exec/s %12s execs %6s new units %6s corpus files  %ss' "$t" "$rate" "$execs" \
        "$units" "$corpus" "$SECONDS_EACH")
    if [ $rc -ne 0 ]; then
        failed=1
        line="$line  FAILED (exit $rc, log $log)"
        grep -E 'ERROR|SUMMARY|contract broken|runtime error|Test unit written' "$log" | head -8 >&2
    fi
    summary+=("$line")
    echo "$line"
done
printf '%s\n' "${summary[@]}" >"$BUILD/summary.txt"
echo "fuzz: ${#targets[@]} targets, $([ $failed -eq 0 ] && echo 'no failures' || echo 'FAILURES: see above')"
exit $failed
