#include "runtime/nn/flatten.h"

#include <fmt/format.h>

namespace paddle::runtime {

Tensor Flatten::forward(const Tensor& x, bool) {
  input_shape_ = x.shape;
  Tensor y = x.share();
  y.shape = {x.dim(0), x.numel() / x.dim(0)};
  return y;
}

Tensor Flatten::backward(const Tensor& dy) {
  Tensor dx = dy.share();
  dx.shape = input_shape_;
  return dx;
}

}  // namespace paddle::runtime
