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
