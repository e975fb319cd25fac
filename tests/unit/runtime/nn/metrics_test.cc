#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "runtime/nn/metrics.h"

using namespace paddle::runtime;

TEST_CASE("top-k accuracy and AUC") {
  Tensor scores = Tensor::from_values({2, 3}, {0.1f, 0.5f, 0.4f, 0.9f, 0.05f, 0.05f});
  CHECK(top_k_correct(scores, {2, 0}, 1) == 1);
  CHECK(top_k_correct(scores, {2, 0}, 2) == 2);
  CHECK(auc({0.1f, 0.4f, 0.35f, 0.8f}, {0, 0, 1, 1}) == doctest::Approx(0.75));
  CHECK(auc({0.5f, 0.5f}, {0, 1}) == doctest::Approx(0.5));
  CHECK(auc({0.2f, 0.3f}, {1, 1}) == doctest::Approx(0.5));
  CHECK_THROWS_AS(auc({0.2f, std::nanf("")}, {0, 1}), std::invalid_argument);
}
