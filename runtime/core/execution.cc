#include "runtime/core/execution.h"

#include <fmt/format.h>

#include <stdexcept>

namespace paddle::runtime {
namespace {

kernels::Context context_for(const Device& device, bool tf32) {
  if (!device.is_cuda()) return kernels::Context();
  if (!kernels::cuda_built()) kernels::throw_cuda_not_built(device.to_string().c_str());
  const int devices = kernels::cuda_device_count();
  if (device.index < 0 || device.index >= devices)
    throw std::runtime_error(fmt::format("{} requested, but this process sees {} CUDA device(s)", device.to_string(),
                                         devices));
  return kernels::Context(device.index, tf32);
}

}  // namespace

Execution::Execution(const Device& device, bool tf32) : device_(device), context_(context_for(device, tf32)) {}

Execution::~Execution() = default;

}  // namespace paddle::runtime
