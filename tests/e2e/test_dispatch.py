#!/usr/bin/env python3
"""End-to-end tests of a job dispatched over SSH (--hostfile, --hosts, --cluster_conf): real sshd
on network-namespace hosts (ssh_hosts.py), each seeing its own copy of the workspace. The
dispatcher runs outside every host; a host is clean when nothing but its sshd runs in its
namespace (found by pid, never by name). Without root these tests skip."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import PROBE, Skip, check, launch, main, pid_alive, read_dumps, scratch, wait_for  # noqa: E402
from ssh_hosts import SshHosts  # noqa: E402
from test_ps import MOVIELENS, recommender_args  # noqa: E402
from test_train import HOUSING, TRAIN, fit_a_line, max_relative_difference, need, read_checkpoint  # noqa: E402

LAUNCH = os.environ.get("PADDLE_LAUNCH", "paddle-launch")


class Dispatch:
    """One dispatcher run: its Popen and its directory (which holds the package `job`)."""

    def __init__(self, hosts, source, args, job="job", extra=(), root_dir=True, remote_launcher=True):
        self.hosts, self.job = hosts, job
        self.dir = scratch()
        self.package = os.path.join(self.dir, job)
        os.makedirs(os.path.join(self.package, "dumps"), exist_ok=True)  # where the probes write
        with open(os.path.join(self.package, "data.txt"), "w") as f:
            f.write("workspace file\n")
        cmd = [LAUNCH, *source(self.dir), *[f"--ssh_opt={o}" for o in hosts.ssh_options()],
               *([f"--remote_launcher={LAUNCH}"] if remote_launcher else []), f"--job_dispatch_package={self.package}",
               *extra]
        if root_dir:
            cmd.append(f"--root_dir={hosts.remote_root}")
        self.started = time.monotonic()
        self.proc = subprocess.Popen(hosts.client_command(cmd + list(args)), cwd=self.dir, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, start_new_session=True)

    def finish(self, timeout=90):
        try:
            self.out, self.err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.out, self.err = self.proc.communicate()
            raise AssertionError(f"the dispatcher did not finish in {timeout}s\n{self.out[-3000:]}\n{self.err[-3000:]}")
        self.seconds = time.monotonic() - self.started
        return self.proc.returncode

    def remote(self, i, *path):
        """A path in host i's copy of the workspace."""
        return os.path.join(self.hosts.host_dir(i), self.job, *path)

    def dumps(self, i):
        return read_dumps(self.remote(i, "dumps"))

    def wait_running(self, count, timeout=30):
        """Waits until each of the first `count` hosts has a probe running (its dump written)."""
        def running():
            if self.proc.poll() is not None:
                self.finish()
                raise AssertionError(f"the dispatcher ended before its probes ran\n{self.text()}")
            return all(self.dumps(i) for i in range(count))
        wait_for(running, timeout, f"a probe on each of {count} hosts")

    def text(self):
        return f"exit {self.proc.returncode}\nstdout:\n{self.out[-4000:]}\nstderr:\n{self.err[-4000:]}"


def hostfile(hosts, slots=None):
    return lambda d: [f"--hostfile={hosts.hostfile(os.path.join(d, 'hostfile'), slots)}"]


def probe(*args):
    return [PROBE, "--dump", "dumps", *args]


def test_a_collective_job_on_three_hosts_equals_one_node():
    need(HOUSING)
    args = fit_a_line(["--set", "batch_size=10", "--set", "max_steps=20", "--set", "shuffle=true"])
    with SshHosts(3) as hosts:
        job = Dispatch(hosts, hostfile(hosts, slots=2), [TRAIN, *args], extra=["--fetch_logs"])
        code = job.finish()
        hosts.wait_clean([0, 1, 2], timeout=5)
        check(code == 0, "the dispatched job exits 0", job)
        check(f"[{hosts.ips[0]}] " in job.out and "metrics:" in job.out, "node 0's console is echoed with its host", job)
        for i in range(3):
            with open(job.remote(i, "nodefile")) as f:
                check(f.read().strip() == str(i), f"host {i}'s nodefile names node {i}")
            check(os.path.exists(job.remote(i, "data.txt")), f"the package was copied to host {i}")
            check(os.path.exists(os.path.join(job.dir, "log", hosts.ips[i], "workerlog.1")),
                  f"--fetch_logs brought host {i}'s log/ back")
        multi_checkpoint = job.remote(0, "output", "final.bin")
        with open(job.remote(0, "output", "metrics.json")) as f:
            check(json.load(f)["world_size"] == 6, "3 hosts x 2 slots are 6 ranks")
        check(not os.path.exists(job.remote(1, "output", "final.bin")), "the model output is node 0's alone")
        _, multi = read_checkpoint(multi_checkpoint)
    one = launch(["--nproc_per_node=6"], args, script=TRAIN, timeout=60)
    check(one.returncode == 0, "one node with 6 processes", one)
    _, single = read_checkpoint(one.path("output", "final.bin"))
    diff = max_relative_difference(single, multi)
    check(diff <= 1e-5, f"3 hosts x 2 equal 1 node x 6: relative difference {diff:.2e}")


