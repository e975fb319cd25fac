#include "runtime/nn/activation.h"

#include <fmt/format.h>

#include <utility>

#include "kernels/activation.h"

namespace paddle::runtime {
namespace k = paddle::kernels;

namespace {
// Elements a kernel runs over: a blocked tensor's padding too, which holds zeros that ReLU and
// its gradient keep at zero.
size_t elements(const Tensor& t) {
  return t.is_plain() ? static_cast<size_t>(t.numel()) : t.layout()->bytes() / sizeof(float);
}
}  // namespace

Tensor ReLU::forward(const Tensor& x, bool) {
  require_device(x, "ReLU");
  Tensor y;
  if (folded_) {
    y = x.share();
  } else {
    y = x.is_plain() ? Tensor::uninitialized(x.shape, x.device()) : Tensor::blocked(x.shape, *x.layout());
    k::relu_forward(context(), x.ptr(), y.ptr(), elements(x));
    output_ = y.share();
  }
  reordered_from_.reset();
  if (y.is_plain() || blocked_output_) return y;
  reordered_from_ = *y.layout();
  return to_plain(y);
}

Tensor ReLU::backward(const Tensor& dy) {
  Tensor g = reordered_from_ ? to_layout(dy, *reordered_from_) : dy.share();
  if (folded_) return g;
  const Tensor& y = std::as_const(output_);
  Tensor dx = y.is_plain() ? Tensor::uninitialized(g.shape, g.device()) : Tensor::blocked(g.shape, *y.layout());
  k::relu_backward(context(), y.ptr(), std::as_const(g).ptr(), dx.ptr(), elements(y));
  return dx;
}

}  // namespace paddle::runtime
