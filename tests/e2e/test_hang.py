#!/usr/bin/env python3
"""End-to-end tests of hang detection (--hang_timeout, --on_hang): a job whose processes are alive
but make no progress (no CPU time, no output) is named, with its culprit, and reported, stopped
or restarted. The job is `train` on two ranks over Gloo TCP; the test holds rank 1 with SIGSTOP,
so rank 0 waits in its allreduce."""

import json
import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Skip, assert_sessions_gone, check, child_env, finish, main, start, wait_for  # noqa: E402

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
    check("native stacks:" in rank0 and ("#0" in rank0 or "no native stacks" in rank0),
          f"rank 0's stacks (or why there are none):\n{rank0[:3000]}")
    check("not taken: attaching gdb would resume a stopped process" in r.read("log", "hang.1.txt"),
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


if __name__ == "__main__":
    main(sys.modules[__name__])
