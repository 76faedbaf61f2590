#!/usr/bin/env bash
# perf/flamegraph.sh WORKLOAD NODES [ksched bench flags...] - a CPU flame graph of the
# measured phase of `ksched bench --workload WORKLOAD --nodes NODES`.
#
# Records with `perf record -F 499 --call-graph dwarf` (the default event, which falls back to
# the cpu-clock software event on machines without hardware counters; -e cpu-clock is forced
# if the default fails), only while the measured pods are being scheduled (perf's control
# fifo: the bench enables recording before the first measured pod is queued and disables it
# once the queue is idle; the script fails if it never did. A perf too old for --control
# records the whole run, says so on stderr and in the title). Frames from `perf script` lose
# their +0x.. offsets so one function is one frame; the npm package `flamegraph` 1.3.0
# (installed on first use into perf/.tools) folds them into an SVG whose `&&` are escaped so
# it is valid XML, titled with the workload, nodes, measured pods, the phase recorded and the
# checkout's commit (git short hash, "+modified" when the tree differs from it, "unknown"
# outside git). Missing tools (perf: Debian's linux-perf; npm) are installed with apt-get.
#
# Environment: KSCHED (binary, default build/ksched: the Release build, which has the
# symbols and debug info the unwinder and the frame names need), PODS (measured pods,
# default 30000: a few seconds of scheduling), OUT (output directory, default perf/out).
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
  npm install --silent --no-audit --no-fund --prefix "$tools" flamegraph@1.3.0 >/dev/null
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
# `perf record -h` exits 129 after printing its usage: read the text, not the status
perf_help=$(perf record -h 2>&1 || true)
if grep -q -- '--control' <<<"$perf_help"; then
  ctl=(--control "fifo:$tmp/ctl,$tmp/ack" -D -1)
  export KSCHED_PERF_CTL=$tmp/ctl KSCHED_PERF_ACK=$tmp/ack
  phase="measured phase"
else
  ctl=()
  echo "flamegraph.sh: this perf has no --control: the whole run is recorded, set-up included" >&2
  phase="whole run, set-up included"
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
# under --control perf logs each state change; the bench must have enabled recording
if [ ${#ctl[@]} -gt 0 ] && ! grep -q 'Events enabled' "$tmp/perf.err"; then
  cat "$tmp/perf.err" >&2
  echo "flamegraph.sh: $ksched never enabled recording (no measured phase, or a binary without perf control)" >&2
  exit 1
fi
cat "$base.bench.txt"

# one frame per function: drop "+0x1f" offsets (and the hex of unknown frames stays as is)
perf script -i "$data" 2>/dev/null | sed -E 's/\+0x[0-9a-f]+ \(/ (/' >"$base.folded-input.txt"
# The package's template leaves its own heading in an XML comment (and unescaped): drop it
# and draw ours in the top margin it reserves (four font sizes), last so it paints on top.
commit=$(git -C "$here/.." rev-parse --short HEAD 2>/dev/null) || commit=unknown
if [ "$commit" != unknown ] && ! git -C "$here/.." diff --quiet HEAD -- 2>/dev/null; then
  commit="$commit+modified"
fi
title="ksched bench $workload, $nodes nodes, $pods measured pods${*:+ ($*)}: $phase, commit $commit"
title_xml=$(sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' <<<"$title")
"$tools/node_modules/.bin/flamegraph" -t perf <"$base.folded-input.txt" |
  sed -e 's/&&/\&amp;\&amp;/g' -e '/^<!--<text text-anchor="middle".*<\/text>-->$/d' -e '/^<\/svg>$/d' >"$base.svg"
printf '<text text-anchor="middle" x="50%%" y="24" font-size="17" font-family="Verdana" fill="rgb(0,0,0)">%s</text>\n</svg>\n' \
  "$title_xml" >>"$base.svg"
if command -v xmllint >/dev/null 2>&1 && ! xmllint --noout "$base.svg" 2>/dev/null; then
  echo "flamegraph.sh: warning: $base.svg is not well-formed XML" >&2
fi
echo "wrote $base.svg"
