#include "runtime/train/ctr_trainer.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <unordered_map>

#include "common/file.h"
#include "ps/sharding.h"
#include "runtime/data/batch_loader.h"
#include "runtime/data/criteo.h"
#include "runtime/models/wide_deep.h"
#include "runtime/nn/metrics.h"
#include "runtime/train/train_config.h"
#include "runtime/train/trainer.h"

namespace paddle::runtime {
namespace {

using Clock = std::chrono::steady_clock;

WideDeep make_model(const nlohmann::json& config) {
  std::mt19937 rng(config.at("seed").get<uint32_t>());
  return WideDeep(config.at("ctr").at("embedding_dim"), config.at("ctr").at("hidden").get<std::vector<int64_t>>(), rng);
}

CtrDataset load(const nlohmann::json& config) {
  const std::string name = config.at("dataset");
  const uint64_t hash_dim = config.at("ctr").at("hash_dim");
  if (name == "criteo") return load_criteo_raw(config.at("data_dir"), hash_dim);
  if (name == "criteo_slot") return load_criteo_slot(config.at("data_dir"), hash_dim);
  throw common::ConfigError(fmt::format("dataset '{}' is not criteo or criteo_slot (model wide_deep)", name));
}

// The rows of a batch's keys: pulled once per distinct key, laid out per (sample, slot).
struct BatchRows {
  std::vector<uint64_t> keys;                 // distinct
  std::vector<size_t> slot_of;                // per (sample, slot): index into keys
  std::vector<float> embedding, wide;         // per (sample, slot)
};

// The batch's distinct keys and, per (sample, slot), which of them it is.
BatchRows index_rows(const CtrDataset& data, const std::vector<size_t>& samples) {
  BatchRows r;
  std::unordered_map<uint64_t, size_t> index;
  for (size_t b : samples)
    for (int s = 0; s < kCriteoSlots; ++s) {
      const uint64_t key = data.sparse[b * kCriteoSlots + s];
      auto [it, added] = index.try_emplace(key, r.keys.size());
      if (added) r.keys.push_back(key);
      r.slot_of.push_back(it->second);
    }
  return r;
}

// Lays the distinct keys' rows out per (sample, slot).
void spread_rows(BatchRows& r, const std::vector<float>& emb, const std::vector<float>& wide, size_t dim) {
  r.embedding.resize(r.slot_of.size() * dim);
  r.wide.resize(r.slot_of.size());
  for (size_t i = 0; i < r.slot_of.size(); ++i) {
    std::copy_n(emb.begin() + static_cast<long>(r.slot_of[i] * dim), dim, r.embedding.begin() + static_cast<long>(i * dim));
    r.wide[i] = wide[r.slot_of[i]];
  }
}

BatchRows pull_rows(ps::ParameterStore& store, const CtrDataset& data, const std::vector<size_t>& samples, size_t dim) {
  BatchRows r = index_rows(data, samples);
  spread_rows(r, store.pull_sparse(kEmbeddingTable, r.keys), store.pull_sparse(kWideTable, r.keys), dim);
  return r;
}

struct Gathered {
  std::vector<float> dense, labels;
};

Gathered gather(const CtrDataset& data, const std::vector<size_t>& samples) {
  Gathered g;
  for (size_t b : samples) {
    g.labels.push_back(data.labels[b]);
    g.dense.insert(g.dense.end(), data.dense.begin() + static_cast<long>(b * kCriteoDense),
                   data.dense.begin() + static_cast<long>((b + 1) * kCriteoDense));
  }
  return g;
}

struct Evaluation {
  double auc = 0.5, loss = 0;
};

Evaluation evaluate(WideDeep& model, ps::ParameterStore& store, const CtrDataset& test) {
  model.set_dense_values(store.pull_dense(kDenseTable));
  std::vector<float> scores;
  std::vector<int64_t> labels;
  double loss = 0;
  for (size_t start = 0; start < test.size(); start += 512) {
    std::vector<size_t> samples;
    for (size_t i = start; i < std::min(test.size(), start + 512); ++i) samples.push_back(i);
    BatchRows rows = pull_rows(store, test, samples, model.embedding_dim());
    Gathered g = gather(test, samples);
    auto r = model.run(g.dense.data(), rows.embedding, rows.wide, g.labels.data(), samples.size(), false);
    loss += r.loss * static_cast<double>(samples.size());
    scores.insert(scores.end(), r.probabilities.begin(), r.probabilities.end());
    for (float l : g.labels) labels.push_back(l > 0.5f ? 1 : 0);
  }
  Evaluation e;
  e.auc = auc(scores, labels);
  e.loss = test.size() ? loss / static_cast<double>(test.size()) : 0;
  return e;
}

}  // namespace

ps::TableSpecs wide_deep_tables(const nlohmann::json& config) {
  WideDeep model = make_model(config);
  const uint64_t seed = config.at("seed");
  ps::TableSpecs tables;
  tables.dense.push_back({"deep", model.dense_size()});
  tables.sparse.push_back({"embedding", model.embedding_dim(), seed});
  tables.sparse.push_back({"wide", 1, seed + 1});
  tables.update_rule = config.at("ps").at("server_optimizer");
  tables.learning_rate = config.at("optimizer").at("lr");
  return tables;
}

DistributedStrategy ps_strategy(const nlohmann::json& config) {
  const std::string mode = config.at("ps").at("mode");
  const int64_t k_steps = config.at("ps").at("k_steps");
  DistributedStrategy strategy;
  strategy.a_sync_configs.send_queue_size = config.at("ps").at("send_queue_size");
  strategy.a_sync_configs.max_merge_var_num = config.at("ps").at("max_merge_var_num");
  if (mode == "sync") return strategy;
  strategy.a_sync = true;
  if (mode == "async") return strategy;
  if (mode != "geo") throw common::ConfigError(fmt::format("ps.mode '{}' is not sync, async or geo", mode));
  if (k_steps <= 0) throw common::ConfigError("ps.mode geo needs ps.k_steps > 0");
  strategy.a_sync_configs.k_steps = static_cast<int>(k_steps);
  return strategy;
}

namespace {

// GEO's local copies: the dense vector and the sparse rows this worker touched, with the
// values last pulled (the base the deltas are taken from).
class GeoState {
 public:
  GeoState(ps::ParameterStore& store, size_t total_dense, size_t dim) : store_(store), total_(total_dense), dim_(dim) {
    refresh();
  }
  std::vector<float>& dense() { return dense_; }
  // Rows of `keys` for `table` (dim per key), pulled once per sync window.
  std::vector<float> rows(uint32_t table, const std::vector<uint64_t>& keys) {
    auto& cache = table == kEmbeddingTable ? emb_ : wide_;
    const size_t width = table == kEmbeddingTable ? dim_ : 1;
    std::vector<uint64_t> missing;
    for (uint64_t k : keys)
      if (!cache.count(k)) missing.push_back(k);
    if (!missing.empty()) {
      auto pulled = store_.pull_sparse(table, missing);
      for (size_t i = 0; i < missing.size(); ++i) {
        std::vector<float> row(pulled.begin() + static_cast<long>(i * width), pulled.begin() + static_cast<long>((i + 1) * width));
        cache[missing[i]] = {row, row};
      }
    }
    std::vector<float> out;
    for (uint64_t k : keys) out.insert(out.end(), cache[k].first.begin(), cache[k].first.end());
    return out;
  }
  void sgd(uint32_t table, const std::vector<uint64_t>& keys, const std::vector<float>& grads, float lr) {
    auto& cache = table == kEmbeddingTable ? emb_ : wide_;
    const size_t width = table == kEmbeddingTable ? dim_ : 1;
    for (size_t i = 0; i < keys.size(); ++i)
      for (size_t d = 0; d < width; ++d) cache[keys[i]].first[d] -= lr * grads[i * width + d];
  }
  // Sends (local - base) / workers and starts a new window from the servers' values.
  void sync(int workers) {
    std::vector<float> delta(total_);
    for (size_t i = 0; i < total_; ++i) delta[i] = (dense_[i] - base_[i]) / static_cast<float>(workers);
    store_.add_dense(kDenseTable, delta);
    for (uint32_t table : {kEmbeddingTable, kWideTable}) {
      auto& cache = table == kEmbeddingTable ? emb_ : wide_;
      std::vector<uint64_t> keys;
      std::vector<float> d;
      for (auto& [key, rows] : cache) {
        keys.push_back(key);
        for (size_t i = 0; i < rows.first.size(); ++i)
          d.push_back((rows.first[i] - rows.second[i]) / static_cast<float>(workers));
      }
      store_.add_sparse(table, keys, d);
      cache.clear();
    }
    refresh();
  }

