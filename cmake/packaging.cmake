# The Debian package: `cpack` in a build directory writes paddle-launch_VERSION_ARCH.deb there.
# One package holds every install component (cmake/install.cmake): paddle-launch and train in
# /usr/bin with their man pages (gzip'd, /usr/share/man/man1) and bash completions
# (/usr/share/bash-completion/completions; cmake/from_help.cmake), train's sample configs in
# /usr/share/paddle-launch/configs, and the runtime's static libraries, headers and CMake package
# under /usr.
#
# The package users install comes from a portable, CPU-only build (scripts/package.sh):
# -DPADDLE_LAUNCH_PORTABLE=ON runs on any x86-64, and -DPADDLE_LAUNCH_WITH_CUDA=OFF because CUDA's
# libraries under /usr/local/cuda belong to no Debian package, so no Depends could name them.
# cpack on any other build still works (the tests package the tree they test) but says so.
#
# Depends: the shared libraries the programs load, as dpkg-shlibdeps finds them (with versions).
# Recommends: what find_package(PaddleLaunch) needs besides, since the libraries are static and
# PaddleLaunchConfig.cmake finds their dependencies (find_dependency): the -dev packages of fmt,
# nlohmann-json, Gloo, Eigen, zlib, Boost, RocksDB and oneDNN, and OpenCL's, without which oneDNN's own
# CMake config fails. apt installs Recommends by default; --no-install-recommends gives the
# programs alone. Suggests: cmake and g++, to build against the package, and the Fashion-MNIST
# images that train's default config reads.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME paddle-launch)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "paddle-launch maintainers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "distributed-training launcher and C++ training runtime")
# The Description field: the summary, then these lines.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "paddle-launch starts and supervises the processes of a distributed training job, with the
flags, environment variables and logs of Paddle's python -m paddle.distributed.launch.
train is a config-driven data-parallel and parameter-server trainer.
The runtime's libraries, headers and CMake package (find_package(PaddleLaunch)) are included.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # paddle-launch_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# cpack packages what is built and never compiles: its preinstall step (and `make install`) no
# longer builds every target first. Build, then package; the e2e test packages the tree it tests.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

set(_recommends libfmt-dev nlohmann-json3-dev libgloo-dev libeigen3-dev zlib1g-dev libboost-dev librocksdb-dev)
if(PADDLE_LAUNCH_HAVE_ONEDNN)
  list(APPEND _recommends libdnnl-dev ocl-icd-opencl-dev)
endif()
list(JOIN _recommends ", " CPACK_DEBIAN_PACKAGE_RECOMMENDS)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "cmake, g++, dataset-fashion-mnist")

# What makes this build's package other than the one users get, said each time cpack runs.
set(_not_for_users "")
if(NOT PADDLE_LAUNCH_PORTABLE)
  list(APPEND _not_for_users "it runs only on CPUs with this one's instructions (-DPADDLE_LAUNCH_PORTABLE=ON builds for any x86-64)")
endif()
if(PADDLE_LAUNCH_HAVE_CUDA)
  list(APPEND _not_for_users "it loads CUDA's libraries from /usr/local/cuda, which its Depends cannot name (-DPADDLE_LAUNCH_WITH_CUDA=OFF)")
endif()
set(CPACK_PROJECT_CONFIG_FILE "${PROJECT_BINARY_DIR}/CPackProjectConfig.cmake")
if(_not_for_users)
  list(JOIN _not_for_users "; " _why)
  file(WRITE "${CPACK_PROJECT_CONFIG_FILE}"
       "message(WARNING \"this package is not for users: ${_why}. scripts/package.sh builds theirs.\")\n")
else()
  file(WRITE "${CPACK_PROJECT_CONFIG_FILE}" "")
endif()

include(CPack)
