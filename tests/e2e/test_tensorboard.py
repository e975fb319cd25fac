#!/usr/bin/env python3
"""End-to-end tests of train's TensorBoard event files, read by TensorBoard's own loader from
PyPI (tensorboard_venv.py) and by a strict TFRecord reader of our own. Loopback only."""

import glob
import json
import os
import signal
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import check, launch, main, pid_alive, scratch, start, wait_for  # noqa: E402
from tensorboard_venv import tensorboard_python  # noqa: E402
from test_train import HOUSING, TRAIN, fit_a_line, metrics, need, train  # noqa: E402

# Prints {tag: [[step, value], ...]} of a run directory, as TensorBoard's EventAccumulator loads it.
READ_RUN = """
import json, sys
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
run = EventAccumulator(sys.argv[1], size_guidance={"scalars": 0})
run.Reload()
print(json.dumps({tag: [[e.step, e.value] for e in run.Scalars(tag)] for tag in run.Tags()["scalars"]}))
"""

# Prints the number of events in each file given, as TensorBoard's file loader reads it.
COUNT_EVENTS = """
import json, sys
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
print(json.dumps([sum(1 for _ in EventFileLoader(path).Load()) for path in sys.argv[1:]]))
"""


def tensorboard(code, *args):
    r = subprocess.run([tensorboard_python(), "-c", code, *args], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, f"TensorBoard's reader fails:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout)


def _crc32c_table():
    table = []
    for n in range(256):
        for _ in range(8):
            n = (n >> 1) ^ (0x82F63B78 if n & 1 else 0)
        table.append(n)
    return table


CRC32C_TABLE = _crc32c_table()  # Castagnoli's, reflected


def strict_records(path):
    """The records of a TFRecord file, each CRC checked; AssertionError on a torn or trailing record."""
    def crc32c(data):
        crc = 0xFFFFFFFF
        for byte in data:
            crc = CRC32C_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
        return crc ^ 0xFFFFFFFF

    def masked(data):
        c = crc32c(data)
        return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF

    with open(path, "rb") as f:
        data = f.read()
    records, at = [], 0
    while at < len(data):
        check(at + 12 <= len(data), f"{path}: a torn record header at byte {at}")
        length_bytes = data[at:at + 8]
        (length,) = struct.unpack("<Q", length_bytes)
        check(struct.unpack("<I", data[at + 8:at + 12])[0] == masked(length_bytes), f"{path}: length CRC at {at}")
        body = data[at + 12:at + 12 + length]
        check(len(body) == length and at + 16 + length <= len(data), f"{path}: a torn record at byte {at}")
        check(struct.unpack("<I", data[at + 12 + length:at + 16 + length])[0] == masked(body), f"{path}: data CRC at {at}")
        records.append(body)
        at += 16 + length
    return records


def metrics_lines(workdir, rank):
    with open(os.path.join(workdir, "log", f"metrics.trainer.{rank}.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def test_two_ranks_leave_the_leaders_curves_equal_to_metrics_json():
    need(HOUSING)
    r = train(2, fit_a_line(["--set", "epochs=3", "--set", "log_every=5"]))
    check(r.returncode == 0, "2 ranks train", r)
    runs = os.path.join(r.workdir, "output", "tensorboard")
    check(sorted(os.listdir(runs)) == ["trainer0"], f"one run directory, the leader's: {os.listdir(runs)}")
    scalars = tensorboard(READ_RUN, os.path.join(runs, "trainer0"))
    for tag in ("train/loss", "train/learning_rate", "train/samples_per_sec", "test/loss", "test/rmse"):
        check(tag in scalars, f"TensorBoard finds {tag}: {sorted(scalars)}")
    logged = {line["step"]: line["loss"] for line in metrics_lines(r.workdir, 0)}
    steps = [step for step, _ in scalars["train/loss"]]
    check(steps == sorted(logged) and steps and all(s % 5 == 0 for s in steps),
          f"a loss every 5 steps, the steps the metrics log has: {steps} vs {sorted(logged)}")
    for step, value in scalars["train/loss"]:
        check(abs(value - logged[step]) <= 1e-6 * max(1.0, abs(logged[step])),
              f"step {step}: loss {value} in TensorBoard, {logged[step]} in the metrics log")
    history = metrics(r)["history"]
    for name in ("loss", "rmse"):
        curve = dict(scalars[f"test/{name}"])
        check(sorted(curve) == [h["epoch"] for h in history], f"test/{name} per epoch: {sorted(curve)}")
        for h in history:
            expected = h[f"test_{name}"]
            check(abs(curve[h["epoch"]] - expected) <= 1e-6 * max(1.0, abs(expected)),
                  f"epoch {h['epoch']}: test {name} {curve[h['epoch']]} in TensorBoard, {expected} in metrics.json")


def test_a_ps_run_logs_the_leading_worker_and_each_servers_table_rows():
    movielens = os.path.join(os.environ.get("SHARED_DATA", ""), "ml-100k")
    need(movielens)
    config = os.path.join(os.path.dirname(__file__), "../../configs/recommender_ps.json")
    r = launch(["--server_num=1", "--worker_num=2"], ["--config", config, "--set", f"data_dir={movielens}",
                                                       "--set", "epochs=1", "--set", "log_every=20"],
               script=TRAIN, timeout=120)
    check(r.returncode == 0, "1 server and 2 workers train", r)
    runs = os.path.join(r.workdir, "output", "tensorboard")
    check(sorted(os.listdir(runs)) == ["server0", "worker0"], f"the leading worker and the server: {os.listdir(runs)}")
    server = tensorboard(READ_RUN, os.path.join(runs, "server0"))
    rows = {tag: points for tag, points in server.items() if tag.startswith("tables/") and tag.endswith("/rows")}
    check(rows and all(points[-1][1] > 0 for points in rows.values()), f"rows per table: {sorted(server)}")
    worker = tensorboard(READ_RUN, os.path.join(runs, "worker0"))
    check("train/loss" in worker and "test/loss" in worker, f"the worker's curves: {sorted(worker)}")


def test_tensorboard_false_writes_no_event_files():
    need(HOUSING)
    r = train(1, fit_a_line(["--set", "epochs=1", "--set", "tensorboard=false"]))
    check(r.returncode == 0, "trains", r)
    check(not os.path.exists(os.path.join(r.workdir, "output", "tensorboard")), "no tensorboard directory")


def test_a_run_killed_mid_write_leaves_only_whole_files_the_reader_opens():
    need(HOUSING)
    workdir = scratch()
    # A file a second (epochs take milliseconds): the SIGKILL lands wherever it lands, and
    # whatever it cut must not be a file TensorBoard reads.
    args = fit_a_line(["--set", "epochs=100000", "--set", "log_every=20", "--set", "checkpoint=false"])
    proc, workdir = start(["--nproc_per_node=1"], args, workdir=workdir, script=TRAIN)
    run = os.path.join(workdir, "output", "tensorboard", "trainer0")
    try:
        wait_for(lambda: len(glob.glob(os.path.join(run, "*tfevents*"))) >= 3, 60, "3 event files")
        with open(os.path.join(workdir, "log", "job.json")) as f:
            trainer = json.load(f)["processes"][0]["pid"]
        time.sleep(0.5)
        os.kill(trainer, signal.SIGKILL)
        wait_for(lambda: not pid_alive(trainer), 10, "the killed trainer to be gone")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
    files = sorted(glob.glob(os.path.join(run, "*tfevents*")))
    strict = [len(strict_records(f)) for f in files]
    check(all(n >= 2 for n in strict), f"every file whole: a version event and scalars: {strict[-5:]}")
    check(tensorboard(COUNT_EVENTS, *files) == strict, "TensorBoard's loader reads every record of every file")
    scalars = tensorboard(READ_RUN, run)
    check(len(scalars.get("train/loss", [])) >= 100, f"the run's curve up to the kill: {len(scalars.get('train/loss', []))}")


if __name__ == "__main__":
    main(sys.modules[__name__])
