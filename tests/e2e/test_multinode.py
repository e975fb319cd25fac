#!/usr/bin/env python3
"""End-to-end tests of multi-node jobs through a master (--master, --nnodes): nodes are
launchers on hosts made on this machine, each in its own directory, as separate machines would
be. The hosts are network namespaces on a bridge where root can make them (netns_hosts.py), else
loopback aliases (127.0.0.1, 127.0.0.2, ...); tests that need one kind say so. Every test bounds
its time and checks by pid, process group or session that no process of the job is left."""

import json
import os
import shutil
import socket
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (PROBE, Skip, assert_sessions_gone, check, child_env, children_of, free_ports, launch, main,  # noqa: E402
                     pid_alive, port_run, scratch, wait_for)
from netns_hosts import LoopbackHosts, NamespaceHosts, namespace_or_loopback  # noqa: E402
from test_train import HOUSING, fit_a_line, max_relative_difference, need, read_checkpoint  # noqa: E402

LAUNCH = os.environ.get("PADDLE_LAUNCH", "paddle-launch")
LAUNCH_BINARY = shutil.which(LAUNCH) or LAUNCH
TRAIN = os.environ.get("TRAIN", "train")


class Node:
    """One node's launcher, `paddle-launch --master ... TRAIN args` on host `index` of `hosts`
    (default: loopback aliases, node i at 127.0.0.(i+1)) in its own directory; without --master
    and --nnodes when `master` is None (a scheduler's variables in `env` say them)."""

    def __init__(self, index, master, nnodes, args, launch_args=(), env=None, hosts=None, script=TRAIN):
        hosts = hosts or LoopbackHosts(index + 1)
        self.index = index
        self.ip = hosts.ips[index]
        self.workdir = scratch()
        cluster = [f"--master={master}", f"--nnodes={nnodes}"] if master else []
        cmd = [LAUNCH, *cluster, *hosts.host_args(index), *launch_args, script, *args]
        self.proc = hosts.popen(index, cmd, cwd=self.workdir, env=child_env(env))
        self.out = self.err = ""

    def finish(self, timeout):
        try:
            self.out, self.err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.out, self.err = self.proc.communicate()
            raise AssertionError(f"node {self.index} did not finish in {timeout}s\n{self.err[-3000:]}")
        return self.proc.returncode

    def kill(self):
        """SIGKILL to everything left of this node's launcher (cleanup after a failed check)."""
        for pid in [self.proc.pid, *children_of(self.proc.pid)]:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def exists(self, *parts):
        return os.path.exists(os.path.join(self.workdir, *parts))

    def read(self, *parts):
        with open(os.path.join(self.workdir, *parts), errors="replace") as f:
            return f.read()

    def children(self):
        """The launcher's processes (its orphan watchdog, in a session of its own, left out)."""
        sid = os.getsid(self.proc.pid)
        return [p for p in children_of(self.proc.pid) if _session_of(p) == sid]


def _session_of(pid):
    try:
        return os.getsid(pid)
    except OSError:
        return None


def start_nodes(count, args, launch_args=(), hosts=None):
    """`count` nodes on `hosts` (default loopback aliases), the master's node started last."""
    hosts = hosts or LoopbackHosts(count)
    master = hosts.master_address()
    return [Node(i, master, count, args, launch_args, hosts=hosts) for i in reversed(range(count))][::-1]


def finish_nodes(nodes, timeout):
    """Every node's exit status, waiting `timeout` s in all; on any failure first kills every node,
    so nothing outlives the test, and re-raises."""
    deadline = time.monotonic() + timeout
    try:
        return [n.finish(max(1.0, deadline - time.monotonic())) for n in nodes]
    except BaseException:
        for n in nodes:
            n.kill()
        raise


def assert_gone(pids, timeout=5):
    wait_for(lambda: not any(pid_alive(p) for p in pids), timeout, f"processes {pids} to be gone")


def long_training():
    return fit_a_line(["--set", "epochs=100000", "--set", "batch_size=4", "--set", "checkpoint=false"])


def rank_map_lines(text):
    """The node lines below "RANK MAP:" in an endpoints.log."""
    return [l for l in text.split("RANK MAP:", 1)[-1].splitlines() if l.startswith("node ")]


