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

std::string choice_cache_from(const char* setting, const char* xdg_cache_home, const char* home) {
  if (setting != nullptr) return std::string(setting) == "off" ? "" : setting;
  if (xdg_cache_home != nullptr && *xdg_cache_home != '\0')
    return std::string(xdg_cache_home) + "/paddle-launch/kernel-choices.json";
  if (home != nullptr && *home != '\0') return std::string(home) + "/.cache/paddle-launch/kernel-choices.json";
  return "";
}

}  // namespace paddle::kernels
