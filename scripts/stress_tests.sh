#!/usr/bin/env bash
# Runs the whole CTest suite N times (default 10) under -j$(nproc), as scripts/test.sh runs it,
# and prints every test that ever failed with how often, so a flaky test shows itself. Builds
# first (scripts/build.sh). Each run's output is kept in BUILD_DIR/stress/run-K.log.
#   scripts/stress_tests.sh [N] [extra ctest arguments, e.g. -R multinode]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-10}"
shift || true
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "stress_tests.sh: N must be a positive integer, not '$runs'" >&2; exit 2; }
build_dir="${BUILD_DIR:-build}"
bash scripts/build.sh >/dev/null
mkdir -p "$build_dir/stress"
declare -A failures=()
failed_runs=0
start=$SECONDS
for ((k = 1; k <= runs; k++)); do
  log="$build_dir/stress/run-$k.log"
  run_start=$SECONDS
  set +e
  (cd "$build_dir" && ctest -j "$(nproc)" --timeout 300 -E "^build: CPU-only" "$@") >"$log" 2>&1
  set -e
  # CTest's summary lists each failed test as "  N - NAME (Failed|Timeout|...)".
  mapfile -t failed < <(sed -n '/tests failed out of/,$p' "$log" | sed -n 's/^[[:space:]]*[0-9]\+ - \(.*\) (\(Failed\|Timeout\|Subprocess aborted\|SEGFAULT\|Exception\|Child aborted\|Not Run\))$/\1/p')
  summary=$(grep -m1 "tests passed" "$log" || echo "no summary (see $log)")
  echo "run $k of $runs: $summary, $((SECONDS - run_start)) s"
  if ((${#failed[@]})) || ! grep -q "100% tests passed" "$log"; then
    failed_runs=$((failed_runs + 1))
    for name in "${failed[@]}"; do
      echo "  failed: $name"
      failures["$name"]=$((${failures["$name"]:-0} + 1))
    done
  fi
done
echo "stress_tests.sh: $runs run(s) in $((SECONDS - start)) s on $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)); $failed_runs with a failure"
for name in "${!failures[@]}"; do
  printf '  %3d x  %s\n' "${failures[$name]}" "$name"
done | sort -rn
((failed_runs == 0))
