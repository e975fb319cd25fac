#!/usr/bin/env bash
# Multi-node control plane: N launchers on loopback aliases (127.0.0.1 .. 127.0.0.N), one per
# "node", each starting 1 probe process, through a master (--master, --nnodes):
#   rendezvous    launch of every launcher -> every node's process started (N = 2, 4, 8)
#   fail-fast     SIGKILL of the last node's launcher -> every other launcher exited
#   restart       SIGKILL of a worker (--max_restarts=1) -> every node's next generation started
# Median of RUNS runs (default 5). The probe (tests/probe.cc) records its start in a dump file.
#   scripts/bench_multinode.sh
set -euo pipefail
source "$(dirname "$0")/bench_setup.sh" tests/probe
probe="$(realpath "$build_dir/tests/probe")"
runs="${RUNS:-5}"

python3 - "$launcher" "$probe" "$runs" "$work" "$cpu" <<'PY'
import glob, json, os, signal, socket, statistics, subprocess, sys, time

launcher, probe, runs, work, cpu = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port

def dumps(d):
    out = []
    for f in glob.glob(os.path.join(d, "*")):
        try:
            out.append(json.load(open(f)))
        except (OSError, ValueError):
            pass
    return out

def wait(predicate, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return time.monotonic()
        time.sleep(0.005)
    sys.exit("timed out")

def start_job(n, run, probe_args, launch_args=()):
    master = f"127.0.0.1:{free_port()}"
    dump = os.path.join(work, f"dumps-{n}-{run}-{time.monotonic_ns()}")
    os.makedirs(os.path.join(dump, "dumps"))
    nodes = []
    for i in range(n):
        d = os.path.join(dump, f"node{i}")
        os.makedirs(d)
        cmd = [launcher, f"--master={master}", f"--nnodes={n}", f"--host=127.0.0.{i + 1}", *launch_args, probe,
               "--dump", os.path.join(dump, "dumps"), *probe_args]
        nodes.append(subprocess.Popen(cmd, cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                      start_new_session=True))
    return nodes, os.path.join(dump, "dumps")

def finish(nodes):
    for p in nodes:
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()

def rendezvous(n):
    t0 = time.monotonic()
    nodes, d = start_job(n, "r", ["--sleep", "0"])
    t1 = wait(lambda: len(dumps(d)) >= n)
    finish(nodes)
    return (t1 - t0) * 1000

def fail_fast(n):
    nodes, d = start_job(n, "f", ["--sleep", "60"])
    wait(lambda: len(dumps(d)) >= n)
    t0 = time.monotonic()
    os.kill(nodes[-1].pid, signal.SIGKILL)
    for p in nodes[:-1]:
        p.wait(timeout=60)
    t1 = time.monotonic()
    finish(nodes)
    return (t1 - t0) * 1000

def restart(n):
    nodes, d = start_job(n, "s", ["--sleep", "60"], ["--max_restarts=1", "--grace_period=1"])
    first = wait(lambda: len(dumps(d)) >= n) and dumps(d)
    victim = next(x for x in first if x["rank"] == n - 1)["pid"]
    t0 = time.monotonic()
    os.kill(victim, signal.SIGKILL)
    t1 = wait(lambda: sum(1 for x in dumps(d) if x["env"].get("PADDLE_RESTART_COUNT") == "1") >= n)
    for p in nodes:
        os.killpg(p.pid, signal.SIGTERM)
    finish(nodes)
    return (t1 - t0) * 1000

print(f"multi-node control plane on {cpu}; nodes are launchers on loopback aliases, 1 process each; "
      f"median of {runs} runs")
for n in (2, 4, 8):
    print(f"  {n} nodes: rendezvous to all workers started {statistics.median(rendezvous(n) for _ in range(runs)):7.0f} ms")
print(f"  3 nodes: SIGKILLed launcher to every other node stopped {statistics.median(fail_fast(3) for _ in range(runs)):7.0f} ms")
print(f"  3 nodes: killed worker to every node's next generation started {statistics.median(restart(3) for _ in range(runs)):7.0f} ms")
PY
