#include "runtime/nn/residual.h"

#include <fmt/format.h>

#include <utility>

#include "kernels/activation.h"
#include "kernels/elementwise.h"

namespace paddle::runtime {

Tensor Residual::forward(const Tensor& x, bool training) {
  Tensor y = branch_.forward(x, training);
  const Tensor s = shortcut_.layers().empty() ? x.share() : shortcut_.forward(x, training);
  if (y.shape != s.shape)
    throw std::invalid_argument(fmt::format("Residual: branch {} and shortcut {} differ", y.shape_string(), s.shape_string()));
  kernels::add_relu(context(), y.ptr(), s.ptr(), y.ptr(), static_cast<size_t>(y.numel()));
  output_ = y.share();
  return y;
}

Tensor Residual::backward(const Tensor& dy) {
  Tensor g(dy.shape, DType::kFloat32, dy.device());
  kernels::relu_backward(context(), std::as_const(output_).ptr(), dy.ptr(), g.ptr(), static_cast<size_t>(dy.numel()));
  Tensor dx = branch_.backward(g);
  const Tensor ds = shortcut_.layers().empty() ? g.share() : shortcut_.backward(g);
  kernels::add_in_place(context(), dx.ptr(), ds.ptr(), static_cast<size_t>(dx.numel()));
  return dx;
}

std::string Residual::describe() const {
  return fmt::format("Residual({} + {})", branch_.describe(),
                     shortcut_.layers().empty() ? std::string("identity") : shortcut_.describe());
}

}  // namespace paddle::runtime
