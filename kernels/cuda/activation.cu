#include "kernels/activation.h"

#include "kernels/cuda/internal.h"
#include "kernels/functors.h"

namespace paddle::kernels::cuda {
namespace {

template <typename Activation>
__global__ void activate_kernel(const float* x, float* y, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = Activation{}(x[i]);
}

// dx from the activation's output y and dy, by the functor Grad.
template <typename Grad>
__global__ void activation_grad_kernel(const float* y, const float* dy, float* dx, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) dx[i] = Grad{}(y[i], dy[i]);
}

template <typename Activation>
void activate(Handles& h, const float* x, float* y, size_t n, const char* what) {
  activate_kernel<Activation><<<blocks_for(n), kThreads, 0, h.impl().stream>>>(x, y, n);
  check(cudaGetLastError(), what);
}

template <typename Grad>
void activation_grad(Handles& h, const float* y, const float* dy, float* dx, size_t n, const char* what) {
  activation_grad_kernel<Grad><<<blocks_for(n), kThreads, 0, h.impl().stream>>>(y, dy, dx, n);
  check(cudaGetLastError(), what);
}

}  // namespace

void relu_forward(Handles& h, const float* x, float* y, size_t n) { activate<Relu>(h, x, y, n, "relu_forward"); }

void relu_backward(Handles& h, const float* y, const float* dy, float* dx, size_t n) {
  activation_grad<ReluGrad>(h, y, dy, dx, n, "relu_backward");
}

void tanh_forward(Handles& h, const float* x, float* y, size_t n) { activate<Tanh>(h, x, y, n, "tanh_forward"); }

void tanh_backward(Handles& h, const float* y, const float* dy, float* dx, size_t n) {
  activation_grad<TanhGrad>(h, y, dy, dx, n, "tanh_backward");
}

}  // namespace paddle::kernels::cuda
