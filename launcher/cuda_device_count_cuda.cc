#include <cuda_runtime_api.h>

#include "cuda_device_count.h"

namespace paddle_launch {

std::optional<int> cuda_runtime_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return std::nullopt;
  return count;
}

}  // namespace paddle_launch
