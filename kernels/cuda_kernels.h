#pragma once
// CUDA twins of cpu_kernels.h: the same operations and layouts on device memory, with cuBLAS
// for GEMM and cuDNN for convolution. Every function runs on the handles' stream; errors throw
// std::runtime_error naming the call.

#include <cstddef>
#include <cstdint>
#include <memory>

#include "cpu_kernels.h"

namespace paddle::kernels::cuda {

// The cuBLAS and cuDNN handles and the stream the kernels run on.
class Handles {
 public:
  explicit Handles(int device = 0);
  ~Handles();
  Handles(const Handles&) = delete;
  Handles& operator=(const Handles&) = delete;
  void synchronize();

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// Number of CUDA devices; 0 without a driver or device.
int device_count();

void gemm(Handles& h, bool transpose_a, bool transpose_b, int m, int n, int k, const float* a, const float* b, float* c,
          bool accumulate);
void add_bias_rows(Handles& h, float* y, const float* bias, int m, int n);
void bias_grad_rows(Handles& h, const float* dy, float* db, int m, int n);

void relu_forward(Handles& h, const float* x, float* y, size_t n);
void relu_backward(Handles& h, const float* y, const float* dy, float* dx, size_t n);

// Convolution of x [batch, C, H, W] with w [out, C, k, k] (cuDNN), and its two gradients
// (accumulated into dw; dx overwritten). Bias is separate: add_channel_bias / channel_bias_grad.
void conv2d_forward(Handles& h, const cpu::ConvShape& s, int batch, int out_channels, const float* x, const float* w,
                    float* y);
void conv2d_backward_data(Handles& h, const cpu::ConvShape& s, int batch, int out_channels, const float* w,
                          const float* dy, float* dx);
void conv2d_backward_filter(Handles& h, const cpu::ConvShape& s, int batch, int out_channels, const float* x,
                            const float* dy, float* dw);
void add_channel_bias(Handles& h, float* y, const float* bias, int batch, int channels, int plane);
void channel_bias_grad(Handles& h, const float* dy, float* db, int batch, int channels, int plane);

void max_pool_forward(Handles& h, const float* x, int planes, int height, int width, int kernel, int stride,
                      int padding, float* y, int32_t* argmax);
void max_pool_backward(Handles& h, const float* dy, const int32_t* argmax, int planes, int in_size, int out_size,
                       float* dx);
void avg_pool_forward(Handles& h, const float* x, int planes, int height, int width, int kernel, int stride, float* y);
void avg_pool_backward(Handles& h, const float* dy, int planes, int height, int width, int kernel, int stride,
                       float* dx);

// Paddle's momentum update with L2 decay: v = mu*v + (g + decay*w); w -= lr*v.
void momentum_update(Handles& h, float* w, const float* g, float* v, size_t n, float lr, float mu, float decay);

}  // namespace paddle::kernels::cuda
