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
# One line per size, starting with the size.
#   scripts/bench_control_plane.sh
#   NODES="64 256" AGENTS="1024" RANKS="16384" scripts/bench_control_plane.sh
set -euo pipefail
source "$(dirname "$0")/bench_setup.sh" tests/control_plane_bench
nodes="${NODES-64 256 512 1024}"
agents="${AGENTS-1024 4096}"
ranks="${RANKS-16384 98304}"
echo "machine: $cpu; $(free -g | awk '/Mem:/ {print $2}') GB; ulimit -n $(ulimit -Hn) (hard)"
ulimit -n "$(ulimit -Hn)"
# K agents need 2K threads (kernel.pid_max), and K connections arriving at once need a listen
# queue that long (net.core.somaxconn, net.ipv4.tcp_max_syn_backlog; the master says so too).
# As root these are raised for the run and put back after; otherwise a size that needs more is
# skipped, saying which.
declare -A saved=()
fleet_work="$work"
restore() {
  for key in "${!saved[@]}"; do sysctl -qw "$key=${saved[$key]}"; done
  rm -rf "$work" "$fleet_work"
}
trap restore EXIT
# The launchers' log folders go on tmpfs where there is one: here, N launchers share one disk, and
# on this VM's ext4 (no journal) each file made scans past the inodes deleted in the last minutes
# (ext4's recently_deleted), which took a quarter of a 512-launcher run's CPU after an earlier
# run's folders were removed. Each node of a real job has a disk of its own.
if [ -d /dev/shm ] && [ -w /dev/shm ]; then fleet_work="$(mktemp -d -p /dev/shm)"; fi
if [ -n "$nodes" ]; then
  echo "the launchers' log folders: $(df --output=fstype "$fleet_work" | tail -1) ($fleet_work)"
  python3 tests/bench/launchers_bench.py "$launcher" "$(realpath "$build_dir/tests/probe")" "$fleet_work" "$cpu" $nodes
fi
bench="$build_dir/tests/control_plane_bench"
raise() {  # raise KEY NEEDED K: the setting at least NEEDED, or why K is skipped
  local now
  now=$(sysctl -n "$1")
  [ "$now" -ge "$2" ] && return 0
  if [ "$(id -u)" != 0 ]; then
    echo "$3 nodes: skipped: $1 = $now is below the $2 they need (run as root)"
    return 1
  fi
  [ -n "${saved[$1]:-}" ] || saved[$1]=$now
  echo "$1 = $now is below the $2 that $3 agents need: raised for this run"
  sysctl -qw "$1=$2"
}
for k in $agents; do
  raise kernel.pid_max $((2 * k + 8192)) "$k" && raise net.core.somaxconn "$k" "$k" &&
    raise net.ipv4.tcp_max_syn_backlog "$k" "$k" || continue
  # Small thread stacks: 2K threads of 8 MiB each would reserve more address space than needed.
  status=0
  (ulimit -s 256 && "$bench" nodes "$k") || status=$?
  [ "$status" = 0 ] || echo "$k nodes: failed (exit $status$([ "$status" = 137 ] && echo ', killed: out of memory?'))"
done
for k in $ranks; do "$bench" ranks "$k" || echo "$k ranks: failed (exit $?)"; done
