#pragma once
// Composite: a layer whose parameters and buffers are all its sublayers'. It lists them in the
// sublayers' order, and placing it places each sublayer.

#include <string>
#include <utility>
#include <vector>

#include "runtime/nn/layer.h"

namespace paddle::runtime {

class Composite : public Layer {
 public:
  std::vector<Parameter*> parameters() override;
  std::vector<std::pair<std::string, Tensor*>> buffers() override;
  void place(Execution& execution) override;

 protected:
  virtual std::vector<Layer*> sublayers() = 0;
};

}  // namespace paddle::runtime
