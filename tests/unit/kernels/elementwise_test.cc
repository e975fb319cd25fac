#include "kernels/elementwise.h"

#include <doctest/doctest.h>

#include <vector>

namespace kernels = paddle::kernels;

TEST_CASE("multiply, add_relu, add_in_place and copy on the CPU") {
  const kernels::Context& cpu = kernels::Context::host();
  const std::vector<float> a = {1, -2, 3}, b = {2, 1, -4};
  std::vector<float> y(3);
  kernels::multiply(cpu, a.data(), b.data(), y.data(), 3);
  CHECK(y == std::vector<float>{2, -2, -12});
  kernels::add_relu(cpu, a.data(), b.data(), y.data(), 3);
  CHECK(y == std::vector<float>{3, 0, 0});
  std::vector<float> sum = a;
  kernels::add_in_place(cpu, sum.data(), b.data(), 3);
  CHECK(sum == std::vector<float>{3, -1, -1});
  std::vector<float> copied(3);
  kernels::copy(cpu, copied.data(), a.data(), 3);
  CHECK(copied == a);
}

TEST_CASE("add_relu may write over its first input, as a residual block does") {
  std::vector<float> y = {1, -3};
  const std::vector<float> shortcut = {1, 1};
  kernels::cpu::add_relu(y.data(), shortcut.data(), y.data(), 2);
  CHECK(y == std::vector<float>{2, 0});
}

TEST_CASE("copy_columns slices a block of columns out of one matrix into a block of another") {
  const kernels::Context& cpu = kernels::Context::host();
  const std::vector<float> x = {0, 1, 2, 3,  //
                                4, 5, 6, 7,  //
                                8, 9, 10, 11};
  std::vector<float> middle(6);
  kernels::copy_columns(cpu, middle.data(), 2, x.data() + 1, 4, 3, 2);
  CHECK(middle == std::vector<float>{1, 2, 5, 6, 9, 10});
  std::vector<float> wide(15, -1.0f);  // 3 x 5: the two columns land in columns 3 and 4
  kernels::copy_columns(cpu, wide.data() + 3, 5, middle.data(), 2, 3, 2);
  CHECK(wide == std::vector<float>{-1, -1, -1, 1, 2, -1, -1, -1, 5, 6, -1, -1, -1, 9, 10});
}
