"""What the chaos soak (chaos.py) drives: a job kind's interface (Job), one start of a job on every
host (Attempt) and its launchers (Node), the soak's clock, the invariant that did not hold
(Violation), and the bounds the soak holds attempts to. The job kinds: chaos_collective.py
(collective, elastic over etcd) and chaos_ps.py (parameter servers, restarted whole or a worker
in place)."""

import glob
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

LAUNCH = os.environ.get("PADDLE_LAUNCH", "paddle-launch")
TRAIN = os.environ.get("TRAIN", "train")
SHARED = os.environ.get("SHARED_DATA", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../shared/data"))
CONFIGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../configs")

DEAD_AFTER = 5.0       # the launchers' fixed silence limit (launcher/cluster/cluster_link.h)
STOP_BOUND = 30.0      # s from an attempt's last fault to its last launcher's exit, when it stops
ORPHAN_WAIT = 10.0     # s an attempt's processes have to be gone after its launchers exit
ATTEMPTS = 8           # attempts a run may use before it counts as lost
SIGNAL_BOUND = 2.0     # s from a signal to a launcher waiting in its rendezvous to its exit
AUC_TOLERANCE = 0.02   # an async PS run's test AUC against its reference


class Violation(Exception):
    """An invariant that did not hold; the soak goes on and reports it."""


class Clock:
    def __init__(self):
        self.start = time.monotonic()

    def now(self):
        return time.monotonic() - self.start


class Node:
    """One launcher of an attempt: host `index`, its own directory, its console in files there."""

    def __init__(self, hosts, index, workdir, cmd, attempt):
        self.index, self.workdir = index, workdir
        self.out_path = os.path.join(workdir, f"launcher-{attempt}.out")
        self.err_path = os.path.join(workdir, f"launcher-{attempt}.err")
        with open(self.out_path, "w") as out, open(self.err_path, "w") as err:
            self.proc = hosts.popen(index, cmd, cwd=workdir, stdout=out, stderr=err)
        self.exited_at = None

    def err(self):
        with open(self.err_path, errors="replace") as f:
            return f.read()

    def poll(self, clock):
        if self.proc.poll() is not None and self.exited_at is None:
            self.exited_at = clock.now()
        return self.proc.returncode


class Attempt:
    """One start of a job on every host, with the faults dealt to it."""

    def __init__(self, run, number):
        self.run, self.number = run, number
        self.faults = []            # (time, name, target, cause words one of which the stop must name)
        self.nodes = []             # the launcher now on each host
        self.replaced = []          # launchers an elastic job's operator started again
        self.killed = set()         # pids of launchers the soak killed: they name nothing
        self.started = None

    def running(self):
        return any(n.proc.returncode is None for n in self.nodes)


class Job:
    """What one kind of job is: its nodes' commands, what shows it is training, its result."""

    name = ""
    faults = ()
    hosts = 2
    replaces_lost_nodes = False  # an elastic job's operator starts a node's launcher again when it ends

    def __init__(self, soak, directory):
        self.soak, self.directory = soak, directory
        self.workdirs = []
        for i in range(self.hosts):
            d = os.path.join(directory, f"host{i}")
            os.makedirs(d)
            self.workdirs.append(d)

    def prepare(self):
        pass

    def commands(self, master):
        raise NotImplementedError

    def training(self):
        return False

    def result(self):
        raise NotImplementedError

    def equal(self, reference, result):
        raise NotImplementedError

    def newest_save(self):
        return None

    def refusal_mark(self, path):
        """What a log line refusing the damaged `path` holds: the path as the job names it."""
        return path + ": "

    def loaded(self, path, line):
        """Whether the log `line` says the job loaded `path` (in PS jobs: its save's directory)."""
        return "online: loading the " in line and line.rstrip().endswith(" from " + os.path.dirname(path))

    def load_lines(self, since):
        """Lines of the job's logs written after `since` (time.time()) that say what it loaded or
        refused to load: a log written before is an earlier attempt's."""
        found = []
        for w in self.workdirs:
            for log in glob.glob(os.path.join(w, "log", "workerlog.*")):
                try:
                    if os.path.getmtime(log) <= since:
                        continue
                except OSError:
                    continue
                with open(log, errors="replace") as f:
                    found += [line for line in f if "refusing" in line or "resumed from" in line or "loading" in line]
        return found

    def close(self):
        pass


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()
