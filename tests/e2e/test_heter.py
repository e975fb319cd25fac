#!/usr/bin/env python3
"""End-to-end tests of ps-heter jobs (Paddle's heterogeneous parameter servers): the variables of
every role in --dry_run=json against Paddle 2.6's fleet launcher, a real run with the probe (its
heterlog files, Paddle's console lines, and the order of the end: workers exit 0, then the heter
workers are stopped, then the servers), train's refusal of the heter role, and bad input. Loopback
only."""

import json
import os
import re
import subprocess
import sys
from datetime import datetime

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (LAUNCH, PROBE, Skip, assert_all_gone, check, child_env, launch, main, port_run,  # noqa: E402
                     scratch)
from netns_hosts import LoopbackHosts  # noqa: E402

TRAIN = os.environ.get("TRAIN", "train")
SHARED = os.environ.get("SHARED_DATA", "")
RAW = os.path.join(SHARED, "criteo_sample", "part-0")
CONFIGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "configs")

HETER_JOB = ["--server_num=1", "--worker_num=2", "--heter_worker_num=2", "--heter_devices=gpu"]

# What Paddle 2.6.2's fleet launcher (python/paddle/distributed/fleet/launch_utils.py) sets with
# FLAGS_START_PORT=6170 for `--server_num=1 --worker_num=2 --heter_worker_num=2 --heter_devices=gpu`:
# get_role_endpoints numbers the ports (get_ports: servers from 6170, workers after them, the heter
# stage after those, then the Gloo store), and start_pod_server, start_pod_worker and
# start_pod_heter_worker set these variables, in this order.
_JOB = {"PADDLE_PSERVERS_IP_PORT_LIST": "127.0.0.1:6170",
        "PADDLE_TRAINER_ENDPOINTS": "127.0.0.1:6171,127.0.0.1:6172"}
_GLOO = {"PADDLE_WITH_GLOO": "0", "PADDLE_GLOO_RENDEZVOUS": "3", "PADDLE_GLOO_HTTP_ENDPOINT": "127.0.0.1:6175"}
_ALL = "127.0.0.1:6173,127.0.0.1:6174"
PADDLE_SERVER = {**_JOB, "PADDLE_ALL_HETER_TRAINER_IP_PORT_LIST": _ALL, "PADDLE_PORT": "6170",
                 "TRAINING_ROLE": "PSERVER", "PADDLE_TRAINERS_NUM": "2", "POD_IP": "127.0.0.1", **_GLOO}


def paddle_worker(rank):
    return {**_JOB, "PADDLE_TRAINERS_NUM": "2", "PADDLE_STAGE_TRAINERS_NUM": "[2, 2]", "STAGE_ID": "1",
            "STAGE_NUM": "2", "PADDLE_PREVIOUS_HETER_TRAINER_IP_PORT_LIST": "",
            "PADDLE_NEXT_HETER_TRAINER_IP_PORT_LIST": _ALL, "PADDLE_ALL_HETER_TRAINER_IP_PORT_LIST": _ALL,
            "HETER_DEVICE_TYPE": "cpu", "TRAINING_ROLE": "TRAINER", "POD_IP": "127.0.0.1",
            "PADDLE_PORT": str(6171 + rank), "PADDLE_TRAINER_ID": str(rank), **_GLOO}


def paddle_heter_worker(index):
    return {**_JOB, "PADDLE_NEXT_HETER_TRAINER_IP_PORT_LIST": "",
            "PADDLE_PREVIOUS_HETER_TRAINER_IP_PORT_LIST": "127.0.0.1:6171,127.0.0.1:6172",
            "PADDLE_ALL_HETER_TRAINER_IP_PORT_LIST": _ALL, "HETER_DEVICE_TYPE": "gpu", "STAGE_ID": "2",
            "STAGE_NUM": "2", "PADDLE_PORT": str(6173 + index), "TRAINING_ROLE": "HETER_TRAINER",
            "PADDLE_TRAINERS_NUM": "2", "PADDLE_STAGE_TRAINERS_NUM": "[2, 2]", "POD_IP": "127.0.0.1", **_GLOO}


