#pragma once
// BatchNorm2D on [N,C,H,W] (kernels/batch_norm.h).

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/nn/layer.h"

namespace paddle::runtime {

// Batch normalization over N,H,W per channel, with running statistics for evaluation.
class BatchNorm2D : public Layer {
 public:
  BatchNorm2D(int64_t channels, const std::string& name, float momentum = 0.9f, float epsilon = 1e-5f);
  // The floats its parameters hold (scale and shift; the running statistics are buffers).
  static size_t parameter_count(int64_t channels) { return static_cast<size_t>(2 * channels); }
  Tensor forward(const Tensor& x, bool training) override;
  Tensor backward(const Tensor& dy) override;
  std::vector<Parameter*> parameters() override { return {&scale_, &shift_}; }
  std::vector<std::pair<std::string, Tensor*>> buffers() override {
    return {{name_ + ".mean", &running_mean_}, {name_ + ".var", &running_var_}};
  }
  std::string describe() const override;

 private:
  std::string name_;
  int64_t channels_;
  float momentum_, epsilon_;
  Parameter scale_, shift_;
  Tensor running_mean_, running_var_;
  Tensor input_;                       // of the last training forward pass
  Tensor saved_mean_, saved_inv_std_;  // its batch statistics, per channel
};

}  // namespace paddle::runtime
