#pragma once
// ReLU and tanh and their gradients over n floats (kernels/functors.h holds the arithmetic both
// halves run).

#include <cstddef>

#include "kernels/context.h"

namespace paddle::kernels {

namespace cpu {
// y = max(0, x); y may be x.
void relu_forward(const float* x, float* y, size_t n);
// dx = y > 0 ? dy : 0, from the forward output y; dx may be dy.
void relu_backward(const float* y, const float* dy, float* dx, size_t n);
// y = tanh(x); y may be x.
void tanh_forward(const float* x, float* y, size_t n);
// dx = dy * (1 - y^2), from the forward output y; dx may be dy.
void tanh_backward(const float* y, const float* dy, float* dx, size_t n);
}  // namespace cpu

#ifdef PADDLE_LAUNCH_WITH_CUDA
namespace cuda {
void relu_forward(Handles& h, const float* x, float* y, size_t n);
void relu_backward(Handles& h, const float* y, const float* dy, float* dx, size_t n);
void tanh_forward(Handles& h, const float* x, float* y, size_t n);
void tanh_backward(Handles& h, const float* y, const float* dy, float* dx, size_t n);
}  // namespace cuda
#endif

inline void relu_forward([[maybe_unused]] const Context& ctx, const float* x, float* y, size_t n) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda()) return cuda::relu_forward(ctx.cuda(), x, y, n);
#endif
  cpu::relu_forward(x, y, n);
}

inline void relu_backward([[maybe_unused]] const Context& ctx, const float* y, const float* dy, float* dx, size_t n) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda()) return cuda::relu_backward(ctx.cuda(), y, dy, dx, n);
#endif
  cpu::relu_backward(y, dy, dx, n);
}

inline void tanh_forward([[maybe_unused]] const Context& ctx, const float* x, float* y, size_t n) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda()) return cuda::tanh_forward(ctx.cuda(), x, y, n);
#endif
  cpu::tanh_forward(x, y, n);
}

inline void tanh_backward([[maybe_unused]] const Context& ctx, const float* y, const float* dy, float* dx, size_t n) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda()) return cuda::tanh_backward(ctx.cuda(), y, dy, dx, n);
#endif
  cpu::tanh_backward(y, dy, dx, n);
}

}  // namespace paddle::kernels
