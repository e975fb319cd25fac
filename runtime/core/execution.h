#pragma once
// Execution: where a model's layers run. On the CPU its kernel context owns the oneDNN engine and
// the primitives built for the model's shapes (PADDLE_CPU_KERNELS=plain runs the plain Eigen
// kernels instead); on a CUDA device it owns the cuBLAS and cuDNN handles and the stream that
// every kernel of the model is queued on, in order, so a layer never waits for the device unless
// its result is read on the host.

#include <optional>

#include "kernels/autocast_gemm.h"
#include "kernels/context.h"
#include "runtime/core/device.h"

namespace paddle::runtime {

class Execution {
 public:
  // Throws common::ConfigError when the build has no CUDA or this process
  // does not see the device. tf32 lets GEMMs and convolutions on a CUDA device use TF32 tensor
  // cores (kernels/cuda/handles.h). `cpu`: the CPU kernels (PADDLE_CPU_KERNELS, which Fleet
  // reads from the job's environment), and `choice_cache` the file that keeps their timed
  // choices (PADDLE_KERNEL_CACHE; "" keeps none).
  explicit Execution(const Device& device, bool tf32 = false, kernels::CpuKernels cpu = kernels::CpuKernels::kOneDnn,
                     const std::string& choice_cache = "");
  ~Execution();
  Execution(const Execution&) = delete;
  Execution& operator=(const Execution&) = delete;

  const Device& device() const { return device_; }
  // Mixed precision at O1: the 16-bit type the model's matrix products (Linear's GEMMs) round
  // their operands to, accumulating in float32 (kernels/autocast_gemm.h); none: float32. Throws
  // std::invalid_argument for a type that is not float16 or bfloat16.
  std::optional<kernels::DType> matmul_autocast() const { return matmul_autocast_; }
  void set_matmul_autocast(std::optional<kernels::DType> half) { matmul_autocast_ = checked_half(half); }
  // The same for the model's convolutions (Conv2D's three cuDNN calls, kernels/autocast_conv.h).
  std::optional<kernels::DType> conv_autocast() const { return conv_autocast_; }
  void set_conv_autocast(std::optional<kernels::DType> half) { conv_autocast_ = checked_half(half); }
  // What the kernels of kernels/<family>.h take: the CPU, or this device with its handles.
  const kernels::Context& context() const { return context_; }
  // Waits for every kernel and copy queued on the device so far (nothing on the CPU).
  void synchronize() { context_.synchronize(); }

 private:
  static std::optional<kernels::DType> checked_half(std::optional<kernels::DType> half);

  Device device_;
  kernels::Context context_;
  std::optional<kernels::DType> matmul_autocast_;
  std::optional<kernels::DType> conv_autocast_;
};

}  // namespace paddle::runtime
