#!/usr/bin/env python3
"""End-to-end tests of straggler detection (--straggler_factor; runtime/train/run/straggler_window.h,
launcher/supervise/straggler_watch.h): a rank of `train` slowed in its compute (the test stops it
30 ms each time its page shows it computing, then lets it run 10 ms) is flagged within 50 steps on its node's console
and the master's, in job.json and in /metrics, and cleared once it is released; an even job of
2,000 steps flags none."""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Skip, assert_sessions_gone, check, child_env, main, scratch, wait_for  # noqa: E402
from netns_hosts import LoopbackHosts  # noqa: E402
from test_multinode import start_nodes  # noqa: E402

LAUNCH = os.environ.get("PADDLE_LAUNCH", "paddle-launch")
TRAIN = os.environ.get("TRAIN", "train")
CONFIGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../configs")
FASHION = "/usr/share/datasets/fashion-mnist"
COMPUTING = 2  # common/progress_page.h's Phase::kCompute, in word 3's low half


def page_words(workdir, rank):
    """Trainer `rank`'s progress page (common/progress_page.h): its twelve words."""
    import struct
    with open(os.path.join(workdir, "log", f"progress.trainer.{rank}"), "rb") as f:
        data = f.read(96)
    return struct.unpack("<12Q", data) if len(data) == 96 else None


def steps_of(workdir, rank):
    try:
        words = page_words(workdir, rank)
    except OSError:
        return 0
    return words[2] if words else 0


def metrics(url):
    with urllib.request.urlopen(url + "metrics", timeout=5) as r:
        return r.read().decode()


def sample(text, name, rank):
    m = re.search(rf'^{name}{{[^}}]*rank="{rank}"[^}}]*}} (\S+)$', text, re.M)
    return float(m.group(1)) if m else None


