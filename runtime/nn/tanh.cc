#include "runtime/nn/tanh.h"

#include <fmt/format.h>

#include <utility>

#include <stdexcept>

#include "kernels/activation.h"

namespace paddle::runtime {
namespace k = paddle::kernels;

Tensor Tanh::forward(const Tensor& x, bool) {
  require_device(x, "Tanh");
  output_ = Tensor(x.shape, DType::kFloat32, x.device());
  k::tanh_forward(context(), x.ptr(), output_.ptr(), static_cast<size_t>(x.numel()));
  return output_.share();
}

Tensor Tanh::backward(const Tensor& dy) {
  if (dy.shape != output_.shape)
    throw std::invalid_argument(fmt::format("Tanh: gradient {} for output {}", dy.shape_string(), output_.shape_string()));
  Tensor dx(dy.shape, DType::kFloat32, dy.device());
  k::tanh_backward(context(), std::as_const(output_).ptr(), dy.ptr(), dx.ptr(), static_cast<size_t>(dy.numel()));
  return dx;
}

}  // namespace paddle::runtime
