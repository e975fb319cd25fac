#pragma once
// Optimizers: update parameters from their (already averaged) gradients. Their per-parameter
// state is exposed so checkpoints can save and restore it.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "layer.h"

namespace paddle::runtime {

struct OptimizerConfig {
  std::string type = "sgd";  // sgd, momentum, adam, adagrad
  float momentum = 0.9f;
  float weight_decay = 0.0f;  // L2: adds weight_decay * w to the gradient
  float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual void step(const std::vector<Parameter*>& params, float lr) = 0;
  // Named state tensors ("momentum/conv1.w", ...), for checkpoints.
  std::map<std::string, std::vector<float>>& state() { return state_; }
  int64_t steps() const { return steps_; }
  void set_steps(int64_t steps) { steps_ = steps; }

 protected:
  std::vector<float>& slot(const std::string& kind, const Parameter& p);
  std::map<std::string, std::vector<float>> state_;
  int64_t steps_ = 0;
};

// Throws std::invalid_argument naming an unknown type.
std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config);

}  // namespace paddle::runtime
