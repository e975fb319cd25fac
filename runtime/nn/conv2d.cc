#include "runtime/nn/conv2d.h"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

#include "runtime/nn/activation.h"
#include "runtime/nn/pooling.h"

#include "kernels/autocast_conv.h"
#include "kernels/blocked.h"
#include "kernels/conv.h"

namespace paddle::runtime {
namespace k = paddle::kernels;

Conv2D::Conv2D(int64_t in_channels, int64_t out_channels, int kernel, int stride, int padding, std::mt19937& rng,
               const std::string& name, bool with_bias)
    : in_channels_(in_channels), out_channels_(out_channels), kernel_(kernel), stride_(stride), padding_(padding),
      with_bias_(with_bias), weight_(name + ".w", {out_channels, in_channels * kernel * kernel}),
      bias_(name + ".b", {out_channels}) {
  kaiming_uniform(weight_.value, in_channels * kernel * kernel, rng);
}

std::vector<Parameter*> Conv2D::parameters() {
  if (with_bias_) return {&weight_, &bias_};
  return {&weight_};
}

Tensor Conv2D::forward(const Tensor& x, bool training) {
  require_rank(x, 4, "Conv2D");
  require_device(x, "Conv2D");
  if (x.dim(1) != in_channels_)
    throw std::invalid_argument(fmt::format("Conv2D({} channels) got input {}", in_channels_, x.shape_string()));
  input_ = x.share();
  if (!training) saved_.columns.clear();  // a backward now rebuilds the columns from this input
  const k::ConvShape s{as_int(x.dim(1)), as_int(x.dim(2)), as_int(x.dim(3)), kernel_, stride_, padding_};
  const int n = as_int(x.dim(0)), ho = s.out_height(), wo = s.out_width();
  ran_fused_ = takes_blocked() && (!x.is_plain() || blocked_output_ || fused_relu_);
#ifdef PADDLE_LAUNCH_WITH_ONEDNN
  if (ran_fused_) {
    const k::onednn::FusedConv c{s, n, as_int(out_channels_), with_bias_, fused_relu_, blocked_output_,
                                 pool_takes_relu_gradient_};
    k::onednn::OneDnn& dnn = context().onednn();
    const auto y_layout = k::onednn::fused_conv_output_layout(dnn, c, x.layout());
    Tensor y = y_layout ? Tensor::blocked({x.dim(0), out_channels_, ho, wo}, *y_layout)
                        : Tensor::uninitialized({x.dim(0), out_channels_, ho, wo}, x.device());
    k::onednn::fused_conv_forward(dnn, c, x.layout(), x.ptr(), std::as_const(weight_.value).ptr(),
                                  with_bias_ ? std::as_const(bias_.value).ptr() : nullptr, y.ptr());
    if (fused_relu_ && !pool_takes_relu_gradient_) output_ = y.share();
    return y;
  }
#endif
  Tensor y = Tensor::uninitialized({x.dim(0), out_channels_, ho, wo}, x.device());
  if (const auto half = autocast())
    k::autocast_conv2d_forward(context(), *half, s, n, as_int(out_channels_), x.ptr(), weight_.value.ptr(), y.ptr());
  else
    k::conv2d_forward(context(), s, n, as_int(out_channels_), x.ptr(), weight_.value.ptr(), y.ptr(),
                      training ? &saved_ : nullptr);
  if (with_bias_) k::add_channel_bias(context(), y.ptr(), bias_.value.ptr(), n, as_int(out_channels_), ho * wo);
  return y;
}

Tensor Conv2D::backward(const Tensor& dy) {
  if (input_.shape.empty() || dy.dim(0) != input_.dim(0))
    throw std::logic_error(fmt::format("Conv2D::backward of {} after a forward of {}", dy.shape_string(),
                                       input_.shape_string()));
  const k::ConvShape s{as_int(input_.dim(1)), as_int(input_.dim(2)), as_int(input_.dim(3)), kernel_, stride_, padding_};
  const int n = as_int(input_.dim(0)), channels = as_int(out_channels_), positions = as_int(dy.dim(2) * dy.dim(3));
  const Tensor& input = std::as_const(input_);
#ifdef PADDLE_LAUNCH_WITH_ONEDNN
  if (ran_fused_) {
    const k::onednn::FusedConv c{s, n, channels, with_bias_, fused_relu_, blocked_output_, pool_takes_relu_gradient_};
    Tensor dx;
    if (!skip_input_gradient_)
      dx = input.is_plain() ? Tensor::uninitialized(input.shape, dy.device())
                            : Tensor::blocked(input.shape, *input.layout());
    k::onednn::fused_conv_backward(context().onednn(), c, input.layout(), input.ptr(),
                                   fused_relu_ && !pool_takes_relu_gradient_ ? std::as_const(output_).ptr() : nullptr, dy.ptr(),
                                   std::as_const(weight_.value).ptr(), weight_.grad.ptr(),
                                   with_bias_ ? bias_.grad.ptr() : nullptr, skip_input_gradient_ ? nullptr : dx.ptr());
    return dx;
  }
#endif
  const auto half = autocast();
  if (half)
    k::autocast_conv2d_backward_filter(context(), *half, s, n, channels, input.ptr(), dy.ptr(), weight_.grad.ptr());
  else
    k::conv2d_backward_filter(context(), s, n, channels, input.ptr(), dy.ptr(), weight_.grad.ptr(), &saved_);
  if (with_bias_) k::channel_bias_grad(context(), dy.ptr(), bias_.grad.ptr(), n, channels, positions);
  if (skip_input_gradient_) return Tensor();
  Tensor dx = Tensor::uninitialized(input_.shape, dy.device());
  if (half) k::autocast_conv2d_backward_data(context(), *half, s, n, channels, weight_.value.ptr(), dy.ptr(), dx.ptr());
  else k::conv2d_backward_data(context(), s, n, channels, weight_.value.ptr(), dy.ptr(), dx.ptr());
  return dx;
}

void Conv2D::fuse_following(std::span<Layer* const> following) {
  auto* relu = following.empty() ? nullptr : dynamic_cast<ReLU*>(following[0]);
  fused_relu_ = relu != nullptr && takes_blocked();
  if (relu != nullptr) relu->fold_into_previous(fused_relu_);
  auto* pool = relu != nullptr && following.size() > 1 ? dynamic_cast<MaxPool2D*>(following[1]) : nullptr;
  pool_takes_relu_gradient_ = fused_relu_ && pool != nullptr;
  if (pool != nullptr) pool->take_relu_gradient(pool_takes_relu_gradient_);
}

std::optional<k::DType> Conv2D::autocast() const {
  return execution_ != nullptr ? execution_->conv_autocast() : std::nullopt;
}

std::string Conv2D::describe() const {
  return fmt::format("Conv2D({}, {}, kernel={}, stride={}, padding={})", in_channels_, out_channels_, kernel_, stride_,
                     padding_);
}

}  // namespace paddle::runtime
