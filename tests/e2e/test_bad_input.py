#!/usr/bin/env python3
"""The bad-input matrix: one table of wrong launcher flags, environment variables, configs, data
files, checkpoints and peers (one file, long, because the table is the point: every row held to
the same rules), each run against the real `paddle-launch` or `train` in a scratch
directory of its own. Every row must end with

- the exit status docs/troubleshooting.md documents for it;
- one error line, the last on stderr, in the program's own format and naming the flag, variable,
  file:line or peer at fault; the lines before it, if any, are the program's normal progress
  (peers waited for), never an error, a stack trace or a dump;
- nothing started: no process left in the run's session, and nothing the launcher would have
  started (a probe that ran would have written its dump);
- nothing half-written and nothing lost: every file of the scratch directory, the checkpoints and
  outputs placed there included, byte-identical afterwards and no file added, except the few a
  row names (the launch.log of a rendezvous that was really attempted);
- all within the row's time bound.

The test runs every row and reports all failing rows together."""

import dataclasses
import fnmatch
import gzip
import hashlib
import json
import os
import resource
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import LAUNCH, PROBE, Skip, child_env, free_ports, main, scratch, session_members  # noqa: E402

TRAIN = os.environ.get("TRAIN", "train")
SHARED = os.environ.get("SHARED_DATA", "")
CONFIGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "configs")
FIT_A_LINE = ["--config", os.path.join(CONFIGS, "fit_a_line.json"), "--set", "data_dir={shared}/uci_housing",
              "--set", "output_dir=out", "--set", "epochs=1"]
WIDE_DEEP = ["--config", os.path.join(CONFIGS, "wide_deep.json"), "--set", "data_dir={shared}/criteo_sample/part-0",
             "--set", "ctr.hash_dim=1000", "--set", "ctr.hidden=[8]", "--set", "batch_size=16", "--set", "output_dir=out"]
LAUNCH_PROBE = [PROBE, "--dump", "dumps", "--sleep", "60"]

# Markers of an error that is not one line: a stack trace, an abort, a dump.
NOT_ONE_LINE = ("Traceback", "terminate called", "what():", "Aborted", "core dumped", "Stack trace",
                "Run with --help", "Segmentation fault")


def collective(rank, n, ports, **extra):
    endpoints = [f"127.0.0.1:{p}" for p in ports[:n]]
    return {"PADDLE_TRAINER_ID": str(rank), "PADDLE_TRAINERS_NUM": str(n), "PADDLE_TRAINER_ENDPOINTS": ",".join(endpoints),
            "PADDLE_CURRENT_ENDPOINT": endpoints[rank], **extra}


def ps_worker(server_port, **extra):
    return {"TRAINING_ROLE": "TRAINER", "PADDLE_PSERVERS_IP_PORT_LIST": f"127.0.0.1:{server_port}",
            "PADDLE_TRAINERS_NUM": "1", "PADDLE_TRAINER_ID": "0", **extra}


@dataclasses.dataclass
class Case:
    name: str
    kind: str         # flag, env, config, data, checkpoint or peer
    program: str      # "launch" (paddle-launch ... probe) or "train"
    args: list        # the program's arguments; "{dir}", "{shared}" and "{port0}".. are filled in
    code: int         # the documented exit status
    culprit: str      # what the error line must name
    env: dict = dataclasses.field(default_factory=dict)
    files: object = dataclasses.field(default_factory=dict)  # {scratch-relative path: str or bytes}, or fn() -> it
    helpers: object = None  # fn(run) starting the peers a row needs (run.spawn, run.listen)
    may_write: tuple = ()   # scratch-relative globs the run may create or change
    seconds: float = 10     # time bound
    progress: bool = False  # lines of normal progress may come before the error line
    open_files: int = 0     # the program's open-file limit (ulimit -n, soft and hard); 0: as inherited


# --- data the rows write ------------------------------------------------------------------

def housing_rows(n, bad_line=None):
    rows = [" 0.00632  18.00   2.310  0  0.5380  6.5750  65.20  4.0900   1  296.0  15.30 396.90   4.98  24.00"] * n
    if bad_line:
        rows[bad_line - 1] = rows[bad_line - 1].replace("  6.5750", "  six.5")
    return "\n".join(rows) + "\n"


