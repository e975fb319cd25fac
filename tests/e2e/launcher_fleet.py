"""A fleet of real paddle-launch processes, one "node" each on its own loopback address
(127.100.X.Y: all of 127.0.0.0/8 is this machine), meeting at node 0's master with --master,
--nnodes and --rank: what a job of many nodes asks of the control plane, on one machine. Each
node runs one probe (tests/probe.cc), which records its pid and process group. Used by the
many-launcher e2e test and by scripts/bench_control_plane.sh."""

import os
import signal
import subprocess
import time

from harness import child_env, read_dumps, session_members
from ports import free_ports


def fleet_ip(i):
    return f"127.100.{i // 250}.{i % 250 + 1}"


class LauncherFleet:
    def __init__(self, launcher, probe, work, n, job_id="fleet", launch_args=()):
        self.launcher, self.probe, self.work, self.n = launcher, probe, work, n
        self.job_id, self.launch_args = job_id, list(launch_args)
        self.dumps = os.path.join(work, "dumps")
        os.makedirs(self.dumps, exist_ok=True)
        self.procs = []

    def start(self, probe_args_of):
        """Starts every node; probe_args_of(i) gives node i's probe flags. Returns the start time."""
        master = f"{fleet_ip(0)}:{free_ports(1)[0]}"
        started = time.monotonic()
        for i in range(self.n):
            node = os.path.join(self.work, f"node{i}")
            os.makedirs(node, exist_ok=True)
            cmd = [self.launcher, f"--master={master}", f"--nnodes={self.n}", f"--rank={i}", f"--host={fleet_ip(i)}",
                   f"--job_id={self.job_id}", *self.launch_args, self.probe, "--dump", self.dumps, *probe_args_of(i)]
            with open(os.path.join(node, "console.txt"), "w") as console:
                self.procs.append(subprocess.Popen(cmd, cwd=node, env=child_env(), stdout=console,
                                                   stderr=subprocess.STDOUT, start_new_session=True))
        return started

    def wait(self, timeout):
        """Every launcher's exit status, waiting at most `timeout` seconds for all of them; raises
        AssertionError naming the nodes still running (and stops them) when they do not end."""
        deadline = time.monotonic() + timeout
        for p in self.procs:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                running = [i for i, q in enumerate(self.procs) if q.poll() is None]
                self.kill()
                raise AssertionError(f"{len(running)} launcher(s) still running after {timeout} s: nodes "
                                     f"{running[:20]}; node {running[0]} said:\n{self.console(running[0])[-2000:]}")
        return [p.returncode for p in self.procs]

    def console(self, i):
        with open(os.path.join(self.work, f"node{i}", "console.txt"), errors="replace") as f:
            return f.read()

    def probes(self):
        return read_dumps(self.dumps)

    def leftovers(self):
        """Live processes in any launcher's session or process group (each launcher leads its own)."""
        return [pid for p in self.procs for pid in session_members(p.pid)]

    def kill(self):
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait()
