#include "kernels/half.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "runtime/core/tensor.h"

using namespace paddle::runtime;
using paddle::kernels::narrow_to_half;
using paddle::kernels::widen_from_half;

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

TEST_CASE("16-bit tensors: sizes, names, casts through float32, and no float32 view") {
  const std::vector<float> values = {1.0f, -0.1f, 65504.0f, 1e6f, 3.0f};
  const Tensor f32 = Tensor::from_values({5}, values);
  const Tensor f16 = f32.cast(DType::kFloat16);
  CHECK(f16.dtype() == DType::kFloat16);
  CHECK(f16.numel() == 5);
  CHECK(f16.describe() == "float16[5] on cpu");
  const std::vector<float> back = f16.to_vector();
  CHECK(back[0] == 1.0f);
  CHECK(back[1] == doctest::Approx(-0.1).epsilon(1.0 / 2048));
  CHECK(back[2] == 65504.0f);
  CHECK(std::isinf(back[3]));
  CHECK(back[4] == 3.0f);
  const Tensor bf16 = f32.cast(DType::kBFloat16);
  CHECK(bf16.describe() == "bfloat16[5] on cpu");
  CHECK(bf16.to_vector()[3] == 999424.0f);  // 1e6 to 8 significant bits
  CHECK(bf16.cast(DType::kFloat32).dtype() == DType::kFloat32);
  CHECK(bf16.cast(DType::kFloat32).to_vector() == bf16.to_vector());
  CHECK_THROWS_AS(f16.ptr(), std::logic_error);
  CHECK_THROWS_AS(f16.values(), std::logic_error);
  Tensor zeros({2, 2}, DType::kBFloat16, Device::cpu());
  CHECK(zeros.to_vector() == std::vector<float>(4, 0.0f));
  zeros.assign(std::vector<float>{1, 2, 3, 4});
  CHECK(zeros.to_vector() == std::vector<float>{1, 2, 3, 4});
  CHECK_THROWS_AS(Tensor::from_ids({1}, std::vector<int64_t>{7}).to_vector(), std::logic_error);
  CHECK_THROWS_AS(f32.cast(DType::kInt64), std::logic_error);
}

TEST_CASE("dtype names parse back, and other names fail naming the key") {
  CHECK(parse_float_dtype("bfloat16", "amp.dtype") == DType::kBFloat16);
  CHECK(parse_float_dtype("float16", "amp.dtype") == DType::kFloat16);
  CHECK(parse_float_dtype("float32", "amp.allreduce_dtype") == DType::kFloat32);
  CHECK_THROWS_WITH(parse_float_dtype("fp16", "amp.dtype"), "amp.dtype 'fp16' is not float32, float16 or bfloat16");
}
