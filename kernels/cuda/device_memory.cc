#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <stdexcept>

#include "kernels/device_memory.h"

namespace paddle::kernels {
namespace {

void check(cudaError_t status, const char* what, size_t bytes = 0) {
  if (status == cudaSuccess) return;
  if (bytes > 0)
    throw std::runtime_error(fmt::format("CUDA {} of {} bytes failed: {}", what, bytes, cudaGetErrorString(status)));
  throw std::runtime_error(fmt::format("CUDA {} failed: {}", what, cudaGetErrorString(status)));
}

}  // namespace

void* cuda_allocate(size_t bytes, int device) {
  check(cudaSetDevice(device), "cudaSetDevice");
  void* pointer = nullptr;
  check(cudaMallocAsync(&pointer, bytes, cudaStreamLegacy), "allocation", bytes);
  return pointer;
}

void cuda_release(void* pointer) noexcept { cudaFreeAsync(pointer, cudaStreamLegacy); }

void cuda_copy(void* dst, const void* src, size_t bytes, CopyKind kind) {
  switch (kind) {
    case CopyKind::kHostToDevice: check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "host-to-device copy", bytes); break;
    case CopyKind::kDeviceToHost: check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "device-to-host copy", bytes); break;
    case CopyKind::kDeviceToDevice:
      check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, cudaStreamLegacy), "device copy", bytes);
      break;
  }
}

void cuda_zero(void* pointer, size_t bytes) { check(cudaMemsetAsync(pointer, 0, bytes, cudaStreamLegacy), "memset", bytes); }

}  // namespace paddle::kernels
