#!/usr/bin/env bash
# The ksched command line itself: every command listed by `ksched --help` answers -h,
# --help and `ksched help CMD` with its usage on standard output (exit 0, nothing on
# standard error) and a usage error with exit 2 on standard error; `ksched --version`
# prints the project's version and the commit the binary was built from; "-" is standard
# input (named STDIN in errors, as kubectl names it); `ksched config` alone is a usage error.
# usage: cli_usage.sh KSCHED VERSION SOURCE_DIR
set -u
ksched=$1 version=$2 src=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# run NAME WANT_RC ARGS...: runs ksched with ARGS (standard input from $dir/in when it
# exists), leaves $dir/out, $dir/err and $rc.
run() {
  local input=/dev/null
  [ -e "$dir/in" ] && input=$dir/in
  "$ksched" "$@" <"$input" >"$dir/out" 2>"$dir/err"
  rc=$?
}

# help_ok NAME ARGS...: exit 0, usage on standard output, standard error empty.
help_ok() {
  local name=$1 want=$2
  shift 2
  run "$@"
  if [ $rc -eq 0 ] && [ ! -s "$dir/err" ] && head -n1 "$dir/out" | grep -q "^usage: $want"; then ok; else
    bad "$name: exit $rc, stdout: $(head -c 200 "$dir/out"), stderr: $(head -c 200 "$dir/err")"; fi
}

# usage_error NAME TEXT ARGS...: exit 2, nothing on standard output, TEXT on standard error.
usage_error() {
  local name=$1 want=$2
  shift 2
  run "$@"
  if [ $rc -eq 2 ] && [ ! -s "$dir/out" ] && grep -qF -- "$want" "$dir/err"; then ok; else
    bad "$name: exit $rc, want \"$want\" on stderr, stdout: $(head -c 200 "$dir/out"), stderr: $(head -c 300 "$dir/err")"; fi
}

# ---- the command list and each command's help ----------------------------------------------
help_ok "ksched --help" "ksched COMMAND" --help
help_ok "ksched -h" "ksched COMMAND" -h
help_ok "ksched help" "ksched COMMAND" help
commands=$(sed -n '/^commands:/,/^$/{s/^  \([a-z]*\) .*/\1/p}' "$dir/out")
for want in schedule config serve bench soak version; do
  grep -qx "$want" <<<"$commands" && ok || bad "ksched --help does not list $want: $commands"
done
for cmd in $commands; do
  help_ok "$cmd --help" "ksched $cmd" "$cmd" --help
  cp "$dir/out" "$dir/help"
  help_ok "$cmd -h" "ksched $cmd" "$cmd" -h
  cmp -s "$dir/out" "$dir/help" && ok || bad "$cmd: -h and --help differ"
  help_ok "help $cmd" "ksched $cmd" help "$cmd"
  cmp -s "$dir/out" "$dir/help" && ok || bad "$cmd: \`ksched help $cmd\` and \`$cmd --help\` differ"
  usage_error "$cmd unknown flag" "--no-such-flag" "$cmd" --no-such-flag
done
# --help after other arguments still only prints the usage (serve does not connect)
help_ok "schedule --seed 1 --help" "ksched schedule" schedule --seed 1 --help
help_ok "serve --kubeconfig F --help" "ksched serve" serve --kubeconfig /nonexistent/kubeconfig --help
help_ok "bench --nodes 5 -h" "ksched bench" bench --nodes 5 -h
help_ok "config --print --help" "ksched config" config --print --help
# the usage texts name every flag their parsers take
flags_listed() {
  local cmd=$1 flag
  shift
  run "$cmd" --help
  for flag in "$@"; do
    grep -qF -- "$flag" "$dir/out" && ok || bad "$cmd --help lacks $flag"
  done
}
flags_listed schedule --config --feature-gates --explain --seed --plugin-dir --validate --output --no-index
flags_listed config --print --config --feature-gates
flags_listed serve --kubeconfig --config --leader-elect --metrics-addr --bind-address --seed --identity --binders \
  --secure-port --cert-dir --tls-cert-file --tls-private-key-file --tls-min-version \
  --authorization-always-allow-paths --authentication-token-webhook-cache-ttl \
  --authorization-webhook-cache-authorized-ttl --authorization-webhook-cache-unauthorized-ttl \
  --lease-duration --renew-deadline --retry-period --lock-namespace --lock-name --feature-gates \
  --leader-elect-lease-duration --leader-elect-renew-deadline --leader-elect-retry-period \
  --leader-elect-resource-namespace --leader-elect-resource-name --no-index
