#pragma once
// Gradient checks for layers: backward() against central differences of a probe loss.

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "runtime/nn/layer.h"

namespace paddle::runtime::testing {

inline Tensor random_tensor(std::vector<int64_t> shape, std::mt19937& rng) {
  Tensor t(std::move(shape));
  std::uniform_real_distribution<float> d(-1, 1);
  for (auto& v : t.values()) v = d(rng);
  return t;
}

// Loss = sum(w_i * out_i) with fixed random w: its gradient wrt the output is w.
inline double probe_loss(Layer& layer, const Tensor& x, const Tensor& weights) {
  Tensor out = layer.forward(x, true);
  double sum = 0;
  auto o = out.values();
  auto w = weights.values();
  for (size_t i = 0; i < o.size(); ++i) sum += static_cast<double>(o[i]) * w[i];
  return sum;
}

// Checks backward() against central differences, for the input and every parameter.
inline void check_gradients(Layer& layer, Tensor x, double tolerance = 2e-2) {
  std::mt19937 rng(7);
  Tensor out = layer.forward(x, true);
  Tensor weights = random_tensor(out.shape, rng);
  for (Parameter* p : layer.parameters()) p->grad.zero();
  layer.forward(x, true);
  Tensor dx = layer.backward(weights);
  const float eps = 1e-3f;  // small enough that ReLU kinks are rarely straddled
  auto numeric = [&](float& slot) {
    const float saved = slot;
    slot = saved + eps;
    const double up = probe_loss(layer, x, weights);
    slot = saved - eps;
    const double down = probe_loss(layer, x, weights);
    slot = saved;
    return (up - down) / (2 * eps);
  };
  auto xs = x.values();
  for (size_t i = 0; i < xs.size(); i += std::max<size_t>(1, xs.size() / 23)) {
    const double expected = numeric(xs[i]);
    CHECK(dx.values()[i] == doctest::Approx(expected).epsilon(tolerance).scale(1.0));
  }
  for (Parameter* p : layer.parameters()) {
    const Tensor analytic = p->grad;
    auto values = p->value.values();
    for (size_t i = 0; i < values.size(); i += std::max<size_t>(1, values.size() / 17)) {
      const double expected = numeric(values[i]);
      INFO(p->name << "[" << i << "]");
      CHECK(analytic.values()[i] == doctest::Approx(expected).epsilon(tolerance).scale(1.0));
    }
  }
}

}  // namespace paddle::runtime::testing
