// Context's backends (context.h): the CUDA handles and the oneDNN engine it owns, made and
// ended here, apart from context.cc, so that context.h's room, which every kernel family
// includes, includes no backend itself.
#include "kernels/context.h"

#include <fmt/format.h>

#include <stdexcept>

#include "common/error.h"

#ifdef PADDLE_LAUNCH_WITH_CUDA
#include "kernels/cuda/handles.h"
#endif
#ifdef PADDLE_LAUNCH_WITH_ONEDNN
#include "kernels/onednn/onednn.h"
#else
namespace paddle::kernels::onednn {
class OneDnn {
 public:
  std::vector<std::string> choices() { return {}; }
};
}  // namespace paddle::kernels::onednn
#endif

namespace paddle::kernels {

Context::Context([[maybe_unused]] CpuKernels kernels, [[maybe_unused]] const std::string& choice_cache) {
#ifdef PADDLE_LAUNCH_WITH_ONEDNN
  if (kernels == CpuKernels::kOneDnn)
    onednn_ = std::make_unique<onednn::OneDnn>(onednn::Pick::kFaster, onednn::Alternative::kTimed, choice_cache);
  if (kernels == CpuKernels::kOneDnnLibrary) onednn_ = std::make_unique<onednn::OneDnn>(onednn::Pick::kLibrary);
  if (kernels == CpuKernels::kOneDnnOurs) onednn_ = std::make_unique<onednn::OneDnn>(onednn::Pick::kOurs);
#endif
}

std::vector<std::string> Context::kernel_choices() const { return onednn_ ? onednn_->choices() : std::vector<std::string>{}; }
Context::~Context() = default;
Context::Context(Context&&) noexcept = default;
Context& Context::operator=(Context&&) noexcept = default;

onednn::OneDnn& Context::onednn() const {
  if (!onednn_) throw std::logic_error("a oneDNN kernel was asked for on a context without oneDNN");
  return *onednn_;
}

#ifdef PADDLE_LAUNCH_WITH_CUDA

namespace {

int checked_device(int device) {
  const int devices = cuda::device_count();
  if (device < 0 || device >= devices)
    throw common::ConfigError(fmt::format("gpu:{} requested, but this process sees {} CUDA device(s)", device, devices));
  return device;
}

}  // namespace

Context::Context(int device, bool tf32) : handles_(std::make_unique<cuda::Handles>(checked_device(device), tf32)) {}

bool Context::is_cuda() const { return handles_ != nullptr; }

void Context::synchronize() const {
  if (handles_) handles_->synchronize_device();
}

cuda::Handles& Context::cuda() const {
  if (!handles_) throw std::logic_error("a CUDA kernel was asked for on the CPU");
  return *handles_;
}

int cuda_device_count() { return cuda::device_count(); }

#else

Context::Context(int device, bool) { throw_cuda_not_built(fmt::format("gpu:{}", device).c_str()); }
bool Context::is_cuda() const { return false; }
void Context::synchronize() const {}
cuda::Handles& Context::cuda() const { throw std::logic_error("a CUDA kernel was asked for on the CPU"); }
int cuda_device_count() { return 0; }

#endif

}  // namespace paddle::kernels
