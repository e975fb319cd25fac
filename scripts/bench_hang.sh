#!/usr/bin/env bash
# From a hang to its verdict: `train` (fit_a_line) on 2 ranks of one node, --hang_timeout=2
# --on_hang=stop; once rank 1 trains, it is stopped (SIGSTOP) or stalls in data loading
# (PADDLE_TEST_FAULT), and the seconds from then to the verdict's line in launch.log, less the
# timeout, are what detection adds. RUNS (default 10) of each; median and maximum.
set -euo pipefail
source "$(dirname "$0")/bench_setup.sh" runtime/train
housing="$(realpath "${SHARED_DATA:-../shared/data}/uci_housing")"
config="$(realpath configs/fit_a_line.json)"
runs="${RUNS:-10}"
echo "machine: $cpu"
echo "job: 2 ranks of train (fit_a_line, Gloo over TCP), --hang_timeout=2 --on_hang=stop; $runs runs of each fault"
python3 - "$launcher" "$train" "$config" "$housing" "$work" "$runs" <<'PY'
import json, os, signal, statistics, subprocess, sys, time
launcher, train, config, housing, work, runs = sys.argv[1:]
TIMEOUT = 2.0

def one(fault, i):
    d = os.path.join(work, f"{fault}{i}")
    os.makedirs(d)
    env = dict(os.environ, PADDLE_COLLECTIVE_SHM="0")
    if fault == "stall":
        env["PADDLE_TEST_FAULT"] = "stall_data_loading:1:200"
    p = subprocess.Popen([launcher, "--nproc_per_node=2", "--grace_period=1", f"--hang_timeout={TIMEOUT:g}",
                          "--on_hang=stop", train, "--config", config, "--set", f"data_dir={housing}",
                          "--set", "epochs=100000", "--set", "batch_size=4", "--set", "checkpoint=false"],
                         cwd=d, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    log, page = os.path.join(d, "log", "launch.log"), os.path.join(d, "log", "progress.trainer.1")
    def steps():
        try:
            import struct
            return struct.unpack("<12Q", open(page, "rb").read(96))[2]
        except (OSError, struct.error):
            return 0
    while steps() < 50:
        time.sleep(0.01)
    if fault == "stop":
        pids = [q["pid"] for q in json.load(open(os.path.join(d, "log", "job.json")))["processes"]]
        os.kill(pids[1], signal.SIGSTOP)
        began = time.monotonic()
    else:  # the stall begins after step 200: watch the page's phase for data loading
        import struct
        while True:
            w = struct.unpack("<12Q", open(page, "rb").read(96))
            if w[2] >= 200 and (w[3] & 0xffffffff) == 1:
                break
            time.sleep(0.001)
        began = time.monotonic()
    while "made no progress" not in open(log).read():
        time.sleep(0.005)
    seen = time.monotonic() - began
    p.wait(timeout=60)
    return seen

for fault, label in (("stop", "a rank stopped (SIGSTOP)"), ("stall", "a rank stalled in data loading")):
    seen = [one(fault, i) for i in range(int(runs))]
    extra = [s - TIMEOUT for s in seen]
    print(f"{label:34} verdict after {statistics.median(seen):.2f} s median, {max(seen):.2f} s max; "
          f"beyond the timeout {statistics.median(extra):.2f} s median, {max(extra):.2f} s max")
PY
