#pragma once
// Embedding: ids [N,slots] (int64, or float32 holding whole numbers) -> [N,slots*dim] rows of a
// trained table (kernels/embedding.h).

#include <cstdint>
#include <random>
#include <string>

#include "runtime/nn/layer.h"

namespace paddle::runtime {

// Where an embedding table's ids sit in a model's [N,F] input, for training it as a sparse
// table on parameter servers (distributed/layer_tables.h).
struct EmbeddingInput {
  std::string table;  // the embedding parameter's name
  int64_t first_column = 0, columns = 1;
  bool zero_is_padding = false;  // id 0 pads a bag: it is not a key
};

class Embedding : public Layer {
 public:
  Embedding(int64_t vocabulary, int64_t dim, std::mt19937& rng, const std::string& name);
  Tensor forward(const Tensor& ids, bool training) override;
  Tensor backward(const Tensor& dy) override;
  std::vector<Parameter*> parameters() override { return {&table_}; }
  std::string describe() const override;
  // The ids of the last forward as int64, on the layer's device.
  const Tensor& ids() const { return ids_; }

 private:
  int64_t vocabulary_, dim_;
  Parameter table_;  // [vocabulary, dim]
  Tensor ids_;       // int64
};

}  // namespace paddle::runtime
