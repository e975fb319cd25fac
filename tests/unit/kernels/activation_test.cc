#include "kernels/activation.h"

#include <doctest/doctest.h>

#include <vector>

namespace kernels = paddle::kernels;

TEST_CASE("ReLU forward and backward on the CPU") {
  const std::vector<float> x = {-2, -0.5f, 0, 0.5f, 3};
  std::vector<float> y(5), dx(5);
  kernels::relu_forward(kernels::Context::host(), x.data(), y.data(), 5);
  CHECK(y == std::vector<float>{0, 0, 0, 0.5f, 3});
  const std::vector<float> dy = {1, 2, 3, 4, 5};
  kernels::relu_backward(kernels::Context::host(), y.data(), dy.data(), dx.data(), 5);
  CHECK(dx == std::vector<float>{0, 0, 0, 4, 5});
}

TEST_CASE("ReLU runs in place") {
  std::vector<float> v = {-1, 2};
  kernels::cpu::relu_forward(v.data(), v.data(), 2);
  CHECK(v == std::vector<float>{0, 2});
}

TEST_CASE("tanh forward, and its gradient 1 - tanh^2 from the output") {
  const std::vector<float> x = {-2, 0, 1, 0.5f};
  std::vector<float> y(4), dx(4);
  kernels::tanh_forward(kernels::Context::host(), x.data(), y.data(), 4);
  CHECK(y[0] == doctest::Approx(-0.9640275800758169));
  CHECK(y[1] == 0.0f);
  CHECK(y[2] == doctest::Approx(0.7615941559557649));
  CHECK(y[3] == doctest::Approx(0.46211715726000974));
  const std::vector<float> dy = {1, 3, 2, -1};
  kernels::tanh_backward(kernels::Context::host(), y.data(), dy.data(), dx.data(), 4);
  // sech^2(x): 0.0706508249 at -2, 1 at 0, 0.4199743416 at 1, 0.7864477329 at 0.5.
  CHECK(dx[0] == doctest::Approx(0.07065082485316443));
  CHECK(dx[1] == 3.0f);
  CHECK(dx[2] == doctest::Approx(2 * 0.41997434161402614));
  CHECK(dx[3] == doctest::Approx(-0.7864477329659275));
}

TEST_CASE("tanh runs in place, forward and backward") {
  std::vector<float> v = {0, 1};
  kernels::cpu::tanh_forward(v.data(), v.data(), 2);
  CHECK(v[1] == doctest::Approx(0.7615941559557649));
  std::vector<float> g = {5, 1};
  kernels::cpu::tanh_backward(v.data(), g.data(), g.data(), 2);
  CHECK(g[0] == 5.0f);
  CHECK(g[1] == doctest::Approx(0.41997434161402614));
}
