#!/usr/bin/env python3
"""End-to-end tests of a launcher stopped by SIGINT or SIGTERM wherever it waits: in each wait
(the rendezvous on the master's node, a node waiting for a master that is not up yet, --ips,
Paddle's and the PaddleJob operator's variables, a PS job across nodes, the master's wait for
the other nodes to finish, the job page's linger) the signal ends the launcher within 2 s with
128 + the signal, a line naming what it waited for, and no process left. The nodes are loopback
aliases on this machine."""

import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (LAUNCH, PROBE, assert_sessions_gone, check, child_env, children_of, free_ports, main,  # noqa: E402
                     pid_alive, port_run, scratch, wait_for)

BOUND = 2.0  # seconds from the signal to the launcher's exit


class Launcher:
    """One paddle-launch in a directory of its own, in a session of its own."""

    def __init__(self, args, env=None, script=(PROBE, "--sleep", "60")):
        self.workdir = scratch()
        self.proc = subprocess.Popen([LAUNCH, *args, *script], cwd=self.workdir, env=child_env(env),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     start_new_session=True)
        self.out = self.err = ""

    def log(self):
        try:
            with open(os.path.join(self.workdir, "log", "launch.log"), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def wait_for_log(self, text, timeout=30):
        try:
            wait_for(lambda: text in self.log() or self.proc.poll() is not None, timeout, f"'{text}' in launch.log")
        except AssertionError:
            self.kill()
            raise
        check(self.proc.poll() is None, f"the launcher is still running at '{text}'\n{self.log()[-3000:]}")

    def stop(self, sig):
        """Sends `sig`; returns (exit status, seconds to exit). The orphan watchdog, in a session of
        its own, must go too."""
        helpers = children_of(self.proc.pid)
        sent = time.monotonic()
        os.kill(self.proc.pid, sig)
        try:
            self.out, self.err = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"no exit 30 s after {signal.Signals(sig).name}\n{self.log()[-3000:]}")
        took = time.monotonic() - sent
        assert_sessions_gone([self.proc.pid])
        wait_for(lambda: not any(pid_alive(p) for p in helpers), 5, f"the launcher's helpers {helpers} to be gone")
        return self.proc.returncode, took

    def kill(self):
        for pid in [self.proc.pid, *children_of(self.proc.pid)]:
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def stopped_in_wait(launcher, sig, marker, waiting_for):
    """`launcher`, once `marker` is in its launch.log, is sent `sig`: it exits 128 + sig within
    BOUND seconds, saying on stderr and in launch.log that `sig` came while `waiting_for`."""
    launcher.wait_for_log(marker)
    time.sleep(0.3)  # into the wait itself
    name = signal.Signals(sig).name
    status, took = launcher.stop(sig)
    said = f"received {name} while {waiting_for}"
    check(status == 128 + sig, f"exit {128 + sig} after {name}, got {status}\n{launcher.err[-3000:]}")
    check(took < BOUND, f"exits within {BOUND} s of {name}: took {took:.2f} s")
    check(said in launcher.err and said in launcher.log(), f"says '{said}'\n{launcher.err[-3000:]}")
    return launcher


