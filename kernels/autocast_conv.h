#pragma once
// The O1 autocast convolution of mixed precision: the three operations of kernels/conv.h with
// their inputs (x, w, dy) rounded to a 16-bit float (to nearest even), products accumulated in
// float32, and each result rounded to the 16-bit type before it is handed back to the float32
// graph; the filter gradient still accumulates into a float32 dw, and weights stay float32.
// The CUDA half casts the inputs into scratch buffers and runs cuDNN on them (CUDNN_DATA_HALF or
// CUDNN_DATA_BFLOAT16 tensors, CUDNN_DATA_FLOAT compute type, CUDNN_TENSOR_OP_MATH: tensor
// cores) in NHWC, the cast kernels transposing from and back to the graph's NCHW. The CPU half
// is its twin for tests: it rounds copies of the inputs through Eigen's half types, runs the
// float32 convolution and rounds the result, so the two differ only in summation order (and so
// at most in a result's last bit).

#include "kernels/autocast_gemm.h"
#include "kernels/context.h"
#include "kernels/conv.h"

namespace paddle::kernels {

namespace cpu {
// y = conv(x, w), overwritten; dw += filter gradient; dx = data gradient, overwritten.
void autocast_conv2d_forward(DType half, const ConvShape& s, int batch, int out_channels, const float* x,
                             const float* w, float* y);
void autocast_conv2d_backward_data(DType half, const ConvShape& s, int batch, int out_channels, const float* w,
                                   const float* dy, float* dx);
void autocast_conv2d_backward_filter(DType half, const ConvShape& s, int batch, int out_channels, const float* x,
                                     const float* dy, float* dw);
}  // namespace cpu

#ifdef PADDLE_LAUNCH_WITH_CUDA
namespace cuda {
void autocast_conv2d_forward(Handles& h, DType half, const ConvShape& s, int batch, int out_channels,
                             const float* x, const float* w, float* y);
void autocast_conv2d_backward_data(Handles& h, DType half, const ConvShape& s, int batch, int out_channels,
                                   const float* w, const float* dy, float* dx);
void autocast_conv2d_backward_filter(Handles& h, DType half, const ConvShape& s, int batch, int out_channels,
                                     const float* x, const float* dy, float* dw);
}  // namespace cuda
#endif

inline void autocast_conv2d_forward([[maybe_unused]] const Context& ctx, DType half, const ConvShape& s, int batch,
                                    int out_channels, const float* x, const float* w, float* y) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda()) return cuda::autocast_conv2d_forward(ctx.cuda(), half, s, batch, out_channels, x, w, y);
#endif
  cpu::autocast_conv2d_forward(half, s, batch, out_channels, x, w, y);
}

inline void autocast_conv2d_backward_data([[maybe_unused]] const Context& ctx, DType half, const ConvShape& s,
                                          int batch, int out_channels, const float* w, const float* dy, float* dx) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda()) return cuda::autocast_conv2d_backward_data(ctx.cuda(), half, s, batch, out_channels, w, dy, dx);
#endif
  cpu::autocast_conv2d_backward_data(half, s, batch, out_channels, w, dy, dx);
}

inline void autocast_conv2d_backward_filter([[maybe_unused]] const Context& ctx, DType half, const ConvShape& s,
                                            int batch, int out_channels, const float* x, const float* dy, float* dw) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda()) return cuda::autocast_conv2d_backward_filter(ctx.cuda(), half, s, batch, out_channels, x, dy, dw);
#endif
  cpu::autocast_conv2d_backward_filter(half, s, batch, out_channels, x, dy, dw);
}

}  // namespace paddle::kernels
