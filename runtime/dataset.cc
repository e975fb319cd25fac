#include "dataset.h"

#include <algorithm>

namespace paddle::runtime {

Batch Dataset::gather(const std::vector<size_t>& indices) const {
  Batch b;
  std::vector<int64_t> shape{static_cast<int64_t>(indices.size())};
  shape.insert(shape.end(), sample_shape.begin(), sample_shape.end());
  b.inputs = Tensor(shape);
  const size_t per = static_cast<size_t>(Tensor::count(sample_shape));
  for (size_t i = 0; i < indices.size(); ++i) {
    std::copy_n(features.begin() + static_cast<std::ptrdiff_t>(indices[i] * per), per, b.inputs.data.begin() + static_cast<std::ptrdiff_t>(i * per));
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
