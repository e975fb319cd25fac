#include <stdexcept>

#include "kernels/device_memory.h"

namespace paddle::kernels {
namespace {

[[noreturn]] void unavailable() {
  throw std::runtime_error("this build has no CUDA support (configured without nvcc); use the CPU");
}

}  // namespace

bool cuda_built() { return false; }
void* cuda_allocate(size_t, int) { unavailable(); }
void cuda_release(void*) noexcept {}
void cuda_copy(void*, const void*, size_t, CopyKind) { unavailable(); }
void cuda_zero(void*, size_t) { unavailable(); }

}  // namespace paddle::kernels
