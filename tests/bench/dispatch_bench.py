#!/usr/bin/env python3
"""Dispatch over SSH, timed (run by scripts/bench_dispatch.sh, which builds first).

Hosts are real sshd servers on network namespaces of this machine (tests/e2e/ssh_hosts.py), so
it needs root. The package is WORKSPACE_MB of incompressible files. For N = 2 and 4 hosts:
  first     dispatcher start -> every host's probe started, the package not yet on any host
  again     the same, after one 1 MB file of the package changed (rsync sends the change only)
and the copy's share of each, from the dispatcher's log. The comparison is cluster_train's
way: the same rsync to one host after another.
  dispatch_bench.py LAUNCHER PROBE RUNS WORKDIR MACHINE
"""

import glob
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from harness import Skip  # noqa: E402
from ssh_hosts import SshHosts  # noqa: E402

WORKSPACE_MB = 50


def make_package(path):
    os.makedirs(os.path.join(path, "dumps"))
    for i in range(WORKSPACE_MB):
        with open(os.path.join(path, f"part{i:02}.bin"), "wb") as f:
            f.write(os.urandom(1 << 20))


def dispatch(hosts, launcher, probe, package, workdir):
    """Seconds from the dispatcher's start to every host's probe started, and the copy's seconds."""
    cmd = hosts.client_command([
        launcher, f"--hosts={','.join(hosts.destinations())}", *[f"--ssh_opt={o}" for o in hosts.ssh_options()],
        f"--root_dir={hosts.remote_root}", f"--job_dispatch_package={package}", f"--remote_launcher={launcher}",
        probe, "--dump", "dumps"])
    dumps = [os.path.join(hosts.host_dir(i), "job", "dumps") for i in range(len(hosts.ips))]
    for d in dumps:
        shutil.rmtree(d, ignore_errors=True)
    started = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    while not all(glob.glob(os.path.join(d, "*.json")) for d in dumps):
        if proc.poll() is not None and proc.returncode != 0:
            sys.exit(f"the dispatcher failed:\n{proc.stderr.read()}")
        time.sleep(0.005)
    seconds = time.monotonic() - started
    err = proc.communicate()[1]
    if proc.returncode != 0:
        sys.exit(f"the dispatcher failed:\n{err}")
    copy = re.findall(r"copied the workspace to \d+ host\(s\) in ([\d.]+)s", err)
    return seconds, float(copy[-1])


def sequential_copy(hosts, package):
    """cluster_train's way: the same rsync to each host in turn; seconds."""
    opts = " ".join(hosts.ssh_options())
    started = time.monotonic()
    for i, d in enumerate(hosts.destinations()):
        subprocess.run(hosts.client_command(["rsync", "--archive", "--delete", "--mkpath", "-e",
                                             f"ssh -o BatchMode=yes {opts}", package + "/",
                                             f"{d}:{hosts.remote_root}/seq/"]), check=True)
    return time.monotonic() - started


def summary(values):
    return f"{statistics.median(values):.2f} s ({min(values):.2f}-{max(values):.2f})"


def main():
    launcher, probe, runs, workdir, machine = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
    package = os.path.join(workdir, "job")
    make_package(package)
    print(f"machine: {machine}; hosts: sshd on network namespaces of this machine; "
          f"a {WORKSPACE_MB} MB package; median of {runs} with the range")
    for count in (2, 4):
        try:
            hosts = SshHosts(count)
        except Skip as why:
            sys.exit(f"bench_dispatch needs hosts with sshd: {why}")
        with hosts:
            first, again, first_copy, again_copy, sequential = [], [], [], [], []
            for _ in range(runs):
                for i in range(count):
                    shutil.rmtree(os.path.join(hosts.host_dir(i), "job"), ignore_errors=True)
                    shutil.rmtree(os.path.join(hosts.host_dir(i), "seq"), ignore_errors=True)
                total, copy = dispatch(hosts, launcher, probe, package, workdir)
                first.append(total)
                first_copy.append(copy)
                with open(os.path.join(package, "part00.bin"), "wb") as f:
                    f.write(os.urandom(1 << 20))
                total, copy = dispatch(hosts, launcher, probe, package, workdir)
                again.append(total)
                again_copy.append(copy)
                sequential.append(sequential_copy(hosts, package))
            print(f"{count} hosts: first dispatch to every probe started {summary(first)}, of which the copy "
                  f"{summary(first_copy)}; after a 1 MB change {summary(again)}, the copy {summary(again_copy)}")
            print(f"{count} hosts: the same first copy host after host (cluster_train's way): {summary(sequential)}")


if __name__ == "__main__":
    main()
