#include "kernels/pooling.h"

#include "kernels/cuda/internal.h"
#include "kernels/functors.h"

namespace paddle::kernels::cuda {
namespace {

__global__ void max_pool_forward_kernel(const float* x, int planes, int height, int width, int kernel, int stride,
                                        int padding, int ho, int wo, float* y, int32_t* argmax) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<size_t>(planes) * ho * wo) return;
  const int ox = i % wo, oy = (i / wo) % ho;
  const size_t p = i / (static_cast<size_t>(ho) * wo);
  const MaxWindow best = max_window(x + p * height * width, height, width, kernel, stride, padding, oy, ox);
  y[i] = best.value;
  argmax[i] = best.index;
}

__global__ void max_pool_backward_kernel(const float* dy, const int32_t* argmax, int in_size, int out_size,
                                         size_t total, float* dx) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= total) return;
  const size_t p = i / out_size;
  atomicAdd(dx + p * in_size + argmax[i], dy[i]);
}

__global__ void avg_pool_forward_kernel(const float* x, int height, int width, int kernel, int stride, int ho, int wo,
                                        size_t total, float* y) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= total) return;
  const int ox = i % wo, oy = (i / wo) % ho;
  const float* plane = x + (i / (static_cast<size_t>(ho) * wo)) * height * width;
  y[i] = window_sum(plane, width, kernel, stride, oy, ox) / static_cast<float>(kernel * kernel);
}

__global__ void avg_pool_backward_kernel(const float* dy, int height, int width, int kernel, int stride, int ho,
                                         int wo, size_t total, float* dx) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= total) return;
  const int ox = i % wo, oy = (i / wo) % ho;
  float* plane = dx + (i / (static_cast<size_t>(ho) * wo)) * height * width;
  const float g = dy[i] / static_cast<float>(kernel * kernel);
  for (int ki = 0; ki < kernel; ++ki)
    for (int kj = 0; kj < kernel; ++kj) atomicAdd(plane + (oy * stride + ki) * width + ox * stride + kj, g);
}

}  // namespace

void max_pool_forward(Handles& h, const float* x, int planes, int height, int width, int kernel, int stride,
                      int padding, float* y, int32_t* argmax) {
  const int ho = window_count(height, kernel, stride, padding), wo = window_count(width, kernel, stride, padding);
  const size_t total = static_cast<size_t>(planes) * ho * wo;
  max_pool_forward_kernel<<<blocks_for(total), kThreads, 0, h.impl().stream>>>(x, planes, height, width, kernel, stride,
                                                                                 padding, ho, wo, y, argmax);
  check(cudaGetLastError(), "max_pool_forward");
}

void max_pool_backward(Handles& h, const float* dy, const int32_t* argmax, int planes, int in_size, int out_size,
                       float* dx) {
  const size_t total = static_cast<size_t>(planes) * out_size;
  max_pool_backward_kernel<<<blocks_for(total), kThreads, 0, h.impl().stream>>>(dy, argmax, in_size, out_size, total, dx);
  check(cudaGetLastError(), "max_pool_backward");
}

void avg_pool_forward(Handles& h, const float* x, int planes, int height, int width, int kernel, int stride, float* y) {
  const int ho = window_count(height, kernel, stride, 0), wo = window_count(width, kernel, stride, 0);
  const size_t total = static_cast<size_t>(planes) * ho * wo;
  avg_pool_forward_kernel<<<blocks_for(total), kThreads, 0, h.impl().stream>>>(x, height, width, kernel, stride, ho, wo,
                                                                                 total, y);
  check(cudaGetLastError(), "avg_pool_forward");
}

void avg_pool_backward(Handles& h, const float* dy, int planes, int height, int width, int kernel, int stride,
                       float* dx) {
  const int ho = window_count(height, kernel, stride, 0), wo = window_count(width, kernel, stride, 0);
  const size_t total = static_cast<size_t>(planes) * ho * wo;
  avg_pool_backward_kernel<<<blocks_for(total), kThreads, 0, h.impl().stream>>>(dy, height, width, kernel, stride, ho,
                                                                                  wo, total, dx);
  check(cudaGetLastError(), "avg_pool_backward");
}

}  // namespace paddle::kernels::cuda
