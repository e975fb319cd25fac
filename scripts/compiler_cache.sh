# Sourced by scripts/build.sh and scripts/sanitize.sh (from the checkout's root): compile through
# ccache when it is installed (scripts/setup.sh installs it), so a second build of the same
# sources, in this checkout or in another clone on the machine (CI's fresh clones), takes
# seconds per file instead of minutes per library. CCACHE_BASEDIR makes the checkout's paths
# relative in what ccache hashes, so clones at other paths share the cache. Sets the array
# compiler_cache to the cmake arguments (empty without ccache, or with PADDLE_CCACHE=0).
compiler_cache=()
if [ "${PADDLE_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
  compiler_cache=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
                  -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
