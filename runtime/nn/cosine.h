#pragma once
// CosineSimilarity: y_i = scale * cos(a_i, b_i) for the rows of two [N,D] tensors, giving [N,1]
// (the recommender's rating head: scale 5 maps the cosine onto the rating range). Not a Layer,
// as it takes two inputs; backward() returns the gradients of both. CPU only.

#include <utility>

#include "runtime/core/tensor.h"

namespace paddle::runtime {

class CosineSimilarity {
 public:
  explicit CosineSimilarity(float scale = 1.0f) : scale_(scale) {}
  Tensor forward(const Tensor& a, const Tensor& b);
  std::pair<Tensor, Tensor> backward(const Tensor& dy);

 private:
  float scale_;
  Tensor a_, b_;
  std::vector<float> norm_a_, norm_b_, cosine_;
};

}  // namespace paddle::runtime