def criteo_rows(n, short_line=None):
    row = "\t".join(["1"] + [str(i) for i in range(13)] + [f"{i:08x}" for i in range(26)])
    rows = [row] * n
    if short_line:
        rows[short_line - 1] = row.rsplit("\t", 1)[0]
    return "\n".join(rows) + "\n"


def movielens_100k(bad_line):
    """The shared ml-100k's other files, and a u.data of a few ratings, one malformed."""
    files = {}
    for name in os.listdir(os.path.join(SHARED, "ml-100k")):
        with open(os.path.join(SHARED, "ml-100k", name), "rb") as f:
            files[f"ml/{name}"] = f.read()
    ratings = ["196\t242\t3\t881250949", "186\t302\t3\t891717742", "22\t377\t1\t878887116", "244\t51\t2\t880606923"]
    ratings[bad_line - 1] = "244\t51\tthree\t880606923"
    files["ml/u.data"] = "\n".join(ratings) + "\n"
    return files


def idx_truncated():
    images = struct.pack(">IIII", 0x803, 10, 28, 28) + bytes(10 * 28 * 28)
    labels = struct.pack(">II", 0x801, 10) + bytes(10)
    return {"mnist/train-images-idx3-ubyte.gz": gzip.compress(images)[:-40],
            "mnist/train-labels-idx1-ubyte.gz": gzip.compress(labels),
            "mnist/t10k-images-idx3-ubyte.gz": gzip.compress(images),
            "mnist/t10k-labels-idx1-ubyte.gz": gzip.compress(labels)}


def checkpoint(tensors, magic="PADDLE-LAUNCH-CHECKPOINT 2", epoch=1, step=21):
    """A checkpoint file (runtime/nn/checkpoint.h) holding `tensors`: [(name, [floats])]."""
    header = {"epoch": epoch, "step": step, "tensors": [{"name": n, "count": len(v)} for n, v in tensors]}
    body = f"{magic}\n{json.dumps(header)}\n".encode() + b"".join(struct.pack(f"<{len(v)}f", *v) for _, v in tensors)
    return body + struct.pack("<I", zlib.crc32(body))


FIT_A_LINE_TENSORS = [("fc.w", [0.1] * 13), ("fc.b", [0.0])]


def checkpoint_files(data):
    return {"out/checkpoint-1.bin": data, "out/latest": "checkpoint-1.bin\n",
            "out/metrics.json": '{"epochs": 1}\n'}


# --- peers the rows talk to ---------------------------------------------------------------

def http_listener(run):
    """Something that is not a parameter server: answers every connection like a web server."""
    def answer(conn):
        conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
    run.listen(run.ports[0], answer)


def silent_listener(run):
    """A peer that accepts and never says a word."""
    run.listen(run.ports[0], lambda conn: time.sleep(30))


def ps_server_with_another_token(run):
    env = {"TRAINING_ROLE": "PSERVER", "PADDLE_PSERVERS_IP_PORT_LIST": f"127.0.0.1:{run.ports[0]}",
           "POD_IP": "127.0.0.1", "PADDLE_PORT": str(run.ports[0]), "PADDLE_TRAINERS_NUM": "1",
           "PADDLE_JOB_TOKEN": "the-servers-token"}
    run.spawn([TRAIN, *run.fill(WIDE_DEEP)], env, ready=("Server listening on", 20))


def master_with_another_token(run):
    run.spawn([LAUNCH, "--master=127.0.0.1:{}".format(run.ports[0]), "--nnodes=2", "--rank=0", "--host=127.0.0.1",
               "--rendezvous_timeout=10", "--log_dir=master-log", PROBE, "--sleep", "1"],
              {"PADDLE_JOB_TOKEN": "the-masters-token"}, ready=("joining generation 0", 5))


def rank0_with_another_token(run):
    env = collective(0, 2, run.ports, PADDLE_JOB_TOKEN="rank0s-token", PADDLE_COLLECTIVE_TIMEOUT="4")
    run.spawn([TRAIN, *run.fill(FIT_A_LINE), "--set", "output_dir=rank0-out"], env)


# --- the matrix -----------------------------------------------------------------------------

