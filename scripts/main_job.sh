#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs a 2-process CPU job through
# paddle-launch. Until the training runtime lands this runs the probe program, which reports
# each process's rank and endpoints; logs go to ./log.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
build_dir="${BUILD_DIR:-build}"
exec "$build_dir/launcher/paddle-launch" --nproc_per_node=2 "$build_dir/tests/probe" \
  --print "probe: this process is one of a 2-process collective job; see log/workerlog.0 and log/workerlog.1"
