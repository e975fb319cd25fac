#pragma once
// Layer: one step of a model with a forward and a backward pass. forward() keeps what backward()
// needs; backward() takes dLoss/dOutput, adds into its parameters' gradients and returns
// dLoss/dInput.

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "tensor.h"

namespace paddle::runtime {

struct Parameter {
  std::string name;
  Tensor value;
  Tensor grad;

  Parameter(std::string n, std::vector<int64_t> shape) : name(std::move(n)), value(shape), grad(shape) {}
};

class Layer {
 public:
  virtual ~Layer() = default;
  virtual Tensor forward(const Tensor& x, bool training) = 0;
  virtual Tensor backward(const Tensor& dy) = 0;
  virtual std::vector<Parameter*> parameters() { return {}; }
  // State that is not trained but must be saved (BatchNorm's running statistics).
  virtual std::vector<std::pair<std::string, Tensor*>> buffers() { return {}; }
  virtual std::string describe() const = 0;
};

using LayerPtr = std::unique_ptr<Layer>;

// Uniform(-limit, limit) with limit = sqrt(6 / fan_in) (He/Kaiming uniform for ReLU nets).
void kaiming_uniform(Tensor& t, int64_t fan_in, std::mt19937& rng);

}  // namespace paddle::runtime
