#include "launcher/plan/cuda_device_count.h"

namespace paddle::launcher {

std::optional<int> cuda_runtime_device_count() { return std::nullopt; }

}  // namespace paddle::launcher
