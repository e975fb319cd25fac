#pragma once
// The CUDA runtime's device count, in builds with CUDA; nothing in CPU-only builds or when the
// runtime reports an error (no driver, no device).

#include <optional>

namespace paddle_launch {

std::optional<int> cuda_runtime_device_count();

}  // namespace paddle_launch
