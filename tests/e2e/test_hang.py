#!/usr/bin/env python3
"""End-to-end tests of hang detection (--hang_timeout, --on_hang): a job whose processes are alive
but make no progress is named, with its culprit, and reported, stopped or restarted.

One node: `train` on two ranks over Gloo TCP; the test holds rank 1 with SIGSTOP, so rank 0 waits
in its allreduce. Two nodes (network namespaces where root can make them, else loopback aliases)
of two ranks each: rank 3, on node 1, is stopped, sleeps in data loading, or goes past an
allreduce without the others (PADDLE_TEST_FAULT, runtime/distributed/test_fault.h); the console
of node 0 names rank 3, its node and what it does, and the collective the others wait in."""

import json
import os
import re
import shutil
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Skip, assert_sessions_gone, check, child_env, finish, main, start, wait_for  # noqa: E402
from netns_hosts import namespace_or_loopback  # noqa: E402
from test_multinode import Node, finish_nodes  # noqa: E402

TRAIN = os.environ.get("TRAIN", "train")
HOUSING = os.path.join(os.environ.get("SHARED_DATA", ""), "uci_housing")
CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../configs/fit_a_line.json")


def need_data():
    if not os.path.exists(os.path.join(HOUSING, "housing.data")):
        raise Skip(f"no UCI housing data at {HOUSING} (SHARED_DATA)")


def start_training(flags, epochs):
    return start(["--nproc_per_node=2", "--grace_period=1", *flags],
                 ["--config", CONFIG, "--set", f"data_dir={HOUSING}", "--set", f"epochs={epochs}",
                  "--set", "batch_size=4", "--set", "checkpoint=false", "--set", "log_every=1"],
                 script=TRAIN, env={"PADDLE_COLLECTIVE_SHM": "0"})


def trainer_pids(workdir):
    """Rank 0's and rank 1's pids, from job.json."""
    def read():
        try:
            with open(os.path.join(workdir, "log", "job.json")) as f:
                processes = json.load(f)["processes"]
        except (OSError, ValueError, KeyError):
            return None
        pids = [p.get("pid") for p in processes]
        return pids if all(pids) else None
    wait_for(lambda: read() is not None, 30, "job.json with both pids")
    return read()


def wait_training(workdir):
    log = os.path.join(workdir, "log", "workerlog.1")
    wait_for(lambda: os.path.exists(log) and "loss:" in open(log, errors="replace").read(), 60, "rank 1 training")


def test_a_stopped_rank_is_named_and_the_job_stopped_with_the_hang_status():
    need_data()
    proc, workdir = start_training(["--hang_timeout=3", "--on_hang=stop"], 100000)
    wait_training(workdir)
    pids = trainer_pids(workdir)
    stopped_at = time.monotonic()
    os.kill(pids[1], signal.SIGSTOP)
    r = finish(proc, workdir, stopped_at, 60)
    elapsed = time.monotonic() - stopped_at
    check(r.returncode == 123, "the job ends with the hang status 123", r)
    check(elapsed < 3 + 5 + 10, f"within the timeout, the report and the grace: {elapsed:.1f} s", r)
    verdict = [line for line in r.stderr.splitlines() if "made no progress" in line]
    check(verdict and re.search(r"trainer 1 \(local 1, pid \d+\) is the culprit: it is stopped \(SIGSTOP\)", verdict[0]),
          "the console names trainer 1 and its state", r)
    check("trainer 0 (local 0" in verdict[0], "and says what the other rank does", r)
    for rank in (0, 1):
        check(os.path.exists(r.path("log", f"hang.{rank}.txt")), f"log/hang.{rank}.txt", r)
    rank0 = r.read("log", "hang.0.txt")
    check("native stacks:" in rank0 and ("#0" in rank0 if shutil.which("gdb") else "gdb is not on PATH" in rank0),
          f"rank 0's stacks (gdb's, or why there are none):\n{rank0[:3000]}")
    # The gradients' allreduce, the loss's, or the straggler judgement's allgather: where rank 1 stopped.
    check(re.search(r"^progress: in (allreduce|allgather) #[\d,]+ \(\d+ B\) for \d+ s, after step [\d,]+", rank0, re.M),
          f"rank 0's progress page: the collective it waits in\n{rank0[:1000]}")
    check("not taken: attaching a debugger would resume a stopped process" in r.read("log", "hang.1.txt"),
          "a stopped rank is not resumed by gdb")
    with open(r.path("log", "job.json")) as f:
        check("is the culprit" in json.load(f)["hang"], "job.json holds the verdict")
    check("not restarting: the job hung" in r.stderr or "hang:" in r.stderr, "the root cause says hang", r)
    assert_sessions_gone([proc.pid])


