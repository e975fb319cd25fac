#include "runtime/models/wide_deep.h"

#include <doctest/doctest.h>

#include <random>

namespace paddle::runtime {

TEST_CASE("WideDeep's parameter count from its settings is the built model's, without building it") {
  for (const auto& [dim, hidden] : {std::pair<size_t, std::vector<int64_t>>{9, {512, 256, 128, 32}},
                                    {8, {}}, {1, {7}}, {16, {3, 5}}}) {
    std::mt19937 rng(1);
    WideDeep built(dim, hidden, rng);
    CHECK(WideDeep::dense_size(dim, hidden) == built.dense_size());
    CHECK(built.dense_values().size() == built.dense_size());
  }
  // The default config's deep part: 247 inputs through 512-256-128-32 to one logit.
  CHECK(WideDeep::dense_size(9, {512, 256, 128, 32}) == 295361);
}

}  // namespace paddle::runtime
