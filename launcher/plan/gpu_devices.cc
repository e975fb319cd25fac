#include "launcher/plan/gpu_devices.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "launcher/plan/address.h"
#include "launcher/plan/cuda_device_count.h"

namespace paddle::launcher {

const DeviceNames& device_names(DeviceKind kind) {
  static constexpr DeviceNames kGpu{"GPU", "--gpus", "CUDA_VISIBLE_DEVICES", "FLAGS_selected_gpus", "nccl", ""};
  static constexpr DeviceNames kXpu{"XPU", "--xpus", "XPU_VISIBLE_DEVICES", "FLAGS_selected_xpus", "bkcl", ""};
  static constexpr DeviceNames kNpu{"NPU", "--npus", "NPU_VISIBLE_DEVICES", "FLAGS_selected_npus", "xccl", "npu"};
  return kind == DeviceKind::kXpu ? kXpu : kind == DeviceKind::kNpu ? kNpu : kGpu;
}

GpuSelection parse_gpu_selection(const std::string& text, const std::optional<std::string>& cuda_visible_devices,
                                 const DeviceNames& names) {
  GpuSelection selection;
  const std::string_view flag = names.flag;
  const std::string upper = names.kind;
  std::string device = upper;  // gpu, xpu, npu
  std::ranges::transform(device, device.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::vector<std::string> items = split_list(text, flag);
  std::vector<std::string> visible;
  if (cuda_visible_devices && !cuda_visible_devices->empty())
    visible = split_list(*cuda_visible_devices, names.visible);

  for (size_t i = 0; i < items.size(); ++i) {
    const std::string& item = items[i];
    int id = -1;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), id);
    if (ec != std::errc() || end != item.data() + item.size() || id < 0)
      throw common::UsageError(fmt::format("{}: '{}' is not a {} id (expected a non-negative integer)", flag, item, upper));
    if (std::find(items.begin(), items.begin() + i, item) != items.begin() + i)
      throw common::UsageError(fmt::format("{}: {} id {} is listed twice", flag, upper, item));
    if (!visible.empty()) {
      auto it = std::find(visible.begin(), visible.end(), item);
      if (it == visible.end())
        throw common::UsageError(fmt::format("{}: {} {} is not in {}={}", flag, upper, item, names.visible,
                                     *cuda_visible_devices));
      id = static_cast<int>(it - visible.begin());
    }
    selection.ids.push_back(id);
  }
  if (!visible.empty())
    selection.note = fmt::format(
        "Change selected_{}s into relative values. {}:{} will change into relative_{}s:{} "
        "according to your {}:{}",
        device, flag, text, device, fmt::join(selection.ids, ","), names.visible, *cuda_visible_devices);
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
