#include <doctest/doctest.h>

#include <vector>

#include "kernels/cpu_kernels.h"

namespace cpu = paddle::kernels::cpu;

TEST_CASE("gemm matches a hand computation in every transpose combination") {
  const float a[] = {1, 2, 3, 4, 5, 6};     // 2x3
  const float b[] = {1, 0, 2, 1, 0, 3};     // 3x2
  float c[4];
  paddle::kernels::cpu::gemm(false, false, 2, 2, 3, a, b, c, false);
  CHECK(c[0] == 5);   // 1*1 + 2*2 + 3*0
  CHECK(c[1] == 11);  // 1*0 + 2*1 + 3*3
  CHECK(c[3] == 23);  // 4*0 + 5*1 + 6*3
  const float at[] = {1, 4, 2, 5, 3, 6};  // a stored transposed (3x2)
  float c2[4];
  paddle::kernels::cpu::gemm(true, false, 2, 2, 3, at, b, c2, false);
  CHECK(std::equal(c, c + 4, c2));
  paddle::kernels::cpu::gemm(true, false, 2, 2, 3, at, b, c2, true);
  CHECK(c2[3] == 46);
}