def test_three_nodes_through_a_master_share_one_rank_map_and_train_as_one():
    """On namespace hosts each launcher is given --master and --nnodes only: it finds its own
    address from its route to the master (on loopback aliases it needs --host)."""
    need(HOUSING)
    args = fit_a_line(["--set", "batch_size=10", "--set", "max_steps=20", "--set", "shuffle=true"])
    with namespace_or_loopback(3) as hosts:
        nodes = start_nodes(3, args, ["--nproc_per_node=2"], hosts=hosts)
        codes = finish_nodes(nodes, 90)
        assert_sessions_gone([n.proc.pid for n in nodes])
    for n, code in zip(nodes, codes):
        check(code == 0, f"node {n.index} exits 0\n{n.err[-3000:]}")
    maps = [n.read("log", "endpoints.log") for n in nodes]
    check(maps[0] == maps[1] == maps[2], f"one rank map and endpoint list everywhere:\n{maps}")
    lines = rank_map_lines(maps[0])
    check(len(lines) == 3, f"3 nodes in the rank map:\n{maps[0]}")
    for i, line in enumerate(lines):
        check(line.startswith(f"node {i}  {hosts.ips[i]} ") and f"ranks {2 * i}-{2 * i + 1} " in line,
              f"node {i} at {hosts.ips[i]} has ranks {2 * i}-{2 * i + 1}: {line}")
    endpoints = maps[0].split("RANK MAP:")[0].split()[1:]
    check([e.rsplit(":", 1)[0] for e in endpoints] == [ip for ip in hosts.ips for _ in range(2)],
          f"ranks 0..5 are 2 per node in node order: {endpoints}")
    one = launch(["--nproc_per_node=6"], args, script=TRAIN, timeout=60)
    check(one.returncode == 0, "one node with 6 processes", one)
    _, multi = read_checkpoint(os.path.join(nodes[0].workdir, "output", "final.bin"))
    _, single = read_checkpoint(one.path("output", "final.bin"))
    diff = max_relative_difference(single, multi)
    check(diff <= 1e-5, f"3 nodes x 2 equal 1 node x 6: relative difference {diff:.2e}")
    with open(os.path.join(nodes[0].workdir, "output", "metrics.json")) as f:
        check(json.load(f)["world_size"] == 6, "world size 6")


def test_processes_inherit_only_their_standard_streams_not_the_master_stores_sockets():
    """A worker on the master's node holding the store's sockets would keep them open after its
    launcher ends, and the other nodes' requests would wait on it."""
    dumps = scratch()
    hosts = LoopbackHosts(2)
    master = hosts.master_address()
    nodes = [Node(i, master, 2, ["--dump", dumps, "--sleep", "0.5"], ["--nproc_per_node=2"], hosts=hosts, script=PROBE)
             for i in (1, 0)]
    codes = finish_nodes(nodes, 60)
    for n, code in zip(nodes, codes):
        check(code == 0, f"node {n.index} exits 0\n{n.err[-3000:]}")
    docs = []
    for name in sorted(os.listdir(dumps)):
        if name.endswith(".json"):
            with open(os.path.join(dumps, name)) as f:
                docs.append(json.load(f))
    check(len(docs) == 4, f"4 processes started: {os.listdir(dumps)}")
    for doc in docs:
        check(doc["fds"] == [0, 1, 2], f"rank {doc['rank']} was started with descriptors {doc['fds']}, not only 0, 1, 2")


def test_a_killed_launcher_stops_every_node_naming_it():
    need(HOUSING)
    nodes = start_nodes(3, long_training())
    wait_for(lambda: all(os.path.exists(os.path.join(n.workdir, "log", "workerlog.0")) and
                         "step " in n.read("log", "workerlog.0") for n in nodes), 60, "training on every node")
    pids = [p for n in nodes for p in n.children()]
    killed = time.monotonic()
    os.kill(nodes[2].proc.pid, signal.SIGKILL)
    for n in nodes[:2]:
        code = n.finish(30)
        check(code != 0, f"node {n.index} exits non-zero")
        check(time.monotonic() - killed < 10 + 3, f"node {n.index} stopped within 10 s")
        check("node 2 (127.0.0.3" in n.err, f"node {n.index} names node 2\n{n.err[-3000:]}")
    nodes[2].finish(10)
    assert_gone(pids)


