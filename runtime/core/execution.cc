#include "runtime/core/execution.h"

#include <fmt/format.h>

#include <stdexcept>

#include "kernels/cuda_kernels.h"
#include "kernels/device_memory.h"

namespace paddle::runtime {

Execution::Execution(const Device& device, bool tf32) : device_(device) {
  if (!device.is_cuda()) return;
  if (!kernels::cuda_built())
    throw std::runtime_error(fmt::format("{} requested, but this build has no CUDA support", device.to_string()));
  const int devices = kernels::cuda::device_count();
  if (device.index < 0 || device.index >= devices)
    throw std::runtime_error(fmt::format("{} requested, but this process sees {} CUDA device(s)", device.to_string(),
                                         devices));
  handles_ = std::make_unique<kernels::cuda::Handles>(device.index, tf32);
}

Execution::~Execution() = default;

kernels::cuda::Handles& Execution::cuda() {
  if (!handles_) throw std::logic_error("a CUDA kernel was asked for on the CPU");
  return *handles_;
}

void Execution::synchronize() {
  if (handles_) handles_->synchronize_device();
}

}  // namespace paddle::runtime
