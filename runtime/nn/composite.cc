#include "runtime/nn/composite.h"

namespace paddle::runtime {

std::vector<Parameter*> Composite::parameters() {
  std::vector<Parameter*> all;
  for (Layer* layer : sublayers())
    for (Parameter* p : layer->parameters()) all.push_back(p);
  return all;
}

std::vector<std::pair<std::string, Tensor*>> Composite::buffers() {
  std::vector<std::pair<std::string, Tensor*>> all;
  for (Layer* layer : sublayers())
    for (auto& b : layer->buffers()) all.push_back(b);
  return all;
}

void Composite::place(Execution& execution) {
  for (Layer* layer : sublayers()) layer->place(execution);
  execution_ = &execution;
}

}  // namespace paddle::runtime
