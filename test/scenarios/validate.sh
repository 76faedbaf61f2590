#!/usr/bin/env bash
# `ksched schedule --validate` and the kinds it skips, through the real binary (DATA is
# test/data): unknown and duplicate fields warn by default and schedule as before, fail
# under strict (exit 2, nothing on standard output), say nothing under ignore; a cluster
# dump's other kinds and custom resources are skipped with one note; a name that is no
# kind is an error.
set -u
ksched=$1
data=$2
dir=$data/validate
pass=0 fail=0
out=$(mktemp) errf=$(mktemp) tmp=$(mktemp -d)
trap 'rm -rf "$out" "$errf" "$tmp"' EXIT

# run WANT_RC WANT_STDOUT WANT_STDERR ARGS...: exact exit status, standard output and error
run() {
  local want_rc=$1 want_out=$2 want_err=$3
  shift 3
  "$ksched" schedule "$@" >"$out" 2>"$errf" </dev/null
  local rc=$?
  if [ $rc -eq "$want_rc" ] && [ "$(cat "$out")" = "$want_out" ] && [ "$(cat "$errf")" = "$want_err" ]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    printf 'FAIL schedule %s: exit %s (want %s)\n--- stdout:\n%s\n--- want:\n%s\n--- stderr:\n%s\n--- want:\n%s\n' \
      "$*" "$rc" "$want_rc" "$(cat "$out")" "$want_out" "$(cat "$errf")" "$want_err"
  fi
}

t=$dir/typos.yaml
big='{"pod":"default/big","status":"Scheduled","node":"n1"}'
typo_warnings="ksched: warning: $t:17: spec.nodeSelecter: unknown field \"nodeSelecter\"
ksched: warning: $t:21: spec.containers[0].resouces: unknown field \"resouces\"
ksched: warning: $t:25: spec.containers[1].requests: unknown field \"requests\""
typo_error="ksched: $t:17: spec.nodeSelecter: unknown field \"nodeSelecter\""
run 0 "$big" "$typo_warnings" "$t"
run 0 "$big" "$typo_warnings" --validate=warn "$t"
run 2 "" "$typo_error" --validate=strict "$t"
run 2 "" "$typo_error" --validate strict "$t"
run 2 "" "$typo_error" --validate=true "$t"
run 2 "" "$typo_error" --validate "$t" # bare: strict, as kubectl's
run 0 "$big" "" --validate=ignore "$t"
run 0 "$big" "" --validate=false "$t"
run 2 "" 'ksched schedule: --validate: invalid value "yes"; must be one of: strict (or true), warn, ignore (or false)' \
  --validate=yes "$t"

d=$dir/duplicate-key.yaml
p='{"pod":"default/p","status":"Scheduled","node":"n1"}'
dup="$d:18: spec.containers[0].resources.requests.cpu: duplicate field \"cpu\""
run 0 "$p" "ksched: warning: $dup" "$d"
run 2 "" "ksched: $dup" --validate=strict "$d"
run 0 "$p" "" --validate=ignore "$d"

# a live cluster's objects: every field is the API's, so strict has nothing to say
note='ksched: note: skipped 13 objects of kinds that do not affect scheduling: Deployment (1), DaemonSet (1), CronJob (1), Job (1), HorizontalPodAutoscaler (1), ConfigMap (2), Secret (1), Endpoints (1), EndpointSlice (1), Event (1), ServiceAccount (1), Certificate.cert-manager.io (1)'
run 0 '{"pod":"default/web-7d9c6b8f5d-fghij","status":"Scheduled","node":"worker-1"}' "$note" \
  --validate=strict "$dir/nodes.yaml" "$dir/get-all.yaml"

# a custom resource alone, and a name that is no kind (a typo) or a real kind at a wrong version
printf 'apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: m}\n' >"$tmp/cr.yaml"
run 0 "" 'ksched: note: skipped 1 object of a kind that does not affect scheduling: ServiceMonitor.monitoring.coreos.com (1)' \
  "$tmp/cr.yaml"
printf 'apiVersion: v1\nkind: Pdo\nmetadata: {name: p}\n' >"$tmp/typo-kind.yaml"
"$ksched" schedule "$tmp/typo-kind.yaml" >"$out" 2>"$errf" </dev/null
if [ $? -eq 2 ] && [ ! -s "$out" ] && [ "$(wc -l <"$errf")" -eq 1 ] &&
  grep -qF "ksched: $tmp/typo-kind.yaml:2: kind: unsupported kind \"Pdo\" (apiVersion v1)" "$errf"; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL typo kind: $(cat "$errf")"
fi
printf 'apiVersion: v1\nkind: Deployment\nmetadata: {name: d}\n' >"$tmp/wrong-version.yaml"
run 2 "" "ksched: $tmp/wrong-version.yaml:1: apiVersion: unsupported apiVersion \"v1\" for kind Deployment (want apps/v1)" \
  "$tmp/wrong-version.yaml"

# past 20 warnings, a count of the rest
{
  printf 'apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n'
  for i in $(seq 1 25); do printf 'bogus%d: 1\n' "$i"; done
} >"$tmp/many.yaml"
"$ksched" schedule "$tmp/many.yaml" >"$out" 2>"$errf" </dev/null
if [ $? -eq 0 ] && [ "$(grep -c '^ksched: warning: .*unknown field' "$errf")" -eq 20 ] &&
  grep -qx 'ksched: warning: 5 more unknown or duplicate fields not shown' "$errf"; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL many warnings: $(cat "$errf")"
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
