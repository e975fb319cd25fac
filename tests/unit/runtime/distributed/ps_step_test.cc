#include <doctest/doctest.h>

#include <cmath>

#include "runtime/distributed/ps_step.h"

using namespace paddle::runtime;

namespace {

paddle::ps::TableSpecs two_tables() {
  paddle::ps::TableSpecs specs;
  specs.dense.push_back({"dense", 3});
  specs.sparse.push_back({"rows", 2, 5});
  specs.update_rule = paddle::common::OptimizerKind::kSgd;
  specs.learning_rate = 0.5f;
  return specs;
}

}  // namespace

TEST_CASE("sync step: fetch pulls, apply pushes and the barrier applies the update") {
  auto fleet = Fleet::init(/*is_collective=*/false, DistributedStrategy{}, paddle::common::Environment{});
  fleet->init_worker(two_tables());
  fleet->parameter_store().init_dense(0, {1, 2, 3});
  auto step = make_ps_step(*fleet, two_tables(), 0.1f);
  PsValues values = step->fetch({{7, 9}});
  CHECK(values.dense == std::vector<std::vector<float>>{{1, 2, 3}});
  CHECK(values.keys == std::vector<std::vector<uint64_t>>{{7, 9}});
  REQUIRE(values.sparse.size() == 1);
  const std::vector<float> initial = values.sparse[0];  // never pushed: seeded inits within +-0.01
  for (float v : initial) CHECK(std::abs(v) <= 0.01f);
  PsValues grads{{{2, 2, 2}}, {{7}}, {{1, 1}}};
  step->apply(grads);
  values = step->fetch({{7}});
  CHECK(values.dense[0] == std::vector<float>{0, 1, 2});  // 1 - 0.5 * 2 ...
  // Row 7 was created by its first push at its seeded init, then updated by -0.5 * 1.
  CHECK(values.sparse[0] == std::vector<float>{initial[0] - 0.5f, initial[1] - 0.5f});
}

TEST_CASE("async and GEO steps need parameter servers") {
  DistributedStrategy geo;
  geo.set_a_sync(true, /*k_steps=*/2);
  CHECK(geo.ps.mode == PsMode::kGeo);
  auto fleet = Fleet::init(/*is_collective=*/false, geo, paddle::common::Environment{});
  CHECK_THROWS_WITH_AS(fleet->init_worker(two_tables()), doctest::Contains("need servers"), paddle::common::ConfigError);
}
