#pragma once
// Dense matrix products and row biases over row-major float buffers: Linear's math, and
// convolution's on the CPU. CPU half on Eigen (kernels/cpu/gemm.cc), oneDNN half on its sgemm or
// matmul primitive (kernels/onednn/gemm.cc, the product only), CUDA half on cuBLAS
// (kernels/cuda/gemm.cu).

#include "kernels/context.h"

namespace paddle::kernels {

namespace cpu {
// C[m,n] (+)= A[m,k] * B[k,n], with either operand optionally transposed (as stored).
void gemm(bool transpose_a, bool transpose_b, int m, int n, int k, const float* a, const float* b, float* c,
          bool accumulate);
// Adds bias[n] to every row of y[m,n]; and its gradient: db[n] += column sums of dy[m,n].
void add_bias_rows(float* y, const float* bias, int m, int n);
void bias_grad_rows(const float* dy, float* db, int m, int n);
}  // namespace cpu

#ifdef PADDLE_LAUNCH_WITH_ONEDNN
namespace onednn {
// On sgemm or the matmul primitive, whichever is faster for the shape (kernels/onednn/gemm.cc).
void gemm(OneDnn& dnn, bool transpose_a, bool transpose_b, int m, int n, int k, const float* a, const float* b,
          float* c, bool accumulate);
}  // namespace onednn
#endif

#ifdef PADDLE_LAUNCH_WITH_CUDA
namespace cuda {
void gemm(Handles& h, bool transpose_a, bool transpose_b, int m, int n, int k, const float* a, const float* b, float* c,
          bool accumulate);
void add_bias_rows(Handles& h, float* y, const float* bias, int m, int n);
void bias_grad_rows(Handles& h, const float* dy, float* db, int m, int n);
}  // namespace cuda
#endif

inline void gemm([[maybe_unused]] const Context& ctx, bool transpose_a, bool transpose_b, int m, int n, int k,
                 const float* a, const float* b, float* c, bool accumulate) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda()) return cuda::gemm(ctx.cuda(), transpose_a, transpose_b, m, n, k, a, b, c, accumulate);
#endif
#ifdef PADDLE_LAUNCH_WITH_ONEDNN
  if (ctx.uses_onednn()) return onednn::gemm(ctx.onednn(), transpose_a, transpose_b, m, n, k, a, b, c, accumulate);
#endif
  cpu::gemm(transpose_a, transpose_b, m, n, k, a, b, c, accumulate);
}

inline void add_bias_rows([[maybe_unused]] const Context& ctx, float* y, const float* bias, int m, int n) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda()) return cuda::add_bias_rows(ctx.cuda(), y, bias, m, n);
#endif
  cpu::add_bias_rows(y, bias, m, n);
}

inline void bias_grad_rows([[maybe_unused]] const Context& ctx, const float* dy, float* db, int m, int n) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda()) return cuda::bias_grad_rows(ctx.cuda(), dy, db, m, n);
#endif
  cpu::bias_grad_rows(dy, db, m, n);
}

}  // namespace paddle::kernels
