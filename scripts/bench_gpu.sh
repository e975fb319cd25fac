#!/usr/bin/env bash
# GPU training on one device through paddle-launch --gpus=0 (needs a CUDA build and a GPU):
#  - the default config (Fashion-MNIST CNN) on the GPU: test accuracy, samples/s, wall time;
#  - the same CNN with mixed precision (amp.enabled, float16 O1): its test accuracy against FP32's;
#  - ResNet-50 (configs/resnet.json, 3x224x224, Momentum) at each batch of BATCHES in strict FP32,
#    TF32, AMP float16 O1, AMP float16 O2 and AMP bfloat16 O1: images/s in the steady state, from
#    the metrics log's times between step WARMUP and step STEPS (start-up and cuDNN's algorithm
#    search fall before WARMUP), and the peak device memory nvidia-smi saw during the run (the
#    whole process: CUDA context, cuDNN workspace and the memory pool included). A mode the
#    build refuses at start (O2 so far) is reported as refused, with the reason.
#  - where python3 imports torch with CUDA, the PyTorch peer (scripts/bench_gpu_torch.py:
#    torchvision's resnet50, channels_last, eager, torch.autocast, synthetic data made on the
#    device) on the same batches, modes and steps: its images/s and peak memory
#    (torch.cuda.max_memory_allocated), then per batch and mode ours, PyTorch's and ours/PyTorch.
#    Without torch one line says so and the script goes on.
#   scripts/bench_gpu.sh                    DATA_DIR=... to read Fashion-MNIST elsewhere
#   BATCHES="32 256" MODES="fp32 amp-fp16" STEPS=60 WARMUP=20 SKIP_CNN=1 scripts/bench_gpu.sh
set -euo pipefail
source "$(dirname "$0")/bench_setup.sh" runtime/train
data_dir="${DATA_DIR:-/usr/share/datasets/fashion-mnist}"
batches="${BATCHES:-32 128 256}"
mode_list="${MODES:-fp32 tf32 amp-fp16 amp-fp16-o2 amp-bf16}"
steps="${STEPS:-60}"
warmup="${WARMUP:-20}"
echo "machine: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || echo 'no nvidia-smi'); $cpu"

metric() { python3 -c "import json; m=json.load(open('$1')); print(m['$2'])"; }

# Samples the GPU's used memory every 100 ms into $work/NAME.mem while the named run goes on.
memory_watch() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 >"$work/$1.mem" 2>/dev/null & }

run() {  # NAME ARGS...: one process on GPU 0, its metrics in $work/NAME/output; false if it failed
  local name=$1 status=0 watcher
  shift
  mkdir -p "$work/$name"
  memory_watch "$name"
  watcher=$!
  (cd "$work/$name" && "$launcher" --gpus=0 "$train" --set data_dir="$data_dir" --set checkpoint=false "$@" \
      >"$work/$name.out" 2>&1) || status=$?
  kill "$watcher" 2>/dev/null || true
  wait "$watcher" 2>/dev/null || true
  return $status
}

show_failure() {  # NAME: the end of its console and worker log
  tail -30 "$work/$1.out"
  tail -30 "$work/$1/log/workerlog.0" 2>/dev/null || true
}

if [ "${SKIP_CNN:-0}" != 1 ]; then
  start=$(date +%s.%N)
  run cnn --config "$(realpath configs/fashion_mnist.json)" || { show_failure cnn; exit 1; }
  end=$(date +%s.%N)
  grep -m1 "^device:" "$work/cnn/log/workerlog.0"
  python3 -c "print(f'fashion_mnist CNN, 1 GPU, 2 epochs: test_acc {$(metric "$work/cnn/output/metrics.json" test_acc):.4f}, '
                    f'{$(metric "$work/cnn/output/metrics.json" samples_per_sec):.0f} samples/s, wall {$end - $start:.1f} s')"

  run cnn-amp --config "$(realpath configs/fashion_mnist.json)" --set amp.enabled=true || { show_failure cnn-amp; exit 1; }
  grep -m1 "^mixed precision:" "$work/cnn-amp/log/workerlog.0" || true
  echo "skipped AMP steps: $(grep -c 'step skipped' "$work/cnn-amp/log/workerlog.0" || true)"
  python3 -c "print(f'fashion_mnist CNN, 1 GPU, 2 epochs, AMP float16 O1: test_acc {$(metric "$work/cnn-amp/output/metrics.json" test_acc):.4f} '
                    f'(FP32: {$(metric "$work/cnn/output/metrics.json" test_acc):.4f}), '
                    f'{$(metric "$work/cnn-amp/output/metrics.json" samples_per_sec):.0f} samples/s')"
fi

declare -A modes=([fp32]="tf32=false" [tf32]="tf32=true" [amp-fp16]="amp.enabled=true"
                  [amp-fp16-o2]="amp.enabled=true amp.level=O2" [amp-bf16]="amp.enabled=true amp.dtype=bfloat16")
declare -A titles=([fp32]="strict FP32" [tf32]="TF32" [amp-fp16]="AMP float16 O1" [amp-fp16-o2]="AMP float16 O2"
                   [amp-bf16]="AMP bfloat16 O1")