def test_the_recommender_on_servers_of_two_hosts_equals_one_node():
    need(MOVIELENS)
    args = recommender_args(["--set", "max_steps=30", "--set", "ps.mode=sync"])
    with SshHosts(2) as hosts:
        job = Dispatch(hosts, hostfile(hosts), ["--server_num=1", "--worker_num=1", TRAIN, *args])
        code = job.finish(timeout=100)
        hosts.wait_clean([0, 1], timeout=5)
        check(code == 0, "the dispatched PS job exits 0", job)
        with open(job.remote(0, "output", "metrics.json")) as f:
            two_hosts = json.load(f)
        with open(job.remote(0, "log", "endpoints.log")) as f:
            check("1 server(s)" in f.read(), "each host runs a server")
    one = launch(["--server_num=2", "--worker_num=2"], args, script=TRAIN, timeout=100)
    check(one.returncode == 0, "one node with 2 servers and 2 workers", one)
    with open(one.path("output", "metrics.json")) as f:
        single = json.load(f)
    check(abs(two_hosts["test_rmse"] - single["test_rmse"]) <= 1e-4,
          f"test RMSE: 2 hosts {two_hosts['test_rmse']} vs one node {single['test_rmse']}")


SEED_CONF = '''\
#!/usr/bin/python
# -*- coding: utf-8 -*-
HOSTS = [
    "root@{ip0}",
    "root@{ip1}:22",
]
\'\'\'
workspace configuration
\'\'\'
#root dir for workspace, can be set as any director with real user account
ROOT_DIR = "{root}"
\'\'\'
network configuration
\'\'\'
#pserver nics
PADDLE_NIC = "eth1"
#pserver port
PADDLE_PORT = 7164
#pserver ports num
PADDLE_PORTS_NUM = 2
#pserver sparse ports num
PADDLE_PORTS_NUM_FOR_SPARSE = 2
#environments setting for all processes in cluster job
LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/lib64"
'''


def test_the_seed_conf_py_works_unchanged_and_no_value_shows_on_a_command_line():
    with SshHosts(2) as hosts:
        hosts.name_links("eth1")
        conf_text = SEED_CONF.format(ip0=hosts.ips[0], ip1=hosts.ips[1], root=hosts.remote_root)

        def conf(d):
            with open(os.path.join(d, "conf.py"), "w") as f:
                f.write(conf_text)
            return [f"--cluster_conf={os.path.join(d, 'conf.py')}"]
        secret = "s3cr3t-value-7f"
        job = Dispatch(hosts, conf, probe("--sleep", "3"), root_dir=False, extra=["--env", f"MY_SECRET={secret}"])
        job.wait_running(2)
        for i in range(2):
            for pid in hosts.job_pids(i):
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        cmdline = f.read().decode(errors="replace")
                except OSError:
                    continue
                check(secret not in cmdline and "/usr/lib64" not in cmdline, f"no value on host {i}'s command line {cmdline!r}")
        code = job.finish()
        hosts.wait_clean([0, 1], timeout=5)
        check(code == 0, "the job of the seed conf.py exits 0", job)
        for i in range(2):
            (dump,) = job.dumps(i)
            env = dump["env"]
            check(env.get("GLOO_SOCKET_IFNAME") == "eth1", f"host {i}: PADDLE_NIC is the workers' interface: {env.get('GLOO_SOCKET_IFNAME')}")
            check(env.get("LD_LIBRARY_PATH") == "/usr/local/cuda/lib64:/usr/lib64", f"host {i}: LD_LIBRARY_PATH from conf.py")
            check(env.get("MY_SECRET") == secret, f"host {i}: --env reaches the processes")
            check(env["PADDLE_CURRENT_ENDPOINT"] == f"{hosts.ips[i]}:7164", f"host {i}: PADDLE_PORT is the first port: "
                  f"{env['PADDLE_CURRENT_ENDPOINT']}")
            with open(job.remote(i, "nodefile")) as f:
                check(f.read().strip() == str(i), f"host {i}'s nodefile")
        check("PADDLE_PORTS_NUM" in job.err, "the ports counts with no use here are named once", job)


