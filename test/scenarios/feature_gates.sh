#!/usr/bin/env bash
# --feature-gates on the ksched subcommands (config/features.c): kube-scheduler's syntax,
# exit 2 with one message and no output for an unknown gate or a bad value, and the
# configuration defaults following DefaultPodTopologySpread (v1beta2: SelectorSpread at
# PreScore and Score with weight 1, PodTopologySpreadArgs defaultingType List).
# usage: feature_gates.sh KSCHED DATA_DIR
set -u
ksched=$1
data=$2
pass=0 fail=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cfg=$dir/v1beta2.yaml
printf 'apiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: KubeSchedulerConfiguration\n' >"$cfg"
manifest=$(ls "$data"/good/*.yaml | head -n1)

check() { # NAME CONDITION...
  local name=$1; shift
  if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $name"; fi
}

# the default (gate on) output has no SelectorSpread
"$ksched" config --print --config "$cfg" >"$dir/on" 2>"$dir/err"
check "gate on: exit 0" test $? -eq 0
check "gate on: no SelectorSpread" bash -c "! grep -q SelectorSpread '$dir/on'"
check "gate on: System defaulting" grep -q "defaultingType: System" "$dir/on"

# gate off: SelectorSpread at preScore and at score with weight 1, List defaulting
"$ksched" config --print --feature-gates DefaultPodTopologySpread=false "$cfg" >"$dir/off" 2>"$dir/err"
check "gate off: exit 0" test $? -eq 0
check "gate off: preScore" bash -c "sed -n '/^    preScore:/,/^    score:/p' '$dir/off' | grep -q '      - name: SelectorSpread'"
check "gate off: score weight 1" bash -c "sed -n '/^    score:/,/^    reserve:/p' '$dir/off' | grep -A1 '      - name: SelectorSpread' | grep -q '        weight: 1'"
check "gate off: List defaulting" grep -q "defaultingType: List" "$dir/off"
"$ksched" config --print --feature-gates=DefaultPodTopologySpread=true --config "$cfg" >"$dir/on2" 2>"$dir/err"
check "gate named at its default: same output" cmp -s "$dir/on" "$dir/on2"

# bad values: exit 2, nothing on standard output, one message
bad() { # NAME WANT COMMAND...
  local name=$1 want=$2; shift 2
  "$@" >"$dir/out" 2>"$dir/err" </dev/null
  local rc=$?
  if [ $rc -eq 2 ] && [ ! -s "$dir/out" ] && grep -qF -- "$want" "$dir/err"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1)); echo "FAIL $name: exit $rc, want \"$want\", got: $(cat "$dir/err")"
  fi
}
bad "config unknown gate" "ksched config: --feature-gates: unrecognized feature gate: NoSuchGate" \
  "$ksched" config --print --feature-gates NoSuchGate=true "$cfg"
bad "config bad bool" 'invalid value of DefaultPodTopologySpread=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax' \
  "$ksched" config --feature-gates=DefaultPodTopologySpread=maybe
bad "config missing value" "missing bool value for DefaultPodTopologySpread" \
  "$ksched" config --feature-gates DefaultPodTopologySpread
bad "config locked gate" "cannot set feature gate PodOverhead to false" \
  "$ksched" config --feature-gates PodOverhead=false
bad "config no argument" "flag needs an argument: --feature-gates" "$ksched" config --feature-gates
bad "schedule unknown gate" "ksched schedule: --feature-gates: unrecognized feature gate: NoSuchGate" \
  "$ksched" schedule --feature-gates NoSuchGate=true "$manifest"
bad "bench unknown gate" "ksched bench: --feature-gates: unrecognized feature gate: NoSuchGate" \
  "$ksched" bench --feature-gates=NoSuchGate=false --workload SchedulingBasic

# the flag is accepted by schedule with a v1beta2 configuration
"$ksched" schedule --feature-gates DefaultPodTopologySpread=false --config "$cfg" "$manifest" >"$dir/out" 2>"$dir/err"
check "schedule with the gate off: exit 0 ($(cat "$dir/err"))" test $? -eq 0

echo "feature_gates: $pass passed, $fail failed"
[ $fail -eq 0 ]
