#!/usr/bin/env bash
# Allreduce bus bandwidth for 2 ranks on this machine, message sizes 4 KB to 64 MB: ours
# (paddle-launch's GlooCommunicator) against raw gloo::AllreduceRing, both over Gloo's TCP
# transport on loopback, started by paddle-launch. Bus bandwidth = bytes * 2(n-1)/n / time.
set -euo pipefail
source "$(dirname "$0")/bench_setup.sh" tests/allreduce_bench
echo "machine: $cpu; 2 ranks over loopback"
"$build_dir/launcher/paddle-launch" --nproc_per_node=2 --log_dir="$work/log" "$(realpath "$build_dir/tests/allreduce_bench")" \
  --seconds "${SECONDS_PER_SIZE:-0.5}" 2>/dev/null | sed -n '/bytes/,$p'
