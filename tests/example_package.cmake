# Installs BINARY_DIR's build into PREFIX, builds runtime/example against the installed
# PaddleLaunch package (as a user's project would), and leaves the binary in EXAMPLE_DIR.
foreach(step
    "${CMAKE_COMMAND};--install;${BINARY_DIR};--prefix;${PREFIX}"
    "${CMAKE_COMMAND};-S;${SOURCE_DIR}/runtime/example;-B;${EXAMPLE_DIR};-DCMAKE_PREFIX_PATH=${PREFIX}"
    "${CMAKE_COMMAND};--build;${EXAMPLE_DIR};-j;2")
  execute_process(COMMAND ${step} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "step failed (${rc}): ${step}\n${out}\n${err}")
  endif()
endforeach()
