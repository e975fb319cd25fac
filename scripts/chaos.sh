#!/usr/bin/env bash
# The chaos soak (tests/e2e/chaos.py): jobs on network-namespace hosts under a seeded storm of
# faults (killed workers, servers and launchers, paused launchers, cut links, a full disk, damaged
# saves, an etcd restart, a second kill during recovery), every run checked against its
# undisturbed reference. Needs root. Prints each fault, then one line each: faults, runs, restarts,
# mean time lost per fault, orphans/hangs/corrupt loads/lost runs; exits 1 when an invariant broke.
#   scripts/chaos.sh --seed 7 --faults 200 --minutes 30
#   scripts/chaos.sh --seed 7 --faults 20 --jobs collective,ps-sync --keep
set -euo pipefail
source "$(dirname "$0")/bench_setup.sh" runtime/train
echo "machine: $cpu"
PADDLE_LAUNCH="$launcher" TRAIN="$train" SHARED_DATA="$(realpath ../shared/data)" \
  python3 tests/e2e/chaos.py "$@"
