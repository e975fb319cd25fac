#pragma once
// LayerTables: a layer's parameters seen as parameter-server tables, so that a model written
// for one process trains on servers unchanged. Its embedding tables become sparse tables keyed
// by id; every other parameter goes, in the layer's order, into one dense vector (dense table 0).
//
// Per batch, the rows the batch's ids need are written into the embedding tables in place, and
// afterwards their gradients are read out of the same rows: the layer runs as it always does,
// and only the rows of the batch travel. Host parameters only.

#include <cstdint>
#include <string>
#include <vector>

#include "ps/table_spec.h"
#include "runtime/models/models.h"
#include "runtime/distributed/ps_step.h"
#include "runtime/nn/embedding.h"

namespace paddle::runtime {

// The tables of a model of `shapes`: dense table "dense" and one sparse table per embedding
// (sparse table id = its index), whose rows the servers initialize from seed + id.
ps::TableSpecs layer_table_specs(const ModelTableShapes& shapes, uint64_t seed, common::OptimizerKind update_rule,
                                 float learning_rate);

class LayerTables {
 public:
  // Throws std::invalid_argument naming an embedding the layer does not have.
  LayerTables(Layer& layer, std::vector<EmbeddingInput> embeddings);

  // What the layer's tables hold, as model_table_shapes (models.h) counts them unbuilt.
  ModelTableShapes shapes() const;

  std::vector<float> dense_values() const;
  void set_dense_values(const std::vector<float>& values);

  // The distinct ids of each embedding in `inputs` (host [N,F]), in order of appearance.
  std::vector<std::vector<uint64_t>> keys(const Tensor& inputs) const;
  // Writes the dense vector and the rows of `values` (PsStep::fetch's answer) into the layer.
  void set_values(const PsValues& values);
  // The layer's gradients for `keys` after backward: the dense vector and each key's row.
  PsValues gradients(std::vector<std::vector<uint64_t>> keys) const;

 private:
  std::vector<EmbeddingInput> embeddings_;
  std::vector<Parameter*> tables_;  // by sparse table id
  std::vector<Parameter*> dense_;
  size_t dense_size_ = 0;
};

}  // namespace paddle::runtime