def test_report_names_the_hang_once_and_the_job_goes_on_when_the_rank_is_released():
    need_data()
    proc, workdir = start_training(["--hang_timeout=2"], 30)
    wait_training(workdir)
    pids = trainer_pids(workdir)
    os.kill(pids[1], signal.SIGSTOP)
    launch_log = os.path.join(workdir, "log", "launch.log")
    wait_for(lambda: "made no progress" in open(launch_log, errors="replace").read(), 20, "the hang's verdict")
    time.sleep(3)  # well past another timeout: still one verdict
    os.kill(pids[1], signal.SIGCONT)
    r = finish(proc, workdir, time.monotonic(), 120)
    check(r.returncode == 0, "released, the job finishes", r)
    check(r.stderr.count("made no progress") == 1, "one verdict for one hang", r)
    assert_sessions_gone([proc.pid])


def test_ps_async_names_a_stuck_worker_while_the_other_worker_and_the_server_go_on():
    from test_ps import CONFIG as WIDE_DEEP, SMALL, generated_criteo
    _, data = generated_criteo(20000)
    proc, workdir = start(["--server_num=1", "--worker_num=2", "--hang_timeout=2", "--grace_period=1"],
                          ["--config", WIDE_DEEP, "--set", f"data_dir={data}", "--set", "batch_size=4", "--set",
                           "epochs=1", "--set", "ps.mode=async", *SMALL, "--set", "log_every=100"],
                          script=TRAIN, env={"PADDLE_TEST_FAULT": "stall_data_loading:1:20"})
    launch_log = os.path.join(workdir, "log", "launch.log")
    try:
        wait_for(lambda: os.path.exists(launch_log) and "made no progress" in open(launch_log, errors="replace").read(),
                 60, "the hang's verdict")
        line = [l for l in open(launch_log).read().splitlines() if "made no progress" in l][0]
        # Worker 0 goes on, until it waits at its pass's end for worker 1 (a slow machine gets there first).
        check(re.search(r"worker 1 \(local 1, pid \d+\) is the culprit: it (is in data loading while the others go on|"
                        r"has not entered barrier #\d+, in which worker 0 waits; it has been in data loading)", line),
              f"the stuck worker is named, in data loading: {line}")
        page = os.path.join(workdir, "log", "progress.worker.0")
        import struct
        steps = struct.unpack("<12Q", open(page, "rb").read(96))[2]
        check(steps > 20 + 100, f"worker 0 trained on past worker 1's stall at step 20: step {steps}")
        with open(os.path.join(workdir, "log", "job.json")) as f:
            states = {(p["role"], p["rank"]): p["state"] for p in json.load(f)["processes"]}
        check(states == {("server", 0): "running", ("worker", 0): "running", ("worker", 1): "running"},
              f"nothing is stopped: {states}")
        report = os.path.join(workdir, "log", "hang.worker.1.txt")  # written beside the supervision: wait for it
        wait_for(lambda: "native stacks:" in open(report).read(), 15, "the stuck worker's file")
        check("progress: in data loading" in open(report).read(), "the stuck worker's file says where it is")
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        proc.communicate(timeout=60)
    check(open(launch_log).read().count("made no progress") == 1, "one verdict for the one stuck worker")
    assert_sessions_gone([proc.pid])


