#include <doctest/doctest.h>

#include <cmath>

#include "ps/update_rule.h"
#include "tests/unit/ps/ps_test_support.h"

using namespace paddle::ps;
using namespace paddle::ps::testing;
TEST_CASE("update rules") {
  float w = 1, g = 2;
  std::vector<float> state(2, 0);
  UpdateRule::parse("sgd", 0.1f).apply(&w, nullptr, &g, 1, 1);
  CHECK(w == doctest::Approx(0.8));
  w = 1;
  UpdateRule::parse("adagrad", 0.1f).apply(&w, state.data(), &g, 1, 1);
  CHECK(w == doctest::Approx(0.9).epsilon(1e-4));
  w = 1;
  state = {0, 0};
  UpdateRule::parse("adam", 0.1f).apply(&w, state.data(), &g, 1, 1);
  CHECK(w == doctest::Approx(0.9).epsilon(1e-4));
  CHECK_THROWS_AS(UpdateRule::parse("lamb", 0.1f), std::invalid_argument);
}
