#pragma once
// float16 and bfloat16 on the host: conversion of float32 values to and from the two 16-bit
// formats mixed precision keeps on the device, element by element, through Eigen's Eigen::half
// and Eigen::bfloat16. A checkpoint, a test or a CPU twin reads half tensors this way, and the
// CPU autocast kernels round their inputs through it.
//
// Widening (half -> float32) is exact. Narrowing (float32 -> half) rounds to the nearest
// representable value, ties to even; float16 values beyond its largest finite 65504 (after
// rounding) become +-inf, bfloat16 keeps float32's range; inf stays inf and NaN stays NaN.

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/dtype.h"

namespace paddle::kernels {

// to[i] = the bits of from[i] rounded to `half` (kFloat16 or kBFloat16). Throws
// std::invalid_argument for another dtype or spans of different sizes.
void narrow_to_half(DType half, std::span<const float> from, std::span<uint16_t> to);
// to[i] = the float32 value of the `half` bits from[i].
void widen_from_half(DType half, std::span<const uint16_t> from, std::span<float> to);
// Each value rounded to `half` and widened back, in place: the float32 values the halves hold
// (the CPU autocast kernels' inputs).
void round_through_half(DType half, std::span<float> values);
// The same, into a copy of `values`.
std::vector<float> rounded_through_half(DType half, std::span<const float> values);

}  // namespace paddle::kernels
