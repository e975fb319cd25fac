#pragma once
// Max and average pooling of [N*C, H, W] planes with a square window. Max pooling takes zero-size
// padding (padded cells never win) and records the winning input index of each output for the
// backward pass; average pooling is unpadded. Output size: (H + 2*padding - kernel) / stride + 1.

#include <cstdint>

#include "kernels/context.h"

namespace paddle::kernels {

namespace cpu {
void max_pool_forward(const float* x, int planes, int height, int width, int kernel, int stride, int padding, float* y,
                      int32_t* argmax);
// dx (planes of in_size = H*W) accumulates dy (planes of out_size) at the recorded argmax.
void max_pool_backward(const float* dy, const int32_t* argmax, int planes, int in_size, int out_size, float* dx);
void avg_pool_forward(const float* x, int planes, int height, int width, int kernel, int stride, float* y);
// dx accumulates each output's gradient spread evenly over its window.
void avg_pool_backward(const float* dy, int planes, int height, int width, int kernel, int stride, float* dx);

// Max pooling of channel-blocked tensors, [outer][H][W][block] with outer = N * C / block
// (oneDNN's nChw16c for block 16, kernels/layout.h), by windows that tile the plane (stride =
// kernel, no padding). `winners` holds each output's winning position in its window (0 to
// kernel^2 - 1), laid out as y; int32, so that a block of lanes is one vector. With
// relu_gradient (x is a ReLU's output), a window whose maximum is not above 0 has no winner (-1),
// which applies ReLU's gradient too. The backward pass overwrites all of dx.
void max_pool_forward_channel_blocked(const float* x, int outer, int block, int height, int width, int kernel, float* y,
                                      int32_t* winners, bool relu_gradient = false);
void max_pool_backward_channel_blocked(const float* dy, const int32_t* winners, int outer, int block, int height,
                                       int width, int kernel, float* dx);
}  // namespace cpu

#ifdef PADDLE_LAUNCH_WITH_CUDA
namespace cuda {
void max_pool_forward(Handles& h, const float* x, int planes, int height, int width, int kernel, int stride,
                      int padding, float* y, int32_t* argmax);
void max_pool_backward(Handles& h, const float* dy, const int32_t* argmax, int planes, int in_size, int out_size,
                       float* dx);
void avg_pool_forward(Handles& h, const float* x, int planes, int height, int width, int kernel, int stride, float* y);
void avg_pool_backward(Handles& h, const float* dy, int planes, int height, int width, int kernel, int stride,
                       float* dx);
}  // namespace cuda
#endif

inline void max_pool_forward([[maybe_unused]] const Context& ctx, const float* x, int planes, int height, int width,
                             int kernel, int stride, int padding, float* y, int32_t* argmax) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda())
    return cuda::max_pool_forward(ctx.cuda(), x, planes, height, width, kernel, stride, padding, y, argmax);
#endif
  cpu::max_pool_forward(x, planes, height, width, kernel, stride, padding, y, argmax);
}

inline void max_pool_backward([[maybe_unused]] const Context& ctx, const float* dy, const int32_t* argmax, int planes,
                              int in_size, int out_size, float* dx) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda()) return cuda::max_pool_backward(ctx.cuda(), dy, argmax, planes, in_size, out_size, dx);
#endif
  cpu::max_pool_backward(dy, argmax, planes, in_size, out_size, dx);
}

inline void avg_pool_forward([[maybe_unused]] const Context& ctx, const float* x, int planes, int height, int width,
                             int kernel, int stride, float* y) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda()) return cuda::avg_pool_forward(ctx.cuda(), x, planes, height, width, kernel, stride, y);
#endif
  cpu::avg_pool_forward(x, planes, height, width, kernel, stride, y);
}

inline void avg_pool_backward([[maybe_unused]] const Context& ctx, const float* dy, int planes, int height, int width,
                              int kernel, int stride, float* dx) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda()) return cuda::avg_pool_backward(ctx.cuda(), dy, planes, height, width, kernel, stride, dx);
#endif
  cpu::avg_pool_backward(dy, planes, height, width, kernel, stride, dx);
}

}  // namespace paddle::kernels
