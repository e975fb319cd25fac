// The CNN's conv -> ReLU -> pool chain on oneDNN, which keeps its activations in blocked layouts
// and fuses bias and ReLU into the convolutions (runtime/nn/layer.h), against the same model on
// the plain kernels: outputs, every parameter gradient and the input gradient agree to within
// float rounding.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "runtime/core/execution.h"
#include "runtime/nn/layers.h"
#include "runtime/nn/sequential.h"
#include "tests/unit/runtime/nn/gradient_check.h"

using namespace paddle::runtime;
using paddle::runtime::testing::random_tensor;

namespace {

Sequential cnn(unsigned seed) {
  std::mt19937 rng(seed);
  Sequential net;
  net.add(std::make_unique<Conv2D>(1, 16, 3, 1, 1, rng, "conv1"))
      .add(std::make_unique<ReLU>())
      .add(std::make_unique<MaxPool2D>(2, 2))
      .add(std::make_unique<Conv2D>(16, 20, 3, 1, 1, rng, "conv2"))  // 20 channels: padded to 32 when blocked
      .add(std::make_unique<ReLU>())
      .add(std::make_unique<MaxPool2D>(2, 2))
      .add(std::make_unique<Flatten>())
      .add(std::make_unique<Linear>(20 * 7 * 7, 10, rng, "fc"));
  return net;
}

void check_close(const Tensor& got, const Tensor& want, const char* what) {
  const auto g = got.to_vector(), w = want.to_vector();
  REQUIRE(g.size() == w.size());
  float scale = 1e-5f, worst = 0;
  for (float v : w) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < g.size(); ++i) worst = std::max(worst, std::abs(g[i] - w[i]));
  INFO(what << ": largest difference " << worst << " against magnitude " << scale);
  CHECK(worst <= 2e-5f * scale);
}

}  // namespace

TEST_CASE("a CNN whose conv-ReLU-pool chain stays in oneDNN's blocked layouts trains as on the plain kernels") {
  Execution execution(Device::cpu());
  if (!execution.context().uses_onednn()) {
    MESSAGE("skipped: this build or PADDLE_CPU_KERNELS runs no oneDNN");
    return;
  }
  Sequential plain = cnn(5), blocked = cnn(5);
  blocked.place(execution);
  std::mt19937 rng(9);
  for (int step = 0; step < 2; ++step) {  // the second step runs on the cached primitives
    const Tensor x = random_tensor({4, 1, 28, 28}, rng), dy = random_tensor({4, 10}, rng);
    const Tensor y_plain = plain.forward(x, true), y_blocked = blocked.forward(x, true);
    REQUIRE(y_blocked.is_plain());
    check_close(y_blocked, y_plain, "output");
    const Tensor dx_plain = plain.backward(dy), dx_blocked = blocked.backward(dy);
    REQUIRE(dx_blocked.is_plain());
    check_close(dx_blocked, dx_plain, "input gradient");
    const auto want = plain.parameters(), got = blocked.parameters();
    REQUIRE(want.size() == got.size());
    for (size_t i = 0; i < want.size(); ++i) check_close(got[i]->grad, want[i]->grad, want[i]->name.c_str());
  }
}

TEST_CASE("inside a chain the activations are blocked, and a blocked tensor has no host view") {
  Execution execution(Device::cpu());
  if (!execution.context().uses_onednn()) {
    MESSAGE("skipped: this build or PADDLE_CPU_KERNELS runs no oneDNN");
    return;
  }
  std::mt19937 rng(2);
  Sequential stage;
  stage.add(std::make_unique<Conv2D>(3, 16, 3, 1, 1, rng, "conv")).add(std::make_unique<ReLU>());
  stage.place(execution);
  CHECK(stage.takes_blocked());
  const Tensor x = random_tensor({2, 3, 8, 8}, rng);
  CHECK(stage.forward(x, true).is_plain());  // nothing after it takes a blocked layout
  stage.allow_blocked_output(true);
  const Tensor y = stage.forward(x, true);
  REQUIRE_FALSE(y.is_plain());
  CHECK(y.numel() == 2 * 16 * 8 * 8);
  CHECK_THROWS_WITH_AS(y.to_vector(), doctest::Contains(y.layout()->name().c_str()), std::logic_error);
  CHECK_THROWS_AS(y.values(), std::logic_error);

  Sequential unplaced;  // the plain kernels: no layer takes a blocked layout
  unplaced.add(std::make_unique<Flatten>());
  CHECK_FALSE(unplaced.takes_blocked());
  CHECK_THROWS_WITH_AS(unplaced.forward(y, true), doctest::Contains("blocked layout"), std::logic_error);
}
