#include "kernels/cpu_kernels.h"

#include <Eigen/Core>
#include <algorithm>
#include <limits>

namespace paddle::kernels::cpu {
namespace {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixMap = Eigen::Map<Matrix>;
using ConstMatrixMap = Eigen::Map<const Matrix>;

int pooled(int size, int kernel, int stride) { return (size - kernel) / stride + 1; }

}  // namespace

void gemm(bool transpose_a, bool transpose_b, int m, int n, int k, const float* a, const float* b, float* c,
          bool accumulate) {
  MatrixMap out(c, m, n);
  ConstMatrixMap A(a, transpose_a ? k : m, transpose_a ? m : k);
  ConstMatrixMap B(b, transpose_b ? n : k, transpose_b ? k : n);
  if (!accumulate) out.setZero();
  if (!transpose_a && !transpose_b) out.noalias() += A * B;
  else if (transpose_a && !transpose_b) out.noalias() += A.transpose() * B;
  else if (!transpose_a && transpose_b) out.noalias() += A * B.transpose();
  else out.noalias() += A.transpose() * B.transpose();
}

void add_bias_rows(float* y, const float* bias, int m, int n) {
  MatrixMap Y(y, m, n);
  Eigen::Map<const Eigen::RowVectorXf> b(bias, n);
  Y.rowwise() += b;
}

void bias_grad_rows(const float* dy, float* db, int m, int n) {
  ConstMatrixMap DY(dy, m, n);
  Eigen::Map<Eigen::RowVectorXf> b(db, n);
  b += DY.colwise().sum();
}

void im2col(const float* image, const ConvShape& s, float* columns) {
  const int ho = s.out_height(), wo = s.out_width();
  for (int c = 0; c < s.channels; ++c)
    for (int ki = 0; ki < s.kernel; ++ki)
      for (int kj = 0; kj < s.kernel; ++kj) {
        float* row = columns + ((c * s.kernel + ki) * s.kernel + kj) * ho * wo;
        for (int oy = 0; oy < ho; ++oy) {
          const int iy = oy * s.stride - s.padding + ki;
          for (int ox = 0; ox < wo; ++ox) {
            const int ix = ox * s.stride - s.padding + kj;
            row[oy * wo + ox] = (iy >= 0 && iy < s.height && ix >= 0 && ix < s.width)
                                    ? image[(c * s.height + iy) * s.width + ix]
                                    : 0.0f;
          }
        }
      }
}

void col2im(const float* columns, const ConvShape& s, float* image) {
  const int ho = s.out_height(), wo = s.out_width();
  for (int c = 0; c < s.channels; ++c)
    for (int ki = 0; ki < s.kernel; ++ki)
      for (int kj = 0; kj < s.kernel; ++kj) {
        const float* row = columns + ((c * s.kernel + ki) * s.kernel + kj) * ho * wo;
        for (int oy = 0; oy < ho; ++oy) {
          const int iy = oy * s.stride - s.padding + ki;
          if (iy < 0 || iy >= s.height) continue;
          for (int ox = 0; ox < wo; ++ox) {
            const int ix = ox * s.stride - s.padding + kj;
            if (ix >= 0 && ix < s.width) image[(c * s.height + iy) * s.width + ix] += row[oy * wo + ox];
          }
        }
      }
}

void max_pool_forward(const float* x, int planes, int height, int width, int kernel, int stride, int padding, float* y,
                      int32_t* argmax) {
  const int ho = pooled(height + 2 * padding, kernel, stride), wo = pooled(width + 2 * padding, kernel, stride);
  for (int p = 0; p < planes; ++p) {
    const float* plane = x + static_cast<size_t>(p) * height * width;
    for (int oy = 0; oy < ho; ++oy)
      for (int ox = 0; ox < wo; ++ox) {
        float best = -std::numeric_limits<float>::infinity();
        int best_index = 0;
        for (int ki = 0; ki < kernel; ++ki) {
          const int iy = oy * stride - padding + ki;
          if (iy < 0 || iy >= height) continue;
          for (int kj = 0; kj < kernel; ++kj) {
            const int ix = ox * stride - padding + kj;
            if (ix < 0 || ix >= width) continue;
            const int index = iy * width + ix;
            if (plane[index] > best) {
              best = plane[index];
              best_index = index;
            }
          }
        }
        const size_t out = (static_cast<size_t>(p) * ho + oy) * wo + ox;
        y[out] = best;
        argmax[out] = best_index;
      }
  }
}

void max_pool_backward(const float* dy, const int32_t* argmax, int planes, int in_size, int out_size, float* dx) {
  for (int p = 0; p < planes; ++p) {
    float* plane = dx + static_cast<size_t>(p) * in_size;
    const size_t base = static_cast<size_t>(p) * out_size;
    for (int o = 0; o < out_size; ++o) plane[argmax[base + o]] += dy[base + o];
  }
}

void avg_pool_forward(const float* x, int planes, int height, int width, int kernel, int stride, float* y) {
  const int ho = pooled(height, kernel, stride), wo = pooled(width, kernel, stride);
  const float scale = 1.0f / static_cast<float>(kernel * kernel);
  for (int p = 0; p < planes; ++p) {
    const float* plane = x + static_cast<size_t>(p) * height * width;
    for (int oy = 0; oy < ho; ++oy)
      for (int ox = 0; ox < wo; ++ox) {
        float sum = 0;
        for (int ki = 0; ki < kernel; ++ki)
          for (int kj = 0; kj < kernel; ++kj) sum += plane[(oy * stride + ki) * width + ox * stride + kj];
        y[(static_cast<size_t>(p) * ho + oy) * wo + ox] = sum * scale;
      }
  }
}

void avg_pool_backward(const float* dy, int planes, int height, int width, int kernel, int stride, float* dx) {
  const int ho = pooled(height, kernel, stride), wo = pooled(width, kernel, stride);
  const float scale = 1.0f / static_cast<float>(kernel * kernel);
  for (int p = 0; p < planes; ++p) {
    float* plane = dx + static_cast<size_t>(p) * height * width;
    for (int oy = 0; oy < ho; ++oy)
      for (int ox = 0; ox < wo; ++ox) {
        const float g = dy[(static_cast<size_t>(p) * ho + oy) * wo + ox] * scale;
        for (int ki = 0; ki < kernel; ++ki)
          for (int kj = 0; kj < kernel; ++kj) plane[(oy * stride + ki) * width + ox * stride + kj] += g;
      }
  }
}

}  // namespace paddle::kernels::cpu
