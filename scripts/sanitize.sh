#!/usr/bin/env bash
# The unit tests under sanitizers, each in its own clang 16 build (CPU only, no debug info, only
# the unit-test programs and the libraries they link), at SANITIZE_OPT (default -O1; CI's -O0
# compiles two to three times faster and runs slower):
#   asan   build-asan: every unit-test program under ASan + UBSan, any finding fatal, and the
#          tests/fuzz targets built for libFuzzer, replaying their corpora (scripts/fuzz.sh
#          fuzzes them there, so the libraries are built once under ASan)
#   tsan   build-tsan: the threaded ones under TSan: ps (server, client, async communicator, the
#          parameter stores), store (the key-value and HTTP store, liveness), collective (the Gloo,
#          shared-memory and hierarchical communicators, whose ranks are threads) and the
#          runtime's data parallelism (its communication thread)
#   scripts/sanitize.sh [asan] [tsan]      default: both; prints each stage's seconds
# Sourced with SANITIZE_CONFIGURE_ONLY=1 (scripts/fuzz.sh), it only defines configure_asan.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
jobs="${JOBS:-$(nproc)}"
export ASAN_SYMBOLIZER_PATH=/usr/bin/llvm-symbolizer-16
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tests/tsan.supp"

source scripts/compiler_cache.sh
configure() {  # DIR SANITIZERS [cmake args...]
  local dir=$1 sanitizers=$2
  shift 2
  # clang 16: 14's std::source_location does not work with libstdc++ 12
  CC=clang-16 CXX=clang++-16 cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="${SANITIZE_OPT:--O1}" \
    -DPADDLE_LAUNCH_WITH_CUDA=OFF -DPADDLE_LAUNCH_SANITIZE="$sanitizers" \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld-16 "${compiler_cache[@]}" "$@" >/dev/null
}

configure_asan() { configure build-asan address,undefined -DPADDLE_LAUNCH_FUZZ=ON; }
[ "${SANITIZE_CONFIGURE_ONLY:-0}" = 1 ] && return 0

stage() {  # NAME: configure, build and run one sanitizer's tests, timed
  local start=$SECONDS
  case $1 in
    asan)
      configure_asan
      cmake --build build-asan -j "$jobs" --target unit_tests fuzz_targets
      (cd build-asan && ctest --output-on-failure -j "$jobs" --timeout 300 -R "^(unit|fuzz replay): ")
      ;;
    tsan)
      configure build-tsan thread
      cmake --build build-tsan -j "$jobs" --target ps_unit_tests store_unit_tests collective_unit_tests runtime_unit_tests
      (cd build-tsan && ctest --output-on-failure -j "$jobs" --timeout 300 -R "^unit: ((ps|store|collective):|runtime: ?data parallelism)")
      ;;
    *) echo "sanitize.sh: unknown stage '$1' (asan or tsan)" >&2; exit 2 ;;
  esac
  echo "sanitize.sh: the $1 stage took $((SECONDS - start)) s"
}

stages=("$@")
((${#stages[@]})) || stages=(asan tsan)
for s in "${stages[@]}"; do stage "$s"; done
