#!/usr/bin/env bash
# Dispatch over SSH (tests/bench/dispatch_bench.py): dispatcher start -> every host's process
# started, with a 50 MB package, first copy and after a 1 MB change, for 2 and 4 hosts, beside
# the same copy made host after host as cluster_train did. Hosts are real sshd servers on network
# namespaces of this machine, so it needs root. Median of RUNS runs (default 5).
#   sudo scripts/bench_dispatch.sh
set -euo pipefail
source "$(dirname "$0")/bench_setup.sh" tests/probe
python3 tests/bench/dispatch_bench.py "$launcher" "$(realpath "$build_dir/tests/probe")" "${RUNS:-5}" "$work" "$cpu"