def restart_count_of(pid):
    """PADDLE_RESTART_COUNT in a live worker's environment ("unset" without it), or None once the
    process is gone or a zombie (whose environment reads empty), and None while it is still the
    launcher it was forked from: until it execs, a new worker's environment is the launcher's,
    without the variable (what made this test fail now and then)."""
    try:
        if os.path.realpath(f"/proc/{pid}/exe") == os.path.realpath(LAUNCH_BINARY):
            return None
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = dict(e.split(b"=", 1) for e in f.read().split(b"\0") if b"=" in e)
    except OSError:
        return None
    return env.get(b"PADDLE_RESTART_COUNT", b"unset").decode() if env else None


def next_generation_restart_count(node, earlier):
    """PADDLE_RESTART_COUNT of a live worker of `node` not among the pids `earlier`, or None."""
    return next(filter(None, (restart_count_of(p) for p in node.children() if p not in earlier)), None)


def test_a_failed_worker_restarts_every_node_once():
    need(HOUSING)
    args = fit_a_line(["--set", "epochs=40", "--set", "batch_size=4"])
    with namespace_or_loopback(2) as hosts:
        nodes = start_nodes(2, args, ["--max_restarts=1", "--grace_period=2"], hosts=hosts)
        try:
            wait_for(lambda: nodes[0].exists("output", "checkpoint-2.bin"), 60, "a checkpoint on node 0")
            first = {n.index: wait_for(n.children, 10, f"node {n.index}'s worker") for n in nodes}
            os.kill(first[1][0], signal.SIGKILL)
            # Each node's next generation, as its workers' own environment says while they run.
            counts = {n.index: wait_for(lambda: next_generation_restart_count(n, first[n.index]), 30,
                                        f"node {n.index}'s next generation") for n in nodes}
        except BaseException:
            for n in nodes:
                n.kill()
            raise
        codes = finish_nodes(nodes, 90)
        assert_sessions_gone([n.proc.pid for n in nodes] + [p for pids in first.values() for p in pids])
    for n, code in zip(nodes, codes):
        check(code == 0, f"node {n.index} finishes after the restart\n{n.err[-3000:]}")
        check("restart 1 of 1 (PADDLE_RESTART_COUNT=1)" in n.err, f"node {n.index} restarted once\n{n.err[-3000:]}")
        check("restart 2" not in n.err, f"node {n.index} restarted only once")
        check(counts[n.index] == "1", f"node {n.index}'s restarted worker has PADDLE_RESTART_COUNT={counts[n.index]}")
    check("resumed from output/latest" in nodes[0].read("log", "workerlog.0"), "rank 0 resumed from its checkpoint")
    clean = launch(["--nproc_per_node=2"], args, script=TRAIN, timeout=60)
    check(clean.returncode == 0, "an uninterrupted run", clean)
    with open(os.path.join(nodes[0].workdir, "output", "metrics.json")) as f:
        restarted = json.load(f)
    with open(clean.path("output", "metrics.json")) as f:
        uninterrupted = json.load(f)
    for key in ("test_loss", "train_loss", "steps", "epochs"):
        check(abs(restarted[key] - uninterrupted[key]) <= 1e-5 * max(1.0, abs(uninterrupted[key])),
              f"{key}: uninterrupted {uninterrupted[key]} vs restarted {restarted[key]}")


def test_a_killed_masters_launcher_ends_the_job_it_does_not_restart_into_a_wait():
    """Found by the chaos soak: with restarts left, a node whose rank failed when the master's node
    was killed took its own rank's failure for the root cause, restarted, and waited for the gone
    master until the rendezvous timeout. It must stop within dead_after, naming the master."""
    need(HOUSING)
    with namespace_or_loopback(2) as hosts:
        nodes = start_nodes(2, long_training(), ["--max_restarts=3", "--grace_period=1"], hosts=hosts)
        try:
            wait_for(lambda: all(n.exists("log", "workerlog.0") and "step " in n.read("log", "workerlog.0")
                                 for n in nodes), 60, "training on both nodes")
            workers = [p for n in nodes for p in n.children()]
            killed = time.monotonic()
            os.kill(nodes[0].proc.pid, signal.SIGKILL)
            code = nodes[1].finish(40)
            elapsed = time.monotonic() - killed
            nodes[0].finish(10)
        except BaseException:
            for n in nodes:
                n.kill()
            raise
        assert_sessions_gone([n.proc.pid for n in nodes] + workers)
    check(code != 0, f"node 1 exits non-zero, not {code}")
    check(elapsed < 20, f"node 1 stopped {elapsed:.1f} s after the kill")
    check("restart 1 of 3" not in nodes[1].err, f"node 1 did not restart into a wait\n{nodes[1].err[-3000:]}")
    check(f"the master {hosts.ips[0]}" in nodes[1].err, f"node 1 names the master\n{nodes[1].err[-3000:]}")


