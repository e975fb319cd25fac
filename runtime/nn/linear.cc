#include "runtime/nn/linear.h"

#include <fmt/format.h>

#include <utility>

#include <stdexcept>

#include "kernels/autocast_gemm.h"
#include "kernels/gemm.h"

namespace paddle::runtime {
namespace k = paddle::kernels;

Linear::Linear(int64_t in, int64_t out, std::mt19937& rng, const std::string& name)
    : in_(in), out_(out), weight_(name + ".w", {in, out}), bias_(name + ".b", {out}) {
  kaiming_uniform(weight_.value, in, rng);
}

Tensor Linear::forward(const Tensor& x, bool) {
  require_rank(x, 2, "Linear");
  require_device(x, "Linear");
  if (x.dim(1) != in_) throw std::invalid_argument(fmt::format("Linear({}) got input {}", in_, x.shape_string()));
  input_ = x.share();
  const int n = as_int(x.dim(0));
  Tensor y = Tensor::uninitialized({x.dim(0), out_}, x.device());
  matmul(false, false, n, as_int(out_), as_int(in_), x.ptr(), weight_.value.ptr(), y.ptr(), false);
  k::add_bias_rows(context(), y.ptr(), bias_.value.ptr(), n, as_int(out_));
  return y;
}

Tensor Linear::backward(const Tensor& dy) {
  const int n = as_int(dy.dim(0));
  matmul(true, false, as_int(in_), as_int(out_), n, std::as_const(input_).ptr(), dy.ptr(), weight_.grad.ptr(), true);
  k::bias_grad_rows(context(), dy.ptr(), bias_.grad.ptr(), n, as_int(out_));
  if (skip_input_gradient_) return Tensor();
  Tensor dx = Tensor::uninitialized({dy.dim(0), in_}, dy.device());
  matmul(false, true, n, as_int(in_), as_int(out_), dy.ptr(), weight_.value.ptr(), dx.ptr(), false);
  return dx;
}

void Linear::matmul(bool transpose_a, bool transpose_b, int m, int n, int k, const float* a, const float* b, float* c,
                    bool accumulate) const {
  const auto half = execution_ != nullptr ? execution_->matmul_autocast() : std::nullopt;
  if (half) k::autocast_gemm(context(), *half, transpose_a, transpose_b, m, n, k, a, b, c, accumulate);
  else k::gemm(context(), transpose_a, transpose_b, m, n, k, a, b, c, accumulate);
}

std::string Linear::describe() const { return fmt::format("Linear({}, {})", in_, out_); }

}  // namespace paddle::runtime
