#!/usr/bin/env python3
"""The cost of a parameter-server worker's failure, restarted in place or with the whole job, at
table sizes; see scripts/bench_ps_restart.sh. Arguments: LAUNCHER TRAIN ROWS[,ROWS] RUNS WORKDIR CPU."""

import json
import os
import signal
import statistics
import subprocess
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../..")
CONFIG = os.path.join(ROOT, "configs/wide_deep.json")
GEN = os.path.join(ROOT, "scripts/gen_criteo.sh")
UNIQUE_SLOTS = 18


def common_args(data, extra=()):
    return ["--config", CONFIG, "--set", f"data_dir={data}", "--set", "batch_size=256", "--set", "ps.mode=async",
            "--set", "ctr.hidden=[64,32]", "--set", "log_every=1", *extra]


FAULT_STEP = 50  # of worker 2, in its second pass (32 steps each)


def last_step(workdir, rank):
    """The last step worker `rank` logged to its metrics log (log_every=1), or 0."""
    try:
        with open(os.path.join(workdir, "log", f"metrics.worker.{rank}.jsonl")) as f:
            lines = f.read().splitlines()
    except OSError:
        return 0
    for line in reversed(lines):
        try:
            return json.loads(line).get("step", 0)
        except ValueError:
            continue
    return 0


def worker_pid(workdir, rank):
    try:
        with open(os.path.join(workdir, "log", "job.json")) as f:
            job = json.load(f)
    except (OSError, ValueError):
        return None
    return next((p["pid"] for p in job["processes"] if p["role"] == "worker" and p["rank"] == rank), None)


def launch(launcher, train, workdir, launch_args, args, fault=False, timeout=900):
    """Runs the job in `workdir`; with `fault`, SIGKILLs worker 2 once in its second pass."""
    os.makedirs(workdir, exist_ok=True)
    started = time.monotonic()
    proc = subprocess.Popen([launcher, "--server_num=2", "--worker_num=4", *launch_args, train, *args], cwd=workdir,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        if fault:
            while last_step(workdir, 2) < FAULT_STEP:
                if proc.poll() is not None:
                    raise RuntimeError(f"the job in {workdir} ended before its fault")
                time.sleep(0.01)
            os.kill(worker_pid(workdir, 2), signal.SIGKILL)
        code = proc.wait(timeout=timeout)
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    wall = time.monotonic() - started
    if code != 0:
        raise RuntimeError(f"the job in {workdir} exited {code}; see {workdir}/log")
    with open(os.path.join(workdir, "output", "metrics.json")) as f:
        auc = json.load(f)["test_auc"]
    loads = []
    for name in sorted(os.listdir(os.path.join(workdir, "log"))):
        if name.startswith("serverlog."):
            with open(os.path.join(workdir, "log", name)) as f:
                loads += [float(line.split(" in ")[-1].split(" s")[0]) for line in f if "loaded its tables from" in line]
    return wall, auc, loads


def main():
    launcher, train, sizes, runs, work, cpu = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6]
    print(f"machine: {cpu}")
    small = os.path.join(work, "small.txt")
    subprocess.run([GEN, "40000", small], check=True, capture_output=True)
    print("rows     way          wall s   lost s   server loads s   test AUC")
    for rows in (int(r) for r in sizes.split(",")):
        lines = int(rows / UNIQUE_SLOTS / 0.95) + 1
        big = os.path.join(work, f"unique-{rows}.txt")
        subprocess.run([GEN, str(lines), big, "7", str(UNIQUE_SLOTS)], check=True, capture_output=True)
        seed_dir = os.path.join(work, f"seed-{rows}")
        built = time.monotonic()
        launch(launcher, train, seed_dir, [], common_args(big, ["--set", "epochs=1", "--set", "ctr.test_fraction=0.05",
                                                                "--set", "ps.save_dir=model"]))
        held = 0
        for server in (0, 1):
            with open(os.path.join(seed_dir, "log", f"metrics.server.{server}.jsonl")) as f:
                tables = [json.loads(line) for line in f if '"tables"' in line][-1]["tables"]
            held += next(t["rows"] for t in tables if t["table"] == "embedding")
        print(f"# {rows}: the save holds {held} rows of the embedding table and as many of the wide one, over both "
              f"servers (made in {time.monotonic() - built:.0f} s)")
        args = common_args(small, ["--set", "epochs=6", "--set", f"ps.init_dir={os.path.join(seed_dir, 'model')}"])
        ways = {"undisturbed": ([], False), "in place": (["--ps_worker_restarts=1"], True),
                "job-wide": (["--max_restarts=1"], True)}
        figures = {way: [] for way in ways}
        for r in range(runs):
            for way, (launch_args, fault) in ways.items():
                figures[way].append(launch(launcher, train, os.path.join(work, f"{rows}-{way}-{r}"), launch_args, args,
                                           fault))
        base = statistics.median(w for w, _, _ in figures["undisturbed"])
        for way, results in figures.items():
            wall = statistics.median(w for w, _, _ in results)
            aucs = [a for _, a, _ in results]
            loads = results[len(results) // 2][2]
            print(f"{rows:<8} {way:<12} {wall:7.1f}  {wall - base:7.1f}   {'+'.join(f'{x:.1f}' for x in loads):<15}  "
                  f"{statistics.median(aucs):.4f}")


if __name__ == "__main__":
    main()
