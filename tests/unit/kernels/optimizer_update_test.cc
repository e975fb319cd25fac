#include "kernels/optimizer_update.h"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

namespace kernels = paddle::kernels;

TEST_CASE("SGD and momentum fold the weight decay into the gradient") {
  std::vector<float> w = {1, 2};
  const std::vector<float> g = {0.5f, -1};
  kernels::sgd_update(kernels::Context::host(), w.data(), g.data(), 2, 0.5f, 0.5f);  // w -= 0.5 * (g + 0.5 w)
  CHECK(w == std::vector<float>{0.5f, 2.0f});

  w = {1, 2};
  std::vector<float> v = {1, 0};
  kernels::cpu::momentum_update(w.data(), g.data(), v.data(), 2, 0.5f, 0.5f, 0.0f);  // v = 0.5 v + g; w -= 0.5 v
  CHECK(v == std::vector<float>{1.0f, -1.0f});
  CHECK(w == std::vector<float>{0.5f, 2.5f});
}

TEST_CASE("Adam and Adagrad on the CPU against hand values") {
  std::vector<float> w = {1}, m = {0}, v = {0};
  const std::vector<float> g = {2};
  kernels::cpu::adam_update(w.data(), g.data(), m.data(), v.data(), 1, 0.5f, 0.5f, 0.75f, 0.0f, 0.0f);
  CHECK(m[0] == 1.0f);
  CHECK(v[0] == 1.0f);
  CHECK(w[0] == 0.5f);

  w = {1};
  std::vector<float> acc = {5};
  kernels::cpu::adagrad_update(w.data(), g.data(), acc.data(), 1, 0.5f, 0.0f, 0.0f);
  CHECK(acc[0] == 9.0f);
  CHECK(w[0] == doctest::Approx(1.0f - 1.0f / 3.0f));
}

TEST_CASE("Adam with decay equals Adam on the decayed gradient") {
  std::vector<float> w1 = {0.3f, -0.7f}, m1 = {0.1f, 0.2f}, v1 = {0.01f, 0.02f};
  auto w2 = w1, m2 = m1, v2 = v1;
  const std::vector<float> g = {0.25f, -0.5f};
  kernels::cpu::adam_update(w1.data(), g.data(), m1.data(), v1.data(), 2, 0.01f, 0.9f, 0.999f, 1e-8f, 0.1f);
  const std::vector<float> decayed = {g[0] + 0.1f * w2[0], g[1] + 0.1f * w2[1]};
  kernels::cpu::adam_update(w2.data(), decayed.data(), m2.data(), v2.data(), 2, 0.01f, 0.9f, 0.999f, 1e-8f, 0.0f);
  CHECK(w1 == w2);
  CHECK(m1 == m2);
  CHECK(v1 == v2);
}
