#!/usr/bin/env bash
# A parameter server under abuse on this machine, over loopback: 64 honest workers pushing and
# pulling, alone and then beside droppers, tricklers, 4 GB announcers and 1,000 idle
# connections (tests/bench/ps_abuse_bench.cc); requests/s, resident memory, what was cut off.
set -euo pipefail
source "$(dirname "$0")/bench_setup.sh" tests/ps_abuse_bench
echo "machine: $cpu"
"$build_dir/tests/ps_abuse_bench" --seconds "${SECONDS_PER_PHASE:-10}" --clients "${CLIENTS:-64}"
