// The runtime's side of the 16-bit types: tensors that hold them, and their names in a config.
#include "runtime/core/dtype.h"

#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "runtime/core/tensor.h"

using namespace paddle::runtime;

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