flags_listed bench --workload --nodes --size --pods --existing-pods --config --feature-gates --seed --parallelism \
  --binders --json --check --quiet --list --no-index
flags_listed soak --nodes --pods --seconds --seed --bind-failure-rate --node-delete-rate --check-every \
  --parallelism --binders --max-pods-per-node --max-bound --json --verbose --no-index

# ---- no command, unknown commands ------------------------------------------------------------
usage_error "no command" "usage: ksched COMMAND"
usage_error "unknown command" 'ksched: unknown command "nope"' nope
usage_error "help unknown command" 'ksched help: unknown command "nope"' help nope
usage_error "version with an argument" 'ksched version: unknown argument "extra"' version extra

# ---- --version ---------------------------------------------------------------------------------
run --version
line=$(cat "$dir/out")
if [ $rc -eq 0 ] && [ ! -s "$dir/err" ] &&
   [[ $line =~ ^ksched\ ([0-9]+\.[0-9]+\.[0-9]+)\ \(commit\ ([0-9a-f]{12}(-dirty)?|unknown)\)$ ]]; then
  ok
  [ "${BASH_REMATCH[1]}" = "$version" ] && ok || bad "--version says ${BASH_REMATCH[1]}, the project is $version"
  commit=${BASH_REMATCH[2]%-dirty}
  # the commit of the tree the binary was built from: HEAD's, or unknown outside a git checkout
  top=$(git -C "$src" rev-parse --show-toplevel 2>/dev/null || true)
  if [ -n "$top" ] && [ "$(realpath "$top")" = "$(realpath "$src")" ]; then
    # HEAD's, or one before it when commits landed after the build (never one outside the history)
    head=$(git -C "$src" rev-parse --short=12 HEAD)
    if [ "$commit" = "$head" ] || git -C "$src" merge-base --is-ancestor "$commit" HEAD 2>/dev/null; then ok; else
      bad "--version names commit $commit, which is not HEAD ($head) nor before it"; fi
  else
    [ "$commit" = unknown ] && ok || bad "--version names commit $commit outside a git checkout"
  fi
else
  bad "--version: exit $rc, \"$line\", stderr: $(cat "$dir/err")"
fi
run version
[ "$(cat "$dir/out")" = "$line" ] && ok || bad "\`ksched version\` differs from --version: $(cat "$dir/out")"

# ---- "-" is standard input ---------------------------------------------------------------------
cat >"$dir/cluster.yaml" <<'EOF'
apiVersion: v1
kind: Node
metadata:
  name: n1
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: default
spec:
  containers:
  - name: c
    image: x
    resources:
      requests: {cpu: "1"}
EOF
cp "$dir/cluster.yaml" "$dir/in"
run schedule -
if [ $rc -eq 0 ] && [ "$(cat "$dir/out")" = '{"pod":"default/web","status":"Scheduled","node":"n1"}' ]; then ok; else
  bad "schedule - (a cluster piped in): exit $rc, $(cat "$dir/out") $(cat "$dir/err")"; fi
