"""Hosts with a real OpenSSH server each, for end-to-end tests of the SSH job dispatcher.

`SshHosts(count, unauthorized=())` makes `count` network-namespace hosts (`NamespaceHosts`:
198.18.1.1, 198.18.1.2, ...) and starts one `sshd` inside each, listening on port 22 of the
host's address and letting root in with a client key made for this instance alone. Hosts whose
index is in `unauthorized` do not accept that key: ssh to them fails with "Permission denied
(publickey)". It needs root, sshd, ssh, ssh-keygen and rsync; without them it raises
`harness.Skip` with the reason.

    from ssh_hosts import SshHosts

    with SshHosts(3, unauthorized=[2]) as hosts:        # all gone on leaving the block, even on errors
        hosts.hostfile(path, slots=2)                   # "root@198.18.1.1 slots=2", ...
        opts = [f"--ssh_opt={o}" for o in hosts.ssh_options()]
        job = hosts.popen(0, [LAUNCH, f"--hostfile={path}", *opts, f"--root_dir={hosts.remote_root}", TRAIN])
        job.communicate(timeout=60)
        os.path.exists(os.path.join(hosts.host_dir(1), "myjob", "nodefile"))  # what the job left on host 1
        hosts.wait_clean([0, 1], timeout=5)             # nothing but sshd is left on hosts 0 and 1

The hosts share this machine's filesystem but for one directory, `remote_root`: each host's sshd
runs in a mount namespace of its own (the one `ip netns exec` makes) where the directory
`host_dir(i)` is bind-mounted on `remote_root`, so a job that copies its workspace to the same
absolute path under `remote_root` on every host finds a copy of its own on each, and the test
reads host i's copy in `host_dir(i)`. A process started by `popen(i, ...)` sees the real, empty
`remote_root`, not host i's: only what comes in through sshd does.

The test's own ssh and rsync run from the bridge's namespace, which gets the address 198.18.1.254
for them, so they leave no process on any host: `ssh_command(i, "ls")` is an argv that runs `ls`
on host i, and `client_command(["rsync", ...])` one that runs rsync there.
A remote command runs as root in /root under root's login shell, with sshd's environment (PATH
/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin) and what ~/.bashrc adds (Debian's bash
reads it for ssh commands), never the test's: start programs there by absolute path.
`python3 ssh_hosts.py` (as root) checks all of this on 3 hosts.
"""

import os
import shutil
import subprocess
import tempfile
import time

from harness import Skip, pid_alive, wait_for
from netns_hosts import NamespaceHosts, cmdline, wait_hosts_clean

CLIENT_IP = "198.18.1.254"  # the bridge namespace's address, from which the test's own ssh runs

_SSHD_CONFIG = """\
ListenAddress {ip}
Port 22
HostKey {host_key}
AuthorizedKeysFile {authorized_keys}
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile none
MaxStartups 100:30:200
MaxSessions 100
"""


