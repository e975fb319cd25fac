#include "kernels/pooling.h"

#include <doctest/doctest.h>

#include <vector>

namespace kernels = paddle::kernels;

TEST_CASE("max pooling with padding records the winners, and backward routes to them") {
  const std::vector<float> x = {1, 5, 2,  //
                                7, 3, 4,  //
                                0, 8, 6};
  std::vector<float> y(4);
  std::vector<int32_t> argmax(4);
  kernels::max_pool_forward(kernels::Context::host(), x.data(), 1, 3, 3, 2, 2, 1, y.data(), argmax.data());
  CHECK(y == std::vector<float>{1, 5, 7, 8});
  CHECK(argmax == std::vector<int32_t>{0, 1, 3, 7});
  std::vector<float> dx(9, 0.0f);
  const std::vector<float> dy = {1, 2, 3, 4};
  kernels::max_pool_backward(kernels::Context::host(), dy.data(), argmax.data(), 1, 9, 4, dx.data());
  CHECK(dx == std::vector<float>{1, 2, 0, 3, 0, 0, 0, 4, 0});
}

TEST_CASE("average pooling and its gradient") {
  const std::vector<float> x = {1, 2, 3, 4,  //
                                5, 6, 7, 8};
  std::vector<float> y(2);
  kernels::cpu::avg_pool_forward(x.data(), 1, 2, 4, 2, 2, y.data());
  CHECK(y == std::vector<float>{3.5f, 5.5f});
  std::vector<float> dx(8, 1.0f);
  const std::vector<float> dy = {4, 8};
  kernels::cpu::avg_pool_backward(dy.data(), 1, 2, 4, 2, 2, dx.data());
  CHECK(dx == std::vector<float>{2, 2, 3, 3, 2, 2, 3, 3});  // accumulated onto the ones
}
