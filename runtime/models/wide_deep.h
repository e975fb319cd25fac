#pragma once
// WideDeep: the wide & deep CTR model. Wide: the sum of one learned weight per sparse key (a
// sparse linear model). Deep: the 26 slots' embeddings concatenated with the 13 dense features,
// through fully connected layers (512-256-128-32 by default, ReLU) to one logit. The prediction
// is sigmoid(wide + deep) and the loss the log loss. Embedding rows and wide weights live in
// sparse tables outside the model; the deep layers' parameters form one dense vector.

#include <cstdint>
#include <random>
#include <vector>

#include "runtime/data/criteo.h"
#include "runtime/nn/sequential.h"

namespace paddle::runtime {

class WideDeep {
 public:
  WideDeep(size_t embedding_dim, const std::vector<int64_t>& hidden, std::mt19937& rng);

  // Runs the deep layers' kernels on `execution` (oneDNN's matrix products where it has them)
  // from now on; it must outlive the model's use.
  void place(Execution& execution) { deep_.place(execution); }
  size_t embedding_dim() const { return dim_; }
  size_t dense_size();
  // The deep layers' parameter count for these settings, without building them: what a server's
  // dense table holds.
  static size_t dense_size(size_t embedding_dim, const std::vector<int64_t>& hidden);
  std::vector<float> dense_values();
  void set_dense_values(const std::vector<float>& values);
  std::vector<float> dense_grads();

  struct Result {
    double loss = 0;                   // mean log loss
    std::vector<float> probabilities;  // batch
    std::vector<float> d_embedding;    // batch x 26 x dim
    std::vector<float> d_wide;         // batch x 26
  };
  // embedding: batch x 26 x dim rows; wide: batch x 26 weights. With `train`, also the
  // gradients (dense ones into the layers, zeroed first).
  Result run(const float* dense, const std::vector<float>& embedding, const std::vector<float>& wide,
             const float* labels, size_t batch, bool train);

 private:
  size_t dim_;
  Sequential deep_;
};

}  // namespace paddle::runtime
