#pragma once
// Tanh: y = tanh(x) elementwise, any shape. CPU only for now: placing it on a CUDA execution
// throws, since kernels/ has no tanh kernel yet.

#include "runtime/nn/layer.h"

namespace paddle::runtime {

class Tanh : public Layer {
 public:
  Tensor forward(const Tensor& x, bool training) override;
  Tensor backward(const Tensor& dy) override;
  std::string describe() const override { return "Tanh"; }
  // Throws std::runtime_error for a CUDA execution.
  void place(Execution& execution) override;

 private:
  Tensor output_;
};

}  // namespace paddle::runtime
