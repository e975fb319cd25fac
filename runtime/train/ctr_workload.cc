#include "runtime/train/ctr_workload.h"

#include <fmt/format.h>

#include <unordered_map>

#include "common/error.h"
#include "runtime/nn/metrics.h"

namespace paddle::runtime {
namespace {

WideDeep make_model(const TrainConfig& config) {
  std::mt19937 rng(config.seed);
  return WideDeep(static_cast<size_t>(config.model.wide_deep.embedding_dim), config.model.wide_deep.hidden, rng);
}

CtrDataset load(const TrainConfig& config) {
  switch (config.data.kind) {
    case DatasetKind::kCriteo: return load_criteo_raw(config.data.dir, config.data.hash_dim);
    case DatasetKind::kCriteoSlot: return load_criteo_slot(config.data.dir, config.data.hash_dim);
    default:
      throw common::ConfigError(
          fmt::format("dataset {} is not criteo or criteo_slot (model wide_deep)", dataset_name(config.data.kind)));
  }
}

// A batch's distinct keys (one list for both sparse tables) and, per (sample, slot), which of
// them it is.
struct BatchKeys {
  std::vector<uint64_t> keys;
  std::vector<size_t> slot_of;
};

BatchKeys index_keys(const CtrDataset& data, const std::vector<size_t>& samples) {
  BatchKeys r;
  std::unordered_map<uint64_t, size_t> index;
  for (size_t b : samples)
    for (int s = 0; s < kCriteoSlots; ++s) {
      auto [it, added] = index.try_emplace(data.sparse[b * kCriteoSlots + s], r.keys.size());
      if (added) r.keys.push_back(it->first);
      r.slot_of.push_back(it->second);
    }
  return r;
}

// WideDeep's inputs and outputs for a batch, laid out per (sample, slot) from the distinct keys' rows.
struct BatchInputs {
  std::vector<float> dense, labels, embedding, wide;
};

BatchInputs gather(const CtrDataset& data, const std::vector<size_t>& samples, const BatchKeys& keys,
                   const PsValues& values, size_t dim) {
  BatchInputs in;
  for (size_t b : samples) {
    in.labels.push_back(data.labels[b]);
    in.dense.insert(in.dense.end(), data.dense.begin() + static_cast<long>(b * kCriteoDense),
                    data.dense.begin() + static_cast<long>((b + 1) * kCriteoDense));
  }
  const std::vector<float>& embedding = values.sparse[kEmbeddingTable];
  in.embedding.resize(keys.slot_of.size() * dim);
  in.wide.resize(keys.slot_of.size());
  for (size_t i = 0; i < keys.slot_of.size(); ++i) {
    std::copy_n(embedding.begin() + static_cast<long>(keys.slot_of[i] * dim), dim,
                in.embedding.begin() + static_cast<long>(i * dim));
    in.wide[i] = values.sparse[kWideTable][keys.slot_of[i]];
  }
  return in;
}

}  // namespace

ps::TableSpecs wide_deep_tables(const TrainConfig& config) {
  WideDeep model = make_model(config);
  ps::TableSpecs tables;
  tables.dense.push_back({"deep", model.dense_size()});
  tables.sparse.push_back({"embedding", model.embedding_dim(), config.seed});
  tables.sparse.push_back({"wide", 1, config.seed + 1ULL});
  tables.update_rule = config.ps.server_optimizer;
  tables.learning_rate = config.lr_schedule.base_lr;
  tables.momentum = config.optimizer.momentum;
  tables.weight_decay = config.optimizer.weight_decay;
  return tables;
}

CtrWorkload::CtrWorkload(const TrainConfig& config, Fleet& fleet)
    : PsWorkload(config, fleet),
      train_(load(config)),
      model_(make_model(config)),
      tables_(wide_deep_tables(config)) {
  test_ = train_.split_off(static_cast<size_t>(static_cast<double>(train_.size()) * (1.0 - config.data.test_fraction)));
  if (config.data.train_samples > 0) train_.split_off(config.data.train_samples);
  steps_per_epoch(train_.size());
}

CtrWorkload::~CtrWorkload() = default;

std::string CtrWorkload::describe() const {
  return fmt::format("wide&deep on parameter servers ({}, lr {}): {} dense parameters, embedding dim {}, {} train / {} "
                     "test samples, {} steps per pass",
                     tables_.update_rule, tables_.learning_rate, tables_.dense[kDenseTable].size, model_.embedding_dim(), train_.size(), test_.size(),
                     steps_per_epoch(train_.size()));
}

nlohmann::json CtrWorkload::identity() const {
  return {{"model", model_name(config_.model.kind)}, {"dataset", dataset_name(config_.data.kind)}, {"device", "cpu"}};
}

void CtrWorkload::begin_epoch(int64_t epoch) {
  batches_ = rank_batches(train_.size(), shard_, epoch);
  next_batch_ = 0;
}

std::optional<StepResult> CtrWorkload::train_step(int64_t) {
  if (next_batch_ == batches_.size()) return std::nullopt;
  const std::vector<size_t>& samples = batches_[next_batch_++];
  const size_t dim = model_.embedding_dim();
  const BatchKeys keys = index_keys(train_, samples);
  const PsValues values = fetch({keys.keys, keys.keys});
  model_.set_dense_values(values.dense[kDenseTable]);
  const BatchInputs in = gather(train_, samples, keys, values, dim);
  const auto r = model_.run(in.dense.data(), in.embedding, in.wide, in.labels.data(), samples.size(), true);
  PsValues grads;
  grads.dense.push_back(model_.dense_grads());
  grads.keys = {keys.keys, keys.keys};
  grads.sparse = {std::vector<float>(keys.keys.size() * dim, 0.0f), std::vector<float>(keys.keys.size(), 0.0f)};
  for (size_t i = 0; i < keys.slot_of.size(); ++i) {
    for (size_t d = 0; d < dim; ++d) grads.sparse[kEmbeddingTable][keys.slot_of[i] * dim + d] += r.d_embedding[i * dim + d];
    grads.sparse[kWideTable][keys.slot_of[i]] += r.d_wide[i];
  }
  apply(std::move(grads));
  return StepResult{r.loss, {}};
}

Evaluation CtrWorkload::evaluate() {
  ps::ParameterStore& store = fleet_.parameter_store();
  std::vector<float> scores;
  std::vector<int64_t> labels;
  double loss = 0;
  for (size_t start = 0; start < test_.size(); start += 512) {
    std::vector<size_t> samples;
    for (size_t i = start; i < std::min(test_.size(), start + 512); ++i) samples.push_back(i);
    const BatchKeys keys = index_keys(test_, samples);
    const PsValues values = pull_values(store, tables_.dense.size(), {keys.keys, keys.keys});
    model_.set_dense_values(values.dense[kDenseTable]);
    const BatchInputs in = gather(test_, samples, keys, values, model_.embedding_dim());
    auto r = model_.run(in.dense.data(), in.embedding, in.wide, in.labels.data(), samples.size(), false);
    loss += r.loss * static_cast<double>(samples.size());
    scores.insert(scores.end(), r.probabilities.begin(), r.probabilities.end());
    for (float l : in.labels) labels.push_back(l > 0.5f ? 1 : 0);
  }
  Evaluation e;
  e.auc = auc(scores, labels);
  e.loss = test_.size() ? loss / static_cast<double>(test_.size()) : 0;
  return e;
}

}  // namespace paddle::runtime
