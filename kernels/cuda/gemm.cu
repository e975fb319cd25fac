#include "kernels/gemm.h"

#include "kernels/cuda/internal.h"

namespace paddle::kernels::cuda {
namespace {

__global__ void add_bias_rows_kernel(float* y, const float* bias, int m, int n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < static_cast<size_t>(m) * n) y[i] += bias[i % n];
}

__global__ void bias_grad_rows_kernel(const float* dy, float* db, int m, int n) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= n) return;
  float sum = 0;
  for (int r = 0; r < m; ++r) sum += dy[static_cast<size_t>(r) * n + col];
  db[col] += sum;
}

}  // namespace

void gemm(Handles& h, bool transpose_a, bool transpose_b, int m, int n, int k, const float* a, const float* b, float* c,
          bool accumulate) {
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
  const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  check(cublasSgemm(h.impl().cublas, transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N, transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                    n, m, k, &alpha, b, transpose_b ? k : n, a, transpose_a ? m : k, &beta, c, n),
        "cublasSgemm");
}

void add_bias_rows(Handles& h, float* y, const float* bias, int m, int n) {
  add_bias_rows_kernel<<<blocks_for(static_cast<size_t>(m) * n), kThreads, 0, h.impl().stream>>>(y, bias, m, n);
  check(cudaGetLastError(), "add_bias_rows");
}

void bias_grad_rows(Handles& h, const float* dy, float* db, int m, int n) {
  bias_grad_rows_kernel<<<blocks_for(n), kThreads, 0, h.impl().stream>>>(dy, db, m, n);
  check(cudaGetLastError(), "bias_grad_rows");
}

}  // namespace paddle::kernels::cuda