CASES = [
    # Launcher flags: one line, exit 2, nothing started, no log directory.
    Case("gpu id not a number", "flag", "launch", ["--gpus=0,x"], 2, "--gpus"),
    Case("no processes per node", "flag", "launch", ["--nproc_per_node=0"], 2, "--nproc_per_node"),
    Case("unknown flag", "flag", "launch", ["--no_such_flag=1"], 2, "--no_such_flag"),
    Case("server count against the server list", "flag", "launch", ["--server_num=2", "--servers=127.0.0.1:6170"], 2,
         "--server_num=2"),
    Case("PS counts with several --ips", "flag", "launch", ["--server_num=1", "--ips=127.0.0.1,127.0.0.2"], 2, "--ips"),
    Case("a one-node PS job without workers", "flag", "launch", ["--server_num=1", "--worker_num=0"], 2, "--worker_num=0"),
    Case("the Gloo store on a server's port", "flag", "launch",
         ["--servers=127.0.0.1:{port0}", "--workers=127.0.0.1:{port1}", "--http_port={port0}"], 2, "--http_port"),
    Case("master not an address", "flag", "launch", ["--master=10.0.0.300:80", "--nnodes=2"], 2, "--master"),
    Case("master a name that never resolves", "flag", "launch",
         ["--master=no-such-host.invalid:80", "--nnodes=2", "--rendezvous_timeout=1"], 2, "--master", progress=True),
    Case("what a hang does unknown", "flag", "launch", ["--on_hang=explode"], 2, "--on_hang"),
    Case("a negative hang timeout", "flag", "launch", ["--hang_timeout=-1"], 2, "--hang_timeout"),
    Case("Paddle's auto-tuner, not built", "flag", "launch", ["--auto_tuner_json=tuner.json"], 2, "--auto_tuner_json"),
    Case("two names of one setting", "flag", "launch", ["--workers=127.0.0.1", "--trainers=127.0.0.2"], 2, "--trainers"),
    Case("node count not a number", "flag", "launch", ["--master=127.0.0.1:{port0}", "--nnodes=two"], 2, "--nnodes"),
    Case("log dir is a file", "flag", "launch", ["--log_dir=afile"], 2, "--log_dir", files={"afile": "x"}),
    Case("start port out of range", "flag", "launch", ["--start_port=70000"], 2, "--start_port"),
    Case("hostfile line malformed", "flag", "launch", ["--hostfile=hosts", "--job_workspace=."], 2, "hosts:2",
         files={"hosts": "127.0.0.1 slots=1\n127.0.0.2 slots=two\n"}),
    Case("negative restarts", "flag", "launch", ["--max_restarts=-1"], 2, "--max_restarts"),
    Case("negative worker restarts", "flag", "launch", ["--server_num=1", "--worker_num=1", "--ps_worker_restarts=-1"],
         2, "--ps_worker_restarts"),
    Case("grace period not a number", "flag", "launch", ["--grace_period=soon"], 2, "--grace_period"),
    Case("unknown backend", "flag", "launch", ["--backend=mpi"], 2, "--backend"),
    Case("master's open files below its nodes", "flag", "launch",
         ["--master=127.0.0.1:{port0}", "--nnodes=1000", "--rank=0", "--host=127.0.0.1"], 2,
         "--nnodes=1000: the master needs 1128 open files (one connection per node and 128 to spare), but `ulimit -n` "
         "allows 300 (hard limit 300)", open_files=300, progress=True, may_write=("log", "log/launch.log")),
    # Environment variables, read by the launcher and by `train`: exit 2.
    Case("a Paddle twin not a number", "env", "launch", [], 2, "PADDLE_NPROC_PER_NODE=many",
         env={"PADDLE_NPROC_PER_NODE": "many"}),
    Case("a Paddle twin not a boolean", "env", "launch", [], 2, "PADDLE_LOG_OVERWRITE=perhaps",
         env={"PADDLE_LOG_OVERWRITE": "perhaps"}),
    Case("orphan guard unknown", "env", "launch", [], 2, "PADDLE_ORPHAN_GUARD", env={"PADDLE_ORPHAN_GUARD": "sometimes"}),
    Case("start port variable not a number", "env", "launch", ["--ips=127.0.0.1,127.0.0.2", "--host=127.0.0.1"], 2,
         "FLAGS_START_PORT", env={"FLAGS_START_PORT": "high"}),
    Case("node count variable not a number", "env", "launch", ["--master=127.0.0.1:{port0}"], 2, "PADDLE_NNODES",
         env={"PADDLE_NNODES": "two"}),
    Case("worker restarts variable not a number", "env", "launch", ["--server_num=1", "--worker_num=1"], 2,
         "PADDLE_PS_WORKER_RESTARTS", env={"PADDLE_PS_WORKER_RESTARTS": "many"}),
    Case("trainer count not a number", "env", "train", FIT_A_LINE, 2, "PADDLE_TRAINERS_NUM",
         env={"PADDLE_TRAINER_ID": "0", "PADDLE_TRAINERS_NUM": "two", "PADDLE_TRAINER_ENDPOINTS": "127.0.0.1:{port0}",
              "PADDLE_CURRENT_ENDPOINT": "127.0.0.1:{port0}"}),
    Case("trainer id out of range", "env", "train", FIT_A_LINE, 2, "PADDLE_TRAINER_ID=2",
         env={"PADDLE_TRAINER_ID": "2", "PADDLE_TRAINERS_NUM": "2",
              "PADDLE_TRAINER_ENDPOINTS": "127.0.0.1:{port0},127.0.0.1:{port1}", "PADDLE_CURRENT_ENDPOINT": "127.0.0.1:{port1}"}),
    Case("endpoints disagree", "env", "train", FIT_A_LINE, 2, "PADDLE_CURRENT_ENDPOINT",
         env={"PADDLE_TRAINER_ID": "0", "PADDLE_TRAINERS_NUM": "2",
              "PADDLE_TRAINER_ENDPOINTS": "127.0.0.1:{port0},127.0.0.1:{port1}", "PADDLE_CURRENT_ENDPOINT": "127.0.0.1:{port1}"}),
    Case("server list without ports", "env", "train", WIDE_DEEP, 2, "PADDLE_PSERVERS_IP_PORT_LIST: '127.0.0.1'",
         env={"TRAINING_ROLE": "TRAINER", "PADDLE_PSERVERS_IP_PORT_LIST": "127.0.0.1", "PADDLE_TRAINERS_NUM": "1",
              "PADDLE_TRAINER_ID": "0"}),
    Case("role unknown", "env", "train", WIDE_DEEP, 2, "TRAINING_ROLE",
         env={"TRAINING_ROLE": "BOSS", "PADDLE_PSERVERS_IP_PORT_LIST": "127.0.0.1:{port0}"}),
    Case("collective timeout negative", "env", "train", FIT_A_LINE, 2, "PADDLE_COLLECTIVE_TIMEOUT",
         env=collective(0, 2, ["{port0}", "{port1}"], PADDLE_COLLECTIVE_TIMEOUT="-5")),
    Case("server connect timeout not a number", "env", "train", WIDE_DEEP, 2, "PADDLE_PS_CONNECT_TIMEOUT",
         env=ps_worker("{port0}", PADDLE_PS_CONNECT_TIMEOUT="soon")),
    Case("token required but not given", "env", "train", FIT_A_LINE, 2, "PADDLE_JOB_TOKEN",
         env=collective(0, 2, ["{port0}", "{port1}"], PADDLE_REQUIRE_TOKEN="1")),
    # Configs: exit 2, naming the file:line or the key.
    Case("config not JSON", "config", "train", ["--config", "bad.json"], 2, "bad.json:3",
         files={"bad.json": '{\n  "model": "fit_a_line",\n  "epochs": 3,,\n  "batch_size": 20\n}\n'}),
    Case("config file missing", "config", "train", ["--config", "missing.json"], 2, "missing.json"),
    Case("config key unknown", "config", "train", ["--config", "typo.json"], 2, "optimizer.rate",
         files={"typo.json": '{"optimizer": {"rate": 0.1}}\n'}),
    Case("--set value of the wrong type", "config", "train", [*FIT_A_LINE, "--set", "batch_size=many"], 2, "batch_size"),
    Case("--set value out of range", "config", "train", [*FIT_A_LINE, "--set", "batch_size=0"], 2, "batch_size"),
    Case("--set without a value", "config", "train", [*FIT_A_LINE, "--set", "batch_size"], 2, "--set"),
    Case("--set key unknown", "config", "train", [*FIT_A_LINE, "--set", "optimiser.lr=1"], 2, "optimiser.lr"),
    Case("train flag unknown", "config", "train", [*FIT_A_LINE, "--epochs=3"], 2, "--epochs"),
    Case("AMP loss scaling out of range", "config", "train", [*FIT_A_LINE, "--set", "amp.decr_ratio=2"], 2,
         "amp.decr_ratio"),
    Case("AMP asked for on the CPU", "config", "train", [*FIT_A_LINE, "--set", "amp.enabled=true", "--set",
         "device=cpu"], 2, "amp.enabled", progress=True),
    Case("PS server rule contradicts the optimizer", "config", "train", [*WIDE_DEEP, "--set", "ps.server_optimizer=sgd"],
         2, "ps.server_optimizer: sgd contradicts optimizer.type: adam"),
    # Data files: exit 1, naming the file and, for text, the line.
    Case("data dir missing", "data", "train", [*FIT_A_LINE, "--set", "data_dir=nowhere"], 1, "nowhere/housing.data"),
    Case("housing line malformed", "data", "train", [*FIT_A_LINE, "--set", "data_dir=uci"], 1, "uci/housing.data:3",
         files={"uci/housing.data": housing_rows(10, bad_line=3)}),
    Case("movielens rating malformed", "data", "train",
         ["--config", os.path.join(CONFIGS, "recommender.json"), "--set", "data_dir=ml", "--set", "output_dir=out"], 1,
         "ml/u.data:3", files=lambda: movielens_100k(bad_line=3)),
    Case("criteo line short", "data", "train", [*WIDE_DEEP, "--set", "data_dir=criteo/part-0", "--set",
                                                "parallelism=ps"], 1, "criteo/part-0:2",
         files={"criteo/part-0": criteo_rows(5, short_line=2)}),
    Case("IDX file truncated", "data", "train", ["--set", "data_dir=mnist", "--set", "output_dir=out"], 1,
         "mnist/train-images-idx3-ubyte.gz", files=idx_truncated),
    # Checkpoints: exit 1, naming the file; the damaged one and the outputs beside it stay as they were.
    Case("checkpoint truncated", "checkpoint", "train", [*FIT_A_LINE, "--set", "resume=true"], 1,
         "out/checkpoint-1.bin: truncated", files=checkpoint_files(checkpoint(FIT_A_LINE_TENSORS)[:-30])),
    Case("checkpoint of a newer format", "checkpoint", "train", [*FIT_A_LINE, "--set", "resume=true"], 1,
         "out/checkpoint-1.bin: format version 9",
         files=checkpoint_files(checkpoint(FIT_A_LINE_TENSORS, magic="PADDLE-LAUNCH-CHECKPOINT 9"))),
    Case("checkpoint of another model", "checkpoint", "train", [*FIT_A_LINE, "--set", "resume=true"], 1,
         "out/checkpoint-1.bin: has no tensor 'fc.",
         files=checkpoint_files(checkpoint([("conv1.w", [0.5] * 8), ("conv1.b", [0.0] * 2)]))),
    Case("checkpoint of another shape", "checkpoint", "train", [*FIT_A_LINE, "--set", "resume=true"], 1,
         "out/checkpoint-1.bin: tensor 'fc.w'",
         files=checkpoint_files(checkpoint([("fc.w", [0.1] * 7), ("fc.b", [0.0])]))),
    Case("latest names a missing checkpoint", "checkpoint", "train", [*FIT_A_LINE, "--set", "resume=true"], 1,
         "out/checkpoint-7.bin", files={"out/latest": "checkpoint-7.bin\n", "out/metrics.json": "{}\n"}),
    # Peers: exit 1 (124 for the launchers' rendezvous), naming the peer, within a short timeout.
    Case("a rank never comes", "peer", "train", FIT_A_LINE, 1, "rank(s) 1 (127.0.0.1:{port1}) did not arrive",
         env=collective(0, 2, ["{port0}", "{port1}"], PADDLE_COLLECTIVE_TIMEOUT="2"), seconds=12, progress=True),
    Case("a server never comes", "peer", "train", WIDE_DEEP, 1, "127.0.0.1:{port0}",
         env=ps_worker("{port0}", PADDLE_PS_CONNECT_TIMEOUT="2"), seconds=12, progress=True),
    Case("a server that is no parameter server", "peer", "train", WIDE_DEEP, 1, "parameter server 127.0.0.1:{port0}",
         env=ps_worker("{port0}", PADDLE_PS_CONNECT_TIMEOUT="3"), helpers=http_listener, seconds=12, progress=True),
    Case("a server that never answers", "peer", "train", WIDE_DEEP, 1, "parameter server 127.0.0.1:{port0}",
         env=ps_worker("{port0}", PADDLE_PS_CONNECT_TIMEOUT="3", PADDLE_PS_REQUEST_TIMEOUT="3"),
         helpers=silent_listener, seconds=15, progress=True),
    Case("a server with another job's token", "peer", "train", WIDE_DEEP, 1, "parameter server 127.0.0.1:{port0}",
         env=ps_worker("{port0}", PADDLE_JOB_TOKEN="the-workers-token"), helpers=ps_server_with_another_token,
         seconds=25, progress=True),
    Case("a store with another job's token", "peer", "train", FIT_A_LINE, 1, "key-value store 127.0.0.1:{port0} refused",
         env=collective(1, 2, ["{port0}", "{port1}"], PADDLE_JOB_TOKEN="rank1s-token", PADDLE_COLLECTIVE_TIMEOUT="4"),
         helpers=rank0_with_another_token, seconds=15, progress=True, may_write=("rank0-out", "rank0-out/*")),
    Case("a master with another job's token", "peer", "launch",
         ["--master=127.0.0.1:{port0}", "--nnodes=2", "--rank=1", "--host=127.0.0.2"], 1,
         "key-value store 127.0.0.1:{port0} refused this process: its job token is not the job's (PADDLE_JOB_TOKEN)",
         env={"PADDLE_JOB_TOKEN": "node1s-token"}, helpers=master_with_another_token, seconds=10, progress=True,
         may_write=("log", "log/launch.log", "master-log", "master-log/*")),
    Case("a node never comes", "peer", "launch", ["--master=127.0.0.1:{port0}", "--nnodes=2", "--rendezvous_timeout=2"],
         124, "missing", seconds=12, progress=True, may_write=("log", "log/launch.log")),
]


