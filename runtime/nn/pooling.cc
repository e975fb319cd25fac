#include "runtime/nn/pooling.h"

#include <fmt/format.h>

#include <stdexcept>

#include "kernels/blocked.h"
#include "kernels/functors.h"
#include "kernels/pooling.h"

namespace paddle::runtime {
namespace k = paddle::kernels;

Tensor MaxPool2D::forward(const Tensor& x, bool) {
  require_rank(x, 4, "MaxPool2D");
  require_device(x, "MaxPool2D");
  input_shape_ = x.shape;
  input_layout_.reset();
  const int h = as_int(x.dim(2)), w = as_int(x.dim(3));
  const int64_t ho = k::window_count(h, kernel_, stride_, padding_),
                wo = k::window_count(w, kernel_, stride_, padding_);
#ifdef PADDLE_LAUNCH_WITH_ONEDNN
  if (!x.is_plain()) {
    input_layout_ = *x.layout();
    const k::onednn::BlockedMaxPool p{as_int(x.dim(0)), as_int(x.dim(1)), h, w, kernel_, stride_, padding_,
                                      blocked_output_, relu_gradient_};
    k::onednn::OneDnn& dnn = context().onednn();
    const auto y_layout = k::onednn::max_pool_output_layout(dnn, p, *input_layout_);
    Tensor y = y_layout ? Tensor::blocked({x.dim(0), x.dim(1), ho, wo}, *y_layout)
                        : Tensor::uninitialized({x.dim(0), x.dim(1), ho, wo}, x.device());
    const size_t bytes = k::onednn::max_pool_workspace_bytes(dnn, p, *input_layout_);
    if (argmax_.bytes() != bytes) argmax_ = Storage(bytes, x.device());
    k::onednn::max_pool_forward(dnn, p, *input_layout_, x.ptr(), y.ptr(), argmax_.get());
    return y;
  }
#endif
  if (relu_gradient_)
    throw std::logic_error(fmt::format("MaxPool2D told to apply a ReLU's gradient got a plain input {}", x.shape_string()));
  Tensor y = Tensor::uninitialized({x.dim(0), x.dim(1), ho, wo}, x.device());
  const int planes = as_int(x.dim(0) * x.dim(1));
  const size_t bytes = static_cast<size_t>(y.numel()) * sizeof(int32_t);
  if (argmax_.bytes() != bytes || !(argmax_.device() == x.device())) argmax_ = Storage(bytes, x.device());
  k::max_pool_forward(context(), x.ptr(), planes, h, w, kernel_, stride_, padding_, y.ptr(),
                      static_cast<int32_t*>(argmax_.get()));
  return y;
}

Tensor MaxPool2D::backward(const Tensor& dy) {
#ifdef PADDLE_LAUNCH_WITH_ONEDNN
  if (input_layout_) {
    const k::onednn::BlockedMaxPool p{as_int(input_shape_[0]), as_int(input_shape_[1]), as_int(input_shape_[2]),
                                      as_int(input_shape_[3]), kernel_, stride_, padding_, blocked_output_,
                                      relu_gradient_};
    Tensor dx = Tensor::blocked(input_shape_, *input_layout_);
    k::onednn::max_pool_backward(context().onednn(), p, *input_layout_, dy.ptr(), argmax_.get(), dx.ptr());
    return dx;
  }
#endif
  Tensor dx(input_shape_, DType::kFloat32, dy.device());
  const int planes = as_int(dy.dim(0) * dy.dim(1));
  const int in_size = as_int(input_shape_[2] * input_shape_[3]), out_size = as_int(dy.dim(2) * dy.dim(3));
  k::max_pool_backward(context(), dy.ptr(), static_cast<const int32_t*>(argmax_.get()), planes, in_size, out_size,
                       dx.ptr());
  return dx;
}

std::string MaxPool2D::describe() const {
  return fmt::format("MaxPool2D({}, stride={}, padding={})", kernel_, stride_, padding_);
}

Tensor AvgPool2D::forward(const Tensor& x, bool) {
  require_rank(x, 4, "AvgPool2D");
  require_device(x, "AvgPool2D");
  input_shape_ = x.shape;
  const int h = as_int(x.dim(2)), w = as_int(x.dim(3));
  used_kernel_ = kernel_ == 0 ? h : kernel_;
  used_stride_ = kernel_ == 0 ? h : stride_;
  const int64_t ho = k::window_count(h, used_kernel_, used_stride_, 0),
                wo = k::window_count(w, used_kernel_, used_stride_, 0);
  Tensor y({x.dim(0), x.dim(1), ho, wo}, DType::kFloat32, x.device());
  const int planes = as_int(x.dim(0) * x.dim(1));
  k::avg_pool_forward(context(), x.ptr(), planes, h, w, used_kernel_, used_stride_, y.ptr());
  return y;
}

Tensor AvgPool2D::backward(const Tensor& dy) {
  Tensor dx(input_shape_, DType::kFloat32, dy.device());
  const int planes = as_int(dy.dim(0) * dy.dim(1)), h = as_int(input_shape_[2]), w = as_int(input_shape_[3]);
  k::avg_pool_backward(context(), dy.ptr(), planes, h, w, used_kernel_, used_stride_, dx.ptr());
  return dx;
}

std::string AvgPool2D::describe() const {
  return kernel_ == 0 ? "AvgPool2D(global)" : fmt::format("AvgPool2D({}, stride={})", kernel_, stride_);
}

}  // namespace paddle::runtime
