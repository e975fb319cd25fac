#!/usr/bin/env python3
"""End-to-end tests of the live metrics (runtime/train/run/metrics_log.h), LOG_DIR/job.json
(launcher/job/job_state.h) and `paddle-launch status` (launcher/job/status_command.h)."""

import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import check, child_env, launch, main, scratch, wait_for  # noqa: E402

LAUNCH = os.environ.get("PADDLE_LAUNCH", "paddle-launch")
TRAIN = os.environ.get("TRAIN", "train")

# A script that writes the metrics format itself (docs/launcher.md: any program may), a line every 0.1 s,
# until $STOP_FILE appears.
WRITER = """
import json, os, time
path, stop = os.environ["PADDLE_METRICS_FILE"], os.environ["STOP_FILE"]
step = 0
while not os.path.exists(stop):
    step += 1
    with open(path, "a") as f:
        f.write(json.dumps({"time": time.time(), "step": step, "epoch": 0, "loss": 1.0 / step, "lr": 0.1,
                            "samples_per_sec": 100.0 + int(os.environ["PADDLE_TRAINER_ID"]),
                            "comm_seconds_per_step": 0.001}) + "\\n")
    time.sleep(0.1)
"""


def status(log_dir):
    r = subprocess.run([LAUNCH, "status", log_dir], capture_output=True, text=True, timeout=20)
    rows = {}
    for line in r.stdout.splitlines():
        m = re.match(r"(trainer|worker|server) (\d+)\s+(\S+)\s+(-?\d+)\s+(\S+)\s+(\S+)\s+(\S+)", line)
        if m:
            rows[f"{m.group(1)} {m.group(2)}"] = {"state": m.group(3), "pid": int(m.group(4)), "step": m.group(5),
                                                 "loss": m.group(6), "samples": m.group(7)}
    return r, rows


def test_status_follows_a_running_job_and_shows_a_finished_one():
    workdir = scratch()
    stop = os.path.join(workdir, "stop")
    proc = subprocess.Popen([LAUNCH, "--nproc_per_node=2", "python3", "-c", WRITER], cwd=workdir,
                            env=child_env({"STOP_FILE": stop}), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    log_dir = os.path.join(workdir, "log")
    try:
        def both_stepping():
            _, rows = status(log_dir)
            return len(rows) == 2 and all(row["step"] != "-" for row in rows.values())
        wait_for(both_stepping, 20, "both ranks' first metrics lines")
        r, first = status(log_dir)
        check(r.returncode == 0 and r.stdout.startswith("job: running (collective, node 0 of 1)"), r.stdout)
        check(set(first) == {"trainer 0", "trainer 1"}, f"a row per rank: {r.stdout}")
        for name, row in first.items():
            check(row["state"] == "running" and row["pid"] > 0 and int(row["step"]) > 0, f"{name} runs: {row}")
        check(first["trainer 1"]["samples"] == "101", f"trainer 1's own figures: {first['trainer 1']}")
        time.sleep(0.6)
        _, second = status(log_dir)
        check(all(int(second[n]["step"]) > int(first[n]["step"]) for n in first),
              f"steps go up between two looks: {first} then {second}")
        with open(os.path.join(log_dir, "job.json")) as f:
            job = json.load(f)
        check(job["state"] == "running" and job["launcher_pid"] == proc.pid, f"job.json: {job}")
    finally:
        open(stop, "w").close()
        code = proc.wait(timeout=30)
    check(code == 0, f"the job ends with 0, not {code}")
    r, done = status(log_dir)
    check(r.stdout.startswith("job: succeeded"), f"the finished job: {r.stdout}")
    check(all(row["state"] == "succeeded" for row in done.values()), f"every process succeeded: {r.stdout}")


def test_train_writes_its_metrics_and_a_failed_job_says_so():
    r = launch(["--nproc_per_node=2"], ["--set", "epochs=2", "--set", "train_samples=1024", "--set", "test_samples=128",
                                        "--set", "log_every=4", "--set", "batch_size=32", "--set", "checkpoint=false"],
               script=TRAIN, timeout=120)
    check(r.returncode == 0, "train succeeds", r)
    for rank in range(2):
        with open(r.path("log", f"metrics.trainer.{rank}.jsonl")) as f:
            lines = [json.loads(line) for line in f]
        check([m["step"] for m in lines] == list(range(4, 33, 4)), f"rank {rank}: a line every 4 steps: {lines}")
        check(all(m["samples_per_sec"] > 0 and m["lr"] > 0 and m["comm_seconds_per_step"] >= 0 and m["loss"] > 0
                  for m in lines), f"rank {rank}: every figure: {lines[0]}")
    with open(r.path("output", "metrics.json")) as f:
        history = json.load(f)["history"]
    check([h["epoch"] for h in history] == [0, 1] and all("test_acc" in h and h["samples_per_sec"] > 0 for h in history),
          f"metrics.json's history has both epochs: {history}")

    r = launch(["--nproc_per_node=2"], ["--exit", "5", "--fail-rank", "1", "--sleep", "30"])
    s, rows = status(r.path("log"))
    check(s.stdout.startswith("job: failed"), f"a failed job: {s.stdout}")
    check(rows["trainer 1"]["state"] == "failed" and rows["trainer 0"]["state"] == "stopped", f"who failed: {s.stdout}")
    check("root cause:" in s.stdout and "trainer 1" in s.stdout.split("root cause:")[1], s.stdout)

    s = subprocess.run([LAUNCH, "status", os.path.join(scratch(), "nowhere")], capture_output=True, text=True)
    check(s.returncode == 2 and s.stderr.count("\n") == 1 and "job.json not found" in s.stderr, s.stderr)


def test_plot_metrics_draws_a_run_as_a_png():
    import shutil
    if not shutil.which("gnuplot"):
        from harness import Skip
        raise Skip("no gnuplot (Debian's gnuplot-nox)")
    r = launch(["--nproc_per_node=2"], ["--set", "epochs=2", "--set", "train_samples=1024", "--set", "test_samples=128",
                                        "--set", "log_every=4", "--set", "batch_size=32", "--set", "checkpoint=false"],
               script=TRAIN, timeout=120)
    check(r.returncode == 0, "train succeeds", r)
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "plot_metrics.sh")
    out = os.path.join(r.workdir, "curves.png")
    p = subprocess.run(["bash", script, r.workdir, out], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0 and p.stdout.strip() == out, f"plot_metrics.sh names what it wrote: {p.stdout} {p.stderr}")
    with open(out, "rb") as f:
        png = f.read()
    check(png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20000, f"a PNG of {len(png)} bytes")
    p = subprocess.run(["bash", script, scratch()], capture_output=True, text=True, timeout=60)
    check(p.returncode == 2 and "has neither output/metrics.json nor log/metrics" in p.stderr, p.stderr)


if __name__ == "__main__":
    main(sys.modules[__name__])
