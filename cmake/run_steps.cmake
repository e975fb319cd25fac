# run_steps(<what> <step>...): runs each step, a command line given as one ;-separated argument,
# in order, and stops at the first that fails with "<what> failed", the step and its output.
function(run_steps what)
  math(EXPR last "${ARGC} - 1")
  foreach(i RANGE 1 ${last})
    set(step "${ARGV${i}}")
    execute_process(COMMAND ${step} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "${what} failed (${rc}): ${step}\n${out}\n${err}")
    endif()
  endforeach()
endfunction()
