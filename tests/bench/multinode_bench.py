#!/usr/bin/env python3
"""The multi-node control plane's timings (run by scripts/bench_multinode.sh, which builds first).

Nodes are launchers on hosts made on this machine (tests/e2e/netns_hosts.py): network namespaces
on a bridge (198.18.1.x) where root can make them, else loopback aliases (127.0.0.x); BENCH_HOSTS
=loopback or =netns picks one. Each node starts 1 probe process (tests/probe.cc), which records
its start in a dump file; the bench polls for those files.
  rendezvous   launch of every launcher -> every node's process started (N = 2, 4, 8)
  fail-fast    SIGKILL of the last node's launcher -> every other launcher exited (N = 3)
  restart      SIGKILL of a worker (--max_restarts=1) -> every node's next generation started (N = 3)
  stop         SIGTERM to every launcher -> no process of the job left on any host (N = 2, 3)
  stop-waiting SIGTERM to every launcher of a job whose last node never came, each waiting in the
               rendezvous -> every launcher exited (N = 2, 3)
As root, the same job under a real Slurm cluster on namespace hosts (tests/e2e/slurm_cluster.py),
srun --ntasks-per-node=1 starting one launcher per node:
  srun         srun -> every node's process started (N = 2, 3)
  scancel      scancel -> no process of the job left on any host (N = 2, 3)
With PADDLE_PYTHON set to a python that has paddle, the rendezvous of `python -m
paddle.distributed.launch --master=IP:PORT --nnodes=N` (N = 2, 4) on the same hosts, with a trivial
python worker that records its start the same way, and its 1-node launch as the floor.
  multinode_bench.py LAUNCHER PROBE RUNS WORKDIR MACHINE
"""

import glob
import json
import os
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from harness import Skip  # noqa: E402
from netns_hosts import LoopbackHosts, NamespaceHosts  # noqa: E402
from slurm_cluster import SlurmCluster  # noqa: E402

PADDLE_WORKER = """import json, os, sys
env = {k: v for k, v in os.environ.items() if k.startswith("PADDLE_")}
with open(os.path.join(sys.argv[1], f"{os.getpid()}.json"), "w") as f:
    json.dump({"rank": int(env["PADDLE_TRAINER_ID"]), "env": env}, f)
"""


def pick_hosts(count):
    """The hosts BENCH_HOSTS asks for (default: namespaces where they can be made) and why."""
    choice = os.environ.get("BENCH_HOSTS", "auto")
    if choice == "loopback":
        return LoopbackHosts(count), "BENCH_HOSTS=loopback"
    try:
        return NamespaceHosts(count), "run as root"
    except Skip as why:
        if choice == "netns":
            sys.exit(f"BENCH_HOSTS=netns, but {why}")
        return LoopbackHosts(count), f"no network namespaces: {why}"


def dumps(directory):
    out = []
    for f in glob.glob(os.path.join(directory, "*.json")):
        try:
            with open(f) as fh:
                out.append(json.load(fh))
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


def finish(nodes, timeout=60):
    for p in nodes:
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


