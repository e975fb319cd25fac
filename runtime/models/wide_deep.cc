#include "runtime/models/wide_deep.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "runtime/nn/layers.h"

namespace paddle::runtime {

WideDeep::WideDeep(size_t embedding_dim, const std::vector<int64_t>& hidden, std::mt19937& rng) : dim_(embedding_dim) {
  int64_t in = static_cast<int64_t>(kCriteoSlots * embedding_dim + kCriteoDense);
  for (size_t i = 0; i < hidden.size(); ++i) {
    deep_.add(std::make_unique<Linear>(in, hidden[i], rng, "fc" + std::to_string(i))).add(std::make_unique<ReLU>());
    in = hidden[i];
  }
  deep_.add(std::make_unique<Linear>(in, 1, rng, "fc_out"));
}

size_t WideDeep::dense_size() {
  size_t n = 0;
  for (Parameter* p : deep_.parameters()) n += static_cast<size_t>(p->value.numel());
  return n;
}

size_t WideDeep::dense_size(size_t embedding_dim, const std::vector<int64_t>& hidden) {
  size_t n = 0, in = kCriteoSlots * embedding_dim + kCriteoDense;
  for (int64_t width : hidden) {
    n += in * static_cast<size_t>(width) + static_cast<size_t>(width);  // weights and biases
    in = static_cast<size_t>(width);
  }
  return n + in + 1;  // the output layer
}

std::vector<float> WideDeep::dense_values() {
  std::vector<float> all;
  for (Parameter* p : deep_.parameters()) {
    auto v = p->value.values();
    all.insert(all.end(), v.begin(), v.end());
  }
  return all;
}

void WideDeep::set_dense_values(const std::vector<float>& values) {
  if (values.size() != dense_size()) throw std::invalid_argument("wide&deep: wrong number of dense values");
  size_t at = 0;
  for (Parameter* p : deep_.parameters()) {
    const size_t n = static_cast<size_t>(p->value.numel());
    std::copy_n(values.begin() + static_cast<long>(at), n, p->value.ptr());
    at += n;
  }
}

std::vector<float> WideDeep::dense_grads() {
  std::vector<float> all;
  for (Parameter* p : deep_.parameters()) {
    auto g = p->grad.values();
    all.insert(all.end(), g.begin(), g.end());
  }
  return all;
}

WideDeep::Result WideDeep::run(const float* dense, const std::vector<float>& embedding, const std::vector<float>& wide,
                               const float* labels, size_t batch, bool train) {
  const size_t emb_width = kCriteoSlots * dim_, width = emb_width + kCriteoDense;
  Tensor x({static_cast<int64_t>(batch), static_cast<int64_t>(width)});
  for (size_t b = 0; b < batch; ++b) {
    std::copy_n(embedding.begin() + static_cast<long>(b * emb_width), emb_width, x.ptr() + b * width);
    std::copy_n(dense + b * kCriteoDense, kCriteoDense, x.ptr() + b * width + emb_width);
  }
  Tensor deep_out = deep_.forward(x, train);
  Result r;
  r.probabilities.resize(batch);
  Tensor dz({static_cast<int64_t>(batch), 1});
  double total = 0;
  for (size_t b = 0; b < batch; ++b) {
    double z = deep_out.values()[b];
    for (size_t s = 0; s < static_cast<size_t>(kCriteoSlots); ++s) z += wide[b * kCriteoSlots + s];
    const double p = 1.0 / (1.0 + std::exp(-z));
    r.probabilities[b] = static_cast<float>(p);
    const double clipped = std::clamp(p, 1e-7, 1 - 1e-7);
    total += labels[b] > 0.5f ? -std::log(clipped) : -std::log(1 - clipped);
    dz.values()[b] = static_cast<float>((p - labels[b]) / static_cast<double>(batch));
  }
  r.loss = total / static_cast<double>(std::max<size_t>(1, batch));
  if (!train) return r;
  deep_.zero_grad();
  Tensor dx = deep_.backward(dz);
  r.d_embedding.resize(batch * emb_width);
  r.d_wide.resize(batch * kCriteoSlots);
  for (size_t b = 0; b < batch; ++b) {
    std::copy_n(dx.ptr() + b * width, emb_width, r.d_embedding.begin() + static_cast<long>(b * emb_width));
    for (size_t s = 0; s < static_cast<size_t>(kCriteoSlots); ++s) r.d_wide[b * kCriteoSlots + s] = dz.values()[b];
  }
  return r;
}

}  // namespace paddle::runtime
