#!/usr/bin/env python3
"""End-to-end tests of unmodified PaddlePaddle 2.6.2 programs across two hosts, as a Paddle user
runs them: the same paddle-launch line on each host, real Paddle from PyPI (paddle_venv.py).
The hosts are network namespaces on a bridge (netns_hosts.py), so the tests need root; PyTorch
DDP across the same hosts is the control. Every test bounds its time and checks by session that
no process of the job is left on either host."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from datetime import datetime

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Skip, assert_sessions_gone, check, child_env, main, scratch  # noqa: E402
from netns_hosts import NamespaceHosts  # noqa: E402
from paddle_venv import paddle_python  # noqa: E402

LAUNCH = shutil.which(os.environ.get("PADDLE_LAUNCH", "paddle-launch")) or "paddle-launch"
PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")
# Paddle's C++ logging and its brpc chatter go to the worker logs; keep them small.
QUIET = {"GLOG_v": "0", "GLOG_minloglevel": "1", "FLAGS_call_stack_level": "1"}


class HostRun:
    """What one host's launcher did: its exit status, console and log directory."""

    def __init__(self, index, proc, workdir):
        self.index, self.proc, self.workdir = index, proc, workdir
        self.returncode, self.out, self.err = None, "", ""

    def read(self, *parts):
        with open(os.path.join(self.workdir, *parts), errors="replace") as f:
            return f.read()

    def logs(self, prefix):
        directory = os.path.join(self.workdir, "log")
        return [self.read("log", n) for n in sorted(os.listdir(directory)) if re.fullmatch(rf"{prefix}\.\d+", n)]

    def results(self, prefix="workerlog"):
        """The RESULT lines of this host's processes, as dicts."""
        return [json.loads(line[len("RESULT "):]) for text in self.logs(prefix)
                for line in text.splitlines() if line.startswith("RESULT ")]

    def launch_log_time(self, pattern):
        """The time of launch.log's first line matching `pattern` (seconds since the epoch)."""
        for line in self.read("log", "launch.log").splitlines():
            if re.search(pattern, line):
                stamp = re.match(r"\w+ (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})", line).group(1)
                return datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp()
        return None

    def describe(self):
        return f"host {self.index} exit {self.returncode}\nstdout:\n{self.out[-2500:]}\nstderr:\n{self.err[-2500:]}"


def run_on_hosts(hosts, per_host_args, program_cmd, env=None, timeout=100):
    """Starts `paddle-launch ARGS PROGRAM` on each host (ARGS from per_host_args(i)), each in its
    own directory, and waits for every launcher; returns their HostRuns once no process of the
    job is left on any host."""
    runs = []
    for i in range(len(hosts.ips)):
        workdir = scratch()
        cmd = [LAUNCH, *per_host_args(i), *program_cmd]
        runs.append(HostRun(i, hosts.popen(i, cmd, cwd=workdir, env=child_env({**QUIET, **(env or {})})), workdir))
    try:
        for r in runs:
            try:
                r.out, r.err = r.proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                for other in runs:
                    if other.proc.poll() is None:
                        os.killpg(other.proc.pid, signal.SIGKILL)
                r.out, r.err = r.proc.communicate()
                raise AssertionError(f"host {r.index}'s launcher did not finish in {timeout}s\n{r.describe()}")
            r.returncode = r.proc.returncode
    finally:
        for r in runs:
            if r.proc.poll() is None:
                os.killpg(r.proc.pid, signal.SIGKILL)
                r.proc.communicate()
    assert_sessions_gone([r.proc.pid for r in runs])
    return runs


def run_paddle(hosts, per_host_args, program, env=None):
    """run_on_hosts of tests/e2e/programs/PROGRAM under the venv's PaddlePaddle."""
    return run_on_hosts(hosts, per_host_args, [paddle_python(), os.path.join(PROGRAMS, program)], env=env)


def check_ddp(runs, world):
    for r in runs:
        check(r.returncode == 0, f"every host exits 0\n{r.describe()}")
    results = [x for r in runs for x in r.results()]
    check(sorted(x["rank"] for x in results) == list(range(world)), f"ranks 0..{world - 1} report: {results}")
    expected = world * (world + 1) / 2
    for x in results:
        check(x["world"] == world and x["allreduce"] == expected, f"world {world}, all_reduce {expected}: {x}")
        check(x["in_sync"], f"the weights agree on every rank after one step: {x}")
    return results


