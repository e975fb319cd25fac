#pragma once
// The CUDA runtime's device count, in builds with CUDA; nothing in CPU-only builds or when the
// runtime reports an error (no driver, no device).

#include <optional>

namespace paddle::launcher {

std::optional<int> cuda_runtime_device_count();

}  // namespace paddle::launcher
