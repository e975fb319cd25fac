"""A real Slurm cluster for end-to-end tests, made of network-namespace hosts on this machine.

`SlurmCluster(count)` makes `count` hosts (`NamespaceHosts`: 198.18.1.1, 198.18.1.2, ...) named
n098, n099, n100, ... (so that Slurm writes their list with a 3-digit bracket range, `n[098-100]`)
in the reverse order of their addresses: host 0 (198.18.1.1) is the last name, so a job's node
ranks (SLURM_NODEID, in name order) differ from its addresses' order. It starts, from Debian's
slurm-wlm 22.05:
- one `munged` with a key made for this cluster alone, on a socket in the cluster's directory;
- `slurmctld` on host 0;
- one `slurmd` per host, with its own spool directory, pid file and log (`%n` in slurm.conf).
Each daemon runs in a UTS and mount namespace of its own, where the hostname is its node's name
and a hosts file naming every node is bind-mounted on /etc/hosts, so jobs resolve node names as
on a real cluster. Nothing on the machine's own network, hostname or /etc changes.

Processes are tracked with proctrack/linuxproc (the parent-process tree; cgroup tracking needs a
delegated cgroup v2 tree, which a test cannot count on), and tasks are not bound (task/none).
There is no accounting database, so `sacct` has nothing to show (accounting_storage/none; the
slurmdbd plugin needs MySQL): a job's end state and exit code are read with `scontrol show job`,
kept for MinJobAge seconds, and from the job-completion log (jobcomp/filetxt).

    from slurm_cluster import SlurmCluster

    with SlurmCluster(3) as cluster:                   # all gone on leaving the block, even on errors
        r = cluster.run(["srun", "-N3", "hostname"])   # a client command, outside every host
        job = cluster.popen(["srun", "-N3", "--ntasks-per-node=1", LAUNCH, ...], cwd=shared_dir)
        cluster.wait_clean(timeout=5)                  # no job process left on any host

The daemons die with the test process however it ends (the parent-death signal), and close()
kills them and everything left in the hosts by pid.

Client commands (srun, sbatch, scancel, squeue, scontrol) run in the bridge's namespace, at
198.18.1.254, with SLURM_CONF set to the cluster's configuration; nothing they start lands on a
host except through slurmd. The hosts share this machine's filesystem, as a cluster shares its
home directories. It needs root and the slurmctld, slurmd, slurm-client and munge packages; it
raises `harness.Skip` with the reason where they are missing. `python3 slurm_cluster.py` (as root)
checks all of this on 3 hosts.
"""

import ctypes
import os
import shutil
import signal
import subprocess
import tempfile
import time

from harness import Skip, child_env, pid_alive, wait_for
from netns_hosts import NamespaceHosts, wait_hosts_clean
from ssh_hosts import CLIENT_IP

_TOOLS = {"slurmctld": "slurmctld", "slurmd": "slurmd", "srun": "slurm-client", "sbatch": "slurm-client",
          "scancel": "slurm-client", "scontrol": "slurm-client", "sinfo": "slurm-client", "munged": "munge",
          "mungekey": "munge", "unshare": "util-linux"}

_ENDED_STATES = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED", "BOOT_FAIL",
                 "DEADLINE"}