idle_mib=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null | head -1 || echo 0)
for batch in $batches; do
  for mode in $mode_list; do
    sets=()
    for kv in ${modes[$mode]}; do sets+=(--set "$kv"); done
    name="resnet-b$batch-$mode"
    if ! run "$name" --config "$(realpath configs/resnet.json)" --set batch_size="$batch" \
        --set train_samples=$((batch * steps)) --set test_samples=64 --set max_steps="$steps" --set log_every=10 \
        "${sets[@]}"; then
      reason=$(grep -h -m1 "^train: " "$work/$name/log/workerlog.0" 2>/dev/null || tail -1 "$work/$name/log/workerlog.0" 2>/dev/null)
      echo "ResNet-50, batch $batch, ${titles[$mode]}: refused or failed: ${reason:-see below}"
      printf '%s\t%s\t%s\t\t\t\n' "$batch" "$mode" "${titles[$mode]}" >>"$work/ours.tsv"
      [ -n "$reason" ] || show_failure "$name"
      continue
    fi
    python3 - "$work/$name" "$batch" "$warmup" "${titles[$mode]}" "$idle_mib" "$mode" "$work/ours.tsv" <<'PY'
import glob, json, sys
folder, batch, warmup, title, idle = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
mode, table = sys.argv[6], sys.argv[7]
lines = [json.loads(l) for f in glob.glob(f"{folder}/log/metrics.*.jsonl") for l in open(f) if l.strip()]
lines.sort(key=lambda l: l["step"])
first = next(l for l in lines if l["step"] >= warmup)
last = lines[-1]
ips = (last["step"] - first["step"]) * batch / (last["time"] - first["time"])
peak = max((int(v) for v in open(f"{folder}.mem").read().split() if v.isdigit()), default=0)
print(f"ResNet-50, batch {batch}, 3x224x224, 1 GPU, {title}: {ips:.0f} images/s "
      f"(steps {first['step']}..{last['step']}), peak device memory {peak} MiB ({peak - idle} MiB above idle), "
      f"loss at step {last['step']} {last['loss']:.4f}")
with open(table, "a") as out:  # batch, mode, title, images/s, peak MiB, above idle: for the comparison below
    out.write(f"{batch}\t{mode}\t{title}\t{ips:.1f}\t{peak}\t{peak - idle}\n")
PY
  done
done

# The PyTorch peer on the same batches, modes and window. Ours reads its window from the metrics
# log, written every 10 steps, so it starts at the first multiple of 10 from WARMUP: so does the peer's.
if ! python3 -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  echo "PyTorch peer: skipped, python3 cannot import torch with CUDA"
else
  peer_status=0
  python3 scripts/bench_gpu_torch.py --batches $batches --modes $mode_list --steps "$steps" \
      --warmup $(((warmup + 9) / 10 * 10)) >"$work/peer.out" 2>&1 || peer_status=$?
  python3 - "$work/ours.tsv" "$work/peer.out" "$peer_status" <<'PY'
import os, shlex, sys
ours_file, peer_file, peer_status = sys.argv[1], sys.argv[2], int(sys.argv[3])
ours = {}
for line in open(ours_file) if os.path.exists(ours_file) else []:
    batch, mode, title, ips, peak, above = line.rstrip("\n").split("\t")
    ours[batch, mode] = dict(title=title, ips=float(ips) if ips else None, peak=peak, above=above)
peer = {}
for line in open(peer_file):
    words = shlex.split(line) if line.startswith("peer") else []  # not torch's warnings
    if words and words[0] == "peer-info":
        info = dict(w.split("=", 1) for w in words[1:])
        print(f"PyTorch peer: torch {info['torch']}, torchvision {info['torchvision']}, CUDA {info['cuda']}, "
              f"cuDNN {info['cudnn']}, {info['device']}")
    elif words and words[0] == "peer":
        fields = dict(w.split("=", 1) for w in words[1:])
        peer[fields["batch"], fields["mode"]] = fields
if not peer:
    print(f"PyTorch peer: failed (exit {peer_status}) before any run:")
    print(open(peer_file).read()[-3000:], end="")
    sys.exit(0)
for key, p in peer.items():
    title = ours.get(key, {}).get("title", p["mode"])
    where = f"PyTorch ResNet-50 (torchvision, eager, channels_last), batch {p['batch']}, {title}"
    if p["status"] == "ok":
        print(f"{where}: {float(p['images_per_s']):.0f} images/s (steps {p['steps']}), peak memory "
              f"{p['peak_allocated_mib']} MiB allocated ({p['peak_reserved_mib']} MiB reserved), "
              f"loss at step {p['steps'].split('..')[1]} {p['loss']}")
    else:
        print(f"{where}: {p['status']}" + (f": {p['reason']}" if "reason" in p else ""))
for (batch, mode), o in ours.items():
    p = peer.get((batch, mode), {})
    theirs = float(p["images_per_s"]) if p.get("status") == "ok" else None
    ours_text = f"ours {o['ips']:.0f} images/s" if o["ips"] else "ours refused or failed"
    theirs_text = f"PyTorch {theirs:.0f} images/s" if theirs else f"PyTorch {p.get('status', 'not run')}"
    ratio = f"ours/PyTorch {o['ips'] / theirs:.2f}" if o["ips"] and theirs else "ours/PyTorch -"
    memory = (f"; peak memory ours {o['above']} MiB above idle (nvidia-smi), PyTorch {p['peak_allocated_mib']} MiB "
              f"allocated" if o["ips"] and theirs else "")
    print(f"ResNet-50, batch {batch}, {o['title']}: {ours_text}, {theirs_text}, {ratio}{memory}")
PY
fi
