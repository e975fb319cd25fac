#pragma once
// Device selection: how many GPUs this process can see, and the --gpus (--xpus, --npus) list
// turned into ids relative to CUDA_VISIBLE_DEVICES (XPU_VISIBLE_DEVICES, NPU_VISIBLE_DEVICES), as
// Paddle's launcher does.

#include <optional>
#include <string>
#include <vector>

#include "launcher/plan/environment.h"
#include "launcher/plan/launch_options.h"

namespace paddle::launcher {

// What Paddle calls one kind of device's ids, their visibility and their collective library.
struct DeviceNames {
  const char* kind;      // GPU, XPU, NPU
  const char* flag;      // --gpus, --xpus, --npus
  const char* visible;   // CUDA_VISIBLE_DEVICES, XPU_VISIBLE_DEVICES, NPU_VISIBLE_DEVICES
  const char* selected;  // FLAGS_selected_gpus, FLAGS_selected_xpus, FLAGS_selected_npus
  const char* backend;   // PADDLE_DISTRI_BACKEND: nccl, bkcl, xccl
  const char* xccl;      // PADDLE_XCCL_BACKEND for a custom device ("npu"), else ""
};
const DeviceNames& device_names(DeviceKind kind);

struct GpuSelection {
  std::vector<int> ids;  // relative to CUDA_VISIBLE_DEVICES, in the order given
  std::string note;      // set when ids were translated through CUDA_VISIBLE_DEVICES
};

// Parses --gpus. With CUDA_VISIBLE_DEVICES set, every id must appear in it and becomes its
// index there. Throws common::UsageError for a malformed, negative or duplicated id, or one that
// CUDA_VISIBLE_DEVICES hides.
GpuSelection parse_gpu_selection(const std::string& text, const std::optional<std::string>& cuda_visible_devices,
                                 const DeviceNames& names = device_names(DeviceKind::kGpu));

// GPUs visible to this process: 0 without an NVIDIA driver; otherwise the CUDA runtime's count
// when built with CUDA, else the driver's device list narrowed by CUDA_VISIBLE_DEVICES.
int visible_gpu_count(const EnvMap& env);

}  // namespace paddle::launcher
