# Sanitizer builds (scripts/sanitize.sh), with clang:
#   -DPADDLE_LAUNCH_SANITIZE=address,undefined   ASan + UBSan, every finding fatal
#   -DPADDLE_LAUNCH_SANITIZE=thread               TSan
# Both apply to every target, so a sanitized build covers the libraries the tests link. Build only
# the `unit_tests` target there: nothing else is needed.
set(PADDLE_LAUNCH_SANITIZE "" CACHE STRING "Sanitizers for every target: address,undefined or thread (clang)")
if(PADDLE_LAUNCH_SANITIZE)
  add_compile_options(-fsanitize=${PADDLE_LAUNCH_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${PADDLE_LAUNCH_SANITIZE})
endif()

