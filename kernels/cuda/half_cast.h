#pragma once
// What the autocast kernels (autocast_gemm.cu, autocast_conv.cu) share: stream-ordered scratch
// for 16-bit copies, and the cast kernels between float32 and the 16-bit type, both ways, in the
// same layout or between NCHW (float32) and NHWC (16-bit).

#include <cuda_runtime.h>

#include <cstddef>

#include "kernels/autocast_gemm.h"

namespace paddle::kernels::cuda {

// A device buffer of n 16-bit elements from the stream-ordered pool, freed in stream order.
class HalfScratch {
 public:
  HalfScratch(size_t n, cudaStream_t stream);
  ~HalfScratch();
  HalfScratch(const HalfScratch&) = delete;
  HalfScratch& operator=(const HalfScratch&) = delete;
  void* get() { return ptr_; }

 private:
  void* ptr_ = nullptr;
  cudaStream_t stream_;
};

// y[i] = x[i] rounded to `half` (to nearest even); y holds n 16-bit elements.
void round_into(DType half, const float* x, void* y, size_t n, cudaStream_t stream);
// y[i] = x[i] widened to float32 (exact), or y[i] += it with accumulate.
void widen_into(DType half, const void* x, float* y, size_t n, bool accumulate, cudaStream_t stream);
// The same casts between a float32 [n][c][plane] tensor (NCHW; a KCRS filter with plane = R*S)
// and a 16-bit [n][plane][c] one (NHWC; KRSC), transposing through shared-memory tiles.
void round_into_nhwc(DType half, const float* x, void* y, int n, int c, int plane, cudaStream_t stream);
void widen_from_nhwc(DType half, const void* x, float* y, int n, int c, int plane, bool accumulate,
                     cudaStream_t stream);

}  // namespace paddle::kernels::cuda
