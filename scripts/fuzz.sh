#!/usr/bin/env bash
# Fuzzes the tests/fuzz targets with libFuzzer under ASan + UBSan, built in build-asan as
# scripts/sanitize.sh configures it (so the libraries are built once under ASan for both):
#   scripts/fuzz.sh                       every target for 1,000,000 executions (RUNS=...)
#   scripts/fuzz.sh --seconds 5           every target for 5 seconds (what CI runs)
#   scripts/fuzz.sh [--seconds N] ps_server kv_store    only those targets
# Targets run JOBS at a time (default: the core count). Per target it prints the executions,
# libFuzzer's coverage figures (cov: edges, ft: features) and the failures; it exits non-zero
# when any target crashed, hit undefined behaviour, leaked, hung or ran out of memory. Each
# failing input is kept as fuzz-out/<target>/crash-* (or leak-, timeout-, oom-); once fixed,
# add it to tests/fuzz/regressions/<target>/ so the ordinary suite replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=""
targets=()
while (($#)); do
  case $1 in
    --seconds) seconds=${2:?--seconds needs a number}; shift 2 ;;
    --seconds=*) seconds=${1#--seconds=}; shift ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
((${#targets[@]})) || mapfile -t targets < <(sed -n 's/^add_fuzz_target(\([a-z_0-9]*\) .*/\1/p' tests/fuzz/CMakeLists.txt)
jobs="${JOBS:-$(nproc)}"

SANITIZE_CONFIGURE_ONLY=1 source scripts/sanitize.sh
configure_asan
cmake --build build-asan -j "$jobs" --target "${targets[@]/#/fuzz_}" >/dev/null

out="$PWD/fuzz-out"
# Targets that read files write them to a scratch folder under TMPDIR: memory when there is some.
[ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
limit=(-runs="${RUNS:-1000000}")
[ -n "$seconds" ] && limit=(-max_total_time="$seconds")

fuzz() {  # TARGET: one libFuzzer run on a copy of its seeds, log in fuzz-out/TARGET/log
  local t=$1 dir="$out/$1"
  rm -rf "$dir" && mkdir -p "$dir/corpus"
  local inputs=("$dir/corpus" "tests/fuzz/corpus/$t")
  [ -d "tests/fuzz/regressions/$t" ] && inputs+=("tests/fuzz/regressions/$t")
  # -detect_leaks=0: no leak check after each input that allocated more than it freed (it made
  # the config and command-line targets 5-7x slower); LeakSanitizer still checks at exit.
  "build-asan/tests/fuzz/fuzz_$t" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -detect_leaks=0 \
    -artifact_prefix="$dir/" "${inputs[@]}" >"$dir/log" 2>&1 || true
}

for t in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
  fuzz "$t" &
done
wait

failed=0
printf '%-16s %12s %8s %8s %s\n' target executions cov ft failures
for t in "${targets[@]}"; do
  log="$out/$t/log"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
  ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
  artifacts=$(find "$out/$t" -maxdepth 1 -type f | grep -cE '/(crash|leak|timeout|oom)-' || true)
  if [ -z "$execs" ] || ((artifacts > 0)) || grep -qE '^==[0-9]+==ERROR|runtime error:|^SUMMARY: ' "$log"; then
    failed=1
    status="FAILED: $artifacts input(s) in fuzz-out/$t/, see fuzz-out/$t/log"
  else
    status=0
  fi
  printf '%-16s %12s %8s %8s %s\n' "$t" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$status"
done
exit $failed
