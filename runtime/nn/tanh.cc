#include "runtime/nn/tanh.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "common/error.h"

namespace paddle::runtime {

void Tanh::place(Execution& execution) {
  if (execution.device().is_cuda())
    throw common::ConfigError(fmt::format("Tanh has no CUDA kernel yet, so it cannot run on {}; use device=cpu",
                                         execution.device().to_string()));
  execution_ = &execution;
}

Tensor Tanh::forward(const Tensor& x, bool) {
  require_device(x, "Tanh");
  Tensor y(x.shape);
  auto in = x.values();
  auto out = y.values();
  for (size_t i = 0; i < in.size(); ++i) out[i] = std::tanh(in[i]);
  output_ = y;
  return y;
}

// dy/dx = 1 - tanh(x)^2, from the saved output.
Tensor Tanh::backward(const Tensor& dy) {
  if (dy.shape != output_.shape)
    throw std::invalid_argument(fmt::format("Tanh: gradient {} for output {}", dy.shape_string(), output_.shape_string()));
  Tensor dx(dy.shape);
  auto g = dy.values();
  auto y = output_.values();
  auto out = dx.values();
  for (size_t i = 0; i < g.size(); ++i) out[i] = g[i] * (1.0f - y[i] * y[i]);
  return dx;
}

}  // namespace paddle::runtime
