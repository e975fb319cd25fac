#!/usr/bin/env bash
# The main job: installs what is missing, builds, and trains the default model (a CNN on
# Fashion-MNIST from Debian's dataset-fashion-mnist, 2 epochs) with 2 CPU processes through
# paddle-launch. Logs go to ./log, checkpoints and metrics.json to ./output. About a minute on
# 2 cores; extra arguments go to train (e.g. --set epochs=1).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
build_dir="${BUILD_DIR:-build}"
exec "$build_dir/launcher/paddle-launch" --nproc_per_node=2 "$build_dir/runtime/train" \
  --config configs/fashion_mnist.json "$@"
