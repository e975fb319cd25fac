#pragma once
// Sequential: layers applied in order. backward() runs them in reverse and reports, after each
// layer, the parameters whose gradients are now complete, so data parallelism can start
// reducing them while the rest of the backward pass continues.
//
// Before each forward pass it tells each layer whether the next one takes blocked layouts and
// which layer follows it (runtime/nn/layer.h); it takes blocked input where its first layer
// does, and its last layer's output stays blocked only where its own consumer takes that.

#include <functional>
#include <vector>

#include "runtime/nn/composite.h"

namespace paddle::runtime {

class Sequential : public Composite {
 public:
  using GradientsReady = std::function<void(const std::vector<Parameter*>&)>;

  Sequential& add(LayerPtr layer) {
    layers_.push_back(std::move(layer));
    return *this;
  }

  Tensor forward(const Tensor& x, bool training) override;
  Tensor backward(const Tensor& dy) override;
  std::string describe() const override;
  bool takes_blocked() const override { return !layers_.empty() && layers_.front()->takes_blocked(); }
  void allow_blocked_output(bool allowed) override { blocked_output_ = allowed; }
  // Passed on to the first layer: a model's net skips the gradient of its data.
  void skip_input_gradient(bool skip) override { skip_input_gradient_ = skip; }

  void on_gradients_ready(GradientsReady callback) { ready_ = std::move(callback); }
  void zero_grad();
  const std::vector<LayerPtr>& layers() const { return layers_; }

 protected:
  std::vector<Layer*> sublayers() override;

 private:
  std::vector<LayerPtr> layers_;
  GradientsReady ready_;
  bool blocked_output_ = false;
  bool skip_input_gradient_ = false;
};

}  // namespace paddle::runtime
