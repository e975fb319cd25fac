#!/usr/bin/env bash
# Plots a finished (or running) run: scripts/plot_metrics.sh RUN_DIR [OUT.png]
# RUN_DIR is where the job ran: its output/metrics.json (the per-epoch history) and its
# log/metrics.*.jsonl (a line per logged step and rank). Writes OUT.png (default
# RUN_DIR/metrics.png) with gnuplot (Debian's gnuplot-nox): the loss by step per rank, and the
# train loss, test loss and test accuracy by epoch.
set -euo pipefail
run_dir="${1:?usage: plot_metrics.sh RUN_DIR [OUT.png]}"
out="${2:-$run_dir/metrics.png}"
command -v gnuplot >/dev/null || { echo "plot_metrics.sh: gnuplot not found (apt-get install gnuplot-nox)" >&2; exit 2; }
[ -f "$run_dir/output/metrics.json" ] || ls "$run_dir"/log/metrics.*.jsonl >/dev/null 2>&1 ||
  { echo "plot_metrics.sh: $run_dir has neither output/metrics.json nor log/metrics.*.jsonl" >&2; exit 2; }
data="$(mktemp -d)"
trap 'rm -rf "$data"' EXIT
# Tables for gnuplot: steps.RANK.dat (step loss) and epochs.dat (epoch train_loss test_loss test_acc).
python3 - "$run_dir" "$data" <<'PY'
import glob, json, math, os, sys
run, data = sys.argv[1], sys.argv[2]
for path in sorted(glob.glob(os.path.join(run, "log", "metrics.*.jsonl"))):
    name = os.path.basename(path)[len("metrics."):-len(".jsonl")]
    with open(path) as f, open(os.path.join(data, f"steps.{name}.dat"), "w") as out:
        for line in f:
            try:
                m = json.loads(line)
            except ValueError:
                continue  # a line being written
            if isinstance(m.get("loss"), (int, float)) and math.isfinite(m["loss"]):
                out.write(f"{m['step']} {m['loss']}\n")
history = []
try:
    with open(os.path.join(run, "output", "metrics.json")) as f:
        history = json.load(f).get("history", [])
except (OSError, ValueError):
    pass
with open(os.path.join(data, "epochs.dat"), "w") as out:
    for h in history:
        value = lambda k: h[k] if isinstance(h.get(k), (int, float)) else "NaN"
        out.write(f"{h['epoch']} {value('train_loss')} {value('test_loss')} {value('test_acc')}\n")
PY
{
  echo "set terminal pngcairo size 1200,480 font 'sans,10'"
  echo "set output '$out'"
  echo "set multiplot layout 1,2 title 'paddle-launch run: $(basename "$(realpath "$run_dir")")'"
  echo "set title 'loss by step'; set xlabel 'step'; set ylabel 'loss'; set key top right"
  plots=()
  for f in "$data"/steps.*.dat; do
    [ -s "$f" ] || continue
    name="${f##*/steps.}"; name="${name%.dat}"
    plots+=("'$f' using 1:2 with lines title '${name/./ }'")
  done
  if ((${#plots[@]})); then (IFS=,; echo "plot ${plots[*]}"); else echo "set label 'no metrics logs' at graph 0.4,0.5; plot NaN notitle"; fi
  echo "unset label; set title 'by epoch'; set xlabel 'epoch'; set ylabel 'loss'; set y2label 'test accuracy'"
  echo "set y2tics; set ytics nomirror; set key bottom left"
  if [ -s "$data/epochs.dat" ]; then
    echo "plot '$data/epochs.dat' using 1:2 with linespoints title 'train loss', '' using 1:3 with linespoints title 'test loss', '' using 1:4 axes x1y2 with linespoints title 'test accuracy'"
  else
    echo "set label 'no history in output/metrics.json' at graph 0.3,0.5; plot NaN notitle"
  fi
  echo "unset multiplot"
} | gnuplot
echo "$out"
