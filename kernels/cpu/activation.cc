#include "kernels/activation.h"

#include "kernels/functors.h"

namespace paddle::kernels::cpu {

void relu_forward(const float* x, float* y, size_t n) {
  const Relu relu;
  for (size_t i = 0; i < n; ++i) y[i] = relu(x[i]);
}

void relu_backward(const float* y, const float* dy, float* dx, size_t n) {
  const ReluGrad grad;
  for (size_t i = 0; i < n; ++i) dx[i] = grad(y[i], dy[i]);
}

void tanh_forward(const float* x, float* y, size_t n) {
  const Tanh tanh;
  for (size_t i = 0; i < n; ++i) y[i] = tanh(x[i]);
}

void tanh_backward(const float* y, const float* dy, float* dx, size_t n) {
  const TanhGrad grad;
  for (size_t i = 0; i < n; ++i) dx[i] = grad(y[i], dy[i]);
}

}  // namespace paddle::kernels::cpu
