#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test (unit and end-to-end);
# then the unit tests under ASan + UBSan and TSan (scripts/sanitize.sh) and every fuzz target for
# FUZZ_SECONDS seconds (default 5; scripts/fuzz.sh), each stage's time printed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
start=$SECONDS
bash scripts/build.sh
# The CPU-only configuration is built below, under ASan (build-asan: CUDA off, every unit test),
# so its gcc twin (CTest's "build: CPU-only configuration", minutes of compiling) is left out here;
# `ctest -R CPU-only` runs it.
(cd "${BUILD_DIR:-build}" && ctest --output-on-failure -j "$(nproc)" --timeout 300 -E "^build: CPU-only")
echo "test.sh: build and tests took $((SECONDS - start)) s"
# -O0: the sanitizer builds compile two to three times faster; the fuzzing reuses build-asan.
export SANITIZE_OPT="${SANITIZE_OPT:--O0}"
bash scripts/sanitize.sh asan tsan
start=$SECONDS
bash scripts/fuzz.sh --seconds "${FUZZ_SECONDS:-5}"
echo "test.sh: fuzzing took $((SECONDS - start)) s"
