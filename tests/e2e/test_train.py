#!/usr/bin/env python3
"""End-to-end tests of the `train` program through paddle-launch: learning, exactness of data
parallelism, checkpoints and restarts, and failures. Loopback only."""

import glob
import json
import os
import re
import signal
import struct
import subprocess
import sys
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Skip, check, child_env, finish, launch, main, scratch, start, wait_for  # noqa: E402

TRAIN = os.environ.get("TRAIN", "train")
SHARED = os.environ.get("SHARED_DATA", "")
HOUSING = os.path.join(SHARED, "uci_housing")
FASHION = "/usr/share/datasets/fashion-mnist"
SMALL_CNN = ["--set", "cnn.channels=[4,8]", "--set", "cnn.hidden=16"]


def need(path):
    if not os.path.exists(path):
        raise Skip(f"no data at {path}")


def train(nproc, args, timeout=120, launch_args=(), **kw):
    return launch([f"--nproc_per_node={nproc}", *launch_args], args, script=TRAIN, timeout=timeout, **kw)


def metrics(r):
    with open(r.path("output", "metrics.json")) as f:
        return json.load(f)


def read_checkpoint(path):
    """(header, {name: [floats]}) from the checkpoint format documented in runtime/nn/checkpoint.h;
    a version-2 file's CRC-32 must match and every byte must belong to a tensor."""
    with open(path, "rb") as f:
        data = f.read()
    magic, header_line, values = data.split(b"\n", 2)
    check(magic in (b"PADDLE-LAUNCH-CHECKPOINT 1", b"PADDLE-LAUNCH-CHECKPOINT 2"), f"{path}: magic {magic!r}")
    if magic.endswith(b"2"):
        values, stored = values[:-4], struct.unpack("<I", data[-4:])[0]
        check(zlib.crc32(data[:-4]) == stored, f"{path}: checksum {stored:08x} matches the bytes")
    header = json.loads(header_line)
    tensors, offset = {}, 0
    for t in header["tensors"]:
        tensors[t["name"]] = struct.unpack_from(f"<{t['count']}f", values, offset)
        offset += 4 * t["count"]
    check(offset == len(values), f"{path}: the header's tensors fill the file")
    return header, tensors


def max_relative_difference(a, b):
    """The largest ||a - b|| / ||a|| over the model's tensors (optimizer state left out)."""
    worst = 0.0
    for name, values in a.items():
        if "/" in name:
            continue
        diff = sum((x - y) ** 2 for x, y in zip(values, b[name])) ** 0.5
        norm = sum(x * x for x in values) ** 0.5
        worst = max(worst, diff / max(norm, 1e-12))
    return worst


def fit_a_line(extra):
    return ["--config", os.path.join(os.path.dirname(__file__), "../../configs/fit_a_line.json"),
            "--set", f"data_dir={HOUSING}", *extra]


