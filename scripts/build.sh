#!/usr/bin/env bash
# Configures and builds paddle-launch into BUILD_DIR (default: build). Extra arguments go to cmake.
# DEBUG_INFO=0 (CI) drops -g from the default RelWithDebInfo build: the same -O3 code (CMakeLists.txt
# raises -O2 to -O3), about a quarter less compile time on the heavy files.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build}"
flags=()
[ "${DEBUG_INFO:-1}" = 0 ] && flags+=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG")
source scripts/compiler_cache.sh
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" "${flags[@]}" "${compiler_cache[@]}" "$@" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
