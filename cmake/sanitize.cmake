# Sanitizer and fuzzing builds (scripts/sanitize.sh, scripts/fuzz.sh), with clang:
#   -DPADDLE_LAUNCH_SANITIZE=address,undefined   ASan + UBSan, every finding fatal
#   -DPADDLE_LAUNCH_SANITIZE=thread               TSan
#   -DPADDLE_LAUNCH_FUZZ=ON                       also instrument for libFuzzer and link the tests/fuzz
#                                                 targets with its main instead of the replay main
# Both apply to every target, so a sanitized build covers the libraries the tests link. Build only
# the `unit_tests` or `fuzz_targets` target there: nothing else is needed.
set(PADDLE_LAUNCH_SANITIZE "" CACHE STRING "Sanitizers for every target: address,undefined or thread (clang)")
option(PADDLE_LAUNCH_FUZZ "Build the tests/fuzz targets with libFuzzer (clang)" OFF)

if(PADDLE_LAUNCH_SANITIZE)
  add_compile_options(-fsanitize=${PADDLE_LAUNCH_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${PADDLE_LAUNCH_SANITIZE})
endif()

if(PADDLE_LAUNCH_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "PADDLE_LAUNCH_FUZZ needs clang (CXX=clang++): libFuzzer is part of it")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
