#pragma once
// Scaled cosine similarity of the rows of two [n, d] matrices a and b, y[i] = scale * cos(a_i, b_i),
// and its gradient for both. Sums are taken in double; a row's norm is floored at kCosineMinNorm
// (kernels/functors.h), so a zero row has cosine 0 and a finite gradient.
//
// The forward keeps what the backward needs in `saved`, [n, 3]: per row |a_i|, |b_i| (floored)
// and cos(a_i, b_i), all float.

#include <cstddef>

#include "kernels/context.h"

namespace paddle::kernels {

namespace cpu {
void cosine_forward(const float* a, const float* b, size_t n, int d, float scale, float* y, float* saved);
// da = scale * dy_i * d cos / d a_i, db likewise, from the forward's inputs and `saved`.
void cosine_backward(const float* a, const float* b, const float* saved, const float* dy, size_t n, int d, float scale,
                     float* da, float* db);
}  // namespace cpu

#ifdef PADDLE_LAUNCH_WITH_CUDA
namespace cuda {
// One warp per row.
void cosine_forward(Handles& h, const float* a, const float* b, size_t n, int d, float scale, float* y, float* saved);
void cosine_backward(Handles& h, const float* a, const float* b, const float* saved, const float* dy, size_t n, int d,
                     float scale, float* da, float* db);
}  // namespace cuda
#endif

inline void cosine_forward([[maybe_unused]] const Context& ctx, const float* a, const float* b, size_t n, int d,
                           float scale, float* y, float* saved) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda()) return cuda::cosine_forward(ctx.cuda(), a, b, n, d, scale, y, saved);
#endif
  cpu::cosine_forward(a, b, n, d, scale, y, saved);
}

inline void cosine_backward([[maybe_unused]] const Context& ctx, const float* a, const float* b, const float* saved,
                            const float* dy, size_t n, int d, float scale, float* da, float* db) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda()) return cuda::cosine_backward(ctx.cuda(), a, b, saved, dy, n, d, scale, da, db);
#endif
  cpu::cosine_backward(a, b, saved, dy, n, d, scale, da, db);
}

}  // namespace paddle::kernels
