#!/usr/bin/env python3
"""End-to-end tests of paddle-launch: the real binary, the probe program, loopback only.
Run one test: test_launch.py test_NAME (CTest registers every test_* function)."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (LAUNCH, PROBE, Skip, assert_all_gone, check, child_env, finish, launch, main, port_run, scratch,  # noqa: E402
                     start, wait_for, wait_for_dumps)


def test_collective_two_processes():
    r = launch(["--nproc_per_node=2"], ["--print", "hello from probe", "--lines", "3"],
               env={"http_proxy": "http://proxy:3128", "https_proxy": "http://proxy:3128"})
    check(r.returncode == 0, "a clean run exits 0", r)
    dumps = r.dumps()
    check([d["rank"] for d in dumps] == [0, 1], f"two trainers, ranks 0 and 1: {dumps}")
    endpoints = dumps[0]["env"]["PADDLE_TRAINER_ENDPOINTS"].split(",")
    check(len(endpoints) == 2 and len(set(endpoints)) == 2, f"two distinct endpoints: {endpoints}")
    for i, d in enumerate(dumps):
        e = d["env"]
        check(e["PADDLE_TRAINER_ID"] == str(i) and e["RANK"] == str(i) and e["LOCAL_RANK"] == str(i), f"ranks: {e}")
        check(e["PADDLE_TRAINERS_NUM"] == "2" and e["WORLD_SIZE"] == "2", "world size 2")
        check(e["PADDLE_CURRENT_ENDPOINT"] == endpoints[i], "current endpoint is this rank's")
        check(e["PADDLE_RANK_IN_NODE"] == str(i), "rank in node")
        check(e["PADDLE_DISTRI_BACKEND"] == "gloo", "CPU runs use gloo")
        check(e["MASTER_ADDR"] + ":" + e["MASTER_PORT"] == endpoints[0], "MASTER_* is rank 0's endpoint")
        check(e["PADDLE_RESTART_COUNT"] == "0", "first attempt")
        check(int(e["OMP_NUM_THREADS"]) == max(1, os.cpu_count() // 2), f"OMP_NUM_THREADS {e['OMP_NUM_THREADS']}")
        check("http_proxy" not in e and "https_proxy" not in e, "proxies are removed")
        check(d["pgid"] == d["pid"], "each process leads its own process group")
    check(r.read("log", "endpoints.log") == "PADDLE_TRAINER_ENDPOINTS: \n" + "\n".join(endpoints) + "\n",
          "endpoints.log lists the endpoints")
    for i in range(2):
        log = r.read("log", f"workerlog.{i}")
        check(f"line 2 of trainer {i}" in log and "hello from probe" in log, f"workerlog.{i} has rank {i}'s output")
    check("line 0 of trainer 0" in r.stdout and "trainer 1" not in r.stdout, "only local rank 0 is echoed", r)
    check(r.stdout.startswith("-----------  Configuration Arguments -----------\n"), "configuration block first", r)
    check("nproc_per_node: 2\n" in r.stdout, "options listed", r)
    check("Local start 2 processes. First process distributed environment info (Only For Debug):" in r.stderr,
          "Paddle's start line", r)
    check("|                        Distributed Envs                      Value                    |" in r.stderr,
          "Distributed Envs table", r)
    check("can be found in log/endpoints.log, and detail running logs maybe found in log/workerlog.0" in r.stderr,
          "hint naming the logs", r)
    launch_log = r.read("log", "launch.log")
    check("Configuration Arguments" in launch_log and "Local start 2 processes" in launch_log, "launch.log")
    assert_all_gone(dumps)


def test_echo_keeps_lines_whole():
    r = launch(["--nproc_per_node=1"], ["--lines", "20000"])
    check(r.returncode == 0, "exit 0", r)
    echoed = [l for l in r.stdout.splitlines() if l.startswith("line ")]
    check(echoed == [f"line {i} of trainer 0" for i in range(20000)], "every line echoed whole and in order")


def test_failure_stops_the_rest_and_reports():
    r = launch(["--nproc_per_node=3", "--grace_period=2"],
               ["--sleep", "60", "--exit", "7", "--fail-rank", "1", "--fail-after", "0.3", "--lines", "30"])
    check(r.returncode == 7, "the launcher returns the failed process's exit code", r)
    check(r.elapsed < 10, f"the job stops promptly ({r.elapsed:.1f}s)", r)
    check("ABORT!!! Out of all 3 trainers, the trainer process with rank=[1] was aborted (exit code 7)" in r.stderr,
          "failure named", r)
    check("failed process: trainer 1 (local 1" in r.stderr and "log: log/workerlog.1" in r.stderr,
          "report names the log", r)
    check("line 29 of trainer 1" in r.stderr and "line 9 of trainer 1" not in r.stderr.split("failed process")[1],
          "report shows the last 20 lines", r)
    assert_all_gone(r.dumps())


def test_signal_death_gives_128_plus_signal():
    r = launch(["--nproc_per_node=2"], ["--sleep", "60", "--signal", "SEGV", "--fail-rank", "0"])
    check(r.returncode == 128 + signal.SIGSEGV, "128 + SIGSEGV", r)
    check("signal SIGSEGV (11)" in r.stderr, "signal named", r)
    assert_all_gone(r.dumps())


def test_sigkill_after_grace_period():
    r = launch(["--nproc_per_node=2", "--grace_period=0.5"],
               ["--sleep", "60", "--ignore-term", "--exit", "3", "--fail-rank", "1", "--fail-after", "0.2"])
    check(r.returncode == 3, "exit 3", r)
    check(r.elapsed < 5, f"SIGKILL came after the 0.5 s grace period ({r.elapsed:.1f}s)", r)
    check("did not exit within the grace period: sending SIGKILL" in r.stderr, "says it kills", r)
    assert_all_gone(r.dumps())


def _interrupt(sig, expected):
    started = time.monotonic()
    proc, workdir = start(["--nproc_per_node=2"], ["--sleep", "60", "--grandchild"])
    dumps = wait_for_dumps(workdir, 2)
    proc.send_signal(sig)
    r = finish(proc, workdir, started, timeout=30)
    check(r.returncode == expected, f"exit {expected}", r)
    check("stopping all processes" in r.stderr, "says what it does", r)
    assert_all_gone(dumps)


def test_sigint_stops_everything_130():
    _interrupt(signal.SIGINT, 130)


def test_sigterm_stops_everything_143():
    _interrupt(signal.SIGTERM, 143)


def test_second_signal_kills_at_once():
    started = time.monotonic()
    proc, workdir = start(["--nproc_per_node=2", "--grace_period=60"], ["--sleep", "60", "--ignore-term"])
    dumps = wait_for_dumps(workdir, 2)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.5)
    check(proc.poll() is None, "the first SIGINT waits for the grace period")
    proc.send_signal(signal.SIGINT)
    r = finish(proc, workdir, started, timeout=10)
    check(r.returncode == 130, "exit 130", r)
    check(r.elapsed < 8, f"killed at once ({r.elapsed:.1f}s)", r)
    assert_all_gone(dumps)


def test_children_die_with_a_sigkilled_launcher():
    proc, workdir = start(["--nproc_per_node=2"], ["--sleep", "60"])
    dumps = wait_for_dumps(workdir, 2)
    proc.kill()
    proc.communicate()
    assert_all_gone([dict(d, grandchild=0) for d in dumps])


def test_grandchildren_are_cleaned_up():
    r = launch(["--nproc_per_node=2"], ["--grandchild"])
    check(r.returncode == 0, "exit 0", r)
    dumps = r.dumps()
    check(all(d["grandchild"] > 0 for d in dumps), "grandchildren were started")
    assert_all_gone(dumps)


def test_max_restarts_recovers():
    # Rank 1 fails after a while, so rank 0 has written its dump even on a loaded machine (failing
    # at once, it was sometimes stopped before that under a parallel CI run).
    r = launch(["--nproc_per_node=2", "--max_restarts=2", "--grace_period=1"],
               ["--sleep", "0.5", "--exit", "5", "--fail-rank", "1", "--fail-attempt", "0", "--fail-after", "1.5",
                "--lines", "2"])
    check(r.returncode == 0, "the second attempt succeeds", r)
    dumps = r.dumps()
    check(sorted((d["attempt"], d["rank"]) for d in dumps) == [(0, 0), (0, 1), (1, 0), (1, 1)],
          f"both ranks ran twice: {[(d['attempt'], d['rank']) for d in dumps]}")
    check(all(d["env"]["PADDLE_RESTART_COUNT"] == str(d["attempt"]) for d in dumps), "PADDLE_RESTART_COUNT")
    check(dumps[0]["env"]["PADDLE_TRAINER_ENDPOINTS"] == dumps[2]["env"]["PADDLE_TRAINER_ENDPOINTS"], "same plan")
    check("failing on purpose" in r.read("log", "workerlog.1.attempt0"), "attempt 0's log is kept")
    check("failing on purpose" not in r.read("log", "workerlog.1"), "the final log is the last attempt's")
    check(os.path.exists(r.path("log", "workerlog.0.attempt0")), "every log of the attempt is kept")
    check("restart 1 of 2" in r.stderr, "restart announced", r)
    assert_all_gone(dumps)


def test_a_job_script_for_paddles_launcher_runs_unchanged():
    # python -m paddle.distributed.launch --devices 0,1 --log_level INFO --max_restart 1
    #     --log_overwrite False train.py, word for word: rank 1 fails once and is restarted as
    # --max_restart says, and every log goes on after the last run's, as Paddle's default is.
    workdir = scratch()
    line = ["--devices", "0,1", "--log_level", "INFO", "--max_restart", "1", "--log_overwrite", "False"]
    probe = ["--sleep", "0.5", "--exit", "5", "--fail-rank", "1", "--fail-attempt", "0", "--fail-after", "1",
             "--print", "run marker"]
    for run in (1, 2):
        r = launch(line, probe, workdir=workdir)
        check(r.returncode == 0, f"run {run}: the restart succeeds", r)
        check("restart 1 of 1" in r.stderr, f"run {run}: one restart, as --max_restart says", r)
        dumps = [d for d in r.dumps() if d["env"]["POD_NAME"] == r.dumps()[-1]["env"]["POD_NAME"]]
        check(sorted((d["attempt"], d["rank"]) for d in dumps) == [(0, 0), (0, 1), (1, 0), (1, 1)],
              f"run {run}: both ranks ran twice: {[(d['attempt'], d['rank']) for d in dumps]}")
        check(all(d["env"]["FLAGS_selected_gpus"] == str(d["rank"]) for d in dumps), "--devices gives each rank its id")
    log = r.read("log", "workerlog.1")
    check(log.count("run marker") == 4 and log.count("failing on purpose") == 2,
          f"workerlog.1 holds both attempts of both runs:\n{log[-2000:]}")
    check(not os.path.exists(r.path("log", "workerlog.1.attempt0")), "no attempt is moved aside")
    check("log_overwrite: False" in r.stdout and "log_level: INFO" in r.stdout, "the settings are listed", r)


def test_paddles_variables_stand_for_their_flags_and_a_flag_wins():
    r = launch([], ["--lines", "1"], env={"PADDLE_NPROC_PER_NODE": "2", "PADDLE_LOG_LEVEL": "WARNING"})
    check(r.returncode == 0 and len(r.dumps()) == 2, "PADDLE_NPROC_PER_NODE=2 starts two processes", r)
    check("Configuration Arguments" not in r.stdout and "Local start" not in r.stderr,
          "PADDLE_LOG_LEVEL=WARNING keeps the INFO lines off the console", r)
    check("Local start 2 processes" in r.read("log", "launch.log"), "launch.log keeps every line")
    r = launch(["--nproc_per_node=1"], [], env={"PADDLE_NPROC_PER_NODE": "2"})
    check(r.returncode == 0 and len(r.dumps()) == 1, "--nproc_per_node=1 wins over PADDLE_NPROC_PER_NODE=2", r)
    check("PADDLE_NPROC_PER_NODE=2 is ignored: --nproc_per_node was given" in r.stderr, "the overridden twin is named", r)
    r = launch([], [], env={"PADDLE_NPROC_PER_NODE": "two"})
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    check(r.returncode == 2 and len(lines) == 1 and lines[0].startswith("paddle-launch: error: PADDLE_NPROC_PER_NODE=two:"),
          "a bad twin is one line naming it", r)


def test_the_gpu_log_and_the_pre_start_hook():
    workdir = scratch()
    bin_dir = os.path.join(workdir, "bin")
    os.makedirs(bin_dir)
    with open(os.path.join(bin_dir, "nvidia-smi"), "w") as f:
        f.write("#!/bin/sh\necho \"nvidia-smi $*\"\n")
    os.chmod(os.path.join(bin_dir, "nvidia-smi"), 0o755)
    path = f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}"
    hook = "echo hook ran at restart $PADDLE_RESTART_COUNT >> hook.txt; echo to prehook.log"
    r = launch(["--gpus=0", "--job_id=j1", "--elastic_pre_hook", hook, "--max_restart=1"],
               ["--sleep", "6", "--exit", "3", "--fail-attempt", "0", "--fail-after", "0.5"],
               workdir=workdir, env={"PATH": path}, timeout=60)
    check(r.returncode == 0, "the restart succeeds", r)
    gpu_log = r.read("log", "j1.gpu.log")
    check(gpu_log.startswith("nvidia-smi -L\n") and gpu_log.count("--query-gpu=") >= 2,
          f"LOG_DIR/<job_id>.gpu.log holds nvidia-smi's figures every 5 s:\n{gpu_log}")
    check(r.read("log", "prehook.log").count("to prehook.log") == 2, "the hook's output is in prehook.log")
    check(r.read("hook.txt").count("hook ran") == 2, "the hook runs before each start")
    r = launch(["--gpus=0", "--enable_gpu_log=False"], [], workdir=scratch(), env={"PATH": path})
    check(r.returncode == 0 and not os.path.exists(r.path("log", "default.gpu.log")), "--enable_gpu_log=False: none", r)


def test_max_restarts_exhausted_returns_the_failure():
    r = launch(["--nproc_per_node=1", "--max_restarts=1"], ["--exit", "9"])
    check(r.returncode == 9, "exit 9", r)
    check(len(r.dumps()) == 2, "ran twice")
    check("giving up after 1 restart(s)" in r.stderr, "gives up", r)


def test_ps_mode_finishes_servers_after_workers():
    r = launch(["--server_num=1", "--worker_num=2"],
               ["--sleep", "60", "--exit", "0", "--fail-role", "worker", "--fail-after", "0.3"])
    check(r.returncode == 0, "all workers exit 0, so the job succeeds", r)
    check(r.elapsed < 10, "servers were stopped, not waited for", r)
    check("all workers exit, going to finish parameter server" in r.stderr, "Paddle's message", r)
    check("all parameter server are killed" in r.stderr, "Paddle's message", r)
    dumps = r.dumps()
    server = [d for d in dumps if d["role"] == "server"]
    workers = [d for d in dumps if d["role"] == "worker"]
    check(len(server) == 1 and len(workers) == 2, f"1 server, 2 workers: {dumps}")
    s, w = server[0]["env"], workers[1]["env"]
    check(s["TRAINING_ROLE"] == "PSERVER" and w["TRAINING_ROLE"] == "TRAINER", "roles")
    check(s["PADDLE_PSERVERS_IP_PORT_LIST"] == f"127.0.0.1:{s['PADDLE_PORT']}", "server list")
    check(w["PADDLE_TRAINER_ID"] == "1" and w["PADDLE_TRAINERS_NUM"] == "2", "worker ids")
    check(w["PADDLE_GLOO_RENDEZVOUS"] == "3" and w["PADDLE_GLOO_HTTP_ENDPOINT"].startswith("127.0.0.1:"), "gloo")
    check(os.path.exists(r.path("log", "serverlog.0")) and os.path.exists(r.path("log", "workerlog.1")), "logs")
    check("Local server start 1 processes" in r.stderr and "Local worker start 2 processes" in r.stderr,
          "one table per role", r)
    assert_all_gone(dumps)


def test_ps_server_failure_fails_the_job():
    r = launch(["--server_num=2", "--worker_num=1"],
               ["--sleep", "60", "--exit", "4", "--fail-role", "server", "--fail-rank", "1", "--fail-after", "0.3"])
    check(r.returncode == 4, "the server's exit code", r)
    check("the server process with rank=[1] was aborted" in r.stderr and "log/serverlog.1" in r.stderr,
          "server named", r)
    assert_all_gone(r.dumps())


def test_two_hosts_on_loopback_agree():
    base = port_run(6) + 1  # the master one below --start_port, 2 trainers per host above it
    dumps_dir = scratch()
    procs = []
    started = time.monotonic()
    for host in ("127.0.0.1", "127.0.0.2"):
        workdir = scratch()
        procs.append(start(["--ips=127.0.0.1,127.0.0.2", f"--host={host}", "--nproc_per_node=2",
                            f"--start_port={base}"], ["--dump", os.path.join(dumps_dir, "dumps")],
                           workdir=workdir, script=PROBE))
    for proc, workdir in procs:
        r = finish(proc, workdir, started)
        check(r.returncode == 0, "each node's launcher exits 0", r)
    from harness import read_dumps
    dumps = read_dumps(os.path.join(dumps_dir, "dumps"))
    check(sorted(d["rank"] for d in dumps) == [0, 1, 2, 3], f"ranks 0..3: {[d['rank'] for d in dumps]}")
    expected = ",".join(f"{ip}:{base + i}" for ip in ("127.0.0.1", "127.0.0.2") for i in range(2))
    for d in dumps:
        e = d["env"]
        check(e["PADDLE_TRAINER_ENDPOINTS"] == expected, f"same endpoints everywhere: {e['PADDLE_TRAINER_ENDPOINTS']}")
        check(e["PADDLE_TRAINERS_NUM"] == "4", "world of 4")
        check(e["PADDLE_CURRENT_ENDPOINT"] == expected.split(",")[d["rank"]], "own endpoint by rank")
        check(e["PADDLE_RANK_IN_NODE"] == str(d["rank"] % 2), "rank in node")


def test_two_hosts_in_network_namespaces():
    """Two launchers in two network namespaces joined by a veth pair, each finding its own
    address among --ips from its interfaces (no --host)."""
    if os.geteuid() != 0 or not shutil.which("ip"):
        raise Skip("needs root and iproute2 to create network namespaces")
    tag = f"pl{os.getpid() % 100000}"
    ns = [f"{tag}a", f"{tag}b"]
    addrs = ["198.18.0.1", "198.18.0.2"]  # RFC 2544 benchmarking range, only inside these namespaces

    def ip(*args):
        return subprocess.run(["ip", *args], capture_output=True, text=True)

    created = []
    try:
        for n in ns:
            if ip("netns", "add", n).returncode != 0:
                raise Skip(f"cannot create network namespace {n} here")
            created.append(n)
        if ip("link", "add", f"{tag}0", "type", "veth", "peer", "name", f"{tag}1").returncode != 0:
            raise Skip("cannot create a veth pair here")
        for i, n in enumerate(ns):
            steps = [["link", "set", f"{tag}{i}", "netns", n], ["-n", n, "addr", "add", f"{addrs[i]}/24", "dev", f"{tag}{i}"],
                     ["-n", n, "link", "set", f"{tag}{i}", "up"], ["-n", n, "link", "set", "lo", "up"]]
            for step in steps:
                r = ip(*step)
                if r.returncode != 0:  # in a chroot, `ip -n` cannot make / a slave mount
                    raise Skip(f"cannot configure network namespace {n} here: {r.stderr.strip()}")
        dumps_dir = scratch()
        procs = []
        started = time.monotonic()
        for n in ns:
            workdir = scratch()
            cmd = ["ip", "netns", "exec", n, LAUNCH, f"--ips={','.join(addrs)}", "--nproc_per_node=2", PROBE,
                   "--dump", os.path.join(dumps_dir, "dumps")]
            procs.append((subprocess.Popen(cmd, cwd=workdir, env=child_env(), stdout=subprocess.PIPE,
                                           stderr=subprocess.PIPE, text=True), workdir))
        for proc, workdir in procs:
            r = finish(proc, workdir, started)
            check(r.returncode == 0, "each namespace's launcher finds its node and exits 0", r)
        from harness import read_dumps
        dumps = read_dumps(os.path.join(dumps_dir, "dumps"))
        check(sorted(d["rank"] for d in dumps) == [0, 1, 2, 3], "ranks 0..3 across the two namespaces")
        for d in dumps:
            check(d["env"]["PADDLE_CURRENT_ENDPOINT"].startswith(addrs[d["rank"] // 2] + ":"),
                  "each node's trainers carry its own address")
            check(d["env"].get("GLOO_SOCKET_IFNAME") == f"{tag}{d['rank'] // 2}" and
                  d["env"].get("NCCL_SOCKET_IFNAME") == f"{tag}{d['rank'] // 2}",
                  f"each node names its own interface: {d['env'].get('GLOO_SOCKET_IFNAME')}")
    finally:
        for n in created:
            ip("netns", "del", n)


def test_concurrent_launches_get_distinct_ports():
    runs = [start(["--nproc_per_node=4"], ["--sleep", "1"]) for _ in range(6)]
    started = time.monotonic()
    endpoints = []
    for proc, workdir in runs:
        r = finish(proc, workdir, started)
        check(r.returncode == 0, "exit 0", r)
        endpoints += r.dumps()[0]["env"]["PADDLE_TRAINER_ENDPOINTS"].split(",")
    check(len(endpoints) == 24 and len(set(endpoints)) == 24, f"24 distinct endpoints: {sorted(endpoints)}")


def test_python_script_runs_with_python3_u():
    workdir = scratch()
    script = os.path.join(workdir, "train.py")
    with open(script, "w") as f:
        f.write("import os, sys\nprint('py rank', os.environ['PADDLE_TRAINER_ID'], sys.argv[1:])\n")
    r = launch(["--nproc_per_node=2"], ["--epochs", "1"], workdir=workdir, script="train.py")
    check(r.returncode == 0, "exit 0", r)
    check("py rank 1 ['--epochs', '1']" in r.read("log", "workerlog.1"), "script got its arguments")
    check("py rank 0" in r.stdout, "rank 0 echoed", r)


def test_dry_run_starts_nothing():
    r = launch(["--dry_run=json", "--server_num=1", "--worker_num=2"], ["--sleep", "60"])
    check(r.returncode == 0, "exit 0", r)
    plan = json.loads(r.stdout)
    check([p["role"] for p in plan["processes"]] == ["server", "worker", "worker"], "roles", r)
    check(plan["processes"][2]["env"]["PADDLE_TRAINER_ID"] == "1", "environment shown")
    check(plan["processes"][0]["command"][0] == PROBE, "command shown")
    check(r.dumps() == [] and not os.path.exists(r.path("log")), "nothing started, no logs")
    t = launch(["--dry_run", "--nproc_per_node=2"], [])
    check(t.returncode == 0 and "trainer" in t.stdout and "PADDLE_TRAINER_ID=1" in t.stdout, "table", t)


def test_help_and_version():
    h = subprocess.run([LAUNCH, "--help"], capture_output=True, text=True, timeout=10)
    check(h.returncode == 0 and "--nproc_per_node" in h.stdout and "--max_restarts" in h.stdout, "help")
    v = subprocess.run([LAUNCH, "--version"], capture_output=True, text=True, timeout=10)
    check(v.returncode == 0 and v.stdout.startswith("paddle-launch "), "version")


def test_bad_input_is_one_line_exit_2_and_starts_nothing():
    workdir = scratch()
    not_a_dir = os.path.join(workdir, "plainfile")
    with open(not_a_dir, "w") as f:
        f.write("x")
    not_exec = os.path.join(workdir, "notes.txt")
    with open(not_exec, "w") as f:
        f.write("x")
    listener = __import__("socket").socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    busy = listener.getsockname()[1]
    cases = [
        (["--gpus=0,x"], "--gpus: 'x'"),
        (["--gpus=1,1"], "--gpus: GPU id 1 is listed twice"),
        (["--gpus=0,1,2", "--nproc_per_node=2"], "--nproc_per_node=2 does not divide the 3 GPUs"),
        (["--ips=127.0.0.1,127.0.0.300"], "--ips: '127.0.0.300' is not an IPv4 address"),
        (["--ips=127.0.0.1,127.0.0.1"], "--ips: '127.0.0.1' is listed twice"),
        (["--ips=127.0.0.1,127.0.0.2", "--host=127.0.0.3"], "--host: 127.0.0.3 is not in --ips"),
        (["--ips=198.18.5.1,198.18.5.2"], "this node is not in --ips=198.18.5.1,198.18.5.2: its addresses are 127.0.0.1"),
        (["--server_num=2", "--servers=127.0.0.1:6170"], "--server_num=2 disagrees with --servers"),
        (["--start_port=70000"], "--start_port"),
        (["--servers=127.0.0.1:99999"], "--servers"),
        ([f"--start_port={busy}"], f"--start_port: port {busy} on 127.0.0.1 is already in use"),
        ([f"--log_dir={not_a_dir}/log"], "--log_dir: cannot create directory"),
        (["--backend=nccl"], "--backend=nccl needs GPUs"),
        (["--no_such_flag"], "--no_such_flag"),
    ]
    try:
        for args, expected in cases:
            r = launch(args, ["--sleep", "60"], workdir=workdir, timeout=20)
            lines = r.stderr.strip().splitlines()
            check(r.returncode == 2, f"{args}: exit 2", r)
            check(len(lines) == 1 and lines[0].startswith("paddle-launch: error: ") and expected in lines[0],
                  f"{args}: one line naming '{expected}'", r)
            check(r.dumps() == [] and not os.path.exists(os.path.join(workdir, "log")), f"{args}: nothing started")
    finally:
        listener.close()
    for script, expected in [("missing-script-xyz", "'missing-script-xyz': not found"),
                             ("./missing.py", "'./missing.py': no such file"),
                             (not_exec, "not an executable file")]:
        r = launch([], [], workdir=workdir, script=script, timeout=20)
        check(r.returncode == 2 and expected in r.stderr and len(r.stderr.strip().splitlines()) == 1,
              f"{script}: one line naming the script", r)


def test_log_dir_flag_and_unset_omp_respected():
    r = launch(["--nproc_per_node=2", "--log_dir=logs/run1"], ["--print", "x"], env={"OMP_NUM_THREADS": "3"})
    check(r.returncode == 0, "exit 0", r)
    check(os.path.exists(r.path("logs", "run1", "workerlog.1")) and os.path.exists(r.path("logs", "run1", "launch.log")),
          "logs in --log_dir")
    check(all(d["env"]["OMP_NUM_THREADS"] == "3" for d in r.dumps()), "the user's OMP_NUM_THREADS is kept")


if __name__ == "__main__":
    main(sys.modules[__name__])
