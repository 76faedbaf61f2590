#!/usr/bin/env bash
# perf/flamegraph.sh WORKLOAD NODES [ksched bench flags...] - a CPU flame graph of the
# measured phase of `ksched bench --workload WORKLOAD --nodes NODES`.
#
# Records with `perf record -F 499 --call-graph dwarf` (the default event, which falls back to
# the cpu-clock software event on machines without hardware counters; -e cpu-clock is forced
# if the default fails), only while the measured pods are being scheduled (perf's control
# fifo: the bench enables recording before the first measured pod is queued and disables it
# once the queue is idle; a perf too old for --control records the whole run). Frames from
# `perf script` lose their +0x.. offsets so one function is one frame; the npm package
# `flamegraph` (installed on first use into perf/.tools) folds them into an SVG whose `&&`
# are escaped so it is valid XML. Missing tools (perf: Debian's linux-perf; npm) are
# installed with apt-get.
#
# Environment: KSCHED (binary, default build/ksched), PODS (measured pods, default 30000 so
# the profile has a few thousand samples), OUT (output directory, default perf/out).
# Writes OUT/WORKLOAD-NODES.svg and OUT/WORKLOAD-NODES.folded-input.txt (the perf script text).
set -euo pipefail
workload=${1:?usage: perf/flamegraph.sh WORKLOAD NODES [ksched bench flags...]}
nodes=${2:?usage: perf/flamegraph.sh WORKLOAD NODES [ksched bench flags...]}
shift 2
here=$(cd "$(dirname "$0")" && pwd)
ksched=${KSCHED:-$here/../build/ksched}
out=${OUT:-$here/out}
pods=${PODS:-30000}
tools=$here/.tools
mkdir -p "$out"

apt_install() {
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "flamegraph.sh: installing $*" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >/dev/null && $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

command -v perf >/dev/null 2>&1 || apt_install linux-perf || true
if ! command -v perf >/dev/null 2>&1 || ! perf version >/dev/null 2>&1; then
  echo "flamegraph.sh: perf is not available (apt-get install linux-perf); no profile taken" >&2
  exit 1
fi
command -v npm >/dev/null 2>&1 || apt_install nodejs npm
if [ ! -x "$tools/node_modules/.bin/flamegraph" ]; then
  echo "flamegraph.sh: installing the npm package flamegraph into $tools" >&2
  npm install --silent --no-audit --no-fund --prefix "$tools" flamegraph >/dev/null
fi
[ -x "$ksched" ] || { echo "flamegraph.sh: no $ksched (run make first)" >&2; exit 1; }

base=$out/$workload-$nodes
data=$base.perf.data
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkfifo "$tmp/ctl" "$tmp/ack"
bench=("$ksched" bench --workload "$workload" --nodes "$nodes" --pods "$pods" --quiet "$@")

record() { # record EXTRA_PERF_FLAGS...
  perf record -F 499 --call-graph dwarf -o "$data" "$@" -- "${bench[@]}"
}
if perf record -h 2>&1 | grep -q -- '--control'; then
  ctl=(--control "fifo:$tmp/ctl,$tmp/ack" -D -1)
  export KSCHED_PERF_CTL=$tmp/ctl KSCHED_PERF_ACK=$tmp/ack
else
  ctl=()
  echo "flamegraph.sh: this perf has no --control: the whole run is recorded" >&2
fi
if ! record "${ctl[@]}" >"$base.bench.txt" 2>"$tmp/perf.err"; then
  echo "flamegraph.sh: perf record failed with the default event; retrying with -e cpu-clock" >&2
  if ! record -e cpu-clock "${ctl[@]}" >"$base.bench.txt" 2>"$tmp/perf.err"; then
    cat "$tmp/perf.err" >&2
    echo "flamegraph.sh: perf record failed (kernel.perf_event_paranoid is $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo ?))" >&2
    exit 1
  fi
fi
grep -E 'perf record: Captured' "$tmp/perf.err" >&2 || true
cat "$base.bench.txt"

# one frame per function: drop "+0x1f" offsets (and the hex of unknown frames stays as is)
perf script -i "$data" 2>/dev/null | sed -E 's/\+0x[0-9a-f]+ \(/ (/' >"$base.folded-input.txt"
"$tools/node_modules/.bin/flamegraph" -t perf --titletext "ksched bench $workload $nodes nodes ($pods pods)" \
  <"$base.folded-input.txt" | sed 's/&&/\&amp;\&amp;/g' >"$base.svg"
if command -v xmllint >/dev/null 2>&1 && ! xmllint --noout "$base.svg" 2>/dev/null; then
  echo "flamegraph.sh: warning: $base.svg is not well-formed XML" >&2
fi
echo "wrote $base.svg"
