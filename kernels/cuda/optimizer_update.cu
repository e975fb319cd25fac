#include "kernels/optimizer_update.h"

#include "kernels/cuda/internal.h"
#include "kernels/functors.h"

namespace paddle::kernels::cuda {
namespace {

__global__ void sgd_kernel(float* w, const float* g, size_t n, float lr, float decay) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) SgdStep{lr}(w[i], decayed(g[i], w[i], decay));
}

__global__ void momentum_kernel(float* w, const float* g, float* v, size_t n, float lr, float mu, float decay) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) MomentumStep{lr, mu}(w[i], decayed(g[i], w[i], decay), v[i]);
}

__global__ void adam_kernel(float* w, const float* g, float* m, float* v, size_t n, AdamStep step, float decay) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) step(w[i], decayed(g[i], w[i], decay), m[i], v[i]);
}

__global__ void adagrad_kernel(float* w, const float* g, float* acc, size_t n, AdagradStep step, float decay) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) step(w[i], decayed(g[i], w[i], decay), acc[i]);
}

}  // namespace

void sgd_update(Handles& h, float* w, const float* g, size_t n, float lr, float decay) {
  sgd_kernel<<<blocks_for(n), kThreads, 0, h.impl().stream>>>(w, g, n, lr, decay);
  check(cudaGetLastError(), "sgd_update");
}

void momentum_update(Handles& h, float* w, const float* g, float* v, size_t n, float lr, float mu, float decay) {
  momentum_kernel<<<blocks_for(n), kThreads, 0, h.impl().stream>>>(w, g, v, n, lr, mu, decay);
  check(cudaGetLastError(), "momentum_update");
}

void adam_update(Handles& h, float* w, const float* g, float* m, float* v, size_t n, float step_size, float beta1,
                 float beta2, float epsilon, float decay) {
  const AdamStep step{step_size, beta1, beta2, epsilon};
  adam_kernel<<<blocks_for(n), kThreads, 0, h.impl().stream>>>(w, g, m, v, n, step, decay);
  check(cudaGetLastError(), "adam_update");
}

void adagrad_update(Handles& h, float* w, const float* g, float* accumulator, size_t n, float lr, float epsilon,
                    float decay) {
  const AdagradStep step{lr, epsilon};
  adagrad_kernel<<<blocks_for(n), kThreads, 0, h.impl().stream>>>(w, g, accumulator, n, step, decay);
  check(cudaGetLastError(), "adagrad_update");
}

}  // namespace paddle::kernels::cuda