def test_long_evaluations_and_checkpoint_saves_are_no_hang():
    """Rank 0 evaluates for 4 s after each epoch (rank 1 waits at the barrier meanwhile) and both
    take 4 s over each checkpoint save, computing, with --hang_timeout=2: never a hang. And with
    the automatic timeout, as by default."""
    need_data()
    for flags in (["--hang_timeout=2"], []):
        proc, workdir = start(["--nproc_per_node=2", "--grace_period=1", *flags],
                              ["--config", CONFIG, "--set", f"data_dir={HOUSING}", "--set", "epochs=3",
                               "--set", "batch_size=4", "--set", "checkpoint=true", "--set", "log_every=10"],
                              script=TRAIN, env={"PADDLE_TEST_FAULT": "slow_phases:-1:0:4"})
        r = finish(proc, workdir, time.monotonic(), 120)
        check(r.returncode == 0, f"{flags}: the job finishes", r)
        check("made no progress" not in r.stderr, f"{flags}: no hang is called", r)
        with open(r.path("log", "job.json")) as f:
            check(json.load(f)["hang"] == "", f"{flags}: job.json holds no hang")
        with open(r.path("output", "metrics.json")) as f:
            check(len(json.load(f)["history"]) == 3, "three epochs, each evaluated")


FREEZER = "/sys/fs/cgroup/freezer"


def test_a_rank_in_uninterruptible_sleep_is_named_and_the_stop_ends_within_its_bound():
    """A cgroup v1 freezer holds rank 1 in the kernel's uninterruptible sleep (state D), where
    even SIGKILL waits until it is thawed: a real D state, as a hung disk makes."""
    need_data()
    if os.geteuid() != 0 or not os.path.isdir(FREEZER):
        raise Skip(f"needs root and the cgroup v1 freezer at {FREEZER} to hold a process in uninterruptible sleep")
    group = os.path.join(FREEZER, f"paddle-launch-test-{os.getpid()}")
    os.makedirs(group, exist_ok=True)
    proc, workdir = start_training(["--hang_timeout=3", "--on_hang=stop"], 100000)
    try:
        wait_training(workdir)
        pids = trainer_pids(workdir)
        with open(os.path.join(group, "cgroup.procs"), "w") as f:
            f.write(str(pids[1]))
        with open(os.path.join(group, "freezer.state"), "w") as f:
            f.write("FROZEN")
        frozen_at = time.monotonic()
        wait_for(lambda: open(f"/proc/{pids[1]}/status").read().find("State:\tD") >= 0, 10, "rank 1 in state D")
        out, err = proc.communicate(timeout=90)
        elapsed = time.monotonic() - frozen_at
    finally:
        with open(os.path.join(group, "freezer.state"), "w") as f:
            f.write("THAWED")
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        wait_for(lambda: not open(os.path.join(group, "cgroup.procs")).read().strip(), 10, "the frozen rank to die")
        os.rmdir(group)
    check(proc.returncode == 123, f"the job ends with the hang status 123 (got {proc.returncode})\n{err[-3000:]}")
    # The timeout, the stacks (gdb is not used on it), the grace period and the bound, with room.
    check(elapsed < 3 + 11 + 1 + 5 + 10, f"the stop ended within its bound: {elapsed:.1f} s")
    check(re.search(r"trainer 1 \(local 1, pid \d+\) is the culprit: it is in uninterruptible sleep \(D\)", err),
          f"the verdict names the rank in uninterruptible sleep\n{err[-3000:]}")
    check(re.search(r"trainer 1 \(local 1, pid \d+\) is still alive 5 s after SIGKILL, in uninterruptible sleep \(D\)",
                    err), f"the stop names it and gives up on it\n{err[-3000:]}")
    check("not taken: a debugger cannot attach to a process in uninterruptible sleep" in
          open(os.path.join(workdir, "log", "hang.1.txt")).read(), "its file says why it has no native stacks")
    assert_sessions_gone([proc.pid])


