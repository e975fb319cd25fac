#pragma once
// Layer: one step of a model with a forward and a backward pass. forward() keeps what backward()
// needs; backward() takes dLoss/dOutput, adds into its parameters' gradients and returns
// dLoss/dInput.
//
// A layer runs where place() put it: its parameters and buffers move to the execution's device,
// and forward/backward then take and return tensors on that device, calling the kernels of
// kernels/<family>.h with the execution's context (one call per op, whichever the device). A new
// layer is on the CPU.
//
// Blocked layouts (kernels/layout.h): on a CPU context with oneDNN, a chain of convolution, ReLU
// and max pooling keeps its activations in the layouts oneDNN picks. A layer that answers true
// to takes_blocked() accepts an input in such a layout and returns its input gradient in the
// layout its input came in; containers hand every other layer plain tensors. Before each forward
// pass the container says, with allow_blocked_output(), whether the layer's consumer takes one,
// and so whether the output may stay blocked, and with fuse_following() which layers come next
// (a convolution then applies the ReLU after it in its own pass, and a max pooling after that
// ReLU takes over its gradient). A layer's output is plain until it is told otherwise, and dy
// comes to backward() in the layout forward() returned. What a container said holds until it
// says otherwise: a layer taken out of its container keeps the last plan.
//
// Layers keep what backward() needs with Tensor::share(), and read it back through const
// access, so keeping an activation copies nothing.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <span>
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

  virtual bool takes_blocked() const { return false; }
  virtual void allow_blocked_output(bool /*allowed*/) {}
  // `following`: the layers after this one in its container, in order.
  virtual void fuse_following(std::span<Layer* const> /*following*/) {}
  // The caller will not read what backward() returns (the layer's input is data), so a layer may
  // skip computing its input gradient and return an empty tensor.
  virtual void skip_input_gradient(bool /*skip*/) {}

  // Moves the parameters and buffers to `execution`'s device and runs there from now on.
  // `execution` must outlive the layer's use. Containers override it to place their layers.
  virtual void place(Execution& execution);
  Device device() const { return execution_ != nullptr ? execution_->device() : Device::cpu(); }

 protected:
  // Where this layer's kernels run: the execution's context once placed, else the CPU.
  const kernels::Context& context() const {
    return execution_ != nullptr ? execution_->context() : kernels::Context::host();
  }
  // Throws std::invalid_argument when `x` is not on this layer's device.
  void require_device(const Tensor& x, const char* layer) const;
  // Throws std::invalid_argument when `x` is not of rank `rank`.
  static void require_rank(const Tensor& x, size_t rank, const char* layer);
  // Whether this layer's kernels run on oneDNN, where blocked layouts exist.
  bool on_onednn() const;
  // A plain copy of a blocked `x`, and a copy of a plain `x` in `layout` (oneDNN reorders).
  Tensor to_plain(const Tensor& x) const;
  Tensor to_layout(const Tensor& x, const kernels::Layout& layout) const;
  // Tensor extents as the kernels' int sizes.
  static int as_int(int64_t v) { return static_cast<int>(v); }

  Execution* execution_ = nullptr;
};

using LayerPtr = std::unique_ptr<Layer>;

// Uniform(-limit, limit) with limit = sqrt(6 / fan_in) (He/Kaiming uniform for ReLU nets).
void kaiming_uniform(Tensor& t, int64_t fan_in, std::mt19937& rng);

}  // namespace paddle::runtime
