#include "ps/table/update_rule.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "kernels/functors.h"

namespace paddle::ps {

namespace {

constexpr std::array<common::OptimizerKind, 4> kImplemented{common::OptimizerKind::kSgd, common::OptimizerKind::kMomentum,
                                                            common::OptimizerKind::kAdagrad, common::OptimizerKind::kAdam};

}  // namespace

std::span<const UpdateRule::Kind> UpdateRule::kinds() { return kImplemented; }

UpdateRule UpdateRule::of(Kind kind, float lr) {
  if (std::find(kImplemented.begin(), kImplemented.end(), kind) == kImplemented.end())
    throw std::invalid_argument("server optimizer '" + std::string(common::optimizer_kind_name(kind)) + "' is not " +
                                common::optimizer_kinds_text(kImplemented));
  UpdateRule r;
  r.lr = lr;
  r.kind = kind;
  return r;
}

UpdateRule UpdateRule::parse(const std::string& name, float lr) {
  const std::optional<Kind> kind = common::optimizer_kind_named(name);
  if (!kind)
    throw std::invalid_argument("server optimizer '" + name + "' is not " + common::optimizer_kinds_text(kImplemented));
  return of(*kind, lr);
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
    case Kind::kStdAdagrad: break;  // not a server rule; parse() refuses it
  }
  throw std::logic_error("UpdateRule::apply: the servers have no " + std::string(common::optimizer_kind_name(kind)) +
                         " rule");
}

}  // namespace paddle::ps
