#include "cuda_device_count.h"

namespace paddle_launch {

std::optional<int> cuda_runtime_device_count() { return std::nullopt; }

}  // namespace paddle_launch
