#!/usr/bin/env python3
"""End-to-end tests of crash-safe results: `train` (one process, no launcher) writing checkpoints
onto a full disk, killed while it checkpoints, and resuming from a damaged checkpoint. Each ends
with `latest` naming a checkpoint that loads, or with one line naming the file at fault."""

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Skip, check, child_env, main, scratch  # noqa: E402
from test_train import FASHION, SMALL_CNN, TRAIN, need, read_checkpoint  # noqa: E402

# A few steps per epoch, so that a checkpoint follows every fraction of a second.
QUICK = ["--set", "train_samples=128", "--set", "test_samples=64", "--set", "batch_size=32",
         "--set", "log_every=1000"]


class Run:
    def __init__(self, proc, stdout, stderr):
        self.returncode, self.stdout, self.stderr = proc.returncode, stdout, stderr


def run_train(workdir, output_dir, epochs, extra=(), timeout=60):
    args = [TRAIN, *QUICK, "--set", f"output_dir={output_dir}", "--set", f"epochs={epochs}", *extra]
    proc = subprocess.Popen(args, cwd=workdir, env=child_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        raise AssertionError(f"train did not finish in {timeout}s\nstderr:\n{stderr}")
    return Run(proc, stdout, stderr)


def latest_checkpoint(output_dir):
    """The checkpoint `latest` names, parsed and its checksum verified: (name, header)."""
    with open(os.path.join(output_dir, "latest")) as f:
        name = f.read().strip()
    return name, read_checkpoint(os.path.join(output_dir, name))[0]


def one_line_error(r, *parts):
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    check(r.returncode > 0, "a non-zero exit, not a signal", r)
    check(len(lines) == 1 and all(p in lines[0] for p in parts), f"one line naming {parts}", r)


def mount_tmpfs(path, size):
    if os.geteuid() != 0:
        raise Skip("mounting a small tmpfs to fill up needs root")
    os.makedirs(path)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", path], capture_output=True, text=True)
    if r.returncode != 0:
        raise Skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")


def fill_up_to(path, leave):
    """Fills the file system of PATH with one file until LEAVE bytes are free."""
    st = os.statvfs(path)
    with open(os.path.join(path, "filler"), "wb") as f:
        f.write(b"\0" * (st.f_bavail * st.f_frsize - leave))


def test_a_full_disk_keeps_the_previous_checkpoint():
    need(FASHION)
    workdir = scratch()
    out = os.path.join(workdir, "full")
    mount_tmpfs(out, "2m")
    try:
        r = run_train(workdir, out, 2, SMALL_CNN)
        check(r.returncode == 0, "the first run fits", r)
        size = os.path.getsize(os.path.join(out, "checkpoint-2.bin"))
        check(size > 3 * 4096, f"a checkpoint of several pages: {size} bytes")
        fill_up_to(out, 8192)
        r = run_train(workdir, out, 4, [*SMALL_CNN, "--set", "resume=true"])
        one_line_error(r, os.path.join(out, "checkpoint-3.bin"), "No space left on device")
        check(not [n for n in os.listdir(out) if n.endswith(".tmp")], f"no temporary left: {os.listdir(out)}")
        name, header = latest_checkpoint(out)
        check(name == "checkpoint-2.bin" and header["epoch"] == 2, f"latest still names epoch 2: {name}")
        os.remove(os.path.join(out, "filler"))
        r = run_train(workdir, out, 4, [*SMALL_CNN, "--set", "resume=true"])
        check(r.returncode == 0, "with space again the run resumes and finishes", r)
        check(latest_checkpoint(out)[1]["epoch"] == 4, "and checkpoints epoch 4")
    finally:
        subprocess.run(["umount", out])
        shutil.rmtree(workdir, ignore_errors=True)


def latest_epoch(output_dir):
    try:
        with open(os.path.join(output_dir, "latest")) as f:
            return int(f.read().strip().removeprefix("checkpoint-").removesuffix(".bin"))
    except (OSError, ValueError):
        return -1


def test_killed_while_checkpointing_latest_always_loads():
    need(FASHION)
    workdir = scratch()
    out = os.path.join(workdir, "output")
    rng = random.Random(os.getpid())
    # The full-size CNN: a checkpoint of about 1 MB written every few steps, so that a kill at a
    # random moment of the steady loop often lands inside a write.
    args = [TRAIN, *QUICK, "--set", f"output_dir={out}", "--set", "epochs=100000", "--set", "resume=true"]
    epochs = []
    for attempt in range(6):
        before = latest_epoch(out)
        proc = subprocess.Popen(args, cwd=workdir, env=child_env(), stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            deadline = time.monotonic() + 20
            while latest_epoch(out) <= before and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.01)
            check(latest_epoch(out) > before, f"attempt {attempt}: a new checkpoint within 20 s")
            time.sleep(rng.uniform(0, 0.3))
            os.killpg(proc.pid, signal.SIGKILL)
            stderr = proc.communicate(timeout=10)[1]
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        check(proc.returncode == -signal.SIGKILL, f"attempt {attempt}: killed mid-training\nstderr:\n{stderr}")
        name, header = latest_checkpoint(out)
        epochs.append(header["epoch"])
        torn = [n for n in os.listdir(out) if n.endswith(".tmp")]
        print(f"attempt {attempt}: killed after epoch {header['epoch']}; latest {name} verifies; "
              f"half-written: {torn or 'none'}")
    check(epochs == sorted(epochs) and epochs[-1] > epochs[0], f"every run resumed and went on: {epochs}")
    r = run_train(workdir, out, epochs[-1] + 1, ["--set", "resume=true"])
    check(r.returncode == 0, "the last checkpoint resumes", r)
    shutil.rmtree(workdir, ignore_errors=True)


def test_a_damaged_checkpoint_is_refused_by_name_and_the_one_before_it_resumes():
    need(FASHION)
    workdir = scratch()
    out = os.path.join(workdir, "output")
    r = run_train(workdir, out, 2, SMALL_CNN)
    check(r.returncode == 0, "the first run", r)
    newest, older = (os.path.join(out, f"checkpoint-{e}.bin") for e in (2, 1))
    with open(newest, "rb") as f:
        good = f.read()
    with open(older, "rb") as f:
        good_older = f.read()
    resume = [*SMALL_CNN, "--set", "resume=true"]
    for damaged, cause in ((good[:-100], "truncated"),
                           (good[:-50] + bytes([good[-50] ^ 0x04]) + good[-49:], "checksum mismatch"),
                           (good.replace(b'"count":', b'"count":-', 1), "not a count")):
        for path, data in ((newest, damaged), (older, good_older), (os.path.join(out, "latest"), b"checkpoint-2.bin\n")):
            with open(path, "wb") as f:
                f.write(data)
        r = run_train(workdir, out, 3, resume)
        check(r.returncode == 0, f"{cause}: the run goes back to epoch 1 and finishes", r)
        check(f"refusing a damaged checkpoint: {newest}: " in r.stdout and cause in r.stdout,
              f"{cause}: the refusal names the file and what is wrong", r)
        check(f"resumed from {out}/checkpoint-1.bin: 1 epoch(s)" in r.stdout, f"{cause}: resumed from epoch 1", r)
        check(latest_checkpoint(out)[1]["epoch"] == 3, f"{cause}: and checkpoints epoch 3 again")
    # With every checkpoint damaged, nothing loads: one line names each file and the run stops.
    for e in (1, 2, 3):
        with open(os.path.join(out, f"checkpoint-{e}.bin"), "r+b") as f:
            f.truncate(64)
    r = run_train(workdir, out, 4, resume)
    one_line_error(r, f"{out}: no whole checkpoint left to resume from", *(f"checkpoint-{e}.bin: truncated" for e in (3, 2, 1)))
    check(r.returncode == 1, f"exit 1 for damaged files: {r.returncode}", r)
    shutil.rmtree(workdir, ignore_errors=True)


def test_a_run_resumed_at_its_end_reports_the_whole_runs_figures():
    """Found by the chaos soak: a job stopped after its last checkpoint and started again trained
    nothing and reported a train loss of 0 and a history of no epochs."""
    need(FASHION)
    workdir = scratch()
    out = os.path.join(workdir, "output")
    r = run_train(workdir, out, 2, SMALL_CNN)
    check(r.returncode == 0, "the first run", r)
    with open(os.path.join(out, "metrics.json")) as f:
        whole = json.load(f)
    r = run_train(workdir, out, 2, [*SMALL_CNN, "--set", "resume=true"])
    check(r.returncode == 0, "the run resumed at its end", r)
    with open(os.path.join(out, "metrics.json")) as f:
        again = json.load(f)
    check(again["train_loss"] == whole["train_loss"] and again["test_loss"] == whole["test_loss"],
          f"the same losses: {whole['train_loss']}, {whole['test_loss']} vs {again['train_loss']}, {again['test_loss']}")
    strip = lambda h: [{k: v for k, v in e.items() if k not in ("seconds", "samples_per_sec")} for e in h]  # noqa: E731
    check(strip(again["history"]) == strip(whole["history"]) and len(whole["history"]) == 2,
          f"the same history of 2 epochs:\n{whole['history']}\n{again['history']}")
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main(sys.modules[__name__])
