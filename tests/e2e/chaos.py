#!/usr/bin/env python3
"""A seeded chaos soak: jobs on network-namespace hosts (netns_hosts.py) under a storm of faults
that land at random moments, overlap and hit the recovery path itself; after every run it checks
what a user of a long training job must be able to count on.

    python3 chaos.py --seed 7 --faults 200 --minutes 30     (scripts/chaos.sh sets the paths)

Each run is one job, driven as an operator would: started on every host; when it stops, started
again in the same directories (it resumes from what it saved) until it finishes. A run ends
finished, or lost once it has used every attempt (an invariant broken). Faults, drawn from the
seed, while a job attempt runs:
  kill-worker      SIGKILL of a training process on a random host (in ps-inplace jobs a worker,
                   which restarts alone while the servers keep their tables: --ps_worker_restarts)
  kill-server      SIGKILL of a parameter server (PS jobs)
  kill-launcher    SIGKILL of a node's launcher (the master's node too)
  pause-launcher   SIGSTOP of a node's launcher for longer than dead_after (5 s), then SIGCONT
  cut-host         a host's veth down for 1 to 8 s, then up
  disk-full        the node 0's output directory (a small tmpfs) filled up for 1 to 4 s
  kill-in-recovery a worker killed, then another as soon as the restarted generation runs
  restart-etcd     etcd killed and started again on its data (elastic jobs)
and while the job is down between attempts:
  damage-save      the newest checkpoint or PS save truncated, or one byte flipped
  signal-in-rendezvous  the last node's launcher started alone, and sent SIGINT or SIGTERM while it
                   waits in the rendezvous for the others: it exits 130/143 within SIGNAL_BOUND s,
                   saying what it waited for, and leaves nothing

Invariants, checked after every run (a broken one is printed and makes the exit status 1):
  - a finished run equals its undisturbed reference run (same seed, no faults): collective and
    sync PS bit for bit (final parameters, PS tables), async PS within AUC_TOLERANCE;
  - an attempt that stops does so within STOP_BOUND s of its last fault, non-zero, and its
    launchers' root cause names a fault it was dealt;
  - no damaged checkpoint or save is loaded: each is refused by its checksum, by name;
  - no process is left on any host after an attempt (by network namespace, and by the launchers'
    sessions), and no attempt outlives its time bound (a hang).
"""

import argparse
import collections
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Skip, session_members  # noqa: E402
from netns_hosts import NamespaceHosts, cmdline, comm, pids_in, where_it_waits  # noqa: E402
from chaos_job import (ATTEMPTS, DEAD_AFTER, ORPHAN_WAIT, SIGNAL_BOUND, STOP_BOUND, TRAIN, Attempt,  # noqa: E402
                       Clock, Node, read_bytes)
from chaos_collective import CollectiveJob, ElasticJob, Etcd  # noqa: E402
from chaos_ps import PsInPlaceJob, PsJob  # noqa: E402


