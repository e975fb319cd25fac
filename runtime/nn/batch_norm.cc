#include "runtime/nn/batch_norm.h"

#include <fmt/format.h>

#include <utility>

#include <stdexcept>

#include "kernels/batch_norm.h"

namespace paddle::runtime {
namespace k = paddle::kernels;

BatchNorm2D::BatchNorm2D(int64_t channels, const std::string& name, float momentum, float epsilon)
    : name_(name), channels_(channels), momentum_(momentum), epsilon_(epsilon), scale_(name + ".scale", {channels}),
      shift_(name + ".shift", {channels}), running_mean_({channels}), running_var_({channels}, 1.0f) {
  scale_.value = Tensor({channels}, 1.0f);
}

Tensor BatchNorm2D::forward(const Tensor& x, bool training) {
  require_rank(x, 4, "BatchNorm2D");
  require_device(x, "BatchNorm2D");
  if (x.dim(1) != channels_)
    throw std::invalid_argument(fmt::format("BatchNorm2D({}) got input {}", channels_, x.shape_string()));
  const k::BatchNormShape s{as_int(x.dim(0)), as_int(x.dim(1)), as_int(x.dim(2)), as_int(x.dim(3))};
  Tensor y(x.shape, DType::kFloat32, x.device());
  if (!training) {
    k::batch_norm_forward_inference(context(), s, x.ptr(), y.ptr(), scale_.value.ptr(), shift_.value.ptr(),
                                    running_mean_.ptr(), running_var_.ptr(), epsilon_);
    return y;
  }
  input_ = x.share();
  if (saved_mean_.numel() != channels_ || saved_mean_.device() != x.device()) {
    saved_mean_ = Tensor({channels_}, DType::kFloat32, x.device());
    saved_inv_std_ = Tensor({channels_}, DType::kFloat32, x.device());
  }
  k::batch_norm_forward_training(context(), s, x.ptr(), y.ptr(), scale_.value.ptr(), shift_.value.ptr(),
                                 running_mean_.ptr(), running_var_.ptr(), saved_mean_.ptr(), saved_inv_std_.ptr(),
                                 momentum_, epsilon_);
  return y;
}

Tensor BatchNorm2D::backward(const Tensor& dy) {
  if (dy.shape != input_.shape)
    throw std::logic_error(fmt::format("BatchNorm2D::backward of {} after a training forward of {}", dy.shape_string(),
                                       input_.shape_string()));
  const k::BatchNormShape s{as_int(dy.dim(0)), as_int(dy.dim(1)), as_int(dy.dim(2)), as_int(dy.dim(3))};
  Tensor dx(dy.shape, DType::kFloat32, dy.device());
  k::batch_norm_backward(context(), s, std::as_const(input_).ptr(), dy.ptr(), scale_.value.ptr(), saved_mean_.ptr(),
                         saved_inv_std_.ptr(), dx.ptr(), scale_.grad.ptr(), shift_.grad.ptr(), epsilon_);
  return dx;
}

std::string BatchNorm2D::describe() const { return fmt::format("BatchNorm2D({})", channels_); }

}  // namespace paddle::runtime
