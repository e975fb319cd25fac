#pragma once
// Tanh: y = tanh(x) element-wise, any shape (kernels/activation.h).

#include <string>

#include "runtime/nn/layer.h"

namespace paddle::runtime {

class Tanh : public Layer {
 public:
  Tensor forward(const Tensor& x, bool training) override;
  Tensor backward(const Tensor& dy) override;
  std::string describe() const override { return "Tanh"; }

 private:
  Tensor output_;
};

}  // namespace paddle::runtime
