#pragma once
// Sequential: layers applied in order. backward() runs them in reverse and reports, after each
// layer, the parameters whose gradients are now complete, so data parallelism can start
// reducing them while the rest of the backward pass continues.

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

  void on_gradients_ready(GradientsReady callback) { ready_ = std::move(callback); }
  void zero_grad();
  const std::vector<LayerPtr>& layers() const { return layers_; }

 protected:
  std::vector<Layer*> sublayers() override;

 private:
  std::vector<LayerPtr> layers_;
  GradientsReady ready_;
};

}  // namespace paddle::runtime