def test_a_rank_held_to_a_quarter_of_the_time_is_flagged_within_50_steps_and_cleared_on_every_console():
    """Two nodes (loopback aliases) x 2 ranks; trainer 3, node 1's second, is slowed in its compute. Node 1 flags it on its console, in job.json and in /metrics; the master's node shows
    the same line; both say when it recovers."""
    if not os.path.isdir(FASHION):
        raise Skip(f"no Fashion-MNIST at {FASHION} (Debian's package; scripts/setup.sh installs it)")
    args = ["--config", os.path.join(CONFIGS, "fashion_mnist.json"), "--set", f"data_dir={FASHION}", "--set",
            "train_samples=60000", "--set", "test_samples=100", "--set", "epochs=1", "--set", "batch_size=16", "--set",
            "log_every=100000", "--set", "checkpoint=false"]
    nodes = start_nodes(2, args, ["--nproc_per_node=2", "--dashboard", "--grace_period=1"], LoopbackHosts(2))
    master_log, launch_log = (os.path.join(n.workdir, "log", "launch.log") for n in nodes)
    released, holding = threading.Event(), threading.Thread()
    node1 = nodes[1].workdir
    try:
        wait_for(lambda: steps_of(node1, 3) >= 40, 120, "rank 3 training past its warm-up (25 steps)")
        url = re.findall(r"dashboard: (http://127\.0\.0\.1:\d+/)", open(launch_log).read())[0]
        with open(os.path.join(node1, "log", "job.json")) as f:
            pid = json.load(f)["processes"][1]["pid"]
        onset = steps_of(node1, 3)
        check("straggler:" not in open(launch_log).read() + open(master_log).read(), "no straggler before the slowdown")

        def hold():  # until released: stopped 30 ms each time it is seen computing, then let run 10 ms
            while not released.is_set():
                words = page_words(node1, 3)
                if not words or words[3] & 0xFFFFFFFF != COMPUTING:
                    time.sleep(0.0005)
                    continue
                os.kill(pid, signal.SIGSTOP)
                time.sleep(0.03)
                os.kill(pid, signal.SIGCONT)
                time.sleep(0.01)

        holding = threading.Thread(target=hold)
        holding.start()
        wait_for(lambda: "straggler: trainer 3" in open(launch_log).read(), 30, "the launcher to name the straggler")
        line = [l for l in open(launch_log).read().splitlines() if "straggler: trainer 3" in l][0]
        m = re.search(rf"(straggler: trainer 3 \(node 1, local 1, pid {pid}\) is ([\d.]+)x the job's median busy time per "
                      r"step, since step (\d+).*)", line)
        check(m, f"the console names the rank, its node, its factor and the step: {line}")
        check(float(m.group(2)) >= 2.0, f"a factor past --straggler_factor's 2: {m.group(2)}")
        check(0 < int(m.group(3)) - onset <= 50, f"flagged within 50 steps of the slowdown: step {onset} to {m.group(3)}")
        wait_for(lambda: m.group(1) in open(master_log).read(), 10, "the master's node to show node 1's line")
        with open(os.path.join(node1, "log", "job.json")) as f:
            check(json.load(f)["processes"][1]["straggler"] >= 2.0, "job.json marks it")
        text = metrics(url)
        check(sample(text, "paddle_straggler", 3) == 1 and sample(text, "paddle_straggler", 2) == 0,
              f"/metrics: paddle_straggler 1 for rank 3 only\n{text}")
        check((sample(text, "paddle_step_seconds", 3) or 0) > 0, "/metrics: paddle_step_seconds per rank")
        check(sample(text, "paddle_seconds_since_progress", 2) is not None, "/metrics: paddle_seconds_since_progress")
        others = [l for n in (launch_log, master_log) for l in open(n).read().splitlines()
                  if "straggler: trainer" in l and "trainer 3" not in l]
        check(not others, f"no other rank is flagged: {others}")
        # Released, it recovers, on both consoles.
        released.set()
        holding.join()
        for log in (launch_log, master_log):
            wait_for(lambda: "straggler: trainer 3 (node 1, local 1, pid" in open(log).read() and
                     "has recovered" in open(log).read(), 30, "the straggler's recovery")
        with open(os.path.join(node1, "log", "job.json")) as f:
            check(json.load(f)["processes"][1]["straggler"] is None, "job.json clears it")
        check(sample(metrics(url), "paddle_straggler", 3) == 0, "/metrics clears it")
        check("straggler: this rank's busy time per step" in open(os.path.join(node1, "log", "workerlog.1")).read(),
              "rank 3's own log says when it became one")
    finally:
        released.set()
        if holding.is_alive():
            holding.join()
        for n in nodes:
            try:
                os.kill(n.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for n in nodes:
            n.proc.communicate(timeout=60)
    assert_sessions_gone([n.proc.pid for n in nodes])


def test_an_even_job_of_2000_steps_flags_no_straggler():
    """Four ranks of the CNN on this machine's cores, 2,000 steps (4 epochs of 500)."""
    if not os.path.isdir(FASHION):
        raise Skip(f"no Fashion-MNIST at {FASHION} (Debian's package; scripts/setup.sh installs it)")
    workdir = scratch()
    r = subprocess.run(
        [LAUNCH, "--nproc_per_node=4", TRAIN, "--config", os.path.join(CONFIGS, "fashion_mnist.json"), "--set",
         f"data_dir={FASHION}", "--set", "train_samples=32000", "--set", "test_samples=100", "--set", "epochs=4",
         "--set", "batch_size=16", "--set", "log_every=100000", "--set", "checkpoint=false"],
        cwd=workdir, env=child_env(), capture_output=True, text=True, timeout=180)
    check(r.returncode == 0, f"the job succeeds\n{r.stderr[-2000:]}")
    for rank in range(4):
        words = page_words(workdir, rank)
        check(words[2] == 2000, f"rank {rank} trained 2,000 steps: {words[2]}")
        import struct
        ratio = struct.unpack("<d", struct.pack("<Q", words[10]))[0]
        check(0 < ratio < 2, f"rank {rank} was measured against the job's median, and is even: {ratio:.2f}")
        log = open(os.path.join(workdir, "log", f"workerlog.{rank}")).read()
        check("straggler:" not in log, f"rank {rank} never judged itself a straggler")
    check("straggler" not in r.stderr, "the launcher names no straggler")


if __name__ == "__main__":
    main(sys.modules[__name__])