def test_fit_a_line_learns_on_two_ranks():
    need(HOUSING)
    r = train(2, fit_a_line(["--set", "batch_size=10"]))
    check(r.returncode == 0, "exit 0", r)
    m = metrics(r)
    check(m["world_size"] == 2 and m["epochs"] == 100 and m["model"] == "fit_a_line", f"metrics {m}")
    check(m["test_loss"] < 30, f"test loss after 100 epochs below 30: {m['test_loss']}")
    check(m["steps"] == 100 * (404 // 20), f"steps {m['steps']}")
    for key in ("train_loss", "samples_per_sec", "wall_seconds"):
        check(key in m, f"metrics has {key}")
    check("step 100, loss: [" in r.read("log", "workerlog.0"), "Paddle's fit_a_line log lines")
    check(os.path.exists(r.path("output", "checkpoint-100.bin")), "a checkpoint per epoch")


def _exactness(args, nproc_batches):
    finals = []
    for nproc, batch in nproc_batches:
        r = train(nproc, args + ["--set", f"batch_size={batch}", "--set", "max_steps=20"])
        check(r.returncode == 0, f"{nproc} rank(s) exit 0", r)
        header, tensors = read_checkpoint(r.path("output", "final.bin"))
        check(header["step"] == 20, f"20 steps: {header}")
        finals.append(tensors)
    diff = max_relative_difference(finals[0], finals[1])
    check(diff <= 1e-5, f"2 ranks x B and 1 rank x 2B agree: max relative difference {diff:.2e}")
    print(f"max relative parameter difference after 20 steps: {diff:.2e}")


def test_two_ranks_equal_one_rank_with_double_batch_fit_a_line():
    need(HOUSING)
    _exactness(fit_a_line(["--set", "shuffle=true"]), [(1, 20), (2, 10)])


def test_two_ranks_equal_one_rank_with_double_batch_cnn():
    need(FASHION)
    args = SMALL_CNN + ["--set", "train_samples=640", "--set", "test_samples=100", "--set", "optimizer.type=sgd",
                        "--set", "optimizer.lr=0.05"]
    _exactness(args, [(1, 16), (2, 8)])


def test_fashion_mnist_subset_learns_on_two_ranks():
    need(FASHION)
    r = train(2, ["--set", "train_samples=6400", "--set", "test_samples=1000", "--set", "epochs=1",
                  "--set", "log_every=20"], timeout=300)
    check(r.returncode == 0, "exit 0", r)
    m = metrics(r)
    check(m["test_acc"] > 0.7, f"test accuracy after 1 epoch of 6400 samples: {m['test_acc']}")
    log = r.read("log", "workerlog.0")
    check("[Epoch 0, batch 20] loss: " in log and "acc1: " in log and "acc5: " in log, "Paddle's log lines")
    check("fused 8 gradient tensors into 1 bucket(s)" in log, "bucket fusion reported")
    check("[Epoch 0, batch 20]" in r.stdout, "rank 0's output echoed by the launcher", r)


def test_shrunk_resnet_trains_on_two_ranks():
    need(FASHION)
    config = os.path.join(os.path.dirname(__file__), "../../configs/resnet.json")
    r = train(2, ["--config", config, "--set", "resnet.depth=14", "--set", "resnet.width=8",
                  "--set", "image_shape=[3,32,32]", "--set", "train_samples=256", "--set", "test_samples=64",
                  "--set", "batch_size=8", "--set", "log_every=4"], timeout=300)
    check(r.returncode == 0, "exit 0", r)
    m = metrics(r)
    check(m["model"] == "resnet" and m["steps"] == 16 and m["world_size"] == 2, f"metrics {m}")
    check("Residual(" in r.read("log", "workerlog.0"), "the model is a ResNet")


def test_nan_loss_stops_the_job():
    need(HOUSING)
    r = train(2, fit_a_line(["--set", "optimizer.lr=1e12", "--set", "epochs=5"]))
    check(r.returncode == 3, "the trainer's NaN exit status", r)
    # Both ranks see the same averaged loss; whichever exits first is reported with its last lines.
    check("got NaN loss, training failed." in r.stderr, "Paddle's NaN message in the failure report", r)


def _trainer_pid(launcher_pid, rank):
    for environ in glob.glob("/proc/[0-9]*/environ"):
        pid = int(environ.split("/")[2])
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
            if int(stat[stat.rfind(")") + 2:].split()[1]) != launcher_pid:
                continue
            with open(environ, "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if f"PADDLE_TRAINER_ID={rank}".encode() in env:
            return pid
    return None


def test_restart_resumes_from_checkpoint_with_the_same_result():
    need(FASHION)
    args = SMALL_CNN + ["--set", "train_samples=2560", "--set", "test_samples=500", "--set", "epochs=4",
                        "--set", "batch_size=16"]
    clean = train(2, args, timeout=300)
    check(clean.returncode == 0, "uninterrupted run", clean)
    started = time.monotonic()
    proc, workdir = start(["--nproc_per_node=2", "--max_restarts=1", "--grace_period=2"], args, script=TRAIN)
    wait_for(lambda: os.path.exists(os.path.join(workdir, "output", "checkpoint-1.bin")), 120, "the first checkpoint")
    victim = wait_for(lambda: _trainer_pid(proc.pid, 1), 10, "rank 1's pid")
    os.kill(victim, signal.SIGKILL)
    r = finish(proc, workdir, started, timeout=300)
    check(r.returncode == 0, "the restarted attempt finishes", r)
    check("restart 1 of 1" in r.stderr, "the launcher restarted the job", r)
    check("resumed from output/latest" in r.read("log", "workerlog.0"), "the second attempt resumed")
    a, b = metrics(clean), metrics(r)
    gens = b["generations"]
    check([(g["generation"], g["world_size"]) for g in gens] == [(0, 2), (1, 2)] and gens[0]["from_epoch"] == 0
          and gens[1]["from_epoch"] >= 1, f"the restart is the run's second generation: {gens}")
    for key in ("test_loss", "test_acc", "train_loss", "steps", "epochs"):
        check(abs(a[key] - b[key]) <= 1e-6, f"{key}: uninterrupted {a[key]} vs restarted {b[key]}")


def _three_ranks_then_two(workdir, args, batch):
    """Trains 4 epochs on 3 ranks with `batch` per rank, then resumes 3 more on 2 ranks in the
    same directory, as the next generation of an elastic job that lost a node would."""
    per_rank = ["--set", f"batch_size={batch}"]
    first = train(3, args + per_rank + ["--set", "epochs=4"], workdir=workdir)
    check(first.returncode == 0, "3 ranks exit 0", first)
    m1 = metrics(first)
    second = train(2, args + per_rank + ["--set", "epochs=7", "--set", "resume=true"], workdir=workdir)
    check(second.returncode == 0, "2 ranks resuming exit 0", second)
    return m1, metrics(second), second


def test_resume_on_fewer_ranks_follows_the_sharding_rule_and_records_generations():
    need(HOUSING)
    # Momentum has optimizer state to carry over; 404 training samples.
    args = fit_a_line(["--set", "optimizer.type=momentum", "--set", "optimizer.momentum=0.9",
                       "--set", "log_every=1"])
    m1, m2, r = _three_ranks_then_two(scratch(), args, 20)
    per_epoch_3, per_epoch_2 = 404 // (20 * 3), 404 // (20 * 2)  # 6 and 10 steps
    check(m1["generations"] == [{"generation": 0, "world_size": 3, "from_epoch": 0, "from_step": 0}],
          f"a fresh run has one generation: {m1['generations']}")
    check(m1["epochs"] == 4 and m1["steps"] == 4 * per_epoch_3, f"first run: {m1}")
    check(m2["generations"] == [{"generation": 0, "world_size": 3, "from_epoch": 0, "from_step": 0},
                                {"generation": 0, "world_size": 2, "from_epoch": m1["epochs"],
                                 "from_step": m1["steps"]}], f"generations 3 then 2: {m2['generations']}")
    check(m2["world_size"] == 2 and m2["epochs"] == 7, f"second run: {m2}")
    check(m2["steps"] == m1["steps"] + 3 * per_epoch_2, f"global batch 20 x 2 ranks: {m2['steps']} steps")
    log = r.read("log", "workerlog.0")
    check(f"resumed from output/latest: 4 epoch(s), {m1['steps']} step(s) done" in log, "resumed the checkpoint")
    check(f"{per_epoch_2} steps per epoch" in log and f"step {m1['steps'] + 1}, loss: [" in log,
          "the step count continues at the new world size")
    check(f"[Epoch 4] test_loss:" in log and "[Epoch 3] test_loss:" not in log, "epochs continue at 4")
    check(all(v == v and abs(v) < 1e6 for v in (m2["train_loss"], m2["test_loss"])), f"finite losses: {m2}")
    check(m2["test_loss"] < m1["test_loss"], f"learning went on: test loss {m1['test_loss']} -> {m2['test_loss']}")
    with open(r.path("output", "generations.json")) as f:
        check(json.load(f) == m2["generations"], "rank 0 keeps the history beside its checkpoints")


def test_three_ranks_then_two_equal_one_rank_with_those_global_batches():
    need(HOUSING)
    args = fit_a_line(["--set", "optimizer.type=momentum", "--set", "optimizer.momentum=0.9",
                       "--set", "lr_schedule.type=cosine"])
    elastic = _three_ranks_then_two(scratch(), args, 10)[2]
    one = scratch()
    for batch, epochs, extra in ((30, 4, []), (20, 7, ["--set", "resume=true"])):
        r = train(1, args + ["--set", f"batch_size={batch}", "--set", f"epochs={epochs}", *extra], workdir=one)
        check(r.returncode == 0, f"1 rank x {batch} exits 0", r)
    a = read_checkpoint(elastic.path("output", "final.bin"))
    b = read_checkpoint(os.path.join(one, "output", "final.bin"))
    check(a[0]["step"] == b[0]["step"] == 4 * 13 + 3 * 20, f"steps {a[0]['step']} and {b[0]['step']}")
    diff = max_relative_difference(a[1], b[1])
    check(diff <= 1e-5, f"3 then 2 ranks x 10 and 1 rank x 30 then x 20 agree: max relative difference {diff:.2e}")
    print(f"max relative parameter difference after the change of world size: {diff:.2e}")


def test_bad_config_and_data_are_named():
    r = subprocess.run([TRAIN, "--set", "optimizer.rate=1"], capture_output=True, text=True, timeout=30)
    check(r.returncode == 2 and "optimizer.rate: unknown key" in r.stderr, r.stderr)
    workdir = scratch()
    r = subprocess.run([TRAIN, "--set", f"data_dir={workdir}"], capture_output=True, text=True, timeout=30)
    check(r.returncode == 1 and f"{workdir}/train-images-idx3-ubyte.gz: cannot open" in r.stderr, r.stderr)


def test_help_config_lists_every_key_with_its_default_and_range():
    r = subprocess.run([TRAIN, "--help-config"], capture_output=True, text=True, timeout=30)
    check(r.returncode == 0 and r.stderr == "", r)
    listed = re.findall(r"^(\S+)  \((.+)\)$", r.stdout, re.MULTILINE)
    names = [name for name, _ in listed]
    for key in ["model", "batch_size", "optimizer.lr", "ps.online.days", "amp.decr_ratio", "ps.sparse_rule.type"]:
        check(key in names, f"--help-config lists {key}: {names}")
    check(len(names) == len(set(names)) and len(names) > 80, f"every key once: {len(names)}")
    shown = dict(listed)
    check(shown["batch_size"] == "integer, default 64, >= 1", shown["batch_size"])
    check(shown["seed"] == "integer, default 2024, [0, 4294967295]", shown["seed"])
    check(shown["ps.mode"] == 'choice, default "sync", sync|async|geo', shown["ps.mode"])
    # The table is what the parser checks: a key it lists is accepted, its bound refused.
    r = subprocess.run([TRAIN, "--set", "seed=4294967296"], capture_output=True, text=True, timeout=30)
    check(r.returncode == 2 and "seed: 4294967296 is not in [0, 4294967295]" in r.stderr, r.stderr)


def _gpu_count():
    try:
        return len(os.listdir("/proc/driver/nvidia/gpus"))
    except OSError:
        return 0


def test_one_gpu_trains_what_the_cpu_trains():
    need(FASHION)
    if _gpu_count() == 0:
        raise Skip("no GPU")
    args = SMALL_CNN + ["--set", "train_samples=640", "--set", "test_samples=100", "--set", "optimizer.type=sgd",
                        "--set", "optimizer.lr=0.05", "--set", "batch_size=16", "--set", "max_steps=20"]
    finals = {}
    for device in ("cpu", "auto"):
        r = launch(["--gpus=0"], args + ["--set", f"device={device}"], script=TRAIN, timeout=120)
        check(r.returncode == 0, f"device={device} exits 0", r)
        log = r.read("log", "workerlog.0")
        expected = "device: cpu" if device == "cpu" else "device: gpu:0 (strict FP32)"
        check(expected in log, f"{expected!r} in the log", r)
        check(metrics(r)["device"] == expected.split()[1], f"metrics name the device: {metrics(r)}")
        finals[device] = read_checkpoint(r.path("output", "final.bin"))[1]
    diff = max_relative_difference(finals["cpu"], finals["auto"])
    check(diff <= 1e-4, f"CPU and GPU agree after 20 steps: max relative difference {diff:.2e}")


def test_a_gpu_job_without_a_gpu_is_refused_by_name():
    if _gpu_count() > 0:
        raise Skip("this machine has a GPU")
    env = child_env({"PADDLE_DISTRI_BACKEND": "nccl"})
    r = subprocess.run([TRAIN, "--set", "max_steps=1"], capture_output=True, text=True, timeout=60, env=env)
    check(r.returncode != 0, "non-zero exit", r)
    check("gpu:0 requested, but" in r.stderr, f"the device is named: {r.stderr}")
    r = subprocess.run([TRAIN, "--set", "device=tpu"], capture_output=True, text=True, timeout=60)
    check(r.returncode != 0 and "device 'tpu' is not auto or cpu" in r.stderr, r.stderr)


MOVIELENS = os.path.join(SHARED, "ml-100k")


def recommender(extra):
    return ["--config", os.path.join(os.path.dirname(__file__), "../../configs/recommender.json"),
            "--set", f"data_dir={MOVIELENS}", *extra]


def test_recommender_learns_movielens_on_two_ranks():
    need(MOVIELENS)
    r = train(2, recommender([]))
    check(r.returncode == 0, "exit 0", r)
    m = metrics(r)
    check(m["model"] == "recommender" and m["dataset"] == "movielens" and m["world_size"] == 2, f"metrics {m}")
    check(m["epochs"] <= 10, f"at most 10 epochs: {m['epochs']}")
    check(1.05 < m["baseline_rmse"] < 1.2, f"the global-mean baseline RMSE is about 1.12: {m['baseline_rmse']}")
    check(abs(m["test_rmse"] ** 2 - m["test_loss"]) <= 1e-6 * m["test_loss"], f"RMSE is the root of the MSE: {m}")
    check(m["test_rmse"] <= 0.95, f"test RMSE after {m['epochs']} epochs at most 0.95: {m['test_rmse']}")
    check(m["test_rmse"] < m["baseline_rmse"] - 0.1, f"test RMSE {m['test_rmse']} well below the baseline {m['baseline_rmse']}")
    log = r.read("log", "workerlog.0")
    check("Recommender(users 944, movies 1683" in log, "the model is the recommender over ml-100k")
    check("train samples: 90000, test samples: 10000" in log, "the 90/10 split of the 100,000 ratings")
    check("test_rmse: " in log, "per-epoch test RMSE logged")


def test_two_ranks_equal_one_rank_with_double_batch_recommender():
    need(MOVIELENS)
    args = recommender(["--set", "optimizer.type=sgd", "--set", "optimizer.lr=0.1", "--set", "epochs=1"])
    _exactness(args, [(1, 64), (2, 32)])


if __name__ == "__main__":
    main(sys.modules[__name__])