def _die_with_the_test():
    """preexec_fn: the daemon gets SIGKILL when the test process dies, even by SIGKILL at its
    CTest timeout, which runs no cleanup (PR_SET_PDEATHSIG, kept across exec)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)


_SLURM_CONF = """\
ClusterName=pmtest
SlurmctldHost={control}({control_ip})
SlurmUser=root
SlurmdUser=root
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={munge_socket}
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool.%n
SlurmctldPidFile={dir}/slurmctld.pid
SlurmdPidFile={dir}/slurmd.%n.pid
SlurmctldLogFile={dir}/slurmctld.log
SlurmdLogFile={dir}/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc={dir}/jobcomp.log
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
SlurmdParameters=config_overrides
KillWait={kill_wait}
MinJobAge=600
SlurmdTimeout=30
InactiveLimit=0
{nodes}
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
"""


class SlurmCluster:
    """`count` Slurm nodes on namespace hosts; see the module's docstring."""

    def __init__(self, count, kill_wait=5):
        if os.geteuid() != 0:
            raise Skip("running slurmctld, slurmd and munged for a test cluster needs root")
        for tool, package in _TOOLS.items():
            if not shutil.which(tool):
                raise Skip(f"a test Slurm cluster needs {tool} (package {package})")
        self.kill_wait = kill_wait
        self._netns, self._daemons, self._munged, self.dir = None, [], None, None
        self._daemon_pids = set()
        try:
            self._netns = NamespaceHosts(count)
            self.ips = self._netns.ips
            self.names = [f"n{98 + count - 1 - i:03d}" for i in range(count)]
            self.dir = tempfile.mkdtemp(prefix="slurm-cluster-")
            self._build()
        except BaseException:
            self.close()
            raise

    def _build(self):
        ns = self._netns
        subprocess.run(["ip", "-n", ns.bridge_ns, "addr", "add", f"{CLIENT_IP}/24", "dev", "br0"], check=True)
        self.hosts_file = self._write("hosts", "127.0.0.1 localhost\n" + "".join(
            f"{ip} {name}\n" for ip, name in zip(self.ips, self.names)) + f"{CLIENT_IP} login\n")
        self._start_munged()
        nodes = "\n".join(f"NodeName={name} NodeAddr={ip} CPUs=4 RealMemory=1000 State=UNKNOWN"
                          for name, ip in zip(self.names, self.ips))
        for d in ["state"] + [f"spool.{name}" for name in self.names]:
            os.mkdir(os.path.join(self.dir, d))
        self.conf = self._write("slurm.conf", _SLURM_CONF.format(
            control=self.names[0], control_ip=self.ips[0], ctld_port=6817, slurmd_port=6818,
            munge_socket=self.munge_socket, dir=self.dir, kill_wait=self.kill_wait, nodes=nodes))
        self._daemons.append(self._start_on(0, ["slurmctld", "-D", "-i", "-f", self.conf], "slurmctld.out"))
        for i in range(len(self.ips)):
            self._daemons.append(self._start_on(i, ["slurmd", "-D", "-f", self.conf], f"slurmd.{self.names[i]}.out"))
        self._wait_idle()
        # The daemons' own helpers (slurmctld's slurmscriptd) are there before any job.
        self._daemon_pids = {p for i in range(len(self.names)) for p in self._netns.pids(i)}

    def _start_munged(self):
        key = os.path.join(self.dir, "munge.key")
        subprocess.run(["mungekey", "--create", f"--keyfile={key}"], check=True, capture_output=True)
        self.munge_socket = os.path.join(self.dir, "munge.socket")
        log = open(os.path.join(self.dir, "munged.out"), "w")
        self._munged = subprocess.Popen(
            ["munged", "--foreground", "--force", f"--socket={self.munge_socket}", f"--key-file={key}",
             f"--pid-file={self.dir}/munged.pid", f"--log-file={self.dir}/munged.log",
             f"--seed-file={self.dir}/munged.seed"], stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            preexec_fn=_die_with_the_test)
        log.close()
        wait_for(lambda: os.path.exists(self.munge_socket) or self._munged.poll() is not None, 10, "munged's socket")
        if self._munged.poll() is not None:
            raise AssertionError(f"munged exited with {self._munged.returncode}:\n{self._read('munged.out')}")

    def _start_on(self, i, cmd, out_name):
        """Starts a daemon inside host i, under its node name and the cluster's hosts file; the
        Popen's pid is the daemon's (unshare and sh exec)."""
        script = f'mount --bind {self.hosts_file} /etc/hosts && hostname {self.names[i]} && exec "$@"'
        # nsenter, not `ip netns exec`: that remounts /sys, hiding /sys/fs/cgroup, without which
        # slurmd will not start even with proctrack/linuxproc.
        with open(os.path.join(self.dir, out_name), "w") as out:
            return subprocess.Popen(["nsenter", f"--net=/run/netns/{self._netns.names[i]}", "unshare", "--mount",
                                     "--uts", "sh", "-c", script, "sh", *cmd], env=self.env(), stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=_die_with_the_test)

    def _wait_idle(self, timeout=30):
        def idle():
            for d in self._daemons:
                if d.poll() is not None:
                    raise AssertionError(f"a Slurm daemon exited with {d.returncode} while starting:\n{self.logs()}")
            r = self.run(["sinfo", "-h", "-N", "-o", "%N %T"])
            states = dict(line.split() for line in r.stdout.splitlines() if line.strip())
            return len(states) == len(self.names) and all(s == "idle" for s in states.values())
        try:
            wait_for(idle, timeout, "every slurmd to register as idle")
        except AssertionError as e:
            raise AssertionError(f"{e}\n{self.logs()}") from None

    def _write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def _read(self, name):
        try:
            with open(os.path.join(self.dir, name), errors="replace") as f:
                return f.read()
        except OSError:
            return "(none)"

    def logs(self, tail=3000):
        """The daemons' logs, each cut to its last `tail` characters, for failure messages."""
        names = ["slurmctld.log", "slurmctld.out"] + [f"slurmd.{n}.log" for n in self.names]
        return "\n".join(f"--- {n}\n{self._read(n)[-tail:]}" for n in names)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __str__(self):
        return f"a Slurm cluster of {len(self.names)} nodes ({self.nodelist()} on {self.ips[-1]} .. {self.ips[0]})"

    def host_of(self, name):
        """The index of the host named `name` (n098 is the last host)."""
        return self.names.index(name)

    def nodelist(self):
        """The nodes as Slurm writes them: n[098-100]."""
        return self.run(["scontrol", "show", "hostlistsorted", ",".join(self.names)]).stdout.strip()

    def env(self, extra=None):
        """The test's environment with SLURM_CONF pointing at this cluster, for clients."""
        return child_env({"SLURM_CONF": self.conf, **(extra or {})})

    def command(self, cmd):
        """An argv that runs `cmd` outside every host, where the cluster can be reached."""
        return ["ip", "netns", "exec", self._netns.bridge_ns, *cmd]

    def run(self, cmd, timeout=30, **kw):
        """subprocess.run of a client command (text output captured)."""
        return subprocess.run(self.command(cmd), env=self.env(kw.pop("env", None)), capture_output=True,
                              text=True, timeout=timeout, **kw)

    def popen(self, cmd, cwd=None, env=None, **kw):
        """subprocess.Popen of a client command in a new session, text pipes unless `kw` says otherwise."""
        options = dict(stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        options.update(kw)
        return subprocess.Popen(self.command(cmd), cwd=cwd, env=self.env(env), start_new_session=True, **options)

    def job(self, job_id):
        """`scontrol show job` as a dict: JobState, ExitCode, NodeList, StdOut, ..."""
        r = self.run(["scontrol", "show", "job", "-o", str(job_id)])
        fields = {}
        for word in r.stdout.split():
            key, _, value = word.partition("=")
            fields[key] = value
        return fields

    def wait_job(self, job_id, timeout):
        """Waits until the job has ended (COMPLETED, FAILED, CANCELLED, ...); returns job(job_id)."""
        def ended():
            job = self.job(job_id)
            return job if job.get("JobState") in _ENDED_STATES else None
        return wait_for(ended, timeout, f"Slurm job {job_id} to end")

    def job_pids(self, i):
        """Pids of live processes on host i other than its daemons: what jobs left there."""
        return [p for p in self._netns.pids(i) if p not in self._daemon_pids]

    def wait_clean(self, timeout=5.0):
        """Waits until no host runs anything but the Slurm daemons; else AssertionError naming them."""
        wait_hosts_clean(self.job_pids, range(len(self.names)), lambda i: self.names[i], timeout)

    def close(self):
        """Kills the daemons and everything in the hosts' namespaces, deletes the namespaces and
        the cluster's directory. Safe to call twice."""
        for p in self._daemons + ([self._munged] if self._munged else []):
            if p.poll() is None:
                p.kill()
            p.wait()
        self._daemons, self._munged = [], None
        if self._netns:
            self._netns.kill_everything()
            self._netns.close()
            self._netns = None
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None


def _self_test():
    """Makes 3 nodes and runs a job on each, then checks that close() leaves nothing."""
    started = time.monotonic()
    with SlurmCluster(3) as cluster:
        print(f"{cluster} up in {time.monotonic() - started:.1f}s")
        assert cluster.nodelist() == "n[098-100]" and cluster.host_of("n098") == 2, cluster.nodelist()
        r = cluster.run(["srun", "-N3", "--ntasks-per-node=1", "--label", "sh", "-c",
                         "echo $SLURM_NODEID $(hostname) $SLURM_JOB_NODELIST $(getent hosts n099)"])
        assert r.returncode == 0, (r.stdout, r.stderr, cluster.logs())
        print(r.stdout)
        cluster.wait_clean(timeout=5)
        daemons = cluster._daemon_pids
    assert not any(pid_alive(p) for p in daemons), "close() left a daemon"
    print("slurm_cluster: OK")


if __name__ == "__main__":
    _self_test()
