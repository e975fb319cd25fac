#include "runtime/nn/optimizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "common/error.h"
#include "kernels/functors.h"
#include "kernels/optimizer_update.h"

namespace paddle::runtime {

Tensor& Optimizer::slot(const std::string& kind, const Parameter& p) {
  Tensor& t = state_[kind + "/" + p.name];
  if (t.numel() != p.value.numel()) t = Tensor(p.value.shape, DType::kFloat32, p.value.device());
  else if (!(t.device() == p.value.device())) t = t.to(p.value.device());  // loaded from a checkpoint
  t.shape = p.value.shape;
  return t;
}

void Optimizer::create_state(const std::vector<Parameter*>& params) {
  for (const std::string& kind : state_kinds())
    for (const Parameter* p : params) slot(kind, *p);
}

const kernels::Context& Optimizer::context(const Parameter& p) const {
  if (!p.value.on_cuda()) return kernels::Context::host();
  if (execution_ == nullptr) throw std::logic_error("optimizer: parameters on a CUDA device, but place() was not called");
  return execution_->context();
}

namespace {

size_t size_of(const Parameter& p) { return static_cast<size_t>(p.value.numel()); }

class Sgd : public Optimizer {
 public:
  explicit Sgd(OptimizerConfig c) : c_(c) {}
  void step(const std::vector<Parameter*>& params, float lr) override {
    for (Parameter* p : params) {
      kernels::sgd_update(context(*p), p->value.ptr(), p->grad.ptr(), size_of(*p), lr, c_.weight_decay);
    }
    ++steps_;
  }

 private:
  OptimizerConfig c_;
};

// Paddle's momentum: v = mu * v + g; w -= lr * v (with L2 decay added to g).
class Momentum : public Optimizer {
 public:
  explicit Momentum(OptimizerConfig c) : c_(c) {}
  void step(const std::vector<Parameter*>& params, float lr) override {
    for (Parameter* p : params) {
      Tensor& velocity = slot("velocity", *p);
      kernels::momentum_update(context(*p), p->value.ptr(), p->grad.ptr(), velocity.ptr(), size_of(*p), lr,
                               c_.momentum, c_.weight_decay);
    }
    ++steps_;
  }

 private:
  std::vector<std::string> state_kinds() const override { return {"velocity"}; }
  OptimizerConfig c_;
};

class Adam : public Optimizer {
 public:
  explicit Adam(OptimizerConfig c) : c_(c) {}
  void step(const std::vector<Parameter*>& params, float lr) override {
    ++steps_;
    const float step_size = kernels::adam_step_size(lr, c_.beta1, c_.beta2, steps_);
    for (Parameter* p : params) {
      Tensor& moment1 = slot("moment1", *p);
      Tensor& moment2 = slot("moment2", *p);
      kernels::adam_update(context(*p), p->value.ptr(), p->grad.ptr(), moment1.ptr(), moment2.ptr(), size_of(*p),
                           step_size, c_.beta1, c_.beta2, c_.epsilon, c_.weight_decay);
    }
  }

 private:
  std::vector<std::string> state_kinds() const override { return {"moment1", "moment2"}; }
  OptimizerConfig c_;
};

class Adagrad : public Optimizer {
 public:
  explicit Adagrad(OptimizerConfig c) : c_(c) {}
  void step(const std::vector<Parameter*>& params, float lr) override {
    for (Parameter* p : params) {
      Tensor& moment = slot("moment", *p);
      kernels::adagrad_update(context(*p), p->value.ptr(), p->grad.ptr(), moment.ptr(), size_of(*p), lr, kernels::kAdagradEpsilon,
                              c_.weight_decay);
    }
    ++steps_;
  }

 private:
  std::vector<std::string> state_kinds() const override { return {"moment"}; }
  OptimizerConfig c_;
};

}  // namespace

std::span<const OptimizerKind> optimizer_kinds() {
  static constexpr std::array<OptimizerKind, 4> kImplemented{OptimizerKind::kSgd, OptimizerKind::kMomentum, OptimizerKind::kAdam,
                                                             OptimizerKind::kAdagrad};
  return kImplemented;
}

OptimizerKind parse_optimizer_kind(const std::string& name, const std::string& key) {
  const std::optional<OptimizerKind> kind = common::optimizer_kind_named(name);
  const std::span<const OptimizerKind> implemented = optimizer_kinds();
  if (!kind || std::find(implemented.begin(), implemented.end(), *kind) == implemented.end())
    throw common::ConfigError(fmt::format("{} '{}' is not {}", key, name, common::optimizer_kinds_text(implemented)));
  return *kind;
}

std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config) {
  switch (config.kind) {
    case OptimizerKind::kSgd: return std::make_unique<Sgd>(config);
    case OptimizerKind::kMomentum: return std::make_unique<Momentum>(config);
    case OptimizerKind::kAdam: return std::make_unique<Adam>(config);
    case OptimizerKind::kAdagrad: return std::make_unique<Adagrad>(config);
    case OptimizerKind::kStdAdagrad: break;  // the servers' sparse rule alone
  }
  throw std::logic_error(fmt::format("make_optimizer: the runtime has no {} optimizer", common::optimizer_kind_name(config.kind)));
}

}  // namespace paddle::runtime
