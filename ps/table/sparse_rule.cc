#include "ps/table/sparse_rule.h"

#include <algorithm>
#include <stdexcept>

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

}  // namespace paddle::ps
