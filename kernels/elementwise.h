#pragma once
// Element-wise arithmetic over n floats: Dropout's mask, a residual block's sum and gradient
// accumulation, and copies within one device's memory, whole or a block of columns of row-major
// matrices.

#include <cstddef>

#include "kernels/context.h"

namespace paddle::kernels {

namespace cpu {
// y = a * b; y = max(0, a + b); y += x. Outputs may alias inputs.
void multiply(const float* a, const float* b, float* y, size_t n);
void add_relu(const float* a, const float* b, float* y, size_t n);
void add_in_place(float* y, const float* x, size_t n);
// Copy of n floats within the context's memory (on CUDA, queued on the handles' stream).
void copy(float* dst, const float* src, size_t n);
// dst[i * dst_stride + j] = src[i * src_stride + j] for `rows` rows and `width` columns: with
// the pointers offset to the first column, slices columns out of one matrix into another
// (strides are row lengths in floats).
void copy_columns(float* dst, size_t dst_stride, const float* src, size_t src_stride, size_t rows, size_t width);
}  // namespace cpu

#ifdef PADDLE_LAUNCH_WITH_CUDA
namespace cuda {
void multiply(Handles& h, const float* a, const float* b, float* y, size_t n);
void add_relu(Handles& h, const float* a, const float* b, float* y, size_t n);
void add_in_place(Handles& h, float* y, const float* x, size_t n);
void copy(Handles& h, float* dst, const float* src, size_t n);
void copy_columns(Handles& h, float* dst, size_t dst_stride, const float* src, size_t src_stride, size_t rows,
                  size_t width);
}  // namespace cuda
#endif

inline void multiply([[maybe_unused]] const Context& ctx, const float* a, const float* b, float* y, size_t n) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda()) return cuda::multiply(ctx.cuda(), a, b, y, n);
#endif
  cpu::multiply(a, b, y, n);
}

inline void add_relu([[maybe_unused]] const Context& ctx, const float* a, const float* b, float* y, size_t n) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda()) return cuda::add_relu(ctx.cuda(), a, b, y, n);
#endif
  cpu::add_relu(a, b, y, n);
}

inline void add_in_place([[maybe_unused]] const Context& ctx, float* y, const float* x, size_t n) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda()) return cuda::add_in_place(ctx.cuda(), y, x, n);
#endif
  cpu::add_in_place(y, x, n);
}

inline void copy([[maybe_unused]] const Context& ctx, float* dst, const float* src, size_t n) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda()) return cuda::copy(ctx.cuda(), dst, src, n);
#endif
  cpu::copy(dst, src, n);
}

inline void copy_columns([[maybe_unused]] const Context& ctx, float* dst, size_t dst_stride, const float* src,
                         size_t src_stride, size_t rows, size_t width) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda()) return cuda::copy_columns(ctx.cuda(), dst, dst_stride, src, src_stride, rows, width);
#endif
  cpu::copy_columns(dst, dst_stride, src, src_stride, rows, width);
}

}  // namespace paddle::kernels