TIMEOUT = 4  # --hang_timeout of the two-node runs


def two_node_run(hosts, launch_args, train_args, env=None):
    """Node 0 and node 1, two ranks each, training fit_a_line (node 1 holds ranks 2 and 3)."""
    master = hosts.master_address()
    args = ["--config", CONFIG, "--set", f"data_dir={HOUSING}", "--set", "batch_size=4", *train_args]
    launch = ["--nproc_per_node=2", "--grace_period=1", f"--hang_timeout={TIMEOUT}", *launch_args]
    return [Node(i, master, 2, args, launch, env=env, hosts=hosts) for i in (1, 0)][::-1]


def node_pids(node):
    """This node's processes' pids by rank, from its job.json."""
    def read():
        try:
            with open(os.path.join(node.workdir, "log", "job.json")) as f:
                processes = json.load(f)["processes"]
        except (OSError, ValueError, KeyError):
            return None
        pids = {p["rank"]: p.get("pid") for p in processes}
        return pids if all(pids.values()) else None
    wait_for(lambda: read() is not None, 60, f"node {node.index}'s job.json with its pids")
    return read()


def verdict_of(node):
    lines = [line for line in node.err.splitlines() if "made no progress for" in line and "culprit" in line]
    check(len(lines) == 1, f"node {node.index} shows one verdict:\n{node.err[-4000:]}")
    return lines[0].split("] ", 1)[-1]  # without the log line's time


def stopped_by_the_hang(nodes, started, bound):
    codes = finish_nodes(nodes, bound + 60)
    elapsed = time.monotonic() - started
    for n, code in zip(nodes, codes):
        check(code == 123, f"node {n.index} ends with the hang status 123 (got {code})\n{n.err[-3000:]}")
    check(elapsed < bound, f"both nodes stopped {elapsed:.1f} s after the fault (bound {bound} s)")
    assert_sessions_gone([n.proc.pid for n in nodes])


def test_two_nodes_name_a_stopped_rank_its_node_and_stop_together():
    need_data()
    with namespace_or_loopback(2) as hosts:
        nodes = two_node_run(hosts, ["--on_hang=stop"], ["--set", "epochs=100000", "--set", "checkpoint=false"])
        pids = node_pids(nodes[1])
        wait_for(lambda: "loss:" in nodes[1].read("log", "workerlog.1"), 60, "rank 3 training")
        os.kill(pids[3], signal.SIGSTOP)
        started = time.monotonic()
        # The timeout, the verdict's round trip, the stacks (up to 10 s), the grace, the stop's round trip.
        stopped_by_the_hang(nodes, started, TIMEOUT + 5 + 10 + 1 + 5)
    line = verdict_of(nodes[0])
    check(re.search(r"trainer 3 \(node 1, local 1, pid \d+\) is the culprit: it is stopped \(SIGSTOP\)", line),
          f"node 0's console names rank 3 on node 1, stopped: {line}")
    # A rank stopped mid-collective leaves the others in it, or some of them in the next one (ring
    # steps that needed nothing more of it): "trainers 0, 1 wait in allreduce #298 (56 B), quiet 4 s;
    # trainer 2 (node 1, ...) waits in allreduce #297 (4 B)".
    others = line.split("The others: ", 1)[-1]
    waiting = re.findall(r"(trainers? [\d, -]+?|trainer \d+ \([^)]*\)) waits? in allreduce #[\d,]+", others)
    named = {int(r) for group in waiting for r in re.findall(r"\d+", re.sub(r"\(.*\)", "", group))}
    named |= {r for group in waiting for a, b in re.findall(r"(\d+)-(\d+)", group) for r in range(int(a), int(b) + 1)}
    check(named == {0, 1, 2}, f"and the ranks that wait for it, each in an allreduce: {line}")
    check(verdict_of(nodes[1]) == line, f"both nodes show the one verdict:\n{line}\n{verdict_of(nodes[1])}")
    check("the culprit, it is stopped" in nodes[1].read("log", "hang.3.txt"), "rank 3's file on node 1 marks it:\n" + nodes[1].read("log", "hang.3.txt")[:600])
    check("native stacks:" in nodes[0].read("log", "hang.0.txt"), "rank 0's file on node 0 has its stacks")