def check_paddle_master(runs, hosts, results, launchers_master):
    """PADDLE_MASTER is one endpoint on node 0, and neither the launchers' master nor a trainer's."""
    masters = {x["master"] for x in results}
    check(len(masters) == 1, f"one PADDLE_MASTER on every rank: {masters}")
    master = masters.pop()
    check(master.startswith(hosts.ips[0] + ":"), f"PADDLE_MASTER {master} is on node 0 ({hosts.ips[0]})")
    endpoints = runs[0].read("log", "endpoints.log")
    check(master not in endpoints, f"PADDLE_MASTER {master} is no trainer's endpoint:\n{endpoints}")
    check(f"at the master {launchers_master} " in runs[0].read("log", "launch.log"),
          f"the launchers met at {launchers_master}\n{runs[0].read('log', 'launch.log')[-2000:]}")
    check(master != launchers_master, f"PADDLE_MASTER {master} is not the launchers' master store")


def namespace_hosts():
    if os.geteuid() != 0:
        raise Skip("hosts for these tests are network namespaces, which need root")
    return NamespaceHosts(2)


def test_paddle_ddp_across_two_hosts_with_ips():
    with namespace_hosts() as hosts:
        runs = run_paddle(hosts, lambda i: [f"--ips={','.join(hosts.ips)}", "--nproc_per_node=2"], "paddle_ddp.py")
        check_paddle_master(runs, hosts, check_ddp(runs, 4), f"{hosts.ips[0]}:6069")


def test_paddle_ddp_across_two_hosts_through_a_master():
    with namespace_hosts() as hosts:
        master = hosts.master_address()
        runs = run_paddle(hosts, lambda i: [f"--master={master}", "--nnodes=2", "--nproc_per_node=2"], "paddle_ddp.py")
        results = check_ddp(runs, 4)
        check_paddle_master(runs, hosts, results, master)


def test_a_failing_paddle_rank_stops_every_host_with_its_status():
    with namespace_hosts() as hosts:
        runs = run_paddle(hosts, lambda i: [f"--ips={','.join(hosts.ips)}", "--nproc_per_node=2"], "paddle_ddp.py",
                          env={"RANK_TO_FAIL": "3"})
        for r in runs:
            check(r.returncode == 3, f"every host exits with the failing rank's status 3\n{r.describe()}")
            check("trainer 3" in r.err and "exit code 3" in r.err, f"every host names trainer 3\n{r.describe()}")


def test_a_paddle_rank_asleep_before_its_allreduce_is_named_by_its_stacks_on_every_host():
    """Trainer 3 (host 1) sleeps before its backward pass at step 30; the other three wait for its
    gradients in gloo's allreduce. Paddle keeps no progress page: the launchers see four quiet
    processes, take their stacks, and name trainer 3 by them, before gloo's own 30 s timeout."""
    with namespace_hosts() as hosts:
        master = hosts.master_address()
        runs = run_on_hosts(hosts, lambda i: [f"--master={master}", "--nnodes=2", "--nproc_per_node=2", "--hang_timeout=6",
                                              "--on_hang=stop"],
                            [paddle_python(), os.path.join(PROGRAMS, "paddle_ddp_stall.py")],
                            env={"STALL_RANK": "3", "STALL_STEP": "30", "STEPS": "100000"}, timeout=60)
        for r in runs:
            check(r.returncode == 123, f"every host stops with the hang status 123\n{r.describe()}")
            verdict = re.search(r"the job made no progress for 6 s: trainer 3 \(node 1, local 1, pid (\d+)\) is the culprit: "
                                r"its stacks are in no collective, while trainers 0-2's wait in one; its Python frame: "
                                r"stall \(paddle_ddp_stall.py:\d+\)", r.err)
            check(verdict, f"host {r.index} names trainer 3, by its stacks and its Python frame\n{r.describe()}")
            check("gloo" not in r.read("log", "workerlog.0").lower() or "TIMEOUT" not in r.read("log", "workerlog.0"),
                  f"the verdict came before gloo's own timeout\n{r.read('log', 'workerlog.0')[-2000:]}")
        culprit = runs[1].read("log", "hang.3.txt")
        check(culprit.startswith("trainer 3 (local 1, pid ") and "the culprit" in culprit,
              f"host 1's file for trainer 3 marks it\n{culprit[:1500]}")
        check(re.search(r"Python frames:(.|\n)*stall \(paddle_ddp_stall.py:\d+\)", culprit),
              f"and holds its Python frames, from py-spy\n{culprit[-3000:]}")
        waiting = runs[0].read("log", "hang.0.txt")
        check("AllReduce" in waiting and "Python frames:" in waiting,
              f"trainer 0's file shows it in gloo's allreduce\n{waiting[-3000:]}")


def check_fleet_workers(runs, steps):
    """Every host exits 0 and every worker trains `steps` steps; returns the workers' RESULTs."""
    for r in runs:
        check(r.returncode == 0, f"every host exits 0\n{r.describe()}")
    results = [x for r in runs for x in r.results()]
    check(sorted(x["index"] for x in results) == list(range(results[0]["workers"] if results else 1)) and
          all(x["steps"] == steps for x in results), f"every worker trains its {steps} steps: {results}")
    return results


