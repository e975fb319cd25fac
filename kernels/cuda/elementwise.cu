#include "kernels/elementwise.h"

#include "kernels/cuda/internal.h"
#include "kernels/functors.h"

namespace paddle::kernels::cuda {
namespace {

__global__ void multiply_kernel(const float* a, const float* b, float* y, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = a[i] * b[i];
}

__global__ void add_relu_kernel(const float* a, const float* b, float* y, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = AddRelu{}(a[i], b[i]);
}

__global__ void add_in_place_kernel(float* y, const float* x, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] += x[i];
}

}  // namespace

void multiply(Handles& h, const float* a, const float* b, float* y, size_t n) {
  multiply_kernel<<<blocks_for(n), kThreads, 0, h.impl().stream>>>(a, b, y, n);
  check(cudaGetLastError(), "multiply");
}

void add_relu(Handles& h, const float* a, const float* b, float* y, size_t n) {
  add_relu_kernel<<<blocks_for(n), kThreads, 0, h.impl().stream>>>(a, b, y, n);
  check(cudaGetLastError(), "add_relu");
}

void add_in_place(Handles& h, float* y, const float* x, size_t n) {
  add_in_place_kernel<<<blocks_for(n), kThreads, 0, h.impl().stream>>>(y, x, n);
  check(cudaGetLastError(), "add_in_place");
}

void copy(Handles& h, float* dst, const float* src, size_t n) {
  check(cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyDeviceToDevice, h.impl().stream), "copy");
}

void copy_columns(Handles& h, float* dst, size_t dst_stride, const float* src, size_t src_stride, size_t rows,
                  size_t width) {
  if (rows == 0 || width == 0) return;
  check(cudaMemcpy2DAsync(dst, dst_stride * sizeof(float), src, src_stride * sizeof(float), width * sizeof(float), rows,
                          cudaMemcpyDeviceToDevice, h.impl().stream),
        "copy_columns");
}

}  // namespace paddle::kernels::cuda
