#pragma once
// CosineSimilarity: y_i = scale * cos(a_i, b_i) for the rows of two [N,D] tensors, giving [N,1]
// (the recommender's rating head: scale 5 maps the cosine onto the rating range; kernels/cosine.h).
// Not a Layer, as it takes two inputs; backward() returns the gradients of both. It runs where
// place() put it, like a layer, and takes its inputs on that device.

#include <utility>

#include "runtime/core/execution.h"
#include "runtime/core/tensor.h"

namespace paddle::runtime {

class CosineSimilarity {
 public:
  explicit CosineSimilarity(float scale = 1.0f) : scale_(scale) {}
  // `execution` must outlive the use.
  void place(Execution& execution) { execution_ = &execution; }
  // Throws std::invalid_argument for inputs that are not the same [N,D] or not on its device.
  Tensor forward(const Tensor& a, const Tensor& b);
  std::pair<Tensor, Tensor> backward(const Tensor& dy);

 private:
  Device device() const;
  const kernels::Context& context() const;

  float scale_;
  Execution* execution_ = nullptr;
  Tensor a_, b_;
  Tensor saved_;  // [N,3]: kernels/cosine.h
};

}  // namespace paddle::runtime
