# The man pages and bash completions of paddle-launch and train, written at build time from each
# program's own --help, so a new flag reaches both without anyone editing a list. The target
# program_docs (in `all`) builds them; they install with the programs (component `programs`), so
# the .deb and the wheel both carry them. Without help2man (Debian's help2man) the build goes on
# without man pages.
include(GNUInstallDirs)
find_program(PADDLE_LAUNCH_HELP2MAN help2man)
find_program(PADDLE_LAUNCH_GZIP gzip)
find_program(PADDLE_LAUNCH_BASH bash REQUIRED)
set(_docs_dir ${PROJECT_BINARY_DIR}/program_docs)

# A wheel (scikit-build-core) puts them in its data directory, which pip installs under the
# environment's prefix: PREFIX/share/man is on man's path whenever PREFIX/bin is on PATH.
if(SKBUILD)
  set(_share_dir "${SKBUILD_DATA_DIR}/share")
else()
  set(_share_dir "${CMAKE_INSTALL_DATADIR}")
endif()
if(PADDLE_LAUNCH_HELP2MAN AND PADDLE_LAUNCH_GZIP)
  set(_man_pages ON)
else()
  message(STATUS "help2man or gzip not found: no man pages (Debian: apt install help2man)")
  set(_man_pages OFF)
endif()

set(_programs paddle-launch train)
set(_outputs "")
# add_program_docs(TARGET NAME [VERSION_STRING]): NAME is the man page's one-line summary; a program
# without --version gives VERSION_STRING to help2man instead.
function(add_program_docs target name)
  set(completion ${_docs_dir}/completions/${target})
  add_custom_command(OUTPUT ${completion}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${_docs_dir}/completions
    COMMAND ${PADDLE_LAUNCH_BASH} ${PROJECT_SOURCE_DIR}/scripts/gen_completion.sh $<TARGET_FILE:${target}> ${target} ${completion}
    DEPENDS ${target} ${PROJECT_SOURCE_DIR}/scripts/gen_completion.sh VERBATIM)
  install(FILES ${completion} DESTINATION "${_share_dir}/bash-completion/completions" COMPONENT programs)
  list(APPEND _outputs ${completion})
  if(_man_pages)
    set(page ${_docs_dir}/man1/${target}.1)
    set(version "")
    if(ARGC GREATER 2)
      set(version --version-string=${ARGV2})
    endif()
    # help2man appends this file's SEE ALSO section, naming the other programs.
    set(others ${_programs})
    list(REMOVE_ITEM others ${target})
    list(TRANSFORM others PREPEND ".BR ")
    list(TRANSFORM others APPEND " (1)")
    list(JOIN others ",\n" see_also)
    file(CONFIGURE OUTPUT ${_docs_dir}/${target}.h2m CONTENT "[SEE ALSO]\n${see_also}\n" @ONLY)
    add_custom_command(OUTPUT ${page}.gz
      COMMAND ${CMAKE_COMMAND} -E make_directory ${_docs_dir}/man1
      COMMAND ${PADDLE_LAUNCH_HELP2MAN} --no-info --name=${name} ${version} --include=${_docs_dir}/${target}.h2m
              --output=${page} $<TARGET_FILE:${target}>
      COMMAND ${PADDLE_LAUNCH_GZIP} -9nf ${page}
      DEPENDS ${target} ${_docs_dir}/${target}.h2m VERBATIM)
    install(FILES ${page}.gz DESTINATION "${_share_dir}/man/man1" COMPONENT programs)
    list(APPEND _outputs ${page}.gz)
  endif()
  set(_outputs ${_outputs} PARENT_SCOPE)
endfunction()

add_program_docs(paddle-launch "start and supervise the processes of a distributed training job")
add_program_docs(train "config-driven data-parallel and parameter-server trainer" ${PROJECT_VERSION})
add_custom_target(program_docs ALL DEPENDS ${_outputs})
