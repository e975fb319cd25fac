#pragma once
// DType: the element types a tensor holds, from the kernels up: float32 for activations,
// parameters and optimizer state; int64 for ids and labels; float16 and bfloat16 for mixed
// precision (AMP), which the autocast kernels compute in and the host only converts
// (kernels/half.h). runtime::DType is this type.

#include <cstddef>
#include <cstdint>

namespace paddle::kernels {

enum class DType { kFloat32, kInt64, kFloat16, kBFloat16 };

constexpr size_t element_size(DType dtype) {
  switch (dtype) {
    case DType::kInt64: return sizeof(int64_t);
    case DType::kFloat16:
    case DType::kBFloat16: return sizeof(uint16_t);
    case DType::kFloat32: break;
  }
  return sizeof(float);
}

constexpr bool is_half(DType dtype) { return dtype == DType::kFloat16 || dtype == DType::kBFloat16; }

// Paddle's names: "float32", "int64", "float16", "bfloat16".
constexpr const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "float32";
    case DType::kInt64: return "int64";
    case DType::kFloat16: return "float16";
    case DType::kBFloat16: return "bfloat16";
  }
  return "?";
}

}  // namespace paddle::kernels
