#!/usr/bin/env bash
# Launch-and-reap latency: the wall time for paddle-launch to start N trivial processes (`true`),
# supervise them and exit, for N = 2 and 8; the median of RUNS runs (default 31), beside
# `mpirun -np N true` when Open MPI is installed.
#   scripts/bench_launch.sh            # builds first if needed
#   RUNS=101 scripts/bench_launch.sh
set -euo pipefail
source "$(dirname "$0")/bench_setup.sh" launcher/paddle-launch
runs="${RUNS:-31}"

python3 - "$launcher" "$runs" "$work" <<'PY'
import os, platform, shutil, statistics, subprocess, sys, time

launcher, runs, work = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def median_ms(cmd):
    samples = []
    for i in range(runs + 2):
        t0 = time.perf_counter()
        r = subprocess.run(cmd, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        elapsed = (time.perf_counter() - t0) * 1000
        if r.returncode != 0:
            sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}")
        if i >= 2:  # two warm-up runs
            samples.append(elapsed)
    return statistics.median(samples)

cpu = "unknown CPU"
for line in open("/proc/cpuinfo"):
    if line.startswith("model name"):
        cpu = line.split(":", 1)[1].strip()
        break
print(f"machine: {cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}")
print(f"median of {runs} runs, launch + reap of N trivial processes (`true`)")
mpirun = shutil.which("mpirun")
results = {}
for n in (2, 8):
    ours = median_ms([launcher, f"--nproc_per_node={n}", "--log_dir=log", "true"])
    results[n] = ours
    line = f"N={n}: paddle-launch {ours:7.2f} ms"
    if mpirun:
        theirs = median_ms([mpirun, "--allow-run-as-root", "--oversubscribe", "-np", str(n), "true"])
        line += f"   mpirun {theirs:7.2f} ms   ({theirs / ours:.1f}x)"
    else:
        line += "   (mpirun not installed)"
    print(line)
print(f"N=8 / N=2: {results[8] / results[2]:.2f}x   targets: N=2 < 20 ms, N=8 < 3x N=2")
PY
