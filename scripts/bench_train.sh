#!/usr/bin/env bash
# Training throughput of the default config (the Fashion-MNIST CNN, batch 64 per rank, 1 epoch on
# TRAIN_SAMPLES images), ours beside PyTorch DDP in the same run: Debian's python3-torch running
# scripts/torch_ddp_cnn.py (the same CNN, optimizer, batch and sharding), both started by
# paddle-launch with 1 and 2 processes; ours also with the plain Eigen kernels
# (PADDLE_CPU_KERNELS=plain). Prints samples/s (median of RUNS), GFLOP/s at the model's 7.31 MFLOP
# per sample (forward and backward) against this machine's measured peak (a 2048^3 oneDNN sgemm
# on all cores), ours over PyTorch, and the scaling from 1 to 2 processes; first, the max pooling
# on the blocked layout, oneDNN's against ours (tests/bench/blocked_pool_bench.cc).
#   scripts/bench_train.sh                       # 19,200 images, 3 runs each
#   TRAIN_SAMPLES=0 RUNS=1 scripts/bench_train.sh  # all 60,000
set -euo pipefail
source "$(dirname "$0")/bench_setup.sh" runtime/train
config="$(realpath configs/fashion_mnist.json)"
samples="${TRAIN_SAMPLES:-19200}"
runs="${RUNS:-3}"
peer="$(realpath scripts/torch_ddp_cnn.py)"
flop_per_sample=7308288  # 3 x (conv1 225,792 + conv2 1,806,336 + fc1 401,408 + fc2 2,560) forward FLOPs

echo "machine: $cpu"
peak_all=$("$build_dir/tests/gemm_peak_bench" | grep -o '[0-9.]* GFLOP/s' | cut -d' ' -f1)
peak_one=$(OMP_NUM_THREADS=1 "$build_dir/tests/gemm_peak_bench" | grep -o '[0-9.]* GFLOP/s' | cut -d' ' -f1)
echo "peak: oneDNN sgemm 2048^3: $peak_all GFLOP/s on $(nproc) threads, $peak_one on 1"
echo "config: $config, train_samples=$samples (0 = all), 1 epoch, median of $runs runs"
# Kernel choices (docs/train.md) are timed by the first run of each setup and kept for the others
# in this bench's own file, so every bench starts from none.
export PADDLE_KERNEL_CACHE="$work/kernel-choices.json"

# Max pooling on the CNN's shapes, one thread: oneDNN's and ours on the blocked layout the chain
# keeps, and ours on NCHW (the path before the chain).
[ -x "$build_dir/tests/blocked_pool_bench" ] && OMP_NUM_THREADS=1 "$build_dir/tests/blocked_pool_bench" | sed 's/^/max pool /'

have_torch=1
/usr/bin/python3 -c "import torch" 2>/dev/null || { have_torch=0; echo "PyTorch: /usr/bin/python3 has no torch (apt install python3-torch); its rows are left out"; }

# Each timed run starts 2 s after the last one ended: a job's teardown (the kernel freeing its
# memory and its cgroup) goes on after its processes exit and, on a 2-core VM, slowed the next
# job by 2-8% when runs came back to back.
settle() { sleep 2; }

# run SETUP PROCS: prints "samples/s test_acc" of one run
run() {
  settle
  local dir="$work/run$RANDOM$RANDOM"
  mkdir -p "$dir"
  case "$1" in
    ours|plain)
      local kernels=onednn
      [ "$1" = plain ] && kernels=plain
      (cd "$dir" && PADDLE_CPU_KERNELS=$kernels "$launcher" --nproc_per_node="$2" "$train" --config "$config" \
          --set train_samples="$samples" --set epochs=1 --set checkpoint=false --set log_every=100000 >/dev/null 2>&1)
      python3 -c "import json; m=json.load(open('$dir/output/metrics.json')); print(m['samples_per_sec'], m['test_acc'])" ;;
    torch)
      (cd "$dir" && "$launcher" --nproc_per_node="$2" /usr/bin/python3 "$peer" --train_samples "$samples" 2>/dev/null) |
        python3 -c "import json,sys; m=json.loads(sys.stdin.read().strip().splitlines()[-1]); print(m['samples_per_sec'], m['test_acc'])" ;;
  esac
}

declare -A rate
printf '%-34s %5s %11s %9s %10s %9s\n' setup procs samples/s GFLOP/s "% of peak" test_acc
for setup in ours plain torch; do
  [ "$setup" = torch ] && [ "$have_torch" = 0 ] && continue
  for n in 1 2; do
    [ "$setup" = plain ] && [ "$n" = 1 ] && continue
    results=()
    for _ in $(seq "$runs"); do results+=("$(run "$setup" "$n")"); done
    read -r sps acc < <(printf '%s\n' "${results[@]}" | sort -g | sed -n "$(((runs + 1) / 2))p")
    rate[$setup$n]=$sps
    case "$setup" in
      ours) label="paddle-launch, oneDNN kernels" ;;
      plain) label="paddle-launch, plain kernels" ;;
      torch) label="PyTorch DDP $(/usr/bin/python3 -c 'import torch; print(torch.__version__)')" ;;
    esac
    python3 -c "
