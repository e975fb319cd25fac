#include <doctest/doctest.h>

#include <array>

#include "common/optimizer_kind.h"

using namespace paddle::common;

TEST_CASE("optimizer kinds: each name looks up its kind, other names nothing") {
  for (const OptimizerKind kind : kOptimizerKinds) CHECK(optimizer_kind_named(optimizer_kind_name(kind)) == kind);
  CHECK(optimizer_kind_name(OptimizerKind::kStdAdagrad) == "std_adagrad");
  CHECK(optimizer_kind_named("adam") == OptimizerKind::kAdam);
  CHECK_FALSE(optimizer_kind_named("lamb").has_value());
  CHECK_FALSE(optimizer_kind_named("").has_value());
  CHECK_FALSE(optimizer_kind_named("Adam").has_value());
}

TEST_CASE("optimizer kinds: names of a list keep its order") {
  constexpr std::array kinds{OptimizerKind::kAdam, OptimizerKind::kSgd};
  CHECK(optimizer_kind_names(kinds) == std::vector<std::string>{"adam", "sgd"});
  CHECK(optimizer_kind_names(kOptimizerKinds) ==
        std::vector<std::string>{"sgd", "momentum", "adagrad", "std_adagrad", "adam"});
}

TEST_CASE("optimizer kinds: the text an error lists them in") {
  constexpr std::array kinds{OptimizerKind::kSgd, OptimizerKind::kMomentum, OptimizerKind::kAdam};
  CHECK(optimizer_kinds_text(kinds) == "sgd, momentum or adam");
  CHECK(optimizer_kinds_text(std::span(kinds).first(1)) == "sgd");
  CHECK(optimizer_kinds_text({}) == "");
}
