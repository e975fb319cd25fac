#pragma once
// Batch normalization per channel over N,H,W of [N,C,H,W]. Training normalizes with the batch
// statistics, saves mean and 1/std for backward and moves the running statistics by
// running = momentum*running + (1-momentum)*batch. Backward overwrites dx and accumulates dscale
// and dshift. The CPU half keeps the biased batch variance in the running statistics; the CUDA
// half (cuDNN) keeps the unbiased one, as Paddle's GPU kernel does.

#include "kernels/context.h"

namespace paddle::kernels {

struct BatchNormShape {
  int batch, channels, height, width;
};

namespace cpu {
void batch_norm_forward_training(const BatchNormShape& s, const float* x, float* y, const float* scale,
                                 const float* shift, float* running_mean, float* running_var, float* saved_mean,
                                 float* saved_inv_std, float momentum, float epsilon);
void batch_norm_forward_inference(const BatchNormShape& s, const float* x, float* y, const float* scale,
                                  const float* shift, const float* running_mean, const float* running_var,
                                  float epsilon);
void batch_norm_backward(const BatchNormShape& s, const float* x, const float* dy, const float* scale,
                         const float* saved_mean, const float* saved_inv_std, float* dx, float* dscale, float* dshift,
                         float epsilon);
}  // namespace cpu

#ifdef PADDLE_LAUNCH_WITH_CUDA
namespace cuda {
void batch_norm_forward_training(Handles& h, const BatchNormShape& s, const float* x, float* y, const float* scale,
                                 const float* shift, float* running_mean, float* running_var, float* saved_mean,
                                 float* saved_inv_std, float momentum, float epsilon);
void batch_norm_forward_inference(Handles& h, const BatchNormShape& s, const float* x, float* y, const float* scale,
                                  const float* shift, const float* running_mean, const float* running_var,
                                  float epsilon);
void batch_norm_backward(Handles& h, const BatchNormShape& s, const float* x, const float* dy, const float* scale,
                         const float* saved_mean, const float* saved_inv_std, float* dx, float* dscale, float* dshift,
                         float epsilon);
}  // namespace cuda
#endif

inline void batch_norm_forward_training([[maybe_unused]] const Context& ctx, const BatchNormShape& s, const float* x,
                                        float* y, const float* scale, const float* shift, float* running_mean,
                                        float* running_var, float* saved_mean, float* saved_inv_std, float momentum,
                                        float epsilon) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda())
    return cuda::batch_norm_forward_training(ctx.cuda(), s, x, y, scale, shift, running_mean, running_var, saved_mean,
                                             saved_inv_std, momentum, epsilon);
#endif
  cpu::batch_norm_forward_training(s, x, y, scale, shift, running_mean, running_var, saved_mean, saved_inv_std,
                                   momentum, epsilon);
}

inline void batch_norm_forward_inference([[maybe_unused]] const Context& ctx, const BatchNormShape& s, const float* x,
                                         float* y, const float* scale, const float* shift, const float* running_mean,
                                         const float* running_var, float epsilon) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda())
    return cuda::batch_norm_forward_inference(ctx.cuda(), s, x, y, scale, shift, running_mean, running_var, epsilon);
#endif
  cpu::batch_norm_forward_inference(s, x, y, scale, shift, running_mean, running_var, epsilon);
}

inline void batch_norm_backward([[maybe_unused]] const Context& ctx, const BatchNormShape& s, const float* x,
                                const float* dy, const float* scale, const float* saved_mean,
                                const float* saved_inv_std, float* dx, float* dscale, float* dshift, float epsilon) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda())
    return cuda::batch_norm_backward(ctx.cuda(), s, x, dy, scale, saved_mean, saved_inv_std, dx, dscale, dshift,
                                     epsilon);
#endif
  cpu::batch_norm_backward(s, x, dy, scale, saved_mean, saved_inv_std, dx, dscale, dshift, epsilon);
}

}  // namespace paddle::kernels
