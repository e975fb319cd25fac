#pragma once
// CUDA twins of cpu_kernels.h: the same operations and layouts on device memory, with cuBLAS
// for GEMM and cuDNN for convolution. Every function runs on the handles' stream; errors throw
// std::runtime_error naming the call.

#include <cstddef>
#include <cstdint>
#include <memory>

#include "kernels/cpu_kernels.h"

namespace paddle::kernels::cuda {

// The cuBLAS and cuDNN handles and the stream the kernels run on. With tf32, GEMMs and
// convolutions may use TF32 tensor cores (10-bit mantissa products, FP32 accumulation);
// without, they are strict FP32 like the CPU kernels.
class Handles {
 public:
  explicit Handles(int device = 0, bool tf32 = false);
  ~Handles();
  Handles(const Handles&) = delete;
  Handles& operator=(const Handles&) = delete;
  void synchronize();         // this stream's work
  void synchronize_device();  // all work on the device, copies on the default stream included

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

// Element-wise: y = a * b; y = max(0, a + b) (a residual block's sum); y += x.
void multiply(Handles& h, const float* a, const float* b, float* y, size_t n);
void add_relu(Handles& h, const float* a, const float* b, float* y, size_t n);
void add_in_place(Handles& h, float* y, const float* x, size_t n);
// Device-to-device copy of n floats, queued on the handles' stream.
void copy(Handles& h, float* dst, const float* src, size_t n);

// Batch normalization per channel over N,H,W (cuDNN, spatial mode). Training normalizes with the
// batch statistics, saves mean and 1/std for backward and moves the running statistics by
// running = momentum*running + (1-momentum)*batch (cuDNN keeps the unbiased batch variance, as
// Paddle's GPU kernel does). Backward overwrites dx and accumulates dscale and dshift.
struct BatchNormShape {
  int batch, channels, height, width;
};
void batch_norm_forward_training(Handles& h, const BatchNormShape& s, const float* x, float* y, const float* scale,
                                 const float* shift, float* running_mean, float* running_var, float* saved_mean,
                                 float* saved_inv_std, float momentum, float epsilon);
void batch_norm_forward_inference(Handles& h, const BatchNormShape& s, const float* x, float* y, const float* scale,
                                  const float* shift, const float* running_mean, const float* running_var,
                                  float epsilon);
void batch_norm_backward(Handles& h, const BatchNormShape& s, const float* x, const float* dy, const float* scale,
                         const float* saved_mean, const float* saved_inv_std, float* dx, float* dscale, float* dshift,
                         float epsilon);

// Embedding rows: y[i] = table[ids[i]] for `count` ids of a [vocabulary, dim] table. Returns
// the first id outside the vocabulary, or -1 (it waits for the device to find out).
int64_t embedding_forward(Handles& h, const float* table, const int64_t* ids, size_t count, int dim,
                          int64_t vocabulary, float* y);
// dtable[ids[i]] += dy[i], atomically (ids repeat).
void embedding_backward(Handles& h, const int64_t* ids, size_t count, int dim, const float* dy, float* dtable);

// Update rules, each with L2 decay added to the gradient, matching the runtime's CPU optimizers.
// Paddle's momentum: v = mu*v + (g + decay*w); w -= lr*v.
void momentum_update(Handles& h, float* w, const float* g, float* v, size_t n, float lr, float mu, float decay);
void sgd_update(Handles& h, float* w, const float* g, size_t n, float lr, float decay);
// m, v moments; step_size already holds lr * sqrt(1 - beta2^t) / (1 - beta1^t).
void adam_update(Handles& h, float* w, const float* g, float* m, float* v, size_t n, float step_size, float beta1,
                 float beta2, float epsilon, float decay);
void adagrad_update(Handles& h, float* w, const float* g, float* accumulator, size_t n, float lr, float epsilon,
                    float decay);

// A point in the handles' stream that another thread can wait for (a bucket of gradients
// complete, say).
class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(Handles& h);
  void synchronize();

 private:
  void* event_ = nullptr;
};

}  // namespace paddle::kernels::cuda