class Bench:
    def __init__(self, launcher, probe, work, hosts):
        self.launcher, self.probe, self.work, self.hosts = launcher, probe, work, hosts
        self.jobs = 0
        self.started = []  # every launcher's Popen, to stop what a failed run leaves

    def start_job(self, n, probe_args, launch_args=(), command=None, start=None):
        """Starts the first `start` (default: all) of n nodes; returns their Popens (pid = the
        launcher's) and the dump folder."""
        self.jobs += 1
        job = os.path.join(self.work, f"job{self.jobs}")
        dump = os.path.join(job, "dumps")
        os.makedirs(dump)
        master = self.hosts.master_address()
        nodes = []
        for i in range(n if start is None else start):
            d = os.path.join(job, f"node{i}")
            os.makedirs(d)
            cmd = (command(i, master, dump) if command else
                   [self.launcher, f"--master={master}", f"--nnodes={n}", *self.hosts.host_args(i), *launch_args,
                    self.probe, "--dump", dump, *probe_args])
            nodes.append(self.hosts.popen(i, cmd, cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        self.started += nodes
        return nodes, dump

    def stop_all(self):
        for p in self.started:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()

    def rendezvous(self, n, command=None):
        t0 = time.monotonic()
        nodes, d = self.start_job(n, ["--sleep", "0"], command=command)
        t1 = wait(lambda: len(dumps(d)) >= n)
        finish(nodes)
        world = sorted((x["rank"], x["env"].get("PADDLE_TRAINERS_NUM")) for x in dumps(d))
        if world != [(r, str(n)) for r in range(n)]:
            sys.exit(f"{n} nodes: the workers are not one job of ranks 0..{n - 1}: {world}")
        return (t1 - t0) * 1000

    def fail_fast(self, n):
        nodes, d = self.start_job(n, ["--sleep", "60"])
        wait(lambda: len(dumps(d)) >= n)
        t0 = time.monotonic()
        os.kill(nodes[-1].pid, signal.SIGKILL)
        for p in nodes[:-1]:
            p.wait(timeout=60)
        t1 = time.monotonic()
        finish(nodes)
        return (t1 - t0) * 1000

    def stop(self, n):
        nodes, d = self.start_job(n, ["--sleep", "60"])
        wait(lambda: len(dumps(d)) >= n)
        t0 = time.monotonic()
        for p in nodes:
            os.kill(p.pid, signal.SIGTERM)
        t1 = wait(lambda: not any(self.hosts_pids(n)))
        finish(nodes)
        return (t1 - t0) * 1000

    def stop_waiting(self, n):
        nodes, _ = self.start_job(n, ["--sleep", "60"], start=n - 1)
        logs = [os.path.join(self.work, f"job{self.jobs}", f"node{i}", "log", "launch.log") for i in range(n - 1)]

        def waiting(log):
            try:
                with open(log) as f:
                    return "joining generation 0" in f.read()
            except OSError:
                return False
        wait(lambda: all(waiting(log) for log in logs))
        t0 = time.monotonic()
        for p in nodes:
            os.kill(p.pid, signal.SIGTERM)
        for p in nodes:
            if p.wait(timeout=60) != 128 + signal.SIGTERM:
                sys.exit(f"{n} nodes: a launcher stopped in the rendezvous exited {p.returncode}, not 143")
        t1 = time.monotonic()
        finish(nodes)
        return (t1 - t0) * 1000

    def hosts_pids(self, n):
        """Live pids of the first n hosts (namespace hosts: every process inside them; loopback
        aliases: the launchers' sessions)."""
        if isinstance(self.hosts, NamespaceHosts):
            return [p for i in range(n) for p in self.hosts.pids(i)]
        return [p.pid for p in self.started if p.poll() is None]

    def restart(self, n):
        nodes, d = self.start_job(n, ["--sleep", "60"], ["--max_restarts=1", "--grace_period=1"])
        wait(lambda: len(dumps(d)) >= n)
        victim = next(x for x in dumps(d) if x["rank"] == n - 1)["pid"]
        t0 = time.monotonic()
        os.kill(victim, signal.SIGKILL)
        t1 = wait(lambda: sum(1 for x in dumps(d) if x["env"].get("PADDLE_RESTART_COUNT") == "1") >= n)
        for p in nodes:
            os.killpg(p.pid, signal.SIGTERM)
        finish(nodes)
        return (t1 - t0) * 1000


class SlurmBench:
    """The same probe job under srun on a SlurmCluster of 3 namespace hosts."""

    def __init__(self, launcher, probe, work, cluster):
        self.launcher, self.probe, self.work, self.cluster = launcher, probe, work, cluster
        self.jobs = 0

    def start(self, n, probe_args):
        self.jobs += 1
        job = os.path.join(self.work, f"slurm{self.jobs}")
        dump = os.path.join(job, "dumps")
        os.makedirs(dump)
        cmd = ["srun", f"-N{n}", "--ntasks-per-node=1", self.launcher, self.probe, "--dump", dump, *probe_args]
        return self.cluster.popen(cmd, cwd=job, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), dump

    def srun(self, n):
        t0 = time.monotonic()
        job, d = self.start(n, ["--sleep", "0"])
        t1 = wait(lambda: len(dumps(d)) >= n)
        finish([job])
        if job.returncode != 0:
            sys.exit(f"srun -N{n} exited {job.returncode}")
        return (t1 - t0) * 1000

    def scancel(self, n):
        job, d = self.start(n, ["--sleep", "60"])
        wait(lambda: len(dumps(d)) >= n)
        ids = self.cluster.run(["squeue", "-h", "-o", "%i"]).stdout.split()
        t0 = time.monotonic()
        self.cluster.run(["scancel", *ids])
        t1 = wait(lambda: not any(self.cluster.job_pids(i) for i in range(n)))
        finish([job])
        return (t1 - t0) * 1000


def slurm_timings(launcher, probe, work, runs):
    """srun and scancel under a real Slurm cluster, where one can be made here."""
    try:
        cluster = SlurmCluster(3)
    except Skip as why:
        print(f"Slurm: skipped ({why})")
        return
    with cluster:
        bench = SlurmBench(launcher, probe, work, cluster)
        print(f"under {cluster}, srun --ntasks-per-node=1 and one launcher per node; median of {runs} runs")
        for n in (2, 3):
            print(f"  {n} nodes: srun to all workers started {median_and_range(lambda: bench.srun(n), runs)}")
        for n in (2, 3):
            print(f"  {n} nodes: scancel to no process left {median_and_range(lambda: bench.scancel(n), runs)}")


def paddle_command(python, hosts, n, worker):
    """Node i's `python -m paddle.distributed.launch` line. --host: Paddle takes its address from
    the machine's hostname, which names no address inside a namespace (nor a loopback alias)."""
    def command(i, master, dump):
        return [python, "-m", "paddle.distributed.launch", f"--master={master}", f"--nnodes={n}",
                f"--host={hosts.ips[i]}", "--nproc_per_node=1", worker, dump]
    return command


def median_and_range(f, runs):
    """The median of `runs` samples of f() in ms, with their range, as text."""
    samples = [f() for _ in range(runs)]
    return f"{statistics.median(samples):7.0f} ms (range {min(samples):.0f}-{max(samples):.0f})"


def paddle_version(python):
    """paddle's version in `python`, or None after printing why it cannot be used."""
    try:
        r = subprocess.run([python, "-c", "import paddle; print(paddle.__version__)"], capture_output=True, text=True)
    except OSError as e:
        r = subprocess.CompletedProcess([], 1, "", str(e))
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["?"])[-1]
        print(f"Paddle's launcher: skipped (PADDLE_PYTHON={python} cannot import paddle: {last})")
        return None
    return r.stdout.strip()


def paddle_rendezvous(bench, work, runs):
    """Paddle's launcher's rendezvous on the bench's hosts, when PADDLE_PYTHON says where it is."""
    python = os.environ.get("PADDLE_PYTHON")
    if not python:
        print("Paddle's launcher: skipped (set PADDLE_PYTHON to a python with paddlepaddle installed)")
        return
    version = paddle_version(python)
    if version is None:
        return
    worker = os.path.join(work, "paddle_worker.py")
    with open(worker, "w") as f:
        f.write(PADDLE_WORKER)
    print(f"python -m paddle.distributed.launch (paddle {version}) on the same hosts, --master and --host given, "
          f"a python worker that writes a file; median of {runs} runs")
    for n in (1, 2, 4):
        ms = median_and_range(lambda: bench.rendezvous(n, paddle_command(python, bench.hosts, n, worker)), runs)
        what = ("launch to its worker started (no rendezvous: the floor)" if n == 1 else
                "rendezvous to all workers started")
        print(f"  {n} node{'s' if n > 1 else ''}: {what} {ms}")


def main():
    launcher, probe, runs, work, machine = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
    hosts, why = pick_hosts(8)
    bench = Bench(launcher, probe, work, hosts)
    try:
        print(f"multi-node control plane on {machine}; load average at start "
              f"{os.getloadavg()[0]:.2f}; nodes: {hosts} ({why}), one launcher and 1 process each"
              f"{', started through ip netns exec' if isinstance(hosts, NamespaceHosts) else ''}; "
              f"median of {runs} runs")
        for n in (2, 3, 4, 8):
            print(f"  {n} nodes: rendezvous to all workers started "
                  f"{median_and_range(lambda: bench.rendezvous(n), runs)}")
        for n in (2, 3):
            print(f"  {n} nodes: SIGTERM to every launcher to no process left "
                  f"{median_and_range(lambda: bench.stop(n), runs)}")
        for n in (2, 3):
            print(f"  {n} nodes, the last never started: SIGTERM to every launcher waiting in the rendezvous to "
                  f"every launcher exited {median_and_range(lambda: bench.stop_waiting(n), runs)}")
        print(f"  3 nodes: SIGKILLed launcher to every other node stopped "
              f"{median_and_range(lambda: bench.fail_fast(3), runs)}")
        print(f"  3 nodes: killed worker to every node's next generation started "
              f"{median_and_range(lambda: bench.restart(3), runs)}")
        slurm_timings(launcher, probe, work, runs)
        paddle_rendezvous(bench, work, runs)
    finally:
        bench.stop_all()
        hosts.close()


if __name__ == "__main__":
    main()
