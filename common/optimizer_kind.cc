#include "common/optimizer_kind.h"

namespace paddle::common {

std::string_view optimizer_kind_name(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSgd: return "sgd";
    case OptimizerKind::kMomentum: return "momentum";
    case OptimizerKind::kAdagrad: return "adagrad";
    case OptimizerKind::kStdAdagrad: return "std_adagrad";
    case OptimizerKind::kAdam: return "adam";
  }
  return "?";
}

std::optional<OptimizerKind> optimizer_kind_named(std::string_view name) {
  for (const OptimizerKind kind : kOptimizerKinds)
    if (optimizer_kind_name(kind) == name) return kind;
  return std::nullopt;
}

std::vector<std::string> optimizer_kind_names(std::span<const OptimizerKind> kinds) {
  std::vector<std::string> names;
  names.reserve(kinds.size());
  for (const OptimizerKind kind : kinds) names.emplace_back(optimizer_kind_name(kind));
  return names;
}

std::string optimizer_kinds_text(std::span<const OptimizerKind> kinds) {
  std::string out;
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (i > 0) out += i + 1 == kinds.size() ? " or " : ", ";
    out += optimizer_kind_name(kinds[i]);
  }
  return out;
}

}  // namespace paddle::common
