#include "ps/table/sparse_rule.h"

#include <algorithm>
#include <array>
#include <optional>
#include <stdexcept>

namespace paddle::ps {

namespace {

constexpr std::array<common::OptimizerKind, 4> kImplemented{common::OptimizerKind::kSgd, common::OptimizerKind::kAdagrad,
                                                            common::OptimizerKind::kStdAdagrad, common::OptimizerKind::kAdam};

}  // namespace

std::span<const SparseRuleSpec::Kind> SparseRuleSpec::kinds() { return kImplemented; }

SparseRuleSpec SparseRuleSpec::parse(const std::string& name) {
  const std::optional<Kind> kind = common::optimizer_kind_named(name);
  if (!kind || std::find(kImplemented.begin(), kImplemented.end(), *kind) == kImplemented.end()) {
    std::string choices;
    for (const Kind k : kImplemented) choices += (choices.empty() ? "" : ", ") + std::string(common::optimizer_kind_name(k));
    throw std::invalid_argument("sparse rule '" + name + "' is not one of " + choices);
  }
  SparseRuleSpec r;
  r.kind = *kind;
  return r;
}

size_t SparseRuleSpec::state_width(size_t n) const {
  switch (kind) {
    case Kind::kSgd: return 0;
    case Kind::kAdagrad: return 1;
    case Kind::kStdAdagrad: return n;
    case Kind::kAdam: return 2 * n + 2;
    case Kind::kMomentum: break;  // not a sparse rule; parse() refuses it
  }
  refuse(kind);
}

void SparseRuleSpec::refuse(Kind kind) {
  throw std::logic_error("SparseRuleSpec: the sparse rules have no " + std::string(common::optimizer_kind_name(kind)) +
                         " rule");
}

void SparseRuleSpec::init_state(float* state, size_t n) const {
  std::fill_n(state, state_width(n), 0.0f);
  if (kind == Kind::kAdam) {
    state[2 * n] = beta1;
    state[2 * n + 1] = beta2;
  }
}

}  // namespace paddle::ps
