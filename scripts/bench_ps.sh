#!/usr/bin/env bash
# Parameter-server throughput on this machine over loopback: sparse pull+push of 10k and 1M keys
# of dim 9 and dense push/pull of a 64 MB table, 1 server with 1 and then 2 workers; a CTR table
# of dim 8 at 1M, 10M and 50M resident keys, alone in one process and then served (keys/s, bytes
# per row, shrink and save times); that table at 100M keys on disk with a 2 GB budget
# (ps_tier_bench); then wide&deep training samples/s, 1 server + 2 workers against 1 local
# process, on a generated Criteo file; then the three modes (sync, async, GEO) on 200k generated
# lines, AUC and samples/s; last, wide&deep async on PADDLE_LINES generated lines (500k), ours
# against real Paddle 2.6.2 Fleet PS (scripts/paddle_wide_deep_ps.py, from the tests' venv under
# the build folder, made on first use; PADDLE_LINES=0 skips it).
set -euo pipefail
source "$(dirname "$0")/bench_setup.sh" tests/ps_bench
echo "machine: $cpu"
for n in 1 2; do
  "$launcher" --server_num=1 --worker_num=$n --log_dir="$work/log$n" "$(realpath "$build_dir/tests/ps_bench")" 2>/dev/null \
    | grep -E "^([0-9]+ worker|sparse|dense)"
done
# The CTR table at 1M, 10M and 50M resident keys (about 5 GB of server memory at 50M, and as
# much disk for its saves), 1 server and 1 worker, then 2 servers and 2 workers: keys/s, bytes
# per row, shrink and save times. CTR_KEYS= skips it.
# First the table alone in this process (no worker, socket or second process on the cores): the
# ceiling of the launched figures.
[ -z "${CTR_KEYS-x}" ] || "$build_dir/tests/ps_bench" --in-process "${CTR_KEYS-1000000,10000000,50000000}"
for sw in 1 2; do
  [ -z "${CTR_KEYS-x}" ] && break
  PS_BENCH_CTR_KEYS="${CTR_KEYS-1000000,10000000,50000000}" PS_BENCH_SAVE_KEYS="${SAVE_KEYS:-50000000}" \
    "$launcher" --server_num=$sw --worker_num=$sw --log_dir="$work/log-ctr$sw" "$(realpath "$build_dir/tests/ps_bench")" \
    2>/dev/null | grep -E "^(CTR|  )"
done
# The disk tier: a CTR table of TIER_KEYS rows (100M: about 8.5 GB of RocksDB files in TIER_DIR, and
# as much again for its save) with TIER_BUDGET_MB of memory, alone in this process. TIER_KEYS= skips it.
if [ -n "${TIER_KEYS-x}" ]; then
  "$build_dir/tests/ps_tier_bench" "${TIER_KEYS-100000000}" "${TIER_BUDGET_MB:-2048}" "${TIER_DIR:-$work/tier}"
fi
lines="${LINES_OF_DATA:-50000}"
bash scripts/gen_criteo.sh "$lines" "$work/criteo.txt" >/dev/null
config="$(realpath configs/wide_deep.json)"
args=(--config "$config" --set data_dir="$work/criteo.txt" --set log_every=100000)
(cd "$work" && mkdir -p local ps && cd local && "$train" "${args[@]}" --set batch_size=1024 >/dev/null)
(cd "$work/ps" && "$launcher" --server_num=1 --worker_num=2 "$train" "${args[@]}" --set batch_size=512 >/dev/null 2>&1)
# The same with plain rows under the program's adam (the config's CTR rows train with an adam sparse rule).
mkdir -p "$work/plain"
(cd "$work/plain" && "$launcher" --server_num=1 --worker_num=2 "$train" "${args[@]}" --set batch_size=512 \
   --set ps.accessor=plain >/dev/null 2>&1)
python3 - "$work" "$lines" <<'PY'
import json, sys
work, lines = sys.argv[1], sys.argv[2]
local = json.load(open(f"{work}/local/output/metrics.json"))
ps = json.load(open(f"{work}/ps/output/metrics.json"))
plain = json.load(open(f"{work}/plain/output/metrics.json"))
print(f"wide&deep, {lines} generated lines, sync, global batch 1024:")
print(f"  1 local process:        {local['samples_per_sec']:9.0f} samples/s  test AUC {local['test_auc']:.4f}")
print(f"  1 server + 2 workers:   {ps['samples_per_sec']:9.0f} samples/s  test AUC {ps['test_auc']:.4f}  (CTR rows)")
print(f"  the same, plain rows:   {plain['samples_per_sec']:9.0f} samples/s  test AUC {plain['test_auc']:.4f}"
      f"  (CTR rows at {ps['samples_per_sec'] / plain['samples_per_sec']:.2f}x)")
