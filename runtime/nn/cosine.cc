#include "runtime/nn/cosine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace paddle::runtime {
namespace {

// Keeps a zero row (all-padding bags, dead tanh units) from dividing by zero.
constexpr double kMinNorm = 1e-8;

}  // namespace

Tensor CosineSimilarity::forward(const Tensor& a, const Tensor& b) {
  if (a.shape.size() != 2 || a.shape != b.shape)
    throw std::invalid_argument(fmt::format("CosineSimilarity: inputs {} and {} must be the same [N,D]",
                                            a.shape_string(), b.shape_string()));
  a_ = a;
  b_ = b;
  const int64_t n = a.dim(0), d = a.dim(1);
  norm_a_.assign(static_cast<size_t>(n), 0.0f);
  norm_b_.assign(static_cast<size_t>(n), 0.0f);
  cosine_.assign(static_cast<size_t>(n), 0.0f);
  Tensor y({n, 1});
  for (int64_t i = 0; i < n; ++i) {
    const float* x = a.ptr() + i * d;
    const float* z = b.ptr() + i * d;
    double dot = 0, xx = 0, zz = 0;
    for (int64_t j = 0; j < d; ++j) {
      dot += static_cast<double>(x[j]) * z[j];
      xx += static_cast<double>(x[j]) * x[j];
      zz += static_cast<double>(z[j]) * z[j];
    }
    const double na = std::max(std::sqrt(xx), kMinNorm), nb = std::max(std::sqrt(zz), kMinNorm);
    norm_a_[i] = static_cast<float>(na);
    norm_b_[i] = static_cast<float>(nb);
    cosine_[i] = static_cast<float>(dot / (na * nb));
    y.ptr()[i] = scale_ * cosine_[i];
  }
  return y;
}

// d cos / d a = b / (|a||b|) - cos * a / |a|^2, and symmetrically for b.
std::pair<Tensor, Tensor> CosineSimilarity::backward(const Tensor& dy) {
  const int64_t n = a_.dim(0), d = a_.dim(1);
  if (dy.numel() != n)
    throw std::invalid_argument(fmt::format("CosineSimilarity: gradient {} for {} rows", dy.shape_string(), n));
  Tensor da(a_.shape), db(b_.shape);
  for (int64_t i = 0; i < n; ++i) {
    const float g = dy.ptr()[i] * scale_;
    const float na = norm_a_[i], nb = norm_b_[i], c = cosine_[i];
    const float* x = a_.ptr() + i * d;
    const float* z = b_.ptr() + i * d;
    float* gx = da.ptr() + i * d;
    float* gz = db.ptr() + i * d;
    for (int64_t j = 0; j < d; ++j) {
      gx[j] = g * (z[j] / (na * nb) - c * x[j] / (na * na));
      gz[j] = g * (x[j] / (na * nb) - c * z[j] / (nb * nb));
    }
  }
  return {da, db};
}

}  // namespace paddle::runtime
