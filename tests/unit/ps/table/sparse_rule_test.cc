#include <doctest/doctest.h>

#include <stdexcept>
#include <vector>

#include "ps/table/sparse_rule.h"

using namespace paddle::ps;

namespace {

// Three pushes of two values through `rule`, from w = {0.5, -0.5}; returns w after each.
std::vector<std::vector<float>> three_pushes(const SparseRuleSpec& rule, std::vector<float>& state) {
  std::vector<float> w{0.5f, -0.5f};
  state.assign(rule.state_width(2), -1.0f);
  rule.init_state(state.data(), 2);
  std::vector<std::vector<float>> after;
  for (const std::vector<float>& g : {std::vector<float>{1, -2}, {-1, 0.5f}, {2, 2}}) {
    rule.apply(w.data(), state.data(), g.data(), 2);
    after.push_back(w);
  }
  return after;
}

void check_close(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-5));
}

}  // namespace

TEST_CASE("sparse rules: names, state widths, and the error naming the choices") {
  CHECK(SparseRuleSpec::parse("sgd").state_width(7) == 0);
  CHECK(SparseRuleSpec::parse("adagrad").state_width(7) == 1);
  CHECK(SparseRuleSpec::parse("std_adagrad").state_width(7) == 7);
  CHECK(SparseRuleSpec::parse("adam").state_width(7) == 16);
  CHECK_THROWS_WITH_AS(SparseRuleSpec::parse("rmsprop"),
                       doctest::Contains("'rmsprop' is not one of sgd, adagrad, std_adagrad, adam"), std::invalid_argument);
  // A kind of the shared vocabulary the sparse rules do not implement.
  CHECK_THROWS_WITH_AS(SparseRuleSpec::parse("momentum"), "sparse rule 'momentum' is not one of sgd, adagrad, std_adagrad, adam",
                       std::invalid_argument);
  SparseRuleSpec by_hand;
  by_hand.kind = paddle::common::OptimizerKind::kMomentum;
  CHECK_THROWS_AS(by_hand.state_width(7), std::logic_error);
}

TEST_CASE("sparse sgd: w -= lr * g, clamped to the bounds") {
  SparseRuleSpec rule = SparseRuleSpec::parse("sgd");
  rule.learning_rate = 0.5f;
  rule.max_bound = 0.6f;
  std::vector<float> state;
  const auto w = three_pushes(rule, state);
  check_close(w[0], {0.0f, 0.5f});
  check_close(w[1], {0.5f, 0.25f});
  check_close(w[2], {-0.5f, -0.75f});
  rule.min_bound = -0.6f;
  check_close(three_pushes(rule, state)[2], {-0.5f, -0.6f});  // -0.75 clamped
}

TEST_CASE("sparse adagrad: one g2sum per row, the mean of each push's squares") {
  SparseRuleSpec rule = SparseRuleSpec::parse("adagrad");
  rule.learning_rate = 1.0f;
  rule.initial_g2sum = 3.0f;
  std::vector<float> state;
  const auto w = three_pushes(rule, state);
  // scale sqrt(3 / (3 + g2sum)): g2sum 0, then (1 + 4) / 2 = 2.5, then 2.5 + (1 + 0.25) / 2 = 3.125.
  check_close(w[0], {0.5f - 1.0f, -0.5f + 2.0f});
  const float s2 = 0.7385489f;  // sqrt(3 / 5.5)
  check_close(w[1], {-0.5f + s2, 1.5f - 0.5f * s2});
  const float s3 = 0.6998542f;  // sqrt(3 / 6.125)
  check_close(w[2], {-0.5f + s2 - 2 * s3, 1.5f - 0.5f * s2 - 2 * s3});
  CHECK(state[0] == doctest::Approx(3.125f + 4.0f));
}

TEST_CASE("sparse std adagrad: one g2sum per value") {
  SparseRuleSpec rule = SparseRuleSpec::parse("std_adagrad");
  rule.learning_rate = 1.0f;
  rule.initial_g2sum = 3.0f;
  std::vector<float> state;
  const auto w = three_pushes(rule, state);
  // value 0: g 1, -1, 2 with g2sum 0, 1, 2; value 1: g -2, 0.5, 2 with g2sum 0, 4, 4.25.
  check_close(w[0], {-0.5f, 1.5f});
  check_close(w[1], {-0.5f + 0.8660254f, 1.5f - 0.5f * 0.6546537f});
  check_close(w[2], {-0.5f + 0.8660254f - 2 * 0.7745967f, 1.5f - 0.5f * 0.6546537f - 2 * 0.6432675f});
  CHECK(state == std::vector<float>{6.0f, 8.25f});
}

TEST_CASE("sparse adam: m and v per value, beta pows per row") {
  SparseRuleSpec rule = SparseRuleSpec::parse("adam");
  rule.learning_rate = 0.1f;
  std::vector<float> state;
  const auto w = three_pushes(rule, state);
  check_close(w[0], {0.4f, -0.4f});
  check_close(w[1], {0.4052632f, -0.3530532f});
  check_close(w[2], {0.3554390f, -0.3715222f});
  check_close(state, {0.191f, 0.083f, 0.005997001f, 0.008241754f, 0.6561f, 0.996006f});
}
