#include "residual.h"

#include <fmt/format.h>

namespace paddle::runtime {

Tensor Residual::forward(const Tensor& x, bool training) {
  Tensor y = branch_.forward(x, training);
  Tensor s = shortcut_.layers().empty() ? x : shortcut_.forward(x, training);
  if (y.shape != s.shape)
    throw std::invalid_argument(fmt::format("Residual: branch {} and shortcut {} differ", y.shape_string(), s.shape_string()));
  for (size_t i = 0; i < y.data.size(); ++i) y.data[i] = std::max(0.0f, y.data[i] + s.data[i]);
  output_ = y;
  return y;
}

Tensor Residual::backward(const Tensor& dy) {
  Tensor g = dy;
  for (size_t i = 0; i < g.data.size(); ++i)
    if (output_.data[i] <= 0) g.data[i] = 0;
  Tensor dx = branch_.backward(g);
  Tensor ds = shortcut_.layers().empty() ? g : shortcut_.backward(g);
  for (size_t i = 0; i < dx.data.size(); ++i) dx.data[i] += ds.data[i];
  return dx;
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
