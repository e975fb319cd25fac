#pragma once
// Residual: y = ReLU(branch(x) + shortcut(x)), the block of ResNet; an empty shortcut is the
// identity.

#include "runtime/nn/sequential.h"

namespace paddle::runtime {

class Residual : public Composite {
 public:
  Residual(Sequential branch, Sequential shortcut) : branch_(std::move(branch)), shortcut_(std::move(shortcut)) {}
  Tensor forward(const Tensor& x, bool training) override;
  Tensor backward(const Tensor& dy) override;
  std::string describe() const override;

 protected:
  std::vector<Layer*> sublayers() override { return {&branch_, &shortcut_}; }

 private:
  Sequential branch_;
  Sequential shortcut_;
  Tensor output_;
};

}  // namespace paddle::runtime
