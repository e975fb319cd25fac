#!/usr/bin/env bash
# Builds the two packages users install, both portable (any x86-64) and CPU-only, into dist/:
#   dist/paddle-launch_VERSION_ARCH.deb      cpack (cmake/packaging.cmake); build tree build-package/
#   dist/paddle_launch-VERSION-py3-none-*.whl scikit-build-core (pyproject.toml); build tree build-wheel/
# Both hold the programs with their man pages and bash completions (cmake/from_help.cmake).
# Extra arguments go to the .deb's cmake configure. ccache is used when installed. The wheel's
# build backend comes from PyPI through pip (PYTHON, default python3, must have pip).
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-python3}"
# cpack's Depends come from dpkg-shlibdeps, which needs file; the man pages both packages carry
# come from help2man (a build without it leaves them out, cmake/from_help.cmake).
for tool in file:file dpkg-shlibdeps:dpkg-dev help2man:help2man; do
  command -v "${tool%%:*}" >/dev/null ||
    { echo "package.sh: ${tool%%:*} is not installed; install the Debian package ${tool#*:}" >&2; exit 1; }
done
"$python" -m pip --version >/dev/null 2>&1 ||
  { echo "package.sh: $python has no pip; install python3-pip (Debian) or set PYTHON to a Python with pip" >&2; exit 1; }

# The .deb's flags are the ones pyproject.toml gives the wheel, so with ccache the wheel compiles
# nothing the .deb did; the two build trees sit at the same depth so that CCACHE_BASEDIR gives
# their compile lines the same paths.
flags=(-DCMAKE_BUILD_TYPE=Release -DPADDLE_LAUNCH_PORTABLE=ON -DPADDLE_LAUNCH_WITH_CUDA=OFF -DPADDLE_LAUNCH_BUILD_TESTS=OFF)
# One compiler name for both: pip's build backend would otherwise take Python's (g++) where CMake
# takes c++, and ccache hashes the name.
export CXX="${CXX:-c++}"
if command -v ccache >/dev/null; then
  flags+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache  # CMake's default for the wheel's configure
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
fi
jobs="${JOBS:-$(nproc)}"
mkdir -p dist
rm -f dist/paddle-launch_*.deb dist/paddle_launch-*.whl build-package/paddle-launch_*.deb

start=$SECONDS
cmake -S . -B build-package "${flags[@]}" "$@" >/dev/null
cmake --build build-package -j "$jobs"
(cd build-package && cpack >/dev/null)
deb=$(ls build-package/paddle-launch_*.deb)
cp "$deb" dist/
echo "package.sh: .deb built in $((SECONDS - start)) s"

start=$SECONDS
CMAKE_GENERATOR="Unix Makefiles" CMAKE_BUILD_PARALLEL_LEVEL="$jobs" \
  "$python" -m pip wheel . --no-deps -w dist -C build-dir=build-wheel
echo "package.sh: wheel built in $((SECONDS - start)) s"

echo "package.sh: the Debian package: $PWD/dist/$(basename "$deb")"
echo "            install: sudo apt install $PWD/dist/$(basename "$deb")"
for wheel in dist/paddle_launch-*.whl; do
  echo "package.sh: the pip package:    $PWD/$wheel"
  echo "            install: pip install $PWD/$wheel   (or pip install . from this directory)"
done
