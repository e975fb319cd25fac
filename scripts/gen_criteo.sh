#!/usr/bin/env bash
# Writes a Criteo-format file (label TAB 13 integers TAB 26 hex strings, some fields empty) with a
# learnable signal: the click probability depends on a few dense features and categorical values.
#   scripts/gen_criteo.sh LINES OUTPUT [SEED] [UNIQUE_SLOTS]
# UNIQUE_SLOTS (0 by default, at most 18) of the last slots take a value of their own on every
# line, so that the sparse tables grow by that many rows per line (big tables for benchmarks).
set -euo pipefail
lines="${1:?usage: gen_criteo.sh LINES OUTPUT [SEED]}"
output="${2:?usage: gen_criteo.sh LINES OUTPUT [SEED]}"
seed="${3:-7}"
unique="${4:-0}"
mkdir -p "$(dirname "$output")"
python3 - "$lines" "$output" "$seed" "$unique" <<'PY'
import math, random, sys
lines, output, seed, unique = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
if not 0 <= unique <= 18:
    sys.exit(f"gen_criteo.sh: UNIQUE_SLOTS {unique} is not in 0..18 (the first 8 slots carry the signal)")
rng = random.Random(seed)
# Each categorical slot draws from a small vocabulary; a hidden weight per value drives clicks.
vocab = [[f"{rng.getrandbits(32):08x}" for _ in range(50 + 10 * s)] for s in range(26)]
weight = [{v: rng.gauss(0, 0.6) for v in slot} for slot in vocab]
with open(output, "w") as out:
    for line in range(lines):
        dense = [rng.randint(0, 20), rng.randint(-3, 600), rng.randint(0, 100)] + \
                [rng.randint(0, 50) for _ in range(10)]
        cats = [rng.choice(slot) for slot in vocab]
        for s in range(26 - unique, 26):
            cats[s] = f"{line:07x}{s:02x}"
        z = -1.2 + 1.5 * (dense[0] / 20.0) - 1.0 * (dense[2] / 100.0)
        z += sum(weight[s][c] for s, c in enumerate(cats[:8]))
        label = 1 if rng.random() < 1 / (1 + math.exp(-z)) else 0
        fields = [str(label)] + ["" if rng.random() < 0.05 else str(d) for d in dense] + \
                 ["" if rng.random() < 0.03 else c for c in cats]
        out.write("\t".join(fields) + "\n")
PY
echo "wrote $lines lines to $output"
