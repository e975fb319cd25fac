#include "kernels/half.h"

#include <Eigen/Core>
#include <fmt/format.h>

#include <bit>
#include <stdexcept>

namespace paddle::kernels {
namespace {

void require_half(DType half, size_t from, size_t to, const char* what) {
  if (!is_half(half)) throw std::invalid_argument(fmt::format("{}: {} is not a 16-bit float type", what, dtype_name(half)));
  if (from != to) throw std::invalid_argument(fmt::format("{}: {} values into {}", what, from, to));
}

template <typename Half>
void narrow(std::span<const float> from, std::span<uint16_t> to) {
  for (size_t i = 0; i < from.size(); ++i) to[i] = std::bit_cast<uint16_t>(Half(from[i]));
}

template <typename Half>
void widen(std::span<const uint16_t> from, std::span<float> to) {
  for (size_t i = 0; i < from.size(); ++i) to[i] = static_cast<float>(std::bit_cast<Half>(from[i]));
}

}  // namespace

void narrow_to_half(DType half, std::span<const float> from, std::span<uint16_t> to) {
  require_half(half, from.size(), to.size(), "narrow_to_half");
  if (half == DType::kFloat16) narrow<Eigen::half>(from, to);
  else narrow<Eigen::bfloat16>(from, to);
}

void widen_from_half(DType half, std::span<const uint16_t> from, std::span<float> to) {
  require_half(half, from.size(), to.size(), "widen_from_half");
  if (half == DType::kFloat16) widen<Eigen::half>(from, to);
  else widen<Eigen::bfloat16>(from, to);
}

void round_through_half(DType half, std::span<float> values) {
  if (!is_half(half)) throw std::invalid_argument(fmt::format("round_through_half: {} is not a 16-bit float type", dtype_name(half)));
  if (half == DType::kFloat16)
    for (float& x : values) x = static_cast<float>(Eigen::half(x));
  else
    for (float& x : values) x = static_cast<float>(Eigen::bfloat16(x));
}

std::vector<float> rounded_through_half(DType half, std::span<const float> values) {
  std::vector<float> out(values.begin(), values.end());
  round_through_half(half, out);
  return out;
}

}  // namespace paddle::kernels
