#include "runtime/nn/sequential.h"

#include <fmt/format.h>

#include <stdexcept>

namespace paddle::runtime {

Tensor Sequential::forward(const Tensor& x, bool training) {
  std::vector<Layer*> order;
  for (auto& layer : layers_) order.push_back(layer.get());
  for (size_t i = 0; i < layers_.size(); ++i) {
    Layer* next = i + 1 < layers_.size() ? layers_[i + 1].get() : nullptr;
    layers_[i]->fuse_following(std::span<Layer* const>(order).subspan(i + 1));
    layers_[i]->allow_blocked_output(next != nullptr ? next->takes_blocked() : blocked_output_);
    layers_[i]->skip_input_gradient(i == 0 && skip_input_gradient_);
  }
  Tensor out = x.share();
  for (auto& layer : layers_) {
    if (!out.is_plain() && !layer->takes_blocked())
      throw std::logic_error(fmt::format("{} was handed a tensor in the blocked layout {}", layer->describe(),
                                         out.layout()->name()));
    out = layer->forward(out, training);
  }
  return out;
}

Tensor Sequential::backward(const Tensor& dy) {
  Tensor grad = dy.share();
  for (auto it = layers_.rbegin(); it != layers_.rend(); ++it) {
    grad = (*it)->backward(grad);
    if (ready_) {
      auto params = (*it)->parameters();
      if (!params.empty()) ready_(params);
    }
  }
  return grad;
}

std::vector<Layer*> Sequential::sublayers() {
  std::vector<Layer*> all;
  for (auto& layer : layers_) all.push_back(layer.get());
  return all;
}

std::string Sequential::describe() const {
  std::string text = "Sequential(";
  for (size_t i = 0; i < layers_.size(); ++i) text += (i ? ", " : "") + layers_[i]->describe();
  return text + ")";
}

void Sequential::zero_grad() {
  for (Parameter* p : parameters()) p->grad.zero();
}

}  // namespace paddle::runtime
