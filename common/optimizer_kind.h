#pragma once
// OptimizerKind: the one vocabulary of optimizers, shared by the runtime's optimizers
// (runtime/nn/optimizer.h), the servers' dense rule (ps/table/update_rule.h) and the CTR rows'
// sparse rule (ps/table/sparse_rule.h), with their Paddle names. Each user implements some of
// the kinds and says which (its kinds()), refusing the others with its own error; config keys
// take their choices from those lists, so every name is written here once.
//
//   std::optional<OptimizerKind> kind = common::optimizer_kind_named("adam");
//   common::optimizer_kind_name(OptimizerKind::kStdAdagrad)  // "std_adagrad"
//
// Nothing writes a kind as a number; a file or message names it.

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace paddle::common {

enum class OptimizerKind { kSgd, kMomentum, kAdagrad, kStdAdagrad, kAdam };

// Every kind, in the enum's order.
inline constexpr std::array<OptimizerKind, 5> kOptimizerKinds{OptimizerKind::kSgd, OptimizerKind::kMomentum,
                                                              OptimizerKind::kAdagrad, OptimizerKind::kStdAdagrad,
                                                              OptimizerKind::kAdam};

// The Paddle name: "sgd", "momentum", "adagrad", "std_adagrad" or "adam".
std::string_view optimizer_kind_name(OptimizerKind kind);

// The kind named `name` (a Paddle name above), nothing for another name.
std::optional<OptimizerKind> optimizer_kind_named(std::string_view name);

// The names of `kinds`, in their order (a config key's choices, an error's list).
std::vector<std::string> optimizer_kind_names(std::span<const OptimizerKind> kinds);

// The names of `kinds` for an error's "is not ...": "sgd, momentum, adagrad or adam".
std::string optimizer_kinds_text(std::span<const OptimizerKind> kinds);

}  // namespace paddle::common
