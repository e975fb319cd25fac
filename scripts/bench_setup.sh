# Sourced by the bench_*.sh scripts with the build output each needs as $1 (a path under the
# build folder): moves to the repository root, builds when that output is missing, and sets
# build_dir, launcher, train, cpu (model and core count) and a scratch folder $work removed on exit.
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build_dir="${BUILD_DIR:-build}"
[ -x "$build_dir/$1" ] || bash scripts/build.sh >/dev/null
launcher="$(realpath "$build_dir/launcher/paddle-launch")"
train="$(realpath "$build_dir/runtime/train")"
cpu="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