# Paddle sets these too; we leave them out on purpose, as for plain PS jobs: the Gloo rendezvous is
# HTTP (PADDLE_GLOO_RENDEZVOUS=3), so PADDLE_GLOO_FS_PATH is never read; there are no coordinators;
# and without a GPU, CUDA_VISIBLE_DEVICES=0 and FLAGS_selected_gpus=0 would pin CPU processes to GPU 0.
PADDLE_ONLY = {"PADDLE_GLOO_FS_PATH", "PADDLE_COORDINATOR_ENDPOINTS", "CUDA_VISIBLE_DEVICES", "XPU_VISIBLE_DEVICES",
               "FLAGS_selected_gpus", "FLAGS_selected_xpus"}
# Ours besides: every process's thread count and restart count, and a worker's torch-style rank.
OURS = {"OMP_NUM_THREADS", "PADDLE_RESTART_COUNT"}
OURS_WORKER = OURS | {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"}


def test_heter_dry_run_json_sets_paddles_variables_for_every_role():
    r = launch(["--dry_run=json", *HETER_JOB], ["--sleep", "60"], env={"FLAGS_START_PORT": "6170"}, timeout=30)
    check(r.returncode == 0, "exit 0", r)
    plan = json.loads(r.stdout)
    check(plan["mode"] == "ps" and plan["heter_endpoints"] == _ALL.split(","), f"heter endpoints {plan}")
    procs = plan["processes"]
    check([(p["role"], p["rank"], p["log_file"]) for p in procs] ==
          [("server", 0, "log/serverlog.0"), ("worker", 0, "log/workerlog.0"), ("worker", 1, "log/workerlog.1"),
           ("heter_worker", 0, "log/heterlog.0"), ("heter_worker", 1, "log/heterlog.1")], f"processes {procs}")
    expected = [(PADDLE_SERVER, OURS), (paddle_worker(0), OURS_WORKER), (paddle_worker(1), OURS_WORKER),
                (paddle_heter_worker(0), OURS), (paddle_heter_worker(1), OURS)]
    for p, (paddle, ours) in zip(procs, expected):
        env = p["env"]
        name = f"{p['role']} {p['rank']}"
        check({k: v for k, v in env.items() if k in paddle} == paddle, f"{name}: Paddle's values\n{env}")
        check(list(k for k in env if k in paddle) == list(paddle), f"{name}: in Paddle's order\n{list(env)}")
        check(set(env) - set(paddle) == ours, f"{name}: nothing else but {ours}: {set(env) - set(paddle)}")
        check(not (set(env) & PADDLE_ONLY), f"{name}: none of {PADDLE_ONLY}")
    check(r.dumps() == [] and not os.path.exists(r.path("log")), "nothing started, no logs")
    t = launch(["--dry_run", *HETER_JOB], [], env={"FLAGS_START_PORT": "6170"}, timeout=30)
    check(t.returncode == 0 and f"heter workers: {_ALL}\n" in t.stdout, "the table names the heter workers", t)
    check(re.search(r"^heter_worker +1 +1  127\.0\.0\.1:6174 +log/heterlog\.1$", t.stdout, re.M) is not None,
          "a row per heter worker", t)
    check("heter_worker 1 environment" in t.stdout and "STAGE_ID=2" in t.stdout, "and its environment", t)


def _log_lines(r):
    """launch.log's lines as (time, message)."""
    lines = []
    for line in r.read("log", "launch.log").splitlines():
        m = re.match(r"^[A-Z]+ (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) \S+\] (.*)$", line)
        if m:
            lines.append((datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f"), m.group(2)))
    return lines


def _first(lines, pattern, what):
    for i, (when, message) in enumerate(lines):
        if re.search(pattern, message):
            return i, when
    raise AssertionError(f"launch.log has no line for {what} ({pattern}):\n" + "\n".join(m for _, m in lines))


def _ordered(r, steps):
    """The first line of each step, in order; returns their times."""
    lines = _log_lines(r)
    found = [_first(lines, pattern, what) for pattern, what in steps]
    check([i for i, _ in found] == sorted(i for i, _ in found),
          "in order: " + " < ".join(what for _, what in steps) + "\n" + r.read("log", "launch.log"))
    return [when for _, when in found]


def _run_heter_job(extra_launch, extra_probe):
    """1 server, 2 workers and 2 heter workers of the probe: the workers exit 0 after a second, the
    others serve until they are stopped."""
    r = launch([*HETER_JOB, *extra_launch],
               ["--print", "probe up", "--sleep", "60", "--fail-role", "worker", "--exit", "0", "--fail-after", "1",
                *extra_probe], timeout=60)
    dumps = r.dumps()
    assert_all_gone(dumps)
    return r, dumps


def test_heter_run_writes_heterlogs_and_stops_heter_workers_then_servers():
    r, dumps = _run_heter_job([], [])
    check(r.returncode == 0, "the job succeeds once its workers exit 0", r)
    check(r.elapsed < 30, f"ends when the workers do, not after the others' sleep ({r.elapsed:.1f}s)", r)
    heter = [d for d in dumps if d["env"].get("TRAINING_ROLE") == "HETER_TRAINER"]
    check(len(dumps) == 5 and len(heter) == 2, f"5 processes, 2 of them heter workers: {len(dumps)}, {len(heter)}")
    check(sorted(d["env"]["PADDLE_PORT"] for d in heter) ==
          sorted(e.split(":")[1] for e in heter[0]["env"]["PADDLE_ALL_HETER_TRAINER_IP_PORT_LIST"].split(",")),
          "each heter worker on its endpoint of the list")
    check(all(d["env"]["STAGE_ID"] == "2" and d["env"]["HETER_DEVICE_TYPE"] == "gpu" for d in heter), "stage 2, gpu")
    for i in (0, 1):
        check("probe up" in r.read("log", f"heterlog.{i}"), f"log/heterlog.{i} holds heter worker {i}'s output")
    check(not os.path.exists(r.path("log", "heterlog.2")), "no third heter log")
    out = r.stdout + r.stderr
    for line in ("heter_worker_num: 2", "heter_workers: None", "heter_devices: gpu",
                 "Local heter_worker start 2 processes. First process distributed environment info (Only For Debug):",
                 "Please check servers, workers, coordinator and heter_worker logs in log/workerlog.*, "
                 "log/serverlog.* , log/coordinatorlog.*, and log/heterlog.*"):
        check(line in out, f"Paddle's console line: {line}", r)
    _ordered(r, [(r"^all workers exit, going to finish parameter server and heter_worker\.$", "the workers' end"),
                 (r"^sent SIGTERM to heter_worker 0 .*heter_worker 1 ", "SIGTERM to the heter workers"),
                 (r"^all heter_worker are killed$", "the heter workers' end"),
                 (r"^sent SIGTERM to server 0 ", "SIGTERM to the server"),
                 (r"^all parameter server are killed$", "the server's end")])


def test_servers_are_stopped_only_once_heter_workers_ignoring_sigterm_are_killed():
    # Every probe ignores SIGTERM: the heter workers go at SIGKILL after the grace period, and only
    # then is the server sent its SIGTERM (and its SIGKILL a grace period later).
    r, dumps = _run_heter_job(["--grace_period=1.5"], ["--ignore-term"])
    check(r.returncode == 0, "stopped by the launcher is not a failure", r)
    term_heter, kill_heter, term_server, kill_server = _ordered(r, [
        (r"^sent SIGTERM to heter_worker 0 ", "SIGTERM to the heter workers"),
        (r"^heter_worker \d .*did not exit within the grace period: sending SIGKILL", "SIGKILL to the heter workers"),
        (r"^sent SIGTERM to server 0 ", "SIGTERM to the server"),
        (r"^server 0 .*did not exit within the grace period: sending SIGKILL", "SIGKILL to the server")])
    check((term_server - term_heter).total_seconds() >= 1.4, f"the server waits out the heter workers' grace period: "
          f"{term_heter} -> {term_server}")
    check((kill_server - term_server).total_seconds() >= 1.4, "the server has a grace period of its own")
    kills = [m for _, m in _log_lines(r) if "sending SIGKILL" in m]
    check(not any(m.startswith("server") for m in kills[:2]), f"the heter workers' SIGKILL spares the server: {kills}")
    check(len(dumps) == 5, f"all 5 processes ran: {len(dumps)}")


def test_two_nodes_given_lists_run_a_heter_job_whose_heter_workers_hold_no_rank():
    """--servers/--workers/--heter_workers across two loopback nodes: the heter worker runs on its
    node only, and the rank map counts workers alone."""
    hosts = LoopbackHosts(2)
    port = port_run(5)
    a, b = hosts.ips
    lists = [f"--servers={a}:{port}", f"--workers={a}:{port + 1},{b}:{port + 2}", f"--heter_workers={b}:{port + 3}",
             "--heter_devices=cpu"]
    nodes = []
    for i in (1, 0):
        workdir = scratch()
        cmd = [LAUNCH, *hosts.host_args(i), *lists, PROBE, "--dump", os.path.join(workdir, "dumps"), "--sleep", "0.5"]
        nodes.append((i, workdir, hosts.popen(i, cmd, cwd=workdir, env=child_env())))
    results = {}
    for i, workdir, proc in nodes:
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            for _, _, p in nodes:
                p.kill()
            raise
        results[i] = (workdir, proc.returncode, err)
    for i, (workdir, code, err) in sorted(results.items()):
        check(code == 0, f"node {i} exits 0\n{err[-3000:]}")
    logs = {i: sorted(os.listdir(os.path.join(results[i][0], "log"))) for i in results}
    check("heterlog.0" in logs[1] and not any(n.startswith("heterlog") for n in logs[0]),
          f"the heter worker runs on node 1 only: {logs}")
    with open(os.path.join(results[0][0], "log", "endpoints.log")) as f:
        rank_map = f.read()
    check(re.search(r"^node 1 .* 1 process\(es\)  ranks 1-1 ", rank_map, re.M),
          f"node 1's heter worker is not a rank:\n{rank_map}")
    dumps = [json.load(open(os.path.join(results[1][0], "dumps", n))) for n in os.listdir(os.path.join(results[1][0], "dumps"))]
    heter = [d for d in dumps if d["env"].get("TRAINING_ROLE") == "HETER_TRAINER"]
    check(len(heter) == 1 and heter[0]["env"]["PADDLE_PREVIOUS_HETER_TRAINER_IP_PORT_LIST"] == f"{a}:{port + 1},{b}:{port + 2}",
          f"the heter worker's previous stage is both workers: {[d['env'] for d in heter]}")


def test_train_refuses_the_heter_trainer_role():
    workdir = scratch()
    env = child_env({"TRAINING_ROLE": "HETER_TRAINER", "PADDLE_PSERVERS_IP_PORT_LIST": "127.0.0.1:6170",
                     "PADDLE_TRAINER_ENDPOINTS": "127.0.0.1:6171", "PADDLE_TRAINERS_NUM": "1", "STAGE_ID": "2",
                     "STAGE_NUM": "2", "POD_IP": "127.0.0.1", "PADDLE_PORT": "6172", "HETER_DEVICE_TYPE": "cpu"})
    p = subprocess.run([TRAIN], cwd=workdir, env=env, capture_output=True, text=True, timeout=30)
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    check(p.returncode == 2, f"exit 2 (bad input), not {p.returncode}\n{p.stderr}")
    check(len(lines) == 1 and "TRAINING_ROLE=HETER_TRAINER: train does not run the heter stages" in lines[0],
          f"one line saying so\n{p.stderr}")


def test_a_heter_job_of_train_fails_naming_its_heter_worker():
    if not os.path.exists(RAW):
        raise Skip(f"no data at {RAW}")
    # Epochs enough to keep the worker training for seconds: its success would end the job first.
    args = ["--config", os.path.join(CONFIGS, "wide_deep.json"), "--set", f"data_dir={RAW}", "--set", "batch_size=8",
            "--set", "ctr.hidden=[8]", "--set", "epochs=2000"]
    r = launch(["--server_num=1", "--worker_num=1", "--heter_worker_num=1", "--heter_devices=cpu"], args,
               script=TRAIN, timeout=60)
    check(r.returncode == 2, "the heter worker's exit status", r)
    check("the heter_worker process with rank=[0] was aborted (exit code 2)" in r.stderr and
          "failed process: heter_worker 0 (local 0, endpoint 127.0.0.1:" in r.stderr,
          "the launcher names the heter worker", r)
    check(r.elapsed < 20, f"the failure stops the job at once ({r.elapsed:.1f}s)", r)
    check("TRAINING_ROLE=HETER_TRAINER: train does not run" in r.read("log", "heterlog.0"), "its log says why", r)


def test_heter_bad_input_rows():
    # The bad-input matrix's rules (test_bad_input.py): one error line naming the flag, exit 2,
    # nothing started, no file written, within the time bound.
    from test_bad_input import Case, run_case
    rows = [
        Case("heter workers without device types", "flag", "launch", ["--heter_worker_num=2"], 2, "--heter_devices"),
        Case("heter device type unknown", "flag", "launch", ["--heter_worker_num=2", "--heter_devices=tpu"], 2,
             "--heter_devices=tpu: 'tpu' is not a device type"),
        Case("heter count not a number", "flag", "launch", ["--heter_worker_num=two", "--heter_devices=cpu"], 2,
             "--heter_worker_num=two"),
        Case("heter stages disagree", "flag", "launch", ["--heter_worker_num=1;1", "--heter_devices=cpu"], 2,
             "--heter_devices=cpu gives 1 stage(s), but --heter_worker_num gives 2"),
        Case("a heter worker on a server's port", "flag", "launch",
             ["--servers=127.0.0.1:{port0}", "--workers=127.0.0.1:{port1}", "--heter_workers=127.0.0.1:{port0}",
              "--heter_devices=cpu"], 2, "--heter_workers: endpoint 127.0.0.1:{port0}"),
        Case("ps-heter mode without heter workers", "flag", "launch", ["--run_mode=ps-heter"], 2,
             "--run_mode=ps-heter"),
        Case("a heter flag in plain PS mode", "flag", "launch", ["--run_mode=ps", "--heter_devices=cpu"], 2,
             "--run_mode=ps conflicts with --heter_devices"),
        Case("heter workers in a --master job", "flag", "launch",
             ["--master=127.0.0.1:{port0}", "--nnodes=2", "--heter_worker_num=1", "--heter_devices=cpu"], 2,
             "--heter_worker_num: a --master PS job has no heter workers", progress=True,
             may_write=("log", "log/launch.log")),
    ]
    failures = []
    for case in rows:
        problems, elapsed, outcome = run_case(case)
        print(f"{'FAIL' if problems else 'ok  '} {elapsed:4.1f}s {case.name:40} {outcome}", flush=True)
        if problems:
            failures.append(f"{case.name}:\n  " + "\n  ".join(problems))
    check(not failures, f"{len(failures)} of {len(rows)} rows misbehaved:\n" + "\n".join(failures))


if __name__ == "__main__":
    main(sys.modules[__name__])
