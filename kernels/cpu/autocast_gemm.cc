#include "kernels/autocast_gemm.h"

#include <cstddef>
#include <span>
#include <vector>

#include "kernels/gemm.h"
#include "kernels/half.h"

namespace paddle::kernels::cpu {
namespace {

std::vector<float> rounded(DType half, const float* x, size_t n) { return rounded_through_half(half, {x, n}); }

}  // namespace

void autocast_gemm(DType half, bool transpose_a, bool transpose_b, int m, int n, int k, const float* a,
                   const float* b, float* c, bool accumulate) {
  const auto a16 = rounded(half, a, static_cast<size_t>(m) * k);
  const auto b16 = rounded(half, b, static_cast<size_t>(k) * n);
  gemm(transpose_a, transpose_b, m, n, k, a16.data(), b16.data(), c, accumulate);
}

}  // namespace paddle::kernels::cpu
