#include "kernels/half.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

using namespace paddle::kernels;

namespace {

uint16_t narrow_one(DType half, float value) {
  uint16_t bits = 0;
  narrow_to_half(half, std::span<const float>(&value, 1), std::span<uint16_t>(&bits, 1));
  return bits;
}

float widen_one(DType half, uint16_t bits) {
  float value = 0;
  widen_from_half(half, std::span<const uint16_t>(&bits, 1), std::span<float>(&value, 1));
  return value;
}

float round_trip(DType half, float value) { return widen_one(half, narrow_one(half, value)); }

bool is_nan_bits(DType half, uint16_t bits) {
  const uint16_t exponent = half == DType::kFloat16 ? 0x7C00 : 0x7F80;
  return (bits & exponent) == exponent && (bits & ~exponent & 0x7FFF) != 0;
}

}  // namespace

TEST_CASE("every finite and infinite 16-bit pattern widens and narrows back to itself, both formats") {
  for (DType half : {DType::kFloat16, DType::kBFloat16}) {
    int checked = 0;
    for (uint32_t b = 0; b <= 0xFFFF; ++b) {
      const auto bits = static_cast<uint16_t>(b);
      const float wide = widen_one(half, bits);
      if (is_nan_bits(half, bits)) {
        CHECK(std::isnan(wide));
        continue;
      }
      if (narrow_one(half, wide) != bits) {
        INFO(dtype_name(half) << " bits " << b);
        CHECK(narrow_one(half, wide) == bits);
      }
      ++checked;
    }
    CHECK(checked == (half == DType::kFloat16 ? 65536 - 2046 : 65536 - 254));
  }
}

TEST_CASE("float16: known encodings, exact values, subnormals and the largest finite value") {
  CHECK(narrow_one(DType::kFloat16, 1.0f) == 0x3C00);
  CHECK(narrow_one(DType::kFloat16, -2.0f) == 0xC000);
  CHECK(narrow_one(DType::kFloat16, 65504.0f) == 0x7BFF);
  CHECK(narrow_one(DType::kFloat16, std::ldexp(1.0f, -24)) == 0x0001);  // the smallest subnormal
  CHECK(narrow_one(DType::kFloat16, -0.0f) == 0x8000);
  for (float exact : {0.0f, 0.5f, 1.0f + std::ldexp(1.0f, -10), 3.140625f, std::ldexp(1.0f, -14), -1024.0f, 65504.0f})
    CHECK(round_trip(DType::kFloat16, exact) == exact);
  CHECK(round_trip(DType::kFloat16, std::ldexp(1.0f, -26)) == 0.0f);  // below half the smallest subnormal
}

TEST_CASE("narrowing rounds to nearest, ties to even") {
  const float ulp16 = std::ldexp(1.0f, -10), ulp_b16 = std::ldexp(1.0f, -7);  // at 1.0
  CHECK(round_trip(DType::kFloat16, 1 + ulp16 / 2) == 1.0f);                  // tie, down to even
  CHECK(round_trip(DType::kFloat16, 1 + 3 * ulp16 / 2) == 1 + 2 * ulp16);     // tie, up to even
  CHECK(round_trip(DType::kFloat16, 1 + ulp16 / 2 + ulp16 / 8) == 1 + ulp16);  // above the tie
  CHECK(round_trip(DType::kFloat16, 1 + ulp16 / 2 - ulp16 / 8) == 1.0f);       // below it
  CHECK(round_trip(DType::kBFloat16, 1 + ulp_b16 / 2) == 1.0f);
  CHECK(round_trip(DType::kBFloat16, 1 + 3 * ulp_b16 / 2) == 1 + 2 * ulp_b16);
  CHECK(round_trip(DType::kBFloat16, 1 + ulp_b16 / 2 + ulp_b16 / 8) == 1 + ulp_b16);
  CHECK(round_trip(DType::kBFloat16, -(1 + 3 * ulp_b16 / 2)) == -(1 + 2 * ulp_b16));
  CHECK(round_trip(DType::kBFloat16, 3.14159265f) == 3.140625f);
}

TEST_CASE("float16 overflows to inf past 65504, bfloat16 keeps float32's range, inf and NaN survive") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(round_trip(DType::kFloat16, 65519.0f) == 65504.0f);  // below the tie with 65536
  CHECK(narrow_one(DType::kFloat16, 65520.0f) == 0x7C00);    // the tie rounds to even: 2^16, inf
  CHECK(round_trip(DType::kFloat16, 1e6f) == inf);
  CHECK(round_trip(DType::kFloat16, -1e6f) == -inf);
  CHECK(narrow_one(DType::kFloat16, inf) == 0x7C00);
  CHECK(narrow_one(DType::kFloat16, -inf) == 0xFC00);
  CHECK(std::isnan(round_trip(DType::kFloat16, nan)));
  CHECK(narrow_one(DType::kBFloat16, 1.0f) == 0x3F80);
  CHECK(narrow_one(DType::kBFloat16, inf) == 0x7F80);
  CHECK(narrow_one(DType::kBFloat16, -inf) == 0xFF80);
  CHECK(std::isnan(round_trip(DType::kBFloat16, nan)));
  CHECK(std::isnan(round_trip(DType::kBFloat16, -nan)));
  CHECK(round_trip(DType::kBFloat16, 1e38f) == doctest::Approx(1e38).epsilon(1.0 / 128));
  CHECK(std::isfinite(round_trip(DType::kBFloat16, 3.0e38f)));
  CHECK(round_trip(DType::kBFloat16, std::numeric_limits<float>::max()) == inf);  // rounds past the top
}

TEST_CASE("the conversions refuse a non-16-bit dtype and spans of different sizes") {
  std::vector<float> from(3);
  std::vector<uint16_t> to(3), shorter(2);
  CHECK_THROWS_AS(narrow_to_half(DType::kFloat32, from, to), std::invalid_argument);
  CHECK_THROWS_AS(narrow_to_half(DType::kFloat16, from, shorter), std::invalid_argument);
  CHECK_THROWS_AS(widen_from_half(DType::kInt64, to, from), std::invalid_argument);
}

TEST_CASE("rounding through a half is the narrowing then the widening, in place or into a copy") {
  std::vector<float> values{1.0f / 3, 65520.0f, -2.5f};
  const std::vector<float> copy = rounded_through_half(DType::kFloat16, values);
  round_through_half(DType::kFloat16, values);
  CHECK(values == copy);
  CHECK(copy[0] == round_trip(DType::kFloat16, 1.0f / 3));
  CHECK(std::isinf(copy[1]));  // past float16's largest finite value after rounding
  CHECK(copy[2] == -2.5f);
  CHECK_THROWS_AS(round_through_half(DType::kInt64, values), std::invalid_argument);
}
