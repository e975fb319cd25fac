#include "runtime/core/execution.h"

#include <stdexcept>
#include <string>

namespace paddle::runtime {

Execution::Execution(const Device& device, bool tf32, kernels::CpuKernels cpu, const std::string& choice_cache)
    : device_(device),
      context_(device.is_cuda() ? kernels::Context(device.index, tf32) : kernels::Context(cpu, choice_cache)) {}

Execution::~Execution() = default;

std::optional<kernels::DType> Execution::checked_half(std::optional<kernels::DType> half) {
  if (half && !kernels::is_half(*half))
    throw std::invalid_argument(std::string("autocast to ") + kernels::dtype_name(*half) +
                                ": the autocast kernels round to float16 or bfloat16 only");
  return half;
}

}  // namespace paddle::runtime
