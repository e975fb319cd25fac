#include <doctest/doctest.h>

#include <cmath>

#include "runtime/nn/loss.h"

using namespace paddle::runtime;

TEST_CASE("softmax cross-entropy and square error") {
  Tensor logits = Tensor::from_values({2, 3}, {0, 0, 0, 10, 0, 0});
  LossResult r = softmax_cross_entropy(logits, {1, 0});
  CHECK(r.loss == doctest::Approx((std::log(3.0) + std::log(1 + 2 * std::exp(-10.0))) / 2).epsilon(1e-5));
  CHECK(r.grad.values()[1] == doctest::Approx((1.0 / 3 - 1) / 2));
  Tensor pred = Tensor::from_values({2, 1}, {1, 3});
  LossResult s = square_error(pred, {0, 1});
  CHECK(s.loss == doctest::Approx(2.5));
  CHECK(s.grad.values()[1] == doctest::Approx(2.0));
}
