#include "launcher/plan/gpu_devices.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "launcher/plan/address.h"
#include "launcher/plan/cuda_device_count.h"

namespace paddle::launcher {

GpuSelection parse_gpu_selection(const std::string& text, const std::optional<std::string>& cuda_visible_devices) {
  GpuSelection selection;
  std::vector<std::string> items = split_list(text, "--gpus");
  std::vector<std::string> visible;
  if (cuda_visible_devices && !cuda_visible_devices->empty())
    visible = split_list(*cuda_visible_devices, "CUDA_VISIBLE_DEVICES");

  for (size_t i = 0; i < items.size(); ++i) {
    const std::string& item = items[i];
    int id = -1;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), id);
    if (ec != std::errc() || end != item.data() + item.size() || id < 0)
      throw common::UsageError(fmt::format("--gpus: '{}' is not a GPU id (expected a non-negative integer)", item));
    if (std::find(items.begin(), items.begin() + i, item) != items.begin() + i)
      throw common::UsageError(fmt::format("--gpus: GPU id {} is listed twice", item));
    if (!visible.empty()) {
      auto it = std::find(visible.begin(), visible.end(), item);
      if (it == visible.end())
        throw common::UsageError(fmt::format("--gpus: GPU {} is not in CUDA_VISIBLE_DEVICES={}", item,
                                     *cuda_visible_devices));
      id = static_cast<int>(it - visible.begin());
    }
    selection.ids.push_back(id);
  }
  if (!visible.empty())
    selection.note = fmt::format(
        "Change selected_gpus into relative values. --gpus:{} will change into relative_gpus:{} "
        "according to your CUDA_VISIBLE_DEVICES:{}",
        text, fmt::join(selection.ids, ","), *cuda_visible_devices);
  return selection;
}

int visible_gpu_count(const EnvMap& env) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path driver_gpus = "/proc/driver/nvidia/gpus";
  if (!fs::is_directory(driver_gpus, ec)) return 0;
  if (auto count = cuda_runtime_device_count()) return *count;
  int physical = static_cast<int>(std::distance(fs::directory_iterator(driver_gpus, ec), fs::directory_iterator()));
  auto cvd = get_env(env, "CUDA_VISIBLE_DEVICES");
  if (!cvd) return physical;
  if (cvd->empty()) return 0;
  return std::min<int>(physical, static_cast<int>(std::count(cvd->begin(), cvd->end(), ',') + 1));
}

}  // namespace paddle::launcher
