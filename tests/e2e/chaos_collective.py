"""The chaos soak's collective job kinds (chaos_job.py's Job): fit_a_line on two hosts with a
checkpoint each epoch, and the elastic one whose launchers meet through an etcd outside every
host (Etcd), which the soak may restart."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chaos_job import CONFIGS, LAUNCH, SHARED, TRAIN, Job, read_bytes  # noqa: E402
from harness import Skip  # noqa: E402


class Etcd:
    """A one-member etcd outside every host (in the bridge's namespace, at 198.18.1.254), which
    every host reaches; restart() kills it and starts it again on its data."""

    ADDRESS = "198.18.1.254"

    def __init__(self, hosts, directory):
        self.binary = shutil.which("etcd")
        if not self.binary:
            raise Skip("the elastic job needs etcd (Debian's etcd-server; scripts/setup.sh installs it)")
        self.hosts, self.data = hosts, os.path.join(directory, "etcd")
        subprocess.run(["ip", "-n", hosts.bridge_ns, "addr", "add", f"{self.ADDRESS}/24", "dev", "br0"], check=True)
        subprocess.run(["ip", "-n", hosts.bridge_ns, "link", "set", "lo", "up"], check=True)  # its own address
        self.proc = None
        try:
            self.start()
        except BaseException:
            self.kill()
            raise

    @property
    def url(self):
        return f"etcd://{self.ADDRESS}:2379"

    def start(self):
        client, peer = f"http://{self.ADDRESS}:2379", f"http://{self.ADDRESS}:2380"
        with open(self.data + ".log", "a") as log:
            self.proc = subprocess.Popen(
                ["ip", "netns", "exec", self.hosts.bridge_ns, self.binary, "--name", "chaos", "--data-dir", self.data,
                 "--listen-client-urls", client, "--advertise-client-urls", client, "--listen-peer-urls", peer,
                 "--initial-advertise-peer-urls", peer, "--initial-cluster", f"chaos={peer}"],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            ask = ("import json, urllib.request; r = urllib.request.Request(" + repr(client + "/v3/kv/range")
                   + ", data=json.dumps({'key': 'eA=='}).encode()); print(urllib.request.urlopen(r, timeout=1).read())")
            r = subprocess.run(["ip", "netns", "exec", self.hosts.bridge_ns, sys.executable, "-c", ask],
                               capture_output=True, text=True)
            if r.returncode == 0 and "header" in r.stdout:
                return
            time.sleep(0.1)
        raise AssertionError(f"etcd did not serve in 20 s; its log: {self.data}.log")

    def kill(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def close(self):
        self.kill()


class CollectiveJob(Job):
    """fit_a_line on UCI housing, one rank on each of 2 hosts through a master on host 0, with
    --max_restarts=2 and a checkpoint each epoch on host 0, in a small tmpfs."""

    name = "collective"
    faults = ("kill-worker", "kill-worker", "kill-launcher", "pause-launcher", "cut-host", "disk-full",
              "kill-in-recovery")

    def __init__(self, soak, directory, epochs):
        super().__init__(soak, directory)
        self.epochs = epochs
        self.output = os.path.join(self.workdirs[0], "output")
        os.makedirs(self.output)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", self.output], capture_output=True, text=True)
        if r.returncode != 0:
            raise Skip(f"cannot mount a tmpfs for the output directory: {r.stderr.strip()}")
        self.mounted = True

    def train_args(self):
        return ["--config", os.path.join(CONFIGS, "fit_a_line.json"), "--set", f"data_dir={SHARED}/uci_housing",
                "--set", f"epochs={self.epochs}", "--set", "batch_size=2", "--set", "optimizer.type=momentum",
                "--set", "optimizer.lr=0.0005", "--set", "resume=true", "--set", "log_every=1000"]

    def commands(self, master):
        return [[LAUNCH, f"--master={master}", "--nnodes=2", "--max_restarts=2", "--grace_period=1", TRAIN,
                 *self.train_args()] for _ in range(2)]

    def training(self):
        return os.path.exists(os.path.join(self.output, "latest"))

    def result(self):
        with open(os.path.join(self.output, "metrics.json")) as f:
            metrics = json.load(f)
        return {"final": read_bytes(os.path.join(self.output, "final.bin")), "metrics": metrics}

    def equal(self, reference, result):
        if result["final"] != reference["final"]:
            return "final parameters differ from the undisturbed run's"
        for key in ("train_loss", "test_loss", "steps", "epochs"):
            if result["metrics"][key] != reference["metrics"][key]:
                return f"{key} {result['metrics'][key]} differs from the undisturbed run's {reference['metrics'][key]}"
        return None

    def newest_save(self):
        try:
            with open(os.path.join(self.output, "latest")) as f:
                return os.path.join(self.output, f.read().strip())
        except OSError:
            return None

    def refusal_mark(self, path):
        return f"{os.path.basename(os.path.dirname(path))}/{os.path.basename(path)}: "  # output/checkpoint-E.bin

    def loaded(self, path, line):
        # A resume from `latest` at the damaged checkpoint's epoch loaded it (a later one is a
        # checkpoint made after the damage).
        epoch = os.path.basename(path).removeprefix("checkpoint-").removesuffix(".bin")
        return line.startswith("resumed from ") and f"/latest: {epoch} epoch(s)" in line

    def fill(self):
        """Writes one file until the tmpfs has no byte left (unbuffered: the last write fails, not a close)."""
        try:
            with open(os.path.join(self.output, "filler"), "wb", buffering=0) as f:
                chunk = b"\0" * (1 << 20)
                while True:
                    f.write(chunk)
        except OSError:
            pass

    def unfill(self):
        try:
            os.remove(os.path.join(self.output, "filler"))
        except FileNotFoundError:
            pass

    def close(self):
        if self.mounted:
            subprocess.run(["umount", "-l", self.output], capture_output=True)
            self.mounted = False


class ElasticJob(CollectiveJob):
    """The collective job as an elastic one on etcd (--nnodes=2:2, --max_restarts=2), its output in a
    directory both hosts share, as elastic jobs keep theirs on shared storage: any node may hold
    rank 0 in a generation. A node whose launcher ends is started again by the soak, as a cluster
    scheduler would, and joins the next generation."""

    name = "elastic"
    faults = ("kill-worker", "kill-launcher", "pause-launcher", "cut-host", "restart-etcd", "kill-in-recovery")
    replaces_lost_nodes = True

    def __init__(self, soak, directory, epochs):
        self.etcd = soak.etcd()  # first: without etcd nothing is mounted
        super().__init__(soak, directory, epochs)

    def commands(self, master):
        args = [*self.train_args(), "--set", f"output_dir={self.output}"]
        job_id = f"chaos{os.getpid()}x{os.path.basename(self.directory)}"
        return [[LAUNCH, f"--master={self.etcd.url}", "--nnodes=2:2", "--elastic_timeout=1", f"--job_id={job_id}",
                 "--max_restarts=2", "--grace_period=1", TRAIN, *args] for _ in range(2)]
