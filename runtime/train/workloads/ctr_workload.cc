#include "runtime/train/workloads/ctr_workload.h"

#include <fmt/format.h>

#include <tuple>

#include "common/error.h"
#include "runtime/data/criteo.h"
#include "runtime/nn/bucketed_auc.h"

namespace paddle::runtime {
namespace {

WideDeep make_model(const TrainConfig& config) {
  std::mt19937 rng(config.seed);
  return WideDeep(static_cast<size_t>(config.model.wide_deep.embedding_dim), config.model.wide_deep.hidden, rng);
}

CtrDataset load(const TrainConfig& config, const std::string& path) {
  switch (config.data.kind) {
    case DatasetKind::kCriteo: return load_criteo_raw(path, config.data.hash_dim);
    case DatasetKind::kCriteoSlot: return load_criteo_slot(path, config.data.hash_dim);
    default:
      throw common::ConfigError(
          fmt::format("dataset {} is not criteo or criteo_slot (model wide_deep)", kDatasetNames.name(config.data.kind)));
  }
}

// A batch's distinct keys (one list for both sparse tables) and, per (sample, slot), which of
// them it is.
struct BatchKeys {
  std::vector<uint64_t> keys;
  std::vector<size_t> slot_of;
};

BatchKeys index_keys(const CtrDataset& data, const std::vector<size_t>& samples, ps::KeyIndex& index) {
  BatchKeys r;
  index.clear();
  r.slot_of.reserve(samples.size() * kCriteoSlots);
  for (size_t b : samples)
    for (int s = 0; s < kCriteoSlots; ++s) r.slot_of.push_back(index.insert(data.sparse[b * kCriteoSlots + s]));
  r.keys = index.keys();
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
  const auto embedding_dim = static_cast<size_t>(config.model.wide_deep.embedding_dim);
  ps::TableSpecs tables;
  tables.dense.push_back({"deep", WideDeep::dense_size(embedding_dim, config.model.wide_deep.hidden)});
  tables.dense.push_back({"auc_counts", BucketedAuc::kVectorSize});
  for (auto [name, dim, seed] : {std::tuple{"embedding", embedding_dim, uint64_t{config.seed}},
                                 std::tuple{"wide", size_t{1}, config.seed + uint64_t{1}}}) {
    ps::SparseTableSpec table;
    table.name = name;
    table.dim = dim;
    table.seed = seed;
    table.accessor = config.ps.sparse.accessor;
    table.ctr = config.ps.sparse.ctr;
    table.admission = config.ps.sparse.admission;
    table.storage.kind = config.ps.sparse.storage;
    tables.sparse.push_back(std::move(table));
  }
  tables.memory_budget_bytes = static_cast<uint64_t>(config.ps.sparse.memory_budget_mb * (1 << 20));
  tables.ssd_dir = config.ps.sparse.ssd_dir;
  tables.batch_keys = config.batch_size * kCriteoSlots;
  tables.update_rule = config.ps.server_optimizer;
  tables.learning_rate = config.lr_schedule.base_lr;
  tables.momentum = config.optimizer.momentum;
  tables.weight_decay = config.optimizer.weight_decay;
  return tables;
}

CtrWorkload::CtrWorkload(const TrainConfig& config, Fleet& fleet)
    : PsWorkload(config, fleet), model_(make_model(config)), tables_(wide_deep_tables(config)) {
  ps::server_storage(tables_, 0);  // a budget the servers refuse is refused here too, before any data is read
  model_.place(fleet.execution());
  if (config.ps.online.enabled()) return;
  train_ = load(config, config.data.dir);
  hold_out_test();
  if (config.data.train_samples > 0) train_.split_off(config.data.train_samples);
  steps_per_epoch(train_.size());
}

void CtrWorkload::use_pass_data(const std::string& path) {
  train_ = load(config_, path);
  hold_out_test();
  steps_per_epoch(train_.size());
}

void CtrWorkload::hold_out_test() {
  test_ = train_.split_off(static_cast<size_t>(static_cast<double>(train_.size()) * (1.0 - config_.data.test_fraction)));
}

ps::TableSpecs CtrWorkload::trained_tables() const {
  ps::TableSpecs trained = tables_;
  trained.dense.resize(kDenseTable + 1);
  return trained;
}

CtrWorkload::~CtrWorkload() = default;

std::string CtrWorkload::describe() const {
  const ps::SparseTableSpec& embedding = tables_.sparse[kEmbeddingTable];
  const std::string rows =
      embedding.accessor == ps::SparseTableSpec::Accessor::kCtr
          ? fmt::format("ctr rows ({} sparse rule, lr {})", common::optimizer_kind_name(embedding.ctr.embed_rule.kind),
                        embedding.ctr.embed_rule.learning_rate)
          : fmt::format("plain rows ({}, lr {})", common::optimizer_kind_name(tables_.update_rule), tables_.learning_rate);
  const std::string data = config_.ps.online.enabled()
                               ? fmt::format("online: {} day(s) x {} pass(es)", config_.ps.online.days.size(),
                                             config_.ps.online.passes_per_day)
                               : fmt::format("{} train / {} test samples, {} steps per pass", train_.size(), test_.size(),
                                             steps_per_epoch(train_.size()));
  return fmt::format("wide&deep on parameter servers, {}: {} dense parameters, embedding dim {}, {}", rows,
                     tables_.dense[kDenseTable].size, model_.embedding_dim(), data);
}

nlohmann::json CtrWorkload::identity() const {
  return {{"model", std::string(kModelNames.name(config_.model.kind))}, {"dataset", std::string(kDatasetNames.name(config_.data.kind))}, {"device", "cpu"}};
}

void CtrWorkload::begin_round(int64_t epoch) {
  batches_ = rank_batches(train_.size(), shard_, epoch);
  next_batch_ = 0;
}

void CtrWorkload::skip_batches(int64_t n) {
  if (n < 0 || static_cast<size_t>(n) > batches_.size())
    throw CannotRejoin(fmt::format("the progress mark's batch {} is not within this pass's {} batches (another "
                                   "data set or config than before the restart?)", n, batches_.size()));
  next_batch_ = static_cast<size_t>(n);
}

std::optional<StepResult> CtrWorkload::train_step(int64_t) {
  if (next_batch_ == batches_.size()) return std::nullopt;
  const std::vector<size_t>& samples = batches_[next_batch_++];
  const size_t dim = model_.embedding_dim();
  BatchKeys keys;
  {
    common::ProgressPage::Scope loading(fleet_.progress(), common::Phase::kDataLoading);
    fleet_.test_fault().in_data_loading(fleet_.progress().steps());
    keys = index_keys(train_, samples, key_index_);
  }
  const PsValues values = fetch({keys.keys, keys.keys});
  if (next_batch_ < batches_.size() && on_disk()) {  // the servers read the next batch's rows while this one computes
    const BatchKeys next = index_keys(train_, batches_[next_batch_], key_index_);
    prefetch({next.keys, next.keys});
  }
  model_.set_dense_values(values.dense[kDenseTable]);
  const BatchInputs in = gather(train_, samples, keys, values, dim);
  const auto r = model_.run(in.dense.data(), in.embedding, in.wide, in.labels.data(), samples.size(), true);
  PsValues grads;
  grads.dense.push_back(model_.dense_grads());
  grads.keys = {keys.keys, keys.keys};
  // A push row is the key's gradients, after its show and click counts where the table keeps
  // statistics (ps::push_width): each appearance of the key in the batch is a show, and a
  // click when the sample's label is.
  const size_t embedding_width = ps::push_width(tables_.sparse[kEmbeddingTable]);
  const size_t wide_width = ps::push_width(tables_.sparse[kWideTable]);
  const size_t embedding_stats = embedding_width - dim, wide_stats = wide_width - 1;
  std::vector<float> embedding(keys.keys.size() * embedding_width, 0.0f), wide(keys.keys.size() * wide_width, 0.0f);
  for (size_t i = 0; i < keys.slot_of.size(); ++i) {
    const size_t k = keys.slot_of[i];
    const float click = in.labels[i / kCriteoSlots];
    if (embedding_stats) {
      embedding[k * embedding_width] += 1;
      embedding[k * embedding_width + 1] += click;
    }
    if (wide_stats) {
      wide[k * wide_width] += 1;
      wide[k * wide_width + 1] += click;
    }
    for (size_t d = 0; d < dim; ++d) embedding[k * embedding_width + embedding_stats + d] += r.d_embedding[i * dim + d];
    wide[k * wide_width + wide_stats] += r.d_wide[i];
  }
  grads.sparse = {std::move(embedding), std::move(wide)};
  apply(std::move(grads));
  return StepResult{r.loss, {}};
}

Evaluation CtrWorkload::evaluate() {
  // An online run with every pass saved loads no pass's data: there is nothing to evaluate, on
  // any worker (each holds the same pass's tail), so none meets the others at the servers.
  if (config_.ps.online.enabled() && test_.size() == 0) return {};
  ps::ParameterStore& store = fleet_.parameter_store();
  const auto workers = static_cast<size_t>(worker_num());
  // In async and GEO a worker ends its pass on its own: without this, the first to end would
  // score a model the others are still training (0.80 AUC for 0.826 when one lagged).
  if (workers > 1) fleet_.ps_barrier();
  std::vector<size_t> share;  // every worker_num()-th test sample, from this worker's index on
  for (size_t i = static_cast<size_t>(worker_index()); i < test_.size(); i += workers) share.push_back(i);
  BucketedAuc counts;
  for (size_t start = 0; start < share.size(); start += 512) {
    const std::vector<size_t> samples(share.begin() + static_cast<long>(start),
                                      share.begin() + static_cast<long>(std::min(share.size(), start + 512)));
    const BatchKeys keys = index_keys(test_, samples, key_index_);
    const PsValues values = pull_values(store, kDenseTables, {keys.keys, keys.keys});
    model_.set_dense_values(values.dense[kDenseTable]);
    const BatchInputs in = gather(test_, samples, keys, values, model_.embedding_dim());
    const auto r = model_.run(in.dense.data(), in.embedding, in.wide, in.labels.data(), samples.size(), false);
    for (size_t i = 0; i < samples.size(); ++i) counts.add(r.probabilities[i], in.labels[i] > 0.5f, r.loss);
  }
  if (workers > 1) {
    std::optional<BucketedAuc> job = job_counts(counts);
    if (!job) return {};  // restarted after its dead self had read them: they are gone
    counts = *job;
  }
  Evaluation e;
  e.auc = counts.auc();
  e.loss = counts.mean_loss();
  e.samples = counts.samples();
  return e;
}

// A worker restarted in place goes through it again: what its dead self did (the counts added,
// the table zeroed, the barriers reached) it does not do twice (ps_workload.h's marks).
std::optional<BucketedAuc> CtrWorkload::job_counts(const BucketedAuc& mine) {
  ps::ParameterStore& store = fleet_.parameter_store();
  if (!evaluation_counted()) {
    store.add_dense(kMetricsTable, mine.to_vector());
    note_evaluation_counted();
  }
  fleet_.ps_barrier();  // every worker's counts are in
  // Zeroed already by worker 0's dead self (and so by nobody now), the table holds no counts to read.
  const bool readable = !evaluation_zeroed();
  std::vector<float> job = store.pull_dense(kMetricsTable);
  fleet_.ps_barrier();  // every worker has read them
  if (worker_index() == 0 && !evaluation_zeroed()) {
    for (float& v : job) v = -v;
    store.add_dense(kMetricsTable, job);  // back to zeros for the next evaluation
    for (float& v : job) v = -v;
    note_evaluation_zeroed();
  }
  fleet_.ps_barrier();  // nobody adds the next counts before the table is zero again
  if (!readable) return std::nullopt;
  return BucketedAuc::from_vector(job);
}

}  // namespace paddle::runtime
