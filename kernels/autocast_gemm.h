#pragma once
// The O1 autocast GEMM of mixed precision: C[m,n] (+)= op(A) op(B) as kernels/gemm.h computes
// it, but with A and B rounded to a 16-bit float (to nearest even) before they are multiplied,
// and products accumulated and C kept in float32. The CUDA half casts the operands into scratch
// buffers and runs cublasGemmEx on tensor cores (CUDA_R_16F or CUDA_R_16BF inputs, CUBLAS_COMPUTE_32F);
// the CPU half is its twin for tests: it rounds copies of A and B through Eigen's half types and
// calls the float32 GEMM, so the two differ only in summation order (a product of two 16-bit
// floats is exact in float32).

#include "kernels/context.h"
#include "kernels/dtype.h"

namespace paddle::kernels {

// `half` is DType::kFloat16 or DType::kBFloat16.

namespace cpu {
void autocast_gemm(DType half, bool transpose_a, bool transpose_b, int m, int n, int k, const float* a,
                   const float* b, float* c, bool accumulate);
}  // namespace cpu

#ifdef PADDLE_LAUNCH_WITH_CUDA
namespace cuda {
void autocast_gemm(Handles& h, DType half, bool transpose_a, bool transpose_b, int m, int n, int k, const float* a,
                   const float* b, float* c, bool accumulate);
}  // namespace cuda
#endif

inline void autocast_gemm([[maybe_unused]] const Context& ctx, DType half, bool transpose_a, bool transpose_b, int m,
                          int n, int k, const float* a, const float* b, float* c, bool accumulate) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda()) return cuda::autocast_gemm(ctx.cuda(), half, transpose_a, transpose_b, m, n, k, a, b, c, accumulate);
#endif
  cpu::autocast_gemm(half, transpose_a, transpose_b, m, n, k, a, b, c, accumulate);
}

}  // namespace paddle::kernels
