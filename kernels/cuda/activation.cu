#include "kernels/activation.h"

#include "kernels/cuda/internal.h"
#include "kernels/functors.h"

namespace paddle::kernels::cuda {
namespace {

__global__ void relu_forward_kernel(const float* x, float* y, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = Relu{}(x[i]);
}

__global__ void relu_backward_kernel(const float* y, const float* dy, float* dx, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) dx[i] = ReluGrad{}(y[i], dy[i]);
}

__global__ void tanh_forward_kernel(const float* x, float* y, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = Tanh{}(x[i]);
}

__global__ void tanh_backward_kernel(const float* y, const float* dy, float* dx, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) dx[i] = TanhGrad{}(y[i], dy[i]);
}

}  // namespace

void relu_forward(Handles& h, const float* x, float* y, size_t n) {
  relu_forward_kernel<<<blocks_for(n), kThreads, 0, h.impl().stream>>>(x, y, n);
  check(cudaGetLastError(), "relu_forward");
}

void relu_backward(Handles& h, const float* y, const float* dy, float* dx, size_t n) {
  relu_backward_kernel<<<blocks_for(n), kThreads, 0, h.impl().stream>>>(y, dy, dx, n);
  check(cudaGetLastError(), "relu_backward");
}

void tanh_forward(Handles& h, const float* x, float* y, size_t n) {
  tanh_forward_kernel<<<blocks_for(n), kThreads, 0, h.impl().stream>>>(x, y, n);
  check(cudaGetLastError(), "tanh_forward");
}

void tanh_backward(Handles& h, const float* y, const float* dy, float* dx, size_t n) {
  tanh_backward_kernel<<<blocks_for(n), kThreads, 0, h.impl().stream>>>(y, dy, dx, n);
  check(cudaGetLastError(), "tanh_backward");
}

}  // namespace paddle::kernels::cuda
