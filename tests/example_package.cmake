# Installs BINARY_DIR's build into PREFIX, builds runtime/example against the installed
# PaddleLaunch package (as a user's project would), and leaves the binary in EXAMPLE_DIR. PREFIX
# starts empty: an earlier install's headers, since moved, would still be found there.
include(${SOURCE_DIR}/cmake/run_steps.cmake)
file(REMOVE_RECURSE ${PREFIX})
run_steps("package step"
    "${CMAKE_COMMAND};--install;${BINARY_DIR};--prefix;${PREFIX}"
    "${CMAKE_COMMAND};-S;${SOURCE_DIR}/runtime/example;-B;${EXAMPLE_DIR};-DCMAKE_PREFIX_PATH=${PREFIX}"
    "${CMAKE_COMMAND};--build;${EXAMPLE_DIR};-j;2")
