#include "runtime/nn/sequential.h"

namespace paddle::runtime {

Tensor Sequential::forward(const Tensor& x, bool training) {
  Tensor out = x;
  for (auto& layer : layers_) out = layer->forward(out, training);
  return out;
}

Tensor Sequential::backward(const Tensor& dy) {
  Tensor grad = dy;
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
