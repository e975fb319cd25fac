#!/usr/bin/env bash
# Installs every Debian package that building, testing, packaging and running paddle-launch needs
# (clang 16, lld, libFuzzer and llvm-symbolizer for scripts/sanitize.sh and scripts/fuzz.sh; file,
# which cpack's dpkg-shlibdeps runs, pip and venv for scripts/package.sh, and ccache, which the
# build scripts compile through when it is there; protobuf for train's TensorBoard event files,
# help2man for the man pages, Prometheus for the test that scrapes a job's page, and gdb, whose
# stacks a hang's report shows).
# Nothing may rely on a package that another only recommends: installs use --no-install-recommends,
# as on a fresh machine (libdnnl-dev's CMake package needs ocl-icd-opencl-dev, which it only
# recommends). Idempotent and non-interactive: packages already present are left alone, and
# `apt-get update` runs at most once per call (only when something is missing).
set -euo pipefail

packages=(
  build-essential cmake pkg-config python3
  libcli11-dev libboost-dev libboost-system-dev libboost-filesystem-dev
  nlohmann-json3-dev libfmt-dev libeigen3-dev libdnnl-dev ocl-icd-opencl-dev doctest-dev libgloo-dev
  zlib1g-dev librocksdb-dev dataset-fashion-mnist
  iproute2 procps openmpi-bin slurmctld slurmd slurm-client munge
  etcd-server openssh-server openssh-client rsync
  binutils python3-torch chromium curl gnuplot-nox gdb
  file python3-pip python3-venv ccache
  libprotobuf-dev protobuf-compiler help2man man-db prometheus
  clang-16 lld-16 llvm-16 libclang-rt-16-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup: all ${#packages[@]} packages present"
fi
