#pragma once
// Device: where a tensor's memory lives and a model's kernels run, the host CPU or one CUDA
// device. Written as Paddle writes places: "cpu", "gpu:0".

#include <string>

namespace paddle::runtime {

struct Device {
  enum class Kind { kCpu, kCuda };

  Kind kind = Kind::kCpu;
  int index = 0;

  static Device cpu() { return {}; }
  static Device cuda(int index) { return {Kind::kCuda, index}; }

  bool is_cuda() const { return kind == Kind::kCuda; }
  std::string to_string() const { return is_cuda() ? "gpu:" + std::to_string(index) : "cpu"; }
  friend bool operator==(const Device&, const Device&) = default;
};

}  // namespace paddle::runtime
