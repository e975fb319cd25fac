#pragma once
// Dataset: samples held in memory (features of one fixed shape, plus a class label or a
// regression target), and Batch, what a loader hands the trainer.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/error.h"
#include "runtime/core/tensor.h"

namespace paddle::runtime {

struct Batch {
  Tensor inputs;                // [n, sample shape...]
  std::vector<int64_t> labels;  // classification
  std::vector<float> targets;   // regression
  size_t size() const { return static_cast<size_t>(inputs.shape.empty() ? 0 : inputs.shape[0]); }
};

class Dataset {
 public:
  std::vector<int64_t> sample_shape;
  std::vector<float> features;  // size() * sample numel
  std::vector<int64_t> labels;  // empty for regression
  std::vector<float> targets;   // empty for classification

  // When set ([C,H,W]), gather() resamples each image to it: nearest-neighbour in H and W,
  // channels repeated (so 1-channel 28x28 images can feed a 3x224x224 model).
  std::vector<int64_t> output_shape;

  const std::vector<int64_t>& batch_sample_shape() const { return output_shape.empty() ? sample_shape : output_shape; }
  size_t size() const {
    const int64_t per = Tensor::count(sample_shape);
    return per == 0 ? 0 : features.size() / static_cast<size_t>(per);
  }
  // The samples at `indices`, in that order.
  Batch gather(const std::vector<size_t>& indices) const;
  // The first `count` samples (all when count is 0 or larger than the set).
  void truncate(size_t count);
};

}  // namespace paddle::runtime
