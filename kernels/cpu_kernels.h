#pragma once
// CPU kernels for the runtime's layers, on Eigen. Plain functions over raw row-major float
// buffers, so that layers stay thin and the CUDA twins can share the same signatures.

#include <cstddef>
#include <cstdint>

namespace paddle::kernels::cpu {

// C[m,n] (+)= A[m,k] * B[k,n], with either operand optionally transposed (as stored).
void gemm(bool transpose_a, bool transpose_b, int m, int n, int k, const float* a, const float* b, float* c,
          bool accumulate);

// Adds bias[n] to every row of y[m,n]; and its gradient: db[n] += column sums of dy[m,n].
void add_bias_rows(float* y, const float* bias, int m, int n);
void bias_grad_rows(const float* dy, float* db, int m, int n);

struct ConvShape {
  int channels, height, width;  // input
  int kernel, stride, padding;
  int out_height() const { return (height + 2 * padding - kernel) / stride + 1; }
  int out_width() const { return (width + 2 * padding - kernel) / stride + 1; }
};

// One image [C,H,W] to columns [C*k*k, Ho*Wo], and back (accumulating).
void im2col(const float* image, const ConvShape& s, float* columns);
void col2im(const float* columns, const ConvShape& s, float* image);

// Max pooling of [N*C, H, W] planes with a square window and zero-size padding (padded cells
// never win); argmax records the winning input index of each output for the backward pass.
// Output size: (H + 2*padding - kernel) / stride + 1.
void max_pool_forward(const float* x, int planes, int height, int width, int kernel, int stride, int padding, float* y,
                      int32_t* argmax);
// dx (planes of in_size = H*W) accumulates dy (planes of out_size) at the recorded argmax.
void max_pool_backward(const float* dy, const int32_t* argmax, int planes, int in_size, int out_size, float* dx);

// Average pooling, same layout.
void avg_pool_forward(const float* x, int planes, int height, int width, int kernel, int stride, float* y);
void avg_pool_backward(const float* dy, int planes, int height, int width, int kernel, int stride, float* dx);

}  // namespace paddle::kernels::cpu
