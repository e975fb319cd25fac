#!/usr/bin/env bash
# Writes a Criteo-format file (label TAB 13 integers TAB 26 hex strings, some fields empty) with a
# learnable signal: the click probability depends on a few dense features and categorical values.
#   scripts/gen_criteo.sh LINES OUTPUT [SEED]
set -euo pipefail
lines="${1:?usage: gen_criteo.sh LINES OUTPUT [SEED]}"
output="${2:?usage: gen_criteo.sh LINES OUTPUT [SEED]}"
seed="${3:-7}"
mkdir -p "$(dirname "$output")"
python3 - "$lines" "$output" "$seed" <<'PY'
import math, random, sys
lines, output, seed = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
rng = random.Random(seed)
# Each categorical slot draws from a small vocabulary; a hidden weight per value drives clicks.
vocab = [[f"{rng.getrandbits(32):08x}" for _ in range(50 + 10 * s)] for s in range(26)]
weight = [{v: rng.gauss(0, 0.6) for v in slot} for slot in vocab]
with open(output, "w") as out:
    for _ in range(lines):
        dense = [rng.randint(0, 20), rng.randint(-3, 600), rng.randint(0, 100)] + \
                [rng.randint(0, 50) for _ in range(10)]
        cats = [rng.choice(slot) for slot in vocab]
        z = -1.2 + 1.5 * (dense[0] / 20.0) - 1.0 * (dense[2] / 100.0)
        z += sum(weight[s][c] for s, c in enumerate(cats[:8]))
        label = 1 if rng.random() < 1 / (1 + math.exp(-z)) else 0
        fields = [str(label)] + ["" if rng.random() < 0.05 else str(d) for d in dense] + \
                 ["" if rng.random() < 0.03 else c for c in cats]
        out.write("\t".join(fields) + "\n")
PY
echo "wrote $lines lines to $output"
