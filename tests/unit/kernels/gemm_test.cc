#include "kernels/gemm.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

namespace kernels = paddle::kernels;

TEST_CASE("gemm matches a hand computation in every transpose combination") {
  const float a[] = {1, 2, 3, 4, 5, 6};  // 2x3
  const float b[] = {1, 0, 2, 1, 0, 3};  // 3x2
  float c[4];
  kernels::cpu::gemm(false, false, 2, 2, 3, a, b, c, false);
  CHECK(c[0] == 5);   // 1*1 + 2*2 + 3*0
  CHECK(c[1] == 11);  // 1*0 + 2*1 + 3*3
  CHECK(c[3] == 23);  // 4*0 + 5*1 + 6*3
  const float at[] = {1, 4, 2, 5, 3, 6};  // a stored transposed (3x2)
  float c2[4];
  kernels::cpu::gemm(true, false, 2, 2, 3, at, b, c2, false);
  CHECK(std::equal(c, c + 4, c2));
  kernels::cpu::gemm(true, false, 2, 2, 3, at, b, c2, true);
  CHECK(c2[3] == 46);
  const float bt[] = {1, 2, 0, 0, 1, 3};  // b stored transposed (2x3)
  float c3[4];
  kernels::cpu::gemm(false, true, 2, 2, 3, a, bt, c3, false);
  CHECK(std::equal(c, c + 4, c3));
  kernels::cpu::gemm(true, true, 2, 2, 3, at, bt, c3, false);
  CHECK(std::equal(c, c + 4, c3));
}

TEST_CASE("the CPU context dispatches to the CPU half") {
  const kernels::Context& cpu = kernels::Context::host();
  CHECK_FALSE(cpu.is_cuda());
  const float a[] = {1, 2, 3, 4, 5, 6}, b[] = {1, 0, 2, 1, 0, 3};
  float direct[4], dispatched[4];
  kernels::cpu::gemm(false, false, 2, 2, 3, a, b, direct, false);
  kernels::gemm(cpu, false, false, 2, 2, 3, a, b, dispatched, false);
  CHECK(std::equal(direct, direct + 4, dispatched));
  CHECK_THROWS_AS(cpu.cuda(), std::logic_error);
}

TEST_CASE("bias rows add to every row, and their gradient sums the columns") {
  std::vector<float> y = {1, 2, 3, 4, 5, 6};  // 2x3
  const float bias[] = {10, 20, 30};
  kernels::cpu::add_bias_rows(y.data(), bias, 2, 3);
  CHECK(y == std::vector<float>{11, 22, 33, 14, 25, 36});
  std::vector<float> db = {1, 1, 1};
  const float dy[] = {1, 2, 3, 4, 5, 6};
  kernels::cpu::bias_grad_rows(dy, db.data(), 2, 3);
  CHECK(db == std::vector<float>{6, 8, 10});
}
