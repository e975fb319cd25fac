#include <doctest/doctest.h>

#include <cmath>

#include "ps/table/update_rule.h"
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
  // A kind of the shared vocabulary the servers' dense rule does not implement.
  CHECK_THROWS_WITH_AS(UpdateRule::parse("std_adagrad", 0.1f),
                       "server optimizer 'std_adagrad' is not sgd, momentum, adagrad or adam", std::invalid_argument);
  CHECK(UpdateRule::kinds().size() == 4);
}

TEST_CASE("momentum on the servers is Paddle's: v = mu * v + g, w -= lr * v, one state value per value") {
  UpdateRule rule = UpdateRule::parse("momentum", 0.1f);
  rule.momentum = 0.5f;
  CHECK(rule.state_width() == 1);
  float w = 1, v = 0;
  const float g = 2;
  rule.apply(&w, &v, &g, 1, 1);
  CHECK(v == doctest::Approx(2.0));
  CHECK(w == doctest::Approx(0.8));
  rule.apply(&w, &v, &g, 1, 2);
  CHECK(v == doctest::Approx(3.0));
  CHECK(w == doctest::Approx(0.5));
}

TEST_CASE("weight decay on the servers adds weight_decay * w to the gradient, as the runtime's optimizers do") {
  UpdateRule rule = UpdateRule::parse("sgd", 0.1f);
  rule.weight_decay = 0.5f;
  float w = 2;
  const float g = 1;
  rule.apply(&w, nullptr, &g, 1, 1);
  CHECK(w == doctest::Approx(2 - 0.1 * (1 + 0.5 * 2)));
}