class SshHosts:
    """`count` hosts with an sshd each; see the module's docstring."""

    def __init__(self, count, unauthorized=()):
        if os.geteuid() != 0:
            raise Skip("starting sshd for root logins needs root")
        for tool in ("sshd", "ssh", "ssh-keygen", "rsync"):
            if not shutil.which(tool):
                raise Skip(f"SSH hosts need {tool} (packages openssh-server, openssh-client, rsync)")
        self._netns, self._sshds, self.dir = None, [], None
        try:
            self._netns = NamespaceHosts(count)
            self.ips = self._netns.ips
            self.dir = tempfile.mkdtemp(prefix="ssh-hosts-")  # mode 0700
            self.remote_root = os.path.join(self.dir, "remote")
            os.mkdir(self.remote_root)
            self._build(set(unauthorized))
        except BaseException:
            self.close()
            raise

    def _build(self, unauthorized):
        ns = self._netns
        subprocess.run(["ip", "-n", ns.bridge_ns, "addr", "add", f"{CLIENT_IP}/24", "dev", "br0"], check=True)
        self.client_key = self._keygen("client_key")
        with open(self.client_key + ".pub") as f:
            client_pub = f.read()
        known = []
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # Debian's privilege-separation directory
        for i, ip in enumerate(self.ips):
            host_key = self._keygen(f"host{i}_key")
            with open(host_key + ".pub") as f:
                known.append(f"{ip} {' '.join(f.read().split()[:2])}\n")
            authorized_keys = self._write(f"host{i}_authorized_keys", "" if i in unauthorized else client_pub)
            config = self._write(f"host{i}_sshd_config", _SSHD_CONFIG.format(
                ip=ip, host_key=host_key, authorized_keys=authorized_keys))
            os.mkdir(self.host_dir(i))
            # `ip netns exec` runs the shell in a new mount namespace whose mounts reach no other:
            # the bind mount is seen by this sshd and what it starts alone. sh execs sshd, so the
            # Popen's pid is the listener's.
            script = f"mount --bind {self.host_dir(i)} {self.remote_root} && exec {shutil.which('sshd')} -D -e -f {config}"
            with open(self._log(i), "w") as log:
                self._sshds.append(ns.popen(i, ["sh", "-c", script], stdout=log, stderr=subprocess.STDOUT))
        self.known_hosts = self._write("known_hosts", "".join(known))
        for i in range(len(self.ips)):
            self._wait_up(i)

    def _keygen(self, name):
        path = os.path.join(self.dir, name)
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", path],
                       check=True, capture_output=True)
        return path

    def _write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def _log(self, i):
        return os.path.join(self.dir, f"host{i}_sshd.log")

    def _wait_up(self, i, timeout=10):
        """Waits until host i's sshd answers a real ssh login (refused counts: it answered)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self._sshds[i].poll() is None:
            r = subprocess.run(self.ssh_command(i, "true", "-o", "ConnectTimeout=1"), capture_output=True, text=True)
            if r.returncode == 0 or "Permission denied" in r.stderr:
                return
            time.sleep(0.05)
        with open(self._log(i)) as f:
            log = f.read()
        raise AssertionError(f"sshd on {self.ips[i]} did not come up in {timeout}s "
                             f"(exit status {self._sshds[i].poll()}); its log:\n{log}")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __str__(self):
        return f"{len(self.ips)} hosts with sshd ({self.ips[0]} .. {self.ips[-1]})"

    def host_dir(self, i):
        """Host i's own directory, which its processes see at `remote_root`."""
        return os.path.join(self.dir, f"host{i}")

    def destinations(self):
        """ssh destinations of the hosts: root@198.18.1.1, ..."""
        return [f"root@{ip}" for ip in self.ips]

    def ssh_options(self):
        """Values for the launcher's --ssh_opt, each one or more ssh arguments separated by spaces."""
        return ["-F /dev/null", f"-i {self.client_key}", "-o IdentitiesOnly=yes",
                f"-o UserKnownHostsFile={self.known_hosts}", "-o StrictHostKeyChecking=yes"]

    def client_command(self, cmd):
        """An argv that runs `cmd` outside every host, where all of them can be reached."""
        return ["ip", "netns", "exec", self._netns.bridge_ns, *cmd]

    def ssh_command(self, i, remote_command, *ssh_args):
        """An argv that runs `remote_command` (a shell line) on host i, without a terminal."""
        opts = [word for o in self.ssh_options() for word in o.split()]
        return self.client_command(["ssh", *opts, "-o", "BatchMode=yes", *ssh_args,
                                    self.destinations()[i], remote_command])

    def hostfile(self, path, slots=None):
        """Writes a DeepSpeed-style hostfile listing every host, with `slots=N` on each unless None."""
        with open(path, "w") as f:
            f.write(f"# {self}\n")
            for d in self.destinations():
                f.write(d + ("" if slots is None else f" slots={slots}") + "\n")
        return path

    def name_links(self, name):
        """Gives every host's link the interface name `name`, as a cluster whose conf.py names one
        NIC for all hosts has it."""
        ns = self._netns
        for i, n in enumerate(ns.names):
            for step in (["down"], ["name", name], ["up"]):
                subprocess.run(["ip", "-n", n, "link", "set", "dev", f"{ns.tag}e{i}" if step != ["up"] else name, *step],
                               check=True, capture_output=True)

    def popen(self, i, cmd, cwd=None, env=None, **kw):
        """NamespaceHosts.popen: runs `cmd` inside host i (it does not see host i's `remote_root`)."""
        return self._netns.popen(i, cmd, cwd, env, **kw)

    def job_pids(self, i):
        """Pids of live processes in host i's network namespace other than its sshd listener:
        what a job started there, and sshd's processes for sessions still open."""
        return [p for p in self._netns.pids(i) if p != self._sshds[i].pid]

    def wait_clean(self, hosts, timeout=5.0):
        """Waits until the hosts numbered in `hosts` run nothing but sshd; else AssertionError."""
        wait_hosts_clean(self.job_pids, hosts, lambda i: f"host {i}", timeout)

    def close(self):
        """Kills every process in the hosts' namespaces, sshd's first, deletes the namespaces and
        the temporary directory. Safe to call twice."""
        for p in self._sshds:
            p.kill()
            p.wait()
        self._sshds = []
        if self._netns:
            self._netns.kill_everything()
            self._netns.close()
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None


def _self_test():
    """Makes 3 hosts, host 2 unauthorized, and checks logins, isolation, rsync, job_pids and close()."""
    def run(cmd):
        return subprocess.run(cmd, capture_output=True, text=True)
    started = time.monotonic()
    with SshHosts(3, unauthorized=[2]) as hosts:
        print(f"{hosts} up in {time.monotonic() - started:.1f}s")
        r = run(hosts.ssh_command(0, f"echo hi > {hosts.remote_root}/x; hostname -I"))
        assert r.returncode == 0 and r.stdout.split() == [hosts.ips[0]], r
        assert os.path.exists(os.path.join(hosts.host_dir(0), "x")), "host 0 wrote past its directory"
        assert run(hosts.ssh_command(1, f"ls {hosts.remote_root}")).stdout == "", "host 1 sees host 0's file"
        assert "Permission denied" in run(hosts.ssh_command(2, "true")).stderr, "host 2 let the client in"
        os.mkdir(os.path.join(hosts.dir, "ws"))
        open(os.path.join(hosts.dir, "ws", "f"), "w").close()
        rsync = ["rsync", "-a", "-e", " ".join(["ssh", *hosts.ssh_options()]), os.path.join(hosts.dir, "ws/"),
                 f"{hosts.destinations()[1]}:{hosts.remote_root}/ws/"]
        assert run(hosts.client_command(rsync)).returncode == 0
        assert os.path.exists(os.path.join(hosts.host_dir(1), "ws", "f")), "rsync did not reach host 1"
        hosts.wait_clean([0, 1, 2], timeout=2)
        client = subprocess.Popen(hosts.ssh_command(1, "sleep 100"))
        wait_for(lambda: "sleep 100" in map(cmdline, hosts.job_pids(1)), 5, "sleep on host 1")
        client.kill()
        client.wait()
        print("left on host 1 after its ssh client was killed:", [cmdline(p) for p in hosts.job_pids(1)])
        sshds, names = [p.pid for p in hosts._sshds], hosts._netns.names
    listing = run(["ip", "netns", "list"]).stdout
    assert not any(n in listing for n in names) and not any(pid_alive(p) for p in sshds), "close() left some"
    print("ssh_hosts: OK")


if __name__ == "__main__":
    _self_test()
