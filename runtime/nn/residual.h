#pragma once
// Residual: y = ReLU(branch(x) + shortcut(x)), the block of ResNet; an empty shortcut is the
// identity.

#include "runtime/nn/sequential.h"

namespace paddle::runtime {

class Residual : public Layer {
 public:
  Residual(Sequential branch, Sequential shortcut) : branch_(std::move(branch)), shortcut_(std::move(shortcut)) {}
  Tensor forward(const Tensor& x, bool training) override;
  Tensor backward(const Tensor& dy) override;
  std::vector<Parameter*> parameters() override;
  std::vector<std::pair<std::string, Tensor*>> buffers() override;
  std::string describe() const override;
  void place(Execution& execution) override;

 private:
  Sequential branch_;
  Sequential shortcut_;
  Tensor output_;
};

}  // namespace paddle::runtime
