# paddle_find_onednn(): find_package(dnnl) without its failure modes. Debian's libdnnl-dev is
# built with an OpenCL GPU runtime, so its CMake package runs find_package(OpenCL REQUIRED); the
# OpenCL headers come from ocl-icd-opencl-dev, which libdnnl-dev only recommends. Without them the
# package would stop the whole configure with a CMake stack. Here a missing OpenCL is one line
# line naming the Debian package, and the build goes on with the plain CPU kernels (dnnl_FOUND off).
function(paddle_find_onednn)
  find_file(_dnnl_config dnnl-config.cmake PATH_SUFFIXES cmake/dnnl lib/cmake/dnnl
            PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE} NO_CACHE)
  if(NOT _dnnl_config)
    return()
  endif()
  file(STRINGS "${_dnnl_config}" _needs_opencl REGEX "DNNL_GPU_RUNTIME \"OCL\"")
  if(_needs_opencl)
    find_path(_opencl_include CL/cl.h NO_CACHE)
    find_library(_opencl_library OpenCL NO_CACHE)
    if(NOT _opencl_include OR NOT _opencl_library)
      message(NOTICE "warning: oneDNN found, but its CMake package needs the OpenCL headers and library: install "
                      "Debian's ocl-icd-opencl-dev (scripts/setup.sh does); building without oneDNN")
      return()
    endif()
  endif()
  find_package(dnnl CONFIG QUIET)
  set(dnnl_FOUND ${dnnl_FOUND} PARENT_SCOPE)
  set(dnnl_VERSION ${dnnl_VERSION} PARENT_SCOPE)
endfunction()