def test_a_signal_ends_each_rendezvous_wait_within_two_seconds_leaving_nothing():
    start = port_run(8)
    master_port = free_ports(1)[0]
    master = f"127.0.0.1:{master_port}"
    rendezvous = "waiting in the rendezvous of job"
    cases = [
        # (what, launcher flags, environment, signal, what the line names); the first waits until
        # the rendezvous has said whom it waits for (after 5 s), so its line names them.
        ("the master's node, its peer not come", [f"--master={master}", "--nnodes=2", "--host=127.0.0.1"], None,
         signal.SIGINT, f"{rendezvous} default (generation 0) at the master {master}: waiting for 1 of 2 nodes; have: 127.0.0.1; "
         "missing: 1 unnamed node(s)"),
        ("a node whose master is not up yet", [f"--master={master}", "--nnodes=2", "--host=127.0.0.2"], None,
         signal.SIGTERM, f"{rendezvous} default (generation 0) at the master {master}: waiting for"),
        ("--ips, the first node", [f"--ips=127.0.0.1,127.0.0.2", "--host=127.0.0.1", f"--start_port={start}"], None,
         signal.SIGTERM, f"{rendezvous} default (generation 0) at the master 127.0.0.1:{start - 1}: waiting for 1 of 2 nodes"),
        ("--ips, the second node", [f"--ips=127.0.0.1,127.0.0.2", "--host=127.0.0.2", f"--start_port={start}"], None,
         signal.SIGINT, f"{rendezvous} default (generation 0) at the master 127.0.0.1:{start - 1}: waiting for"),
        ("Paddle's variables, pod 1", ["--host=127.0.0.2"],
         {"PADDLE_MASTER": master, "PADDLE_NNODES": "2", "PADDLE_JOB_ID": "pj"},
         signal.SIGTERM, f"{rendezvous} pj (generation 0) at the master {master}: waiting for"),
        ("the PaddleJob operator's variables, pod 0", [f"--start_port={start}"],
         {"PADDLE_TRAINER_ENDPOINTS": f"127.0.0.1:{start},127.0.0.2:{start}", "POD_IP": "127.0.0.1",
          "PADDLE_TRAINER_ID": "0"},
         signal.SIGINT, f"{rendezvous} default (generation 0) at the master 127.0.0.1:{start - 1}: waiting for 1 of 2 nodes"),
        ("a PS job across two nodes, its servers' other node not come",
         [f"--servers=127.0.0.1:{start + 2},127.0.0.2:{start + 2}", f"--workers=127.0.0.1:{start + 4},127.0.0.2:{start + 4}",
          "--host=127.0.0.1"], None,
         signal.SIGTERM, f"{rendezvous} default (generation 0) at the master 127.0.0.1:"),
    ]
    for i, (what, args, env, sig, waiting_for) in enumerate(cases):
        print(f"case: {what}", file=sys.stderr)
        launcher = Launcher(args, env)
        try:
            stopped_in_wait(launcher, sig, "waiting for 1 of 2 nodes" if i == 0 else "Configuration Arguments", waiting_for)
        except AssertionError as e:
            launcher.kill()
            raise AssertionError(f"{what}: {e}") from None


def test_a_signal_ends_the_masters_wait_for_the_other_node_to_finish():
    master = f"127.0.0.1:{free_ports(1)[0]}"
    short = Launcher([f"--master={master}", "--nnodes=2", "--host=127.0.0.1"], script=(PROBE, "--sleep", "0"))
    long = Launcher([f"--master={master}", "--nnodes=2", "--host=127.0.0.2"], script=(PROBE, "--sleep", "120"))
    try:
        # Node 0's process exits 0 at once; its launcher then keeps the store up, and says so
        # after 5 s (the report interval).
        stopped_in_wait(short, signal.SIGTERM, "this node is done; keeping the master store up",
                        "keeping the master store up, this node done, until node 1 (127.0.0.2) finish")
        # The other node, its master gone, ends by SIGTERM or by the master's loss, whichever
        # comes first, and nothing of either node is left.
        status, took = long.stop(signal.SIGTERM)
        check(status in (143, 1) and took < 10, f"node 1 stops: exit {status} in {took:.1f} s\n{long.err[-2000:]}")
    finally:
        short.kill()
        long.kill()


def test_ctrl_c_ends_the_job_pages_linger_at_once_with_the_jobs_status():
    launcher = Launcher(["--dashboard=auto", "--dashboard_linger=60"], script=(PROBE, "--sleep", "0"))
    try:
        launcher.wait_for_log("stays up for 60 s")
        status, took = launcher.stop(signal.SIGINT)
        check(status == 0, f"the job succeeded before the linger: exit 0, got {status}\n{launcher.err[-2000:]}")
        check(took < BOUND, f"the linger ends within {BOUND} s of SIGINT: took {took:.2f} s")
    finally:
        launcher.kill()


if __name__ == "__main__":
    main(sys.modules[__name__])
