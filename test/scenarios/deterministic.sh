#!/usr/bin/env bash
# `ksched schedule` prints the same bytes for the same files, flags and --seed: every STRIDE-th
# case of a conformance folder (each run min(RUNS, 2) times: a case of a few pods leaves the
# timing little to decide) and NGEN generated replica-set clusters (gen_replicasets.py, each
# run RUNS times), in each of the four ways (with and without the signature index,
# --parallelism 1 and 2), all against the first run; and --explain in JSON and as tables,
# compared the same way across the four.
#
# usage: deterministic.sh KSCHED CONFORMANCE_DIR [NGEN] [RUNS] [STRIDE]
set -euo pipefail
ksched=$1
conformance=$2
ngen=${3:-40}
runs=${4:-5}
stride=${5:-1}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

files=()
k=0
for f in "$conformance"/*.yaml; do
  if [ $((k % stride)) -eq 0 ]; then
    files+=("$f")
  fi
  k=$((k + 1))
done
for seed in $(seq 1 "$ngen"); do
  "$here/gen_replicasets.py" --seed "$seed" -o "$work/replicasets-$seed.yaml"
  files+=("$work/replicasets-$seed.yaml")
done

ways=("" "--no-index" "--parallelism 1" "--no-index --parallelism 2")
fail=0
compared=0
# run OUT FILE FLAGS...: the command's standard output and error, then its exit status
run() {
  local out=$1 file=$2
  shift 2
  local rc=0
  "$ksched" schedule --seed 1 "$@" "$file" >"$out" 2>&1 || rc=$?
  echo "exit $rc" >>"$out"
}
# same WHAT: the last run's output must be the reference's
same() {
  compared=$((compared + 1))
  if ! cmp -s "$work/ref" "$work/out"; then
    echo "FAIL: $1 differs:"
    diff "$work/ref" "$work/out" | head -10
    fail=1
  fi
}
for f in "${files[@]}"; do
  n=$runs
  case $f in
  "$work"/*) ;;
  *) n=$((runs < 2 ? runs : 2)) ;;
  esac
  run "$work/ref" "$f"
  for r in $(seq 1 "$n"); do
    for w in "${ways[@]}"; do
      # shellcheck disable=SC2086 # a way is a list of flags
      run "$work/out" "$f" $w
      same "$(basename "$f") run $r ${w:-(default)}"
    done
  done
  for extra in "--explain" "-o table" "--explain -o table"; do
    # shellcheck disable=SC2086
    run "$work/ref" "$f" $extra
    for w in "${ways[@]:1}"; do
      # shellcheck disable=SC2086
      run "$work/out" "$f" $extra $w
      same "$(basename "$f") $extra $w"
    done
  done
done
echo "deterministic: ${#files[@]} files, $compared runs compared"
exit $fail