 private:
  void refresh() {
    dense_ = store_.pull_dense(kDenseTable);
    base_ = dense_;
  }
  ps::ParameterStore& store_;
  size_t total_, dim_;
  std::vector<float> dense_, base_;
  std::unordered_map<uint64_t, std::pair<std::vector<float>, std::vector<float>>> emb_, wide_;  // local, base
};

}  // namespace

nlohmann::json train_ctr(const nlohmann::json& config, Fleet& fleet) {
  const auto started = Clock::now();
  ps::ParameterStore& store = fleet.parameter_store();
  ps::AsyncCommunicator* async = fleet.async_communicator();
  const int rank = fleet.worker_index(), world = fleet.worker_num();
  const std::string init_dir = config.at("ps").at("init_dir");
  const bool initialize_dense = rank == 0 && init_dir.empty();  // else the servers loaded a checkpoint
  CtrDataset train = load(config);
  const size_t test_begin = static_cast<size_t>(static_cast<double>(train.size()) *
                                                (1.0 - config.at("ctr").at("test_fraction").get<double>()));
  CtrDataset test = train.split_off(test_begin);
  if (config.at("train_samples").get<size_t>() > 0) train.split_off(config.at("train_samples").get<size_t>());
  WideDeep model = make_model(config);
  const size_t total_dense = model.dense_size(), dim = model.embedding_dim();
  if (initialize_dense) store.init_dense(kDenseTable, model.dense_values());
  fleet.ps_barrier();  // everyone starts from the initialized parameters

  const ShardSpec spec = shard_spec(config, rank, world);
  const size_t steps_per_epoch = BatchLoader::batches_per_epoch(train.size(), spec);
  if (steps_per_epoch == 0)
    throw common::ConfigError(fmt::format("{} training samples are fewer than one global batch of {} x {} workers",
                                  train.size(), spec.batch_size, world));
  fmt::print("wide&deep: {} dense parameters, embedding dim {}, {} train / {} test samples, {} steps per pass\n",
             total_dense, dim, train.size(), test.size(), steps_per_epoch);
  std::fflush(stdout);

  const PsMode mode = fleet.strategy().ps_mode();
  const int64_t k_steps = fleet.strategy().a_sync_configs.k_steps;
  const float local_lr = config.at("optimizer").at("lr");
  std::unique_ptr<GeoState> geo;
  if (mode == PsMode::kGeo) geo = std::make_unique<GeoState>(store, total_dense, dim);
  int64_t window = 0;

  const int64_t epochs = config.at("epochs"), max_steps = config.at("max_steps");
  const int64_t log_every = std::max<int64_t>(1, config.at("log_every").get<int64_t>());
  int64_t step = 0;
  double last_loss = 0, train_seconds = 0;
  Evaluation eval;
  bool stop = false;
  // Resuming from servers that loaded a checkpoint (ps.init_dir): carry on from its pass, so the
  // shuffles, and with them the losses, are those of an uninterrupted run.
  int64_t epoch = config.at("ps").at("start_pass");
  for (; epoch < epochs && !stop; ++epoch) {
    const auto epoch_start = Clock::now();
    for (const auto& samples : rank_batches(train.size(), spec, epoch)) {
      BatchRows rows = geo ? BatchRows{} : pull_rows(store, train, samples, dim);
      if (geo) {
        rows = index_rows(train, samples);
        auto emb = geo->rows(kEmbeddingTable, rows.keys), wide = geo->rows(kWideTable, rows.keys);
        spread_rows(rows, emb, wide, dim);
        model.set_dense_values(geo->dense());
      } else {
        model.set_dense_values(store.pull_dense(kDenseTable));
      }
      Gathered g = gather(train, samples);
      auto r = model.run(g.dense.data(), rows.embedding, rows.wide, g.labels.data(), samples.size(), true);
      std::vector<float> emb_grads(rows.keys.size() * dim, 0.0f), wide_grads(rows.keys.size(), 0.0f);
      for (size_t i = 0; i < rows.slot_of.size(); ++i) {
        for (size_t d = 0; d < dim; ++d) emb_grads[rows.slot_of[i] * dim + d] += r.d_embedding[i * dim + d];
        wide_grads[rows.slot_of[i]] += r.d_wide[i];
      }
      if (mode == PsMode::kSync) {
        store.push_dense(kDenseTable, model.dense_grads());
        store.push_sparse(kEmbeddingTable, rows.keys, emb_grads);
        store.push_sparse(kWideTable, rows.keys, wide_grads);
        fleet.ps_barrier();
      } else if (mode == PsMode::kAsync) {
        ps::StepGradients step_grads;
        step_grads.dense = model.dense_grads();
        step_grads.sparse.push_back({kEmbeddingTable, rows.keys, std::move(emb_grads)});
        step_grads.sparse.push_back({kWideTable, rows.keys, std::move(wide_grads)});
        async->push(std::move(step_grads));
      } else {
        auto grads = model.dense_grads();
        auto& local = geo->dense();
        for (size_t i = 0; i < local.size(); ++i) local[i] -= local_lr * grads[i];
        geo->sgd(kEmbeddingTable, rows.keys, emb_grads, local_lr);
        geo->sgd(kWideTable, rows.keys, wide_grads, local_lr);
        if (++window >= k_steps) {
          geo->sync(world);
          window = 0;
        }
      }
      last_loss = r.loss;
      if (!std::isfinite(last_loss)) throw NanLossError();
      ++step;
      if (step % log_every == 0) {
        fmt::print("TRAIN ---> pass: {} loss: {:.6f}\n", epoch, last_loss);
        std::fflush(stdout);
      }
      if (max_steps > 0 && step >= max_steps) {
        stop = true;
        break;
      }
    }
    if (async) async->flush();
    if (geo && window > 0) {
      geo->sync(world);
      window = 0;
    }
    train_seconds += std::chrono::duration<double>(Clock::now() - epoch_start).count();
    if (rank == 0) {
      eval = evaluate(model, store, test);
      fmt::print("TEST ---> pass: {} auc: {:.6f} loss: {:.6f}\n", epoch, eval.auc, eval.loss);
      std::fflush(stdout);
    }
  }
  nlohmann::json metrics;
  if (rank == 0) {
    const std::string output_dir = config.at("output_dir");
    std::filesystem::create_directories(output_dir);
    metrics = {{"model", "wide_deep"},
               {"dataset", config.at("dataset")},
               {"world_size", world},
               {"epochs", epoch},
               {"steps", step},
               {"train_loss", last_loss},
               {"test_loss", eval.loss},
               {"test_auc", eval.auc},
               {"samples_per_sec", train_seconds > 0 ? static_cast<double>(step * spec.batch_size * world) / train_seconds : 0.0},
               {"wall_seconds", std::chrono::duration<double>(Clock::now() - started).count()}};
    common::write_file_atomically(std::filesystem::path(output_dir) / "metrics.json", metrics.dump(2) + "\n");
    // The final dense parameters, for comparing runs.
    common::write_file_atomically(std::filesystem::path(output_dir) / "dense.json",
                                  nlohmann::json(store.pull_dense(kDenseTable)).dump() + "\n");
    fmt::print("metrics: {}\n", metrics.dump());
  }
  return metrics;
}

}  // namespace paddle::runtime
