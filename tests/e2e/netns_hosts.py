"""Hosts for multi-node end-to-end tests and benchmarks, made on this machine.

`NamespaceHosts(count)` makes `count` hosts out of network namespaces: host i is namespace
`names[i]` with one veth link to a bridge that lives in a namespace of its own, and the address
`ips[i]` (198.18.1.1, 198.18.1.2, ...; RFC 2544's benchmarking range 198.18.0.0/15, present only
inside these namespaces). Nothing on the machine's own network changes. It needs root and
iproute2; where it cannot create them it raises `harness.Skip` with the reason.

    from netns_hosts import NamespaceHosts

    with NamespaceHosts(3) as hosts:                    # deleted on leaving the block, even on errors
        master = hosts.master_address()                 # "198.18.1.1:PORT", free on host 0
        procs = [hosts.popen(i, [LAUNCH, f"--master={master}", "--nnodes=3", TRAIN], cwd=scratch())
                 for i in range(3)]
        hosts.cut(1)                                    # host 1's link goes down; up again: hosts.mend(1)
        out, err = procs[0].communicate(timeout=30)

`popen(i, cmd, cwd)` runs `cmd` inside host i through `ip netns exec`, which execs the command
itself, so the Popen's pid is the command's pid (a launcher there can be signalled by it). It
starts in a new session, so its pid is also its process group and session id, and any process it
leaves behind can be found by those (`harness.session_members`). stdout and stderr are text pipes
unless given.

`LoopbackHosts(count)` has the same methods on loopback aliases (127.0.0.1, 127.0.0.2, ...) for
machines without root; it cannot cut a link. On loopback a node cannot find its own alias from its
routes, so `host_args(i)` gives it `--host`; namespace hosts need none. `namespace_or_loopback(count)`
gives namespace hosts where it can, else loopback aliases, and prints which to stderr.
"""

import itertools
import os
import re
import shutil
import signal
import subprocess
import sys

from harness import Skip, child_env, free_ports, pid_alive, wait_for

_PREFIX = "pm"  # namespaces are named pm<pid of the creating process>x<instance>br and ...h<i>


class _Hosts:
    """What both kinds of hosts share: their description and use in a with-statement."""

    def __str__(self):
        return f"{len(self.ips)} hosts on {self.kind} ({self.ips[0]} .. {self.ips[-1]})"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class NamespaceHosts(_Hosts):
    """`count` network-namespace hosts on one bridge; see the module's docstring."""

    kind = "network namespaces on a bridge"
    _instances = itertools.count()  # one process may hold several sets of hosts at once

    def __init__(self, count):
        if os.geteuid() != 0:
            raise Skip("creating network namespaces needs root")
        if not shutil.which("ip"):
            raise Skip("creating network namespaces needs iproute2's ip")
        _remove_stale_namespaces()
        self.tag = f"{_PREFIX}{os.getpid()}x{next(NamespaceHosts._instances)}"
        self.names = [f"{self.tag}h{i}" for i in range(count)]
        self.ips = [f"198.18.1.{i + 1}" for i in range(count)]
        self.bridge_ns = f"{self.tag}br"
        self._created = []
        self._next_port = 29400
        try:
            self._build()
        except BaseException:
            self.close()
            raise

    def _build(self):
        for n in [self.bridge_ns, *self.names]:
            self._ip("netns", "add", n, what=f"create network namespace {n}")
            self._created.append(n)
        self._ip("-n", self.bridge_ns, "link", "add", "br0", "type", "bridge", what="create a bridge")
        self._ip("-n", self.bridge_ns, "link", "set", "br0", "up")
        for i, n in enumerate(self.names):
            host_end, bridge_end = f"{self.tag}e{i}", f"{self.tag}b{i}"
            # Created inside the bridge's namespace, so no name ever appears in the machine's own.
            self._ip("-n", self.bridge_ns, "link", "add", bridge_end, "type", "veth", "peer", "name", host_end,
                     "netns", n, what="create a veth pair")
            self._ip("-n", self.bridge_ns, "link", "set", bridge_end, "master", "br0")
            self._ip("-n", self.bridge_ns, "link", "set", bridge_end, "up")
            self._ip("-n", n, "addr", "add", f"{self.ips[i]}/24", "dev", host_end)
            self._ip("-n", n, "link", "set", host_end, "up")
            self._ip("-n", n, "link", "set", "lo", "up")

    def _ip(self, *args, what=None):
        r = subprocess.run(["ip", *args], capture_output=True, text=True)
        if r.returncode != 0:
            if what:
                raise Skip(f"cannot {what} here: {r.stderr.strip()}")
            raise AssertionError(f"ip {' '.join(args)}: {r.stderr}")

    def host_args(self, i):
        """Launcher flags host i needs to know its own address: none, its route says it."""
        return []

    def master_address(self):
        """An "IP:PORT" on host 0 for a master: each call gives a port not given before (nothing
        else listens inside these namespaces)."""
        self._next_port += 1
        return f"{self.ips[0]}:{self._next_port - 1}"

    def popen(self, i, cmd, cwd=None, env=None, **kw):
        """subprocess.Popen of `cmd` inside host i, in a new session, with `env` (default
        harness.child_env()) and text pipes for stdout and stderr unless `kw` says otherwise."""
        return _popen(["ip", "netns", "exec", self.names[i], *cmd], cwd, env, kw)

    def cut(self, i):
        """Takes host i's link down at the bridge: its packets go nowhere, nothing is closed."""
        self._ip("-n", self.bridge_ns, "link", "set", f"{self.tag}b{i}", "down")

    def mend(self, i):
        """Brings host i's link back up."""
        self._ip("-n", self.bridge_ns, "link", "set", f"{self.tag}b{i}", "up")

    def pids(self, i):
        """Pids of the live processes inside host i."""
        return pids_in(self.names[i])

    def kill_everything(self):
        """SIGKILL to every process inside the hosts and the bridge's namespace."""
        for name in [self.bridge_ns, *self.names]:
            for pid in pids_in(name):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def close(self):
        """Deletes every namespace made (their veth links go with them). Safe to call twice."""
        for n in reversed(self._created):
            subprocess.run(["ip", "netns", "del", n], capture_output=True)
        self._created = []


