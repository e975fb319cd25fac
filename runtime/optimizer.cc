#include "optimizer.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace paddle::runtime {

std::vector<float>& Optimizer::slot(const std::string& kind, const Parameter& p) {
  auto& v = state_[kind + "/" + p.name];
  if (v.size() != p.value.data.size()) v.assign(p.value.data.size(), 0.0f);
  return v;
}

namespace {

class Sgd : public Optimizer {
 public:
  explicit Sgd(OptimizerConfig c) : c_(c) {}
  void step(const std::vector<Parameter*>& params, float lr) override {
    for (Parameter* p : params)
      for (size_t i = 0; i < p->value.data.size(); ++i)
        p->value.data[i] -= lr * (p->grad.data[i] + c_.weight_decay * p->value.data[i]);
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
      auto& v = slot("velocity", *p);
      for (size_t i = 0; i < v.size(); ++i) {
        const float g = p->grad.data[i] + c_.weight_decay * p->value.data[i];
        v[i] = c_.momentum * v[i] + g;
        p->value.data[i] -= lr * v[i];
      }
    }
    ++steps_;
  }

 private:
  OptimizerConfig c_;
};

class Adam : public Optimizer {
 public:
  explicit Adam(OptimizerConfig c) : c_(c) {}
  void step(const std::vector<Parameter*>& params, float lr) override {
    ++steps_;
    const double correction1 = 1.0 - std::pow(c_.beta1, static_cast<double>(steps_));
    const double correction2 = 1.0 - std::pow(c_.beta2, static_cast<double>(steps_));
    const float step_size = static_cast<float>(lr * std::sqrt(correction2) / correction1);
    for (Parameter* p : params) {
      auto& m = slot("moment1", *p);
      auto& v = slot("moment2", *p);
      for (size_t i = 0; i < m.size(); ++i) {
        const float g = p->grad.data[i] + c_.weight_decay * p->value.data[i];
        m[i] = c_.beta1 * m[i] + (1 - c_.beta1) * g;
        v[i] = c_.beta2 * v[i] + (1 - c_.beta2) * g * g;
        p->value.data[i] -= step_size * m[i] / (std::sqrt(v[i]) + c_.epsilon);
      }
    }
  }

 private:
  OptimizerConfig c_;
};

class Adagrad : public Optimizer {
 public:
  explicit Adagrad(OptimizerConfig c) : c_(c) {}
  void step(const std::vector<Parameter*>& params, float lr) override {
    for (Parameter* p : params) {
      auto& acc = slot("moment", *p);
      for (size_t i = 0; i < acc.size(); ++i) {
        const float g = p->grad.data[i] + c_.weight_decay * p->value.data[i];
        acc[i] += g * g;
        p->value.data[i] -= lr * g / (std::sqrt(acc[i]) + 1e-6f);
      }
    }
    ++steps_;
  }

 private:
  OptimizerConfig c_;
};

}  // namespace

std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config) {
  if (config.type == "sgd") return std::make_unique<Sgd>(config);
  if (config.type == "momentum") return std::make_unique<Momentum>(config);
  if (config.type == "adam") return std::make_unique<Adam>(config);
  if (config.type == "adagrad") return std::make_unique<Adagrad>(config);
  throw std::invalid_argument(fmt::format("optimizer.type '{}' is not sgd, momentum, adam or adagrad", config.type));
}

}  // namespace paddle::runtime
