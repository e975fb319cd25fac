#!/usr/bin/env bash
# What watching a job costs it: samples/s of the default job (the Fashion-MNIST CNN, 2 ranks)
# plain, and with --dashboard --log_output=all while a client polls the job page's data every
# second, as the page does; interleaved runs, median of each. Set RUNS (default 5) and
# TRAIN_SAMPLES (default 19200) to change the length.
set -euo pipefail
source "$(dirname "$0")/bench_setup.sh" runtime/train
config="$(realpath configs/fashion_mnist.json)"
runs="${RUNS:-5}"
samples="${TRAIN_SAMPLES:-19200}"
echo "machine: $cpu"
echo "job: 2 ranks, $config, train_samples=$samples, 1 epoch, log_every 10; $runs runs each, interleaved"
run() {  # run DIR [launcher flags...]: prints samples/s
  local dir="$1"; shift
  mkdir -p "$dir"
  (cd "$dir" && "$launcher" --nproc_per_node=2 "$@" "$train" --config "$config" --set train_samples="$samples" \
      --set epochs=1 --set checkpoint=false --set log_every=10 >/dev/null 2>"$dir/stderr" &
   pid=$!
   if [ $# -gt 0 ]; then
     while kill -0 $pid 2>/dev/null; do
       url=$(grep -o 'dashboard: http://[0-9.:]*/' log/launch.log 2>/dev/null | head -1 | cut -d' ' -f2 || true)
       [ -n "$url" ] && curl -s "${url}api/job" >/dev/null || true
       sleep 1
     done
   fi
   wait $pid)
  python3 -c "import json; print(json.load(open('$dir/output/metrics.json'))['samples_per_sec'])"
}
plain=(); watched=()
for i in $(seq "$runs"); do
  plain+=("$(run "$work/plain$i")")
  watched+=("$(run "$work/watched$i" --dashboard --log_output=all)")
done
python3 - "${plain[*]}" "${watched[*]}" <<'PY'
import statistics, sys
plain, watched = ([float(x) for x in s.split()] for s in sys.argv[1:3])
p, w = statistics.median(plain), statistics.median(watched)
print(f"plain:                              {p:8.1f} samples/s  (runs: {', '.join(f'{x:.0f}' for x in plain)})")
print(f"--dashboard --log_output=all, polled: {w:8.1f} samples/s  (runs: {', '.join(f'{x:.0f}' for x in watched)})")
print(f"difference: {100 * (w - p) / p:+.1f}%")
PY
