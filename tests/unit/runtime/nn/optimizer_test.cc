#include <doctest/doctest.h>

#include <cmath>

#include "common/error.h"
#include "runtime/nn/optimizer.h"

using namespace paddle::runtime;

TEST_CASE("optimizers take the documented steps") {
  Parameter p("w", {1});
  auto step = [&](const std::string& type, float grad, float lr, int times) {
    OptimizerConfig c;
    c.kind = parse_optimizer_kind(type);
    auto o = make_optimizer(c);
    p.value.values()[0] = 1.0f;
    for (int i = 0; i < times; ++i) {
      p.grad.values()[0] = grad;
      o->step({&p}, lr);
    }
    return p.value.values()[0];
  };
  CHECK(step("sgd", 2, 0.1f, 1) == doctest::Approx(0.8));
  CHECK(step("momentum", 1, 0.1f, 2) == doctest::Approx(1 - 0.1 - 0.1 * 1.9));
  CHECK(step("adam", 5, 0.1f, 1) == doctest::Approx(0.9).epsilon(1e-4));
  CHECK(step("adagrad", 2, 0.1f, 1) == doctest::Approx(0.9).epsilon(1e-4));
  OptimizerConfig decay;
  decay.kind = OptimizerKind::kMomentum;
  decay.weight_decay = 0.5f;
  auto o = make_optimizer(decay);
  p.value.values()[0] = 1.0f;
  p.grad.values()[0] = 0.0f;
  o->step({&p}, 0.1f);
  CHECK(p.value.values()[0] == doctest::Approx(0.95));
  CHECK_THROWS_WITH_AS(parse_optimizer_kind("lamb"), doctest::Contains("optimizer.type 'lamb' is not"),
                       paddle::common::ConfigError);
  // A kind of the shared vocabulary the runtime does not implement.
  CHECK_THROWS_WITH_AS(parse_optimizer_kind("std_adagrad"), "optimizer.type 'std_adagrad' is not sgd, momentum, adam or adagrad",
                       paddle::common::ConfigError);
  CHECK_THROWS_AS(make_optimizer(OptimizerConfig{OptimizerKind::kStdAdagrad}), std::logic_error);
}
