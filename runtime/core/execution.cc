#include "runtime/core/execution.h"

namespace paddle::runtime {

Execution::Execution(const Device& device, bool tf32, kernels::CpuKernels cpu)
    : device_(device), context_(device.is_cuda() ? kernels::Context(device.index, tf32) : kernels::Context(cpu)) {}

Execution::~Execution() = default;

}  // namespace paddle::runtime
