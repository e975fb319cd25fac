#pragma once
// Element-wise math written once: small functors that the CPU loops, the CUDA kernels and the
// parameter server's update rules all call, so the expressions cannot drift apart. Each is plain
// float arithmetic in a fixed order; changing an expression here changes every backend at once.
// Results agree to rounding, not bit for bit: nvcc contracts a*b+c into fused multiply-adds,
// which the CPU build does not.

#include <math.h>

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define PADDLE_KERNELS_HD __host__ __device__
#else
#define PADDLE_KERNELS_HD
#endif

namespace paddle::kernels {

struct Relu {
  PADDLE_KERNELS_HD float operator()(float x) const { return x > 0 ? x : 0; }
};

// The gradient through a ReLU, from its output y.
struct ReluGrad {
  PADDLE_KERNELS_HD float operator()(float y, float dy) const { return y > 0 ? dy : 0; }
};

struct Tanh {
  PADDLE_KERNELS_HD float operator()(float x) const { return tanhf(x); }
};

// The gradient through a tanh, from its output y: dy * (1 - y^2).
struct TanhGrad {
  PADDLE_KERNELS_HD float operator()(float y, float dy) const { return dy * (1.0f - y * y); }
};

// A residual block's sum: max(0, a + b).
struct AddRelu {
  PADDLE_KERNELS_HD float operator()(float a, float b) const {
    const float sum = a + b;
    return sum > 0 ? sum : 0.0f;
  }
};

// L2 weight decay folded into the gradient: g + decay * w.
PADDLE_KERNELS_HD inline float decayed(float g, float w, float decay) { return g + decay * w; }

// The update rules take the gradient as it is (decayed already, if at all).
struct SgdStep {
  float lr;
  PADDLE_KERNELS_HD void operator()(float& w, float g) const { w -= lr * g; }
};

// Paddle's momentum: v = mu * v + g; w -= lr * v.
struct MomentumStep {
  float lr, mu;
  PADDLE_KERNELS_HD void operator()(float& w, float g, float& v) const {
    v = mu * v + g;
    w -= lr * v;
  }
};

// Adam's bias-corrected step size for step t (1-based), lr * sqrt(1 - beta2^t) / (1 - beta1^t),
// computed once per step on the host, in double.
inline float adam_step_size(float lr, float beta1, float beta2, int64_t t) {
  const double correction1 = 1.0 - std::pow(beta1, static_cast<double>(t));
  const double correction2 = 1.0 - std::pow(beta2, static_cast<double>(t));
  return static_cast<float>(lr * std::sqrt(correction2) / correction1);
}

// step_size is adam_step_size(...).
struct AdamStep {
  float step_size, beta1, beta2, epsilon;
  PADDLE_KERNELS_HD void operator()(float& w, float g, float& m, float& v) const {
    m = beta1 * m + (1 - beta1) * g;
    v = beta2 * v + (1 - beta2) * g * g;
    w -= step_size * m / (sqrtf(v) + epsilon);
  }
};

inline constexpr float kAdagradEpsilon = 1e-6f;

struct AdagradStep {
  float lr, epsilon;
  PADDLE_KERNELS_HD void operator()(float& w, float g, float& accumulator) const {
    accumulator += g * g;
    w -= lr * g / (sqrtf(accumulator) + epsilon);
  }
};

// The parameter servers' sparse adagrad: the step shrinks by sqrt(initial_g2sum / (initial_g2sum +
// g2sum)), g2sum the sum of the squared gradients before this one. Per value (std adagrad), or
// per row with g2sum the sum of each step's mean square (then each value takes SgdStep{lr * scale}).
PADDLE_KERNELS_HD inline float adagrad_scale(float initial_g2sum, float g2sum) {
  return sqrtf(initial_g2sum / (initial_g2sum + g2sum));
}

struct StdAdagradStep {
  float lr, initial_g2sum;
  PADDLE_KERNELS_HD void operator()(float& w, float g, float& g2sum) const {
    w -= lr * g * adagrad_scale(initial_g2sum, g2sum);
    g2sum += g * g;
  }
};

// The floor under a row's norm in a cosine similarity: it keeps a zero row (an all-padding bag, dead
// tanh units) from dividing by zero, and gives it cosine 0.
inline constexpr double kCosineMinNorm = 1e-8;

// One row's cosine from its sums dot = a.b, aa = a.a and bb = b.b (accumulated in double), with
// the floored norms the gradient needs.
struct CosineRow {
  float norm_a, norm_b, cosine;
};
PADDLE_KERNELS_HD inline CosineRow cosine_row(double dot, double aa, double bb) {
  const double root_a = sqrt(aa), root_b = sqrt(bb);
  const double na = root_a < kCosineMinNorm ? kCosineMinNorm : root_a;
  const double nb = root_b < kCosineMinNorm ? kCosineMinNorm : root_b;
  return {static_cast<float>(na), static_cast<float>(nb), static_cast<float>(dot / (na * nb))};
}

// d cos(a, b) / d a = b / (|a||b|) - cos * a / |a|^2, times g, for one element x of a and its
// partner z of b; the gradient for b is the same call with the roles swapped.
PADDLE_KERNELS_HD inline float cosine_grad(float g, float x, float z, float norm_x, float norm_z, float cosine) {
  return g * (z / (norm_x * norm_z) - cosine * x / (norm_x * norm_x));
}

// The weight of each real id in a bag's mean, 1/count of the row's non-zero ids (0 is padding);
// 0 for a row of padding only.
PADDLE_KERNELS_HD inline float bag_weight(const int64_t* row_ids, int slots) {
  int count = 0;
  for (int s = 0; s < slots; ++s) count += row_ids[s] != 0;
  return count > 0 ? 1.0f / static_cast<float>(count) : 0.0f;
}

// Cell d of a bag's mean: weight times each real id's row, summed slot by slot.
PADDLE_KERNELS_HD inline float bag_mean_cell(const int64_t* row_ids, const float* row_embedded, int slots, int dim,
                                             int d, float weight) {
  float sum = 0;
  for (int s = 0; s < slots; ++s)
    if (row_ids[s] != 0) sum += weight * row_embedded[s * dim + d];
  return sum;
}

// Output extent of a pooling or convolution window sliding over `size` cells.
PADDLE_KERNELS_HD inline int window_count(int size, int kernel, int stride, int padding) {
  return (size + 2 * padding - kernel) / stride + 1;
}

// The largest cell of one max-pooling window of a [height, width] plane (padded cells never
// win), and its index in the plane; -inf and 0 when the window covers only padding.
struct MaxWindow {
  float value;
  int index;
};
PADDLE_KERNELS_HD inline MaxWindow max_window(const float* plane, int height, int width, int kernel, int stride,
                                              int padding, int oy, int ox) {
  MaxWindow best{-INFINITY, 0};
  for (int ki = 0; ki < kernel; ++ki) {
    const int iy = oy * stride - padding + ki;
    if (iy < 0 || iy >= height) continue;
    for (int kj = 0; kj < kernel; ++kj) {
      const int ix = ox * stride - padding + kj;
      if (ix < 0 || ix >= width) continue;
      const int index = iy * width + ix;
      if (plane[index] > best.value) best = {plane[index], index};
    }
  }
  return best;
}

// The sum of one unpadded average-pooling window, row by row.
PADDLE_KERNELS_HD inline float window_sum(const float* plane, int width, int kernel, int stride, int oy, int ox) {
  float sum = 0;
  for (int ki = 0; ki < kernel; ++ki)
    for (int kj = 0; kj < kernel; ++kj) sum += plane[(oy * stride + ki) * width + ox * stride + kj];
  return sum;
}

}  // namespace paddle::kernels
