#pragma once
// SparseRuleSpec: the optimizer of one part of a CTR table's rows (ps/ctr_accessor.h), with the
// small per-row state the parameter servers' sparse tables can afford, and the weight bounds every
// rule clamps to. State layout, after the n values it updates:
//
//   sgd          none
//   adagrad      g2sum                      (1 float: the row's sum of each step's mean g^2)
//   std_adagrad  g2sum[n]                   (one per value)
//   adam         m[n], v[n], beta1_pow, beta2_pow   (the pows start at beta1, beta2)
//
// The arithmetic is kernels/functors.h's: SgdStep, StdAdagradStep / adagrad_scale, AdamStep.

#include <cstddef>
#include <string>

namespace paddle::ps {

struct SparseRuleSpec {
  enum class Kind { kSgd, kAdagrad, kStdAdagrad, kAdam };
  Kind kind = Kind::kAdagrad;
  float learning_rate = 0.05f;
  float initial_g2sum = 3.0f;                    // adagrad / std adagrad
  float initial_range = 1e-4f;                   // init values uniform in [-r, r], seeded per key
  float min_bound = -10.0f, max_bound = 10.0f;   // weight bounds, every rule clamps
  float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f;  // adam

  // "sgd", "adagrad", "std_adagrad", "adam"; throws std::invalid_argument naming the name and
  // the choices.
  static SparseRuleSpec parse(const std::string& name);
  // Floats of state for n values.
  size_t state_width(size_t n) const;
  // The state of a new row (zeros; adam's pows at beta1, beta2).
  void init_state(float* state, size_t n) const;
  // Updates n values from their gradients and clamps them to the bounds.
  void apply(float* values, float* state, const float* grads, size_t n) const;
};

}  // namespace paddle::ps
