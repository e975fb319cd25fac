#!/usr/bin/env python3
"""End-to-end tests of jobs whose launchers meet in etcd (--master=etcd://...), fixed and elastic
(--nnodes=MIN:MAX). Each test starts its own etcd (Debian's etcd-server) on free loopback ports
with a temporary data directory; nodes are launchers on loopback aliases (127.0.0.1, 127.0.0.2,
...), each in its own directory with its console in files there. Every test bounds its time and
checks by pid that no process of the job is left."""

import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Skip, check, child_env, children_of, free_ports, main, pid_alive, scratch, wait_for  # noqa: E402
from test_train import HOUSING, fit_a_line, need  # noqa: E402

LAUNCH = os.environ.get("PADDLE_LAUNCH", "paddle-launch")
TRAIN = os.environ.get("TRAIN", "train")
PROBE = os.environ.get("PROBE", "probe")


class Etcd:
    """A single-member etcd on free loopback ports, its data in a temporary directory."""

    def __init__(self):
        binary = shutil.which("etcd")
        if not binary:
            raise Skip("needs etcd (Debian's etcd-server; scripts/setup.sh installs it)")
        self.port, peer = free_ports(2)
        self.data = tempfile.mkdtemp(prefix="etcd-")
        client, peer_url = f"http://127.0.0.1:{self.port}", f"http://127.0.0.1:{peer}"
        self.log = open(os.path.join(self.data, "etcd.log"), "w")
        self.proc = subprocess.Popen(
            [binary, "--name", "test", "--data-dir", os.path.join(self.data, "member"),
             "--listen-client-urls", client, "--advertise-client-urls", client,
             "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
             "--initial-cluster", f"test={peer_url}"],
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            wait_for(self._healthy, 20, "etcd to serve")
        except BaseException:
            self.close()
            raise

    @property
    def url(self):
        return f"etcd://127.0.0.1:{self.port}"

    def _call(self, path, body):
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=json.dumps(body).encode())
        with urllib.request.urlopen(request, timeout=2) as answer:
            return json.load(answer)

    def _healthy(self):
        if self.proc.poll() is not None:
            raise AssertionError(f"etcd exited: {open(os.path.join(self.data, 'etcd.log')).read()[-2000:]}")
        try:
            self._call("/v3/kv/range", {"key": base64.b64encode(b"x").decode()})
            return True
        except OSError:
            return False

    def keys(self, prefix):
        end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        answer = self._call("/v3/kv/range", {"key": base64.b64encode(prefix.encode()).decode(),
                                             "range_end": base64.b64encode(end.encode()).decode()})
        return [base64.b64decode(kv["key"]).decode() for kv in answer.get("kvs", [])]

    def close(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self.log.close()
        shutil.rmtree(self.data, ignore_errors=True)


class Node:
    """One node's launcher on 127.0.0.(index+1), its console in out.txt and err.txt of its directory."""

    def __init__(self, index, launch_args, program):
        self.index = index
        self.ip = f"127.0.0.{index + 1}"
        self.workdir = scratch()
        self.out = open(os.path.join(self.workdir, "out.txt"), "w")
        self.err = open(os.path.join(self.workdir, "err.txt"), "w")
        cmd = [LAUNCH, f"--host={self.ip}", *launch_args, *program]
        self.proc = subprocess.Popen(cmd, cwd=self.workdir, env=child_env(), stdout=self.out, stderr=self.err,
                                     start_new_session=True)
        self.seen = set()  # every child pid seen, for the check that none is left

    def console(self):
        with open(os.path.join(self.workdir, "err.txt"), errors="replace") as f:
            return f.read()

    def read(self, *parts):
        with open(os.path.join(self.workdir, *parts), errors="replace") as f:
            return f.read()

    def note_children(self):
        if self.proc.poll() is None:
            self.seen.update(children_of(self.proc.pid))
        return True

    def finish(self, timeout):
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            raise AssertionError(f"node {self.index} did not finish in {timeout}s\n{self.console()[-3000:]}")
        finally:
            self.out.close()
            self.err.close()
        return self.proc.returncode

    def kill_all(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def assert_gone(nodes, timeout=5):
    pids = [p for n in nodes for p in n.seen]
    wait_for(lambda: not any(pid_alive(p) for p in pids), timeout, f"processes {pids} to be gone")


def wait_nodes(nodes, predicate, timeout, what):
    """wait_for, whose failure shows the end of every node's console."""
    try:
        return wait_for(predicate, timeout, what)
    except AssertionError as e:
        consoles = "".join(f"\n--- node {n.index}:\n{n.console()[-1500:]}" for n in nodes)
        raise AssertionError(f"{e}{consoles}") from None


def training(nodes, generation):
    """Every node has started `generation` and its first worker trains."""
    for n in nodes:
        n.note_children()
        if f"rank map of generation {generation} " not in n.console():
            return False
        try:
            if "step " not in n.read("log", "workerlog.0"):
                return False
        except OSError:
            return False
    return True


def rank_map_size(node, generation):
    text = node.console()
    start = text.index(f"rank map of generation {generation} ")
    return sum(1 for line in text[start:].splitlines()[1:6] if line.lstrip().startswith("node "))


def test_an_etcd_master_runs_a_fixed_job_and_leaves_no_keys():
    need(HOUSING)
    etcd = Etcd()
    nodes = []
    try:
        args = fit_a_line(["--set", "batch_size=10", "--set", "max_steps=20"])
        nodes = [Node(i, [f"--master={etcd.url}", "--nnodes=2", "--job_id=fixed"], [TRAIN, *args]) for i in range(2)]
        for n in nodes:
            check(n.finish(60) == 0, f"node {n.index} exits 0\n{n.console()[-3000:]}")
        maps = [n.read("log", "endpoints.log") for n in nodes]
        check(maps[0] == maps[1] and "ranks 0" in maps[0] and "127.0.0.2" in maps[0], f"one rank map:\n{maps}")
        check(f"at etcd 127.0.0.1:{etcd.port}" in nodes[0].console(), "the launcher names etcd as its master")
        check(etcd.keys("fixed.") == [], f"the job's keys are gone from etcd: {etcd.keys('fixed.')}")
    finally:
        for n in nodes:
            n.kill_all()
        etcd.close()


def test_elastic_nodes_join_and_leave_between_generations():
    need(HOUSING)
    etcd = Etcd()
    nodes = []
    try:
        # Long enough to outlast a join and a loss (about 25 s on two cores), short enough to finish.
        args = [TRAIN, *fit_a_line(["--set", "epochs=600", "--set", "batch_size=4"])]
        flags = [f"--master={etcd.url}", "--nnodes=2:3", "--elastic_timeout=1", "--grace_period=1", "--job_id=elastic"]
        nodes = [Node(i, flags, args) for i in range(2)]
        wait_nodes(nodes, lambda: training(nodes, 0), 60, "generation 0 training on 2 nodes")
        check(rank_map_size(nodes[0], 0) == 2, f"generation 0 has 2 nodes\n{nodes[0].console()[-2000:]}")

        nodes.append(Node(2, flags, args))
        wait_nodes(nodes, lambda: training(nodes, 1), 60, "generation 1 training on 3 nodes")
        for n in nodes:
            check(rank_map_size(n, 1) == 3, f"node {n.index}: generation 1 has 3 nodes\n{n.console()[-2000:]}")
        check("joined the job" in nodes[0].console(), "node 0 says a node joined")

        lost = time.monotonic()
        os.kill(nodes[2].proc.pid, signal.SIGKILL)
        wait_nodes(nodes, lambda: training(nodes[:2], 2), 60, "generation 2 training on the 2 nodes left")
        check(time.monotonic() - lost < 30, "the survivors restarted within 30 s of the loss")
        for n in nodes[:2]:
            check(rank_map_size(n, 2) == 2, f"node {n.index}: generation 2 has 2 nodes\n{n.console()[-2000:]}")
            check("127.0.0.3" in n.console() and "left" in n.console(), f"node {n.index} names the node that left")

        for n in nodes[:2]:
            check(n.finish(90) == 0, f"node {n.index} finishes with exit 0 (membership changes use no restart)\n"
                                    f"{n.console()[-3000:]}")
        nodes[2].finish(10)
        with open(os.path.join(nodes[0].workdir, "output", "metrics.json")) as f:
            metrics = json.load(f)
        check(metrics["world_size"] == 2 and metrics["epochs"] == 600, f"the job finished on 2 ranks: {metrics}")
        sizes = [g["world_size"] for g in metrics.get("generations", [])]
        check(sizes == [2, 3, 2], f"metrics.json records generations of 2, 3 and 2 ranks: {metrics.get('generations')}")
        assert_gone(nodes)
    finally:
        for n in nodes:
            n.kill_all()
        etcd.close()


def test_a_process_exiting_101_restarts_an_elastic_job():
    etcd = Etcd()
    nodes = []
    try:
        flags = [f"--master={etcd.url}", "--nnodes=1:2", "--elastic_timeout=5", "--job_id=again"]
        probe = [PROBE, "--sleep", "1", "--exit", "101", "--fail-rank", "1", "--fail-attempt", "0"]
        nodes = [Node(i, flags, probe) for i in range(2)]
        wait_for(lambda: [n.note_children() for n in nodes] and all(n.proc.poll() is not None for n in nodes), 60,
                 "both nodes to finish")
        for n in nodes:
            check(n.finish(5) == 0, f"node {n.index} exits 0 after the restart\n{n.console()[-3000:]}")
            check("asked for a restart (exit status 101)" in n.console(), f"node {n.index} says why it restarted")
            check("rank map of generation 1 " in n.console() and "rank map of generation 2" not in n.console(),
                  f"node {n.index} ran generations 0 and 1")
        assert_gone(nodes)
    finally:
        for n in nodes:
            n.kill_all()
        etcd.close()


def test_bad_elastic_input_is_one_line_and_starts_nothing():
    port = free_ports(1)[0]
    cases = [
        (["--master=etcd://127.0.0.1:2379", "--nnodes=3:2"], 2, "--nnodes=3:2: MIN is above MAX"),
        ([f"--master=127.0.0.1:{port}", "--nnodes=2:3"], 2, "needs --master=etcd://"),
        (["--master=etcd://127.0.0.1:2379", "--nnodes=1:2", "--rank=0"], 2, "drop --rank"),
        ([f"--master=etcd://127.0.0.1:{port}", "--nnodes=2"], 1, f"etcd 127.0.0.1:{port} is unreachable"),
    ]
    for flags, code, message in cases:
        r = subprocess.run([LAUNCH, *flags, PROBE], capture_output=True, text=True, timeout=30, cwd=scratch(),
                           env=child_env())
        check(r.returncode == code, f"{flags}: exit {code}\n{r.stderr}")
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        check(len(lines) == 1 and message in lines[0], f"{flags}: one line naming it: {r.stderr}")


if __name__ == "__main__":
    main(sys.modules[__name__])