def test_preflight_names_the_host_whose_key_is_refused_and_starts_nothing():
    with SshHosts(3, unauthorized=[1]) as hosts:
        job = Dispatch(hosts, hostfile(hosts), probe("--sleep", "30"))
        code = job.finish(timeout=40)
        check(code == 255, "exit 255: a host cannot be reached", job)
        lines = [l for l in job.err.splitlines() if "preflight:" in l]
        check(len(lines) == 1 and f"root@{hosts.ips[1]}" in lines[0] and "Permission denied (publickey)" in lines[0],
              f"one line naming host 1 and ssh's reason: {lines}", job)
        check("nothing was started" in job.err, "says nothing was started", job)
        for i in (0, 2):
            check(not os.path.exists(job.remote(i)), f"nothing was copied to host {i}")
        hosts.wait_clean([0, 1, 2], timeout=2)


def test_a_launcher_run_from_a_build_tree_is_found_on_the_hosts_at_its_own_path():
    remote_path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    if shutil.which("paddle-launch", path=remote_path):
        raise Skip("paddle-launch is installed on this machine's PATH, so the hosts would find that one first")
    with SshHosts(2) as hosts:
        job = Dispatch(hosts, hostfile(hosts), probe(), remote_launcher=False)
        code = job.finish(timeout=40)
        check(code == 0, f"the job runs without --remote_launcher\n{job.text()}")
        own = os.path.realpath(LAUNCH)
        for i in range(2):
            check(f"host root@{hosts.ips[i]}: paddle-launch is not on its PATH; running {own}" in job.err + job.out,
                  f"host {i} runs the dispatcher's own path\n{job.text()}")
            check(len(job.dumps(i)) == 1, f"host {i} ran its probe")
        hosts.wait_clean([0, 1], timeout=5)


def test_ctrl_c_stops_every_host_within_the_grace_period():
    with SshHosts(2) as hosts:
        job = Dispatch(hosts, hostfile(hosts), probe("--sleep", "60"), extra=["--grace_period=1"])
        job.wait_running(2)
        pids = [d["pid"] for i in range(2) for d in job.dumps(i)]
        sent = time.monotonic()
        job.proc.send_signal(signal.SIGINT)
        hosts.wait_clean([0, 1], timeout=1 + 2)
        clean_after = time.monotonic() - sent
        code = job.finish(timeout=20)
        check(code == 130, f"exit 130 after Ctrl-C (every host clean {clean_after:.2f}s after it)", job)
        check(not any(pid_alive(p) for p in pids), "the probes are gone")


def test_a_killed_dispatcher_leaves_nothing_on_any_host():
    with SshHosts(2) as hosts:
        job = Dispatch(hosts, hostfile(hosts), probe("--sleep", "60"))
        job.wait_running(2)
        os.killpg(job.proc.pid, signal.SIGKILL)  # the dispatcher and its ssh clients, as a closed terminal would
        job.proc.communicate()
        hosts.wait_clean([0, 1], timeout=15)


def test_a_worker_failing_on_host_2_stops_every_host_with_its_report_and_status():
    with SshHosts(3) as hosts:
        job = Dispatch(hosts, hostfile(hosts), probe("--sleep", "60", "--print", "rank two gives up",
                                                     "--fail-rank", "2", "--fail-after", "1", "--exit", "7"))
        code = job.finish(timeout=60)
        hosts.wait_clean([0, 1, 2], timeout=5)
        check(code == 7, "the dispatcher exits with the failing worker's status", job)
        check(f"node 2 ({hosts.ips[2]}" in job.out + job.err and "rank two gives up" in job.out + job.err,
              "the report names node 2 and shows its last lines", job)


def test_stopping_one_of_two_jobs_on_the_same_hosts_leaves_the_other_running():
    with SshHosts(2) as hosts:
        first = Dispatch(hosts, hostfile(hosts), probe("--sleep", "60"), job="first")
        second = Dispatch(hosts, hostfile(hosts), probe("--sleep", "6"), job="second")
        first.wait_running(2)
        second.wait_running(2)
        first_pids = [d["pid"] for i in range(2) for d in first.dumps(i)]
        second_pids = [d["pid"] for i in range(2) for d in second.dumps(i)]
        first.proc.send_signal(signal.SIGTERM)
        check(first.finish(timeout=20) == 143, "the stopped job exits 143", first)
        wait_for(lambda: not any(pid_alive(p) for p in first_pids), 3, "the first job's processes to be gone")
        check(all(pid_alive(p) for p in second_pids) and second.proc.poll() is None, "the second job still runs")
        check(second.finish(timeout=30) == 0, "the second job then succeeds", second)
        hosts.wait_clean([0, 1], timeout=5)


if __name__ == "__main__":
    main(sys.modules[__name__])