# --- running a row --------------------------------------------------------------------------

class Run:
    """One row's scratch directory, ports and helper peers."""

    def __init__(self, case):
        self.case = case
        self.dir = scratch()
        shutil.rmtree(os.path.join(self.dir, "dumps"))
        self.ports = free_ports(3)
        self.helpers = []   # Popen of helper processes, each in its own session
        self.sockets = []
        self.stop = threading.Event()
        self.pid = None     # the program's, which leads its own session

    def fill(self, value):
        if isinstance(value, list):
            return [self.fill(v) for v in value]
        return value.format(dir=self.dir, shared=SHARED, **{f"port{i}": p for i, p in enumerate(self.ports)})

    def spawn(self, argv, env, ready=None):
        log = open(os.path.join(self.dir, f".helper{len(self.helpers)}.log"), "w+")
        proc = subprocess.Popen(argv, cwd=self.dir, env=child_env(env), stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        self.helpers.append((proc, log))
        if ready:
            text, seconds = ready
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                log.seek(0)
                if text in log.read():
                    return
                if proc.poll() is not None:
                    break
                time.sleep(0.05)
            log.seek(0)
            raise AssertionError(f"helper {argv[0]} never printed '{text}':\n{log.read()[-2000:]}")

    def listen(self, port, handle):
        server = socket.socket()
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", port))
        server.listen(8)
        server.settimeout(0.2)
        self.sockets.append(server)

        def serve():
            while not self.stop.is_set():
                try:
                    conn, _ = server.accept()
                except OSError:
                    continue
                self.sockets.append(conn)
                threading.Thread(target=lambda: _quietly(handle, conn), daemon=True).start()
        threading.Thread(target=serve, daemon=True).start()

    def close(self):
        self.stop.set()
        for s in self.sockets:
            s.close()
        for proc, log in self.helpers:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def _quietly(handle, conn):
    try:
        handle(conn)
    except OSError:
        pass


def tree(directory):
    """Every path below `directory` (helpers' logs aside) with its content's digest."""
    found = {}
    for root, dirs, files in os.walk(directory):
        for d in dirs:
            found[os.path.relpath(os.path.join(root, d), directory)] = "dir"
        for name in files:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, directory)
            if rel.startswith(".helper"):
                continue
            with open(path, "rb") as f:
                found[rel] = hashlib.sha256(f.read()).hexdigest()
    return found


