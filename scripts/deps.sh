#!/usr/bin/env bash
# Installs the Debian packages ksched builds and tests with, when any is missing.
# Idempotent and quiet when everything is present; works as root on a fresh Debian 12
# machine that has never run `apt-get update`.
set -euo pipefail

pkgs=(
  build-essential cmake pkg-config python3
  liburcu-dev libjemalloc-dev libyaml-dev
  libcriterion-dev libbenchmark-dev
  libcurl4-openssl-dev openssl libssl-dev libyajl-dev
  libprotobuf-c-dev protobuf-c-compiler  # the API server's protobuf encoding (kube/proto/)
  clang libclang-rt-14-dev
  gnuplot-nox  # bench/plot: make test renders the committed bench/results
)

missing=()
for p in "${pkgs[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "deps.sh: need root to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >/dev/null
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
