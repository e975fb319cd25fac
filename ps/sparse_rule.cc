#include "ps/sparse_rule.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kernels/functors.h"

namespace paddle::ps {

SparseRuleSpec SparseRuleSpec::parse(const std::string& name) {
  SparseRuleSpec r;
  if (name == "sgd") r.kind = Kind::kSgd;
  else if (name == "adagrad") r.kind = Kind::kAdagrad;
  else if (name == "std_adagrad") r.kind = Kind::kStdAdagrad;
  else if (name == "adam") r.kind = Kind::kAdam;
  else throw std::invalid_argument("sparse rule '" + name + "' is not one of sgd, adagrad, std_adagrad, adam");
  return r;
}

size_t SparseRuleSpec::state_width(size_t n) const {
  switch (kind) {
    case Kind::kSgd: return 0;
    case Kind::kAdagrad: return 1;
    case Kind::kStdAdagrad: return n;
    case Kind::kAdam: return 2 * n + 2;
  }
  return 0;
}

void SparseRuleSpec::init_state(float* state, size_t n) const {
  std::fill_n(state, state_width(n), 0.0f);
  if (kind == Kind::kAdam) {
    state[2 * n] = beta1;
    state[2 * n + 1] = beta2;
  }
}

void SparseRuleSpec::apply(float* values, float* state, const float* grads, size_t n) const {
  switch (kind) {
    case Kind::kSgd: {
      const kernels::SgdStep sgd{learning_rate};
      for (size_t i = 0; i < n; ++i) sgd(values[i], grads[i]);
      break;
    }
    case Kind::kAdagrad: {
      const kernels::SgdStep scaled{learning_rate * kernels::adagrad_scale(initial_g2sum, state[0])};
      double squares = 0;
      for (size_t i = 0; i < n; ++i) {
        scaled(values[i], grads[i]);
        squares += static_cast<double>(grads[i]) * grads[i];
      }
      if (n > 0) state[0] += static_cast<float>(squares / static_cast<double>(n));
      break;
    }
    case Kind::kStdAdagrad: {
      const kernels::StdAdagradStep step{learning_rate, initial_g2sum};
      for (size_t i = 0; i < n; ++i) step(values[i], grads[i], state[i]);
      break;
    }
    case Kind::kAdam: {
      float& beta1_pow = state[2 * n];
      float& beta2_pow = state[2 * n + 1];
      const float step_size = learning_rate * std::sqrt(1.0f - beta2_pow) / (1.0f - beta1_pow);
      const kernels::AdamStep adam{step_size, beta1, beta2, epsilon};
      for (size_t i = 0; i < n; ++i) adam(values[i], grads[i], state[i], state[n + i]);
      beta1_pow *= beta1;
      beta2_pow *= beta2;
      break;
    }
  }
  for (size_t i = 0; i < n; ++i) values[i] = std::clamp(values[i], min_bound, max_bound);
}

}  // namespace paddle::ps
