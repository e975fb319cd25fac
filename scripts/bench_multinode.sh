#!/usr/bin/env bash
# Multi-node control plane (tests/bench/multinode_bench.py): N launchers, one per "node", each
# starting 1 probe process, through a master (--master, --nnodes), on network namespaces on a
# bridge when run as root, else on loopback aliases (127.0.0.1 .. 127.0.0.N); the output says which:
#   rendezvous    launch of every launcher -> every node's process started (N = 2, 3, 4, 8)
#   fail-fast     SIGKILL of the last node's launcher -> every other launcher exited
#   restart       SIGKILL of a worker (--max_restarts=1) -> every node's next generation started
#   stop          SIGTERM to every launcher -> no process of the job left on any host
#   stop-waiting  SIGTERM to the launchers of a job whose last node never came -> every one exited
# and, as root, the same under a real Slurm cluster on namespace hosts (tests/e2e/slurm_cluster.py):
#   srun          srun -N2/-N3 --ntasks-per-node=1 -> every node's process started
#   scancel       scancel -> no process of the job left on any host
# Median of RUNS runs (default 5). BENCH_HOSTS=loopback (or netns) picks the hosts. With
# PADDLE_PYTHON=/path/to/python (one with paddlepaddle installed), also the rendezvous of
# `python -m paddle.distributed.launch --master` for 2 and 4 nodes on the same hosts.
#   scripts/bench_multinode.sh
#   BENCH_HOSTS=loopback PADDLE_PYTHON=/tmp/pdvenv/bin/python scripts/bench_multinode.sh
set -euo pipefail
source "$(dirname "$0")/bench_setup.sh" tests/probe
python3 tests/bench/multinode_bench.py "$launcher" "$(realpath "$build_dir/tests/probe")" "${RUNS:-5}" "$work" "$cpu"
