#pragma once
// What the CUDA halves share and nothing else includes: status checks that throw naming the
// call, the launch geometry of element-wise kernels, and the inside of Handles.

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <array>
#include <map>
#include <stdexcept>
#include <string>

#include "kernels/cuda/handles.h"

namespace paddle::kernels::cuda {

inline void check(cudaError_t s, const char* what) {
  if (s != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(s));
}
inline void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(s));
}
inline void check(cudnnStatus_t s, const char* what) {
  if (s != CUDNN_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": " + cudnnGetErrorString(s));
}

constexpr int kThreads = 256;
inline int blocks_for(size_t n) { return static_cast<int>((n + kThreads - 1) / kThreads); }

struct Handles::Impl {
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;
  cudnnHandle_t cudnn = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  bool tf32 = false;
  // The convolution algorithm cuDNN measured fastest, by operation, data type, layout and shape
  // (found once each).
  std::map<std::array<int, 11>, int> conv_algorithms;

  void* ensure_workspace(size_t bytes) {
    if (bytes > workspace_bytes) {
      if (workspace != nullptr) cudaFree(workspace);
      check(cudaMalloc(&workspace, bytes), "cudaMalloc(workspace)");
      workspace_bytes = bytes;
    }
    return workspace;
  }
};

}  // namespace paddle::kernels::cuda
