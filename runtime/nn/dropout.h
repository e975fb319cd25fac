#pragma once
// Dropout on any shape (kernels/elementwise.h for the mask).

#include <cstdint>
#include <random>
#include <string>

#include "runtime/nn/layer.h"

namespace paddle::runtime {

// Inverted dropout: scales kept activations by 1/(1-p) in training, identity in evaluation.
class Dropout : public Layer {
 public:
  Dropout(float p, uint32_t seed) : p_(p), rng_(seed) {}
  Tensor forward(const Tensor& x, bool training) override;
  Tensor backward(const Tensor& dy) override;
  std::string describe() const override;

 private:
  float p_;
  std::mt19937 rng_;  // masks are drawn on the host on every device, so runs are reproducible
  Tensor mask_;
};

}  // namespace paddle::runtime
