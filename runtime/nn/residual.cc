#include "runtime/nn/residual.h"

#include <fmt/format.h>

#include <algorithm>

#include "kernels/cuda_kernels.h"

namespace paddle::runtime {

Tensor Residual::forward(const Tensor& x, bool training) {
  Tensor y = branch_.forward(x, training);
  Tensor s = shortcut_.layers().empty() ? x : shortcut_.forward(x, training);
  if (y.shape != s.shape)
    throw std::invalid_argument(fmt::format("Residual: branch {} and shortcut {} differ", y.shape_string(), s.shape_string()));
  const size_t n = static_cast<size_t>(y.numel());
  if (on_cuda()) {
    kernels::cuda::add_relu(cuda(), y.ptr(), s.ptr(), y.ptr(), n);
  } else {
    auto out = y.values();
    auto shortcut = s.values();
    for (size_t i = 0; i < n; ++i) out[i] = std::max(0.0f, out[i] + shortcut[i]);
  }
  output_ = y;
  return y;
}

Tensor Residual::backward(const Tensor& dy) {
  const size_t n = static_cast<size_t>(dy.numel());
  Tensor g(dy.shape, DType::kFloat32, dy.device());
  if (on_cuda()) {
    kernels::cuda::relu_backward(cuda(), output_.ptr(), dy.ptr(), g.ptr(), n);
  } else {
    auto in = dy.values();
    auto out = g.values();
    auto y = output_.values();
    for (size_t i = 0; i < n; ++i) out[i] = y[i] > 0 ? in[i] : 0.0f;
  }
  Tensor dx = branch_.backward(g);
  Tensor ds = shortcut_.layers().empty() ? g : shortcut_.backward(g);
  const size_t inputs = static_cast<size_t>(dx.numel());
  if (on_cuda()) {
    kernels::cuda::add_in_place(cuda(), dx.ptr(), ds.ptr(), inputs);
  } else {
    auto sum = dx.values();
    auto other = ds.values();
    for (size_t i = 0; i < inputs; ++i) sum[i] += other[i];
  }
  return dx;
}

void Residual::place(Execution& execution) {
  branch_.place(execution);
  shortcut_.place(execution);
  execution_ = &execution;
}

std::vector<Parameter*> Residual::parameters() {
  auto all = branch_.parameters();
  for (Parameter* p : shortcut_.parameters()) all.push_back(p);
  return all;
}

std::vector<std::pair<std::string, Tensor*>> Residual::buffers() {
  auto all = branch_.buffers();
  for (auto& b : shortcut_.buffers()) all.push_back(b);
  return all;
}

std::string Residual::describe() const {
  return fmt::format("Residual({} + {})", branch_.describe(),
                     shortcut_.layers().empty() ? std::string("identity") : shortcut_.describe());
}

}  // namespace paddle::runtime
