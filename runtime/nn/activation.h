#pragma once
// ReLU: y = max(0, x) element-wise (kernels/activation.h).

#include <string>

#include "runtime/nn/layer.h"

namespace paddle::runtime {

class ReLU : public Layer {
 public:
  Tensor forward(const Tensor& x, bool training) override;
  Tensor backward(const Tensor& dy) override;
  std::string describe() const override { return "ReLU"; }

 private:
  Tensor output_;
};

}  // namespace paddle::runtime
