#include "kernels/cuda/half_cast.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/cuda/internal.h"

namespace paddle::kernels::cuda {
namespace {

template <typename Half>
__device__ Half round_to(float x);
template <>
__device__ __half round_to<__half>(float x) { return __float2half_rn(x); }
template <>
__device__ __nv_bfloat16 round_to<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

__device__ float widen(__half x) { return __half2float(x); }
__device__ float widen(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename Half>
__global__ void round_kernel(const float* x, Half* y, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = round_to<Half>(x[i]);
}

template <typename Half>
__global__ void widen_kernel(const Half* x, float* y, size_t n, bool accumulate) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = accumulate ? y[i] + widen(x[i]) : widen(x[i]);
}

// The NCHW <-> NHWC casts: a block moves one 32x32 tile of (channel, position) of one image,
// reading and writing whole rows of it, through shared memory (padded against bank conflicts).
constexpr int kTile = 32, kTileRows = 8;

template <typename Half>
__global__ void round_to_nhwc_kernel(const float* x, Half* y, int c, int plane) {
  __shared__ float tile[kTile][kTile + 1];
  const size_t image = static_cast<size_t>(blockIdx.z) * c * plane;
  const int p0 = blockIdx.x * kTile, c0 = blockIdx.y * kTile;
  for (int i = threadIdx.y; i < kTile; i += kTileRows) {
    const int ch = c0 + i, p = p0 + threadIdx.x;
    if (ch < c && p < plane) tile[i][threadIdx.x] = x[image + static_cast<size_t>(ch) * plane + p];
  }
  __syncthreads();
  for (int i = threadIdx.y; i < kTile; i += kTileRows) {
    const int p = p0 + i, ch = c0 + threadIdx.x;
    if (ch < c && p < plane) y[image + static_cast<size_t>(p) * c + ch] = round_to<Half>(tile[threadIdx.x][i]);
  }
}

template <typename Half>
__global__ void widen_from_nhwc_kernel(const Half* x, float* y, int c, int plane, bool accumulate) {
  __shared__ float tile[kTile][kTile + 1];
  const size_t image = static_cast<size_t>(blockIdx.z) * c * plane;
  const int p0 = blockIdx.x * kTile, c0 = blockIdx.y * kTile;
  for (int i = threadIdx.y; i < kTile; i += kTileRows) {
    const int p = p0 + i, ch = c0 + threadIdx.x;
    if (ch < c && p < plane) tile[i][threadIdx.x] = widen(x[image + static_cast<size_t>(p) * c + ch]);
  }
  __syncthreads();
  for (int i = threadIdx.y; i < kTile; i += kTileRows) {
    const int ch = c0 + i, p = p0 + threadIdx.x;
    if (ch < c && p < plane) {
      const size_t at = image + static_cast<size_t>(ch) * plane + p;
      y[at] = accumulate ? y[at] + tile[threadIdx.x][i] : tile[threadIdx.x][i];
    }
  }
}

dim3 tiles_for(int n, int c, int plane) { return dim3((plane + kTile - 1) / kTile, (c + kTile - 1) / kTile, n); }

}  // namespace

HalfScratch::HalfScratch(size_t n, cudaStream_t stream) : stream_(stream) {
  check(cudaMallocAsync(&ptr_, n * 2, stream), "autocast: 16-bit scratch");
}

HalfScratch::~HalfScratch() { cudaFreeAsync(ptr_, stream_); }

void round_into(DType half, const float* x, void* y, size_t n, cudaStream_t stream) {
  if (n == 0) return;
  if (half == DType::kFloat16) round_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, static_cast<__half*>(y), n);
  else round_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, static_cast<__nv_bfloat16*>(y), n);
  check(cudaGetLastError(), "autocast: round to 16 bits");
}

void widen_into(DType half, const void* x, float* y, size_t n, bool accumulate, cudaStream_t stream) {
  if (n == 0) return;
  if (half == DType::kFloat16)
    widen_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const __half*>(x), y, n, accumulate);
  else widen_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(x), y, n, accumulate);
  check(cudaGetLastError(), "autocast: widen to float32");
}

void round_into_nhwc(DType half, const float* x, void* y, int n, int c, int plane, cudaStream_t stream) {
  const size_t count = static_cast<size_t>(n) * c * plane;
  if (c == 1 || plane == 1) return round_into(half, x, y, count, stream);  // the two layouts agree
  if (count == 0) return;
  const dim3 threads(kTile, kTileRows);
  if (half == DType::kFloat16)
    round_to_nhwc_kernel<<<tiles_for(n, c, plane), threads, 0, stream>>>(x, static_cast<__half*>(y), c, plane);
  else
    round_to_nhwc_kernel<<<tiles_for(n, c, plane), threads, 0, stream>>>(x, static_cast<__nv_bfloat16*>(y), c, plane);
  check(cudaGetLastError(), "autocast: round to 16-bit NHWC");
}

void widen_from_nhwc(DType half, const void* x, float* y, int n, int c, int plane, bool accumulate,
                     cudaStream_t stream) {
  const size_t count = static_cast<size_t>(n) * c * plane;
  if (c == 1 || plane == 1) return widen_into(half, x, y, count, accumulate, stream);
  if (count == 0) return;
  const dim3 threads(kTile, kTileRows);
  if (half == DType::kFloat16)
    widen_from_nhwc_kernel<<<tiles_for(n, c, plane), threads, 0, stream>>>(static_cast<const __half*>(x), y, c, plane,
                                                                           accumulate);
  else
    widen_from_nhwc_kernel<<<tiles_for(n, c, plane), threads, 0, stream>>>(static_cast<const __nv_bfloat16*>(x), y, c,
                                                                           plane, accumulate);
  check(cudaGetLastError(), "autocast: widen from 16-bit NHWC");
}

}  // namespace paddle::kernels::cuda