def test_bad_cluster_input_is_one_line_and_starts_nothing():
    need(HOUSING)
    port = free_ports(1)[0]
    cases = [
        (["--master=127.0.0.1:1"], "--master needs --nnodes"),
        (["--master=10.0.0.300:80", "--nnodes=2"], "is not an IPv4 address or a host name"),
        (["--master=10.1.2.3:8090", "--nnodes=2", "--host=127.0.0.1"], "a loopback address cannot join"),
        ([f"--master=127.0.0.1:{port}", "--nnodes=2", "--job_id=a/b"], "--job_id"),
    ]
    for flags, message in cases:
        r = subprocess.run([LAUNCH, *flags, TRAIN], capture_output=True, text=True, timeout=30, cwd=scratch(),
                           env=child_env())
        check(r.returncode == 2, f"{flags}: exit 2\n{r.stderr}")
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        check(len(lines) == 1 and message in lines[0], f"{flags}: one line naming it: {r.stderr}")


def test_two_nodes_claiming_one_rank_and_a_missing_node_are_named():
    need(HOUSING)
    master = f"127.0.0.1:{free_ports(1)[0]}"
    a = Node(0, master, 2, long_training(), ["--rank=1"])
    b = Node(1, master, 2, long_training(), ["--rank=1"])
    for n in (a, b):
        code = n.finish(30)
        check(code == 2 and "both claim rank 1" in n.err, f"node {n.index}: exit 2 naming the clash\n{n.err[-2000:]}")
    lonely = Node(0, f"127.0.0.1:{free_ports(1)[0]}", 2, long_training(), ["--rendezvous_timeout=3"])
    started = time.monotonic()
    code = lonely.finish(30)
    check(code == 124, f"rendezvous timeout exit 124, got {code}\n{lonely.err[-2000:]}")
    check(time.monotonic() - started < 15, "gives up near the timeout")
    check("waiting for 1 of 2 nodes; have: 127.0.0.1" in lonely.err and "timed out" in lonely.err,
          f"names what it waited for\n{lonely.err[-2000:]}")


def test_slurm_variables_make_the_job_without_master_flags():
    need(HOUSING)
    args = fit_a_line(["--set", "epochs=2"])
    port = port_run(4)  # the master, then --start_port and the trainers above it
    # Node ranks from SLURM_NODEID, deliberately the reverse of the addresses' order.
    nodes = [Node(i, None, None, args, [f"--start_port={port + 1}"],
                  env={"SLURM_JOB_NODELIST": "127.0.0.[1-2]", "SLURM_NNODES": "2", "SLURM_NODEID": str(1 - i)})
             for i in range(2)]
    for n in nodes:
        check(n.finish(120) == 0, f"node {n.index} exits 0\n{n.err[-3000:]}")
        check("from Slurm (SLURM_JOB_NODELIST=127.0.0.[1-2])" in n.err, f"node {n.index} names its source\n{n.err[-2000:]}")
    rank_map = nodes[0].read("log", "endpoints.log")
    check("node 0  127.0.0.2 " in rank_map and "node 1  127.0.0.1 " in rank_map, f"SLURM_NODEID decides:\n{rank_map}")
    check(f"127.0.0.1:{port}" in nodes[0].err, "the master is the first listed node, one port below --start_port")
    r = subprocess.run([LAUNCH, "--nnodes=2", TRAIN], capture_output=True, text=True, timeout=30, cwd=scratch(),
                       env=child_env({"SLURM_JOB_NODELIST": "n[1-3]", "SLURM_NNODES": "3", "SLURM_NODEID": "0"}))
    check(r.returncode == 2 and "--nnodes=2 contradicts Slurm (SLURM_JOB_NODELIST=n[1-3]), which gives 3 node(s)" in r.stderr,
          f"a flag against the scheduler is one line\n{r.stderr}")


# A host name for 127.0.0.1 where this machine's /etc/hosts has one (a minimal root has none).
def _local_name():
    try:
        return "localhost" if socket.gethostbyname("localhost") == "127.0.0.1" else "127.0.0.1"
    except OSError:
        return "127.0.0.1"


