#include "runtime/nn/dropout.h"

#include <fmt/format.h>

#include "kernels/elementwise.h"

namespace paddle::runtime {
namespace k = paddle::kernels;

Tensor Dropout::forward(const Tensor& x, bool training) {
  require_device(x, "Dropout");
  if (!training || p_ <= 0) {
    mask_ = Tensor(x.shape, 1.0f, x.device());
    return x;
  }
  std::bernoulli_distribution keep(1.0 - p_);
  const float scale = 1.0f / (1.0f - p_);
  Tensor mask(x.shape);
  for (auto& m : mask.values()) m = keep(rng_) ? scale : 0.0f;
  mask_ = mask.to(x.device());
  Tensor y(x.shape, DType::kFloat32, x.device());
  k::multiply(context(), x.ptr(), mask_.ptr(), y.ptr(), static_cast<size_t>(x.numel()));
  return y;
}

Tensor Dropout::backward(const Tensor& dy) {
  Tensor dx(dy.shape, DType::kFloat32, dy.device());
  k::multiply(context(), dy.ptr(), mask_.ptr(), dx.ptr(), static_cast<size_t>(dy.numel()));
  return dx;
}

std::string Dropout::describe() const { return fmt::format("Dropout({})", p_); }

}  // namespace paddle::runtime
