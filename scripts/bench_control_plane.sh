#!/usr/bin/env bash
# The multi-node control plane at scale, on this one machine:
#  1. real launchers (tests/bench/launchers_bench.py), one per loopback address 127.100.X.Y, in
#     one job through node 0's master, for each N of NODES: start to every launcher exited (each
#     process exits 0 at once), and one failing process to every launcher gone;
#  2. control_plane_bench nodes K for each K of AGENTS: K node agents running the real ClusterLink
#     code (node 0, the master, in a process of its own): the rendezvous, the master's CPU and
#     requests per second in steady state, a failure to every agent holding the verdict, a restart;
#  3. control_plane_bench ranks K for each K of RANKS: the workers' store with K simulated ranks
#     each setting its address and reading its ring neighbour's.
# One line per size, starting with the size. K agents need 2K threads: where kernel.pid_max is
# below that and this runs as root, it is raised for the run and put back after.
#   scripts/bench_control_plane.sh
#   NODES="64 256" AGENTS="1024" RANKS="16384" scripts/bench_control_plane.sh
set -euo pipefail
source "$(dirname "$0")/bench_setup.sh" tests/control_plane_bench
nodes="${NODES-64 256 512 1024}"
agents="${AGENTS-1024 4096}"
ranks="${RANKS-16384 98304}"
echo "machine: $cpu; $(free -g | awk '/Mem:/ {print $2}') GB; ulimit -n $(ulimit -Hn) (hard)"
ulimit -n "$(ulimit -Hn)"
if [ -n "$nodes" ]; then
  python3 tests/bench/launchers_bench.py "$launcher" "$(realpath "$build_dir/tests/probe")" "$work" "$cpu" $nodes
fi
bench="$build_dir/tests/control_plane_bench"
pid_max=$(cat /proc/sys/kernel/pid_max)
for k in $agents; do
  need=$((2 * k + 8192))
  if [ "$pid_max" -lt "$need" ]; then
    if [ "$(id -u)" = 0 ]; then
      echo "kernel.pid_max $pid_max is below the $need threads $k agents need: raised for this run"
      echo "$need" >/proc/sys/kernel/pid_max
      trap 'echo '"$pid_max"' >/proc/sys/kernel/pid_max; rm -rf "$work"' EXIT
    else
      echo "$k nodes: skipped: kernel.pid_max $pid_max is below the $need threads they need (run as root)"
      continue
    fi
  fi
  # Small thread stacks: 2K threads of 8 MiB each would reserve more address space than needed.
  status=0
  (ulimit -s 256 && "$bench" nodes "$k") || status=$?
  # Each agent holds the K-node member list it read: K agents on one machine need about K^2 x 1 kB.
  [ "$status" = 0 ] || echo "$k nodes: the agents' process failed (exit $status$([ "$status" = 137 ] && echo ', killed: out of memory?'))"
done
for k in $ranks; do "$bench" ranks "$k" || echo "$k ranks: failed (exit $?)"; done
