#include "kernels/cosine.h"

#include "kernels/cuda/internal.h"
#include "kernels/functors.h"

namespace paddle::kernels::cuda {
namespace {

constexpr int kWarp = 32;
constexpr int kRowsPerBlock = kThreads / kWarp;

__device__ double warp_sum(double v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// Warp w of block k reduces row k * kRowsPerBlock + w; lane 0 writes it.
__global__ void cosine_forward_kernel(const float* a, const float* b, size_t n, int d, float scale, float* y,
                                      float* saved) {
  const size_t i = blockIdx.x * static_cast<size_t>(kRowsPerBlock) + threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (i >= n) return;  // the whole warp leaves together, so the shuffles below see all 32 lanes
  const float* x = a + i * d;
  const float* z = b + i * d;
  double dot = 0, xx = 0, zz = 0;
  for (int j = lane; j < d; j += kWarp) {
    dot += static_cast<double>(x[j]) * z[j];
    xx += static_cast<double>(x[j]) * x[j];
    zz += static_cast<double>(z[j]) * z[j];
  }
  dot = warp_sum(dot);
  xx = warp_sum(xx);
  zz = warp_sum(zz);
  if (lane != 0) return;
  const CosineRow row = cosine_row(dot, xx, zz);
  saved[3 * i] = row.norm_a;
  saved[3 * i + 1] = row.norm_b;
  saved[3 * i + 2] = row.cosine;
  y[i] = scale * row.cosine;
}

__global__ void cosine_backward_kernel(const float* a, const float* b, const float* saved, const float* dy, size_t n,
                                       int d, float scale, float* da, float* db) {
  const size_t k = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (k >= n * d) return;
  const size_t i = k / d;
  const float g = dy[i] * scale;
  const float na = saved[3 * i], nb = saved[3 * i + 1], c = saved[3 * i + 2];
  da[k] = cosine_grad(g, a[k], b[k], na, nb, c);
  db[k] = cosine_grad(g, b[k], a[k], nb, na, c);
}

}  // namespace

void cosine_forward(Handles& h, const float* a, const float* b, size_t n, int d, float scale, float* y, float* saved) {
  if (n == 0) return;
  const int blocks = static_cast<int>((n + kRowsPerBlock - 1) / kRowsPerBlock);
  cosine_forward_kernel<<<blocks, kThreads, 0, h.impl().stream>>>(a, b, n, d, scale, y, saved);
  check(cudaGetLastError(), "cosine_forward");
}

void cosine_backward(Handles& h, const float* a, const float* b, const float* saved, const float* dy, size_t n, int d,
                     float scale, float* da, float* db) {
  const size_t total = n * static_cast<size_t>(d);
  if (total == 0) return;
  cosine_backward_kernel<<<blocks_for(total), kThreads, 0, h.impl().stream>>>(a, b, saved, dy, n, d, scale, da, db);
  check(cudaGetLastError(), "cosine_backward");
}

}  // namespace paddle::kernels::cuda
