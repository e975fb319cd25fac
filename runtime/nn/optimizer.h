#pragma once
// Optimizers: update parameters from their (already averaged) gradients, on the parameters'
// device (the update rules of kernels/optimizer_update.h, on the execution they were placed on
// when the parameters live on a CUDA device). Their
// per-parameter state is exposed so checkpoints can save and restore it.

#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/optimizer_kind.h"
#include "runtime/nn/layer.h"

namespace paddle::runtime {

// The shared vocabulary (common/optimizer_kind.h), of which the runtime implements some.
using OptimizerKind = common::OptimizerKind;

// The kinds make_optimizer() implements, in the order configs list them: sgd, momentum, adam,
// adagrad.
std::span<const OptimizerKind> optimizer_kinds();

// The name of one of optimizer_kinds(); throws common::ConfigError naming `key` for another name.
OptimizerKind parse_optimizer_kind(const std::string& name, const std::string& key = "optimizer.type");

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::kSgd;
  float momentum = 0.9f;
  float weight_decay = 0.0f;  // L2: adds weight_decay * w to the gradient
  float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual void step(const std::vector<Parameter*>& params, float lr) = 0;
  // Runs the updates on `execution` (where the model was placed) from now on.
  void place(Execution& execution) { execution_ = &execution; }
  // Named state tensors ("velocity/conv1.w", ...), for checkpoints; on the parameters' device
  // once the first step has made them, on the host as a checkpoint loads them.
  std::map<std::string, Tensor>& state() { return state_; }
  int64_t steps() const { return steps_; }
  void set_steps(int64_t steps) { steps_ = steps; }
  // Makes every state tensor of `params` that the first step would make (zeros), so that ranks
  // with and without a loaded checkpoint hold the same tensors to broadcast.
  void create_state(const std::vector<Parameter*>& params);

 protected:
  // The state tensor KIND/PARAM, zeros at first, on the parameter's device.
  Tensor& slot(const std::string& kind, const Parameter& p);
  // Where p's update runs: the CPU for host parameters, else the placed execution (throws
  // std::logic_error when place() was not called).
  const kernels::Context& context(const Parameter& p) const;

  // The kinds of state this optimizer keeps per parameter ("velocity", ...).
  virtual std::vector<std::string> state_kinds() const { return {}; }

  std::map<std::string, Tensor> state_;
  int64_t steps_ = 0;

 private:
  Execution* execution_ = nullptr;
};

// Throws std::logic_error for a kind not in optimizer_kinds().
std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config);

}  // namespace paddle::runtime