class Soak:
    def __init__(self, seed, faults, minutes, jobs, keep):
        self.rng = random.Random(seed)
        self.seed, self.fault_budget, self.deadline = seed, faults, minutes * 60
        self.jobs = jobs
        self.clock = Clock()
        self.dir = tempfile.mkdtemp(prefix="chaos-")
        self.keep = keep
        self.stats = collections.Counter()
        self.kinds = collections.Counter()  # faults dealt, by kind
        self.lost_seconds = []
        self.violations = []
        self.references = {}
        self.hosts = None
        self.current_job, self.damaged = None, []  # the run's damaged files not yet seen refused
        self._etcd = None

    def etcd(self):
        """The soak's etcd, started on first use."""
        if self._etcd is None:
            self._etcd = Etcd(self.hosts, self.dir)
        return self._etcd

    # --- reporting
    def say(self, text):
        print(f"[{self.clock.now():7.1f}s] {text}", flush=True)

    def violated(self, run, text):
        self.violations.append(f"run {run}: {text}")
        self.say(f"VIOLATION run {run}: {text}")

    # --- processes
    def host_pids(self, i):
        return [p for p in pids_in(self.hosts.names[i]) if p not in self.persistent]

    def processes_of(self, i, name):
        """Live processes on host i whose command line starts with the program `name`."""
        return [p for p in self.host_pids(i)
                if os.path.basename(cmdline(p).split(" ")[0]) == name and comm(p) != "paddle-watchdog"]

    def trainers(self, i, role=None):
        found = []
        for p in self.processes_of(i, os.path.basename(TRAIN)):
            if role is None:
                found.append(p)
                continue
            try:
                with open(f"/proc/{p}/environ", "rb") as f:
                    env = f.read()
            except OSError:
                continue
            is_server = b"TRAINING_ROLE=PSERVER" in env
            if (role == "server") == is_server:
                found.append(p)
        return found

    def signal(self, pid, sig):
        try:
            os.kill(pid, sig)
            return True
        except ProcessLookupError:
            return False

    # --- one attempt
    def poll(self, attempt):
        """Notes which launchers have exited, and each damaged file a process refused by name (a
        restart truncates the logs, so they are read while the attempt runs)."""
        for n in attempt.nodes:
            n.poll(self.clock)
        job = self.current_job
        if job and job.replaces_lost_nodes and attempt.running() and len(attempt.replaced) < 6:
            for i, n in enumerate(attempt.nodes):
                if n.proc.returncode not in (None, 0) and n.exited_at is not None \
                        and self.clock.now() - n.exited_at > 1.0:
                    attempt.replaced.append(n)
                    cmd = job.commands(None)[i]
                    attempt.nodes[i] = Node(self.hosts, i, job.workdirs[i], cmd, f"{attempt.number}.{len(attempt.replaced)}")
                    self.say(f"run {attempt.run}: the operator starts host {i}'s launcher again "
                             f"(it exited {n.proc.returncode})")
        if self.damaged:
            # Each damaged file ends refused by name, or loaded (a corrupt load), or never needed
            # (a delta the newer base covers): the run then finishes without naming it.
            lines = job.load_lines(since=min(t for _, t in self.damaged))
            for entry in list(self.damaged):
                p = entry[0]
                if any(job.refusal_mark(p) in line for line in lines):
                    self.damaged.remove(entry)
                elif any(job.loaded(p, line) for line in lines):
                    self.damaged.remove(entry)
                    self.stats["corrupt loads"] += 1
                    self.violated(attempt.run, f"the damaged {p} was loaded: "
                                  + next(line for line in lines if job.loaded(p, line)).strip())

    def start_attempt(self, job, attempt):
        master = self.hosts.master_address()
        commands = job.commands(master)
        # The master's node last, as a user's nodes come up in any order.
        for i in reversed(range(len(commands))):
            attempt.nodes.insert(0, Node(self.hosts, i, job.workdirs[i], commands[i], attempt.number))
        attempt.started = self.clock.now()

    def wait_training(self, job, attempt, limit=60):
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            self.poll(attempt)
            if not attempt.running():
                return False
            if job.training():
                return True
            time.sleep(0.05)
        return False

    def sleep_running(self, attempt, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and attempt.running():
            self.poll(attempt)
            time.sleep(0.05)

    def deal(self, job, attempt, fault):
        """Injects `fault` into the running attempt; records what the stop must then name."""
        rng = self.rng
        hosts = self.hosts
        record = lambda target, causes: attempt.faults.append((self.clock.now(), fault, target, causes))  # noqa: E731
        if fault in ("kill-worker", "kill-in-recovery"):
            h = rng.randrange(len(attempt.nodes))
            victims = self.trainers(h, "worker")
            if not victims:
                return False
            victim = rng.choice(victims)
            self.signal(victim, signal.SIGKILL)
            record(f"train pid {victim} on host {h}", ["SIGKILL", "signal 9", "exit status 137", f"node {h} ("])
            if fault == "kill-in-recovery":
                restarted = self.wait_restart(attempt, victims_before=set(self.all_trainers()))
                if restarted:
                    h2 = rng.randrange(len(attempt.nodes))
                    second = [p for p in self.trainers(h2, "worker") if p in restarted]
                    if second:
                        self.signal(second[0], signal.SIGKILL)
                        record(f"train pid {second[0]} on host {h2}, in recovery",
                               ["SIGKILL", "signal 9", "exit status 137", f"node {h2} ("])
        elif fault == "kill-server":
            h = rng.randrange(len(attempt.nodes))
            victims = self.trainers(h, "server")
            if not victims:
                return False
            self.signal(victims[0], signal.SIGKILL)
            record(f"server pid {victims[0]} on host {h}", ["SIGKILL", "signal 9", "exit status 137", f"node {h} ("])
        elif fault == "kill-launcher":
            h = rng.randrange(len(attempt.nodes))
            node = attempt.nodes[h]
            if node.proc.poll() is not None:
                return False
            self.signal(node.proc.pid, signal.SIGKILL)
            attempt.killed.add(node.proc.pid)
            record(f"launcher pid {node.proc.pid} on host {h}", self.node_causes(h))
        elif fault == "pause-launcher":
            h = rng.randrange(len(attempt.nodes))
            node = attempt.nodes[h]
            if node.proc.poll() is not None:
                return False
            pause = DEAD_AFTER + rng.uniform(1, 3)
            self.signal(node.proc.pid, signal.SIGSTOP)
            record(f"launcher pid {node.proc.pid} on host {h} stopped for {pause:.1f} s", self.node_causes(h))
            try:
                self.watch(attempt, pause)
            finally:
                self.signal(node.proc.pid, signal.SIGCONT)
        elif fault == "cut-host":
            h = rng.randrange(len(attempt.nodes))
            cut = rng.uniform(1, 8)
            hosts.cut(h)
            # The nodes on either side of the cut name each other, or the master they lost.
            record(f"host {h} ({hosts.ips[h]}) cut off for {cut:.1f} s", self.node_causes(h) + self.node_causes(1 - h))
            try:
                self.watch(attempt, cut)
            finally:
                hosts.mend(h)
        elif fault == "restart-etcd":
            down = rng.uniform(0.5, 4)
            etcd = self.etcd()
            etcd.kill()
            record(f"etcd at {etcd.ADDRESS} down for {down:.1f} s", ["etcd", etcd.ADDRESS])
            self.sleep_running(attempt, down)
            etcd.start()
        elif fault == "disk-full":
            full = rng.uniform(1, 4)
            job.fill()
            record(f"{job.output} full for {full:.1f} s", ["No space left on device"])
            self.sleep_running(attempt, full)
            job.unfill()
        else:
            raise ValueError(fault)
        return True

    def node_causes(self, h):
        """What a root cause naming host h's launcher, or the master it hosts, says."""
        causes = [f"({self.hosts.ips[h]},", f"({self.hosts.ips[h]})"]
        return causes + ["the master", "lost etcd"] if h == 0 or self.current_job.replaces_lost_nodes else causes

    def watch(self, attempt, seconds):
        """Sleeps `seconds` while polling the attempt (its logs are read as they are written)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.poll(attempt)
            time.sleep(0.05)

    def all_trainers(self):
        return [p for i in range(len(self.hosts.names)) for p in self.trainers(i, "worker")]

    def wait_restart(self, attempt, victims_before, limit=20):
        """Trainers started after the kill: the restarted generation, or None if none comes."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline and attempt.running():
            self.poll(attempt)
            fresh = [p for p in self.all_trainers() if p not in victims_before]
            if fresh:
                return set(fresh)
            time.sleep(0.02)
        return None

    def finish_attempt(self, run, job, attempt, bound):
        """Waits for every launcher of the attempt; kills all on a hang. Returns their exit statuses."""
        deadline = time.monotonic() + bound
        while attempt.running() and time.monotonic() < deadline:
            self.poll(attempt)
            time.sleep(0.05)
        self.poll(attempt)
        if attempt.running():
            self.stats["hangs"] += 1
            stacks = "\n".join(f"--- launcher on host {n.index}:\n{where_it_waits(n.proc.pid)}"
                               for n in attempt.nodes if n.proc.returncode is None)
            self.violated(run, f"attempt {attempt.number} still runs after {bound:.0f} s (a hang):\n{stacks}")
            for n in attempt.nodes:
                n.proc.send_signal(signal.SIGCONT)
            for i in range(len(self.hosts.names)):
                for p in self.host_pids(i):
                    self.signal(p, signal.SIGKILL)
            for n in attempt.nodes:
                n.proc.wait()
                n.poll(self.clock)
        return [n.proc.returncode for n in attempt.nodes]

    def check_no_orphans(self, run, attempt):
        left = []
        deadline = time.monotonic() + ORPHAN_WAIT
        while time.monotonic() < deadline:
            left = [(i, p) for i in range(len(self.hosts.names)) for p in self.host_pids(i)]
            left += [(n.index, p) for n in attempt.nodes + attempt.replaced for p in session_members(n.proc.pid)]
            if not left:
                return
            time.sleep(0.1)
        self.stats["orphans"] += len(left)
        self.violated(run, "processes left after the attempt: "
                      + "; ".join(f"host {i} pid {p}: {cmdline(p)}" for i, p in left))
        for _, p in left:
            self.signal(p, signal.SIGKILL)

    def check_stop(self, run, attempt, codes):
        """An attempt that ended non-zero: in time after its last fault, naming one of its faults."""
        if not attempt.faults:
            self.violated(run, f"attempt {attempt.number} failed with no fault dealt: exit {codes}\n"
                          + "\n".join(n.err()[-1500:] for n in attempt.nodes))
            return
        last_fault = max(t for t, *_ in attempt.faults)
        ended = max(n.exited_at for n in attempt.nodes)
        if ended - last_fault > STOP_BOUND:
            self.violated(run, f"attempt {attempt.number} stopped {ended - last_fault:.1f} s after its last fault "
                          f"(bound {STOP_BOUND:.0f} s)")
        # The launchers' error lines (the root cause, a failed process, a fatal error), not their
        # chatter: "joining ... at the master IP" names every host in every run.
        # A launcher the soak killed names nothing; one that exited 0 had nothing to name (its
        # processes finished before the fault reached them).
        survivors = [n for n in attempt.nodes + attempt.replaced
                     if n.proc.pid not in attempt.killed and n.proc.returncode != 0]
        errors, in_error = [], False
        for n in survivors:
            for line in n.err().splitlines():
                if line.startswith(("INFO", "WARNING", "ERROR", "paddle-launch:")):
                    in_error = line.startswith(("ERROR", "paddle-launch:"))
                if in_error:  # an error record and its indented lines (the process's own words)
                    errors.append(line)
        causes = [c for *_, cs in attempt.faults for c in cs]
        if survivors and not any(c in line for c in causes for line in errors):
            self.violated(run, f"attempt {attempt.number} stopped (exit {codes}) naming none of its faults "
                          f"({', '.join(f for _, f, _, _ in attempt.faults)}):\n"
                          + "\n".join(n.err()[-1500:] for n in attempt.nodes))
        for code in codes:
            if code == 0:
                continue
            if code is None or code < 0 and code != -signal.SIGKILL:
                self.violated(run, f"a launcher ended by signal {-code}, not with an exit status")

    def damage(self, run, job):
        path = job.newest_save()
        if not path or not os.path.exists(path):
            return None
        data = read_bytes(path)
        if len(data) < 16:
            return None
        how = self.rng.choice(["truncate", "flip"])
        if how == "truncate":
            data = data[:self.rng.randrange(1, len(data) - 1)]
        else:
            at = self.rng.randrange(len(data))
            data = data[:at] + bytes([data[at] ^ (1 << self.rng.randrange(8))]) + data[at + 1:]
        with open(path, "wb") as f:
            f.write(data)
        self.say(f"run {run}: fault damage-save: {how} {path} while the job is down")
        return path

    def signal_in_rendezvous(self, run, job, number):
        """The last node's launcher, started alone, is signalled while it waits for the others."""
        commands = job.commands(self.hosts.master_address())
        h = len(commands) - 1
        node = Node(self.hosts, h, job.workdirs[h], commands[h], f"{number}-rendezvous")
        sig = self.rng.choice([signal.SIGINT, signal.SIGTERM])
        deadline = time.monotonic() + 30
        while "joining generation" not in node.err() and node.proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(self.rng.uniform(0, 1))  # somewhere in the wait
        self.say(f"run {run}: fault signal-in-rendezvous: {signal.Signals(sig).name} to launcher pid {node.proc.pid} "
                 f"on host {h}, alone in its rendezvous")
        sent = time.monotonic()
        node.proc.send_signal(sig)
        try:
            code = node.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.stats["hangs"] += 1
            self.violated(run, f"a launcher signalled in its rendezvous still runs after 30 s:\n"
                          f"{where_it_waits(node.proc.pid)}")
            node.proc.kill()
            node.proc.wait()
            return
        took = time.monotonic() - sent
        said = f"received {signal.Signals(sig).name} while waiting in the rendezvous"
        if code != 128 + sig or took > SIGNAL_BOUND or said not in node.err():
            self.violated(run, f"a launcher signalled in its rendezvous exited {code} after {took:.2f} s "
                          f"(want {128 + sig} within {SIGNAL_BOUND} s, saying '{said}'):\n{node.err()[-1500:]}")
        # Its watchdog outlives it by design, for as long as its sweep takes (orphan_watchdog.h).
        deadline = time.monotonic() + ORPHAN_WAIT
        left = self.host_pids(h) + session_members(node.proc.pid)
        while left and time.monotonic() < deadline:
            time.sleep(0.1)
            left = self.host_pids(h) + session_members(node.proc.pid)
        if left:
            self.stats["orphans"] += len(left)
            self.violated(run, "processes left after a launcher stopped in its rendezvous: "
                          + "; ".join(f"pid {p}: {cmdline(p)}" for p in left))
            for p in left:
                self.signal(p, signal.SIGKILL)

    def run_once(self, run, job, faults_for_run, reference_seconds, bound):
        """Drives `job` until it finishes, dealing it up to `faults_for_run` faults."""
        started = self.clock.now()
        remaining = faults_for_run
        self.current_job, self.damaged = job, []
        for number in range(ATTEMPTS):
            if remaining > 0 and self.rng.random() < 0.2 and self.clock.now() < self.deadline:
                self.signal_in_rendezvous(run, job, number)
                self.kinds["signal-in-rendezvous"] += 1
                self.stats["faults"] += 1
                remaining -= 1
            attempt = Attempt(run, number)
            self.start_attempt(job, attempt)
            if remaining > 0 and self.wait_training(job, attempt):
                # Up to 3 faults an attempt: the first anywhere in an undisturbed run's time, the
                # others soon after, often in the recovery from the one before.
                for k in range(min(remaining, self.rng.randint(1, 3))):
                    self.sleep_running(attempt, self.rng.uniform(0, max(0.5, 0.8 * reference_seconds) if k == 0 else 1.5))
                    if not attempt.running():
                        break
                    if self.clock.now() > self.deadline:
                        remaining = 0  # the soak's time is up: this run only finishes
                        break
                    fault = self.rng.choice(job.faults)
                    dealt = len(attempt.faults)
                    if self.deal(job, attempt, fault):
                        for _, name, target, _ in attempt.faults[dealt:]:
                            self.say(f"run {run}: fault {name}: {target}")
                            self.kinds[name] += 1
                        remaining -= len(attempt.faults) - dealt
            for f in attempt.faults:
                self.stats["faults"] += 1
            codes = self.finish_attempt(run, job, attempt, bound)
            self.poll(attempt)
            self.check_no_orphans(run, attempt)
            # The launchers' own restarts (each node says the same), and the operator's.
            self.stats["restarts"] += max(n.err().count("restarting the whole job") for n in attempt.nodes)
            self.stats["restarts"] += len(attempt.replaced) + (1 if number > 0 else 0)
            self.stats["restarts in place"] += sum(n.err().count("restarting it alone") for n in attempt.nodes)
            if all(c == 0 for c in codes):
                self.stats["attempts finished"] += 1
                return True, self.clock.now() - started
            self.stats["attempts stopped"] += 1
            self.check_stop(run, attempt, codes)
            if remaining > 0 and self.rng.random() < 0.5 and self.clock.now() < self.deadline:
                p = self.damage(run, job)
                if p:
                    self.kinds["damage-save"] += 1
                    self.damaged.append((p, time.time()))
                    self.stats["faults"] += 1
                    remaining -= 1
        self.violated(run, f"lost: still unfinished after {ATTEMPTS} attempts")
        self.stats["lost runs"] += 1
        return False, self.clock.now() - started

    def make_job(self, kind, directory):
        if kind == "collective":
            return CollectiveJob(self, directory, epochs=int(os.environ.get("CHAOS_EPOCHS", "120")))
        if kind == "elastic":
            return ElasticJob(self, directory, epochs=int(os.environ.get("CHAOS_EPOCHS", "120")))
        if kind in ("ps-sync", "ps-async"):
            return PsJob(self, directory, kind[3:])
        if kind in ("ps-inplace-sync", "ps-inplace-async"):
            return PsInPlaceJob(self, directory, kind[len("ps-inplace-"):])
        raise ValueError(kind)

    def reference(self, kind):
        if kind not in self.references:
            job = self.make_job(kind, os.path.join(self.dir, f"reference-{kind}"))
            try:
                attempt = Attempt("reference", 0)
                self.start_attempt(job, attempt)
                codes = self.finish_attempt(f"reference {kind}", job, attempt, 300)
                if any(codes):
                    raise AssertionError(f"the undisturbed {kind} run failed: {codes}\n"
                                         + "\n".join(n.err()[-2000:] for n in attempt.nodes))
                duration = max(n.exited_at for n in attempt.nodes) - attempt.started
                self.references[kind] = (job.result(), duration)
                self.say(f"reference {kind} run: {duration:.1f} s undisturbed")
            finally:
                job.close()
        return self.references[kind]

    def soak(self):
        self.hosts = NamespaceHosts(2)
        self.persistent = set()
        run = 0
        try:
            self.say(f"chaos soak: seed {self.seed}, up to {self.fault_budget} faults in {self.deadline / 60:.0f} min, "
                     f"jobs {', '.join(self.jobs)}, on {self.hosts}")
            while self.stats["faults"] < self.fault_budget and self.clock.now() < self.deadline:
                kind = self.jobs[run % len(self.jobs)]
                reference, duration = self.reference(kind)
                job = self.make_job(kind, os.path.join(self.dir, f"run{run}-{kind}"))
                self.stats["runs"] += 1
                try:
                    faults = min(self.fault_budget - self.stats["faults"], self.rng.randint(2, 5))
                    finished, took = self.run_once(run, job, faults, duration, bound=3 * duration + 90)
                    if finished:
                        try:
                            why = job.equal(reference, job.result())
                        except (OSError, KeyError, TypeError, ValueError, AssertionError) as e:
                            why = f"its result cannot be read or compared: {e!r}"
                        if why:
                            self.violated(run, why)
                            self.stats["runs unequal"] += 1
                        else:
                            self.stats["runs finished equal"] += 1
                        self.lost_seconds.append((took - duration, faults))
                        self.say(f"run {run} ({kind}) finished {'unequal' if why else 'equal to its reference'} "
                                 f"in {took:.1f} s")
                finally:
                    job.close()
                    if not self.keep:
                        shutil.rmtree(job.directory, ignore_errors=True)
                run += 1
        finally:
            if self._etcd:
                self._etcd.close()
            self.hosts.kill_everything()
            self.hosts.close()
            if not self.keep:
                shutil.rmtree(self.dir, ignore_errors=True)
        return self.report()

    def report(self):
        s = self.stats
        lost = sum(t for t, _ in self.lost_seconds)
        faults_in_finished = sum(f for _, f in self.lost_seconds)
        print(f"faults injected: {s['faults']} in {self.clock.now() / 60:.1f} min (seed {self.seed}): "
              + ", ".join(f"{k} {n}" for k, n in sorted(self.kinds.items())))
        print(f"runs: {s['runs']}, finished equal to their reference: {s['runs finished equal']}, "
              f"attempts stopped with a named cause: {s['attempts stopped']}")
        print(f"restarts: {s['restarts']}, of a PS worker alone in place: {s['restarts in place']}")
        print(f"mean time lost per fault: {lost / max(1, faults_in_finished):.1f} s")
        print(f"orphans: {s['orphans']}, hangs: {s['hangs']}, corrupt loads: {s['corrupt loads']}, "
              f"lost runs: {s['lost runs']}, runs unequal: {s['runs unequal']}")
        print(f"invariants broken: {len(self.violations)}")
        for v in self.violations:
            print(f"  {v.splitlines()[0]}")
        return 0 if not self.violations else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--faults", type=int, default=200)
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--jobs", default="collective")
    parser.add_argument("--keep", action="store_true", help="keep the runs' directories")
    a = parser.parse_args()
    # A SIGTERM (a test's timeout) ends the soak through its cleanup: hosts, mounts, directories.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if os.geteuid() != 0:
        print("chaos: the soak makes network namespaces and mounts tmpfs: run it as root", file=sys.stderr)
        return 77
    try:
        return Soak(a.seed, a.faults, a.minutes, a.jobs.split(","), a.keep).soak()
    except Skip as why:
        print(f"chaos: cannot run here: {why}", file=sys.stderr)
        return 77


if __name__ == "__main__":
    sys.exit(main())
