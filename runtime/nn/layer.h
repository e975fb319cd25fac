#pragma once
// Layer: one step of a model with a forward and a backward pass. forward() keeps what backward()
// needs; backward() takes dLoss/dOutput, adds into its parameters' gradients and returns
// dLoss/dInput.
//
// A layer runs where place() put it: its parameters and buffers move to the execution's device,
// and forward/backward then take and return tensors on that device, running the CPU kernels or
// their CUDA twins. A new layer is on the CPU.

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "runtime/core/execution.h"
#include "runtime/core/tensor.h"

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

  // Moves the parameters and buffers to `execution`'s device and runs there from now on.
  // `execution` must outlive the layer's use. Containers override it to place their layers.
  virtual void place(Execution& execution);
  Device device() const { return execution_ != nullptr ? execution_->device() : Device::cpu(); }

 protected:
  bool on_cuda() const { return execution_ != nullptr && execution_->device().is_cuda(); }
  kernels::cuda::Handles& cuda() { return execution_->cuda(); }
  // Throws std::invalid_argument when `x` is not on this layer's device.
  void require_device(const Tensor& x, const char* layer) const;

  Execution* execution_ = nullptr;
};

using LayerPtr = std::unique_ptr<Layer>;

// Uniform(-limit, limit) with limit = sqrt(6 / fan_in) (He/Kaiming uniform for ReLU nets).
void kaiming_uniform(Tensor& t, int64_t fan_in, std::mt19937& rng);

}  // namespace paddle::runtime
