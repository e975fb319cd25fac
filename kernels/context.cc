#include "kernels/context.h"

#include <fmt/format.h>

#include <stdexcept>

#include "common/error.h"

#ifdef PADDLE_LAUNCH_WITH_CUDA
#include "kernels/cuda/handles.h"
#endif

namespace paddle::kernels {

void throw_cuda_not_built(const char* what) {
  throw common::ConfigError(fmt::format(
      "{} requested, but this build has no CUDA support (nvcc was not found, or cmake ran with "
      "-DPADDLE_LAUNCH_WITH_CUDA=OFF); set device=cpu, or rebuild where a CUDA toolkit is installed",
      what));
}

Context::Context() = default;
Context::~Context() = default;
Context::Context(Context&&) noexcept = default;
Context& Context::operator=(Context&&) noexcept = default;

const Context& Context::host() {
  static const Context cpu;
  return cpu;
}

#ifdef PADDLE_LAUNCH_WITH_CUDA

namespace {

int checked_device(int device) {
  const int devices = cuda::device_count();
  if (device < 0 || device >= devices)
    throw std::runtime_error(fmt::format("gpu:{} requested, but this process sees {} CUDA device(s)", device, devices));
  return device;
}

}  // namespace

Context::Context(int device, bool tf32) : handles_(std::make_unique<cuda::Handles>(checked_device(device), tf32)) {}

bool Context::is_cuda() const { return handles_ != nullptr; }

void Context::synchronize() const {
  if (handles_) handles_->synchronize_device();
}

cuda::Handles& Context::cuda() const {
  if (!handles_) throw std::logic_error("a CUDA kernel was asked for on the CPU");
  return *handles_;
}

int cuda_device_count() { return cuda::device_count(); }

#else

Context::Context(int device, bool) { throw_cuda_not_built(fmt::format("gpu:{}", device).c_str()); }
bool Context::is_cuda() const { return false; }
void Context::synchronize() const {}
cuda::Handles& Context::cuda() const { throw std::logic_error("a CUDA kernel was asked for on the CPU"); }
int cuda_device_count() { return 0; }

#endif

}  // namespace paddle::kernels