LOCAL_NAME = _local_name()


def test_kubernetes_operators_variables_make_the_job():
    need(HOUSING)
    args = fit_a_line(["--set", "epochs=2"])
    master_port = free_ports(1)[0]
    start = port_run(4) + 1  # PaddleJob's master is one port below the trainers' first
    styles = {  # the source each node names: the variables it was given
        "Kubernetes PyTorchJob (MASTER_ADDR": lambda i: {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(master_port),
                                                        "PET_NNODES": "2", "PET_NODE_RANK": str(i)},
        "Kubernetes PyTorchJob (PET_MASTER_ADDR": lambda i: {"PET_MASTER_ADDR": LOCAL_NAME, "PET_MASTER_PORT": str(master_port),
                                                            "PET_NNODES": "2", "PET_NODE_RANK": str(i),
                                                            "PET_NPROC_PER_NODE": "1"},
        "Kubernetes PaddleJob": lambda i: {"PADDLE_TRAINER_ENDPOINTS": f"127.0.0.1:{start},127.0.0.2:{start}",
                                           "POD_IP": f"127.0.0.{i + 1}", "PADDLE_TRAINER_ID": str(i)},
        "Volcano (VC_WORKER_HOSTS, VC_TASK_INDEX)": lambda i: {"VC_WORKER_HOSTS": "127.0.0.1,127.0.0.2",
                                                              "VC_WORKER_NUM": "2", "VC_TASK_INDEX": str(i)},
    }
    for style, env in styles.items():
        nodes = [Node(i, None, None, args, [f"--start_port={start}"], env=env(i)) for i in range(2)]
        for n in nodes:
            check(n.finish(120) == 0, f"{style}: node {n.index} exits 0\n{n.err[-3000:]}")
            check(f"from {style}" in n.err, f"{style}: node {n.index} names its source\n{n.err[-2000:]}")
        with open(os.path.join(nodes[0].workdir, "output", "metrics.json")) as f:
            check(json.load(f)["world_size"] == 2, f"{style}: one job of 2 nodes")


def test_a_real_mpirun_with_one_launcher_per_node():
    need(HOUSING)
    mpirun = shutil.which("mpirun")
    if not mpirun:
        raise Skip("Open MPI's mpirun is not installed")
    workdir = scratch()
    cmd = [mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "1", "-npernode", "1", LAUNCH, "--nproc_per_node=2",
           TRAIN, *fit_a_line(["--set", "epochs=2"])]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=workdir, env=child_env())
    check(r.returncode == 0, f"mpirun -npernode 1 paddle-launch exits 0\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}")
    check("scheduler: Open MPI (OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE): 1 node(s), this is node 0" in r.stderr,
          f"the launcher names Open MPI as its source\n{r.stderr[-2000:]}")
    with open(os.path.join(workdir, "output", "metrics.json")) as f:
        check(json.load(f)["world_size"] == 2, "2 processes trained")


def test_namespace_hosts_a_cut_link_and_a_killed_launcher_stop_every_node():
    need(HOUSING)
    for trouble in ("cut", "kill"):
        with NamespaceHosts(3) as hosts:
            nodes = start_nodes(3, long_training(), ["--grace_period=1"], hosts=hosts)
            try:
                wait_for(lambda: all(n.exists("log", "workerlog.0") and "step " in n.read("log", "workerlog.0")
                                     for n in nodes), 60, "training on every namespace host")
                workers = [p for n in nodes for p in n.children()]
                started = time.monotonic()
                if trouble == "cut":
                    hosts.cut(1)
                else:
                    os.kill(nodes[1].proc.pid, signal.SIGKILL)
                for n in (nodes[0], nodes[2]):
                    code = n.finish(30)
                    elapsed = time.monotonic() - started
                    check(code != 0, f"{trouble}: host {n.index} exits non-zero")
                    check(elapsed < (15 if trouble == "cut" else 10),
                          f"{trouble}: host {n.index} stopped in {elapsed:.1f} s")
                    check(f"node 1 ({hosts.ips[1]}" in n.err,
                          f"{trouble}: host {n.index} names node 1\n{n.err[-2000:]}")
                nodes[1].finish(30)
            except BaseException:
                for n in nodes:
                    n.kill()
                raise
            assert_sessions_gone([n.proc.pid for n in nodes] + workers)


if __name__ == "__main__":
    main(sys.modules[__name__])
