"""Helpers for the end-to-end tests: run the real paddle-launch with the probe program in a
scratch directory, read what the probes dumped, and check that no process is left behind."""

import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from ports import free_ports, port_run  # noqa: E402,F401  (re-exported for the suites)

LAUNCH = os.environ.get("PADDLE_LAUNCH", "paddle-launch")
PROBE = os.environ.get("PROBE", "probe")
SKIP = 77  # CTest's SKIP_RETURN_CODE


class Skip(Exception):
    pass


class Result:
    def __init__(self, proc, stdout, stderr, workdir, elapsed):
        self.returncode = proc.returncode
        self.stdout = stdout
        self.stderr = stderr
        self.workdir = workdir
        self.elapsed = elapsed

    def path(self, *parts):
        return os.path.join(self.workdir, *parts)

    def read(self, *parts):
        with open(self.path(*parts), errors="replace") as f:
            return f.read()

    def dumps(self):
        return read_dumps(self.path("dumps"))


def read_dumps(directory):
    docs = []
    for name in glob.glob(os.path.join(directory, "*.json")):
        with open(name) as f:
            docs.append(json.load(f))
    return sorted(docs, key=lambda d: (d["attempt"], d["role"], d["rank"]))


def scratch():
    d = tempfile.mkdtemp(prefix="e2e-")
    os.makedirs(os.path.join(d, "dumps"))
    return d


def child_env(extra=None):
    env = dict(os.environ)
    env.pop("OMP_NUM_THREADS", None)
    env.pop("FLAGS_START_PORT", None)
    env.pop("POD_IP", None)
    env.update(extra or {})
    return env


def start(launch_args, probe_args=(), workdir=None, env=None, script=None):
    """Starts paddle-launch in the background; returns (Popen, workdir)."""
    workdir = workdir or scratch()
    cmd = [LAUNCH] + list(launch_args) + [script or PROBE]
    if script is None:
        cmd += ["--dump", os.path.join(workdir, "dumps")]
    cmd += list(probe_args)
    proc = subprocess.Popen(cmd, cwd=workdir, env=child_env(env), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    return proc, workdir


def finish(proc, workdir, started, timeout=60):
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        raise AssertionError(f"paddle-launch did not finish in {timeout}s\nstdout:\n{stdout}\nstderr:\n{stderr}")
    return Result(proc, stdout, stderr, workdir, time.monotonic() - started)


def launch(launch_args, probe_args=(), timeout=60, **kw):
    started = time.monotonic()
    proc, workdir = start(launch_args, probe_args, **kw)
    return finish(proc, workdir, started, timeout)


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def wait_for_dumps(workdir, count, timeout=20):
    return wait_for(lambda: len(read_dumps(os.path.join(workdir, "dumps"))) >= count and
                    read_dumps(os.path.join(workdir, "dumps")), timeout, f"{count} probe dumps")


def process_stats():
    """(pid, state, ppid, pgrp, session) of every process now, from /proc."""
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat) as f:
                text = f.read()
        except OSError:
            continue
        fields = text[text.rfind(")") + 2:].split()
        yield int(stat.split("/")[2]), fields[0], int(fields[1]), int(fields[2]), int(fields[3])


def live_members(pgid):
    """Pids of processes in group `pgid` that are not zombies."""
    return [pid for pid, state, _, pgrp, _ in process_stats() if pgrp == pgid and state != "Z"]


def children_of(pid):
    """Pids whose parent is `pid`."""
    return [child for child, _, ppid, _, _ in process_stats() if ppid == pid]


def session_members(sid):
    """Pids of live (not zombie) processes in session `sid` or process group `sid`. A launcher
    started with start_new_session has its pid as both; its workers, each in a process group of
    its own, stay in its session, as do their children, whichever restart they belong to."""
    return [pid for pid, state, _, pgrp, session in process_stats() if state != "Z" and sid in (pgrp, session)]


def assert_sessions_gone(sids, timeout=5.0):
    """No process is left in the sessions or process groups `sids` (launchers' pids)."""
    left = []

    def gone():
        left[:] = [p for s in sids for p in session_members(s)]
        return not left
    try:
        wait_for(gone, timeout, "every process of the job to be gone")
    except AssertionError:
        raise AssertionError(f"processes left after {timeout}s in sessions {list(sids)}: {left}") from None


def pid_alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return False
    return text[text.rfind(")") + 2:].split()[0] != "Z"


def assert_all_gone(dumps, timeout=3.0):
    """Every probe's process group, and any grandchild it started, is gone."""
    def gone():
        for d in dumps:
            if live_members(d["pgid"]) or pid_alive(d["pid"]) or (d["grandchild"] and pid_alive(d["grandchild"])):
                return False
        return True
    wait_for(gone, timeout, "every launched process and its group to be gone")


def check(condition, message, result=None):
    if not condition:
        detail = ""
        if result is not None:
            detail = f"\nexit status: {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
        raise AssertionError(message + detail)


def main(module):
    name = sys.argv[1]
    test = getattr(module, name)
    try:
        test()
    except Skip as e:
        print(f"SKIP {name}: {e}")
        sys.exit(SKIP)
    print(f"PASS {name}")
