#pragma once
// Context: where a kernel runs, the host CPU or one CUDA device (whose cuBLAS/cuDNN handles and
// stream it owns). Every op in kernels/<family>.h takes one and dispatches to its CUDA half
// (kernels/cuda/), to its oneDNN half (kernels/onednn/, for the ops oneDNN does best, when the
// build has oneDNN and the context uses it), or to its plain CPU half (kernels/cpu/, Eigen and
// loops: the reference every other half is tested against). Halves share file names and
// signatures.
//
// PADDLE_LAUNCH_WITH_CUDA is defined exactly when the CUDA halves are built, and
// PADDLE_LAUNCH_WITH_ONEDNN when the oneDNN halves are; without CUDA no CUDA branch is compiled
// and asking for a CUDA context throws (the one place that does).

#include <memory>
#include <string>
#include <vector>

namespace paddle::kernels {

namespace cuda {
class Handles;
}
namespace onednn {
class OneDnn;
}

// Which kernels a CPU context runs: oneDNN's where the build has it and the family has a oneDNN
// half, or the plain CPU halves everywhere. Where we keep a kernel of our own beside one of
// oneDNN's (max pooling on a channel-blocked layout), and where oneDNN has two algorithms for
// one op (Winograd's convolution and direct, matmul and sgemm), kOneDnn runs the faster for each
// shape, timed on this machine at the shape's first use (a choice tuned on one CPU kind was wrong
// on another: kernels/onednn/kernel_choice.h); kOneDnnLibrary and kOneDnnOurs force our kernel or
// oneDNN's and run oneDNN's default algorithms, timing nothing.
enum class CpuKernels { kOneDnn, kOneDnnLibrary, kOneDnnOurs, kPlain };

class Context {
 public:
  // The host CPU, with its own oneDNN primitive cache when `kernels` is kOneDnn and the build
  // has oneDNN (kPlain otherwise). `choice_cache`: the file that keeps the kernel choices timed
  // on this machine for later processes (kernels/onednn/choice_cache.h); "" keeps none.
  explicit Context(CpuKernels kernels = CpuKernels::kOneDnn, const std::string& choice_cache = "");
  // CUDA device `device`; with tf32, GEMMs and convolutions may use TF32 tensor cores. Throws
  // common::ConfigError when the build has no CUDA, std::runtime_error when the device cannot
  // be used.
  Context(int device, bool tf32);
  ~Context();
  Context(Context&&) noexcept;
  Context& operator=(Context&&) noexcept;

  // A shared context for the CPU, which holds no state: the plain CPU halves.
  static const Context& host();

  bool is_cuda() const;
  bool uses_onednn() const;
  // The oneDNN engine and primitives; throws std::logic_error where uses_onednn() is false.
  onednn::OneDnn& onednn() const;
  // The kernels chosen so far where two could run, each with why, in the order chosen
  // ("max pooling 64x16x28x28 nChw16c, 2x2 windows: ours, 85 + 58 us forward + backward, against
  // oneDNN's 73 + 120 us, timed here"); none without oneDNN.
  std::vector<std::string> kernel_choices() const;
  // Waits for everything queued on the device, copies included (nothing on the CPU).
  void synchronize() const;
  // The CUDA handles; throws std::logic_error on the CPU.
  cuda::Handles& cuda() const;

 private:
#ifdef PADDLE_LAUNCH_WITH_CUDA
  std::unique_ptr<cuda::Handles> handles_;
#endif
  std::unique_ptr<onednn::OneDnn> onednn_;
};

// The CPU kernels named by PADDLE_CPU_KERNELS: onednn (the default), onednn:library, onednn:ours
// or plain; throws common::ConfigError naming the variable for anything else.
CpuKernels cpu_kernels_from(const char* value);

// The file that keeps the kernel choices timed on this machine (kernels/onednn/choice_cache.h):
// PADDLE_KERNEL_CACHE's value `setting` (null where unset), "off" for none; unset,
// $XDG_CACHE_HOME/paddle-launch/kernel-choices.json, or under $HOME/.cache where XDG_CACHE_HOME
// is unset or empty ("" without either).
std::string choice_cache_from(const char* setting, const char* xdg_cache_home, const char* home);

// The CUDA devices this process sees (0 without CUDA support, a driver or a device).
int cuda_device_count();

// Throws the common::ConfigError every CUDA request meets in a build without CUDA, naming `what`
// was asked for.
[[noreturn]] void throw_cuda_not_built(const char* what);

}  // namespace paddle::kernels
