#include "runtime/distributed/layer_tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <unordered_set>

namespace paddle::runtime {
namespace {

size_t row_width(const Parameter& table) { return static_cast<size_t>(table.value.dim(1)); }

}  // namespace

LayerTables::LayerTables(Layer& layer, std::vector<EmbeddingInput> embeddings) : embeddings_(std::move(embeddings)) {
  const std::vector<Parameter*> all = layer.parameters();
  for (const EmbeddingInput& e : embeddings_) {
    auto it = std::find_if(all.begin(), all.end(), [&](const Parameter* p) { return p->name == e.table; });
    if (it == all.end()) throw std::invalid_argument(fmt::format("LayerTables: the layer has no parameter {}", e.table));
    if ((*it)->value.shape.size() != 2)
      throw std::invalid_argument(fmt::format("LayerTables: {} is not a [vocabulary, dim] table", e.table));
    tables_.push_back(*it);
  }
  for (Parameter* p : all)
    if (std::find(tables_.begin(), tables_.end(), p) == tables_.end()) {
      dense_.push_back(p);
      dense_size_ += static_cast<size_t>(p->value.numel());
    }
}

ps::TableSpecs layer_table_specs(const ModelTableShapes& shapes, uint64_t seed, common::OptimizerKind update_rule,
                                 float learning_rate) {
  ps::TableSpecs specs;
  specs.dense.push_back({"dense", shapes.dense});
  for (size_t t = 0; t < shapes.sparse.size(); ++t) specs.sparse.push_back({shapes.sparse[t].table, shapes.sparse[t].dim, seed + t});
  specs.update_rule = update_rule;
  specs.learning_rate = learning_rate;
  return specs;
}

ModelTableShapes LayerTables::shapes() const {
  ModelTableShapes shapes;
  shapes.dense = dense_size_;
  for (size_t t = 0; t < tables_.size(); ++t) shapes.sparse.push_back({embeddings_[t].table, row_width(*tables_[t])});
  return shapes;
}

std::vector<float> LayerTables::dense_values() const {
  std::vector<float> values;
  values.reserve(dense_size_);
  for (const Parameter* p : dense_) values.insert(values.end(), p->value.values().begin(), p->value.values().end());
  return values;
}

void LayerTables::set_dense_values(const std::vector<float>& values) {
  if (values.size() != dense_size_)
    throw std::invalid_argument(fmt::format("LayerTables: {} dense values for {} parameters", values.size(), dense_size_));
  auto from = values.begin();
  for (Parameter* p : dense_) {
    std::copy_n(from, p->value.numel(), p->value.values().begin());
    from += p->value.numel();
  }
}

std::vector<std::vector<uint64_t>> LayerTables::keys(const Tensor& inputs) const {
  const int64_t rows = inputs.dim(0), width = inputs.dim(1);
  const std::span<const float> x = inputs.values();
  std::vector<std::vector<uint64_t>> keys;
  for (const EmbeddingInput& e : embeddings_) {
    std::vector<uint64_t> distinct;
    std::unordered_set<uint64_t> seen;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t c = e.first_column; c < e.first_column + e.columns; ++c) {
        const auto id = static_cast<uint64_t>(x[static_cast<size_t>(i * width + c)]);
        if ((id != 0 || !e.zero_is_padding) && seen.insert(id).second) distinct.push_back(id);
      }
    keys.push_back(std::move(distinct));
  }
  return keys;
}

void LayerTables::set_values(const PsValues& values) {
  set_dense_values(values.dense.at(0));
  for (size_t t = 0; t < tables_.size(); ++t) {
    const size_t dim = row_width(*tables_[t]), vocabulary = static_cast<size_t>(tables_[t]->value.dim(0));
    float* table = tables_[t]->value.ptr();
    for (size_t i = 0; i < values.keys[t].size(); ++i) {
      const uint64_t id = values.keys[t][i];
      if (id >= vocabulary)
        throw std::out_of_range(fmt::format("{}: id {} outside the vocabulary of {}", embeddings_[t].table, id, vocabulary));
      std::copy_n(values.sparse[t].begin() + static_cast<long>(i * dim), dim, table + id * dim);
    }
  }
}

PsValues LayerTables::gradients(std::vector<std::vector<uint64_t>> keys) const {
  PsValues grads;
  grads.dense.emplace_back();
  grads.dense[0].reserve(dense_size_);
  for (const Parameter* p : dense_) grads.dense[0].insert(grads.dense[0].end(), p->grad.values().begin(), p->grad.values().end());
  for (size_t t = 0; t < tables_.size(); ++t) {
    const size_t dim = row_width(*tables_[t]);
    const float* table = tables_[t]->grad.ptr();
    std::vector<float> rows;
    rows.reserve(keys[t].size() * dim);
    for (uint64_t id : keys[t]) rows.insert(rows.end(), table + id * dim, table + (id + 1) * dim);
    grads.sparse.push_back(std::move(rows));
  }
  grads.keys = std::move(keys);
  return grads;
}

}  // namespace paddle::runtime
