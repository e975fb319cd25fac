#include "kernels/autocast_gemm.h"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "kernels/gemm.h"
#include "tests/unit/kernels/random_vector.h"

namespace kernels = paddle::kernels;
using kernels::DType;

TEST_CASE("autocast GEMM of operands that are 16-bit values equals the float32 GEMM") {
  // Multiples of 1/8 below 8 are float16 and bfloat16 values alike.
  const int m = 5, n = 4, k = 6;
  std::vector<float> a(m * k), b(k * n);
  for (int i = 0; i < m * k; ++i) a[i] = static_cast<float>((i * 7) % 61 - 30) / 8;
  for (int i = 0; i < k * n; ++i) b[i] = static_cast<float>((i * 5) % 53 - 26) / 8;
  for (DType half : {DType::kFloat16, DType::kBFloat16})
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        std::vector<float> expected(m * n, 1.0f), got(m * n, 1.0f);
        kernels::cpu::gemm(ta, tb, m, n, k, a.data(), b.data(), expected.data(), true);
        kernels::autocast_gemm(kernels::Context::host(), half, ta, tb, m, n, k, a.data(), b.data(), got.data(), true);
        CHECK(got == expected);
      }
}

TEST_CASE("autocast GEMM rounds its operands to the 16-bit type, bfloat16 more coarsely than float16") {
  const int m = 3, n = 3, k = 1;
  const std::vector<float> a = {1 + 1.0f / 4096, 1.0f / 3, 100.1f}, b = {1, 1, 1};
  std::vector<float> c16(9), cb16(9), c32(9);
  kernels::cpu::autocast_gemm(DType::kFloat16, false, false, m, n, k, a.data(), b.data(), c16.data(), false);
  kernels::cpu::autocast_gemm(DType::kBFloat16, false, false, m, n, k, a.data(), b.data(), cb16.data(), false);
  kernels::cpu::gemm(false, false, m, n, k, a.data(), b.data(), c32.data(), false);
  CHECK(c16[0] == 1.0f);  // 1 + 2^-12 is below float16's half ulp at 1
  CHECK(c32[0] == a[0]);
  CHECK(c16[3] == doctest::Approx(1.0 / 3).epsilon(1.0 / 2048));
  CHECK(c16[3] != c32[3]);
  CHECK(cb16[6] == 100.0f);  // 100.1 to 8 significant bits
  CHECK(c16[6] == 100.125f);  // and to 11
  CHECK(std::abs(cb16[3] - 1.0f / 3) > std::abs(c16[3] - 1.0f / 3));
}