class LoopbackHosts(_Hosts):
    """`count` hosts as loopback aliases 127.0.0.1 .. 127.0.0.count of this machine, for machines
    where network namespaces cannot be made; the methods of NamespaceHosts, without cut()."""

    kind = "loopback aliases"

    def __init__(self, count):
        self.ips = [f"127.0.0.{i + 1}" for i in range(count)]

    def host_args(self, i):
        """Launcher flags host i needs to know its own address: every alias routes from 127.0.0.1."""
        return [f"--host={self.ips[i]}"]

    def master_address(self):
        return f"{self.ips[0]}:{free_ports(1)[0]}"

    def popen(self, i, cmd, cwd=None, env=None, **kw):
        return _popen(cmd, cwd, env, kw)

    def cut(self, i):
        raise Skip("loopback aliases share one link, which cannot be cut for one host")

    def close(self):
        pass


def namespace_or_loopback(count):
    """NamespaceHosts(count) where they can be made, else LoopbackHosts(count); says which on stderr."""
    try:
        hosts = NamespaceHosts(count)
        print(f"hosts: {hosts}", file=sys.stderr)
    except Skip as why:
        hosts = LoopbackHosts(count)
        print(f"hosts: {hosts}; no network namespaces: {why}", file=sys.stderr)
    return hosts


def _popen(cmd, cwd, env, kw):
    options = dict(stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    options.update(kw)
    return subprocess.Popen(cmd, cwd=cwd, env=child_env() if env is None else env, start_new_session=True, **options)


def _remove_stale_namespaces():
    """Deletes namespaces this class made for a process that is gone (a test killed at its timeout
    never reaches close())."""
    listing = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    for line in listing.splitlines():
        m = re.fullmatch(rf"({_PREFIX}(\d+)x\d+(?:br|h\d+))(?: \(id: \d+\))?", line.strip())
        if m and not os.path.exists(f"/proc/{m.group(2)}"):
            subprocess.run(["ip", "netns", "del", m.group(1)], capture_output=True)


def pids_in(netns):
    """Pids of live processes in the named network namespace (by the namespace's inode)."""
    try:
        target = f"net:[{os.stat(f'/run/netns/{netns}').st_ino}]"
    except OSError:
        return []
    pids = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and os.readlink(f"/proc/{entry}/ns/net") == target and pid_alive(int(entry)):
                pids.append(int(entry))
        except OSError:
            pass
    return pids


def cmdline(pid):
    """A process's command line as one string, for messages; "(gone)" once it has exited."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "(gone)"


def comm(pid):
    """A process's name as `ps` shows it (the watchdog's is paddle-watchdog); "" once it has exited."""
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def where_it_waits(pid):
    """Each thread's stack of a process that should have ended (gdb's, else the kernel's wait
    channel), so that a failure says what it waited for."""
    gdb = shutil.which("gdb")
    if gdb:
        try:
            r = subprocess.run([gdb, "-p", str(pid), "-batch", "-ex", "thread apply all bt 30"], capture_output=True,
                               text=True, timeout=30)
            frames = [line for line in r.stdout.splitlines() if line.startswith(("#", "Thread "))]
            if frames:
                return "\n".join(frames)
        except (OSError, subprocess.TimeoutExpired):
            pass
    waits = []
    try:
        for tid in sorted(os.listdir(f"/proc/{pid}/task")):
            with open(f"/proc/{pid}/task/{tid}/wchan") as f:
                waits.append(f"thread {tid} waits in {f.read() or '(running)'}")
    except OSError:
        pass
    return "\n".join(waits)


def wait_hosts_clean(job_pids, hosts, label, timeout):
    """Waits until job_pids(i) is empty for every i in `hosts`; else AssertionError naming each
    process left, on its host's `label(i)`, with where a launcher left waits."""
    left = []

    def clean():
        left[:] = [(i, p) for i in hosts for p in job_pids(i)]
        return not left
    try:
        wait_for(clean, timeout, "hosts to be clean")
    except AssertionError:
        lines = [f"{label(i)} pid {p}: {cmdline(p)}" for i, p in left]
        launchers = [p for _, p in left if cmdline(p).split(" ")[0].endswith("paddle-launch")
                     and comm(p) != "paddle-watchdog"]
        lines += [f"--- where launcher {p} waits:\n{where_it_waits(p)}" for p in launchers[:2]]
        raise AssertionError(f"processes left after {timeout}s:\n" + "\n".join(lines)) from None