printf 'apiVersion: v1\nkind: Node\nmetadata:\n  name: n2\nstatus:\n  allocatable: {cpu: "4", pods: "9"}\n' >"$dir/node2.yaml"
run schedule "$dir/node2.yaml" -
if [ $rc -eq 0 ] && grep -q '"status":"Scheduled"' "$dir/out"; then ok; else
  bad "schedule FILE - : exit $rc, $(cat "$dir/out") $(cat "$dir/err")"; fi
printf 'apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\nstatus:\n  allocatable: {cpu: "-4"}\n' >"$dir/in"
usage_error "schedule - (bad input piped in)" 'ksched: STDIN:6: status.allocatable.cpu: ' schedule -
[ "$(wc -l <"$dir/err")" -eq 1 ] && ok || bad "bad input on standard input: more than one line: $(cat "$dir/err")"
printf 'kind: [\n' >"$dir/in"
usage_error "schedule - (bad YAML piped in)" 'ksched: STDIN:2: invalid YAML' schedule -
usage_error "schedule - -" "standard input (-) given more than once" schedule - -
usage_error "schedule --config - -" "standard input (-) given more than once" schedule --config - -
cat >"$dir/in" <<'EOF'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 42
EOF
cp "$dir/in" "$dir/config.yaml"
run config --print --config -
cp "$dir/out" "$dir/piped"
rm "$dir/in"
run config --print --config "$dir/config.yaml"
if [ $rc -eq 0 ] && grep -q "percentageOfNodesToScore: 42" "$dir/piped" && cmp -s "$dir/piped" "$dir/out"; then ok; else
  bad "config --print --config - differs from the file: $(diff "$dir/piped" "$dir/out" | head -5)"; fi
cp "$dir/config.yaml" "$dir/in"
run schedule --config - "$dir/cluster.yaml"
[ $rc -eq 0 ] && grep -q '"status":"Scheduled"' "$dir/out" && ok || bad "schedule --config - FILE: $(cat "$dir/err")"
printf 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nparallelism: -1\n' >"$dir/in"
usage_error "config - (bad configuration piped in)" "ksched: STDIN:3: parallelism: " config -
rm "$dir/in"

# ---- value flags take "--flag VALUE" and "--flag=VALUE" alike, as pflag does --------------------
run schedule --config "$dir/config.yaml" --seed 7 "$dir/cluster.yaml"
cp "$dir/out" "$dir/spaced"
run schedule --config="$dir/config.yaml" --seed=7 "$dir/cluster.yaml"
[ $rc -eq 0 ] && [ -s "$dir/out" ] && cmp -s "$dir/out" "$dir/spaced" && ok ||
  bad "schedule --config=F --seed=7: exit $rc, $(cat "$dir/out") $(cat "$dir/err")"
usage_error "schedule --seed=-1" 'ksched schedule: --seed: invalid number "-1"' schedule --seed=-1 "$dir/cluster.yaml"
usage_error "schedule --config (no value)" "ksched schedule: flag needs an argument: --config" schedule "$dir/cluster.yaml" --config
run bench --workload=SchedulingBasic --list
[ $rc -eq 0 ] && grep -q "performance" "$dir/out" && ok || bad "bench --workload=NAME --list: exit $rc, $(cat "$dir/err")"
usage_error "bench --nodes=x" 'ksched bench: --nodes: invalid number "x"' bench --workload SchedulingBasic --nodes=x
usage_error "bench --nodes (no value)" "ksched bench: flag needs an argument: --nodes" bench --workload SchedulingBasic --nodes

# ---- config needs something to do -----------------------------------------------------------
usage_error "config alone" "ksched config: nothing to do" config
grep -q "^usage: ksched config" "$dir/err" && ok || bad "config alone: no usage on stderr"
usage_error "config --feature-gates alone" "ksched config: nothing to do" config --feature-gates DefaultPodTopologySpread=true
run config --config "$dir/config.yaml"
[ $rc -eq 0 ] && [ ! -s "$dir/out" ] && [ ! -s "$dir/err" ] && ok || bad "config FILE (validate): exit $rc, $(cat "$dir/err")"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
