#include "runtime/data/dataset.h"

#include <algorithm>

namespace paddle::runtime {

namespace {

void resample(const float* in, const std::vector<int64_t>& from, const std::vector<int64_t>& to, float* out) {
  const int64_t c_in = from[0], h_in = from[1], w_in = from[2];
  const int64_t c_out = to[0], h_out = to[1], w_out = to[2];
  for (int64_t c = 0; c < c_out; ++c)
    for (int64_t y = 0; y < h_out; ++y)
      for (int64_t x = 0; x < w_out; ++x)
        out[(c * h_out + y) * w_out + x] = in[((c % c_in) * h_in + y * h_in / h_out) * w_in + x * w_in / w_out];
}

}  // namespace

Batch Dataset::gather(const std::vector<size_t>& indices) const {
  Batch b;
  const auto& out_shape = batch_sample_shape();
  std::vector<int64_t> shape{static_cast<int64_t>(indices.size())};
  shape.insert(shape.end(), out_shape.begin(), out_shape.end());
  b.inputs = Tensor(shape);
  const size_t per = static_cast<size_t>(Tensor::count(sample_shape));
  const size_t out_per = static_cast<size_t>(Tensor::count(out_shape));
  for (size_t i = 0; i < indices.size(); ++i) {
    const auto source = features.begin() + static_cast<std::ptrdiff_t>(indices[i] * per);
    if (output_shape.empty())
      std::copy_n(source, per, b.inputs.ptr() + i * per);
    else
      resample(&*source, sample_shape, output_shape, b.inputs.ptr() + i * out_per);
    if (!labels.empty()) b.labels.push_back(labels[indices[i]]);
    if (!targets.empty()) b.targets.push_back(targets[indices[i]]);
  }
  return b;
}

void Dataset::truncate(size_t count) {
  if (count == 0 || count >= size()) return;
  features.resize(count * static_cast<size_t>(Tensor::count(sample_shape)));
  if (!labels.empty()) labels.resize(count);
  if (!targets.empty()) targets.resize(count);
}

}  // namespace paddle::runtime
