#include "ps/table/update_rule.h"

#include <cmath>
#include <stdexcept>

#include "kernels/functors.h"

namespace paddle::ps {

UpdateRule UpdateRule::parse(const std::string& name, float lr) {
  UpdateRule r;
  r.lr = lr;
  if (name == "sgd") r.kind = Kind::kSgd;
  else if (name == "momentum") r.kind = Kind::kMomentum;
  else if (name == "adagrad") r.kind = Kind::kAdagrad;
  else if (name == "adam") r.kind = Kind::kAdam;
  else throw std::invalid_argument("server optimizer '" + name + "' is not sgd, momentum, adagrad or adam");
  return r;
}

void UpdateRule::apply(float* values, float* state, const float* grads, size_t n, int64_t step) const {
  const float decay = weight_decay;
  const auto gradient = [&](size_t i) { return decay != 0 ? grads[i] + decay * values[i] : grads[i]; };
  switch (kind) {
    case Kind::kSgd: {
      const kernels::SgdStep sgd{lr};
      for (size_t i = 0; i < n; ++i) sgd(values[i], gradient(i));
      return;
    }
    case Kind::kMomentum: {
      const kernels::MomentumStep momentum_step{lr, momentum};
      for (size_t i = 0; i < n; ++i) momentum_step(values[i], gradient(i), state[i]);
      return;
    }
    case Kind::kAdagrad: {
      const kernels::AdagradStep adagrad{lr, kernels::kAdagradEpsilon};
      for (size_t i = 0; i < n; ++i) adagrad(values[i], gradient(i), state[i]);
      return;
    }
    case Kind::kAdam: {
      const kernels::AdamStep adam{kernels::adam_step_size(lr, beta1, beta2, step), beta1, beta2, epsilon};
      float* m = state;
      float* v = state + n;
      for (size_t i = 0; i < n; ++i) adam(values[i], gradient(i), m[i], v[i]);
      return;
    }
  }
}

}  // namespace paddle::ps
