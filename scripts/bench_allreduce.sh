#!/usr/bin/env bash
# Allreduce bus bandwidth for 2 ranks on this machine, message sizes 4 KB to 64 MB: ours
# (paddle-launch's GlooCommunicator) against raw gloo::AllreduceRing, both over Gloo's TCP
# transport on loopback, started by paddle-launch. Bus bandwidth = bytes * 2(n-1)/n / time.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build}"
[ -x "$build_dir/tests/allreduce_bench" ] || bash scripts/build.sh >/dev/null
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; 2 ranks over loopback"
"$build_dir/launcher/paddle-launch" --nproc_per_node=2 --log_dir="$work/log" "$(realpath "$build_dir/tests/allreduce_bench")" \
  --seconds "${SECONDS_PER_SIZE:-0.5}" 2>/dev/null | sed -n '/bytes/,$p'