def test_two_nodes_name_a_rank_stalled_in_data_loading_and_the_collective_the_others_wait_in():
    need_data()
    with namespace_or_loopback(2) as hosts:
        nodes = two_node_run(hosts, ["--on_hang=stop"], ["--set", "epochs=100000", "--set", "checkpoint=false"],
                             env={"PADDLE_TEST_FAULT": "stall_data_loading:3:40"})
        stopped_by_the_hang(nodes, time.monotonic(), 120)
    line = verdict_of(nodes[0])
    m = re.search(r"trainer 3 \(node 1, local 1, pid \d+\) is the culprit: it has not entered (allreduce #[\d,]+), in "
                  r"which trainers 0-2 wait; it has been in data loading for (\d+) s", line)
    check(m, f"node 0's console names rank 3 on node 1, in data loading, and the allreduce the others wait in: {line}")
    check(int(m.group(2)) <= TIMEOUT + 5, f"within the timeout plus 5 s of the stall: {m.group(2)} s")
    check(f"trainers 0-2 wait in {m.group(1)}" in line, f"the others are named in that allreduce: {line}")


def test_two_nodes_name_a_rank_that_went_past_an_allreduce():
    need_data()
    with namespace_or_loopback(2) as hosts:
        nodes = two_node_run(hosts, ["--on_hang=stop"], ["--set", "epochs=100000", "--set", "checkpoint=false"],
                             env={"PADDLE_TEST_FAULT": "skip_allreduce:3:40"})
        stopped_by_the_hang(nodes, time.monotonic(), 120)
    line = verdict_of(nodes[0])
    check(re.search(r"trainer 3 \(node 1, local 1, pid \d+\) is the culprit: it is in allreduce #([\d,]+): it went past "
                    r"allreduce #([\d,]+), in which trainers 0-2 wait", line),
          f"node 0's console names rank 3, past the allreduce the others wait in: {line}")


def test_two_nodes_restart_on_a_hang_and_finish_equal_to_an_undisturbed_run():
    need_data()
    train_args = ["--set", "epochs=4", "--set", "checkpoint=true"]
    with namespace_or_loopback(2) as hosts:
        reference = two_node_run(hosts, [], train_args)
        codes = finish_nodes(reference, 120)
        check(codes == [0, 0], f"the undisturbed run succeeds: {codes}\n{reference[0].err[-2000:]}")
        nodes = two_node_run(hosts, ["--on_hang=restart", "--max_restarts=1"], train_args,
                             env={"PADDLE_TEST_FAULT": "stall_data_loading:3:40"})
        codes = finish_nodes(nodes, 180)
        assert_sessions_gone([n.proc.pid for n in nodes])
    for n, code in zip(nodes, codes):
        check(code == 0, f"node {n.index} resumes and finishes (got {code})\n{n.err[-3000:]}")
    check("trainer 3 (node 1, local 1" in verdict_of(nodes[0]), "the hang was named before the restart")
    check("restart" in nodes[0].err, f"node 0 says it restarts\n{nodes[0].err[-2000:]}")
    with open(os.path.join(reference[0].workdir, "output", "final.bin"), "rb") as f:
        want = f.read()
    with open(os.path.join(nodes[0].workdir, "output", "final.bin"), "rb") as f:
        got = f.read()
    check(got == want, "the restarted run's final parameters equal the undisturbed run's")
    for key in ("train_loss", "test_loss", "steps", "epochs"):
        a = json.loads(reference[0].read("output", "metrics.json"))[key]
        b = json.loads(nodes[0].read("output", "metrics.json"))[key]
        check(a == b, f"{key}: {b} equals the undisturbed run's {a}")


if __name__ == "__main__":
    main(sys.modules[__name__])