PY
modes_lines="${MODES_LINES:-200000}"
bash scripts/gen_criteo.sh "$modes_lines" "$work/modes.txt" >/dev/null
echo "modes, 1 server + 2 workers, $modes_lines generated lines (80% train), 2 passes, SGD lr 0.5, batch 256 per worker:"
for mode in "sync" "async --set ps.max_merge_var_num=4" "geo --set ps.k_steps=10"; do
  dir="$work/mode-${mode%% *}"
  mkdir -p "$dir"
  # shellcheck disable=SC2086
  (cd "$dir" && "$launcher" --server_num=1 --worker_num=2 "$train" --config "$config" --set data_dir="$work/modes.txt" \
      --set batch_size=256 --set optimizer.type=sgd --set optimizer.lr=0.5 --set epochs=2 --set log_every=100000 \
      --set ps.mode=$mode >/dev/null 2>&1) || { echo "  ${mode%% *}: failed, see $dir/log"; continue; }
  python3 -c "import json; m=json.load(open('$dir/output/metrics.json')); print(f'  {\"${mode%% *}\":6} test AUC {m[\"test_auc\"]:.4f}   {m[\"samples_per_sec\"]:8.0f} samples/s')"
done

# Ours against Paddle 2.6.2's Fleet PS, both started by paddle-launch: 1 server + 2 workers, async,
# the same model, batch, split and file; Paddle by its feed loop and by its InMemoryDataset
# (its C++ data feed), the faster counting. samples/s: the training loops' samples over their time.
paddle_lines="${PADDLE_LINES:-500000}"
[ "$paddle_lines" = 0 ] && exit 0
made="$(cd "$build_dir/tests" && python3 "$OLDPWD/tests/e2e/paddle_venv.py" 2>&1 | tail -1)"
case "$made" in
  "PaddlePaddle 2.6.2: "*) paddle_python="${made#PaddlePaddle 2.6.2: }" ;;
  *) echo "wide&deep against Paddle: left out, no Paddle 2.6.2 venv ($made)"; exit 0 ;;
esac
bash scripts/gen_criteo.sh "$paddle_lines" "$work/paddle.txt" >/dev/null
runs="${RUNS:-3}"
peer="$(realpath scripts/paddle_wide_deep_ps.py)"
echo "wide&deep async, 1 server + 2 workers, $paddle_lines generated lines (80% train), batch 512 per worker, 1 pass, median of $runs:"
for setup in ours paddle-feed paddle-dataset; do
  for i in $(seq "$runs"); do
    dir="$work/vs-$setup-$i"
    mkdir -p "$dir"
    case "$setup" in
      ours)
        (cd "$dir" && "$launcher" --server_num=1 --worker_num=2 "$train" --config "$config" --set data_dir="$work/paddle.txt" \
            --set batch_size=512 --set log_every=100000 --set ps.mode=async >/dev/null 2>&1)
        python3 -c "import json; m=json.load(open('$dir/output/metrics.json')); print(m['samples_per_sec'], m['test_auc'])" ;;
      paddle-*)
        (cd "$dir" && "$launcher" --server_num=1 --worker_num=2 "$paddle_python" "$peer" "$work/paddle.txt" 512 "${setup#paddle-}" >/dev/null 2>&1)
        cat "$dir"/log/workerlog.* | python3 -c "
import json, sys
lines = [json.loads(l) for l in sys.stdin if l.startswith('{')]
workers = [l for l in lines if 'worker' in l]
print(sum(w['samples'] for w in workers) / max(w['seconds'] for w in workers), [l['test_auc'] for l in lines if 'test_auc' in l][0])" ;;
    esac
  done | sort -g | sed -n "$(((runs + 1) / 2))p" > "$work/vs-$setup"
done
python3 - "$work" <<'PY'
import sys
work = sys.argv[1]
rate = {s: [float(x) for x in open(f"{work}/vs-{s}").read().split()] for s in ("ours", "paddle-feed", "paddle-dataset")}
best = max(("paddle-feed", "paddle-dataset"), key=lambda s: rate[s][0])
for s in ("ours", "paddle-feed", "paddle-dataset"):
    print(f"  {s:16} {rate[s][0]:9.0f} samples/s  test AUC {rate[s][1]:.4f}")
print(f"  ours / Paddle's faster ({best}): {rate['ours'][0] / rate[best][0]:.2f}x")
PY
