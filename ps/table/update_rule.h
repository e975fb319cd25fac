#pragma once
// UpdateRule: the optimizer a parameter server applies to its rows: SGD, Momentum, Adagrad or
// Adam, each keeping its state beside the values (state_width() floats per value). The arithmetic
// is the runtime optimizers' (kernels/functors.h), weight decay included (L2: weight_decay * w
// added to the gradient). Its kinds are common/optimizer_kind.h's; std_adagrad is the sparse rule's
// alone.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "common/optimizer_kind.h"

namespace paddle::ps {

struct UpdateRule {
  using Kind = common::OptimizerKind;
  Kind kind = Kind::kSgd;
  float lr = 0.01f;
  float momentum = 0.9f;  // Momentum's mu
  float weight_decay = 0.0f;  // L2
  float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f;

  // The kinds it implements: sgd, momentum, adagrad, adam.
  static std::span<const Kind> kinds();
  // Throws std::invalid_argument for a kind, or a name, other than those of kinds().
  static UpdateRule of(Kind kind, float lr);
  static UpdateRule parse(const std::string& name, float lr);
  size_t state_width() const { return kind == Kind::kSgd ? 0 : kind == Kind::kAdam ? 2 : 1; }
  // Updates n values from their gradients; `state` holds state_width() * n floats and `step`
  // counts this row's updates (for Adam's bias correction).
  void apply(float* values, float* state, const float* grads, size_t n, int64_t step) const;
};

}  // namespace paddle::ps
