#include "kernels/autocast_gemm.h"

#include "kernels/cuda/half_cast.h"
#include "kernels/cuda/internal.h"

namespace paddle::kernels::cuda {

void autocast_gemm(Handles& h, DType half, bool transpose_a, bool transpose_b, int m, int n, int k, const float* a,
                   const float* b, float* c, bool accumulate) {
  cudaStream_t stream = h.impl().stream;
  const size_t a_count = static_cast<size_t>(m) * k, b_count = static_cast<size_t>(k) * n;
  HalfScratch a16(a_count, stream), b16(b_count, stream);
  round_into(half, a, a16.get(), a_count, stream);
  round_into(half, b, b16.get(), b_count, stream);
  const cudaDataType_t type = half == DType::kFloat16 ? CUDA_R_16F : CUDA_R_16BF;
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, as in gemm.cu.
  const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  check(cublasGemmEx(h.impl().cublas, transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N, transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                     n, m, k, &alpha, b16.get(), type, transpose_b ? k : n, a16.get(), type, transpose_a ? m : k, &beta,
                     c, CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
}

}  // namespace paddle::kernels::cuda