def check_servers_stopped_after(run, last_worker):
    stopped = run.launch_log_time("sent SIGTERM to server")
    check(stopped is not None and stopped >= last_worker - 0.01,
          f"host {run.index} stops its server only after the last worker has ended\n{run.read('log', 'launch.log')}")


def paddle_masters(run):
    """The PADDLE_MASTER of each generation, from launch.log's Distributed Envs tables."""
    return re.findall(r"\|\s+PADDLE_MASTER\s+(\S+)\s+\|", run.read("log", "launch.log"))


def test_a_restarted_paddle_job_binds_a_fresh_tcpstore_port():
    with namespace_hosts() as hosts:
        runs = run_paddle(hosts, lambda i: [f"--ips={','.join(hosts.ips)}", "--nproc_per_node=2", "--max_restarts=1"],
                          "paddle_ddp.py", env={"RANK_TO_FAIL": "3", "FIRST_ATTEMPT_ONLY": "1"})
        results = check_ddp(runs, 4)
        masters = [paddle_masters(r) for r in runs]
        check(masters[0] == masters[1] and len(masters[0]) == 2,
              f"both hosts give each generation one PADDLE_MASTER: {masters}")
        check(masters[0][0] != masters[0][1] and results[0]["master"] == masters[0][1],
              f"generation 1's rank 0 binds a port of its own, not generation 0's: {masters[0]}")


def test_fleet_ps_with_the_server_on_one_host_and_both_workers_on_the_other():
    with namespace_hosts() as hosts:
        a, b = hosts.ips
        runs = run_paddle(hosts, lambda i: [f"--servers={a}:6170", f"--workers={b},{b}"], "paddle_fleet_ps.py",
                          env={"STEPS": "20"})
        results = check_fleet_workers(runs, 20)
        check(runs[0].logs("workerlog") == [] and len(runs[0].logs("serverlog")) == 1, "host A holds only the server")
        check(len(runs[1].results()) == 2, f"both workers are on host B: {results}")
        check_servers_stopped_after(runs[0], max(x["ended"] for x in results))


def test_fleet_ps_with_a_server_and_a_worker_on_each_host():
    with namespace_hosts() as hosts:
        a, b = hosts.ips
        # Host B's worker takes 2 s longer: host A's server must outlive its own worker.
        runs = run_paddle(hosts, lambda i: [f"--servers={a}:6170,{b}:6170", f"--workers={a},{b}"], "paddle_fleet_ps.py",
                          env={"STEPS": "20", "SLOW_WORKER": "1", "STEP_DELAY": "0.1"})
        results = check_fleet_workers(runs, 20)
        for r in runs:
            check_servers_stopped_after(r, max(x["ended"] for x in results))


def test_a_failing_fleet_worker_stops_the_host_of_servers_alone_with_its_status():
    with namespace_hosts() as hosts:
        a, b = hosts.ips
        runs = run_paddle(hosts, lambda i: [f"--servers={a}:6170", f"--workers={b},{b}"], "paddle_fleet_ps.py",
                          env={"STEPS": "5", "WORKER_TO_FAIL": "1"})
        for r in runs:
            check(r.returncode == 5, f"every host exits with the failing worker's status 5\n{r.describe()}")
            check("worker 1" in r.err and "exit code 5" in r.err, f"every host names worker 1\n{r.describe()}")


def test_fleet_ps_through_a_master_with_one_role_on_each_host():
    with namespace_hosts() as hosts:
        master = hosts.master_address()
        roles = [["--server_num=2", "--worker_num=0"], ["--server_num=0", "--worker_num=2"]]
        runs = run_paddle(hosts, lambda i: [f"--master={master}", "--nnodes=2", *roles[i]], "paddle_fleet_ps.py",
                          env={"STEPS": "20"})
        results = check_fleet_workers(runs, 20)
        check(all(x["servers"].count(hosts.ips[0]) == 2 for x in results), f"two servers, both on host A: {results}")
        check(len(runs[0].logs("serverlog")) == 2 and runs[0].logs("workerlog") == [], "host A holds only the servers")


def test_torch_ddp_across_the_same_hosts():
    python = "/usr/bin/python3"
    if subprocess.run([python, "-c", "import torch.distributed"], capture_output=True).returncode != 0:
        raise Skip("no torch for /usr/bin/python3 (Debian's python3-torch)")
    with namespace_hosts() as hosts:
        runs = run_on_hosts(hosts, lambda i: [f"--ips={','.join(hosts.ips)}", "--nproc_per_node=2"],
                            [python, os.path.join(PROGRAMS, "torch_ddp.py")])
        check_ddp(runs, 4)


if __name__ == "__main__":
    main(sys.modules[__name__])
