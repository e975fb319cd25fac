#pragma once
// SparseRuleSpec: the optimizer of one part of a CTR table's rows (ps/table/ctr_accessor.h), with the
// small per-row state the parameter servers' sparse tables can afford, and the weight bounds every
// rule clamps to. State layout, after the n values it updates:
//
//   sgd          none
//   adagrad      g2sum                      (1 float: the row's sum of each step's mean g^2)
//   std_adagrad  g2sum[n]                   (one per value)
//   adam         m[n], v[n], beta1_pow, beta2_pow   (the pows start at beta1, beta2)
//
// The arithmetic is kernels/functors.h's: SgdStep, StdAdagradStep / adagrad_scale, AdamStep. Its
// kinds are common/optimizer_kind.h's; momentum is the dense rules' alone.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>

#include "common/optimizer_kind.h"
#include "kernels/functors.h"

namespace paddle::ps {

struct SparseRuleSpec {
  using Kind = common::OptimizerKind;
  Kind kind = Kind::kAdagrad;
  float learning_rate = 0.05f;
  float initial_g2sum = 3.0f;                    // adagrad / std adagrad
  float initial_range = 1e-4f;                   // init values uniform in [-r, r], seeded per key
  float min_bound = -10.0f, max_bound = 10.0f;   // weight bounds, every rule clamps
  float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f;  // adam

  // The kinds it implements: sgd, adagrad, std_adagrad, adam.
  static std::span<const Kind> kinds();
  // The name of one of kinds(); throws std::invalid_argument naming the name and the choices.
  static SparseRuleSpec parse(const std::string& name);
  // Floats of state for n values; throws std::logic_error for a kind not in kinds().
  size_t state_width(size_t n) const;
  // The state of a new row (zeros; adam's pows at beta1, beta2).
  void init_state(float* state, size_t n) const;
  // Updates n values from their gradients and clamps them to the bounds.
  // Inline: a server applies it to every pushed row, and inlined into CtrAccessor::push it costs
  // no call (a push on a table in the cache ran about 5% faster).
  void apply(float* values, float* state, const float* grads, size_t n) const;

 private:
  // Throws std::logic_error: `kind` is not one of kinds() (set by hand, not parsed).
  [[noreturn]] static void refuse(Kind kind);
};

inline void SparseRuleSpec::apply(float* values, float* state, const float* grads, size_t n) const {
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
    case Kind::kMomentum: refuse(kind);  // not a sparse rule; parse() refuses it
  }
  for (size_t i = 0; i < n; ++i) values[i] = std::clamp(values[i], min_bound, max_bound);
}


}  // namespace paddle::ps