sps=$sps; g=sps*$flop_per_sample/1e9
print(f'{\"$label\":34} {$n:5} {sps:11.0f} {g:9.1f} {100*g/$peak_all:9.1f}% {$acc:9.4f}')"
  done
done
# Where each 2-process run's CPU time goes, thread by thread (names set by the trainer): the
# compute thread, oneDNN's OpenMP workers, the batch loader and the gradient allreduce thread,
# sampled from /proc every 50 ms while the job runs.
settle
mkdir -p "$work/threads"
(cd "$work/threads" && python3 - "$launcher" "$train" "$config" "$samples" <<'PY'
import os, subprocess, sys, time
launcher, train, config, samples = sys.argv[1:]
job = subprocess.Popen([launcher, "--nproc_per_node=2", train, "--config", config, "--set", f"train_samples={samples}",
                        "--set", "epochs=1", "--set", "checkpoint=false"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
ticks, start, seen = os.sysconf("SC_CLK_TCK"), time.time(), {}
def children(pid):
    try:
        return [int(c) for t in os.listdir(f"/proc/{pid}/task") for c in open(f"/proc/{pid}/task/{t}/children").read().split()]
    except OSError:
        return []
while job.poll() is None:
    for pid in children(job.pid):
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                stat = open(f"/proc/{pid}/task/{tid}/stat").read()
            except OSError:
                continue
            name = stat[stat.index("(") + 1:stat.rindex(")")]
            fields = stat[stat.rindex(")") + 2:].split()
            seen[(pid, tid)] = (name, (int(fields[11]) + int(fields[12])) / ticks)
    time.sleep(0.05)
wall = time.time() - start
by_name = {}
for (pid, tid), (name, seconds) in seen.items():
    kind = "compute (main)" if str(pid) == tid else name if name in ("batch-loader", "grad-allreduce") else "other"
    by_name[kind] = by_name.get(kind, 0.0) + seconds / 2
print(f"CPU seconds per process, 2 processes, {wall:.1f} s wall: " +
      ", ".join(f"{k} {v:.2f}" for k, v in sorted(by_name.items(), key=lambda kv: -kv[1])))
PY
)
python3 - "${rate[ours1]}" "${rate[ours2]}" "${rate[plain2]}" "${rate[torch1]:-0}" "${rate[torch2]:-0}" <<'PY'
import sys
ours1, ours2, plain2, torch1, torch2 = map(float, sys.argv[1:])
print(f"oneDNN kernels / plain kernels, 2 processes: {ours2 / plain2:.2f}x")
if torch2 > 0:
    print(f"ours / PyTorch DDP, 2 processes: {ours2 / torch2:.2f}x")
    print(f"scaling 1 -> 2 processes: ours {ours2 / ours1:.2f}x, PyTorch {torch2 / torch1:.2f}x")
else:
    print(f"scaling 1 -> 2 processes: ours {ours2 / ours1:.2f}x")
PY
# What watching progress costs a step: the default (hang and straggler detection: a mark on the
# progress page per phase and collective, an allgather of one float every 5 steps) against
# --hang_timeout=0 --straggler_factor=0 (no marks at all), 2 processes, PROGRESS_RUNS (default 5)
# pairs interleaved, each pair's order the other way round from the last, median of each.
progress_runs="${PROGRESS_RUNS:-5}"
watched=(); unwatched=()
for pair in $(seq "$progress_runs"); do
  order="watched unwatched"
  [ $((pair % 2)) = 0 ] && order="unwatched watched"  # neither always first
  for mode in $order; do
    settle
    dir="$work/progress$RANDOM$RANDOM"
    mkdir -p "$dir"
    flags=()
    [ "$mode" = unwatched ] && flags=(--hang_timeout=0 --straggler_factor=0)
    (cd "$dir" && "$launcher" --nproc_per_node=2 "${flags[@]}" "$train" --config "$config" --set train_samples="$samples" \
        --set epochs=1 --set checkpoint=false --set log_every=100000 >/dev/null 2>&1)
    sps=$(python3 -c "import json; print(json.load(open('$dir/output/metrics.json'))['samples_per_sec'])")
    [ "$mode" = watched ] && watched+=("$sps") || unwatched+=("$sps")
  done
done
python3 - "${watched[*]}" "${unwatched[*]}" <<'PY'
import statistics, sys
on, off = ([float(x) for x in s.split()] for s in sys.argv[1:3])
a, b = statistics.median(on), statistics.median(off)
print(f"progress watched (default): {a:.0f} samples/s, not watched: {b:.0f} samples/s "
      f"({len(on)} runs each, interleaved): watching costs {100 * (b - a) / b:+.2f}% of the step time")
PY
