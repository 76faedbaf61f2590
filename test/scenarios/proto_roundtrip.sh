#!/usr/bin/env bash
# Usage: proto_roundtrip.sh KSCHED KS_PROTO_ROUNDTRIP DIR...
# Every conformance scenario (and every other manifest under DIR) is run through
# Kubernetes' protobuf encoding and back (ks_proto_roundtrip: only what kube/proto/
# carries survives, as from an API server speaking protobuf), and
# `ksched schedule --explain --seed 1` must print exactly the same from the result as from
# the original: same exit status, same standard output (scores included). A field a
# plugin reads that the .proto files lack changes a decision here.
set -u
ksched=$1
roundtrip=$2
shift 2
pass=0 fail=0 objects=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for dir in "$@"; do
  [ -d "$dir" ] || { echo "directory not found: $dir"; exit 1; }
  for f in "$dir"/*.yaml; do
    name=$(basename "$f" .yaml)
    "$ksched" schedule --explain --seed 1 "$f" >"$tmp/a.out" 2>"$tmp/a.err" </dev/null
    rc_a=$?
    # an object the API server refuses for a value's type never comes back from it in protobuf
    grep -q ' cannot be handled as a ' "$tmp/a.err" && continue
    if ! "$roundtrip" "$f" >"$tmp/rt.yaml" 2>"$tmp/rt.err"; then
      fail=$((fail + 1)); echo "FAIL $name: ks_proto_roundtrip: $(cat "$tmp/rt.err")"; continue
    fi
    n=$(sed -n 's/^roundtripped \([0-9]*\) of .*/\1/p' "$tmp/rt.err")
    objects=$((objects + ${n:-0}))
    "$ksched" schedule --explain --seed 1 "$tmp/rt.yaml" >"$tmp/b.out" 2>"$tmp/b.err" </dev/null
    rc_b=$?
    if [ $rc_a -ne $rc_b ]; then
      fail=$((fail + 1)); echo "FAIL $name: exit $rc_a, through protobuf $rc_b: $(head -c 400 "$tmp/b.err")"
    elif ! cmp -s "$tmp/a.out" "$tmp/b.out"; then
      fail=$((fail + 1)); echo "FAIL $name: the output differs through protobuf:"
      diff "$tmp/a.out" "$tmp/b.out" | head -6
    else
      pass=$((pass + 1))
    fi
  done
done
echo "proto_roundtrip: $pass same, $fail different, $objects objects through protobuf"
[ $fail -eq 0 ] && [ $pass -gt 0 ] && [ $objects -gt 0 ]
