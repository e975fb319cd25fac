// A CUDA kernel built by nvcc and, where a GPU is present, run and checked; without a device
// the test reports a skip (exit 77). It keeps the CUDA configuration of the build honest, and
// checks the launcher's GPU count against the runtime's.

#include <cuda_runtime_api.h>

#include <cstdio>
#include <vector>

#include "launcher/plan/cuda_device_count.h"

namespace {

__global__ void axpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}

constexpr int kSkip = 77;

}  // namespace

int main() {
  auto count = paddle::launcher::cuda_runtime_device_count();
  if (!count || *count == 0) {
    std::printf("SKIP: no CUDA device\n");
    return kSkip;
  }
  const int n = 1 << 20;
  std::vector<float> x(n, 2.0f), y(n, 1.0f);
  float *dx = nullptr, *dy = nullptr;
  if (cudaMalloc(&dx, n * sizeof(float)) != cudaSuccess || cudaMalloc(&dy, n * sizeof(float)) != cudaSuccess) {
    std::printf("FAIL: cudaMalloc\n");
    return 1;
  }
  cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  axpy<<<(n + 255) / 256, 256>>>(n, 3.0f, dx, dy);
  cudaMemcpy(y.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dx);
  cudaFree(dy);
  for (int i = 0; i < n; ++i)
    if (y[i] != 7.0f) {
      std::printf("FAIL: y[%d] = %f, expected 7\n", i, y[i]);
      return 1;
    }
  std::printf("PASS: %d device(s), axpy on %d floats\n", *count, n);
  return 0;
}
