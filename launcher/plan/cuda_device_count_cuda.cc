#include <cuda_runtime_api.h>

#include "launcher/plan/cuda_device_count.h"

namespace paddle::launcher {

std::optional<int> cuda_runtime_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return std::nullopt;
  return count;
}

}  // namespace paddle::launcher