def write_files(run):
    files = run.case.files() if callable(run.case.files) else run.case.files
    for rel, content in files.items():
        path = os.path.join(run.dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(content.encode() if isinstance(content, str) else content)


def run_case(case):
    """The row's failures, as a list of strings (empty: it behaved), its time and its outcome."""
    run = Run(case)
    try:
        write_files(run)
        if case.helpers:
            case.helpers(run)
        before = tree(run.dir)
        argv = ([LAUNCH, *run.fill(case.args), *LAUNCH_PROBE] if case.program == "launch"
                else [TRAIN, *run.fill(case.args)])
        env = {k: run.fill(v) for k, v in case.env.items()}
        started = time.monotonic()
        limit = case.open_files

        def lower_open_files():
            if limit:
                resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))
        proc = subprocess.Popen(argv, cwd=run.dir, env=child_env(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, errors="replace", start_new_session=True, preexec_fn=lower_open_files)
        run.pid = proc.pid
        try:
            stdout, stderr = proc.communicate(timeout=case.seconds)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
        elapsed = time.monotonic() - started
        problems = judge(case, run, proc.returncode, stderr, elapsed, before)
        if problems:
            problems.append(f"stderr:\n{stderr[-1500:]}")
        lines = [line for line in stderr.splitlines() if line.strip()]
        return problems, elapsed, f"{proc.returncode}: {lines[-1] if lines else ''}"
    finally:
        run.close()


def judge(case, run, code, stderr, elapsed, before):
    problems = []
    if elapsed > case.seconds:
        problems.append(f"still running after {case.seconds} s")
    if code != case.code:
        problems.append(f"exit status {code}, documented {case.code}")
    lines = [line for line in stderr.splitlines() if line.strip()]
    prefix = "paddle-launch: error: " if case.program == "launch" else "train: "
    error = lines[-1] if lines else ""
    if not error.startswith(prefix) or run.fill(case.culprit) not in error:
        problems.append(f"the last stderr line is not '{prefix}...' naming '{run.fill(case.culprit)}': {error!r}")
    earlier = lines[:-1]
    if earlier and not case.progress:
        problems.append(f"{len(lines)} lines on stderr, not one")
    bad = [line for line in lines if any(m in line for m in NOT_ONE_LINE) or line.startswith(prefix.rstrip())]
    if bad[:-1] or (bad and bad[-1] != error):
        problems.append(f"more than the one error line: {bad}")
    # A launcher that exited leaves nothing in its session; the probe would have dumped itself.
    deadline = time.monotonic() + 3
    while session_members_of(run) and time.monotonic() < deadline:
        time.sleep(0.05)
    if session_members_of(run):
        problems.append(f"processes left behind: {session_members_of(run)}")
    after = tree(run.dir)
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    unexpected = [p for p in changed if not any(fnmatch.fnmatch(p, g) for g in case.may_write)]
    if unexpected:
        problems.append(f"files created, changed or removed: {unexpected}")
    return problems


def session_members_of(run):
    return session_members(run.pid) if run.pid else []


def test_bad_input_matrix():
    for tool in (LAUNCH, TRAIN, PROBE):
        if shutil.which(tool) is None:
            raise Skip(f"{tool} not found")
    if not os.path.isdir(os.path.join(SHARED, "uci_housing")):
        raise Skip(f"no shared data at '{SHARED}' (SHARED_DATA)")
    names = [c.name for c in CASES]
    assert len(set(names)) == len(names), "row names are unique"
    failures = []
    started = time.monotonic()
    for case in CASES:
        problems, elapsed, outcome = run_case(case)
        print(f"{'FAIL' if problems else 'ok  '} {elapsed:4.1f}s {case.kind:10} {case.name:36} {outcome}", flush=True)
        if problems:
            failures.append(f"{case.kind}: {case.name}:\n  " + "\n  ".join(problems))
    kinds = sorted({c.kind for c in CASES})
    print(f"{len(CASES)} rows ({', '.join(f'{k} {sum(c.kind == k for c in CASES)}' for k in kinds)}) "
          f"in {time.monotonic() - started:.1f}s")
    if failures:
        raise AssertionError(f"{len(failures)} of {len(CASES)} rows misbehaved:\n" + "\n".join(failures))


if __name__ == "__main__":
    main(sys.modules[__name__])
