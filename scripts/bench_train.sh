#!/usr/bin/env bash
# Training throughput of the default config (the Fashion-MNIST CNN, batch 64 per rank) with 1 and
# 2 ranks through paddle-launch: samples/s (from metrics.json), wall time, and the scaling ratio.
#   scripts/bench_train.sh                  # 1 epoch on 19,200 samples each
#   TRAIN_SAMPLES=0 EPOCHS=2 scripts/bench_train.sh   # the full default run (60,000 x 2 epochs)
set -euo pipefail
source "$(dirname "$0")/bench_setup.sh" runtime/train
config="$(realpath configs/fashion_mnist.json)"
samples="${TRAIN_SAMPLES:-19200}"
epochs="${EPOCHS:-1}"
echo "machine: $cpu"
echo "config: $config, train_samples=$samples (0 = all), epochs=$epochs"
declare -A rate
for n in 1 2; do
  mkdir -p "$work/$n"
  start=$(date +%s.%N)
  (cd "$work/$n" && "$launcher" --nproc_per_node=$n "$train" --config "$config" --set train_samples=$samples \
      --set epochs=$epochs --set checkpoint=false >/dev/null 2>&1)
  end=$(date +%s.%N)
  read -r sps acc < <(python3 -c "import json,sys; m=json.load(open('$work/$n/output/metrics.json')); print(m['samples_per_sec'], m['test_acc'])")
  rate[$n]=$sps
  python3 -c "print(f'$n rank(s): {$sps:8.1f} samples/s   wall {$end - $start:6.1f} s   test_acc {$acc:.4f}')"
done
python3 -c "print(f'scaling 2 ranks / 1 rank: {${rate[2]} / ${rate[1]}:.2f}x')"
