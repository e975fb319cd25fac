# Finds nvcc, the CUDA runtime, cuDNN and NCCL. Sets PADDLE_LAUNCH_HAVE_CUDA and, when found,
# the imported targets CUDA::cudart_static, paddle::cudnn and paddle::nccl.
set(PADDLE_LAUNCH_HAVE_CUDA OFF)
if(PADDLE_LAUNCH_WITH_CUDA)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  # enable_language(CUDA) fills CMAKE_CUDA_ARCHITECTURES with nvcc's own default (sm_75 for CUDA
  # 13), so whether the user chose one must be read before it runs.
  if(NOT DEFINED CACHE{CMAKE_CUDA_ARCHITECTURES} AND NOT DEFINED ENV{CUDAARCHS})
    set(_paddle_default_cuda_architectures ON)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    set(_cuda_root "${CUDAToolkit_LIBRARY_ROOT}")
    find_library(PADDLE_CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR} ${_cuda_root}/lib64 /usr/local/cuda/lib64)
    find_library(PADDLE_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} ${_cuda_root}/lib64 /usr/local/cuda/lib64)
    find_path(PADDLE_CUDNN_INCLUDE cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
    find_path(PADDLE_NCCL_INCLUDE nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
    if(NOT PADDLE_CUDNN_LIBRARY OR NOT PADDLE_NCCL_LIBRARY OR NOT PADDLE_CUDNN_INCLUDE OR NOT PADDLE_NCCL_INCLUDE)
      message(FATAL_ERROR "nvcc found at ${CMAKE_CUDA_COMPILER} but cuDNN or NCCL is missing "
                          "(cudnn: ${PADDLE_CUDNN_LIBRARY}, nccl: ${PADDLE_NCCL_LIBRARY}); "
                          "install them under /usr/local/cuda or configure with -DPADDLE_LAUNCH_WITH_CUDA=OFF")
    endif()
    add_library(paddle::cudnn UNKNOWN IMPORTED)
    set_target_properties(paddle::cudnn PROPERTIES IMPORTED_LOCATION ${PADDLE_CUDNN_LIBRARY}
                                                   INTERFACE_INCLUDE_DIRECTORIES ${PADDLE_CUDNN_INCLUDE})
    add_library(paddle::nccl UNKNOWN IMPORTED)
    set_target_properties(paddle::nccl PROPERTIES IMPORTED_LOCATION ${PADDLE_NCCL_LIBRARY}
                                                  INTERFACE_INCLUDE_DIRECTORIES ${PADDLE_NCCL_INCLUDE})
    set(PADDLE_LAUNCH_HAVE_CUDA ON)
    # Ampere and Hopper machine code, each with its PTX (newer GPUs compile that at load time).
    if(_paddle_default_cuda_architectures)
      set(CMAKE_CUDA_ARCHITECTURES "80;90" CACHE STRING "CUDA architectures to build for" FORCE)
    endif()
    message(STATUS "CUDA: ${CMAKE_CUDA_COMPILER} (cuDNN ${PADDLE_CUDNN_LIBRARY}, NCCL ${PADDLE_NCCL_LIBRARY})")
  else()
    message(STATUS "CUDA: nvcc not found, building CPU-only")
  endif()
else()
  message(STATUS "CUDA: disabled by PADDLE_LAUNCH_WITH_CUDA=OFF, building CPU-only")
endif()
