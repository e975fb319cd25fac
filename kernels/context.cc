#include "kernels/context.h"

#include <fmt/format.h>

#include <string>

#include "common/error.h"

namespace paddle::kernels {

void throw_cuda_not_built(const char* what) {
  throw common::ConfigError(fmt::format(
      "{} requested, but this build has no CUDA support (nvcc was not found, or cmake ran with "
      "-DPADDLE_LAUNCH_WITH_CUDA=OFF); set device=cpu, or rebuild where a CUDA toolkit is installed",
      what));
}

const Context& Context::host() {
  static const Context cpu(CpuKernels::kPlain);
  return cpu;
}

bool Context::uses_onednn() const { return onednn_ != nullptr; }

CpuKernels cpu_kernels_from(const char* value) {
  const std::string v = value != nullptr ? value : "";
  if (v.empty() || v == "onednn") return CpuKernels::kOneDnn;
  if (v == "onednn:library") return CpuKernels::kOneDnnLibrary;
  if (v == "onednn:ours") return CpuKernels::kOneDnnOurs;
  if (v == "plain") return CpuKernels::kPlain;
  throw common::ConfigError(
      fmt::format("PADDLE_CPU_KERNELS={} is not onednn, onednn:library, onednn:ours or plain", v));
}

}  // namespace paddle::kernels
