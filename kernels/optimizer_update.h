#pragma once
// The optimizers' update rules over n parameters, each with L2 decay added to the gradient
// (g + decay * w) before the step in kernels/functors.h. Paddle's momentum: v = mu*v + g;
// w -= lr*v. Adam's step_size already holds lr * sqrt(1 - beta2^t) / (1 - beta1^t).

#include <cstddef>

#include "kernels/context.h"

namespace paddle::kernels {

namespace cpu {
void sgd_update(float* w, const float* g, size_t n, float lr, float decay);
void momentum_update(float* w, const float* g, float* v, size_t n, float lr, float mu, float decay);
void adam_update(float* w, const float* g, float* m, float* v, size_t n, float step_size, float beta1, float beta2,
                 float epsilon, float decay);
void adagrad_update(float* w, const float* g, float* accumulator, size_t n, float lr, float epsilon, float decay);
}  // namespace cpu

#ifdef PADDLE_LAUNCH_WITH_CUDA
namespace cuda {
void sgd_update(Handles& h, float* w, const float* g, size_t n, float lr, float decay);
void momentum_update(Handles& h, float* w, const float* g, float* v, size_t n, float lr, float mu, float decay);
void adam_update(Handles& h, float* w, const float* g, float* m, float* v, size_t n, float step_size, float beta1,
                 float beta2, float epsilon, float decay);
void adagrad_update(Handles& h, float* w, const float* g, float* accumulator, size_t n, float lr, float epsilon,
                    float decay);
}  // namespace cuda
#endif

inline void sgd_update([[maybe_unused]] const Context& ctx, float* w, const float* g, size_t n, float lr, float decay) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda()) return cuda::sgd_update(ctx.cuda(), w, g, n, lr, decay);
#endif
  cpu::sgd_update(w, g, n, lr, decay);
}

inline void momentum_update([[maybe_unused]] const Context& ctx, float* w, const float* g, float* v, size_t n, float lr,
                            float mu, float decay) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda()) return cuda::momentum_update(ctx.cuda(), w, g, v, n, lr, mu, decay);
#endif
  cpu::momentum_update(w, g, v, n, lr, mu, decay);
}

inline void adam_update([[maybe_unused]] const Context& ctx, float* w, const float* g, float* m, float* v, size_t n,
                        float step_size, float beta1, float beta2, float epsilon, float decay) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda()) return cuda::adam_update(ctx.cuda(), w, g, m, v, n, step_size, beta1, beta2, epsilon, decay);
#endif
  cpu::adam_update(w, g, m, v, n, step_size, beta1, beta2, epsilon, decay);
}

inline void adagrad_update([[maybe_unused]] const Context& ctx, float* w, const float* g, float* accumulator, size_t n,
                           float lr, float epsilon, float decay) {
#ifdef PADDLE_LAUNCH_WITH_CUDA
  if (ctx.is_cuda()) return cuda::adagrad_update(ctx.cuda(), w, g, accumulator, n, lr, epsilon, decay);
#endif
  cpu::adagrad_update(w, g, accumulator, n, lr, epsilon, decay);
}

}  // namespace paddle::kernels
