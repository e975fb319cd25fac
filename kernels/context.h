#pragma once
// Context: where a kernel runs, the host CPU or one CUDA device (whose cuBLAS/cuDNN handles and
// stream it owns). Every op in kernels/<family>.h takes one and dispatches to its CPU half
// (kernels/cpu/) or its CUDA half (kernels/cuda/), which share file names and signatures.
//
// PADDLE_LAUNCH_WITH_CUDA is defined exactly when the CUDA halves are built; without it no CUDA
// branch is compiled and asking for a CUDA context throws (the one place that does).

#include <memory>

namespace paddle::kernels {

namespace cuda {
class Handles;
}

class Context {
 public:
  // The host CPU.
  Context();
  // CUDA device `device`; with tf32, GEMMs and convolutions may use TF32 tensor cores. Throws
  // common::ConfigError when the build has no CUDA, std::runtime_error when the device cannot
  // be used.
  Context(int device, bool tf32);
  ~Context();
  Context(Context&&) noexcept;
  Context& operator=(Context&&) noexcept;

  // A shared context for the CPU, which holds no state.
  static const Context& host();

  bool is_cuda() const;
  // Waits for everything queued on the device, copies included (nothing on the CPU).
  void synchronize() const;
  // The CUDA handles; throws std::logic_error on the CPU.
  cuda::Handles& cuda() const;

 private:
#ifdef PADDLE_LAUNCH_WITH_CUDA
  std::unique_ptr<cuda::Handles> handles_;
#endif
};

// The CUDA devices this process sees (0 without CUDA support, a driver or a device).
int cuda_device_count();

// Throws the common::ConfigError every CUDA request meets in a build without CUDA, naming `what`
// was asked for.
[[noreturn]] void throw_cuda_not_built(const char* what);

}  // namespace paddle::kernels
