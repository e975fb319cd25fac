#!/usr/bin/env bash
# What a parameter-server worker's failure costs (tests/bench/ps_restart_bench.py): 2 servers and 4
# workers, async wide&deep, the servers starting from a save of ROWS rows (1M and 10M by default,
# made first by a pass over generated data whose 18 slots are new on every line), then 6 passes
# over 40k generated samples. Each size runs three ways:
#   undisturbed    no fault
#   in place       worker 2 SIGKILLed in its second pass, --ps_worker_restarts=1: it restarts alone
#   job-wide       the same fault, --max_restarts=1: every process restarts, the servers load the save again
# and prints each run's wall time, the time lost against the undisturbed run (median of RUNS,
# default 3), the servers' load time and the test AUC.
#   scripts/bench_ps_restart.sh
#   ROWS=1000000 RUNS=1 scripts/bench_ps_restart.sh
set -euo pipefail
source "$(dirname "$0")/bench_setup.sh" runtime/train
python3 tests/bench/ps_restart_bench.py "$launcher" "$train" "${ROWS:-1000000,10000000}" "${RUNS:-3}" "$work" "$cpu"
