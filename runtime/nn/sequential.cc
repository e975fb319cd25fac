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

std::vector<Parameter*> Sequential::parameters() {
  std::vector<Parameter*> all;
  for (auto& layer : layers_)
    for (Parameter* p : layer->parameters()) all.push_back(p);
  return all;
}

std::vector<std::pair<std::string, Tensor*>> Sequential::buffers() {
  std::vector<std::pair<std::string, Tensor*>> all;
  for (auto& layer : layers_)
    for (auto& b : layer->buffers()) all.push_back(b);
  return all;
}

std::string Sequential::describe() const {
  std::string text = "Sequential(";
  for (size_t i = 0; i < layers_.size(); ++i) text += (i ? ", " : "") + layers_[i]->describe();
  return text + ")";
}

void Sequential::place(Execution& execution) {
  for (auto& layer : layers_) layer->place(execution);
  execution_ = &execution;
}

void Sequential::zero_grad() {
  for (Parameter* p : parameters()) p->grad.zero();
}

}  // namespace paddle::runtime
