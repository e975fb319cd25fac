#include "ps/update_rule.h"

#include <cmath>
#include <stdexcept>

namespace paddle::ps {

UpdateRule UpdateRule::parse(const std::string& name, float lr) {
  UpdateRule r;
  r.lr = lr;
  if (name == "sgd") r.kind = Kind::kSgd;
  else if (name == "adagrad") r.kind = Kind::kAdagrad;
  else if (name == "adam") r.kind = Kind::kAdam;
  else throw std::invalid_argument("server optimizer '" + name + "' is not sgd, adagrad or adam");
  return r;
}

void UpdateRule::apply(float* values, float* state, const float* grads, size_t n, int64_t step) const {
  switch (kind) {
    case Kind::kSgd:
      for (size_t i = 0; i < n; ++i) values[i] -= lr * grads[i];
      return;
    case Kind::kAdagrad:
      for (size_t i = 0; i < n; ++i) {
        state[i] += grads[i] * grads[i];
        values[i] -= lr * grads[i] / (std::sqrt(state[i]) + 1e-6f);
      }
      return;
    case Kind::kAdam: {
      const double c1 = 1.0 - std::pow(beta1, static_cast<double>(step));
      const double c2 = 1.0 - std::pow(beta2, static_cast<double>(step));
      const float size = static_cast<float>(lr * std::sqrt(c2) / c1);
      float* m = state;
      float* v = state + n;
      for (size_t i = 0; i < n; ++i) {
        m[i] = beta1 * m[i] + (1 - beta1) * grads[i];
        v[i] = beta2 * v[i] + (1 - beta2) * grads[i] * grads[i];
        values[i] -= size * m[i] / (std::sqrt(v[i]) + epsilon);
      }
      return;
    }
  }
}

}  // namespace paddle::ps
